"""The self-check: run a notebook in a fresh kernel and report the verdict of every check.

``python -m decompkit.course check NOTEBOOK...`` (``python3 kit.py check``) is what a student
or a script runs before handing in. It first says whose numbers the notebook used (the id
typed into ``STUDENT_ID``, the JupyterHub login, or, loudly, the lecture's numbers when no id
is set, since grading always uses the student's own), then one line per graded item,
``[ok  ] B1 p_prime: on track``, ``[todo] ...: not answered yet`` or ``[FAIL] ...: <hint>``;
the exit status is 1 unless every check is on track.

The kernel runs in strict mode (``DECOMPKIT_STRICT=1``): a check that finds an answer off
raises, so its cell fails as it does under grading, with the check's one line as the error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..exercises.ids import LECTURE
from .arguments import Parser

__all__ = ["Report", "self_check", "numbers_line", "main"]

_MARKS = {"ok": "ok  ", "answered": " ?  ", "unanswered": "todo", "failed": "FAIL"}
_PROBE_MARK = "DECOMPKIT-NUMBERS "
#: The last cell the self-check adds: which id the notebook's numbers came from.
_PROBE = f"""
import json as _json_, os as _os_
try:
    from decompkit.exercises.params import GRADER_VARIABLE as _g_, HUB_VARIABLE as _h_
    from decompkit.exercises.params import student_id as _student_id_
    _typed_ = globals().get("STUDENT_ID")
    _who_ = _student_id_(_typed_)
    _from_ = ("grader" if _os_.environ.get(_g_, "").strip() else
              "hub" if _os_.environ.get(_h_, "").strip() else "typed" if _who_ else None)
    print({_PROBE_MARK!r} + _json_.dumps({{"id": _who_, "source": _from_}}))
except Exception as _error_:
    print({_PROBE_MARK!r} + _json_.dumps({{"error": str(_error_)}}))
