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

The notebook is the assignment's notebook whose name the file name holds, compared without
case and with spaces, ``_`` and ``-`` alike, once a browser's duplicate mark
(``name (1).ipynb``) and Canvas's resubmission mark (``name-1.ipynb``, ``name-2.ipynb``) are
dropped. When one student has several files for one notebook, the latest wins: by the LMS's
time of the file (the zip entry's time, read as this machine's local time) where the two
differ, then by the resubmission or duplicate number, then by the order in the download;
identical files count once. Students whose ids coincide (two Jane Does with different LMS
numbers) get the LMS number appended. Every id passes through
:func:`decompkit.exercises.ids.normalise_id`, as grading and the answer key do.

Notebooks it cannot place (no notebook name in the file name, no student, too large, a zip
that does not open) are listed in the report, and in ``downloaded/<assignment>/
collect-report.txt``, and left out of ``submitted/``; other files are ignored, and counted.
A file already in ``submitted/`` is replaced only by different content; the old one is kept
under ``downloaded/<assignment>/replaced/``. Where each notebook came from (LMS name, time,
late mark) is kept in ``downloaded/<assignment>/collected.json``, which the grading record
reads. Exit status 0 when every notebook was placed, 1 when one was left out, 2 when there was
nothing to collect.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import re
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from ..exercises.ids import IdError, normalise_id

__all__ = ["Collection", "Entry", "collect", "main", "match_notebook", "parse_name", "report"]

MAX_BYTES = 50_000_000

_MOODLE = re.compile(r"^(?P<person>[^/]+?)_(?P<lms>\d+)_assignsubmission_[a-z]+_(?P<file>.*)$")
_CANVAS = re.compile(
    r"^(?P<person>[^_/]+?)_(?P<late>LATE_)?(?P<lms>\d+)_(?P<sub>\d+)_(?P<file>.+)$"
)
_DUPLICATE = re.compile(r"^(?P<base>.*?)\s*\((?P<n>\d+)\)$")
_RESUBMIT = re.compile(r"^(?P<base>.*?)-(?P<n>\d+)$")


def _key(text: str) -> str:
    return re.sub(r"[\s_-]+", "-", text.strip().casefold())


def _stem(file: str) -> str:
    return file[: -len(".ipynb")] if file.lower().endswith(".ipynb") else file


def match_notebook(name: str, notebooks) -> tuple[str | None, int]:
    """The notebook a file name (without ``.ipynb``) stands for, and its resubmission rank.

    Examples
    --------
    >>> nbs = ["01-chain-reliability", "lab-2"]
    >>> match_notebook("01-chain-reliability (1)", nbs)
    ('01-chain-reliability', 1)
    >>> match_notebook("01_Chain_Reliability-2", nbs)
    ('01-chain-reliability', 2)
    >>> match_notebook("lab-2", nbs), match_notebook("chain", nbs)
    (('lab-2', 0), (None, 0))
    """
    known = {_key(n): n for n in notebooks}
    text, rank = name, 0
    for _ in range(4):
        if _key(text) in known:
            return known[_key(text)], rank
        found = _DUPLICATE.match(text) or _RESUBMIT.match(text)
        if not found:
            break
        text, rank = found.group("base"), rank + int(found.group("n"))
    return None, 0


def _split(stem: str, notebook: str) -> tuple[str, str]:
    """``stem`` cut where ``notebook`` begins in it (compared as :func:`_key` does)."""
    for start in range(len(stem)):
        if _key(stem[start:]).startswith(_key(notebook)):
            return stem[:start], stem[start:]
    return "", stem


