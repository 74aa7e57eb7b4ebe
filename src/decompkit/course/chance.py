"""How likely a student's wrong answers are a classmate's right ones by chance alone.

Every id's numbers are drawn from one distribution, so a classmate's right answer to an item
is a random draw from that item's spread of answers. For a student who did not copy, a wrong
answer :math:`v` equals one given classmate's right answer with probability

.. math:: q(v) = \\frac{1 + \\#\\{\\text{reference ids whose answer is } v\\}}
                      {1 + \\text{REFERENCE\\_IDS}},

"is" meaning within the hidden tests' tolerance (:func:`decompkit.grading.close`), over
:data:`REFERENCE_IDS` ids drawn for the purpose (the one added above and below keeps every
share above 0). The chance that one classmate's answers equal at least :math:`h` of the
student's :math:`m` wrong ones is the tail of the sum of :math:`m` independent Bernoulli
draws with those :math:`q`; that any of :math:`S` classmates (or the lecture) does is at
most :math:`S` times as much. Two kinds of item would make matches cheap and are handled
first: an item whose answer two ids share with probability above :data:`FEW_VALUES` is left
out, and an item that gives the same answer as an earlier one for nearly every id (a number
asked twice) counts once.

Examples
--------
>>> tail([0.5, 0.5], 1), tail([0.5, 0.5], 2), tail([0.1], 0)
(0.75, 0.25, 1.0)
>>> odds(2e-4), odds(1e-9)
('about 1 in 5,000', 'less than 1 in a million')
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..grading import digit_band
from .key import GRADE_CELLS, answer_key

__all__ = ["REFERENCE_IDS", "FEW_VALUES", "TWINS", "Spread", "spread", "tail", "odds"]

#: Ids drawn to learn how each item's right answers spread over a class.
REFERENCE_IDS = 200
#: An item whose answer two random ids share with at least this probability is left out.
FEW_VALUES = 0.05
#: Share of ids for which two items give one answer before the later one counts as a twin.
TWINS = 0.95
_ATOL = 1e-9  # decompkit.grading.close's default


def _numeric(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _equal(values, expected) -> np.ndarray:
    """``close(values, expected)`` elementwise, broadcasting: the hidden tests' rule."""
    return np.abs(values - expected) <= _ATOL + digit_band(expected) * (1 + 1e-9)


@dataclass(frozen=True)
class Spread:
    """The right answers of the reference ids to one notebook's numeric items."""

    values: dict  # grade_id -> np.ndarray of the reference ids' right answers
    kept: tuple  # the items a match may count: enough values, no earlier twin

    def share(self, grade_id: str, value: float) -> float:
        """:math:`q(v)`: how likely a random classmate's right answer is ``value``."""
        hits = int(_equal(value, self.values[grade_id]).sum())
        return (hits + 1) / (len(self.values[grade_id]) + 1)


@functools.cache
def spread(notebook: str) -> Spread:
    """The :class:`Spread` of the notebook ``notebook`` (``"chain"``, ``"dag"``, ...),
    computed once per process from :data:`REFERENCE_IDS` drawn ids.

    Raises
    ------
    ValueError
        For a notebook that is not one of the assignment's.
    """
    if notebook not in GRADE_CELLS:
        raise ValueError(f"notebook must be one of {sorted(GRADE_CELLS)}, got {notebook!r}")
    columns: dict[str, list] = {}
    for i in range(REFERENCE_IDS):
        for row in answer_key(f"reference-{i:04d}", [notebook]):
            columns.setdefault(row.grade_id, []).append(row.answer)
    values = {
        g: np.array(column, dtype=float)
        for g, column in columns.items()
        if all(_numeric(v) for v in column)
    }
    kept = []
    for grade_id, column in values.items():
        if _equal(column[:, None], column[None, :]).mean() > FEW_VALUES:
            continue  # two ids share the answer too often for a match to mean anything
        if any(_equal(column, values[earlier]).mean() >= TWINS for earlier in kept):
            continue  # the same number as an item already kept
        kept.append(grade_id)
    return Spread(values, tuple(kept))


def tail(shares, hits: int) -> float:
    """P(at least ``hits`` of independent events with probabilities ``shares`` happen)."""
    distribution = np.array([1.0])
    for q in shares:
        distribution = np.append(distribution * (1 - q), 0.0) + np.append(0.0, distribution * q)
    return float(min(1.0, distribution[hits:].sum()))


def odds(chance: float) -> str:
    """``chance`` as a person reads it."""
    if chance < 1e-6:
        return "less than 1 in a million"
    return f"about 1 in {round(1 / chance):,}"
