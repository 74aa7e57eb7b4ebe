"""The numbers each exercise notebook works with, and the registry of the notebooks.

Every exercise reads its numbers (p, d, phi, q, n, durations, ...) from the notebook's
parameter object, never from literals typed into a cell, so each student can get numbers of
their own. ``params(notebook)`` without a student id gives the lecture's own numbers; with an id
it draws the numbers from a generator seeded by ``sha256(assignment : notebook : id)``, within
ranges that keep every exercise meaningful, and redraws until the notebook's exercise finds no
degenerate case. Each notebook's parameter class, draw, key and checks live in its own module
(``decompkit.exercises.chain`` holds ``ChainParams``, ...); :data:`EXERCISES` names them all.

The id is resolved by :func:`student_id`: the grader's ``DECOMPKIT_STUDENT`` first (set for
the kernel that runs a submission, from the submission's folder), then the platform's
``JUPYTERHUB_USER``, then the id typed into the notebook's marked cell. :func:`expected` is
what the hidden tests ask: the key's value of one item for the id in effect.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import os

import numpy as np

from . import agents, chain, dag, harness, horizon, plans, trace
from .contract import Exercise
from .ids import GRADER_VARIABLE, HUB_VARIABLE, LECTURE, IdError, normalise_id
from .support import known_item

# The function params is public but left out of __all__: the package lifts this __all__, and
# a name params there would hide the module decompkit.exercises.params behind the function.
__all__ = [
    "EXERCISES",
    "expected",
    "student_id",
    "ASSIGNMENT",
    "GRADER_VARIABLE",
    "HUB_VARIABLE",
    "LECTURE",
]

#: The nbgrader assignment the notebooks belong to; part of every seed.
ASSIGNMENT = "decomp"

#: Every exercise notebook, in the course's order, by its short name.
EXERCISES: dict[str, Exercise] = {
    module.EXERCISE.name: module.EXERCISE
    for module in (chain, horizon, plans, dag, trace, harness, agents)
}


def _exercise(notebook) -> Exercise:
    if not isinstance(notebook, str) or notebook not in EXERCISES:
        raise ValueError(f"notebook must be one of {sorted(EXERCISES)}, got {notebook!r}")
    return EXERCISES[notebook]


def _clean_id(name: str, value) -> str | None:
    """``value`` under the one id rule (:func:`decompkit.exercises.ids.normalise_id`)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string or None, got {value!r}")
    if not value.strip():
        return None
    try:
        return normalise_id(value)
    except IdError as error:
        raise ValueError(f"{name}: {error}") from None


def student_id(student=None) -> str | None:
    """The id whose numbers this session uses, or None for the lecture's numbers.

    Parameters
    ----------
    student : str or None
        The id typed into the notebook's marked cell.

    Returns
    -------
    str or None
        In order of precedence: the grader's ``DECOMPKIT_STUDENT`` (a submission is always
        graded under the id of its folder, whatever its cells say), the hub's
        ``JUPYTERHUB_USER``, then ``student``. ``None`` when none is set.

    Every id passes through :func:`decompkit.exercises.ids.normalise_id`, the rule collection,
    grading and the answer key use too: ``S1234`` typed into the cell gets the numbers the
    folder ``s1234`` is graded under.

    Raises
    ------
    ValueError
        When ``student`` (or the id in the environment) is not a string, or holds no letter
        or digit.

    Examples
    --------
    >>> import os
    >>> os.environ.pop("DECOMPKIT_STUDENT", None), os.environ.pop("JUPYTERHUB_USER", None)
    (None, None)
    >>> student_id(" S1234 "), student_id("Zoë Müller"), student_id(None), student_id("")
    ('s1234', 'zoe-muller', None, None)
    """
    typed = _clean_id("student", student)
    for variable in (GRADER_VARIABLE, HUB_VARIABLE):
        value = _clean_id(variable, os.environ.get(variable, ""))
        if value:
            return value
    return typed


def _seed(assignment: str, notebook: str, student: str) -> int:
    text = f"{assignment}:{notebook}:{student}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:16], "big")


