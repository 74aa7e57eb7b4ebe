"""Answer keys, visible checks and variant constraints of the exercise notebooks.

Each module ``decompkit.exercises.<notebook>`` offers ``key(P)`` (every answer for the
parameters ``P``), ``check(item, answer, P)`` (the visible check with hints) and
``degenerate(P)`` (why ``P`` would make an exercise degenerate; empty when it is usable, which is
what :func:`decompkit.variants.params` requires of every per-student draw).
"""

from __future__ import annotations

import copy
import functools
import numbers
from collections.abc import Callable, Mapping

__all__ = ["mistake_clashes", "cached_key", "known_item", "text_table"]


def cached_key(key: Callable) -> Callable:
    """Compute an answer key once per parameter object; hand out a fresh copy every time.

    Every visible check looks up its item in the whole key, and a scheduler notebook's key runs
    a dozen simulations: without the cache a notebook's checks would redo them all per answer.
    Parameter objects are frozen dataclasses, so they serve as cache keys.
    """
    cached = functools.lru_cache(maxsize=256)(key)

    @functools.wraps(key)
    def fresh(P):
        return copy.deepcopy(cached(P))

    return fresh


def mistake_clashes(
    expected: Mapping, mistakes: Callable[[str], Mapping], *, rtol: float = 1e-3, margin: float = 2
) -> list[str]:
    """Numeric items whose answer a known mistake would also produce.

    A hint must fire only for a wrong answer: every mistake's value has to differ from the right
    one by more than ``margin`` times the check's relative tolerance.

    Examples
    --------
    >>> mistake_clashes({"x": 1.0}, lambda item: {"forgot the square": 1.0001})
    ["x: the mistake 'forgot the square' gives the answer itself (1.0)"]
    >>> mistake_clashes({"x": 1.0}, lambda item: {"forgot the square": 1.2})
    []
    """
    found = []
    for item, value in expected.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            continue
        for hint, wrong in mistakes(item).items():
            if abs(float(wrong) - value) <= margin * rtol * abs(value) + 1e-12:
                found.append(f"{item}: the mistake {hint!r} gives the answer itself ({value!r})")
    return found


def known_item(expected: Mapping, item: str) -> Mapping:
    """``expected`` (a notebook's answer key) once ``item`` is known to be one of its items.

    Examples
    --------
    >>> known_item({"a": 1}, "b")
    Traceback (most recent call last):
    ...
    ValueError: item must be one of ['a'], got 'b'
    """
    if item not in expected:
        raise ValueError(f"item must be one of {sorted(expected)}, got {item!r}")
    return expected


def text_table(rows, *, rule_max: int | None = None) -> str:
    """Rows as a plain-text table: columns padded to their widest cell, the last one left
    ragged, a rule of dashes under the header (at most ``rule_max`` long).

    Examples
    --------
    >>> print(text_table([("id", "note"), ("a", "first"), ("bcd", "x")]))
    id   note
    ----------
    a    first
    bcd  x
    """
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + str(r[-1])
        for r in rows
    ]
    rule = max(map(len, lines))
    lines.insert(1, "-" * (rule if rule_max is None else min(rule_max, rule)))
    return "\n".join(line.rstrip() for line in lines)
