"""Grades in the files an LMS imports: a Canvas gradebook CSV, a Moodle grade import CSV, or
a plain CSV with one column per notebook and the submission time.

``python -m decompkit.course export --to canvas|moodle|csv [--roster FILE]`` writes
``exports/<assignment>-<format>.csv``. Scores are the gradebook's (``gradebook.db``: automatic
scores, manual grades entered in formgrader, minus any late penalty), one column per notebook
plus the total; the submission time is the grading record's ``submitted_at`` (the LMS's time
of an LMS download, else nbgrader's ``timestamp.txt``), else the gradebook's. Without a
gradebook the grading records alone are read (:func:`decompkit.course.engine.record.load`).

Who is who: the kit knows each student by the gradebook id (the submission's folder name).
An LMS matches rows by its own ids, which only the instructor has: pass them as a roster, a
CSV with a header row holding the kit's id in one column (found by its values) and any of
these columns (case and spaces ignored; a Canvas gradebook export works as it is):

- ``first_name``, ``last_name`` (or ``Student`` as Canvas writes it, "Last, First"),
  ``email``, ``section``;
- Canvas: ``ID`` (Canvas's user id), ``SIS User ID``, ``SIS Login ID``;
- Moodle: ``ID number``, ``Username``, ``Email address``.

Names and the LMS id also come from the gradebook (``nbgrader db student import`` fills
``first_name``, ``last_name``, ``email`` and ``lms_user_id``) when no roster gives them, and
Canvas's user id from the names of the files Canvas's download gave the collector (the
record's ``source_names``, see :func:`canvas_user_id`).

Formats, as their documentation describes them:

Canvas (Instructure, "How do I import grades in the Gradebook?", Canvas Instructor Guide):
the columns ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``, then one
column per assignment; Canvas matches a row to a student by ``ID``, ``SIS User ID`` or
``SIS Login ID``; an assignment column headed ``Name (assignment id)`` updates that existing
assignment, any other header creates a new one, and the ``Points Possible`` row under the
header (as in Canvas's own export) gives the new assignment its points. Without a roster the
kit's id is written as ``SIS Login ID``. ``--column NOTEBOOK=HEADER`` names the column of a
notebook (``--column "01-chain-reliability=Chain reliability (4711)"``); the total's column
is ``<assignment> total``: import either it or the notebooks, not both, or Canvas counts the
work twice (the import preview lets you ignore a column).

Moodle (MoodleDocs, "Grade import", CSV import): a header row, one row per student; on import
the teacher maps one identifying column to a user field ("Map from" a column "to" ``userid``,
``username``, ``useridnumber`` or ``useremail``) and each grade column to a grade item (or a
new one). The kit writes ``Username`` (the kit's id, or the roster's), ``ID number`` and
``Email address`` when known, ``First name``, ``Last name``, then the notebooks and the total;
map ``Username`` to ``username`` (or the column your roster fills to its field).

A text cell that a spreadsheet would run as a formula (an id or a name beginning with ``=``,
``+``, ``-``, ``@``, a tab or a line break) is written with a ``'`` in front
(:mod:`decompkit.course.csvsafe`); scores are numbers and are written as they are.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .csvsafe import cell
from .engine.record import load

__all__ = [
    "FORMATS",
    "Row",
    "canvas_user_id",
    "fill_names",
    "read_grades",
    "read_roster",
    "write",
    "main",
]

FORMATS = ("canvas", "moodle", "csv")
#: Roster column (lower case, letters only) -> the field it fills.
_ROSTER_FIELDS = {
    alias: name
    for name, aliases in {
        "first_name": "firstname first givenname",
        "last_name": "lastname last surname familyname",
        "student_name": "student name",
        "email": "email emailaddress",
        "section": "section",
        "canvas_id": "id canvasid lmsuserid",
        "sis_user_id": "sisuserid",
        "sis_login_id": "sisloginid",
        "id_number": "idnumber",
        "username": "username",
    }.items()
    for alias in aliases.split()
}


@dataclass
class Row:
    """One student's line: who, when, and the score of every notebook."""

    student: str
    scores: dict = field(default_factory=dict)  # notebook -> score (None: nothing to import)
    submitted_at: str = ""
    people: dict = field(default_factory=dict)  # first_name, last_name, email, ... (roster)


