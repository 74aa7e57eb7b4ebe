"""Comparisons for the hidden tests of the exercise notebooks.

A hidden test imports what it needs *inside* its cell (``from decompkit.grading import close``)
and recomputes the expected value with the package, so a student cell that rebinds ``np``,
``close``, ``P`` or a package function in the notebook's namespace changes nothing. Every
function here returns a bool and never raises on a malformed answer: a wrong type simply
does not match.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping

import numpy as np

__all__ = ["close", "same_set", "same_choices", "is_valid_order", "same_bool"]


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


def close(answer, expected, *, rtol: float = 1e-3, atol: float = 1e-9) -> bool:
    """True when ``answer`` is one real number within tolerance of ``expected``.

    Any real type passes (int, float, Fraction, NumPy scalar, 0-d array); booleans, strings,
    containers and NaN do not. Infinite values match only the same infinity.

    Examples
    --------
    >>> from fractions import Fraction
    >>> close(Fraction(1, 3), 0.33333), close("0.333", 1 / 3), close(True, 1.0)
    (True, False, False)
    """
    value = _real(answer)
    if value is None or math.isnan(value):
        return False
    expected = float(expected)
    if math.isinf(value) or math.isinf(expected):
        return value == expected
    return abs(value - expected) <= atol + rtol * abs(expected)


def same_bool(answer, expected: bool) -> bool:
    """True when ``answer`` is a boolean (Python or NumPy) equal to ``expected``."""
    if not isinstance(answer, (bool, np.bool_)):
        return False
    return bool(answer) is bool(expected)


def same_set(answer, expected: Iterable) -> bool:
    """True when ``answer`` (any iterable except a string) holds exactly the expected items."""
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
        return False
    try:
        return set(answer) == set(expected)
    except TypeError:
        return False


def _norm(text) -> str:
    return " ".join(str(text).strip().lower().replace("_", " ").replace("-", " ").split())


def same_choices(answer, expected: Mapping) -> bool:
    """True when the mapping ``answer`` gives every key its expected choice (case ignored)."""
    if not isinstance(answer, Mapping):
        return False
    try:
        return all(k in answer and _norm(answer[k]) == _norm(v) for k, v in expected.items())
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
