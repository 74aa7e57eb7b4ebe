"""Grade one student's notebooks: each in a fresh kernel, its answers judged in this process.

For every notebook of the assignment the runner

1. reads the submitted file (``missing`` / ``unreadable`` when it cannot) and restores every
   graded cell from the instructor's notebook, as nbgrader's ``OverwriteCells`` does;
2. runs it in a new kernel (:mod:`decompkit.course.engine.kernels`) under the student's id, cell by
   cell, each cell bounded by the cell limit and by what is left of the notebook's and the
   student's time; a cell past the cell limit is interrupted (``timeout``), a notebook past its
   own limit stops there (``time_limit``), a kernel that dies ends the notebook
   (``kernel_died``);
3. reads every answer variable out of the kernel as plain data (``user_expressions``, which
   no input transformer sees) and judges the answers with the hidden tests in this process
   (:func:`decompkit.course.engine.clean_check.judge`); an item scores its points only when its test
   passed in the kernel *and* here, so nothing the kernel writes can raise a score.

It returns a :class:`NotebookOutcome` per notebook (scores, items for the grading record, the
autograded notebook as text) and touches no gradebook: the caller writes the results.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import time
from dataclasses import dataclass, field

from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbformat.v4 import new_output
from nbformat.v4.nbjson import writes as writes_json

from ..sanitize import sanitize_notebook
from .kernels import MAX_MESSAGE
from .limits import FAILED, Limits
from .notebooks import (
    Source,
    is_test,
    metadata,
    prepare_notebook,
    read_submission,
    runs,
)
from .scoring import mark_failures, score

__all__ = ["NotebookOutcome", "grade_notebooks"]

_TIMEOUT_NAME = "CellTimeoutError"


@dataclass
class NotebookOutcome:
    """What grading one notebook of one student gave.

    ``scores`` and ``points`` map each graded cell's grade_id to the points earned and the
    points it is worth; ``items`` holds one grading-record entry per graded cell; ``comments``
    maps answer cells to a note for the gradebook; ``autograded`` is the executed notebook.
    """

    notebook: str
    status: str
    message: str = ""
    scores: dict = field(default_factory=dict)
    points: dict = field(default_factory=dict)
    items: dict = field(default_factory=dict)
    comments: dict = field(default_factory=dict)
    events: list = field(default_factory=list)
    autograded: str | None = None
    seconds: float = 0.0
    integrity: str = ""  # the first integrity finding of severity "flag" ("" if none)

    @property
    def flagged(self) -> bool:
        return bool(self.integrity) or self.status in FAILED


# --- running a notebook -------------------------------------------------------------------


class _Client(NotebookClient):
    """nbclient's cell runner with a byte budget per cell (outputs past it are dropped), that
    notes which cells' output ended as it should (the kernel said it was idle)."""

    max_bytes = 100_000

    async def _async_poll_output_msg(self, parent_msg_id, cell, cell_index):
        await super()._async_poll_output_msg(parent_msg_id, cell, cell_index)
        self._complete.add(cell_index)

    def output(self, outs, msg, display_id, cell_index):
        used = self._used.setdefault(cell_index, [0, 0])
        size = len(json.dumps(msg.get("content", {}), default=str))
        if used[0] + size > self.max_bytes:
            used[1] += size
            if msg["msg_type"] == "stream" and used[0] < self.max_bytes:
                room = (self.max_bytes - used[0]) // 2
                text = msg["content"].get("text", "")[:room]
                outs.append(new_output("stream", name=msg["content"].get("name"), text=text))
                used[0] = self.max_bytes
            return None
        used[0] += size
        return super().output(outs, msg, display_id, cell_index)


def _cut_notes(client: _Client) -> list[str]:
    """Note in each cell whose output was cut what was left out; one line for the record
    per such cell."""
    found = []
    for index in sorted(set(client._used) | client._dropped):
        cut = client._used.get(index, [0, 0])[1]
        words = [f"{cut:,} more bytes not stored"] if cut else []
        if index in client._dropped:
            words.append(f"a message over {MAX_MESSAGE // 2**20} MB was dropped unread")
        if words:
            note = f"\n[output cut by the grader: {'; '.join(words)}]\n"
            client.nb.cells[index].outputs.append(new_output("stream", name="stdout", text=note))
            found.append(
                f"{_label(client.nb.cells[index], index)} wrote more output than is kept "
                f"({client.max_bytes // 1000} kB a cell): {'; '.join(words)}"
            )
    return found


