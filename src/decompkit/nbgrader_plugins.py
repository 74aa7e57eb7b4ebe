"""nbgrader preprocessors the course configuration adds to autograding (nbgrader_config.py).

``ExecuteAsStudent`` runs a submission in a kernel whose environment names the student of the
submission's folder (``DECOMPKIT_STUDENT``), so ``decompkit.variants.params`` draws that
student's numbers in the hidden tests, whatever id a cell typed. ``CapOutputBytes`` bounds
what a cell may store in the autograded notebook: nbgrader's own ``LimitOutput`` counts lines,
so a single 50 MB line would be kept whole.
"""

from __future__ import annotations

import json
import os

from nbclient.util import run_sync
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Integer

from .variants import GRADER_VARIABLE, HUB_VARIABLE

_HUB_PREFIX = HUB_VARIABLE.split("_")[0] + "_"  # every JUPYTERHUB_* variable

__all__ = ["CapOutputBytes", "ExecuteAsStudent", "kernel_environment"]


def kernel_environment(student, base=None) -> dict:
    """The environment of the kernel that runs ``student``'s submission.

    The student's id comes from nbgrader, which reads it off the submission's folder name.
    Nothing of the grader's own hub session reaches the kernel: not its user name (an
    instructor grading on JupyterHub) and above all not its API token, which the submission's
    code could otherwise read and use.

    Examples
    --------
    >>> base = {"JUPYTERHUB_USER": "teacher", "JUPYTERHUB_API_TOKEN": "secret", "PATH": "/bin"}
    >>> sorted(kernel_environment("s1234", base).items())
    [('DECOMPKIT_STUDENT', 's1234'), ('PATH', '/bin')]
    """
    env = dict(os.environ if base is None else base)
    for name in [name for name in env if name.startswith(_HUB_PREFIX)]:
        del env[name]
    if not isinstance(student, str) or not student.strip():
        raise ValueError(f"student must be a non-empty id, got {student!r}")
    env[GRADER_VARIABLE] = student
    return env


class ExecuteAsStudent(Execute):
    """nbgrader's ``Execute``, with ``DECOMPKIT_STUDENT`` set to the submission's student.

    Configured like ``Execute`` (``c.Execute.timeout`` and friends apply to it).
    """

    async def async_start_new_kernel(self, **kwargs):
        student = (self.resources or {}).get("nbgrader", {}).get("student")
        if student is not None:
            kwargs["env"] = kernel_environment(student, kwargs.get("env"))
        await super().async_start_new_kernel(**kwargs)

    # nbclient binds the synchronous twin to the base class's coroutine: rebind it here.
    start_new_kernel = run_sync(async_start_new_kernel)


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
