"""The teaching layer: what a student's notebook needs beyond the lecture's maths.

One module per exercise notebook (``chain``, ``horizon``, ``plans``, ``dag``, ``trace``,
``harness``) holds that notebook's parameter class and per-student draw, its answer key
``key(P)``, the verdict on one answer ``judge(item, answer, P)``, its visible checks
``check(item, answer, P)`` and ``degenerate(P)``, its graded items ``ITEMS``, and ends with
``EXERCISE = Exercise(...)``, the contract :class:`Exercise` names. Every graded item is an
:class:`Item` (key, label, the variables filled, graded cell, kind) and every verdict a
:class:`Diagnosis`, which :meth:`Exercise.diagnose` returns for the grader and the visible
check prints as one line. ``params`` draws a notebook's numbers for the id in effect and keeps
the registry ``EXERCISES``; :func:`expected` is what every hidden test asks (the key's value of
one item), so the graded answers and the instructor's printed key come from the same place.
:func:`earned` gates the cells that would show an answer before it is the student's own.
``checks`` holds the judging helpers and hints, ``_page`` the page's wording and ``_support``
the helpers the modules share.

This package may import the lecture's maths and :mod:`decompkit.grading`, nothing above them
(no plotting, widgets, notebook machinery, Pydantic or networkx): a student's kernel imports
it for every graded cell and must stay light.
"""

from ._contract import Diagnosis, Exercise, Item
from ._page import earned
from ._support import cached_key, known_item, mistake_clashes, text_table
from .params import EXERCISES, expected

__all__ = [
    "Exercise",
    "Item",
    "Diagnosis",
    "EXERCISES",
    "expected",
    "earned",
    "cached_key",
    "known_item",
    "mistake_clashes",
    "text_table",
]
