"""Helpers every exercise module shares: cached keys, hint clashes, tables, draws.

The answer-key cache (:func:`cached_key`), the test that a hint never fires for a right answer
(:func:`mistake_clashes`), the unknown-item error (:func:`known_item`), the plain-text tables
(:func:`text_table`), and values on a grid for a per-student draw (:func:`grid`; the drawn
plans of the DAG notebooks live in :mod:`~decompkit.exercises.drawn_plans`). The package lifts
all but :func:`grid` (``__all__``, with :func:`misread_shows`), which whoever writes a new
exercise module needs; :func:`grid` is public for the exercise modules alone.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import numbers
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..validate import whole

__all__ = ["cached_key", "mistake_clashes", "known_item", "misread_shows", "text_table"]


def cached_key(key: Callable) -> Callable:
    """Compute an answer key once per parameter object; hand out a fresh copy every time.

    Every visible check looks up its item in the whole key, and a scheduler notebook's key runs
    a dozen simulations: without the cache a notebook's checks would redo them all per answer.
    Parameter objects are frozen dataclasses, so they serve as cache keys.
    """
    cached = functools.lru_cache(maxsize=256)(key)

    @functools.wraps(key)
    def fresh(P):
        return _copied(cached(P))

    return fresh


#: Values a key holds that nobody can change in place: handed out as they are.
_UNCHANGING = (str, int, float, bool, type(None))


def _copied(value):
    """``copy.deepcopy`` for a key's plain containers, at a fraction of its cost (a notebook's
    checks copy the whole key per answer, the variant checks thousands of times); any other
    object is deep-copied.

    >>> key = {"order": ["a", "b"], "slack": {"a": 0.0}, "pair": (1, [2])}
    >>> copied = _copied(key)
    >>> copied == key, copied["order"] is key["order"], copied["pair"][1] is key["pair"][1]
    (True, False, False)
    """
    kind = type(value)
    if kind in _UNCHANGING:
        return value
    if kind is dict:
        return {name: _copied(item) for name, item in value.items()}
    if kind is list:
        return [_copied(item) for item in value]
    if kind is tuple:
        return tuple(_copied(item) for item in value)
    if kind is set:
        return {_copied(item) for item in value}
    return copy.deepcopy(value)


def mistake_clashes(
    expected: Mapping, mistakes: Callable[[str], Mapping], *, rtol: float = 1e-3, margin: float = 2
) -> list[str]:
    """Numeric items whose answer a known mistake would also produce.

    A hint must fire only for a wrong answer: every mistake's value has to differ from the right
    one by more than ``margin`` times the check's relative tolerance. ``mistakes(item)`` gives
    ``{hint: value}`` or a list of :class:`~decompkit.exercises.checks.Mistake`.

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
        listed = mistakes(item)
        if isinstance(listed, Mapping):
            pairs = listed.items()
        else:  # Mistake objects: their id names them
            pairs = [(m.id, m.value) for m in listed]
        for hint, wrong in pairs:
            if abs(float(wrong) - value) <= margin * rtol * abs(value) + 1e-12:
                found.append(f"{item}: the mistake {hint!r} gives the answer itself ({value!r})")
    return found


def misread_shows(key: Callable, P, field: str, step: int = 1) -> bool:
    """Whether reading the whole number ``field`` of ``P`` one ``step`` lower or higher
    changes some answer of ``key`` (a value the key refuses, such as 0 workers, is skipped).

    A drawn number no answer depends on grades nothing: a student who misreads it cannot be
    told. Answers are compared as they are (the notebooks that call this have whole numbers,
    orders and sets).

    Examples
    --------
    >>> from decompkit.exercises.dag import DagParams, key
    >>> misread_shows(key, DagParams(), "workers"), misread_shows(key, DagParams(), "coordination")
    (True, True)
    """
    want = key(P)
    for value in (getattr(P, field) - step, getattr(P, field) + step):
        try:
            other = key(dataclasses.replace(P, **{field: value}))
        except ValueError:
            continue
        if other != want:
            return True
    return False


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

    Raises
    ------
    ValueError
        If ``rows`` is not a non-empty sequence of rows, a row is not a non-empty sequence
        of cells (a str is not one) or has another number of cells than the header, or
        ``rule_max`` is neither None nor an integer >= 0.

    Examples
    --------
    >>> print(text_table([("id", "note"), ("a", "first"), ("bcd", "x")]))
    id   note
    ----------
    a    first
    bcd  x
    """
    if not isinstance(rows, Sequence) or isinstance(rows, str) or not rows:
        raise ValueError(f"rows must be a non-empty sequence of rows, got {rows!r}")
    for i, row in enumerate(rows):
        if not isinstance(row, Sequence) or isinstance(row, str) or not row:
            raise ValueError(f"rows[{i}] must be a non-empty sequence of cells, got {row!r}")
        if len(row) != len(rows[0]):
            raise ValueError(f"rows[{i}] has {len(row)} cells, the header has {len(rows[0])}")
    if rule_max is not None:
        rule_max = whole("rule_max", rule_max, minimum=0)
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = [
        "  ".join([*(str(c).ljust(w) for c, w in zip(r[:-1], widths, strict=True)), str(r[-1])])
        for r in rows
    ]
    rule = max(map(len, lines))
    lines.insert(1, "-" * (rule if rule_max is None else min(rule_max, rule)))
    return "\n".join(line.rstrip() for line in lines)


def grid(rng: np.random.Generator, low: float, high: float, step: float) -> float:
    """A value of the grid ``low, low + step, ..., high``, rounded to the step's decimals.

    Examples
    --------
    >>> value = grid(np.random.default_rng(0), 0.6, 0.9, 0.01)
    >>> 0.6 <= value <= 0.9 and value == round(value, 2)
    True
    """
    count = round((high - low) / step)
    decimals = max(0, -int(np.floor(np.log10(step) + 1e-9)))
    return round(low + step * int(rng.integers(0, count + 1)), decimals)


def two_digits_slip_through(expected: Mapping) -> list[str]:
    """Numeric items of ``expected`` whose answer rounded to two significant digits would pass
    the four-digit rule without being the exact value rounded or cut to four digits.

    The rule passes answers within one unit of the fourth digit, so for an exact 0.2601 the
    two digits 0.26 pass; a draw where that happens teaches that two digits are enough.
    Answers whose two digits are exact (0.5, 0.75) are not listed: there two digits are right.

    Examples
    --------
    >>> two_digits_slip_through({"a": 0.2601, "b": 0.348678, "c": 0.75, "d": "lower", "e": 3})
    ['a']
    """
    from ..grading import close

    found = []
    for item, value in expected.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value:
            continue
        value = float(value)
        if not np.isfinite(value) or float(value).is_integer():
            continue
        scale = 10.0 ** (1 - np.floor(np.log10(abs(value))))
        two = round(value * scale) / scale
        four = {round(value, 3 - int(np.floor(np.log10(abs(value))))), _cut4(value)}
        if close(two, value) and not any(abs(two - v) <= 1e-12 * abs(value) for v in four):
            found.append(item)
    return found


def _cut4(value: float) -> float:
    scale = 10.0 ** (3 - np.floor(np.log10(abs(value))))
    return float(np.trunc(value * scale) / scale)
