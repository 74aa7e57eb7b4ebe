"""Which feedback pages are due: the request checked, and what each student's pages show.

The feedback command writes a student's pages again only when something they show has
changed since they were written. A student's *fingerprint* is one sha256 over

    the kit      the files the pages are made by (``feedback.py``, this file, ``mathml``,
                 ``sanitize``, ``markup``, ``safe_markdown``, the page template), the
                 versions of the libraries that render them and the course's
                 ``nbgrader_config.py``
    the grades   the student's rows of the assignment in ``gradebook.db``: every grade
                 (automatic, manual, extra credit, maximum), every comment, the submission's
                 time and extension, each notebook's flag and late penalty, the due date
    the record   ``records/<assignment>/<student>.json`` as the grader wrote it
    the notebooks  every file of ``autograded/<student>/<assignment>/``, and the submitted
                 notebook of each notebook that was not autograded

and is kept beside the pages, in ``feedback/<student>/<assignment>/.decompkit-feedback.json``
with the names of the pages. A student is *up to date* when that file holds the fingerprint
computed now and every page it names is there; a manual grade changed in formgrader, a
regrade or a new kit makes the fingerprint differ. nbgrader's own ``generate_feedback``
removes the file (it rewrites the folder), so the next run writes that student again.

Nothing here imports notebook machinery (the standard library, sqlite3 and the course's
settings only): a wrong assignment or student is one line before nbgrader is imported.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sqlite3
import sys
import tempfile
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from ..exercises.ids import IdError, normalise_id
from .fingerprint import digest
from .settings import GradingError, course_config, setting

__all__ = [
    "STAMP",
    "FeedbackRun",
    "Request",
    "check_request",
    "clear_stamp",
    "due",
    "fingerprints",
    "parse_command",
    "parser",
    "refuse",
    "summary",
    "write_stamp",
]

#: The file beside a student's pages that says what they were made from.
STAMP = ".decompkit-feedback.json"
HERE = Path(__file__).resolve().parent
#: The kit's files a page is made by (relative to this folder; a folder counts whole).
PAGE_SOURCES = (
    "feedback.py",
    "feedback_plan.py",
    "mathml.py",
    "sanitize.py",
    "markup.py",
    "safe_markdown.py",
    "templates/decompkit_feedback",
)
#: The libraries that render a page.
PAGE_LIBRARIES = (
    "nbgrader",
    "nbconvert",
    "nbformat",
    "jinja2",
    "mistune",
    "bleach",
    "pygments",
    "beautifulsoup4",
    "latex2mathml",
)

_GRADES = """
SELECT sa.student_id, n.name, bc.name, g.auto_score, g.manual_score, g.extra_credit,
       COALESCE(gc.max_score, tc.max_score)
FROM grade g
JOIN submitted_notebook sn ON g.notebook_id = sn.id
JOIN submitted_assignment sa ON sn.assignment_id = sa.id
JOIN assignment a ON sa.assignment_id = a.id
JOIN notebook n ON sn.notebook_id = n.id
JOIN base_cell bc ON g.cell_id = bc.id
LEFT JOIN grade_cells gc ON gc.id = bc.id
LEFT JOIN task_cells tc ON tc.id = bc.id
WHERE a.name = ?
"""
_COMMENTS = """
SELECT sa.student_id, n.name, bc.name, c.auto_comment, c.manual_comment
FROM comment c
JOIN submitted_notebook sn ON c.notebook_id = sn.id
JOIN submitted_assignment sa ON sn.assignment_id = sa.id
JOIN assignment a ON sa.assignment_id = a.id
JOIN notebook n ON sn.notebook_id = n.id
JOIN base_cell bc ON c.cell_id = bc.id
WHERE a.name = ?
"""
_SUBMISSIONS = """
SELECT sa.student_id, n.name, sa.timestamp, sa.extension, a.duedate, sn.flagged,
       sn.late_submission_penalty
FROM submitted_notebook sn
JOIN submitted_assignment sa ON sn.assignment_id = sa.id
JOIN assignment a ON sa.assignment_id = a.id
JOIN notebook n ON sn.notebook_id = n.id
WHERE a.name = ?
"""


@dataclass(frozen=True)
class Request:
    """A checked request: the course's folders, the students to consider and the pages each
    of them has (``{student: (notebook, ...)}``, sorted)."""

    root: Path
    assignment: str
    autograded: Path
    submitted: Path
    feedback: Path
    records: Path
    pages: dict = field(default_factory=dict)

    @property
    def students(self) -> list[str]:
        return sorted(self.pages)

    def folder(self, student: str) -> Path:
        """Where the pages of ``student`` go."""
        return self.feedback / student / self.assignment

    def paths(self, student: str) -> list[Path]:
        """The pages of ``student``."""
        return [self.folder(student) / f"{notebook}.html" for notebook in self.pages[student]]


@dataclass(frozen=True)
class FeedbackRun:
    """What a feedback run did: the pages it wrote, the pages it found up to date and left
    as they were, and which process wrote each student's pages (``{student: pid}``)."""

    written: tuple[Path, ...] = ()
    current: tuple[Path, ...] = ()
    workers: dict = field(default_factory=dict)