async def _probe(kernel, seconds: float) -> bool:
    """Whether the kernel answers an empty request within ``seconds`` (it is idle)."""
    try:
        msg_id = kernel.kc.execute("", silent=True, store_history=False)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            reply = await kernel.kc.get_shell_msg(timeout=max(0.05, end - time.monotonic()))
            if reply["parent_header"].get("msg_id") == msg_id:
                return True
    except Exception:  # noqa: BLE001 - no reply in time, or the kernel is gone
        return False
    return False


_TOO_LARGE = json.dumps({"__unreadable__": "too large to read out, or no reply in time"})


async def _ask(kernel, expressions: dict, seconds: float) -> dict | None:
    """The kernel's ``user_expressions`` reply to ``expressions``; None without one in
    ``seconds`` (a reply over the socket's size bound is dropped before it is read)."""
    try:
        msg_id = kernel.kc.execute(
            "", silent=True, store_history=False, user_expressions=expressions
        )
        end = time.monotonic() + seconds
        while True:
            reply = await kernel.kc.get_shell_msg(timeout=max(0.05, end - time.monotonic()))
            if reply["parent_header"].get("msg_id") == msg_id:
                content = reply.get("content")
                found = content.get("user_expressions") if isinstance(content, dict) else None
                return found if isinstance(found, dict) else {}
    except Exception:  # noqa: BLE001 - a dead or hung kernel, or a reply too large
        return None


async def _read_answers(kernel, expressions: dict) -> dict | None:
    """``{name: encoded value or None}`` read through ``user_expressions``; None when the
    kernel does not answer at all.

    All answers are asked for at once; without a reply (one answer too large for the
    socket, or a kernel that hangs in an answer's ``repr``), each is asked for alone, so an
    answer that cannot be read costs its own item only.
    """
    found, unread = await _ask(kernel, expressions, 10), set()
    if found is None:
        if not kernel.is_alive():
            return None
        found, end = {}, time.monotonic() + 20
        for name, expression in expressions.items():
            one = None
            for _ in range(2):  # a kernel at its process bound may lose the first request
                left = end - time.monotonic()
                if one is None and left > 0:
                    kernel.reconnect()
                    one = await _ask(kernel, {name: expression}, min(3.0, left))
            if one is None:
                unread.add(name)
            else:
                found.update(one)
        if unread == set(expressions):
            return None
    answers = {}
    for name in expressions:
        item = found.get(name) if isinstance(found.get(name), dict) else {}
        if name in unread:
            answers[name] = _TOO_LARGE
            continue
        data = item.get("data") if isinstance(item.get("data"), dict) else {}
        text = data.get("text/plain") if item.get("status") == "ok" else None
        try:
            answers[name] = None if text is None else ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            answers[name] = json.dumps({"__unreadable__": "not a string"})
        if answers[name] is not None and not isinstance(answers[name], str):
            answers[name] = json.dumps({"__unreadable__": "not a string"})
    return answers


@dataclass
class _Run:
    """What running one notebook in a kernel gave."""

    nb: object
    cells: dict  # cell index -> "ok" | "error" | "timeout" | "not_run"
    answers: dict | None
    status: str = "graded"
    message: str = ""
    events: list = field(default_factory=list)


def _label(cell, index: int) -> str:
    grade_id = metadata(cell).get("grade_id")
    return f"cell {index}" + (f" ({grade_id})" if grade_id else "")


