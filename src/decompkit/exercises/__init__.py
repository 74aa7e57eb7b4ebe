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
``checks`` holds the judging helpers and hints, ``page`` the page's wording and ``support``
the helpers the modules share. The package lifts the ``__all__`` of ``contract``, ``params``,
``page`` and ``support``; each notebook's module is reached by its path
(``decompkit.exercises.chain``).

This package may import the lecture's maths and :mod:`decompkit.grading`, nothing above them
(no plotting, widgets, notebook machinery, Pydantic or networkx): a student's kernel imports
it for every graded cell and must stay light.
"""

from . import contract, page, params, support
from .contract import *  # noqa: F403
from .page import *  # noqa: F403
from .params import *  # noqa: F403
from .support import *  # noqa: F403

__all__ = [
    *contract.__all__,
    *params.__all__,
    *page.__all__,
    *support.__all__,
]
