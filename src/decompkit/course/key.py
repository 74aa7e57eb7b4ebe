"""Every student's parameters and answers, for the instructor.

The answers are computed the way the hidden tests compute them, from
``decompkit.exercises.params.params(notebook, id)`` and the notebook's exercise module, so
the key can never drift from the grading. From the shell::

    python3 kit.py key s1234                      # one student's numbers and answers
    python3 kit.py key --csv key.csv s1 s2 ...    # the class's key as CSV
    python3 kit.py key --csv key.csv              # ids taken from submitted/<id>/

Every id goes through :func:`decompkit.exercises.ids.normalise_id` first, as collection and
grading do, so ``S2001`` and ``s2001`` get the same key and any id the grader grades is
accepted here.
"""

from __future__ import annotations

import csv
import dataclasses
import sys
from pathlib import Path
from typing import NamedTuple

from ..exercises.ids import LECTURE, IdError, normalise_id
from ..exercises.params import EXERCISES, params
from .arguments import Parser

__all__ = ["GRADE_CELLS", "FILES", "KeyRow", "answer_key", "parameters", "write_csv", "main"]

#: Notebook file (without ``.ipynb``) of each exercise.
FILES = {name: exercise.file for name, exercise in EXERCISES.items()}

#: ``{notebook: {grade cell id: answer-key item}}``, as each exercise module declares it.
GRADE_CELLS = {name: dict(exercise.grade_cells) for name, exercise in EXERCISES.items()}


class KeyRow(NamedTuple):
    """One answer of one student: where it is graded and what it must be."""

    student: str
    notebook: str
    grade_id: str
    item: str
    answer: object


def _text(value) -> str:
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(map(repr, value))) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, float):
        return f"{value:.10g}"
    return repr(value) if isinstance(value, str) else str(value)


def _id(student):
    """The id under the one rule; ``None`` (the lecture's numbers) as LECTURE, so that an id
    in the environment (a hub's user, the grader's student) does not stand in for it."""
    return LECTURE if student is None else normalise_id(student)


def parameters(student, notebook: str) -> dict:
    """The numbers ``student`` works with in ``notebook`` (``None``: the lecture's).

    Examples
    --------
    >>> parameters(None, "chain")["p"]
    0.9
    >>> parameters("S2001", "chain") == parameters(" s2001", "chain")
    True
    """
    return dataclasses.asdict(params(notebook, _id(student)))


def answer_key(student, notebooks=None) -> list[KeyRow]:
    """The answers of every graded cell that depends on the student's numbers.

    Parameters
    ----------
    student : str or None
        The id (as the submission's folder names it); ``None`` for the lecture's numbers.
    notebooks : iterable of str, optional
        Which notebooks (default: all).

    Raises
    ------
    ValueError
        For an unknown notebook or a malformed id.

    Examples
    --------
    >>> rows = answer_key(None, ["chain"])
    >>> rows[0].grade_id, round(rows[0].answer, 4)
    ('chain_success_value', 0.3487)
    """
    rows = []
    student = _id(student)
    for notebook in EXERCISES if notebooks is None else notebooks:
        P = params(notebook, student)
        cells = GRADE_CELLS.get(notebook)
        if cells is None:
            raise ValueError(f"notebook must be one of {sorted(EXERCISES)}, got {notebook!r}")
        if not cells:
            continue
        key = EXERCISES[notebook].key(P)
        rows += [KeyRow(student, notebook, cell, item, key[item]) for cell, item in cells.items()]
    return rows


def write_csv(path, students, notebooks=None) -> int:
    """Write the class's answer key (one row per student and graded cell); return the rows.

    Each row also names the student's parameters of that notebook, so a disputed answer can be
    recomputed by hand from the file alone.
    """
    count = 0
    students = list(dict.fromkeys(normalise_id(s) for s in students))
    with open(path, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["student", "notebook", "file", "grade_id", "item", "answer", "parameters"])
        for student in students:
            numbers = {}
            for row in answer_key(student, notebooks):
                if row.notebook not in numbers:
                    fields = parameters(student, row.notebook)
                    numbers[row.notebook] = "; ".join(f"{k}={_text(v)}" for k, v in fields.items())
                out.writerow(
                    [
                        row.student,
                        row.notebook,
                        FILES[row.notebook],
                        row.grade_id,
                        row.item,
                        _text(row.answer),
                        numbers[row.notebook],
                    ]
                )
                count += 1
    return count


def _submitted(root: Path) -> list[str]:
    """The normalised ids of the folders in ``submitted/`` (a folder no id fits is skipped;
    the grader reports it)."""
    folder = root / "submitted"
    if not folder.is_dir():
        return []
    found = set()
    for path in folder.iterdir():
        if path.is_dir() and not path.name.startswith("."):
            try:
                found.add(normalise_id(path.name))
            except IdError:
                continue
    return sorted(found)


def main(argv=None) -> int:
    """Command line: print one student's key, or write the class's key as CSV."""
    parser = Parser(prog="python -m decompkit.course key", description=__doc__.split("\n")[0])
    parser.add_argument("students", nargs="*", help="ids (default for --csv: submitted/<id>/)")
    parser.add_argument("--csv", type=Path, help="write the class's key to this file")
    parser.add_argument("--notebook", action="append", choices=sorted(EXERCISES))
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the course folder")
    args = parser.parse_args(argv)
    students = args.students or _submitted(args.root)
    try:
        if args.csv:
            if not students:
                parser.error("no ids given and no submitted/<id>/ folders found")
            rows = write_csv(args.csv, students, args.notebook)
            print(f"wrote {rows} answers of {len(students)} students to {args.csv}")
            return 0
        for student in [_id(s) for s in students] or [None]:
            print(f"# {student or 'lecture numbers'}")
            for notebook in args.notebook or EXERCISES:
                fields = parameters(student, notebook)
                print(
                    f"{FILES[notebook]}: " + ", ".join(f"{k}={_text(v)}" for k, v in fields.items())
                )
                for row in answer_key(student, [notebook]):
                    print(f"    {row.grade_id:<28} {row.item:<20} {_text(row.answer)}")
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