def _iso(moment) -> str:
    if moment is None:
        return ""
    if isinstance(moment, str):
        return moment
    if moment.tzinfo is None:  # nbgrader stores UTC without a zone
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.isoformat(timespec="seconds")


_CANVAS_NAME = re.compile(r"^[a-z0-9-]+_(?:late_)?(\d+)_\d+_", re.I)


def canvas_user_id(source_names) -> str:
    """Canvas's user id read off the names of a student's downloaded files, or "".

    Canvas names each file of a "Download Submissions" zip
    ``<name>_[LATE_]<user id>_<attachment id>_<file name>``; an id is returned only when every
    file that has this form names the same user.

    Examples
    --------
    >>> canvas_user_id(["lovelaceada_4711_99120_01-chain-reliability.ipynb",
    ...                 "lovelaceada_LATE_4711_99121_02-long-horizons.ipynb"])
    '4711'
    >>> canvas_user_id(["s2003_01-chain-reliability (1).ipynb"])
    ''
    """
    found = {m.group(1) for m in map(_CANVAS_NAME.match, source_names or []) if m}
    return found.pop() if len(found) == 1 else ""


def read_grades(root, assignment: str) -> tuple[list[str], dict[str, float], list[Row]]:
    """``(notebooks, max score per notebook, rows)`` of ``assignment``, from the gradebook
    (else from the grading records), one row per student who submitted.

    Raises
    ------
    ValueError
        When neither a gradebook with the assignment nor any record of it exists.
    """
    root = Path(root)
    records = load(root, assignment)
    database = root / "gradebook.db"
    if database.is_file():
        found = _from_gradebook(database, assignment)
        if found is not None:
            notebooks, maxima, rows = found
            for row in rows:
                record = records.get(row.student)
                if record is None:
                    continue
                row.submitted_at = record.submitted_at or row.submitted_at
                lms = canvas_user_id(record.source_names)
                if lms and "canvas_id" not in row.people:
                    row.people["canvas_id"] = lms
            return notebooks, maxima, rows
    if not records:
        raise ValueError(
            f"no gradebook with assignment {assignment!r} and no grading records of it in {root}"
        )
    notebooks = sorted({nb for r in records.values() for nb in r.notebooks})
    maxima, rows = {}, []
    for student, record in records.items():
        row = Row(student, submitted_at=record.submitted_at or "")
        lms = canvas_user_id(record.source_names)
        row.people = {"canvas_id": lms} if lms else {}
        for notebook, entry in record.notebooks.items():
            maxima[notebook] = max(maxima.get(notebook, 0.0), entry.max_score)
            row.scores[notebook] = entry.score
        rows.append(row)
    return notebooks, maxima, rows


def _from_gradebook(database: Path, assignment: str):
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{database}") as gb:
        try:
            found = gb.find_assignment(assignment)
        except MissingEntry:
            return None
        notebooks = sorted(nb.name for nb in found.notebooks)
        maxima = {nb.name: float(nb.max_score or 0.0) for nb in found.notebooks}
        rows = []
        for student in sorted(gb.students, key=lambda s: s.id):
            try:
                submission = gb.find_submission(assignment, student.id)
            except MissingEntry:
                continue
            row = Row(student.id, submitted_at=_iso(submission.timestamp))
            row.people = {
                k: v
                for k, v in (
                    ("first_name", student.first_name),
                    ("last_name", student.last_name),
                    ("email", student.email),
                    ("canvas_id", student.lms_user_id),
                )
                if v
            }
            for notebook in submission.notebooks:
                penalty = float(notebook.late_submission_penalty or 0.0)
                row.scores[notebook.name] = max(0.0, float(notebook.score or 0.0) - penalty)
            rows.append(row)
    return notebooks, maxima, rows


def _key(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.lower())


