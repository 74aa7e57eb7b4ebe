"""What both hub tests do with a course's notebooks: the solution's answers, a released
notebook with some of them filled in, and a server answer that must be a success."""

from __future__ import annotations

import nbformat

ASSIGNMENT = "decomp"
NOTEBOOK = "01-chain-reliability"


def solution_cells(repo) -> dict[str, str]:
    """``{grade_id: source}`` of the answer cells of the instructor's notebook."""
    source = nbformat.read(repo / "solutions" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    return {
        cell.metadata["nbgrader"]["grade_id"]: cell.source
        for cell in source.cells
        if cell.metadata.get("nbgrader", {}).get("solution")
    }


def answered(model: dict, answers: dict[str, str]) -> dict:
    """The notebook ``model`` (contents API JSON) with the answer cells in ``answers`` set."""
    nb = nbformat.from_dict(model["content"])
    changed = 0
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
            changed += 1
    assert changed == len(answers), "an answer cell of the solution is missing in the release"
    return {"type": "notebook", "format": "json", "content": nb}


def ok(answer) -> dict:
    """``answer``, once it is a JSON object that does not report a failure."""
    assert isinstance(answer, dict) and answer.get("success", True), answer
    return answer
