"""Judge a submission's answers where the submission's code never ran.

nbgrader runs a notebook's hidden tests in the student's own kernel, after the student's cells:
a cell that patches a module the tests import (``decompkit.grading.close = ...``) or registers
an input transformer (every later cell becomes ``pass``) can make wrong answers pass. The clean
check closes that door. After the notebook has run, the grader reads each answer variable out
of the kernel as plain data (:mod:`decompkit.course.engine.codec`, through the kernel's
``user_expressions``, which no input transformer sees); then, in the grader's own process, it
runs the *instructor's* notebook with those values in place of the answer cells, and the
hidden tests judge them there (:func:`judge`). A test scores only when it passes in both places.

What the student's code can still do is change what a variable holds, which is answering; a
kernel hook that rewrites the exported values would have to produce the right ones. The static
scan (:mod:`decompkit.course.integrity`) still flags such hooks for the instructor.
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures
import contextlib
import functools
import inspect
import io
import os
from collections.abc import Mapping
from pathlib import Path

import nbformat

from ...exercises.params import GRADER_VARIABLE
from .codec import decode

__all__ = ["answer_names", "export_expressions", "judge", "run_cells"]


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _is_answer(cell) -> bool:
    return bool(_meta(cell).get("solution")) and not _meta(cell).get("grade")


def _bound_names(source: str) -> list[str]:
    """Names a cell binds at its top level, in order (assignments, defs, imports, for)."""
    try:
        tree = ast.parse(_code(source))
    except SyntaxError:
        return []
    names: list[str] = []
    for node in tree.body:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.append(sub.id)
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.append(sub.name)
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                names += [(a.asname or a.name).split(".")[0] for a in sub.names]
    return list(dict.fromkeys(names))


def answer_names(source_nb) -> dict[str, list[str]]:
    """``{answer cell grade_id: [names it binds]}`` of the instructor's notebook.

    Examples
    --------
    >>> import nbformat
    >>> cell = nbformat.v4.new_code_cell("x = None\\n### BEGIN SOLUTION\\nx = 2\\n### END SOLUTION")
    >>> cell.metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": "x_answer"}
    >>> answer_names(nbformat.v4.new_notebook(cells=[cell]))
    {'x_answer': ['x']}
    """
    return {
        _meta(c)["grade_id"]: _bound_names(c.source)
        for c in source_nb.cells
        if c.cell_type == "code" and _is_answer(c)
    }


def export_expressions(source_nb) -> dict[str, str]:
    """The ``user_expressions`` that read every answer variable out of a student's kernel."""
    names = {name for bound in answer_names(source_nb).values() for name in bound}
    return {
        name: f"__import__('decompkit.course.engine.codec', fromlist=['encode']).encode({name})"
        for name in sorted(names)
    }


def _code(source: str) -> str:
    # IPython magics (%matplotlib inline) mean nothing outside a kernel.
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("%"))


@functools.lru_cache(maxsize=512)
def _draws_only(source: str) -> bool:
    """A cell that only calls a plot function binds no name a later cell could need."""
    try:
        body = ast.parse(_code(source)).body
    except SyntaxError:
        return False
    return (
        len(body) == 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Call)
        and isinstance(body[0].value.func, ast.Name)
        and body[0].value.func.id.startswith("plot_")
    )


