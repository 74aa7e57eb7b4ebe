"""What was collected: each student's notebooks of an assignment under ``submitted/``.

Folders are grouped by the student's normalised id (``S2001`` and ``s2001`` are one student);
a file that is not one of the assignment's notebooks is reported, never graded. What
``collect`` wrote about each file (the LMS's name and time) is read back from
``downloaded/<assignment>/collected.json``. Nothing here imports nbgrader until a
submission's time is read, so the grader names a student who handed nothing in at once.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..exercises.ids import IdError, normalise_id
from .engine.environment import GradingError

__all__ = ["Submission", "choose_students", "find_class", "find_submissions", "read_collected"]


@dataclass
class Submission:
    """One student's files: ``files`` maps each notebook name to the file graded."""

    student: str
    folders: list[Path]
    files: dict[str, Path] = field(default_factory=dict)
    source_names: list[str] = field(default_factory=list)

    @cached_property
    def timestamp(self):
        """The newest ``timestamp.txt`` of the student's folders (nbgrader's exchange writes
        one), as nbgrader reads it; None without one."""
        stamps = [s for s in map(_stamp, self.folders) if s is not None]
        return max(stamps, default=None)


def _stamp(folder: Path):
    stamp = folder / "timestamp.txt"
    if not stamp.is_file():
        return None
    from nbgrader.utils import parse_utc

    try:
        return parse_utc(stamp.read_text().strip())
    except (ValueError, OverflowError, OSError):
        return None


def find_submissions(root: Path, submitted: str, assignment: str, notebooks) -> tuple:
    """``({student: Submission}, [what was left out, with why])`` under ``submitted/``.

    Folders are grouped by their normalised id (``S2001`` and ``s2001`` are one student;
    where both hold the same notebook, the newer file is graded). A file that is not one of
    the assignment's notebooks is reported, never graded.
    """
    found: dict[str, Submission] = {}
    left_out = []
    base = root / submitted
    for folder in sorted(base.glob(f"*/{assignment}")) if base.is_dir() else []:
        raw = folder.parent.name
        if raw.startswith("."):
            continue
        try:
            student = normalise_id(raw)
        except IdError as error:
            left_out.append(f"{submitted}/{raw}/: {error}; rename the folder")
            continue
        entry = found.setdefault(student, Submission(student, []))
        entry.folders.append(folder)
        for path in sorted(folder.glob("*.ipynb")):
            name = path.stem
            where = f"{submitted}/{raw}/{assignment}/{path.name}"
            if name not in notebooks:
                left_out.append(
                    f"{where}: not a notebook of {assignment} (its notebooks: "
                    f"{', '.join(notebooks)}); rename the file to the notebook it is, or remove it"
                )
                continue
            old = entry.files.get(name)
            if old is not None:
                newer, older = sorted([old, path], key=lambda p: p.stat().st_mtime)[::-1]
                left_out.append(
                    f"{where}: {student} handed in {name} twice "
                    f"({old.parent.parent.name}/ and {raw}/); graded the newer, {newer}"
                )
                path = newer
            entry.files[name] = path
    return found, left_out


def choose_students(found: dict, students, assignment: str, submitted: str) -> dict:
    """The submissions of the ``students`` named (any form of their ids), in ``found``'s
    order; :class:`GradingError` naming the first who handed nothing in."""
    wanted = set()
    for raw in students:
        try:
            student = normalise_id(raw)
        except IdError as error:
            raise GradingError(f"--student {raw!r}: {error}") from None
        if student not in found:
            close = difflib.get_close_matches(student, list(found), n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise GradingError(
                f"no submission of {assignment!r} from student {raw!r}{hint}; "
                f"{len(found)} students handed it in (see {submitted}/)"
            )
        wanted.add(student)
    return {s: sub for s, sub in found.items() if s in wanted}


def _known(root: Path, source_dir: str) -> list[str]:
    base = root / source_dir
    return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def find_class(root: Path, conf: dict, assignment: str, students=None) -> tuple:
    """``(the assignment's source notebooks, {student: Submission}, [what was left out])``
    for a grading run of ``students`` (None: everyone), with the course's settings ``conf``;
    :class:`GradingError`, in a sentence, for a mistake in the request. Reads folders only.
    """
    folder = root / conf["source"] / assignment
    paths = sorted(folder.glob("*.ipynb")) if folder.is_dir() else []
    if not paths:
        known = _known(root, conf["source"])
        hint = f" (assignments here: {', '.join(known)})" if known else ""
        raise GradingError(
            f"no assignment {assignment!r} in {conf['source']}/{hint}; check the name"
        )
    names = [p.stem for p in paths]
    found, left_out = find_submissions(root, conf["submitted"], assignment, names)
    if not found and not left_out:
        raise GradingError(
            f"nothing collected for {assignment!r}: no folder {conf['submitted']}/*/"
            f"{assignment}/ here. Put the LMS download in downloaded/{assignment}/archive/ and "
            f"run `python3 kit.py collect {assignment}`, or run `nbgrader collect {assignment}`."
        )
    problems = list(left_out)
    empty = [s for s, sub in found.items() if not sub.files]
    for student in empty:
        left_out.append(
            f"{student}: no notebook of {assignment} to grade (see above); not graded, the "
            "grades they had are kept"
        )
        del found[student]
    if not found:
        first = problems[0] if problems else f"the folder of {empty[0]} holds no notebook"
        raise GradingError(
            f"no notebook in {conf['submitted']}/*/{assignment}/ is one of {assignment}'s "
            f"({', '.join(names)}), so there is nothing to grade; the first problem: {first}"
        )
    if students:
        found = choose_students(found, students, assignment, conf["submitted"])
    return paths, found, left_out


def read_collected(root: Path, assignment: str) -> dict:
    """What ``collect`` wrote about each student's files (LMS names and times), if anything."""
    path = root / "downloaded" / assignment / "collected.json"
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("students", {})
    except (OSError, ValueError, AttributeError):
        return {}