def _subfolders(folder: Path) -> set[str]:
    if not folder.is_dir():
        return set()
    return {p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")}


def _record_notebooks(path: Path) -> tuple[str, ...]:
    """The notebooks a grading record names (none if it cannot be read: the page step
    reports it)."""
    try:
        notebooks = json.loads(path.read_text(encoding="utf-8")).get("notebooks", {})
    except (OSError, ValueError, AttributeError):
        return ()
    return tuple(str(name) for name in notebooks) if isinstance(notebooks, dict) else ()


def _graded(autograded: Path, records: Path, assignment: str) -> dict[str, set[str]]:
    """``{student: notebooks}`` of everyone autograded or recorded for ``assignment``."""
    found: dict[str, set[str]] = {}
    for student in _subfolders(autograded):
        notebooks = {p.stem for p in (autograded / student / assignment).glob("*.ipynb")}
        if notebooks:
            found.setdefault(student, set()).update(notebooks)
    folder = records / assignment
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        if not path.name.startswith("."):
            found.setdefault(path.stem, set()).update(_record_notebooks(path))
    return found


def _known(root: Path, source: str, autograded: Path, records: Path) -> list[str]:
    names = _subfolders(root / source) | _subfolders(records)
    for student in _subfolders(autograded):
        names |= _subfolders(autograded / student)
    return sorted(names)


def _choose(graded: dict, students, assignment: str) -> dict:
    chosen = {}
    for raw in students:
        student = raw
        if student not in graded:
            try:
                student = normalise_id(raw)
            except IdError as error:
                raise GradingError(f"--student {raw!r}: {error}") from None
        if student not in graded:
            close = difflib.get_close_matches(student, list(graded), n=3)
            hint = f"did you mean {', '.join(close)}? " if close else ""
            raise GradingError(
                f"no student {raw!r} graded for {assignment!r} ({hint}{len(graded)} students "
                "are; feedback is written for graded students only)"
            )
        chosen[student] = graded[student]
    return chosen


def check_request(root, assignment: str, students=None) -> Request:
    """The request as checked against the course folder, before anything heavy is imported.

    Raises
    ------
    GradingError
        ``root`` is not a course folder, no assignment is called ``assignment`` (the
        message names the ones there are), nothing of it was graded, or a student in
        ``students`` was not graded.
    """
    root = Path(root).resolve()
    config = course_config(root)

    def folder(name: str, default: str) -> Path:
        return root / str(setting(config, "CourseDirectory", name, default))

    autograded, records = folder("autograded_directory", "autograded"), root / "records"
    source = str(setting(config, "CourseDirectory", "source_directory", "source"))
    graded = _graded(autograded, records, assignment)
    if not graded:
        known = _known(root, source, autograded, records)
        if assignment not in known:
            there = f"assignments here: {', '.join(known)}" if known else "no assignment here"
            raise GradingError(f"no assignment {assignment!r} ({there}); check the name")
        raise GradingError(
            f"nothing of {assignment!r} is graded yet (no {autograded.name}/*/{assignment}/, "
            f"no records/{assignment}/); run `python3 kit.py grade {assignment}` first"
        )
    if students:
        graded = _choose(graded, students, assignment)
    return Request(
        root=root,
        assignment=assignment,
        autograded=autograded,
        submitted=folder("submitted_directory", "submitted"),
        feedback=folder("feedback_directory", "feedback"),
        records=records,
        pages={s: tuple(sorted(graded[s])) for s in sorted(graded)},
    )


# --- fingerprints ------------------------------------------------------------------------


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b"\0absent"


def _files(folder: Path) -> list[tuple[str, bytes]]:
    if not folder.is_dir():
        return []
    return [
        (p.relative_to(folder).as_posix(), _read(p))
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    ]


def _kit(root: Path) -> bytes:
    """What every page is made by: the kit's page files, libraries and course settings."""
    entries = []
    for name in PAGE_SOURCES:
        path = HERE / name
        entries += _files(path) if path.is_dir() else [(name, _read(path))]
    for library in PAGE_LIBRARIES:
        try:
            version = metadata.version(library)
        except metadata.PackageNotFoundError:
            version = "absent"
        entries.append((library, version.encode()))
    entries.append(("nbgrader_config.py", _read(root / "nbgrader_config.py")))
    return digest(entries).encode()


def _gradebook(database: Path, assignment: str) -> dict[str, bytes]:
    """``{student: their rows of the assignment, as bytes}`` read from ``gradebook.db``."""
    if not database.is_file():
        return {}
    rows: dict[str, list] = {}
    connection = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)
    try:
        for kind, query in (("grade", _GRADES), ("comment", _COMMENTS), ("nb", _SUBMISSIONS)):
            for student, *rest in connection.execute(query, (assignment,)):
                rows.setdefault(student, []).append([kind, *rest])
    except sqlite3.DatabaseError as error:
        raise GradingError(f"{database.name} cannot be read ({error})") from None
    finally:
        connection.close()
    return {
        student: json.dumps(sorted(found, key=repr), default=str).encode()
        for student, found in rows.items()
    }


