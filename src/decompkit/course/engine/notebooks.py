"""The instructor's notebooks and a submission made ready to run.

:func:`load_source` reads an instructor's notebook once per run: its graded cells and their
points, the answer cells before each test and the variables they bind, and the
``user_expressions`` that read those variables out of a kernel. :func:`prepare_notebook`
turns a submission into the notebook the runner executes: every graded and locked cell
restored from the instructor's notebook (as nbgrader's ``OverwriteCells`` does), nbgrader's
metadata taken from it, outputs cleared. nbgrader's own predicates
(:func:`nbgrader.utils.is_grade`, ``is_solution``, ``is_locked``) say what a cell is once its
metadata is the instructor's; a submitted cell's metadata is read defensively first.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.utils import is_grade, is_locked, is_solution

from .clean_check import answer_names, export_expressions

__all__ = [
    "MAX_FILE_BYTES",
    "Source",
    "is_test",
    "load_source",
    "metadata",
    "prepare_notebook",
    "read_submission",
    "runs",
]

MAX_FILE_BYTES = 50_000_000
_STUB = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*None\s*(#.*)?$")


def metadata(cell) -> dict:
    """A cell's nbgrader metadata (empty when it has none, or none that is a mapping)."""
    found = cell.get("metadata")
    found = found.get("nbgrader") if isinstance(found, dict) else None
    return found if isinstance(found, dict) else {}


def is_test(cell) -> bool:
    """Whether the cell is a code cell nbgrader grades (a test cell)."""
    return cell.get("cell_type") == "code" and bool(is_grade(cell))


def runs(cell) -> bool:
    """Whether grading runs the cell: code, not empty, not tagged ``explore``."""
    tags = (
        cell.get("metadata", {}).get("tags", []) if isinstance(cell.get("metadata"), dict) else []
    )
    return (
        cell.get("cell_type") == "code"
        and bool(str(cell.get("source", "")).strip())
        and "explore" not in tags
    )


@dataclass
class Source:
    """What the runner needs of one instructor's notebook, computed once per run."""

    name: str
    nb: object
    points: dict  # grade_id -> points, in notebook order
    answers_of: dict  # test grade_id -> answer cell grade_ids before it
    names_of: dict  # test grade_id -> answer variable names
    expressions: dict  # name -> user_expression reading it out
    folder: Path | None = None  # the assignment's source folder (its other files are copied)


def load_source(path: Path) -> Source:
    """Read an instructor's notebook and work out its graded cells and answer variables."""
    nb = nbformat.read(path, as_version=4)
    bound = answer_names(nb)
    points, answers_of, names_of, pending = {}, {}, {}, []
    for cell in nb.cells:
        meta = metadata(cell)
        if is_solution(cell) and not is_grade(cell):
            pending.append(meta["grade_id"])
        elif is_test(cell):
            grade_id = meta["grade_id"]
            points[grade_id] = float(meta.get("points") or 0)
            answers_of[grade_id] = list(pending)
            stubs = [n for gid in pending for n in _stub_names(nb, gid)]
            names_of[grade_id] = stubs or [n for gid in pending for n in bound.get(gid, [])]
            pending = []
    return Source(path.stem, nb, points, answers_of, names_of, export_expressions(nb), path.parent)


def _stub_names(nb, grade_id: str) -> list[str]:
    """The names an answer cell's stub sets to None (``p_chain = None``): its answers."""
    for cell in nb.cells:
        if metadata(cell).get("grade_id") == grade_id:
            head = str(cell.source).split("### BEGIN SOLUTION")[0]
            return [m.group(1) for line in head.splitlines() if (m := _STUB.match(line.strip()))]
    return []


# --- a submission, made ready to run -------------------------------------------------------


def prepare_notebook(submitted, source: Source):
    """The notebook to run: the submission with every graded and locked cell restored from
    the instructor's notebook, nbgrader metadata taken from it, outputs cleared.

    Returns the notebook and the grade_ids of graded cells the submission lacks.
    """
    nb = copy.deepcopy(submitted)
    originals = {metadata(c)["grade_id"]: c for c in source.nb.cells if metadata(c).get("grade_id")}
    seen = set()
    for cell in nb.cells:
        if not isinstance(cell.get("metadata"), dict):
            cell["metadata"] = nbformat.NotebookNode()
        meta = metadata(cell)
        grade_id = meta.get("grade_id")
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
        if not meta:
            continue
        original = originals.get(grade_id)
        if grade_id in seen or original is None:
            cell.metadata.pop("nbgrader", None)  # a copy or an id the assignment does not know
            continue
        seen.add(grade_id)
        kept = metadata(original)
        restore = is_locked(original)
        if restore:
            cell["cell_type"] = original.cell_type
            cell["source"] = original.source
            if original.cell_type == "code":
                cell.setdefault("outputs", [])
                cell.setdefault("execution_count", None)
            else:
                cell.pop("outputs", None)
                cell.pop("execution_count", None)
        checksum = meta.get("checksum")
        cell.metadata["nbgrader"] = copy.deepcopy(dict(kept))
        if checksum and not restore:
            cell.metadata["nbgrader"]["checksum"] = checksum
    nb.metadata["kernelspec"] = copy.deepcopy(source.nb.metadata.get("kernelspec", {}))
    missing = [grade_id for grade_id in source.points if grade_id not in seen]
    return nb, missing


def read_submission(path: Path):
    """The submitted notebook, or the reason it cannot be graded."""
    if path.is_symlink():
        return None, "a link, not a file: only the notebook itself is graded"
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return (
                None,
                f"the file is {size / 1e6:.0f} MB, over the {MAX_FILE_BYTES // 10**6} MB limit",
            )
        nb = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
        if not isinstance(nb.get("cells"), list):
            raise ValueError("no list of cells")
        return nb, ""
    except Exception as error:  # noqa: BLE001 - nbformat raises many unrelated types
        words = str(error).splitlines()[0][:160] if str(error) else type(error).__name__
        return None, f"not a readable notebook ({words}); ask the student to download it again"
