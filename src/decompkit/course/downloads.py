"""Reading one LMS download (a zip file or an unpacked folder) into memory, within bounds.

Everything in a download is a student's until proven otherwise: its names, folders, links and
sizes. A symbolic link is never followed: not in an unpacked folder, not a zip entry with the
Unix link mode, not a download that is itself a link; each one is refused and reported. A
notebook over ``Limits.file_bytes`` is not read, and one download yields at most
``Limits.entries`` entries and ``Limits.total_bytes`` bytes of notebooks (a zip entry is read
no further than the size it declares, so a zip bomb fails its own check); each bound reached
is said in one line that names what was left out and the option that moves the bound.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import itertools
import math
import os
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from .engine.files import open_regular
from .lmsnames import parts_of

__all__ = [
    "MAX_BYTES",
    "MAX_ENTRIES",
    "MAX_STUDENTS",
    "MAX_TOTAL_BYTES",
    "NOT_A_NOTEBOOK",
    "Download",
    "Entry",
    "Limits",
    "few",
    "read_download",
]

#: Bytes of one notebook above which it is not read.
MAX_BYTES = 50_000_000
#: Entries (files, folders, links) read from one download: 20 for each of 1000 students.
MAX_ENTRIES = 20_000
#: Students one download may file notebooks for: twice a class of 1000.
MAX_STUDENTS = 2_000
#: Bytes of notebooks read from one download together (all of it is held in memory).
MAX_TOTAL_BYTES = 2_000_000_000
NOT_A_NOTEBOOK = "not a notebook"
#: Why a notebook given as a download of its own is not filed: the student is missing.
LONE_NOTEBOOK = (
    "a notebook on its own, with no student in its name; rename it <id>_<notebook>.ipynb, "
    "or put it in a folder named for the student, and collect that"
)
#: What reading a damaged, encrypted or lying zip entry (or a vanishing file) raises.
_UNREADABLE = (
    zipfile.BadZipFile,
    zlib.error,
    OSError,
    EOFError,
    NotImplementedError,
    RuntimeError,
    ValueError,
)


@dataclass(frozen=True)
class Limits:
    """The bounds of one download; see the module's docstring.

    Raises
    ------
    ValueError
        When a bound is not a positive whole number.
    """

    entries: int = MAX_ENTRIES
    students: int = MAX_STUDENTS
    file_bytes: int = MAX_BYTES
    total_bytes: int = MAX_TOTAL_BYTES

    def __post_init__(self):
        for name in ("entries", "students", "file_bytes", "total_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive whole number, got {value!r}")


@dataclass
class Entry:
    """One file of a download and where it goes."""

    download: str  # the zip file's or folder's name
    inner: str  # the path inside it ("" for the download itself)
    data: bytes | None = None
    when: _dt.datetime | None = None
    format: str = ""
    person: str = ""
    lms_id: str = ""
    late: bool = False
    notebook: str | None = None
    rank: int = 0
    claim: str = ""  # a name inside the entry that names another student
    order: int = 0
    student: str = ""
    problem: str = ""

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.data or b"").hexdigest()

    @property
    def origin(self) -> str:
        """``<download>:<path inside>``, as the report names the entry."""
        return f"{self.download}:{self.inner}" if self.inner else self.download


@dataclass
class Download:
    """What one download gave: the notebooks read, the other entries (files that are not
    notebooks, and refused ones with their ``problem``) and one line per bound reached."""

    name: str
    notebooks: list = field(default_factory=list)
    others: list = field(default_factory=list)
    bounds: list = field(default_factory=list)


def few(names, shown: int = 5) -> str:
    """The first ``shown`` of ``names``, and how many more.

    Examples
    --------
    >>> few(["a", "b"]), few("abcdefg")
    ('a, b', 'a, b, c, d, e and 2 more')
    """
    names = list(names)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _local_time(date_time) -> _dt.datetime | None:
    try:
        return _dt.datetime(*date_time).astimezone()
    except (ValueError, OverflowError):
        return None


def _skipped(parts) -> bool:
    return not parts or parts[0] == "__MACOSX" or any(p.startswith(".") for p in parts)


def _link(target: str) -> str:
    return (
        f"a symbolic link (to {target!r}), never followed: a download holds files, not links; "
        "if what it points to belongs in the download, put a copy in its place"
    )


def _target(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> str:
    """What a zip entry that is a link points to, as text (for the report only)."""
    try:
        target = archive.read(info) if info.file_size <= 4096 else b"..."
    except _UNREADABLE:
        target = b"?"
    return target[:200].decode("utf-8", "replace")


def _read_file(path: str, limit: int) -> bytes:
    """At most ``limit`` bytes of the regular file ``path``, which must not be a link."""
    handle = open_regular(path)
    if handle is None:
        raise OSError("no longer a regular file")
    with handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"grew past {limit} bytes while it was read")
    return data


def _walk(folder: Path, limit: int):
    """``(path inside, os.DirEntry)`` of the entries under ``folder``, folders before what they
    hold, in name order; links are listed, never entered; at most ``limit`` from one folder."""
    stack = [_listing(folder, "", limit)]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        yield item
        inner, entry = item
        if entry.is_dir(follow_symlinks=False):
            stack.append(_listing(Path(entry.path), inner + "/", limit))


def _listing(folder: Path, prefix: str, limit: int):
    with os.scandir(folder) as listing:
        entries = sorted(itertools.islice(listing, limit), key=lambda e: e.name)
    return iter([(prefix + _text(e.name), e) for e in entries])


def _text(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (which Python keeps as lone surrogates,
    and no report or JSON file can hold) shown as U+FFFD."""
    return os.fsencode(name).decode("utf-8", "replace")


