"""Answer checks for the exercise notebooks: on track, or a hint that names the likely mistake.

A visible check compares a student's answer with the value the package computes from the
notebook's parameters, without printing that value. When the answer is off it looks for the
classic mistakes (a missing factor, swapped arguments, a count instead of a duration) and for
violated properties (a probability above 1, an order that breaks an edge), and raises
:class:`CheckFailed` with a hint. An answer still set to ``None`` is reported as not answered
and raises nothing, so a fresh notebook runs from top to bottom.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping

import numpy as np

__all__ = [
    "CheckFailed",
    "unanswered",
    "not_yet",
    "on_track",
    "as_number",
    "check_number",
    "check_choice",
    "check_choices",
    "check_order",
    "check_set",
    "check_sequence",
]


class CheckFailed(AssertionError):
    """A visible check found the answer off track; the message holds the hint.

    Attributes
    ----------
    name : str
        The answer's name in the notebook.
    hint : str
        What is probably wrong.
    """

    def __init__(self, name: str, hint: str):
        self.name = name
        self.hint = hint
        super().__init__(f"{name}: {hint}")


def unanswered(answer) -> bool:
    """True when the answer is still the placeholder ``None`` (or ``...``)."""
    return answer is None or answer is Ellipsis


def not_yet(name: str) -> bool:
    """Report ``name`` as not answered yet; returns False."""
    print(f"[ ] {name}: not answered yet - replace None with your answer and run the cell again.")
    return False


def on_track(name: str) -> bool:
    """Report ``name`` as on track; returns True."""
    print(f"[ok] {name}: on track.")
    return True


def as_number(name: str, answer) -> float:
    """Read a real number from any numeric type (int, float, Fraction, NumPy scalar, 0-d array).

    Raises
    ------
    CheckFailed
        For booleans, strings, containers and anything else that is not one real number.
    """
    if isinstance(answer, (bool, np.bool_)):
        raise CheckFailed(name, f"expected a number, got the boolean {answer!r}")
    if isinstance(answer, np.ndarray) and answer.ndim == 0:
        answer = answer.item()
    if not isinstance(answer, numbers.Real):
        kind = type(answer).__name__
        raise CheckFailed(name, f"expected one number, got a {kind}: {answer!r}")
    value = float(answer)
    if math.isnan(value):
        raise CheckFailed(name, "the answer is NaN: a 0/0 or a log of a negative number somewhere?")
    return value


def _close(a: float, b: float, rtol: float, atol: float) -> bool:
    return bool(np.isclose(a, b, rtol=rtol, atol=atol))


def check_number(
    name: str,
    answer,
    expected: float,
    *,
    rtol: float = 1e-3,
    atol: float = 1e-9,
    mistakes: Mapping[str, float] = (),
    bounds: tuple[float, float] | None = None,
    bounds_hint: str = "",
) -> bool:
    """Check one number against ``expected`` and explain the likely mistake when it is off.

    Parameters
    ----------
    name : str
        The variable's name in the notebook, shown in every message.
    answer : number or None
        The student's value; ``None`` means not answered yet.
    expected : float
        The value computed by the package from the notebook's parameters.
    rtol, atol : float
        Tolerance of :func:`numpy.isclose`. The default relative 1e-3 accepts an answer
        rounded to four significant digits.
    mistakes : mapping of str to float
        Hints keyed to the value a known mistake produces; the first match is reported.
    bounds : (float, float), optional
        An interval every correct answer lies in (e.g. ``[p, 1]``); outside it,
        ``bounds_hint`` is reported.

    Returns
    -------
    bool
        True when on track, False when not answered.

    Raises
    ------
    CheckFailed
        When the answer is not a number or is off; the message names the likely mistake.

    Examples
    --------
    >>> check_number("p_n", 0.3487, 0.9**10)
    [ok] p_n: on track.
    True
    >>> check_number("p_n", 0.9 * 10, 0.9**10, mistakes={"multiply?": 9.0})
    Traceback (most recent call last):
    ...
    decompkit.exercises.checks.CheckFailed: p_n: multiply?
    """
    if unanswered(answer):
        return not_yet(name)
    value = as_number(name, answer)
    if _close(value, expected, rtol, atol):
        return on_track(name)
    for hint, wrong in dict(mistakes).items():
        if not _close(expected, wrong, rtol, atol) and _close(value, wrong, rtol, atol):
            raise CheckFailed(name, hint)
    if bounds is not None and not (bounds[0] - atol <= value <= bounds[1] + atol):
        lo, hi = bounds
        raise CheckFailed(name, bounds_hint or f"every correct answer lies in [{lo:g}, {hi:g}]")
    raise CheckFailed(name, "not the expected value; recheck the formula and the parameters used")


def _norm(text) -> str:
    return " ".join(str(text).strip().lower().replace("_", " ").replace("-", " ").split())


def check_choice(name: str, answer, expected: str, choices: Iterable[str], hint: str = "") -> bool:
    """Check one answer picked from a closed list of ``choices`` (case and spacing ignored).

    Examples
    --------
    >>> check_choice("kind", " Formal ", "formal", ["formal", "semantic"])
    [ok] kind: on track.
    True
    """
    if unanswered(answer):
        return not_yet(name)
    options = {_norm(c): c for c in choices}
    picked = _norm(answer)
    if picked not in options:
        raise CheckFailed(name, f"{answer!r} is not one of the choices {sorted(options.values())}")
    if picked != _norm(expected):
        raise CheckFailed(name, hint or "another choice fits better; reread the definitions")
    return on_track(name)


def check_choices(
    name: str,
    answer: Mapping | None,
    expected: Mapping,
    choices: Iterable[str],
    hints: Mapping[str, str] | None = None,
) -> bool:
    """Check a mapping item -> choice, naming every item that is off (without its answer).

    Examples
    --------
    >>> check_choices("kinds", {"a": "formal", "b": "Semantic"},
    ...               {"a": "formal", "b": "semantic"}, ["formal", "semantic"])
    [ok] kinds: on track.
    True
    """
    if unanswered(answer):
        return not_yet(name)
    if not isinstance(answer, Mapping):
        raise CheckFailed(name, f"expected a dict from item to choice, got {type(answer).__name__}")
    hints = dict(hints or {})
    options = {_norm(c) for c in choices}
    missing = [k for k in expected if k not in answer]
    if missing:
        raise CheckFailed(name, f"no answer yet for {missing}")
    unknown = {k: v for k, v in answer.items() if _norm(v) not in options}
    if unknown:
        raise CheckFailed(name, f"not among the choices {sorted(options)}: {unknown}")
    wrong = [k for k in expected if _norm(answer[k]) != _norm(expected[k])]
    if wrong:
        details = "; ".join(f"{k}: {hints[k]}" for k in wrong if k in hints)
        message = f"{len(wrong)} of {len(expected)} off: {wrong}"
        raise CheckFailed(name, f"{message}. {details}" if details else message)
    return on_track(name)


def check_order(name: str, answer, violations: Callable[[list], object]) -> bool:
    """Check a topological order with ``violations(order)`` (a falsy report means valid).

    Any valid order passes; the report of an invalid one (which edges it breaks, which nodes
    are missing or repeated) is the hint.
    """
    if unanswered(answer):
        return not_yet(name)
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
        raise CheckFailed(name, f"expected a list of nodes, got {answer!r}")
    report = violations(list(answer))
    if report:
        raise CheckFailed(name, str(report))
    return on_track(name)


def check_set(
    name: str, answer, expected: Iterable, *, hints: Mapping[str, Callable[[set], bool]] = ()
) -> bool:
    """Check a set of nodes (any iterable; order and repeats ignored).

    ``hints`` maps a message to a predicate on the wrong answer's set; the first predicate that
    holds is reported, otherwise the missing and extra counts are.
    """
    if unanswered(answer):
        return not_yet(name)
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
        raise CheckFailed(name, f"expected a set or list of nodes, got {answer!r}")
    got, want = set(answer), set(expected)
    if got == want:
        return on_track(name)
    for hint, applies in dict(hints).items():
        if applies(got):
            raise CheckFailed(name, hint)
    raise CheckFailed(name, f"{len(want - got)} missing and {len(got - want)} that do not belong")


def check_sequence(name: str, answer, expected: list, hint: str = "") -> bool:
    """Check a sequence whose order matters (a path); lists and tuples are both accepted."""
    if unanswered(answer):
        return not_yet(name)
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
        raise CheckFailed(name, f"expected a list, got {answer!r}")
    if list(answer) == list(expected):
        return on_track(name)
    raise CheckFailed(name, hint or "not the expected sequence")
