"""Collect an LMS download as it comes into ``submitted/<student>/<assignment>/``.

``python -m decompkit.course collect [ASSIGNMENT]`` (``python3 kit.py collect``) reads every
zip file (or unpacked folder) in ``downloaded/<assignment>/archive/`` and files each notebook
it can place as ``submitted/<id>/<assignment>/<notebook>.ipynb``. The names it understands:

* **Canvas**: ``doejane_12345_67890_01-chain-reliability.ipynb`` (name, user id, submission
  id, the file as uploaded), ``doejane_LATE_12345_67890_...`` for a late one. The id is the
  name part (``doejane``).
* **Moodle**: ``Jane Doe_12345_assignsubmission_file_/01-chain-reliability.ipynb`` (a folder
  per student) or ``Jane Doe_12345_assignsubmission_file_01-chain-reliability.ipynb``. The id
  is the full name, normalised (``jane-doe``).
* **plain**: ``s2003_01-chain-reliability.ipynb``, ``s2003/01-chain-reliability.ipynb`` or
  ``s2003/decomp/01-chain-reliability.ipynb`` (nbgrader's layouts); the id is what precedes
  the notebook.

Everything in a download is the students' until proven otherwise. The student is read from
the top-level name of the download only, where the LMS writes it (:mod:`.lmsnames`); a file
further in that names another student (a Moodle or Canvas name in Mallory's folder, or
``mallory/victim_<notebook>.ipynb``) is filed under nobody and reported with both names.
Links are never followed, and one download is read within bounds (entries, students, bytes;
``--max-entries``, ``--max-students``, ``--max-total-mb``), each bound reached said in one line
(:mod:`.downloads`).

The notebook is the assignment's notebook whose name the file name holds, compared without
case and with spaces, ``_`` and ``-`` alike, once a browser's duplicate mark
(``name (1).ipynb``) and Canvas's resubmission mark (``name-1.ipynb``, ``name-2.ipynb``) are
dropped. When one student has several files for one notebook, the latest wins: by the LMS's
time of the file (the zip entry's time, read as this machine's local time) where the two
differ, then by the resubmission or duplicate number, then by the order in the download;
identical files count once. Students whose ids coincide (two Jane Does with different LMS
numbers) get the LMS number appended. Every id passes through
:func:`decompkit.exercises.ids.normalise_id`, as grading and the answer key do.

Notebooks it cannot place (no notebook name in the file name, no student, a claim on another
student, a link, too large, a zip that does not open) are listed in the report, one line
each (names shown with line breaks and terminal codes escaped), and in
``downloaded/<assignment>/collect-report.txt``, and left out of ``submitted/``; other files
are ignored, and counted.
A file already in ``submitted/`` is replaced only by different content; the old one is kept
under ``downloaded/<assignment>/replaced/``. Where each notebook came from (LMS name, time,
late mark) is kept in ``downloaded/<assignment>/collected.json``, which the grading record
reads. Exit status 0 when every notebook was placed, 1 when one was left out (or a bound was
reached), 2 when there was nothing to collect.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import sys
import tempfile
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ..exercises.ids import IdError, normalise_id
from .arguments import Parser
from .downloads import (
    MAX_BYTES,
    MAX_ENTRIES,
    MAX_STUDENTS,
    MAX_TOTAL_BYTES,
    NOT_A_NOTEBOOK,
    Entry,
    Limits,
    few,
    read_download,
)
from .lmsnames import match_notebook, parse_name, read_paths

# Entry, Limits, the bounds and the two name readers live in .downloads and .lmsnames; they
# stay importable from here, where the collector's users found them first.
__all__ = [
    "MAX_BYTES",
    "MAX_ENTRIES",
    "MAX_STUDENTS",
    "MAX_TOTAL_BYTES",
    "Collection",
    "Entry",
    "Limits",
    "collect",
    "main",
    "match_notebook",
    "parse_name",
    "report",
]


# --- placing -------------------------------------------------------------------------------


@dataclass
class Collection:
    """What a collection found and did."""

    assignment: str
    downloads: list = field(default_factory=list)
    placed: list = field(default_factory=list)  # (entry, "new" | "replaced" | "unchanged")
    superseded: list = field(default_factory=list)  # (older entry, the entry kept)
    duplicates: list = field(default_factory=list)
    left_out: list = field(default_factory=list)  # notebooks that could not be placed
    ignored: list = field(default_factory=list)  # files that are not notebooks
    renamed: list = field(default_factory=list)  # lines about ids made unique
    bounds: list = field(default_factory=list)  # lines about what a bound left out
    formats: dict = field(default_factory=dict)
    notebooks: list = field(default_factory=list)


def _later(a: Entry, b: Entry) -> bool:
    """Whether ``a`` is a later upload than ``b`` (see the module docstring)."""
    if a.when is not None and b.when is not None and a.when != b.when:
        return a.when > b.when
    if a.rank != b.rank:
        return a.rank > b.rank
    return a.order > b.order


def _assign_ids(entries: list[Entry], result: Collection) -> None:
    by_id: dict[str, set] = {}
    for entry in entries:
        try:
            entry.student = normalise_id(entry.person)
        except IdError as error:
            entry.problem = f"{error}; rename the file <id>_<notebook>.ipynb"
            continue
        by_id.setdefault(entry.student, set()).add(entry.lms_id)
    for student, numbers in sorted(by_id.items()):
        if len(numbers) > 1 and "" not in numbers:
            names = ", ".join(f"{student}-{n}" for n in sorted(numbers))
            result.renamed.append(
                f"{len(numbers)} students in the LMS share the id {student}: filed as {names}"
            )
            for entry in entries:
                if entry.student == student and not entry.problem:
                    entry.student = normalise_id(f"{student}-{entry.lms_id}")


def _notebooks(root: Path, assignment: str) -> list[str]:
    source = root / "solutions" / assignment
    if source.is_dir():
        found = sorted(p.stem for p in source.glob("*.ipynb"))
        if found:
            return found
    if not (root / "solutions").is_dir():
        raise ValueError(f"{root} is not a course folder (no solutions/ in it); check --root")
    known = sorted(p.name for p in (root / "solutions").iterdir() if p.is_dir())
    hint = f" (assignments here: {', '.join(known)})" if known else ""
    raise ValueError(f"no assignment {assignment!r} in solutions/{hint}; check the name")


def _problem(entry: Entry) -> str:
    """Why ``entry`` cannot be placed, or ""."""
    if entry.claim:
        try:
            owner = normalise_id(entry.person)
        except IdError:
            owner = repr(entry.person)
        return (
            f"not filed: {entry.claim!r}, inside the submission of {owner}, names another "
            f"student; look at it, and file it by hand if it is {owner}'s own work"
        )
    if entry.notebook is None:
        return (
            "no notebook of the assignment in its name; rename it <id>_<notebook>.ipynb "
            "and collect again, or file it by hand"
        )
    if not entry.person:
        return "no student in its name; rename it <id>_<notebook>.ipynb"
    return ""


def _within_students(entries: list[Entry], limits: Limits, result: Collection) -> list[Entry]:
    """``entries`` without the notebooks of the students past the bound of their download (in
    the order the download names them); one line in ``result.bounds`` per such download."""
    named: dict[str, dict[str, list]] = {}
    for entry in entries:
        if not entry.problem:
            named.setdefault(entry.download, {}).setdefault(entry.student, []).append(entry)
    dropped = set()
    for download, students in named.items():
        over = list(students)[limits.students :]
        if over:
            count = sum(len(students[s]) for s in over)
            result.bounds.append(
                f"{download}: names {len(students)} students, over the bound of "
                f"{limits.students} students per download; the {count} notebooks of the last "
                f"{len(over)} students were not placed ({few(over)}): if the class is that big, "
                f"collect again with --max-students {len(students)}"
            )
            dropped.update(id(e) for s in over for e in students[s])
    return [e for e in entries if id(e) not in dropped]


def collect(
    root, assignment: str = "decomp", downloads=None, *, dry_run=False, limits=None
) -> Collection:
    """File the download(s) into ``submitted/``; see the module docstring.

    ``limits`` (a :class:`Limits`, default the module's bounds) bounds what one download may
    hold; what a bound leaves out is listed in ``Collection.bounds``.

    Raises
    ------
    ValueError
        For an unknown assignment, a missing download, or nothing to collect.
    """
    root = Path(root).resolve()
    limits = limits or Limits()
    notebooks = _notebooks(root, assignment)
    base = root / "downloaded" / assignment
    if downloads is None:
        archive = base / "archive"
        found = sorted(archive.iterdir()) if archive.is_dir() else []
        downloads = [p for p in found if not p.name.startswith(".")]
    downloads = [Path(p) for p in downloads]
    if not downloads:
        raise ValueError(
            f"nothing to collect: downloaded/{assignment}/archive/ is empty or missing. Download "
            "the submissions from the LMS (one zip) and put it there, or pass --from FILE"
        )
    result = Collection(assignment, [str(p) for p in downloads], notebooks=notebooks)
    entries = []
    for path in downloads:
        if not path.exists() and not path.is_symlink():
            raise ValueError(f"no file or folder {path}; check the path")
        read = read_download(path, limits)
        result.bounds += read.bounds
        for other in read.others:
            (result.ignored if other.problem == NOT_A_NOTEBOOK else result.left_out).append(other)
        inside = read_paths([e.inner for e in read.notebooks], notebooks, assignment)
        for entry, inner in zip(read.notebooks, inside, strict=True):
            for key, value in parse_name(inner, notebooks, assignment).items():
                setattr(entry, key, value)
            entry.order, entry.problem = len(entries), _problem(entry)
            entries.append(entry)
    _assign_ids([e for e in entries if not e.problem], result)
    entries = _within_students(entries, limits, result)
    result.left_out += [e for e in entries if e.problem]
    chosen: dict[tuple, Entry] = {}
    for entry in (e for e in entries if not e.problem):
        result.formats[entry.format] = result.formats.get(entry.format, 0) + 1
        key = (entry.student, entry.notebook)
        kept = chosen.get(key)
        if kept is None:
            chosen[key] = entry
        elif kept.digest == entry.digest:
            result.duplicates.append(entry)
        elif _later(entry, kept):
            result.superseded.append((kept, entry))
            chosen[key] = entry
        else:
            result.superseded.append((entry, kept))
    for (student, notebook), entry in sorted(chosen.items()):
        target = root / "submitted" / student / assignment / f"{notebook}.ipynb"
        state = "new"
        if target.exists():
            state = "unchanged" if target.read_bytes() == entry.data else "replaced"
        if not dry_run and state != "unchanged":
            if state == "replaced":
                _keep_old(base / "replaced" / student, target)
            _write(target, entry.data or b"")
        result.placed.append((entry, state))
    if not dry_run:
        _write_manifest(base, result, chosen)
        _write(base / "collect-report.txt", report(result).encode())
    return result


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    os.replace(temporary, path)


def _keep_old(folder: Path, target: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    n = 1
    while (folder / f"{target.stem}.{n}{target.suffix}").exists():
        n += 1
    os.replace(target, folder / f"{target.stem}.{n}{target.suffix}")


def _iso(when) -> str | None:
    return None if when is None else when.replace(microsecond=0).isoformat()


def _write_manifest(base: Path, result: Collection, chosen: dict) -> None:
    path = base / "collected.json"
    try:
        students = json.loads(path.read_text(encoding="utf-8")).get("students", {})
    except (OSError, ValueError, AttributeError):
        students = {}
    for (student, notebook), entry in chosen.items():
        mine = students.setdefault(student, {"notebooks": {}})
        mine["notebooks"][notebook] = {
            "source": entry.inner.rsplit("/", 1)[-1],
            "download": entry.origin,
            "format": entry.format,
            "lms_id": entry.lms_id,
            "lms_time": _iso(entry.when),
            "late": entry.late,
        }
        times = [n["lms_time"] for n in mine["notebooks"].values() if n.get("lms_time")]
        mine["submitted_at"] = max(times) if times else None
        mine["late"] = any(n.get("late") for n in mine["notebooks"].values())
    body = {
        "assignment": result.assignment,
        "collected_at": _iso(_dt.datetime.now().astimezone()),
        "students": dict(sorted(students.items())),
    }
    _write(path, (json.dumps(body, indent=1, ensure_ascii=False) + "\n").encode())


def report(result: Collection) -> str:
    """The collection in words: what changed in ``submitted/`` (new and replaced notebooks,
    by student; the unchanged counted), what was set aside, what was left out. A download
    collected again, or beside a later one, adds a line only for what it changed."""
    changed: dict[str, dict[str, list]] = {"new": {}, "replaced": {}}
    for entry, state in result.placed:
        if state in changed:
            changed[state].setdefault(entry.student, []).append(entry.notebook)
    counts = {s: sum(len(n) for n in changed[s].values()) for s in changed}
    unchanged = len(result.placed) - sum(counts.values())
    students = len({e.student for e, _ in result.placed})
    formats = ", ".join(f"{k} {v}" for k, v in sorted(result.formats.items())) or "none"
    lines = [
        f"collect {result.assignment}: {len(result.downloads)} download(s), file names read as "
        f"{formats}",
        f"  placed {len(result.placed)} notebooks of {students} students in submitted/ "
        f"({counts['new']} new, {counts['replaced']} replaced, {unchanged} unchanged)",
    ]
    kept = f"the old copy is kept in downloaded/{result.assignment}/replaced/"
    for state, said in (("new", "new"), ("replaced", f"replaced ({kept})")):
        if changed[state]:
            named = [f"{s} ({', '.join(n)})" for s, n in sorted(changed[state].items())]
            lines.append(f"  {said}: {few(named, 12)}")
    lines += [f"  {line}" for line in result.renamed]
    states = {id(e): state for e, state in result.placed}
    moved = [(old, new) for old, new in result.superseded if states.get(id(new)) != "unchanged"]
    if result.superseded:
        count = len(result.superseded)
        some = "; those of what changed" if moved and len(moved) < count else ""
        lines.append(f"  set aside {count} older uploads (the latest was kept){some}")
        if moved:
            lines[-1] += ":"
            lines += [f"    {old.origin}  (kept {new.origin})" for old, new in moved]
    if result.duplicates:
        lines.append(f"  {len(result.duplicates)} identical copies counted once")
    late = sorted({e.student for e, state in result.placed if e.late and state != "unchanged"})
    if late:
        lines.append(f"  marked late by the LMS: {', '.join(late)}")
    if result.ignored:
        names = few(e.inner.rsplit("/", 1)[-1] for e in result.ignored)
        lines.append(f"  ignored {len(result.ignored)} files that are not notebooks ({names})")
    if result.bounds:
        lines.append("  bounds reached - part of the download was NOT read or placed:")
        lines += [f"    {line}" for line in result.bounds]
    if result.left_out:
        lines.append(
            f"  NOT placed ({len(result.left_out)}) - not in submitted/, not graded (the "
            f"notebooks of {result.assignment}: {', '.join(result.notebooks)}):"
        )
        lines += [f"    {e.origin}: {e.problem}" for e in result.left_out]
    return "".join(f"{_printable(line)}\n" for line in lines)


def _printable(line: str) -> str:
    """``line`` with what a terminal or an editor acts on (line breaks, escape codes, marks
    that turn text around) written as escapes: the names in it are the students'."""
    return "".join(
        repr(c)[1:-1] if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") else c
        for c in line
    )


def _positive(kind):
    """An argparse type: a positive number of ``kind`` (int or float)."""

    def read(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if not (value > 0 and math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
        return value

    return read


def main(argv=None) -> int:
    """Command line: collect an LMS download; see the module docstring."""
    parser = Parser(
        prog="python -m decompkit.course collect",
        description="File an LMS download (zip) into submitted/<id>/<assignment>/.",
    )
    parser.add_argument("assignment", nargs="?", default="decomp")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the course folder")
    parser.add_argument(
        "--from",
        dest="downloads",
        action="append",
        type=Path,
        help="a zip file or folder (default: everything in downloaded/<assignment>/archive/)",
    )
    parser.add_argument("--dry-run", action="store_true", help="report only, write nothing")
    parser.add_argument(
        "--max-entries",
        type=_positive(int),
        default=MAX_ENTRIES,
        help="entries (files, folders) read from one download (default %(default)s)",
    )
    parser.add_argument(
        "--max-students",
        type=_positive(int),
        default=MAX_STUDENTS,
        help="students one download may file notebooks for (default %(default)s)",
    )
    parser.add_argument(
        "--max-total-mb",
        type=_positive(float),
        default=MAX_TOTAL_BYTES / 1e6,
        help="MB of notebooks read from one download together (default %(default)g)",
    )
    args = parser.parse_args(argv)
    try:
        limits = Limits(
            entries=args.max_entries,
            students=args.max_students,
            total_bytes=int(args.max_total_mb * 1e6),
        )
        result = collect(
            args.root, args.assignment, args.downloads, dry_run=args.dry_run, limits=limits
        )
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(report(result), end="")
    if not args.dry_run:
        print(
            f"  report kept in downloaded/{args.assignment}/collect-report.txt; next: "
            f"python3 kit.py grade {args.assignment}"
        )
    return 1 if result.left_out or result.bounds else 0
