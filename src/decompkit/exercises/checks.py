"""Answer checks for the exercise notebooks: on track, or a hint that names the likely mistake.

The ``judge_*`` functions compare a student's answer with the value the package computes from
the notebook's parameters and return a :class:`~decompkit.exercises.Diagnosis`, without
printing anything and without the expected value in the message. When the answer is off they
look for the classic mistakes (a missing factor, swapped arguments, a count instead of a
duration), each a :class:`Mistake` with a stable id, and for violated properties (a
probability above 1, an order that breaks an edge). A number right to the tolerance's
relative 1e-3 is on track; one that is the right value rounded to three digits or fewer is
``"close"``, told to keep at least four significant digits.

A notebook's visible check prints the verdict as one line (see
:func:`decompkit.exercises.page.report`); in strict mode (grading, ``kit.py check``) an answer off
track raises :class:`CheckFailed` instead, whose traceback is that line alone.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from ..grading import choice_words, close
from .contract import UNANSWERED, Diagnosis

__all__ = [
    "CheckFailed",
    "Mistake",
    "ON_TRACK",
    "CLOSE",
    "GENERIC_OFF",
    "NEVER_NEGATIVE",
    "unanswered",
    "read_number",
    "too_rounded",
    "judge_number",
    "judge_bool",
    "judge_choice",
    "judge_choices",
    "form_choices",
    "judge_set",
    "read_set",
    "judge_order",
    "judge_sequence",
]

ON_TRACK = Diagnosis("ok", "on track")
#: A right value rounded too far (to three significant digits or fewer).
CLOSE = Diagnosis("close", "close: keep at least 4 significant digits")
#: The hint for an answer off in no way a check recognises.
GENERIC_OFF = "not the value your numbers give: reread what the question asks for, step by step"


class CheckFailed(AssertionError):
    """A visible check found the answer off track; the message holds the hint.

    In a notebook its traceback is one line (IPython shows what ``_render_traceback_``
    returns), never the kit's code.

    Attributes
    ----------
    name : str
        The answer's name in the notebook (with the exercise's label when known).
    hint : str
        What is probably wrong.
    line : str
        The line a notebook shows for it.

    Examples
    --------
    >>> CheckFailed("B1 p_prime", "a hint")._render_traceback_()
    ['[x] B1 p_prime: a hint']
    """

    def __init__(self, name: str, hint: str, *, line: str | None = None):
        self.name = name
        self.hint = hint
        self.line = line or f"[x] {name}: {hint}"
        super().__init__(f"{name}: {hint}")

    def _render_traceback_(self) -> list[str]:
        return [self.line]


@dataclass(frozen=True)
class Mistake:
    """A classic mistake: its stable id, the value it produces and the hint it earns.

    The hint names the mistake and the idea that corrects it, never the answer or its formula.
    """

    id: str
    value: object
    hint: str


def unanswered(answer) -> bool:
    """True when the answer is still the placeholder ``None`` (or ``...``)."""
    return answer is None or answer is Ellipsis


# -- numbers --------------------------------------------------------------------------------


def read_number(answer) -> tuple[float | None, Diagnosis | None]:
    """One real number from any numeric type (int, float, Fraction, NumPy scalar, 0-d array).

    Returns ``(value, None)``, or ``(None, diagnosis)`` saying why it is not one number.

    Examples
    --------
    >>> read_number(np.float32(0.5))
    (0.5, None)
    >>> read_number(True)[1].message
    'expected a number, got the boolean True'
    """
    if isinstance(answer, (bool, np.bool_)):
        return None, Diagnosis("invalid", f"expected a number, got the boolean {answer!r}")
    if isinstance(answer, np.ndarray) and answer.ndim == 0:
        answer = answer.item()
    if not isinstance(answer, numbers.Real):
        kind = type(answer).__name__
        return None, Diagnosis("invalid", f"expected one number, got a {kind}")
    try:
        value = float(answer)
    except (OverflowError, ValueError, TypeError):
        return None, Diagnosis("invalid", "expected one number that fits a float")
    if math.isnan(value):
        return None, Diagnosis(
            "invalid", "the answer is NaN: a 0/0 or a log of a negative number somewhere?"
        )
    return value, None


def _close(a: float, b: float, rtol: float | None, atol: float) -> bool:
    return close(a, b, rtol=rtol, atol=atol)


def _significant(x: float, digits: int, how=round) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    scale = 10 ** (digits - 1 - math.floor(math.log10(abs(x))))
    return how(x * scale) / scale


def too_rounded(value: float, expected: float) -> bool:
    """Whether ``value`` is ``expected`` rounded (or cut) to three significant digits or fewer.

    Examples
    --------
    >>> too_rounded(0.35, 0.348678), too_rounded(0.34, 0.348678), too_rounded(0.36, 0.348678)
    (True, True, False)
    """
    for digits in (1, 2, 3):
        for how in (round, math.trunc):
            shown = _significant(expected, digits, how)
            if shown != expected and math.isclose(value, shown, rel_tol=1e-9, abs_tol=1e-15):
                return True
    return False


#: The hint for a time, a count or a slack below zero.
NEVER_NEGATIVE = "a time, a count or a slack is never negative"


def judge_number(
    answer,
    expected: float,
    *,
    rtol: float | None = None,
    atol: float = 1e-9,
    mistakes: Iterable[Mistake] = (),
    bounds: tuple[float, float] | None = None,
    bounds_hint: str = "",
    idea: str = "",
) -> Diagnosis:
    """Judge one number against ``expected`` and name the likely mistake when it is off.

    Parameters
    ----------
    answer : number or None
        The student's value; ``None`` means not answered yet.
    expected : float
        The value computed by the package from the notebook's parameters.
    rtol, atol : float
        As :func:`decompkit.grading.close` takes them, the hidden tests' comparison: by
        default four significant digits (within one unit of the fourth), ``rtol=0`` the
        exact (whole) number.
    mistakes : iterable of Mistake
        Known mistakes; the first whose value the answer matches is reported.
    bounds : (float, float), optional
        An interval every correct answer lies in (e.g. ``[p, 1]``); outside it,
        ``bounds_hint`` is reported.
    idea : str
        The hint for an answer off in no way recognised: the idea to reread, not the formula.

    Examples
    --------
    >>> judge_number(0.3487, 0.9**10).status
    'ok'
    >>> judge_number(9.0, 0.9**10, mistakes=[Mistake("times_n", 9.0, "multiplied?")]).mistake
    'times_n'
    >>> judge_number(0.35, 0.9**10).message
    'close: keep at least 4 significant digits'
    """
    if unanswered(answer):
        return UNANSWERED
    value, problem = read_number(answer)
    if problem is not None:
        return problem
    if not math.isfinite(value):
        return Diagnosis("invalid", f"expected a finite number, got {value!r}")
    if _close(value, expected, rtol, atol):
        return ON_TRACK
    if rtol != 0 and too_rounded(value, expected):
        return CLOSE
    for mistake in mistakes:
        wrong = float(mistake.value)
        if not _close(expected, wrong, rtol, atol) and _close(value, wrong, rtol, atol):
            return Diagnosis("off", mistake.hint, mistake.id)
    if bounds is not None and not (bounds[0] - atol <= value <= bounds[1] + atol):
        lo, hi = bounds
        return Diagnosis(
            "off", bounds_hint or f"every correct answer lies in [{lo:g}, {hi:g}]", "out_of_bounds"
        )
    return Diagnosis("off", idea or GENERIC_OFF)


def judge_bool(answer, expected: bool, hint: str = "") -> Diagnosis:
    """Judge a yes/no answer (``True``/``False``, NumPy booleans too)."""
    if unanswered(answer):
        return UNANSWERED
    if not isinstance(answer, (bool, np.bool_)):
        return Diagnosis("invalid", f"expected True or False, got a {type(answer).__name__}")
    if bool(answer) == bool(expected):
        return ON_TRACK
    return Diagnosis("off", hint or GENERIC_OFF, "wrong_choice")


# -- choices --------------------------------------------------------------------------------


def _choice_problem(answer, choices) -> Diagnosis | None:
    if not isinstance(answer, str):
        return Diagnosis("invalid", f"expected one of the words {sorted(choices)}, as a string")
    if choice_words(answer) not in {choice_words(c) for c in choices}:
        return Diagnosis("invalid", f"{answer!r} is not one of the choices {sorted(choices)}")
    return None


def judge_choice(answer, expected: str, choices: Iterable[str], hint: str = "") -> Diagnosis:
    """Judge one answer picked from a closed list of ``choices`` (case and spacing ignored).

    Examples
    --------
    >>> judge_choice(" Formal ", "formal", ["formal", "semantic"]).status
    'ok'
    >>> judge_choice("maybe", "formal", ["formal", "semantic"]).status
    'invalid'
    """
    if unanswered(answer):
        return UNANSWERED
    choices = list(choices)
    problem = _choice_problem(answer, choices)
    if problem is not None:
        return problem
    if choice_words(answer) != choice_words(expected):
        return Diagnosis(
            "off", hint or "another choice fits better; reread the definitions", "wrong_choice"
        )
    return ON_TRACK


def form_choices(answer, keys: Iterable[str], choices: Iterable[str]) -> Diagnosis | None:
    """Why a mapping ``{key: choice}`` is not of the form asked (None when it is).

    Every key must be there and every value one of the ``choices``; extra keys are refused.

    Examples
    --------
    >>> form_choices({"a": "x"}, ["a", "b"], ["x", "y"]).message
    "no answer yet for ['b']"
    """
    if not isinstance(answer, Mapping):
        return Diagnosis(
            "invalid", f"expected a dict from item to choice, got a {type(answer).__name__}"
        )
    keys, choices = list(keys), list(choices)
    missing = [k for k in keys if k not in answer]
    if missing:
        return Diagnosis("invalid", f"no answer yet for {missing}")
    extra = [k for k in answer if k not in keys]
    if extra:
        return Diagnosis("invalid", f"not items of this exercise: {extra}")
    options = {choice_words(c) for c in choices}
    unknown = sorted(
        str(k)
        for k, v in answer.items()
        if not isinstance(v, str) or choice_words(v) not in options
    )
    if unknown:
        return Diagnosis(
            "invalid", f"write one of {sorted(choices)} for each item; not so for {unknown}"
        )
    return None


def judge_choices(
    answer,
    expected: Mapping,
    choices: Iterable[str],
    hints: Mapping[str, str] | None = None,
) -> Diagnosis:
    """Judge a mapping item -> choice, naming every item that is off (without its answer).

    Examples
    --------
    >>> judge_choices({"a": "formal", "b": "Semantic"},
    ...               {"a": "formal", "b": "semantic"}, ["formal", "semantic"]).status
    'ok'
    >>> judge_choices({"a": "formal", "b": "formal"},
    ...               {"a": "formal", "b": "semantic"}, ["formal", "semantic"]).message
    "1 of 2 off: ['b']"
    """
    if unanswered(answer):
        return UNANSWERED
    problem = form_choices(answer, list(expected), choices)
    if problem is not None:
        return problem
    hints = dict(hints or {})
    wrong = [k for k in expected if choice_words(answer[k]) != choice_words(expected[k])]
    if not wrong:
        return ON_TRACK
    details = "; ".join(f"{k}: {hints[k]}" for k in wrong if k in hints)
    message = f"{len(wrong)} of {len(expected)} off: {wrong}"
    return Diagnosis("off", f"{message}. {details}" if details else message, "wrong_choices")


# -- sets, orders, sequences ------------------------------------------------------------------


def read_set(answer, what: str = "nodes") -> tuple[set | None, Diagnosis | None]:
    """A set from any iterable of plain values (lists inside become tuples).

    Returns ``(set, None)``, or ``(None, diagnosis)`` saying why it is not a set.

    Examples
    --------
    >>> read_set(["a", "b", "a"]) == ({"a", "b"}, None)
    True
    >>> read_set("ab")[1].message
    "expected a set of nodes, got the str 'ab'"
    """
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
        shown = repr(answer) if isinstance(answer, (str, bytes, numbers.Number)) else ""
        kind = type(answer).__name__
        return None, Diagnosis(
            "invalid", f"expected a set of {what}, got the {kind} {shown}".rstrip()
        )
    try:
        return {tuple(x) if isinstance(x, list) else x for x in answer}, None
    except TypeError:
        return None, Diagnosis("invalid", f"expected a set of plain values ({what})")


def judge_set(
    answer,
    expected: Iterable,
    *,
    hints: Iterable[tuple[str, Callable[[set], bool], str]] = (),
    what: str = "nodes",
) -> Diagnosis:
    """Judge a set of nodes (any iterable; order and repeats ignored).

    ``hints`` are ``(mistake id, predicate on the wrong answer's set, message)``; the first
    predicate that holds is reported, otherwise the missing and extra counts are.

    Examples
    --------
    >>> judge_set(["b", "a"], {"a", "b"}).status
    'ok'
    >>> judge_set({"a"}, {"a", "b"}).message
    '1 missing and 0 that do not belong'
    """
    if unanswered(answer):
        return UNANSWERED
    got, problem = read_set(answer, what)
    if problem is not None:
        return problem
    want = set(expected)
    if got == want:
        return ON_TRACK
    for mistake, applies, message in hints:
        if applies(got):
            return Diagnosis("off", message, mistake)
    return Diagnosis("off", f"{len(want - got)} missing and {len(got - want)} that do not belong")


def judge_order(answer, violations: Callable[[list], object]) -> Diagnosis:
    """Judge a topological order with ``violations(order)`` (a falsy report means valid).

    Any valid order passes; the report of an invalid one (which edges it breaks, which nodes
    are missing or repeated) is the hint.
    """
    if unanswered(answer):
        return UNANSWERED
    if isinstance(answer, (str, bytes, Mapping)) or not isinstance(answer, Iterable):
        return Diagnosis("invalid", f"expected a list of nodes, got a {type(answer).__name__}")
    report = violations(list(answer))
    if report:
        return Diagnosis("off", " ".join(str(report).split()), "order_violated")
    return ON_TRACK


def judge_sequence(answer, expected: list, hint: str = "") -> Diagnosis:
    """Judge a sequence whose order matters (a path); lists and tuples are both accepted."""
    if unanswered(answer):
        return UNANSWERED
    if isinstance(answer, (str, bytes, Mapping)) or not isinstance(answer, Iterable):
        return Diagnosis("invalid", f"expected a list, got a {type(answer).__name__}")
    if list(answer) == list(expected):
        return ON_TRACK
    return Diagnosis("off", hint or "not the expected sequence")
