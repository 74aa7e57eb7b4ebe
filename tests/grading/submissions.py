"""Build submissions from the released notebooks: answers filled in, cells added or broken."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions" / "decomp"
RELEASED = ROOT / "notebooks" / "decomp"
NOTEBOOKS = sorted(p.stem for p in RELEASED.glob("*.ipynb"))

_SOLUTION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)


def _grade_id(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def answer_key(notebook: str) -> dict[str, str]:
    """The solution code of every answer cell, by grade_id."""
    nb = nbformat.read(SOLUTIONS / f"{notebook}.ipynb", as_version=4)
    key = {}
    for cell in nb.cells:
        found = _SOLUTION.findall(cell.source)
        if found and cell.metadata.get("nbgrader", {}).get("solution"):
            key[_grade_id(cell)] = "".join(found)
    return key


def points(notebook: str) -> dict[str, float]:
    """Points of every graded cell, by grade_id, from the source notebook."""
    nb = nbformat.read(SOLUTIONS / f"{notebook}.ipynb", as_version=4)
    return {
        _grade_id(c): float(c.metadata["nbgrader"]["points"])
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade")
    }


def submission(notebook: str, answers: dict[str, str] | None = None, *, fill=True):
    """The released notebook with its answer cells filled in.

    ``fill`` puts the solution into every answer cell first; ``answers`` then replaces the
    code of the given answer cells (by grade_id).
    """
    nb = nbformat.read(RELEASED / f"{notebook}.ipynb", as_version=4)
    code = (answer_key(notebook) if fill else {}) | dict(answers or {})
    for cell in nb.cells:
        if _grade_id(cell) in code:
            cell.source = f"{cell.source}\n{code[_grade_id(cell)]}"
    return nb


def insert_after(nb, grade_id: str, source: str):
    """Insert a new code cell (a student's own) after the cell with ``grade_id``."""
    index = next(i for i, c in enumerate(nb.cells) if _grade_id(c) == grade_id)
    nb.cells.insert(index + 1, nbformat.v4.new_code_cell(source))
    return nb


def remove_cell(nb, grade_id: str):
    nb.cells = [c for c in nb.cells if _grade_id(c) != grade_id]
    return nb


def replace_source(nb, grade_id: str, source: str):
    for cell in nb.cells:
        if _grade_id(cell) == grade_id:
            cell.source = source
    return nb