def read_roster(path, students) -> dict[str, dict]:
    """``{kit id: {field: value}}`` from a roster CSV (see the module's docstring).

    The column holding the kit's ids is the one whose values match most of ``students``.

    Raises
    ------
    ValueError
        When the file has no header or no column holds any of the ids.
    """
    with open(path, newline="", encoding="utf-8-sig") as handle:
        table = [
            row for row in csv.DictReader(handle) if any((v or "").strip() for v in row.values())
        ]
    if not table:
        raise ValueError(f"roster {str(path)!r} has no rows under a header")
    wanted = set(students)
    columns = list(table[0])
    hits = {c: sum((row.get(c) or "").strip() in wanted for row in table) for c in columns}
    column = max(columns, key=lambda c: hits[c])
    if not hits[column]:
        raise ValueError(
            f"no column of roster {str(path)!r} holds a student id of the gradebook "
            f"(columns {columns}, ids such as {sorted(wanted)[:3]})"
        )
    people = {}
    for row in table:
        who = (row.get(column) or "").strip()
        if who not in wanted:
            continue
        entry = {}
        for name, value in row.items():
            target = _ROSTER_FIELDS.get(_key(name or ""))
            if target and (value or "").strip():
                entry[target] = value.strip()
        if "student_name" in entry and "last_name" not in entry:
            last, _, first = entry["student_name"].partition(",")
            entry.setdefault("last_name", last.strip())
            entry.setdefault("first_name", first.strip())
        people[who] = entry
    return people


def _score(value) -> str:
    return "" if value is None else f"{value:g}"


def _layout(fmt, assignment, notebooks, maxima, rows, columns):
    heads = [columns.get(nb, nb) for nb in notebooks] + [f"{assignment} total"]
    total_max = sum(maxima.get(nb, 0.0) for nb in notebooks)

    def values(row):
        scores = [row.scores.get(nb) for nb in notebooks]
        known = [s for s in scores if s is not None]
        return [_score(s) for s in scores] + [_score(sum(known) if known else None)]

    if fmt == "canvas":
        header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *heads]
        points = ["Points Possible", "", "", "", ""]
        points += [_score(maxima.get(nb, 0.0)) for nb in notebooks] + [_score(total_max)]
        body = [points]
        for row in rows:
            p = row.people
            name = ", ".join(x for x in (p.get("last_name"), p.get("first_name")) if x)
            body.append(
                [
                    name or row.student,
                    p.get("canvas_id", ""),
                    p.get("sis_user_id", ""),
                    p.get("sis_login_id", row.student if "sis_user_id" not in p else ""),
                    p.get("section", ""),
                    *values(row),
                ]
            )
        return header, body
    if fmt == "moodle":
        header = ["Username", "ID number", "Email address", "First name", "Last name", *heads]
        body = [
            [
                row.people.get("username", row.student),
                row.people.get("id_number", ""),
                row.people.get("email", ""),
                row.people.get("first_name", ""),
                row.people.get("last_name", ""),
                *values(row),
            ]
            for row in rows
        ]
        return header, body
    header = ["student", "first_name", "last_name", "submitted_at", *heads, "max_total"]
    body = [
        [
            row.student,
            row.people.get("first_name", ""),
            row.people.get("last_name", ""),
            row.submitted_at,
            *values(row),
            _score(total_max),
        ]
        for row in rows
    ]
    return header, body


def write(
    root, assignment: str = "decomp", fmt: str = "csv", *, roster=None, columns=None, output=None
) -> Path:
    """Write the grades of ``assignment`` in ``fmt`` (``canvas``, ``moodle`` or ``csv``).

    Every text cell passes through :func:`decompkit.course.csvsafe.cell`: an id or a name a
    spreadsheet would run as a formula (``=...``, ``@...``) is written with a ``'`` in front.

    Parameters
    ----------
    root : path
        The course folder.
    assignment : str
        The assignment.
    fmt : str
        One of :data:`FORMATS`.
    roster : path, optional
        A roster CSV (see the module's docstring) that gives names and LMS ids.
    columns : dict, optional
        ``{notebook: column header}``, e.g. an existing Canvas assignment ``"Name (4711)"``.
    output : path, optional
        Where to write (default ``exports/<assignment>-<fmt>.csv`` in the course folder).

    Returns
    -------
    Path
        The file written (UTF-8, comma-separated, a header row).

    Raises
    ------
    ValueError
        For an unknown format, an unusable roster, or nothing graded.
    """
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {list(FORMATS)}, got {fmt!r}")
    root = Path(root)
    notebooks, maxima, rows = read_grades(root, assignment)
    unknown = sorted(set(columns or {}) - set(notebooks))
    if unknown:
        raise ValueError(f"--column names notebooks {unknown}, not among {notebooks}")
    if roster is not None:
        people = read_roster(roster, [r.student for r in rows])
        for row in rows:
            row.people = {**row.people, **people.get(row.student, {})}
    header, body = _layout(fmt, assignment, notebooks, maxima, rows, dict(columns or {}))
    target = Path(output) if output else root / "exports" / f"{assignment}-{fmt}.csv"
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerows([cell(value) for value in row] for row in [header, *body])
    return target