def params(notebook: str, student=None, *, assignment: str = ASSIGNMENT):
    """The parameter object of ``notebook`` for a student, or with the lecture's numbers.

    Parameters
    ----------
    notebook : str
        One of ``"chain"``, ``"horizon"``, ``"plans"``, ``"dag"``, ``"trace"``, ``"harness"``,
        ``"agents"``.
    student : str or None
        The id typed into the notebook's marked cell; the grader's and the hub's id take
        precedence (see :func:`student_id`). ``None`` with no id in the environment gives
        the lecture's own numbers, and ``"lecture"`` gives them always.
    assignment : str
        Part of the seed, so the same student gets other numbers in another assignment.

    Returns
    -------
    object
        The notebook's parameter class (``EXERCISES[notebook].Params``), e.g. ``ChainParams``.

    Raises
    ------
    ValueError
        For an unknown notebook, a malformed id, or an ``assignment`` that is not a
        non-empty str.

    Notes
    -----
    The draw is a pure function of ``(assignment, notebook, id)``: the same id gives the same
    numbers on every machine and in every session, in the student's kernel, in the grader's and
    in the instructor's answer key. Candidates that the notebook's exercise reports as
    degenerate (ties, indistinguishable mistakes, trivial comparisons) are skipped in a fixed
    order, so the result stays deterministic.

    Examples
    --------
    >>> import os
    >>> os.environ.pop("DECOMPKIT_STUDENT", None), os.environ.pop("JUPYTERHUB_USER", None)
    (None, None)
    >>> P = params("chain")
    >>> P.p, P.n, P.task_success
    (0.9, 10, 0.1074)
    >>> params("chain", "s1234") == params("chain", "s1234") != P
    True
    >>> from decompkit.exercises.page import student_of
    >>> student_of(P), student_of(params("chain", "s1234"))
    (None, 's1234')
    """
    exercise = _exercise(notebook)
    if not (isinstance(assignment, str) and assignment.strip()):
        raise ValueError(f"assignment must be a non-empty str, got {assignment!r}")
    # "lecture" asked for by name means the lecture's numbers, even on a hub or under the
    # grader; the grader's expected answers never come from here (see `expected`).
    who = LECTURE if _clean_id("student", student) == LECTURE else student_id(student)
    if who is None or who == LECTURE:
        drawn = exercise.Params()
    else:
        drawn = _draw(notebook, who, assignment)
    # Whose numbers these are travels with them (outside the fields: equality, hashing and
    # the answer key see the numbers only), so every check can say it; and the id as typed,
    # when the grader's rule wrote it otherwise ("Zoë Müller" is zoe-muller), on a copy: the
    # drawn object is shared by every spelling of the id.
    typed = student.strip() if isinstance(student, str) else None
    if who not in (None, LECTURE) and typed and typed != who and _clean_id("student", typed) == who:
        drawn = copy.copy(drawn)
        object.__setattr__(drawn, "_typed", typed)
    object.__setattr__(drawn, "_student", who)
    return drawn


#: Every hidden test asks again, and the objects are frozen. Room for every notebook of a class
#: of several hundred: the grader (and the tests) go through students notebook by notebook, and
#: a cache smaller than one pass over the class would drop each draw just before it is asked for
#: again.
@functools.lru_cache(maxsize=8192)
def _draw(notebook: str, who: str, assignment: str):
    exercise = EXERCISES[notebook]
    rng = np.random.default_rng(_seed(assignment, notebook, who))
    for _ in range(_MAX_DRAWS):
        candidate = exercise.draw(rng)
        if not exercise.degenerate(candidate):
            return candidate
    raise RuntimeError(  # a bug in the ranges, not an input error
        f"no usable {notebook} parameters for id {who!r} in {_MAX_DRAWS} draws"
    )


_MAX_DRAWS = 500


def expected(notebook: str, item: str, student=None):
    """The answer key's value of ``item`` in ``notebook``, for the id in effect.

    This is what a hidden test compares an answer with: ``key(params(notebook))[item]``, the
    same key the instructor's answer key prints, so the two cannot disagree.

    Parameters
    ----------
    notebook : str
        A name of :data:`EXERCISES`.
    item : str
        An item of the notebook's key (see its ``grade_cells``).
    student : str or None
        As for :func:`params`; the grader's and the hub's id take precedence.

    Returns
    -------
    object
        A fresh copy of the value (editing it changes nothing for the next caller).

    Raises
    ------
    ValueError
        For an unknown notebook or item, or a malformed id.

    Examples
    --------
    >>> import os
    >>> os.environ.pop("DECOMPKIT_STUDENT", None), os.environ.pop("JUPYTERHUB_USER", None)
    (None, None)
    >>> round(expected("chain", "chain_success"), 4)
    0.3487
    >>> expected("chain", "chain_succes")
    Traceback (most recent call last):
    ...
    ValueError: item must be one of [...], got 'chain_succes'
    """
    exercise = _exercise(notebook)
    return known_item(exercise.key(params(notebook, student)), item)[item]
