"""Grade a notebook in this process, as nbgrader would score it, for many ids at little cost.

nbgrader starts a kernel per notebook (about a second each); checking 200 variants of five
notebooks that way would take many minutes. Here the code cells run with ``exec`` in one
namespace (cells that only draw a figure are skipped), the hidden tests come from the source
notebook (as nbgrader restores them), and a test cell scores its points when it raises
nothing - nbgrader's rule. The grader's id is set
the way the kit's grader sets it: ``DECOMPKIT_STUDENT`` in the environment.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
from pathlib import Path

import matplotlib
import nbformat

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions" / "decomp"
RELEASED = ROOT / "notebooks" / "decomp"


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _draws_only(cell) -> bool:
    """A cell that only calls a plot function binds no name a later cell could need."""
    try:
        body = ast.parse(_code(cell)).body
    except SyntaxError:
        return False
    return (
        len(body) == 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Call)
        and isinstance(body[0].value.func, ast.Name)
        and body[0].value.func.id.startswith("plot_")
    )


def _code(cell) -> str:
    # IPython magics (%matplotlib inline) mean nothing outside a kernel.
    return "\n".join(line for line in cell.source.splitlines() if not line.startswith("%"))


@contextlib.contextmanager
def graded_as(student: str | None):
    """The environment the grader gives a submission's kernel (``None``: no id at all)."""
    saved = os.environ.get("DECOMPKIT_STUDENT")
    if student is None:
        os.environ.pop("DECOMPKIT_STUDENT", None)
    else:
        os.environ["DECOMPKIT_STUDENT"] = student
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("DECOMPKIT_STUDENT", None)
        else:
            os.environ["DECOMPKIT_STUDENT"] = saved


def load(name: str, *, released: bool = False):
    """The cells of a notebook: the solution, or the released one with the hidden tests put
    back (nbgrader restores every graded cell from the source before it runs a submission)."""
    source = nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)
    if not released:
        return source.cells
    tests = {_meta(c)["grade_id"]: c for c in source.cells if _meta(c).get("grade")}
    cells = nbformat.read(RELEASED / f"{name}.ipynb", as_version=4).cells
    return [tests.get(_meta(c).get("grade_id"), c) for c in cells]


def _is_answer(cell) -> bool:
    return bool(_meta(cell).get("solution")) and not _meta(cell).get("grade")


def run(cells, student: str | None, *, typed: dict | None = None):
    """Run the notebook as the grader would for ``student``; return (points per graded cell,
    the values each answer cell bound).

    ``typed`` replaces what answer cells compute by given values (``{grade_id: {name: value}}``):
    a student who typed in numbers worked out elsewhere, e.g. for a classmate's id.
    """
    namespace: dict = {"__name__": "__main__"}
    earned, bound = {}, {}
    sink = io.StringIO()
    with graded_as(student), contextlib.redirect_stdout(sink):
        for cell in cells:
            if cell.cell_type != "code" or "explore" in cell.metadata.get("tags", []):
                continue
            if not _meta(cell) and _draws_only(cell):
                continue  # figures are not graded, and drawing them is most of the cost
            grade_id = _meta(cell).get("grade_id")
            if typed is not None and _is_answer(cell) and grade_id in typed:
                namespace.update(typed[grade_id])
                continue
            before = dict(namespace)
            try:
                exec(compile(_code(cell), "<cell>", "exec"), namespace)
                passed = True
            except Exception:  # noqa: BLE001 - nbgrader runs on after an error; a test scores 0
                passed = False
            if _meta(cell).get("grade"):
                earned[grade_id] = float(_meta(cell)["points"]) if passed else 0.0
            elif _is_answer(cell):
                bound[grade_id] = {
                    k: v for k, v in namespace.items() if k not in before or before[k] is not v
                }
            sink.seek(0)
            sink.truncate()
    return earned, bound
