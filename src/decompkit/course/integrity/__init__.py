"""A static integrity scan of a submission, run before grading.

A notebook is a sequence of code cells c_1, ..., c_n run in order in one kernel. The scan reads
each c_i as the kernel would (IPython's own input transforms, then ``ast``), with the import
aliases and simple assignments of c_1, ..., c_{i-1} in scope, and reports every construct whose
effect reaches past the student's own namespace: a hook into the kernel, an assignment into a
shared module object (``builtins``, ``sys.modules``, ``numpy``, ``decompkit``, ...), a write
to a path p outside the working folder W (p absolute, or ``..`` among its parts), a new process.
An honest answer needs none of them.

Each finding is a :class:`Flag` with a severity: ``"flag"`` (the instructor should look) or
``"note"`` (the scan could not decide, or the construct is merely unusual: a write whose path
is computed at run time, ``%run``, a shell line ``!...``, a cell that does not parse). Kinds:

================  ============================================================================
``hook``          ``get_ipython()`` and the kernel's internals; tracing hooks (``sys.settrace``)
``builtins``      assignment into ``builtins`` / ``__builtins__``, or a rebound ``__import__``
                  (reading the answers out of the kernel relies on it, and on ``json``)
``sys.modules``   assignment into ``sys.modules`` or the import machinery (``sys.meta_path``)
``module-patch``  attribute/item assignment, ``setattr``, ``delattr`` on a protected module
``code-patch``    assignment to ``__code__``, ``__defaults__``, ``f_lineno``, ... of any object
``file-write``    a write, rename or deletion whose path leaves the working folder
``environment``   a change to ``os.environ`` (``putenv``, item stores, ``update``, ...): the
                  grader names the student whose numbers a submission is checked against there
``answer-key``    a call of or a reference to the answer keys (``decompkit.exercises.<nb>.key``
                  and the other key functions, ``decompkit.exercises.expected``,
                  ``decompkit.course.key``), however reached
                  (``vars(m)["key"]``, ``__wrapped__``, a getter, a lambda, a name or module
                  chosen at run time): the visible checks need them in the package, no
                  answer does
``process``       ``subprocess``, ``os.system``, ``os.exec*``, ``os.kill``, ``os._exit``, ...
``dynamic-code``  ``exec``/``eval``/``__import__`` of a string the scan cannot read
``magic``         ``%run``, ``!shell``, ``%%bash``, ``%cd`` and kin
``syntax``        a cell that does not parse (note: it cannot run either) or is too deeply
                  nested for the scan to follow (flag: the kernel may still run it)
``notebook``      a file that is not a readable notebook
================  ============================================================================

The scan is a screen, not a sandbox: code can always be written that it cannot see through
(``getattr`` with computed names, objects found through ``gc``). The grader's isolation of each
student in a scratch course is the defence; the scan tells the instructor where to look.

This file is the public API. The scan itself lives beside it: ``rules`` (the tables of names
behind each kind, the :class:`Flag`, and the checks made at calls, references and magics),
``visitor`` (reads each cell as the kernel does and tracks what every name may hold),
``calls`` (what calling a getter or a small function of the notebook gives) and ``paths``
(whether a file operation leaves W). They import the standard library only, and
IPython's input transformer when the first cell is read; nothing of decompkit.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

from .. import csvsafe
from . import rules
from .rules import *  # noqa: F403 - the rules' names are the package's: Flag, KINDS, ...
from .visitor import Scanner

__all__ = [
    *rules.__all__,
    "scan_notebook",
    "scan_submission",
    "format_report",
    "to_rows",
    "integrity_files",
    "main",
]


def _source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _unreadable(name: str, reason: str) -> list[rules.Flag]:
    return [rules.Flag(name, None, None, None, "notebook", name, "flag", reason)]


def scan_notebook(nb_or_path, *, name: str | None = None) -> list[rules.Flag]:
    """Scan one notebook for constructs no honest answer needs.

    Parameters
    ----------
    nb_or_path : dict or path
        A notebook already read (a ``dict`` or ``nbformat.NotebookNode``, version 4) or the
        path of an ``.ipynb`` file.
    name : str, optional
        The name reported in each :class:`Flag` (default: the file name, or ``"<notebook>"``).

    Returns
    -------
    list of rules.Flag
        Ordered by cell and line. A file that is not a readable notebook gives one flag of kind
        ``"notebook"`` and no exception.

    Raises
    ------
    ValueError
        If ``nb_or_path`` is neither a notebook dict nor a path.

    Notes
    -----
    Code cells are read in order with IPython's own input transforms, so ``%time`` and
    ``%%capture`` bodies are scanned as Python, ``%run``, ``!cmd`` and shell cell magics give
    notes, and ``get_ipython()`` written by the student is flagged. Import aliases
    (``import numpy as n``, ``from decompkit import grading as g``) and simple assignments
    (``b = builtins``) are followed across cells. Calling functions and reading attributes of
    any module is fine; assigning into a protected module (:data:`PROTECTED_MODULES`) is not.
    A write whose path is computed at run time is a note ("path not checkable").

    Examples
    --------
    >>> nb = {"cells": [
    ...     {"cell_type": "code", "metadata": {}, "source": "import numpy as np"},
    ...     {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "answer"}},
    ...      "source": "x = np.isclose(1, 1)\\nnp.isclose = lambda *a, **k: True"},
    ... ]}
    >>> [(f.cell, f.grade_id, f.line, f.kind, f.severity) for f in scan_notebook(nb)]
    [(1, 'answer', 2, 'module-patch', 'flag')]
    """
    if isinstance(nb_or_path, dict):
        nb, label = nb_or_path, name or "<notebook>"
    elif isinstance(nb_or_path, (str, os.PathLike)):
        path = Path(nb_or_path)
        label = name or path.name
        try:
            nb = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            return _unreadable(label, f"not a readable notebook ({type(error).__name__})")
    else:
        raise ValueError(f"nb_or_path must be a notebook dict or a path, got {nb_or_path!r}")
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        return _unreadable(label, "not a notebook (no list of cells)")
    scanner = Scanner(label)
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        metadata = cell.get("metadata") or {}
        grading = (metadata.get("nbgrader") or {}) if isinstance(metadata, dict) else {}
        grade_id = grading.get("grade_id") if isinstance(grading, dict) else None
        # Test cells are the instructor's (nbgrader restores them from the source before it
        # grades): their hidden tests read the answer keys, as they must.
        scanner.test_cell = isinstance(grading, dict) and grading.get("grade") is True
        scanner.scan_cell(index, grade_id, _source(cell))
    return sorted(scanner.flags, key=lambda f: (f.cell, f.line or 0))


def scan_submission(folder) -> list[rules.Flag]:
    """Scan every ``*.ipynb`` directly inside ``folder`` (in name order).

    Parameters
    ----------
    folder : path
        A student's submission folder, e.g. ``submitted/<student>/<assignment>``.

    Returns
    -------
    list of rules.Flag
        The findings of :func:`scan_notebook` for each notebook, one after the other.

    Raises
    ------
    ValueError
        If ``folder`` is not an existing folder.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = (Path(folder) / "broken.ipynb").write_text("{ not json")
    ...     [(f.notebook, f.kind, f.severity) for f in scan_submission(folder)]
    [('broken.ipynb', 'notebook', 'flag')]
    """
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"folder must be an existing folder, got {str(folder)!r}")
    flags = []
    for path in sorted(root.glob("*.ipynb")):
        flags.extend(scan_notebook(path))
    return flags


_COLUMNS = ("severity", "notebook", "cell", "grade_id", "line", "kind", "construct", "reason")


def to_rows(flags) -> list[dict]:
    """The flags as dicts (one per flag, keys in :class:`Flag` field order), e.g. for a CSV.

    Examples
    --------
    >>> import csv, io
    >>> rows = to_rows([rules.Flag("a.ipynb", 3, "x_answer", 2, "process", "os._exit(0)", "flag")])
    >>> out = io.StringIO()
    >>> writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\\n")
    >>> _ = writer.writeheader()
    >>> writer.writerows(rows)
    >>> print(out.getvalue(), end="")
    notebook,cell,grade_id,line,kind,construct,severity,reason
    a.ipynb,3,x_answer,2,process,os._exit(0),flag,
    """
    return [asdict(flag) for flag in flags]


def format_report(flags) -> str:
    """A plain-text table of the flags for the instructor, flags before notes.

    Examples
    --------
    >>> print(format_report([]))
    Integrity scan: nothing to report.
    >>> found = Flag("a.ipynb", 3, "x_answer", 2, "process", "os._exit(0)", "flag", "uses os._exit")
    >>> report = format_report([found])
    >>> print(report)
    Integrity scan: 1 flag, 0 notes.
    severity  notebook  cell  grade_id  line  kind     construct    reason
    --------  --------  ----  --------  ----  -------  -----------  -------------
    flag      a.ipynb   3     x_answer  2     process  os._exit(0)  uses os._exit
    """
    flags = sorted(
        flags,
        key=lambda f: (
            f.severity != "flag",
            f.notebook,
            f.cell if f.cell is not None else -1,
            f.line or 0,
        ),
    )
    if not flags:
        return "Integrity scan: nothing to report."
    n_flags = sum(f.severity == "flag" for f in flags)
    n_notes = len(flags) - n_flags
    title = (
        f"Integrity scan: {n_flags} flag{'s' * (n_flags != 1)}, "
        f"{n_notes} note{'s' * (n_notes != 1)}."
    )
    rows = [
        [("" if getattr(f, c) is None else str(getattr(f, c))) for c in _COLUMNS] for f in flags
    ]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(_COLUMNS)]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(_COLUMNS, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join([title, *lines])


def main(argv: list[str] | None = None) -> int:
    """Print the report for each folder given; exit status 1 when anything is flagged."""
    import argparse
    import csv

    parser = argparse.ArgumentParser(
        prog="python -m decompkit.course integrity",
        description="Static integrity scan of submitted notebooks, before grading.",
    )
    parser.add_argument("folders", nargs="+", help="submission folders (each holds *.ipynb)")
    parser.add_argument("--csv", help="also write the findings to this CSV file")
    args = parser.parse_args(argv)
    flags = []
    for folder in args.folders:
        flags.extend(scan_submission(folder))
    print(format_report(flags))
    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rules.Flag.__dataclass_fields__))
            writer.writeheader()
            writer.writerows(to_rows(flags))
    return int(any(f.severity == "flag" for f in flags))


# --- the class's findings, where the instructor reads them ------------------------------------


def integrity_files(root: Path, assignment: str, graded: dict, flags: dict) -> None:
    """Write ``integrity.csv`` and ``integrity.txt``: this run's findings, and the earlier
    findings of students this run did not grade."""
    columns = ["student", *(f.name for f in dataclasses.fields(rules.Flag))]
    csv_path, txt_path = root / "integrity.csv", root / "integrity.txt"
    rows = []
    if csv_path.is_file():
        with open(csv_path, newline="", encoding="utf-8") as handle:
            rows = [{k: csvsafe.uncell(v) for k, v in r.items()} for r in csv.DictReader(handle)]
        rows = [r for r in rows if r.get("student") not in graded]
    for student in sorted(graded):
        found = [f for notebook in sorted(flags.get(student, {})) for f in flags[student][notebook]]
        rows += [{"student": student, **dataclasses.asdict(f)} for f in found]
    rows.sort(key=lambda r: (r["student"], r.get("notebook") or "", _number(r.get("cell"))))
    report = []
    for student in sorted({r["student"] for r in rows}):
        mine = [_flag(r) for r in rows if r["student"] == student]
        report.append(f"== {student}\n{format_report(mine)}")
    for path, write in ((csv_path, _csv_writer(columns, rows)), (txt_path, None)):
        handle, temporary = tempfile.mkstemp(dir=root, prefix=f".{path.name}-")
        with os.fdopen(handle, "w", newline="", encoding="utf-8") as out:
            if write is not None:
                write(out)
            else:
                out.write("\n\n".join(report) or "Integrity scan: nothing to report.\n")
        os.replace(temporary, path)


def _number(text) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        return -1


def _flag(row: dict) -> rules.Flag:
    """A :class:`Flag` back from a row of integrity.csv."""
    values = {f.name: row.get(f.name) for f in dataclasses.fields(rules.Flag)}
    for name in ("cell", "line"):
        values[name] = None if values[name] in (None, "") else int(values[name])
    values["grade_id"] = values["grade_id"] or None
    return rules.Flag(**values)


def _csv_writer(columns, rows):
    """Write ``rows``, every cell through :func:`.csvsafe.cell`: a student's id or code that
    begins like a formula (``=``, ``@``, ...) must not run in the spreadsheet that opens it."""

    def write(out):
        writer = csv.DictWriter(out, fieldnames=columns)
        writer.writeheader()
        writer.writerows({key: csvsafe.cell(value) for key, value in row.items()} for row in rows)

    return write