def fingerprints(request: Request) -> dict[str, str]:
    """``{student: fingerprint}`` of every student of ``request`` (module docstring)."""
    kit = _kit(request.root)
    grades = _gradebook(request.root / "gradebook.db", request.assignment)
    found = {}
    for student, notebooks in request.pages.items():
        autograded = request.autograded / student / request.assignment
        entries = [("kit", kit), ("grades", grades.get(student, b""))]
        entries.append(("record", _read(request.records / request.assignment / f"{student}.json")))
        entries += [(f"autograded/{name}", data) for name, data in _files(autograded)]
        for notebook in notebooks:
            if not (autograded / f"{notebook}.ipynb").is_file():
                path = request.submitted / student / request.assignment / f"{notebook}.ipynb"
                entries.append((f"submitted/{notebook}", _read(path)))
        found[student] = digest(entries)
    return found


def _stamp(folder: Path) -> dict:
    try:
        found = json.loads((folder / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def due(request: Request, prints: dict[str, str], force: bool = False) -> list[str]:
    """The students whose pages are to be written: all with ``force``, else those whose
    stamp does not hold their fingerprint or who miss a page."""
    stale = []
    for student in request.students:
        stamp = _stamp(request.folder(student))
        current = stamp.get("fingerprint") == prints[student] and all(
            path.is_file() for path in request.paths(student)
        )
        if force or not current:
            stale.append(student)
    return stale


def write_stamp(request: Request, student: str, fingerprint: str) -> Path:
    """Say beside ``student``'s pages what they were made from (atomically)."""
    folder = request.folder(student)
    folder.mkdir(parents=True, exist_ok=True)
    pages = [f"{notebook}.html" for notebook in request.pages[student]]
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".stamp-", suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump({"fingerprint": fingerprint, "pages": pages}, out)
    os.chmod(temporary, 0o644)  # as nbgrader leaves the pages beside it (not mkstemp's 0600)
    target = folder / STAMP
    os.replace(temporary, target)
    return target


def clear_stamp(request: Request, student: str) -> None:
    """Forget what ``student``'s pages were made from (before they are written again)."""
    (request.folder(student) / STAMP).unlink(missing_ok=True)


def parser() -> argparse.ArgumentParser:
    """The command line of ``python -m decompkit.course feedback``."""
    made = argparse.ArgumentParser(
        prog="python -m decompkit.course feedback",
        description="Write feedback/<student>/<assignment>/<notebook>.html for every graded "
        "student whose grades changed since their pages were written (--all: everyone).",
    )
    made.add_argument("assignment", nargs="?", default="decomp")
    made.add_argument("--root", type=Path, default=Path.cwd(), help="course folder")
    made.add_argument("--student", action="append", help="only this student (repeatable)")
    made.add_argument("--all", action="store_true", help="rewrite every page, changed or not")
    made.add_argument(
        "--workers",
        type=int,
        default=min(os.cpu_count() or 1, 4),
        help="processes writing pages at once, each taking whole students (default: cores)",
    )
    return made


def parse_command(argv) -> tuple[argparse.Namespace, Request]:
    """The arguments and the checked request; :class:`GradingError` for a mistake in them
    (argparse exits 2 for a malformed command line)."""
    args = parser().parse_args(argv)
    if args.workers < 1:
        raise GradingError(f"--workers must be at least 1, got {args.workers!r}")
    return args, check_request(args.root, args.assignment, args.student)


def refuse(argv) -> int | None:
    """For a wrong request, its one line on stderr and the exit status (2, as argparse's);
    None when the request is right. It imports no notebook machinery, so a command line can
    run it before importing :mod:`decompkit.course.feedback` (nbconvert: seconds)."""
    try:
        parse_command(argv)
    except GradingError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return None


def _counted(number: int, what: str) -> str:
    return f"{number} {what}{'s' * (number != 1)}"


def summary(run: FeedbackRun) -> str:
    """The command's last line: the pages written, for how many students, and how many were
    already up to date.

    Examples
    --------
    >>> page = Path("feedback/s1/decomp/01.html")
    >>> print(summary(FeedbackRun(written=(page,), current=(page, page))))
    wrote 1 feedback page for 1 student under feedback/; 2 pages already up to date
    (--all rewrites them)
    """
    students = {path.parts[-3] for path in run.written}
    line = (
        f"wrote {_counted(len(run.written), 'feedback page')} for "
        f"{_counted(len(students), 'student')} under feedback/; "
        f"{_counted(len(run.current), 'page')} already up to date"
    )
    return line + (" (--all rewrites them)" if run.current else "")
