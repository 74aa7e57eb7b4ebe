"""The kit's own files while student code runs: a private copy for the kernels, and a watch.

A grading kernel imports decompkit, so it can find the files it imported and rewrite them;
code rewritten there would run in every later kernel and grading process. The grader therefore
reads the package once, before any kernel starts (:meth:`KitFiles.read`), hands kernels a
private copy made from those bytes (:meth:`KitFiles.snapshot`, first on their ``sys.path``),
and after each notebook compares the installed package and the copy with what it read
(:meth:`KitFiles.repair`): a changed or added source file is put back as it was (or removed)
and reported, so the change reaches neither a later kernel of the run nor the next run.
Compiled files (``__pycache__``) that appear or change are removed, since Python could load
one in place of its source; they are rebuilt from the source on the next import. Only the
standard library is used.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["KitFiles", "package_folder"]


def package_folder() -> Path:
    """The folder of the ``decompkit`` package this process imported (two above this file)."""
    return Path(__file__).resolve().parents[2]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_SEEN: dict = {}  # path -> (stat signature, sha256): a file is hashed again only if it changed


def _signature(stat_result) -> tuple:
    # Any write or utime() call moves ctime, which a process cannot set back.
    return (
        stat_result.st_size,
        stat_result.st_mtime_ns,
        stat_result.st_ctime_ns,
        stat_result.st_ino,
    )


def _state(folder: Path) -> dict[str, str]:
    """``{relative path: sha256}`` of every file under ``folder`` (missing folder: empty)."""
    found = {}
    if not folder.is_dir():
        return found
    for path in folder.rglob("*"):
        try:
            if path.is_symlink() or not path.is_file():
                continue
            signature = _signature(path.stat())
            known = _SEEN.get(path)
            if known is None or known[0] != signature:
                known = (signature, _digest(path.read_bytes()))
                _SEEN[path] = known
            digest = known[1]
        except OSError:
            digest = "unreadable"
        found[path.relative_to(folder).as_posix()] = digest
    return found


def _compiled(relative: str) -> bool:
    return "__pycache__/" in relative or relative.endswith((".pyc", ".pyo"))


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.parent.chmod(path.parent.stat().st_mode | stat.S_IWUSR | stat.S_IXUSR)
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o644
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".restore-")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    os.chmod(temporary, mode | stat.S_IRUSR)
    os.replace(temporary, path)


@dataclass
class KitFiles:
    """The source files of the package as read at the start of a grading run.

    Attributes
    ----------
    folder : Path
        The package folder they were read from (the installed ``decompkit``).
    sources : dict
        ``{relative path: bytes}`` of every file that is not compiled.
    baseline : dict
        ``{relative path: sha256}`` of every file of ``folder`` when read, compiled included.
    """

    folder: Path
    sources: dict[str, bytes] = field(default_factory=dict)
    baseline: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, folder: Path | None = None) -> KitFiles:
        """Read the package (default: the one this process imported)."""
        folder = Path(folder or package_folder())
        sources = {}
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder).as_posix()
            if path.is_file() and not path.is_symlink() and not _compiled(relative):
                sources[relative] = path.read_bytes()
        return cls(folder, sources, _state(folder))

    @property
    def digest(self) -> str:
        """One sha256 over every source file: names and contents."""
        total = hashlib.sha256()
        for name in sorted(self.sources):
            total.update(name.encode() + b"\0" + _digest(self.sources[name]).encode() + b"\n")
        return total.hexdigest()

    def snapshot(self, parent: Path) -> Path:
        """Write the sources to ``parent/decompkit`` and return ``parent`` (a ``sys.path``
        entry). The copy is made read-only once :meth:`seal` is called."""
        target = Path(parent) / "decompkit"
        for name, data in self.sources.items():
            _write(target / name, data)
        return Path(parent)

    @staticmethod
    def seal(parent: Path) -> dict[str, str]:
        """Make a snapshot read-only (files and folders) and return its state to watch."""
        target = Path(parent) / "decompkit"
        for path in sorted(target.rglob("*"), reverse=True):
            mode = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
            if path.is_dir():
                mode |= stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
            path.chmod(mode)
        target.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
        return _state(target)

    def repair(self, folder=None, expected=None, *, restore: bool = True, keep=None) -> list:
        """Find (and by default undo) every change under ``folder`` since it was read.

        Parameters
        ----------
        folder : Path, optional
            The installed package (default) or a snapshot's ``decompkit`` folder.
        expected : dict, optional
            The state to hold it to (default: :attr:`baseline`).
        restore : bool
            Put changed sources back as read and remove added ones; ``False`` only reports.
        keep : Path, optional
            A folder where the changed files are copied first (evidence for the instructor).

        Returns
        -------
        list of str
            Relative paths of the source files that had been changed, added or removed.
            Compiled files that changed are removed when restoring and not listed: Python
            writes them itself.
        """
        folder = Path(folder or self.folder)
        expected = self.baseline if expected is None else expected
        now = _state(folder)
        changed = []
        for name in sorted(set(now) | set(expected)):
            if now.get(name) == expected.get(name):
                continue
            path = folder / name
            if _compiled(name):
                if name in now and restore:
                    _remove(path)
                continue
            changed.append(name)
            if keep is not None and name in now:
                try:
                    _write(Path(keep) / name, path.read_bytes())
                except OSError:
                    pass
            if not restore:
                continue
            try:  # a read-only install cannot be put back (nor could a kernel change it)
                if name in self.sources:
                    _write(path, self.sources[name])
                elif name in now:
                    _remove(path)
            except OSError:
                pass
        return changed


def _remove(path: Path) -> None:
    try:
        path.parent.chmod(path.parent.stat().st_mode | stat.S_IWUSR)
        path.unlink()
    except OSError:
        pass
