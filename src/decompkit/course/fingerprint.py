"""What a student's grade depends on, so that a grading run regrades only what changed.

A student's fingerprint has four parts, each a sha256 over names and bytes::

    kit         the installed decompkit's source files, Python's version and every installed
                distribution's name and version (a dependency upgraded counts)
    assignment  every file of solutions/<assignment>/ (the source notebooks and the files
                a kernel gets beside them)
    settings    the time and output limits and the walls' bounds (None: graded without walls)
    submission  every file of the student's folders submitted/<id>/<assignment>/ (notebooks,
                timestamp.txt, other files) and what collect wrote about them

The grader stores it in the student's grading record. A student is *unchanged* when the
record's fingerprint equals the one computed now and the gradebook holds the student's
scores (:func:`why_graded`); a record without one (from an older kit) counts as changed.
The released notebooks are left out: grading reads the sources only, and a release is made
from them. Standard library only: it is computed before any notebook machinery is imported.
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from .engine.kitfiles import KitFiles

__all__ = [
    "PARTS",
    "Fingerprint",
    "assignment_digest",
    "digest",
    "fingerprint",
    "kit_digest",
    "settings_digest",
    "why_graded",
]

#: The parts of a fingerprint, in the order a reason to grade again is named.
PARTS = ("kit", "assignment", "settings", "submission")
_WHY = {part: f"{part} changed" for part in PARTS}


@dataclass(frozen=True)
class Fingerprint:
    """The four digests a student's grade depends on (see the module docstring)."""

    kit: str
    assignment: str
    settings: str
    submission: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)

    def changed(self, stored) -> list[str]:
        """The parts that differ from ``stored`` (a record's ``fingerprint``; all if None)."""
        stored = stored if isinstance(stored, dict) else {}
        return [part for part in PARTS if stored.get(part) != getattr(self, part)]


def digest(entries) -> str:
    """One sha256 over ``(name, bytes)`` pairs, in the order given."""
    total = hashlib.sha256()
    for name, data in entries:
        total.update(name.encode("utf-8", "surrogateescape") + b"\0")
        total.update(hashlib.sha256(data).hexdigest().encode() + b"\n")
    return total.hexdigest()


def _files(folder: Path, label: str = "") -> list[tuple[str, bytes]]:
    """``(label/name, bytes)`` of the regular files directly in ``folder`` (links left out,
    as the grader leaves them out), sorted by name."""
    found = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else ():
        if path.is_file() and not path.is_symlink():
            try:
                found.append((f"{label}/{path.name}", path.read_bytes()))
            except OSError:
                found.append((f"{label}/{path.name}", b"\0unreadable"))
    return found


def _installed() -> list[str]:
    """The installed distributions as their ``<name>-<version>.dist-info`` folders say (read
    from the folder names: their metadata files take a third of a second to parse)."""
    found = set()
    for entry in sys.path:
        folder = Path(entry or ".")
        if folder.is_dir():
            found.update(path.name for path in folder.glob("*.dist-info"))
    return sorted(found)


def kit_digest(kit: KitFiles | None = None) -> str:
    """The kit part: decompkit's sources, Python's version, the installed distributions."""
    kit = kit or KitFiles.read()
    about = "\n".join([kit.digest, platform.python_version(), *_installed()])
    return digest([("kit", about.encode())])


def assignment_digest(folder: Path) -> str:
    """The assignment part: every file of ``solutions/<assignment>/``."""
    return digest(_files(Path(folder)))


def settings_digest(limits, bounds) -> str:
    """The settings part: the grading limits and the walls' bounds (None: no walls).

    Examples
    --------
    >>> from decompkit.course.engine.limits import Limits
    >>> from decompkit.course.engine.sandbox import Bounds
    >>> same = settings_digest(Limits(), Bounds())
    >>> same == settings_digest(Limits(), Bounds()), same == settings_digest(Limits(), None)
    (True, False)
    >>> same == settings_digest(Limits(cell=29.0), Bounds())
    False
    """
    data = {"limits": asdict(limits), "walls": None if bounds is None else asdict(bounds)}
    return digest([("settings", json.dumps(data, sort_keys=True).encode())])


def fingerprint(kit: str, assignment: str, settings: str, submission, lms) -> Fingerprint:
    """A student's fingerprint: the shared parts, and the digest of ``submission`` (a
    :class:`decompkit.course.submissions.Submission`) with what collect wrote (``lms``)."""
    entries = []
    for folder in sorted(submission.folders):
        entries += _files(folder, folder.parent.name)
    # Which file is graded where a student has two folders (S2001/ and s2001/).
    entries += [
        (f"graded/{name}", f"{path.parent.parent.name}/{path.name}".encode())
        for name, path in sorted(submission.files.items())
    ]
    entries.append(("collected", json.dumps(lms, sort_keys=True, default=str).encode()))
    return Fingerprint(kit, assignment, settings, digest(entries))


def why_graded(now: Fingerprint, record, in_gradebook: bool, autograded: bool) -> str | None:
    """Why a student is graded in this run, or None when they are unchanged.

    ``record`` is the student's last grading record (None: never graded, or unreadable);
    ``in_gradebook``: the gradebook holds every score of the student; ``autograded``: their
    executed notebooks are in ``autograded/``.
    """
    if record is None:
        return "new"
    if record.fingerprint is None:
        return "graded by an older kit"  # which wrote no fingerprint
    changed = now.changed(record.fingerprint)
    if changed:
        return _WHY[changed[0]]
    if not in_gradebook or not autograded:
        return "not in the gradebook"
    return None
