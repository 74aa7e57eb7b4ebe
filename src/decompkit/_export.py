"""Answers as plain data, for the grader to read out of a student's kernel.

Kept apart from :mod:`decompkit.clean_check` so that the kernel imports only NumPy and the
standard library for it (the clean check itself loads nbformat, which is slow to import).
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Mapping
from fractions import Fraction

import numpy as np

__all__ = ["encode"]

_DEPTH = 20


def _plain(value, depth: int = 0):
    if depth > _DEPTH:
        raise ValueError("nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.generic):
        return {"__numpy__": value.dtype.str, "value": _plain(value.item(), depth + 1)}
    if isinstance(value, np.ndarray):
        return {"__ndarray__": value.dtype.str, "value": _plain(value.tolist(), depth + 1)}
    if isinstance(value, Fraction):
        return {"__fraction__": [value.numerator, value.denominator]}
    if isinstance(value, int):
        return {"__int__": str(value)}  # JSON would lose digits past 2**53 in some readers
    if isinstance(value, float):
        return {"__float__": repr(value)}  # keeps inf and nan, which JSON cannot
    if isinstance(value, (list, tuple, set, frozenset)):
        kind = type(value).__name__ if type(value) in (list, tuple, set, frozenset) else "list"
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return {"__" + kind + "__": [_plain(v, depth + 1) for v in items]}
    if isinstance(value, Mapping):
        return {
            "__dict__": [[_plain(k, depth + 1), _plain(v, depth + 1)] for k, v in value.items()]
        }
    if isinstance(value, numbers.Real):
        return {"__float__": repr(float(value))}
    raise ValueError(f"an answer of type {type(value).__name__} cannot be read out")


def encode(value) -> str:
    """The answer ``value`` as a JSON string of plain data (runs in the student's kernel).

    Examples
    --------
    >>> encode({"a": (1, 2.5)})
    '{"__dict__": [["a", {"__tuple__": [{"__int__": "1"}, {"__float__": "2.5"}]}]]}'
    """
    try:
        return json.dumps(_plain(value))
    except (ValueError, TypeError, RecursionError) as error:
        return json.dumps({"__unreadable__": str(error)})
