"""Grade a notebook in this process, as nbgrader would score it, for many ids at little cost.

nbgrader starts a kernel per notebook (about a second each); checking 200 variants of six
notebooks that way would take many minutes. :func:`decompkit.course.engine.clean_check.run_cells`
runs the code cells with ``exec`` in one namespace instead (the grader's clean check uses it
too); here the released notebooks get their hidden tests back from the source, as nbgrader
restores them.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import nbformat

from decompkit.course.engine.clean_check import run_cells

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions" / "decomp"
RELEASED = ROOT / "notebooks" / "decomp"


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def load(name: str, *, released: bool = False):
    """The cells of a notebook: the solution, or the released one with the hidden tests put
    back (nbgrader restores every graded cell from the source before it runs a submission)."""
    source = nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)
    if not released:
        return source.cells
    tests = {_meta(c)["grade_id"]: c for c in source.cells if _meta(c).get("grade")}
    cells = nbformat.read(RELEASED / f"{name}.ipynb", as_version=4).cells
    return [tests.get(_meta(c).get("grade_id"), c) for c in cells]


def run(cells, student: str | None, *, typed: dict | None = None):
    """Points per graded cell and the values each answer cell bound, grading as ``student``.

    ``typed`` replaces what answer cells compute by given values (``{grade_id: {name: value}}``):
    a student who typed in numbers worked out elsewhere, e.g. for a classmate's id.
    """
    passed, bound = run_cells(cells, student, answers=typed)
    points = {
        _meta(c)["grade_id"]: float(_meta(c)["points"]) for c in cells if _meta(c).get("grade")
    }
    return {k: points[k] if ok else 0.0 for k, ok in passed.items()}, bound