def _column(text: str) -> tuple[str, str]:
    notebook, sep, header = text.partition("=")
    if not sep or not notebook.strip() or not header.strip():
        raise argparse.ArgumentTypeError(f"expected NOTEBOOK=HEADER, got {text!r}")
    return notebook.strip(), header.strip()


def main(argv: list[str] | None = None) -> int:
    """Command line: write the grades in an LMS's import format; print the file's path."""
    parser = argparse.ArgumentParser(
        prog="python -m decompkit.course export",
        description="Write exports/<assignment>-<format>.csv for Canvas, Moodle or a "
        "spreadsheet (see the module's docstring for the columns).",
    )
    parser.add_argument("assignment", nargs="?", default="decomp")
    parser.add_argument("--to", dest="fmt", choices=FORMATS, default="csv")
    parser.add_argument("--roster", type=Path, help="CSV with names and LMS ids")
    parser.add_argument(
        "--column",
        type=_column,
        action="append",
        default=[],
        metavar="NOTEBOOK=HEADER",
        help="header of a notebook's column",
    )
    parser.add_argument("--output", type=Path, help="file to write")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="course folder")
    args = parser.parse_args(argv)
    try:
        path = write(
            args.root,
            args.assignment,
            args.fmt,
            roster=args.roster,
            columns=dict(args.column),
            output=args.output,
        )
    except (ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"wrote {path} ({args.fmt}, generated {datetime.now():%Y-%m-%d %H:%M})")
    return 0


def fill_names(root, roster=None, *, overwrite: bool = False) -> int:
    """Give every student of the gradebook a name formgrader can show; return how many changed.

    Names come from ``roster`` (default: ``roster.csv`` in the course folder, when there is
    one; see :func:`read_roster`); a student the roster does not name is shown by id (last
    name = the id, first name empty). Names already in the gradebook are kept unless
    ``overwrite``. Nothing happens without a gradebook.
    """
    from nbgrader.api import Gradebook

    root = Path(root)
    database = root / "gradebook.db"
    if not database.is_file():
        return 0
    roster = Path(roster) if roster is not None else root / "roster.csv"
    changed = 0
    with Gradebook(f"sqlite:///{database}") as gb:
        ids = [s.id for s in gb.students]
        people = read_roster(roster, ids) if roster.is_file() and ids else {}
        for student in gb.students:
            named = people.get(student.id, {})
            first = named.get("first_name", "")
            last = named.get("last_name", student.id)
            if student.last_name and not overwrite:
                continue
            if (student.first_name, student.last_name) != (first, last):
                student.first_name, student.last_name = first, last
                if named.get("email") and not student.email:
                    student.email = named["email"]
                changed += 1
        gb.db.commit()
    return changed


def names_main(argv: list[str] | None = None) -> int:
    """Command line: put the roster's names (else the ids) into the gradebook for formgrader."""
    parser = argparse.ArgumentParser(
        prog="python -m decompkit.course names",
        description="Set first and last names in gradebook.db from a roster CSV (default "
        "roster.csv in the course folder); students it does not name are shown by id.",
    )
    parser.add_argument("--roster", type=Path, help="CSV with an id column and names")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="course folder")
    args = parser.parse_args(argv)
    try:
        changed = fill_names(args.root, args.roster, overwrite=args.roster is not None)
    except (ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"named {changed} students in {args.root / 'gradebook.db'}")
    return 0
