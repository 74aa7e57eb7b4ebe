"""Grades in the files an LMS imports: a Canvas gradebook CSV, a Moodle grade import CSV, or
a plain CSV with one column per notebook and the submission time.

``python -m decompkit.course export --to canvas|moodle|csv [--roster FILE]`` writes
``exports/<assignment>-<format>.csv``. Scores are the gradebook's (``gradebook.db``: automatic
scores, manual grades entered in formgrader, minus any late penalty); the submission time is
the grading record's ``submitted_at`` (the LMS's time of an LMS download, else nbgrader's
``timestamp.txt``), else the gradebook's. Without a gradebook the grading records alone are
read (:func:`decompkit.course.engine.record.load`). A mistyped assignment, format or option,
or a missing roster, is refused in one line before nbgrader is imported.

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

The columns of each format, and the LMS pages they follow, are in :mod:`.lmscsv`. A file for
Canvas or Moodle holds the assignment's total, or with ``--columns notebooks`` one column per
notebook, never both (an LMS adds up what it imports); the plain CSV holds both.
``--column NAME=HEADER`` heads the column of a notebook or, under the assignment's name, the
total (``--column "decomp=Decomposition (4711)"`` updates that existing Canvas assignment).
Moodle stops a whole import at a row it cannot match, so a student with no Moodle username,
ID number or email address (the one field the file matches by, ``--match``) is left out and
named: the others are written and the command exits 1.

A text cell that a spreadsheet would run as a formula (an id or a name beginning with ``=``,
``+``, ``-``, ``@``, a tab or a line break) is written with a ``'`` in front
(:mod:`decompkit.course.csvsafe`); scores are numbers and are written as they are.
"""

from __future__ import annotations

import argparse
import csv
import re
import sqlite3
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .csvsafe import cell
from .engine.record import load
from .gradebook import uninterrupted
from .lmscsv import COLUMNS, MOODLE_FIELDS, UnmatchedError, grade_columns, moodle_field, table

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
    _check_assignment(root, assignment)
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


def _check_assignment(root: Path, assignment: str) -> None:
    # Read with sqlite alone, so that a mistyped name fails before nbgrader is imported.
    database, records = root / "gradebook.db", root / "records"
    known = set()
    if database.is_file():
        try:
            with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True) as db:
                known = {name for (name,) in db.execute("SELECT name FROM assignment")}
        except sqlite3.DatabaseError as error:
            raise ValueError(f"{database} is not an nbgrader gradebook ({error})") from None
    if records.is_dir():
        known |= {p.name for p in records.iterdir() if p.is_dir() and any(p.glob("*.json"))}
    if assignment in known:
        return
    if not known and not database.is_file():
        raise ValueError(
            f"no gradebook.db and no records/{assignment}/ in {root}: grade first "
            f"(python3 kit.py grade), or pass --root COURSE_FOLDER"
        )
    raise ValueError(f"no assignment {assignment!r} in {root}; it has {sorted(known)}")


def _from_gradebook(database: Path, assignment: str):
    from nbgrader.api import Gradebook

    # The walk over the rows is a function of its own: the row objects it holds go when it
    # returns, inside the hold. Freed after it, their clean-up could meet a Ctrl-C, and
    # Python printed "Exception ignored in ..." with a traceback.
    with uninterrupted(), Gradebook(f"sqlite:///{database}") as gb:
        return _walk_gradebook(gb, assignment)


def _walk_gradebook(gb, assignment: str):
    from nbgrader.api import MissingEntry

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


def _check_request(fmt, assignment, columns, headers, match, roster):
    """Every mistake visible without the grades, before anything is read."""
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {list(FORMATS)}, got {fmt!r}")
    if columns is not None and columns not in COLUMNS:
        raise ValueError(f"columns must be one of {list(COLUMNS)}, got {columns!r}")
    if match is not None and match not in MOODLE_FIELDS:
        raise ValueError(f"match must be one of {list(MOODLE_FIELDS)}, got {match!r}")
    if match is not None and fmt != "moodle":
        raise ValueError(f"match is for Moodle's user field, not {fmt!r}")
    if columns == "total" or (columns is None and fmt != "csv"):
        named = sorted(set(headers) - {assignment})
        if named:
            raise ValueError(
                f"--column names {named}, but --columns total writes one column, the total: "
                f"head it with --column {assignment}=HEADER, or pass --columns notebooks"
            )
    if columns == "notebooks" and assignment in headers:
        raise ValueError(
            f"--column names {assignment!r}, but --columns notebooks has no total column"
        )
    if roster is not None and not Path(roster).is_file():
        raise ValueError(f"roster {str(roster)!r} not found")


