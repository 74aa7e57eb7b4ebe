"""The self-check: run a notebook in a fresh kernel and report the verdict of every check.

``python -m decompkit.course check NOTEBOOK...`` (``python3 kit.py check``) is what a student
or a script runs before handing in: each graded cell's visible check says "on track", "not
answered yet" or what is wrong, and the exit status is 1 unless every check is on track.
nbgrader's own ``validate`` works on the same notebooks; this adds the exit status for
scripts and names the unanswered items.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

__all__ = ["self_check", "main"]

_MARKS = {"ok": "ok  ", "unanswered": "todo", "failed": "FAIL"}


def self_check(path: Path, *, timeout: int = 60) -> dict[str, tuple[str, str]]:
    """Run a notebook in a fresh kernel and read the verdict of each graded cell.

    Returns ``{grade_id: (status, message)}`` with status ``"ok"``, ``"unanswered"`` or
    ``"failed"`` (the check's hint, or the error it raised).
    """
    # Imported here: they take seconds to load, and the other commands never need them.
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(Path(path).parent)}},
    )
    # The kernel's own log (start-up notices, its shutdown) is not the check's report.
    client.execute(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    verdicts = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("grade") or cell.cell_type != "code":
            continue
        errors = [o for o in cell.outputs if o.output_type == "error"]
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        if errors:
            verdicts[meta["grade_id"]] = ("failed", f"{errors[0].ename}: {errors[0].evalue}")
        elif "not answered yet" in text:
            verdicts[meta["grade_id"]] = ("unanswered", "not answered yet")
        else:
            verdicts[meta["grade_id"]] = ("ok", "on track")
    return verdicts


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
    """Command line: print every check of each notebook; 1 unless all are on track, 2 when a
    notebook could not be run (one line says why)."""
    parser = argparse.ArgumentParser(
        prog="python -m decompkit.course check",
        description="Run notebooks and report every visible check.",
    )
    parser.add_argument("notebooks", nargs="+", help="notebook files to check")
    parser.add_argument("--timeout", type=int, default=60, help="seconds per cell (default 60)")
    args = parser.parse_args(argv)
    status = 0
    for path in args.notebooks:
        try:
            verdicts = self_check(Path(path), timeout=args.timeout)
        except Exception as error:  # noqa: BLE001 - every failure becomes one line
            print(f"error: {_why(error, path, args.timeout)}", file=sys.stderr)
            return 2
        print(f"{path}")
        for grade_id, (state, message) in verdicts.items():
            print(f"  [{_MARKS[state]}] {grade_id}: {message}")
            status |= state != "ok"
    print("all checks on track" if not status else "some checks are not on track yet")
    return int(status)