async def _run(factory, nb, source: Source, env, files: dict, limits: Limits, deadline, parent):
    """Run ``nb`` cell by cell in a fresh kernel; see the module docstring for the bounds."""
    states = {i: "not_run" for i, c in enumerate(nb.cells) if runs(c)}
    run = _Run(nb, states, None)
    started = time.monotonic()
    limit_end = min(deadline, started + limits.notebook)
    kernel = await factory.start(env, files)
    client = _Client(
        nb,
        km=kernel,
        allow_errors=True,
        interrupt_on_timeout=True,
        error_on_timeout={"ename": _TIMEOUT_NAME, "evalue": "", "traceback": []},
        raise_on_iopub_timeout=False,
        iopub_timeout=2,
        skip_cells_with_tag="explore",
        record_timing=False,
        store_widget_state=False,
    )
    client.kc, client.max_bytes, client._used = kernel.kc, limits.output_bytes, {}
    client._complete, client._dropped = set(), set()
    replies = {}
    client.on_cell_executed = lambda cell, cell_index, execute_reply: replies.__setitem__(
        cell_index, (execute_reply or {}).get("content", {})
    )
    try:
        for index, cell in enumerate(nb.cells):
            if index not in states:
                continue
            left = limit_end - time.monotonic()
            if left <= 0 or (parent is not None and os.getppid() != parent):
                run.status, run.message = _stopped(limits, deadline, limit_end, nb, index)
                break
            budget = min(limits.cell, left)
            client.timeout_func = lambda _cell, budget=budget: budget
            await client.async_execute_cell(cell, index, store_history=True)
            if index not in client._complete and kernel.is_alive():
                # Its output never ended: a message over the size bound cut the output
                # socket off (or output was still coming); read later cells on a new one.
                await kernel.reconnect_output()
                client._dropped.add(index)
            content = replies.get(index, {})
            if content.get("status") != "error":
                states[index] = "ok"
                continue
            if content.get("ename") != _TIMEOUT_NAME:
                states[index] = "error"
                continue
            states[index] = "timeout"
            past_cell_limit = budget >= limits.cell
            words = (
                f"ran past the {limits.cell:g} s cell limit and was interrupted"
                if past_cell_limit
                else "was running when the notebook's time ran out"
            )
            cell.outputs.append(
                new_output("error", ename=_TIMEOUT_NAME, evalue=words, traceback=[words])
            )
            run.events.append(f"{_label(cell, index)}: {words}")
            if not await _probe(kernel, 5.0):
                run.status = "timeout" if past_cell_limit else "time_limit"
                run.message = (
                    f"{_label(cell, index)} {words} and did not stop; the kernel was stopped, "
                    "the cells after it did not run"
                )
                break
            if not past_cell_limit:
                run.status, run.message = _stopped(limits, deadline, limit_end, nb, index)
                break
            if run.status == "graded":
                run.status = "timeout"
                run.message = f"{_label(cell, index)} {words}; its item scores 0"
        if run.status in ("graded", "timeout", "time_limit"):
            run.answers = await _read_answers(kernel, source.expressions)
            if run.answers is None:
                run.status = "failed" if run.status == "graded" else run.status
                run.message = run.message or "the answers could not be read out of the kernel"
    except DeadKernelError:
        index = next((i for i in states if states[i] == "not_run"), None)
        where = _label(nb.cells[index], index) if index is not None else "the last cell"
        run.status = "kernel_died"
        run.message = f"the kernel died in {where}; the notebook scores 0"
        run.answers = None
        if index is not None:
            states[index] = "error"
    finally:
        bounds = _cut_notes(client) + _bounds_reached(kernel, nb)
        run.events += [f"bound reached: {words}" for words in bounds]
        await kernel.kill()
    return run


def _bounds_reached(kernel, nb) -> list[str]:
    """The walls' bounds the notebook ran into: those the kernel is at now, and a memory
    bound that made a cell fail (the allocation failed; the kernel has recovered since)."""
    found = kernel.bounds_reached()
    if kernel.walls is not None and not any("memory" in words for words in found):
        errors = [
            o
            for c in nb.cells
            if c.get("cell_type") == "code"
            for o in c.get("outputs", [])
            if o.get("output_type") == "error"
        ]
        if any(o.get("ename") == "MemoryError" for o in errors):
            limit = kernel.walls.bounds.memory / 2**20
            found.append(f"a cell ran out of memory (its bound is {limit:g} MB)")
    return found