def write(
    root,
    assignment: str = "decomp",
    fmt: str = "csv",
    *,
    roster=None,
    columns=None,
    headers=None,
    match=None,
    output=None,
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
    columns : {"total", "notebooks"}, optional
        The grade columns: the assignment's total (the default for Canvas and Moodle) or one
        per notebook, never both, as an LMS adds up what it imports; ``csv`` writes both
        unless told.
    headers : dict, optional
        ``{notebook or assignment: column header}``, e.g. an existing Canvas assignment
        ``"Name (4711)"``; the assignment's name heads the total.
    match : {"username", "idnumber", "email"}, optional
        Moodle only: the user field to match by (default: the one known for most students).
    output : path, optional
        Where to write (default ``exports/<assignment>-<fmt>.csv`` in the course folder).

    Returns
    -------
    Path
        The file written (UTF-8, comma-separated, a header row).

    Raises
    ------
    UnmatchedError
        Moodle: for students with no value of the user field, after writing the others (its
        ``path`` is None when nobody could be written).
    ValueError
        For an unknown format, assignment or column, a missing or unusable roster, or nothing
        graded; these are found before nbgrader is imported or anything is written.
    """
    headers = dict(headers or {})
    _check_request(fmt, assignment, columns, headers, match, roster)
    root = Path(root)
    notebooks, maxima, rows = read_grades(root, assignment)
    if not rows:
        raise ValueError(f"nothing to export: no student of {assignment!r} has a submission")
    unknown = sorted(set(headers) - set(notebooks) - {assignment})
    if unknown:
        raise ValueError(f"--column names notebooks {unknown}, not among {notebooks}")
    if roster is not None:
        people = read_roster(roster, [r.student for r in rows])
        for row in rows:
            row.people = {**row.people, **people.get(row.student, {})}
    parts = (columns,) if columns else ("total",) if fmt != "csv" else COLUMNS
    grades = grade_columns(assignment, notebooks, maxima, headers, parts)
    unmatched, key = [], None
    if fmt == "moodle":
        key = moodle_field(rows, match)
        unmatched = [r.student for r in rows if not key or not r.people.get(MOODLE_FIELDS[key][2])]
        if len(unmatched) == len(rows):
            raise UnmatchedError(unmatched, key, None, roster=roster)
        rows = [r for r in rows if r.student not in unmatched]
    top = sum(maxima.get(nb, 0.0) for nb in notebooks)
    header, body = table(fmt, rows, grades, field=key, total_max=top)
    target = Path(output) if output else root / "exports" / f"{assignment}-{fmt}.csv"
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerows([cell(value) for value in row] for row in [header, *body])
    if unmatched:
        raise UnmatchedError(unmatched, key, target, roster=roster)
    return target


def _column(text: str) -> tuple[str, str]:
    notebook, sep, header = text.partition("=")
    if not sep or not notebook.strip() or not header.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=HEADER, got {text!r}")
    return notebook.strip(), header.strip()


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage block above it
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def main(argv: list[str] | None = None) -> int:
    """Command line: write the grades in an LMS's import format; print the file's path."""
    parser = _Parser(
        prog="python -m decompkit.course export",
        description="Write exports/<assignment>-<format>.csv for Canvas, Moodle or a "
        "spreadsheet (see decompkit.course.export's docstring for the columns and the LMS "
        "pages they follow).",
    )
    parser.add_argument("assignment", nargs="?", default="decomp", help="default decomp")
    parser.add_argument(
        "--to", dest="fmt", choices=FORMATS, default="csv", help="default csv, a spreadsheet"
    )
    parser.add_argument("--roster", type=Path, help="CSV with the kit's ids, names and LMS ids")
    parser.add_argument(
        "--columns",
        choices=COLUMNS,
        help="the grade columns, never both: an LMS adds up every column it imports, so a "
        "file with the notebooks and their total counts the work twice. Canvas and Moodle: "
        "default total, one column for the one LMS assignment the students handed the work "
        "in to; notebooks for an LMS assignment per notebook. csv: both unless told",
    )
    parser.add_argument(
        "--column",
        type=_column,
        action="append",
        default=[],
        metavar="NAME=HEADER",
        help="header of a notebook's column, or of the total under the assignment's name; "
        "Canvas updates an assignment headed 'Name (assignment id)'",
    )
    parser.add_argument(
        "--match",
        choices=list(MOODLE_FIELDS),
        help="Moodle: the user field to match students by (default: the one the roster "
        "gives for most students); a student without it is left out and named",
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
            columns=args.columns,
            headers=dict(args.column),
            match=args.match,
            output=args.output,
        )
    except UnmatchedError as error:
        if error.path is not None:
            print(_wrote(error.path, args.fmt, MOODLE_FIELDS[error.field][0]))
        print(f"error: {error}", file=sys.stderr)
        return 1
    except (ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    with open(path, newline="", encoding="utf-8") as handle:
        print(_wrote(path, args.fmt, next(csv.reader(handle))[0]))
    return 0


def _wrote(path, fmt, first) -> str:
    """What was written and, for Moodle, which column to map to which user field."""
    line = f"wrote {path} ({fmt}, generated {datetime.now():%Y-%m-%d %H:%M})"
    mapped = {header: to for header, to, _ in MOODLE_FIELDS.values()}
    if fmt == "moodle" and first in mapped:
        line += f"; in Moodle's CSV import map {first!r} to {mapped[first]!r}"
    return line


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
    # As in _from_gradebook: the students' row objects go inside the hold.
    with uninterrupted(), Gradebook(f"sqlite:///{database}") as gb:
        return _name_students(gb, roster, overwrite)


def _name_students(gb, roster: Path, overwrite: bool) -> int:
    changed = 0
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
