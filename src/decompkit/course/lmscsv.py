"""The CSV files Canvas and Moodle import, column by column as each LMS documents them, and the
plain CSV for a spreadsheet.

An LMS adds up the grade columns it imports, so a file for it holds either one column per
notebook or the assignment's total, never both (:data:`COLUMNS`); :mod:`.export` writes the
total unless told, one column for the one LMS assignment the students handed the work in to.

Canvas (Instructure, "How do I import grades in the Gradebook?", Canvas Instructor Guide,
https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807,
now https://community.instructure.com/en/kb/articles/660862-how-do-i-import-grades-in-the-gradebook):
the columns ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``, then one
column per assignment; Canvas matches a row to a student by ``ID``, ``SIS User ID`` or
``SIS Login ID``; an assignment column headed ``Name (assignment id)`` updates that existing
assignment, any other header creates a new one, and the ``Points Possible`` row under the
header (as in Canvas's own export) gives the new assignment its points. Without a roster the
kit's id is written as ``SIS Login ID``.

Moodle (MoodleDocs, "Grade import", https://docs.moodle.org/405/en/Grade_import, CSV import):
on import the teacher maps one column to a user field ("Map from" a column "to" ``userid``,
``username``, ``useridnumber`` or ``useremail``) and each grade column to a grade item (or a
new one). A row whose user field is empty or names nobody stops the whole import ("User not
found, abort whole import", ``grade/import/csv/classes/load_data.php`` in Moodle's source), so
the file has one user-field column, ``Username``, ``ID number`` or ``Email address``
(:data:`MOODLE_FIELDS`), then ``First name``, ``Last name`` and the grade columns, and only
the students with a value of that field: the others are named by :class:`UnmatchedError`. A
kit id is never written in Moodle's place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "COLUMNS",
    "MOODLE_FIELDS",
    "GradeColumn",
    "UnmatchedError",
    "grade_columns",
    "moodle_field",
    "table",
]

#: The grade columns an LMS file holds: one per notebook, or the assignment's total.
COLUMNS = ("notebooks", "total")
#: Moodle's user fields a grade import matches a row by: ``--match`` value ->
#: (the header Moodle's own export gives it, its "Map to" name, the roster's field).
MOODLE_FIELDS = {
    "username": ("Username", "username", "username"),
    "idnumber": ("ID number", "useridnumber", "id_number"),
    "email": ("Email address", "useremail", "email"),
}


class UnmatchedError(ValueError):
    """Students Moodle could not match, left out of the file.

    Attributes
    ----------
    students : list of str
        The kit's ids of every student left out.
    field : str or None
        The user field the file matches by (a key of :data:`MOODLE_FIELDS`), None when the
        kit knows no such field of any student.
    path : Path or None
        The file written with the other students, None when nothing was written.
    """

    def __init__(self, students, field, path, *, roster=None):
        self.students, self.field, self.path = list(students), field, path
        where = f"roster {str(roster)!r}" if roster is not None else "a roster (--roster FILE)"
        if field is None:
            message = (
                f"Moodle matches a row by the student's username, ID number or email address, "
                f"and the kit knows none of them for {self.students}; nothing written: give "
                f"them in {where}, a CSV with the kit's id and a 'Username', 'ID number' or "
                f"'Email address' column (Moodle's participants list with the kit's ids added)"
            )
        else:
            header = MOODLE_FIELDS[field][0]
            written = f"left out of {path}" if path is not None else "left out, nothing written"
            message = (
                f"{len(self.students)} student(s) {written}, as the kit has no Moodle "
                f"{header!r} for them and Moodle stops the whole import at a row it cannot "
                f"match: {self.students}; add each to {where} with the kit's id and an "
                f"{header!r} column, then export again"
            )
        super().__init__(message)


@dataclass(frozen=True)
class GradeColumn:
    """One grade column: its header, its points possible, and a student's score in it."""

    header: str
    points: float
    score: Callable  # row -> score, None for nothing to import


def grade_columns(assignment, notebooks, maxima, headers, parts) -> list[GradeColumn]:
    """The grade columns of ``parts`` (``"notebooks"`` and/or ``"total"``), in that order.

    ``headers`` maps a notebook, or the assignment for its total, to a column header; the
    total is otherwise headed ``<assignment> total``.
    """
    found = []
    if "notebooks" in parts:
        for nb in notebooks:
            found.append(
                GradeColumn(
                    headers.get(nb, nb), maxima.get(nb, 0.0), lambda r, nb=nb: r.scores.get(nb)
                )
            )
    if "total" in parts:

        def total(row):
            known = [row.scores[nb] for nb in notebooks if row.scores.get(nb) is not None]
            return sum(known) if known else None

        top = sum(maxima.get(nb, 0.0) for nb in notebooks)
        found.append(GradeColumn(headers.get(assignment, f"{assignment} total"), top, total))
    return found


def moodle_field(rows, match=None):
    """The Moodle user field to match by: ``match``, else the one known for most students
    (ties: the first of :data:`MOODLE_FIELDS`), None when no student has any."""
    if match is not None:
        return match
    known = {f: sum(bool(r.people.get(MOODLE_FIELDS[f][2])) for r in rows) for f in MOODLE_FIELDS}
    best = max(MOODLE_FIELDS, key=lambda f: known[f])
    return best if known[best] else None


def _score(value) -> str:
    return "" if value is None else f"{value:g}"


def table(fmt, rows, grades, *, field=None, total_max=0.0) -> tuple[list, list]:
    """``(header, body)`` of ``fmt`` for ``rows`` (objects with ``student``, ``scores``,
    ``people`` and ``submitted_at``) and ``grades`` (:func:`grade_columns`).

    Moodle's rows must all have a value of ``field``; the plain CSV ends with ``max_total``.
    """
    heads = [g.header for g in grades]
    if fmt == "canvas":
        body = [["Points Possible", "", "", "", "", *(_score(g.points) for g in grades)]]
        for row in rows:
            p = row.people
            name = ", ".join(x for x in (p.get("last_name"), p.get("first_name")) if x)
            login = p.get("sis_login_id", row.student if "sis_user_id" not in p else "")
            ids = [name or row.student, p.get("canvas_id", ""), p.get("sis_user_id", ""), login]
            body.append([*ids, p.get("section", ""), *(_score(g.score(row)) for g in grades)])
        return ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *heads], body
    if fmt == "moodle":
        header, _, key = MOODLE_FIELDS[field]
        body = [
            [
                row.people[key],
                row.people.get("first_name", ""),
                row.people.get("last_name", ""),
                *(_score(g.score(row)) for g in grades),
            ]
            for row in rows
        ]
        return [header, "First name", "Last name", *heads], body
    body = [
        [
            row.student,
            row.people.get("first_name", ""),
            row.people.get("last_name", ""),
            row.submitted_at,
            *(_score(g.score(row)) for g in grades),
            _score(total_max),
        ]
        for row in rows
    ]
    return ["student", "first_name", "last_name", "submitted_at", *heads, "max_total"], body