def parse_name(path: str, notebooks, assignment: str = "") -> dict:
    """Read the person, LMS id, lateness and notebook off a path inside a download.

    Examples
    --------
    >>> nbs = ["01-chain-reliability"]
    >>> p = parse_name("doejane_LATE_12345_67890_01-chain-reliability-1.ipynb", nbs)
    >>> p["format"], p["person"], p["lms_id"], p["late"], p["notebook"], p["rank"]
    ('Canvas', 'doejane', '12345', True, '01-chain-reliability', 1)
    >>> p = parse_name("Jane Doe_123_assignsubmission_file_/01-chain-reliability.ipynb", nbs)
    >>> p["format"], p["person"], p["lms_id"], p["notebook"]
    ('Moodle', 'Jane Doe', '123', '01-chain-reliability')
    >>> p = parse_name("carol/carol_01-chain-reliability (2).ipynb", nbs)
    >>> p["format"], p["person"], p["notebook"], p["rank"]
    ('plain', 'carol', '01-chain-reliability', 2)
    """
    parts = [p for p in re.split(r"[\\/]+", path) if p]
    if len(parts) > 2 and assignment and parts[-2] == assignment:
        parts = [*parts[:-2], parts[-1]]  # <id>/<assignment>/<notebook>: nbgrader's own layout
    found = {"format": "", "person": "", "lms_id": "", "late": False, "notebook": None, "rank": 0}
    if not parts:
        return found
    for depth in range(len(parts) - 1, -1, -1):  # a Moodle folder may hold the file
        moodle = _MOODLE.match("/".join(parts[depth:]))
        if moodle:
            file = moodle.group("file").lstrip("/").rsplit("/", 1)[-1]
            notebook, rank = match_notebook(_stem(file), notebooks)
            return {**found, "format": "Moodle", "person": moodle.group("person"),
                    "lms_id": moodle.group("lms"), "notebook": notebook, "rank": rank}  # fmt: skip
    name = parts[-1]
    canvas = _CANVAS.match(name)
    if canvas:
        notebook, rank = match_notebook(_stem(canvas.group("file")), notebooks)
        if notebook is not None:
            return {**found, "format": "Canvas", "person": canvas.group("person"),
                    "lms_id": canvas.group("lms"), "late": bool(canvas.group("late")),
                    "notebook": notebook, "rank": rank}  # fmt: skip
    stem = _stem(name)
    for notebook in sorted(notebooks, key=len, reverse=True):
        at = _key(stem).find(_key(notebook))
        if at > 0 or (at == 0 and len(parts) > 1):
            head, tail = _split(stem, notebook)
            person = head.rstrip(" _-") or (parts[-2] if len(parts) > 1 else "")
            matched, rank = match_notebook(tail, notebooks)
            if person and matched is not None:
                return {**found, "format": "plain", "person": person, "notebook": matched,
                        "rank": rank}  # fmt: skip
    return found


@dataclass
class Entry:
    """One file of a download and where it goes."""

    origin: str  # "<download>:<path inside>"
    data: bytes | None
    when: _dt.datetime | None
    format: str = ""
    person: str = ""
    lms_id: str = ""
    late: bool = False
    notebook: str | None = None
    rank: int = 0
    order: int = 0
    student: str = ""
    problem: str = ""

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.data or b"").hexdigest()

    @property
    def inner(self) -> str:
        return self.origin.split(":", 1)[1] if ":" in self.origin else self.origin


# --- reading a download --------------------------------------------------------------------


def _local_time(date_time) -> _dt.datetime | None:
    try:
        return _dt.datetime(*date_time).astimezone()
    except (ValueError, OverflowError):
        return None


def _skipped(path: str) -> bool:
    parts = [p for p in re.split(r"[\\/]+", path) if p]
    return not parts or parts[0] == "__MACOSX" or any(p.startswith(".") for p in parts)


def read_download(path: Path) -> tuple[list[Entry], list[Entry]]:
    """``(notebooks, other files)`` of one zip file or folder (file contents in memory)."""
    notebooks, others = [], []

    def add(inner: str, read, when, size: int):
        if _skipped(inner):
            return
        entry = Entry(f"{path.name}:{inner}", None, when)
        if not inner.lower().endswith(".ipynb"):
            entry.problem = "not a notebook"
            others.append(entry)
        elif size > MAX_BYTES:
            entry.problem = f"{size / 1e6:.0f} MB, over the {MAX_BYTES // 10**6} MB limit"
            others.append(entry)
        else:
            entry.data = read()
            notebooks.append(entry)

    if path.is_dir():
        for item in sorted(path.rglob("*")):
            if item.is_file():
                stat = item.stat()
                when = _dt.datetime.fromtimestamp(stat.st_mtime).astimezone()
                add(item.relative_to(path).as_posix(), item.read_bytes, when, stat.st_size)
        return notebooks, others
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if not info.is_dir():
                    add(info.filename, lambda info=info: archive.read(info),
                        _local_time(info.date_time), info.file_size)  # fmt: skip
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        others.append(Entry(path.name, None, None, problem=f"not a readable zip file ({error})"))
    return notebooks, others


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
    known = (
        sorted(p.name for p in (root / "solutions").iterdir() if p.is_dir())
        if (root / "solutions").is_dir()
        else []
    )
    hint = f" (assignments here: {', '.join(known)})" if known else ""
    raise ValueError(f"no assignment {assignment!r} in solutions/{hint}; check the name")