def _stopped(limits: Limits, deadline, limit_end, nb, index) -> tuple[str, str]:
    whose = "the student's" if deadline <= limit_end else "the notebook's"
    limit = limits.student if deadline <= limit_end else limits.notebook
    rest = [c for c in nb.cells[index:] if runs(c)]
    tests = sum(1 for c in rest if is_test(c))
    lost = f"{tests} graded cells among them score 0" if tests else "no graded cell among them"
    return "time_limit", (
        f"stopped at {_label(nb.cells[index], index)}: {whose} {limit:g} s time limit was "
        f"reached; {len(rest)} cells did not run ({lost})"
    )


# --- one student ---------------------------------------------------------------------------


async def _grade_one(
    factory, path, source, student, env, workdir, limits, deadline, exercise, parent
):
    started = time.monotonic()
    outcome = NotebookOutcome(source.name, "graded", points=dict(source.points))
    zero = dict.fromkeys(source.points, 0.0)
    if path is None:
        outcome.status, outcome.scores = "missing", zero
        outcome.message = "not handed in"
        outcome.items = exercise.blank_items(source, "not_run")
        return outcome
    submitted, problem = read_submission(path)
    if submitted is None:
        outcome.status, outcome.message, outcome.scores = "unreadable", problem, zero
        outcome.items = exercise.blank_items(source, "not_run")
        return outcome
    nb, _ = prepare_notebook(submitted, source)
    if time.monotonic() >= deadline:
        outcome.status, outcome.scores = "time_limit", zero
        outcome.message = f"not run: the student's {limits.student:g} s time limit was reached"
        outcome.items = exercise.blank_items(source, "not_run")
        return outcome
    # The submission's other files, then the assignment's own (which win), as nbgrader does.
    files = {}
    for folder in (path.parent, source.folder):
        for extra in sorted(folder.iterdir()) if folder is not None else ():
            if extra.suffix != ".ipynb" and extra.is_file() and not extra.is_symlink():
                files[extra.name] = extra
    try:
        nb_run = await _run(factory, nb, source, env, files, limits, deadline, parent)
    except Exception as error:  # noqa: BLE001 - a kernel that cannot start costs this notebook
        outcome.status, outcome.scores = "failed", zero
        outcome.message = f"the notebook could not be run ({type(error).__name__}: {error})"
        outcome.items = exercise.blank_items(source, "not_run")
        return outcome
    scores, items, comments, verdicts, judged, why = score(source, nb_run, student, exercise)
    if why:
        nb_run.status, nb_run.message = "failed", why
    if nb_run.status == "kernel_died":
        scores = zero
        for item in items.values():
            item["score"] = 0.0
    mark_failures(nb_run.nb, source, verdicts, nb_run.cells, judged)
    outcome.status, outcome.message = nb_run.status, nb_run.message
    outcome.scores, outcome.items, outcome.comments = scores, items, comments
    outcome.events = nb_run.events
    bounds = [event for event in nb_run.events if event.startswith("bound reached")]
    outcome.integrity = bounds[0] if bounds else outcome.integrity
    # Valid by construction: no schema check. Safe to open in formgrader or feedback.
    outcome.autograded = writes_json(sanitize_notebook(nb_run.nb))
    outcome.seconds = time.monotonic() - started
    return outcome


def grade_notebooks(
    factory, files, sources, student, env, workdir, limits, views, *, after=None, parent=None
):
    """Grade one student: ``files`` maps each notebook name to its path (None: missing).

    ``views`` maps each notebook to its :class:`decompkit.course.engine.views.ExerciseView`;
    ``after(outcome)``, when given, runs after each notebook and returns problems to report
    with it (the grader's check of the kit's files); ``parent`` is the pid of the process
    that waits for the result (grading stops if it goes away). Returns one
    :class:`NotebookOutcome` per notebook of ``sources``, in order.
    """
    deadline = time.monotonic() + limits.student

    async def every():
        found = []
        for name, source in sources.items():
            outcome = await _grade_one(
                factory,
                files.get(name),
                source,
                student,
                env,
                workdir,
                limits,
                deadline,
                views[name],
                parent,
            )
            for problem in after(outcome) if after is not None else ():
                outcome.events.append(problem)
                outcome.integrity = outcome.integrity or problem
            found.append(outcome)
        return found

    return asyncio.run(every())