"""


@dataclass
class Report:
    """What the self-check found in one notebook.

    Attributes
    ----------
    verdicts : dict
        ``{grade_id: (status, message)}``, status ``"ok"``, ``"answered"`` (a check of the
        answer's form only: right or wrong is graded after hand-in), ``"unanswered"`` or
        ``"failed"``;
        the message is the check's line without its mark (``"B1 p_prime: on track"``).
    student : str or None
        The id whose numbers the notebook used; None for the lecture's numbers.
    source : str or None
        Where the id came from: ``"typed"`` (STUDENT_ID), ``"hub"`` (the JupyterHub login) or
        ``"grader"``; None without an id.
    per_student : bool
        Whether the notebook draws numbers per student at all (it has a STUDENT_ID cell).
    error : str
        Why the id could not be read (a malformed STUDENT_ID), else "".
    """

    verdicts: dict = field(default_factory=dict)
    student: str | None = None
    source: str | None = None
    per_student: bool = False
    error: str = ""

    @property
    def on_track(self) -> bool:
        """Whether every check is on track."""
        return all(state in ("ok", "answered") for state, _ in self.verdicts.values())


def _strip_note(line: str) -> str:
    """A check's line without its mark and without the closing ``[numbers of ...]``."""
    for mark in ("[ok] ", "[?] ", "[x] ", "[ ] "):
        if line.startswith(mark):
            line = line[len(mark) :]
            break
    if line.endswith("]") and "  [" in line:
        line = line[: line.rindex("  [")]
    return line


def _verdict(cell) -> tuple[str, str]:
    errors = [o for o in cell.outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    lines = [x for x in text.splitlines() if x.startswith(("[ok] ", "[?] ", "[x] ", "[ ] "))]
    if errors:
        error = errors[0]
        if error.ename == "CheckFailed" and error.traceback:
            return "failed", _strip_note(error.traceback[0])
        return "failed", f"{error.ename}: {error.evalue}"
    if any(x.startswith("[x] ") for x in lines):  # a check run outside strict mode
        return "failed", _strip_note(next(x for x in lines if x.startswith("[x] ")))
    if any(x.startswith("[ ] ") for x in lines) or "not answered yet" in text:
        line = next((x for x in lines if x.startswith("[ ] ")), "not answered yet")
        return "unanswered", _strip_note(line)
    if any(x.startswith("[?] ") for x in lines):
        return "answered", _strip_note(next(x for x in lines if x.startswith("[?] ")))
    line = next((x for x in lines if x.startswith("[ok] ")), "on track")
    return "ok", _strip_note(line)


def self_check(path: Path, *, timeout: int = 60) -> Report:
    """Run a notebook in a fresh kernel, in strict mode, and read the verdict of each check.

    Returns
    -------
    Report
        The verdict of every graded cell and the id whose numbers were used.
    """
    # Imported here: they take seconds to load, and the other commands never need them.
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    per_student = any("student-id" in c.metadata.get("tags", []) for c in nb.cells)
    if per_student:
        nb.cells.append(nbformat.v4.new_code_cell(_PROBE))
    client = nbclient.NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(Path(path).parent)}},
    )
    # The kernel's own log (start-up notices, its shutdown) is not the check's report.
    client.execute(
        env=dict(os.environ, DECOMPKIT_STRICT="1"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    report = Report(per_student=per_student)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            report.verdicts[meta["grade_id"]] = _verdict(cell)
    if per_student:
        probe = "".join(o.get("text", "") for o in nb.cells[-1].outputs if "text" in o)
        found = [x for x in probe.splitlines() if x.startswith(_PROBE_MARK)]
        numbers = json.loads(found[0][len(_PROBE_MARK) :]) if found else {"error": "no answer"}
        report.student, report.source = numbers.get("id"), numbers.get("source")
        report.error = numbers.get("error", "")
    return report


def numbers_line(report: Report) -> str:
    """The line that says whose numbers a notebook used.

    Examples
    --------
    >>> numbers_line(Report(per_student=True, student="s1234", source="hub"))
    'numbers of s1234 (the JupyterHub login)'
    >>> numbers_line(Report(per_student=True)).split(":")[0]
    'LECTURE NUMBERS'
    """
    if not report.per_student:
        return "no per-student numbers in this notebook"
    if report.error:
        return f"could not tell whose numbers: {report.error}"
    if report.student is None:
        return (
            "LECTURE NUMBERS: no student id is set (STUDENT_ID is None and there is no "
            "JupyterHub login), so every check used the lecture's numbers; grading uses the "
            "numbers of your own id"
        )
    if report.student == LECTURE:
        return "the lecture's numbers (id 'lecture'); grading uses the numbers of your own id"
    where = {
        "typed": "typed into STUDENT_ID",
        "hub": "the JupyterHub login",
        "grader": "the grader",
    }
    return f"numbers of {report.student} ({where.get(report.source, 'id')})"


def _why(error: Exception, path, timeout: int) -> str:
    """One line saying what went wrong running ``path`` and what to do."""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    if isinstance(error, CellTimeoutError):
        return (
            f"a cell of {path} ran past {timeout} s and was stopped; fix the cell (an endless "
            "loop?) or give it more time with --timeout SECONDS"
        )
    if isinstance(error, DeadKernelError):
        return f"the kernel died while running {path}; find the cell that ends the process"
    if isinstance(error, FileNotFoundError):
        return f"no notebook {path}; check the path"
    return f"{path} could not be run ({type(error).__name__}: {str(error).splitlines()[0][:200]})"


def main(argv: list[str] | None = None) -> int:
    """Command line: print whose numbers and every check of each notebook; 1 unless all are
    on track, 2 when a notebook could not be run (one line says why)."""
    parser = Parser(
        prog="python -m decompkit.course check",
        description="Run notebooks and report every visible check.",
    )
    parser.add_argument("notebooks", nargs="+", help="notebook files to check")
    parser.add_argument("--timeout", type=int, default=60, help="seconds per cell (default 60)")
    args = parser.parse_args(argv)
    missing = [path for path in args.notebooks if not Path(path).is_file()]
    if missing:  # before a kernel starts for the first one
        print(f"error: no notebook {', '.join(missing)}; check the path", file=sys.stderr)
        return 2
    status = 0
    for path in args.notebooks:
        try:
            report = self_check(Path(path), timeout=args.timeout)
        except Exception as error:  # noqa: BLE001 - every failure becomes one line
            print(f"error: {_why(error, path, args.timeout)}", file=sys.stderr)
            return 2
        print(f"{path}")
        print(f"  {numbers_line(report)}")
        for grade_id, (state, message) in report.verdicts.items():
            print(f"  [{_MARKS[state]}] {message}  ({grade_id})")
        status |= not report.on_track
    print("all checks on track" if not status else "some checks are not on track yet")
    return int(status)
