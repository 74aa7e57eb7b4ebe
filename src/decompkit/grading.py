"""Comparisons for the hidden tests of the exercise notebooks.

A hidden test imports what it needs *inside* its cell, under names ending in an underscore
(``from decompkit.grading import close as close_``), takes the expected value from the
notebook's answer key (:func:`decompkit.exercises.expected`) and compares with a function of
this module, so a student cell that rebinds ``np``, ``close``, ``P`` or a package function in
the notebook's namespace changes nothing, and the test rebinds none of the student's names.
Every function here returns a bool and never raises on a malformed answer: a wrong type simply
does not match. A malformed tolerance is the hidden test's own bug, not the student's: it
raises a ValueError naming ``rtol`` or ``atol``.

One rule judges a number unless a test asks for another: the answer must keep
:data:`DIGITS` significant digits, that is lie within one unit of the fourth significant digit
of the exact value (:func:`digit_band`), so that the exact value rounded or cut to four digits
passes and one rounded to two digits does not (unless its third and fourth digits are zeros).
``rtol=0`` asks for the exact number (whole numbers of time units, counts).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping

import numpy as np

__all__ = [
    "DIGITS",
    "digit_band",
    "close",
    "close_array",
    "same_bool",
    "same_set",
    "same_set_map",
    "same_choice",
    "same_choices",
    "is_valid_order",
    "is_critical_path",
]


#: Significant digits a numeric answer must keep.
DIGITS = 4
_SLACK = 1e-9  # relative: a value cut at the band's edge passes despite its float rounding


def digit_band(expected, digits: int = DIGITS):
    """One unit of the ``digits``-th significant digit of ``expected`` (0 for 0 or inf).

    Broadcasts over arrays.

    Examples
    --------
    >>> digit_band(0.348678), digit_band(12.65), digit_band(-1000.0), digit_band(0.0)
    (0.0001, 0.01, 1.0, 0.0)
    """
    magnitude = np.abs(np.asarray(expected, dtype=float))
    usable = np.isfinite(magnitude) & (magnitude > 0)
    exponent = np.floor(np.log10(np.where(usable, magnitude, 1.0))) - (digits - 1)
    band = np.where(usable, 10.0**exponent, 0.0)
    return float(band) if band.ndim == 0 else band


def _band(expected, rtol: float | None):
    if rtol is None:
        return digit_band(expected) * (1 + _SLACK)
    return rtol * np.abs(expected)


def _real(answer) -> float | None:
    if isinstance(answer, (bool, np.bool_)):
        return None
    if isinstance(answer, np.ndarray) and answer.ndim == 0:
        answer = answer.item()
    if not isinstance(answer, numbers.Real):
        return None
    try:
        value = float(answer)
    except (TypeError, ValueError, OverflowError):
        return None
    return value


def _tolerance(name: str, value) -> float:
    """The test's tolerance as a float, or a ValueError naming it (never the answer's fault)."""
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        try:
            tolerance = float(value)
        except OverflowError:
            tolerance = math.inf
        if math.isfinite(tolerance) and tolerance >= 0:
            return tolerance
    raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


def close(answer, expected, *, rtol: float | None = None, atol: float = 1e-9) -> bool:
    """True when ``answer`` is one real number within tolerance of ``expected``.

    Any real type passes (int, float, Fraction, NumPy scalar, 0-d array); booleans, strings,
    containers and NaN do not. Infinite values match only the same infinity.

    Parameters
    ----------
    rtol : float or None
        None (the default): :data:`DIGITS` significant digits, within one unit of the last
        (see the module's docstring); a number: within ``atol + rtol * |expected|``, and
        ``rtol=0`` the exact number.
    atol : float
        Added to the band (answers whose exact value is 0).

    Examples
    --------
    >>> from fractions import Fraction
    >>> close(Fraction(1, 3), 0.33333), close("0.333", 1 / 3), close(True, 1.0)
    (True, False, False)
    >>> close(0.3487, 0.348678), close(0.3486, 0.348678), close(0.35, 0.348678)
    (True, True, False)
    >>> close(0.5, 0.5, rtol="0.1")
    Traceback (most recent call last):
    ...
    ValueError: rtol must be a finite number >= 0, got '0.1'
    """
    atol = _tolerance("atol", atol)
    rtol = None if rtol is None else _tolerance("rtol", rtol)
    value = _real(answer)
    if value is None or math.isnan(value):
        return False
    expected = float(expected)
    if math.isinf(value) or math.isinf(expected):
        return value == expected
    return bool(abs(value - expected) <= atol + _band(expected, rtol))


def close_array(answer, expected, *, rtol: float | None = None, atol: float = 1e-9) -> bool:
    """True when ``answer`` (nested lists, tuples or an array of real numbers) has the shape of
    ``expected`` and every entry is within tolerance of it (as :func:`close` judges one).

    Examples
    --------
    >>> close_array([[0.5, 0.5], [0, 1]], [[0.5, 0.5], [0.0, 1.0]])
    True
    >>> close_array((320, 120), (320, 120), rtol=0), close_array(["320", "120"], (320, 120))
    (True, False)
    >>> close_array([[1, 0]], [[1, 0], [0, 1]]), close_array(None, [1.0])
    (False, False)
    """
    atol = _tolerance("atol", atol)
    rtol = None if rtol is None else _tolerance("rtol", rtol)
    try:
        got = np.asarray(answer)
        want = np.asarray(expected, dtype=float)
        if got.dtype == object:
            values = [_real(v) for v in got.flat]
            if any(v is None for v in values):
                return False
            got = np.array(values, dtype=float).reshape(got.shape)
        elif got.dtype.kind not in "iuf":
            return False
        got = got.astype(float)
    except (TypeError, ValueError, OverflowError):
        return False
    if got.shape != want.shape or np.isnan(got).any():
        return False
    infinite = np.isinf(want)  # an infinity matches only the same infinity
    if not np.array_equal(np.where(np.isinf(got), got, 0), np.where(infinite, want, 0)):
        return False
    got, want = got[~infinite], want[~infinite]
    return bool(np.all(np.abs(got - want) <= atol + _band(want, rtol)))


def same_bool(answer, expected: bool) -> bool:
    """True when ``answer`` is a boolean (Python or NumPy) equal to ``expected``."""
    if not isinstance(answer, (bool, np.bool_)):
        return False
    return bool(answer) is bool(expected)


def _items(answer) -> set | None:
    """The items of ``answer`` as a set (a list inside counts as a tuple), or None."""
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
        return None
    try:
        return {tuple(x) if isinstance(x, list) else x for x in answer}
    except TypeError:
        return None


def same_set(answer, expected: Iterable) -> bool:
    """True when ``answer`` (any iterable except a string) holds exactly the expected items.

    Order and repeats do not matter; a pair may be written as a list, ``["t3", "t2"]``.

    Examples
    --------
    >>> same_set(["b", "a", "a"], {"a", "b"}), same_set([["t3", "t2"]], {("t3", "t2")})
    (True, True)
    >>> same_set("ab", {"a", "b"}), same_set(None, set())
    (False, False)
    """
    got = _items(answer)
    try:
        return got is not None and got == set(expected)
    except TypeError:
        return False


def same_set_map(answer, expected: Mapping) -> bool:
    """True when the mapping ``answer`` has exactly the keys of ``expected`` and each key's
    value holds the same items (as :func:`same_set` compares them).

    Examples
    --------
    >>> same_set_map({"E1": [], "E2": ("E1",)}, {"E1": (), "E2": ("E1",)})
    True
    >>> same_set_map({"E2": ["E1"]}, {"E1": (), "E2": ("E1",)})
    False
    """
    if not isinstance(answer, Mapping):
        return False
    try:
        if set(answer) != set(expected):
            return False
        return all(same_set(answer[k], v) for k, v in expected.items())
    except TypeError:
        return False


def choice_words(text) -> str:
    """``text`` as a choice is compared: lower case, ``-`` and ``_`` as spaces, spaces single.

    Public for :mod:`decompkit.exercises.checks`, whose hints judge choices by the same rule.

    >>> choice_words(" Hard_failure ")
    'hard failure'
    """
    return " ".join(str(text).strip().lower().replace("_", " ").replace("-", " ").split())


def same_choice(answer, expected: str) -> bool:
    """True when the string ``answer`` is the expected choice (case, spaces, ``-`` and ``_``
    ignored).

    Examples
    --------
    >>> same_choice(" Lower ", "lower"), same_choice(None, "none")
    (True, False)
    """
    return isinstance(answer, str) and choice_words(answer) == choice_words(expected)


def same_choices(answer, expected: Mapping) -> bool:
    """True when the mapping ``answer`` gives every key its expected choice.

    Keys and choices are strings compared as :func:`same_choice` compares them, so
    ``"Plan Representation"`` names the key ``"plan_representation"``.

    Examples
    --------
    >>> same_choices({"Step-Verification": "None "}, {"step_verification": "none"})
    True
    >>> same_choices({"step_verification": None}, {"step_verification": "none"})
    False
    """
    if not isinstance(answer, Mapping):
        return False
    try:
        got = {choice_words(k): v for k, v in answer.items() if isinstance(k, str)}
        return all(same_choice(got.get(choice_words(k)), v) for k, v in expected.items())
    except TypeError:
        return False


def is_valid_order(graph: Mapping, answer) -> bool:
    """True when ``answer`` lists every node of ``graph`` once, each after its predecessors."""
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
        return False
    from .dag import order_violations

    try:
        return not order_violations(graph, list(answer))
    except (TypeError, ValueError):
        return False


def is_critical_path(graph: Mapping, durations: Mapping, answer) -> bool:
    """True when ``answer`` follows edges of ``graph`` and its durations add up to the
    makespan: a longest path, so any of several critical paths passes.

    Examples
    --------
    >>> g, d = {"b": ["a"], "c": ["a"], "d": ["b", "c"]}, {"a": 1, "b": 2, "c": 2, "d": 1}
    >>> is_critical_path(g, d, ["a", "c", "d"]), is_critical_path(g, d, ("a", "b", "d"))
    (True, True)
    >>> is_critical_path(g, d, ["a", "d"]), is_critical_path(g, d, "abd")
    (False, False)
    """
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
        return False
    from .dag import critical_path

    try:
        path = list(answer)
        if not path or any(v not in durations for v in path):
            return False
        if any(u not in graph.get(v, ()) for u, v in zip(path, path[1:], strict=False)):
            return False
        length = sum(durations[v] for v in path)
        makespan = critical_path(graph, durations).makespan
    except (TypeError, ValueError):
        return False
    return abs(length - makespan) <= 1e-9 * max(1.0, abs(makespan))
