"""nbgrader preprocessors the course configuration adds to autograding (nbgrader_config.py).

``ExecuteAsStudent`` runs a submission in a kernel whose environment names the student of the
submission's folder (``DECOMPKIT_STUDENT``), so ``decompkit.exercises.params`` draws that
student's numbers in the hidden tests, whatever id a cell typed; after the last cell it reads
every answer variable out of the kernel as plain data. ``CleanCheck`` then judges those answers
with the instructor's hidden tests in the grader's own process
(:mod:`decompkit.course.engine.clean_check`) and fails every test cell whose verdict there is not a
pass. ``CapOutputBytes`` bounds what a cell may store in the autograded notebook: nbgrader's
own ``LimitOutput`` counts lines, so a single 50 MB line would be kept whole.
``Sanitize`` (last) makes the stored notebook safe to open in formgrader and feedback
(:func:`decompkit.course.sanitize.sanitize_notebook`, which the kit's grader calls too).
``GradingLimits`` holds the time a notebook and a student may take in all
(``c.GradingLimits.notebook_time_limit``, ``student_time_limit``): ``kit.py grade`` applies
both; under ``nbgrader autograde``, ``ExecuteAsStudent`` applies the notebook's.
"""

from __future__ import annotations

import ast
import json
import time
from pathlib import Path

import nbformat
from nbclient.util import run_sync
from nbformat.v4 import new_output
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Bool, Float, Integer
from traitlets.config import Configurable

from ..exercises.params import HUB_VARIABLE
from .engine.clean_check import export_expressions, judge
from .engine.environment import kernel_environment
from .sanitize import sanitize_notebook

_HUB_PREFIX = HUB_VARIABLE.split("_")[0] + "_"  # every JUPYTERHUB_* variable

__all__ = [
    "CapOutputBytes",
    "CleanCheck",
    "ExecuteAsStudent",
    "GradingLimits",
    "Sanitize",
]

#: Where ``ExecuteAsStudent`` leaves the answers it read for ``CleanCheck``.
ANSWERS = "decompkit_answers"


def _source_notebook(config, resources) -> Path | None:
    """The instructor's notebook of the submission being graded (None when not found)."""
    info = resources.get("nbgrader", {})
    if not {"assignment", "notebook"} <= set(info):
        return None
    coursedir = CourseDirectory(config=config)
    db_url = str(info.get("db_url", ""))
    # The gradebook sits in the course folder: the kit's grader runs nbgrader in a scratch copy.
    root = Path(db_url[len("sqlite:///") :]).parent if db_url.startswith("sqlite:///") else None
    root = root or Path(coursedir.root)
    path = root / coursedir.source_directory / info["assignment"] / f"{info['notebook']}.ipynb"
    return path if path.is_file() else None


class GradingLimits(Configurable):
    """How long grading may take beyond the cell limit (``c.Execute.timeout``), in seconds, and
    what each grading kernel may use inside its walls (``kit.py grade``'s sandbox).

    A notebook whose cells together run longer than ``notebook_time_limit`` stops there (the
    cells after it do not run and their items score 0); a student whose notebooks together run
    longer than ``student_time_limit`` gets no more of them run. Each cell is interrupted at
    the smallest of the three limits left, so a submission of many slow cells cannot hold a
    batch up.
    """

    notebook_time_limit = Float(180.0, help="seconds one notebook may run in all").tag(config=True)
    kernel_memory_mb = Integer(2048, help="address space of each process of a grading kernel").tag(
        config=True
    )
    kernel_processes = Integer(64, help="processes and threads of a grading kernel").tag(
        config=True
    )
    kernel_scratch_mb = Integer(256, help="files a grading kernel may write, in MB").tag(
        config=True
    )
    student_time_limit = Float(600.0, help="seconds one student's notebooks may run").tag(
        config=True
    )