def collect(root, assignment: str = "decomp", downloads=None, *, dry_run=False) -> Collection:
    """File the download(s) into ``submitted/``; see the module docstring.

    Raises
    ------
    ValueError
        For an unknown assignment, a missing download, or nothing to collect.
    """
    root = Path(root).resolve()
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
        if not path.exists():
            raise ValueError(f"no file or folder {path}; check the path")
        found, others = read_download(path)
        entries += found
        for other in others:
            (result.ignored if other.problem == "not a notebook" else result.left_out).append(other)
    for order, entry in enumerate(entries):
        entry.order = order
        for key, value in parse_name(entry.inner, notebooks, assignment).items():
            setattr(entry, key, value)
        if entry.notebook is None:
            entry.problem = (
                "no notebook of the assignment in its name; rename it <id>_<notebook>.ipynb "
                "and collect again, or file it by hand"
            )
        elif not entry.person:
            entry.problem = "no student in its name; rename it <id>_<notebook>.ipynb"
    _assign_ids([e for e in entries if not e.problem], result)
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
    """The collection in words: what was placed, what was set aside, what was left out."""
    states = {s: sum(1 for _, t in result.placed if t == s) for s in ("new", "replaced")}
    unchanged = len(result.placed) - sum(states.values())
    students = len({e.student for e, _ in result.placed})
    formats = ", ".join(f"{k} {v}" for k, v in sorted(result.formats.items())) or "none"
    lines = [
        f"collect {result.assignment}: {len(result.downloads)} download(s), file names read as "
        f"{formats}",
        f"  placed {len(result.placed)} notebooks of {students} students in submitted/ "
        f"({states['new']} new, {states['replaced']} replaced, {unchanged} unchanged)",
    ]
    lines += [f"  {line}" for line in result.renamed]
    if result.superseded:
        lines.append(f"  set aside {len(result.superseded)} older uploads (the latest was kept):")
        lines += [f"    {old.origin}  (kept {new.origin})" for old, new in result.superseded]
    if result.duplicates:
        lines.append(f"  {len(result.duplicates)} identical copies counted once:")
        lines += [f"    {e.origin}" for e in result.duplicates]
    late = sorted({e.student for e, _ in result.placed if e.late})
    if late:
        lines.append(f"  marked late by the LMS: {', '.join(late)}")
    if result.ignored:
        names = ", ".join(e.inner.rsplit("/", 1)[-1] for e in result.ignored[:5])
        more = f" and {len(result.ignored) - 5} more" if len(result.ignored) > 5 else ""
        lines.append(
            f"  ignored {len(result.ignored)} files that are not notebooks ({names}{more})"
        )
    if result.left_out:
        lines.append(
            f"  NOT placed ({len(result.left_out)}) - not in submitted/, not graded (the "
            f"notebooks of {result.assignment}: {', '.join(result.notebooks)}):"
        )
        lines += [f"    {e.origin}: {e.problem}" for e in result.left_out]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    """Command line: collect an LMS download; see the module docstring."""
    parser = argparse.ArgumentParser(
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
    args = parser.parse_args(argv)
    try:
        result = collect(args.root, args.assignment, args.downloads, dry_run=args.dry_run)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(report(result), end="")
    if not args.dry_run:
        print(
            f"  report kept in downloaded/{args.assignment}/collect-report.txt; next: "
            f"python3 kit.py grade {args.assignment}"
        )
    return 1 if result.left_out else 0
