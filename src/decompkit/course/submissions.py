"""What was collected: each student's notebooks of an assignment under ``submitted/``.

Folders are grouped by the student's normalised id (``S2001`` and ``s2001`` are one student);
a file that is not one of the assignment's notebooks is reported, never graded. What
``collect`` wrote about each file (the LMS's name and time) is read back from
``downloaded/<assignment>/collected.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..exercises.ids import IdError, normalise_id

__all__ = ["Submission", "find_submissions", "read_collected"]


@dataclass
class Submission:
    """One student's files: ``files`` maps each notebook name to the file graded."""

    student: str
    folders: list[Path]
    files: dict[str, Path] = field(default_factory=dict)
    timestamp: object = None
    source_names: list[str] = field(default_factory=list)


def _stamp(folder: Path):
    from nbgrader.utils import parse_utc

    stamp = folder / "timestamp.txt"
    try:
        return parse_utc(stamp.read_text().strip()) if stamp.is_file() else None
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
        stamp = _stamp(folder)
        if stamp is not None and (entry.timestamp is None or stamp > entry.timestamp):
            entry.timestamp = stamp
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


def read_collected(root: Path, assignment: str) -> dict:
    """What ``collect`` wrote about each student's files (LMS names and times), if anything."""
    path = root / "downloaded" / assignment / "collected.json"
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("students", {})
    except (OSError, ValueError, AttributeError):
        return {}