class ExecuteAsStudent(Execute):
    """nbgrader's ``Execute``, with ``DECOMPKIT_STUDENT`` set to the submission's student,
    and the notebook's time limit of :class:`GradingLimits`.

    Configured like ``Execute`` (``c.Execute.timeout`` and friends apply to it).
    """

    _deadline = None

    def preprocess(self, nb, resources=None, km=None):
        limit = GradingLimits(config=self.config).notebook_time_limit
        self._deadline = time.monotonic() + limit
        self.timeout_func = self._time_left
        return super().preprocess(nb, resources, km=km)

    def _time_left(self, cell) -> int:
        left = (self._deadline or float("inf")) - time.monotonic()
        return max(1, int(min(self.timeout or left, left)))

    async def async_start_new_kernel(self, **kwargs):
        student = (self.resources or {}).get("nbgrader", {}).get("student")
        if student is not None:
            kwargs["env"] = kernel_environment(student, kwargs.get("env"))
        await super().async_start_new_kernel(**kwargs)

    # nbclient binds the synchronous twin to the base class's coroutine: rebind it here.
    start_new_kernel = run_sync(async_start_new_kernel)

    def preprocess_cell(self, cell, resources, index):
        if (
            self._deadline is not None
            and time.monotonic() > self._deadline
            and cell.cell_type == "code"
        ):
            why = "not run: the notebook's time limit (GradingLimits.notebook_time_limit) passed"
            cell.outputs = [new_output("error", ename="NotRun", evalue=why, traceback=[why])]
            result = cell, resources
        else:
            result = super().preprocess_cell(cell, resources, index)
        if index == len(self.nb.cells) - 1:
            resources[ANSWERS] = self._read_answers(resources)
        return result

    def _read_answers(self, resources) -> dict | None:
        """``{name: encoded value or None}`` of every answer variable, read through the
        kernel's ``user_expressions`` (evaluated without the input transformers a cell may
        have installed); ``None`` when the source notebook or the kernel cannot be reached."""
        source = _source_notebook(self.config, resources)
        if source is None or self.kc is None:
            return None
        expressions = export_expressions(nbformat.read(source, as_version=4))
        try:
            msg_id = self.kc.execute(
                "", silent=True, store_history=False, user_expressions=expressions
            )
            reply = self.wait_for_reply(msg_id)
        except Exception:  # noqa: BLE001 - a dead or hung kernel: nothing can be read
            return None
        found = (reply or {}).get("content", {}).get("user_expressions", {})
        answers = {}
        for name in expressions:
            item = found.get(name, {})
            text = item.get("data", {}).get("text/plain") if item.get("status") == "ok" else None
            try:
                answers[name] = None if text is None else ast.literal_eval(text)
            except (ValueError, SyntaxError):
                answers[name] = json.dumps({"__unreadable__": "not a string"})
        return answers


class CleanCheck(NbGraderPreprocessor):
    """Fail every test cell whose hidden test does not pass on the answers read out of the
    kernel, run in the grader's own process (see :mod:`decompkit.course.engine.clean_check`)."""

    enabled = Bool(True, help="judge the answers outside the student's kernel").tag(config=True)

    def preprocess(self, nb, resources):
        if not self.enabled:
            return nb, resources
        source = _source_notebook(self.config, resources)
        if source is None:
            self.log.warning("no source notebook to judge %s against", resources.get("nbgrader"))
            return nb, resources
        answers = resources.get(ANSWERS)
        student = resources.get("nbgrader", {}).get("student")
        verdicts = {} if answers is None else judge(source, student, answers)
        why = (
            "the answers could not be read out of the kernel"
            if answers is None
            else "the hidden test fails on these answers when run outside the notebook's kernel"
        )
        for cell in nb.cells:
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if not cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
                continue
            failed = any(o.get("output_type") == "error" for o in cell.get("outputs", []))
            if not verdicts.get(grade_id, False) and not failed and cell.cell_type == "code":
                cell.outputs.append(
                    new_output("error", ename="CleanCheckFailed", evalue=why, traceback=[why])
                )
        return nb, resources


class CapOutputBytes(NbGraderPreprocessor):
    """Keep at most ``max_bytes`` of output per cell; say what was cut."""

    max_bytes = Integer(100_000, help="bytes of output kept per code cell").tag(config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type != "code" or not cell.get("outputs"):
            return cell, resources
        budget, kept, cut = self.max_bytes, [], 0
        for output in cell.outputs:
            size = len(json.dumps(output))
            if size <= budget:
                kept.append(output)
                budget -= size
            elif output.output_type == "stream" and budget > 0:
                head = output.text[: budget // 2]  # JSON escaping can double a character
                cut += len(output.text) - len(head)
                kept.append(new_output("stream", name=output.name, text=head))
                budget = 0
            else:
                cut += size
                budget = 0
        if cut:
            note = f"\n[output cut by the grader: {cut:,} more bytes not stored]\n"
            kept.append(new_output("stream", name="stdout", text=note))
        cell.outputs = kept
        return cell, resources


class Sanitize(NbGraderPreprocessor):
    """Make the autograded notebook safe to render: no script from the submission reaches
    formgrader or a feedback page. Listed last, once every score has been read."""

    enabled = Bool(True, help="sanitise markdown, outputs and metadata before storing").tag(
        config=True
    )

    def preprocess(self, nb, resources):
        if self.enabled:
            nb = sanitize_notebook(nb)
        return nb, resources
