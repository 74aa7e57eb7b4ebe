"""Writing the grading record: one JSON file per student, the grader's account of what it judged.

``records/<assignment>/<student>.json`` in the course folder holds, for every notebook of
the assignment, its status, the reason when it could not be graded in full, the integrity
findings, and for every graded cell the item it grades, the points, a status, the answer read
out of the kernel (never the expected value) and, where the exercise module can tell, the
hint and the named mistake. Feedback, export and the class report read these files (and the
gradebook) instead of running a student's code again; the layout is schema 1 of the
interface the grader shares with them. Each file is written atomically: a temporary file in
the same folder, then ``os.replace``.

:func:`exercise_side` is the one place the grader looks into the exercise modules (which item
a graded cell asks for, its label and variable names, the hint for a wrong answer).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import tempfile
from pathlib import Path

from ..exercises.params import EXERCISES, GRADER_VARIABLE, LECTURE, params

__all__ = [
    "GRADER_VARIABLE",
    "LECTURE",
    "SCHEMA",
    "ExerciseView",
    "build",
    "exercise_side",
    "record_path",
    "write_record",
]

SCHEMA = 1


def exercise_side():
    """``({notebook file: exercise}, params)``: the exercise contract of each notebook
    (:class:`decompkit.exercises.Exercise`: ``name``, ``file``, ``grade_cells``, ``items``,
    ``diagnose``) and the function that draws a student's parameters."""
    return {exercise.file: exercise for exercise in EXERCISES.values()}, params


class ExerciseView:
    """What the record needs to know of one notebook's exercise (None: not an exercise)."""

    def __init__(self, exercise, params):
        self.exercise, self.params = exercise, params
        items = getattr(exercise, "items", ()) or ()
        self.by_cell = {getattr(item, "grade_cell", None): item for item in items}
        self.cells = dict(getattr(exercise, "grade_cells", {}) or {})

    def item(self, grade_id: str) -> dict:
        """``item``, ``label`` and ``names`` of the graded cell ``grade_id``."""
        found = self.by_cell.get(grade_id)
        if found is not None:
            return {"item": found.key, "label": found.label, "names": list(found.names)}
        return {"item": self.cells.get(grade_id, grade_id), "label": grade_id, "names": []}

    def refine(self, item: dict, student: str, answer) -> None:
        """Fill status, hint and mistake of a wrong answer from the exercise's diagnosis."""
        diagnose = getattr(self.exercise, "diagnose", None)
        if diagnose is None:
            return
        try:
            P = self.params(self.exercise.name, student)
            found = diagnose(item["item"], answer, P)
        except Exception:  # noqa: BLE001 - a hint is a courtesy; the score stands without it
            return
        if getattr(found, "status", "ok") != "ok":
            item["status"] = found.status
        item["message"] = getattr(found, "message", "") or ""
        item["mistake"] = getattr(found, "mistake", None)
        if getattr(found, "matches", None):
            item["matches"] = found.matches

    def blank_items(self, source, status: str) -> dict:
        """Every graded cell of ``source`` at 0 points with ``status`` (nothing ran)."""
        return {
            grade_id: {
                **self.item(grade_id),
                "score": 0.0,
                "max_score": points,
                "status": status,
                "answer": None,
                "message": "",
                "mistake": None,
                "matches": None,
            }
            for grade_id, points in source.points.items()
        }


def views(notebooks) -> dict:
    """An :class:`ExerciseView` for each notebook name (those the exercises do not know
    get a view that knows nothing)."""
    try:
        registry, params = exercise_side()
    except Exception:  # noqa: BLE001 - a course without the kit's exercises still grades
        registry, params = {}, None
    return {name: ExerciseView(registry.get(name), params) for name in notebooks}


def record_path(root: Path, assignment: str, student: str) -> Path:
    return Path(root) / "records" / assignment / f"{student}.json"


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def build(assignment, student, outcomes, flags, *, submitted_at=None, source_names=(), walls=None):
    """The record of one student (see the module docstring and docs for the fields);
    ``walls`` are the kernels' walls (:class:`decompkit.course.engine.sandbox.Walls`), None when
    graded without."""
    notebooks = {}
    for outcome in outcomes:
        found = [flag_line(f) for f in flags.get(outcome.notebook, []) if _is_flag(f)]
        events = list(outcome.events)
        notebooks[outcome.notebook] = {
            "status": outcome.status,
            "message": outcome.message,
            "flagged": bool(found) or outcome.status in _FLAGGED or bool(outcome.integrity),
            "flags": found + [e for e in events if e not in found],
            "score": float(sum(outcome.scores.values())),
            "max_score": float(sum(outcome.points.values())),
            "items": outcome.items,
        }
    return {
        "schema": SCHEMA,
        "assignment": assignment,
        "student": student,
        "graded_at": _now(),
        "submitted_at": submitted_at,
        "source_names": list(source_names),
        "sandbox": None
        if walls is None
        else {
            "memory_mb": walls.bounds.memory / 2**20,
            "processes": walls.bounds.processes,
            "scratch_mb": walls.bounds.scratch / 2**20,
        },
        "notebooks": notebooks,
    }


_FLAGGED = ("unreadable", "timeout", "kernel_died", "time_limit", "failed")


def _is_flag(found) -> bool:
    return isinstance(found, str) or getattr(found, "severity", "") == "flag"


def flag_line(found) -> str:
    """An integrity finding as the record lists it: ``cell 12, line 3: reason (construct)``.

    Examples
    --------
    >>> from decompkit.course.integrity import Flag
    >>> flag_line(Flag("a.ipynb", 12, None, 3, "answer-key", "chain.key(P)", "flag", "calls x"))
    'cell 12, line 3: calls x (chain.key(P))'
    """
    if isinstance(found, str):
        return found
    where = "" if found.cell is None else f"cell {found.cell}"
    where += "" if found.line is None or found.cell is None else f", line {found.line}"
    return f"{where}: {found.reason} ({found.construct})" if where else found.reason


def write_record(path: Path, record: dict) -> Path:
    """Write ``record`` as ``path`` atomically; returns the temporary file to commit.

    The caller calls :func:`commit` with the returned path once the gradebook transaction of
    the same student has committed, so the two change together.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(record, out, indent=1, ensure_ascii=False, allow_nan=False, default=str)
        out.write("\n")
        out.flush()
        os.fsync(out.fileno())
    return Path(temporary)


def commit(temporary: Path, path: Path) -> None:
    os.replace(temporary, path)


def clean_temporaries(folder: Path) -> None:
    """Remove temporary files a run that was killed left behind."""
    if folder.is_dir():
        for stale in folder.glob(".*.tmp"):
            try:
                stale.unlink()
            except OSError:
                pass