@functools.lru_cache(maxsize=512)
def _compile(code: str, name: str):
    # A notebook's cells are run for many ids (grading, the variant checks): compiled once.
    return compile(code, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def _execute(code: str, name: str, namespace: dict) -> None:
    """``exec`` that also takes a cell's top-level ``await`` (the lab's cells use it)."""
    compiled = _compile(code, name)
    if not compiled.co_flags & inspect.CO_COROUTINE:
        exec(compiled, namespace)
        return
    coroutine = eval(compiled, namespace)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(coroutine)
        return
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # a loop runs here: use a thread
        pool.submit(asyncio.run, coroutine).result()


@contextlib.contextmanager
def _as_student(student: str | None):
    saved = os.environ.get(GRADER_VARIABLE)
    if student is None:
        os.environ.pop(GRADER_VARIABLE, None)
    else:
        os.environ[GRADER_VARIABLE] = student
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(GRADER_VARIABLE, None)
        else:
            os.environ[GRADER_VARIABLE] = saved


def run_cells(cells, student: str | None, *, answers: Mapping | None = None):
    """Run a notebook's cells in this process, as nbgrader would score them.

    Parameters
    ----------
    cells : list of notebook cells
        Usually the instructor's notebook (hidden tests included).
    student : str or None
        The id the hidden tests draw their numbers for (``DECOMPKIT_STUDENT``).
    answers : mapping, optional
        ``{answer cell grade_id: {name: value}}``: these values take the place of what the
        answer cells compute (a submission's answers, read out of its kernel).

    Returns
    -------
    (dict, dict)
        ``{grade_id: passed}`` for every graded cell (a test passes when it raises nothing),
        and the names each answer cell bound (``{grade_id: {name: value}}``).

    Notes
    -----
    Cells tagged ``explore`` and cells that only draw a figure are skipped; an error in a
    cell that is not a test does not stop the run (nbgrader runs on after errors too).
    """
    namespace: dict = {"__name__": "__main__"}
    verdicts, bound = {}, {}
    sink = io.StringIO()
    with _as_student(student), contextlib.redirect_stdout(sink):
        for cell in cells:
            if cell.cell_type != "code" or "explore" in cell.metadata.get("tags", []):
                continue
            if not _meta(cell) and _draws_only(cell.source):
                continue
            grade_id = _meta(cell).get("grade_id")
            if answers is not None and _is_answer(cell):
                namespace.update(answers.get(grade_id, {}))
                continue
            before = dict(namespace)
            try:
                _execute(_code(cell.source), f"<{grade_id or 'cell'}>", namespace)
                passed = True
            except Exception:  # noqa: BLE001 - any error fails a test, as in nbgrader
                passed = False
            if _meta(cell).get("grade"):
                verdicts[grade_id] = passed
            elif _is_answer(cell):
                bound[grade_id] = {
                    k: v for k, v in namespace.items() if k not in before or before[k] is not v
                }
            sink.seek(0)
            sink.truncate()
    return verdicts, bound


def judge(source, student: str | None, exported: Mapping[str, str | None]) -> dict[str, bool]:
    """Which graded cells pass when the hidden tests see only the exported answers.

    Parameters
    ----------
    source : path or notebook
        The instructor's notebook (solutions and hidden tests).
    student : str or None
        The submission's student id.
    exported : mapping
        ``{name: encode(value)}`` as read out of the kernel (:mod:`decompkit.course.engine.codec`);
        ``None`` for a name the kernel did not define.

    Returns
    -------
    dict
        ``{grade_id: passed}`` for every graded cell.

    Examples
    --------
    >>> import nbformat
    >>> from decompkit.course.engine.codec import encode
    >>> answer = nbformat.v4.new_code_cell("x = None")
    >>> answer.metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": "x_answer"}
    >>> test = nbformat.v4.new_code_cell("assert x == 2")
    >>> test.metadata["nbgrader"] = {"grade": True, "grade_id": "x_test", "points": 1}
    >>> nb = nbformat.v4.new_notebook(cells=[answer, test])
    >>> judge(nb, None, {"x": encode(2)}), judge(nb, None, {"x": encode(3)})
    ({'x_test': True}, {'x_test': False})
    """
    nb = source if hasattr(source, "cells") else nbformat.read(Path(source), as_version=4)
    values = {name: decode(text) for name, text in exported.items() if text is not None}
    answers = {
        grade_id: {n: values[n] for n in names if n in values}
        for grade_id, names in answer_names(nb).items()
    }
    verdicts, _ = run_cells(nb.cells, student, answers=answers)
    return verdicts