def read_download(path, limits: Limits | None = None) -> Download:
    """The entries of one zip file or folder (notebooks' contents in memory), within
    ``limits`` (default :class:`Limits`); see the module's docstring."""
    reader = _Reader(Path(path), limits or Limits())
    if reader.path.is_symlink():
        reader.refuse("", _link(_text(os.readlink(reader.path))))
    elif reader.path.is_dir():
        reader.folder()
    elif reader.path.suffix.lower() == ".ipynb" and not zipfile.is_zipfile(reader.path):
        reader.refuse("", LONE_NOTEBOOK)
    else:
        reader.zip()
    return reader.done()


class _Reader:
    """One download being read: what it gave so far, and the bytes counted against the bound."""

    def __init__(self, path: Path, limits: Limits):
        self.path, self.limits, self.name = path, limits, _text(path.name)
        self.found = Download(self.name)
        self.read_bytes, self.wanted, self.left = 0, 0, []  # left: over the bound of the total

    def refuse(self, inner: str, problem: str) -> None:
        self.found.others.append(Entry(self.name, inner, problem=problem))

    def add(self, inner: str, size: int, when, read) -> None:
        """One file: a notebook is read when it is within the bounds, else refused or left."""
        limits = self.limits
        if not inner.lower().endswith(".ipynb"):
            self.refuse(inner, NOT_A_NOTEBOOK)
        elif size > limits.file_bytes:
            self.refuse(
                inner,
                f"{size / 1e6:.0f} MB, over the {limits.file_bytes / 1e6:g} MB limit of one "
                "notebook; ask the student for a copy without outputs",
            )
        elif self.read_bytes + size > limits.total_bytes:
            self.wanted += size
            self.left.append(inner)
        else:
            entry = Entry(self.name, inner, when=when)
            try:
                entry.data = read()
            except _UNREADABLE as error:
                self.refuse(
                    inner,
                    f"could not be read from the download ({error}); download it again, or "
                    "ask the student for the file",
                )
                return
            self.read_bytes += len(entry.data)
            self.wanted += len(entry.data)
            self.found.notebooks.append(entry)

    def folder(self) -> None:
        count = 0
        for inner, item in _walk(self.path, self.limits.entries + 1):
            count += 1
            if count > self.limits.entries:
                self.found.bounds.append(
                    f"{self.name}: read its first {self.limits.entries} entries (files, "
                    f"folders, links; in name order), the bound per download; {inner!r} and "
                    "what follows it were not read: if the download is right, collect again "
                    "with a larger --max-entries"
                )
                return
            if _skipped(parts_of(inner)):
                continue
            if item.is_symlink():
                self.refuse(inner, _link(_text(os.readlink(item.path))))
            elif item.is_file(follow_symlinks=False):
                info = item.stat(follow_symlinks=False)
                when = _dt.datetime.fromtimestamp(info.st_mtime).astimezone()
                read = functools.partial(_read_file, item.path, self.limits.file_bytes)
                self.add(inner, info.st_size, when, read)
            elif not item.is_dir(follow_symlinks=False):
                self.refuse(inner, "not a regular file (a pipe, a socket or a device), not read")

    def zip(self) -> None:
        try:
            archive = zipfile.ZipFile(self.path)
        except _UNREADABLE as error:
            self.refuse("", f"not a readable zip file ({error}); download it again")
            return
        with archive:
            infos = archive.infolist()
            for info in infos[: self.limits.entries]:
                if _skipped(parts_of(info.filename)):
                    continue
                if stat.S_ISLNK(info.external_attr >> 16):  # how zip stores a Unix link
                    self.refuse(info.filename, _link(_target(archive, info)))
                elif not info.is_dir():
                    when = _local_time(info.date_time)
                    read = functools.partial(archive.read, info)
                    self.add(info.filename, info.file_size, when, read)
        unread = [info.filename for info in infos[self.limits.entries :]]
        if unread:
            self.found.bounds.append(
                f"{self.name}: holds {len(infos)} entries, over the bound of "
                f"{self.limits.entries} entries per download; the last {len(unread)} entries "
                f"were not read ({few(unread)}): if the download is right, collect again with "
                f"--max-entries {len(infos)}"
            )

    def done(self) -> Download:
        if self.left:
            self.found.bounds.append(
                f"{self.name}: its notebooks hold {self.wanted / 1e6:.1f} MB together, over "
                f"the bound of {self.limits.total_bytes / 1e6:g} MB per download; "
                f"{len(self.left)} notebooks were not read ({few(self.left)}): if the download "
                f"is right, collect again with --max-total-mb {math.ceil(self.wanted / 1e6)}"
            )
        return self.found
