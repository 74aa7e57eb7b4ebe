"""Answers as plain data: encoded in the student's kernel, decoded in the grader.

After a submission has run, the grader reads each answer variable out of the kernel through
``user_expressions`` as ``encode(value)``, a JSON string of tagged plain data; the clean check
(:mod:`decompkit.course.engine.clean_check`) rebuilds the values with :func:`decode` and judges them
with the instructor's hidden tests in its own process. Both halves sit in this one file so the
format is written down once. The kernel imports it for every graded notebook, so it needs the
standard library and NumPy only (nbformat alone would cost a grading kernel over a second).

Anything a student's kernel sends is data, never code: :func:`decode` only builds numbers,
strings, NumPy scalars and arrays, fractions and the built-in containers, and anything
malformed becomes an :class:`Unreadable` that equals no answer.
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Mapping
from fractions import Fraction

import numpy as np

__all__ = ["Unreadable", "decode", "encode"]

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
    # The built-in types' own methods, never a subclass's: a float whose repr lies would show
    # one value in the record while its tests saw another.
    if isinstance(value, Fraction):
        numerator, denominator = Fraction.as_integer_ratio(value)
        return {"__fraction__": [int.__repr__(numerator), int.__repr__(denominator)]}
    if isinstance(value, int):
        return {"__int__": int.__repr__(value)}  # JSON loses digits past 2**53 in some readers
    if isinstance(value, float):
        return {"__float__": float.__repr__(value)}  # keeps inf and nan, which JSON cannot
    if isinstance(value, (list, tuple, set, frozenset)):
        kind = type(value).__name__ if type(value) in (list, tuple, set, frozenset) else "list"
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return {"__" + kind + "__": [_plain(v, depth + 1) for v in items]}
    if isinstance(value, Mapping):
        return {
            "__dict__": [[_plain(k, depth + 1), _plain(v, depth + 1)] for k, v in value.items()]
        }
    if isinstance(value, numbers.Real):
        return {"__float__": float.__repr__(float(value))}
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


class Unreadable:
    """Stands for an answer that could not be read out of the kernel (never equals anything)."""

    def __init__(self, why: str):
        self.why = why

    def __repr__(self) -> str:
        return f"<unreadable answer: {self.why}>"


def _build(data):
    if not isinstance(data, dict):
        if data is None or isinstance(data, (bool, str)):
            return data
        raise ValueError(f"unexpected item {data!r}")
    ((tag, payload), *rest) = data.items()
    if tag == "__numpy__":
        return np.dtype(payload).type(_build(data["value"]))
    if tag == "__ndarray__":
        return np.array(_build(data["value"]), dtype=np.dtype(payload))
    if rest:
        raise ValueError(f"unexpected keys in {data!r}")
    if tag == "__fraction__":
        return Fraction(int(payload[0]), int(payload[1]))
    if tag == "__int__":
        return int(payload)
    if tag == "__float__":
        return float(payload)
    if tag in ("__list__", "__tuple__", "__set__", "__frozenset__"):
        kind = {"__list__": list, "__tuple__": tuple, "__set__": set, "__frozenset__": frozenset}
        return kind[tag](_build(v) for v in payload)
    if tag == "__dict__":
        return {_build(k): _build(v) for k, v in payload}
    if tag == "__unreadable__":
        return Unreadable(str(payload))
    raise ValueError(f"unknown tag {tag!r}")


def decode(text: str):
    """Rebuild an answer from :func:`encode`'s output; anything malformed is :class:`Unreadable`.

    Examples
    --------
    >>> import numpy as np
    >>> decode(encode([np.float32(0.5), {1, 2}, None]))
    [np.float32(0.5), {1, 2}, None]
    >>> decode("not json")
    <unreadable answer: not JSON>
    """
    try:
        data = json.loads(text)
    except (TypeError, ValueError):
        return Unreadable("not JSON")
    try:
        return _build(data)
    except Exception as error:  # noqa: BLE001 - whatever a kernel sent costs its item only
        return Unreadable(f"malformed: {type(error).__name__}: {str(error)[:200]}")
