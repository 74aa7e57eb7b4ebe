"""The teaching layer: what a student's notebook needs beyond the lecture's maths.

One module per exercise notebook (``chain``, ``horizon``, ``plans``, ``dag``, ``trace``,
``harness``) holds that notebook's parameter class and per-student draw, its answer key
``key(P)``, its visible checks ``check(item, answer, P)`` and ``degenerate(P)``, and ends with
``EXERCISE = Exercise(...)``, the contract :class:`Exercise` names. ``params`` draws a
notebook's numbers for the id in effect and keeps the registry ``EXERCISES``; :func:`expected`
is what every hidden test asks (the key's value of one item), so the graded answers and the
instructor's printed key come from the same place. ``checks`` holds the visible checks' hints
and ``_support`` the helpers the modules share.

This package may import the lecture's maths and :mod:`decompkit.grading`, nothing above them
(no plotting, widgets, notebook machinery, Pydantic or networkx): a student's kernel imports
it for every graded cell and must stay light.
"""

from ._contract import Exercise
from ._support import cached_key, known_item, mistake_clashes, text_table
from .params import EXERCISES, expected

__all__ = [
    "Exercise",
    "EXERCISES",
    "expected",
    "cached_key",
    "known_item",
    "mistake_clashes",
    "text_table",
]
