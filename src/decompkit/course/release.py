"""Release notebooks/ from solutions/ with nbgrader, without losing anybody's work.

``python -m decompkit.course release`` runs ``nbgrader generate_assignment`` in a scratch copy
of the course, then copies the result into ``notebooks/``. A released notebook that was
edited since the last release (someone worked in this clone) is never overwritten: the
command stops, names the file and says how to keep or replace it. The hashes of the last
release are kept in ``.release-manifest.json`` at the course root.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .arguments import Parser
from .gradebook import prepare_gradebook

__all__ = [
    "ASSIGNMENTS",
    "EditedNotebookError",
    "MANIFEST",
    "NotACourseError",
    "Released",
    "generate",
    "release",
    "main",
]

MANIFEST = ".release-manifest.json"
ASSIGNMENTS = ("decomp", "lab")


class NotACourseError(ValueError):
    """The folder given as the course root holds no ``nbgrader_config.py`` or ``solutions/``."""


class EditedNotebookError(RuntimeError):
    """Released notebooks were edited since they were generated; ``.paths`` lists them."""

    def __init__(self, paths: list[Path]):
        self.paths = paths
        names = "\n  ".join(str(p) for p in paths)
        super().__init__(
            f"these released notebooks were edited since the last release:\n  {names}\n"
            "Nothing was written. To keep your work, move or rename these files first; "
            "to replace them anyway, run the release again with --force "
            "(each edited file is then kept beside it as <name>.edited-<n>.ipynb)."
        )


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def generate(root: Path, assignment: str, destination: Path) -> list[Path]:
    """Run ``nbgrader generate_assignment`` on a scratch copy; return the written notebooks.

    The scratch copy holds only ``nbgrader_config.py`` and ``solutions/``, so the course's
    gradebook and released folder are not touched.
    """
    with tempfile.TemporaryDirectory(prefix="decompkit-release-") as holder:
        database = Path(holder) / "gradebook.db"
        return prepare_gradebook(
            Path(root), assignment, database, release_to=destination, cells=False
        )


def _edited(root: Path, manifest: dict[str, str]) -> list[Path]:
    """Released files whose content differs from what the last release wrote."""
    edited = []
    for assignment in ASSIGNMENTS:
        for path in sorted((root / "notebooks" / assignment).rglob("*.ipynb")):
            rel = path.relative_to(root).as_posix()
            if ".ipynb_checkpoints" in path.parts or ".edited-" in path.name:
                continue
            if manifest.get(rel) != _sha(path):
                edited.append(path)
    return edited


def _keep_copy(path: Path) -> Path:
    n = 1
    while (kept := path.with_name(f"{path.stem}.edited-{n}{path.suffix}")).exists():
        n += 1
    shutil.copy2(path, kept)
    return kept


@dataclass(frozen=True)
class Released:
    """What a release did: ``written`` notebooks (new or with new content) and those whose
    content was already what nbgrader generates (``unchanged``, left untouched)."""

    written: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)


def release(root: Path, *, force: bool = False) -> Released:
    """Regenerate ``notebooks/`` from ``solutions/``; refuse to overwrite edited notebooks.

    A notebook whose content is already what nbgrader generates is left as it is (its
    modification time too, so an open JupyterLab tab does not see it change).

    Raises
    ------
    NotACourseError
        When ``root`` holds no ``nbgrader_config.py`` or no ``solutions/``.
    EditedNotebookError
        When a released notebook differs from the last release and ``force`` is false.
    """
    root = Path(root).resolve()
    missing = [n for n in ("nbgrader_config.py", "solutions") if not (root / n).exists()]
    if missing:
        raise NotACourseError(f"{root} is not a course folder (no {' or '.join(missing)})")
    manifest_path = root / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    edited = _edited(root, manifest)
    if edited and not force:
        raise EditedNotebookError(edited)
    for path in edited:
        print(f"kept your edited copy as {_keep_copy(path).relative_to(root)}")
    result = Released()
    with tempfile.TemporaryDirectory(prefix="decompkit-out-") as staging:
        staging = Path(staging)
        fresh: dict[str, Path] = {}
        for assignment in ASSIGNMENTS:
            for path in generate(root, assignment, staging / assignment):
                fresh[f"notebooks/{path.relative_to(staging).as_posix()}"] = path
        for rel, path in fresh.items():
            target = root / rel
            if target.is_file() and target.read_bytes() == path.read_bytes():
                result.unchanged.append(target)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            result.written.append(target)
    new_manifest = {
        p.relative_to(root).as_posix(): _sha(p)
        for p in [*result.written, *result.unchanged]
        if p.suffix == ".ipynb"
    }
    manifest_path.write_text(json.dumps(new_manifest, indent=1, sort_keys=True) + "\n")
    return result


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m decompkit.course release [--force] [--root FOLDER]``."""
    parser = Parser(
        prog="python -m decompkit.course release",
        description="Regenerate notebooks/ from solutions/ (edited notebooks are never lost).",
    )
    parser.add_argument(
        "--force", action="store_true", help="replace edited notebooks (kept aside)"
    )
    parser.add_argument("--root", default=".", help="course root (default: current folder)")
    args = parser.parse_args(argv)
    try:
        result = release(Path(args.root), force=args.force)
    except NotACourseError as error:
        print(f"error: {error}; check --root", file=sys.stderr)
        return 2
    except EditedNotebookError as error:
        print(error, file=sys.stderr)
        return 1
    for path in result.written:
        print(f"wrote {path}")
    count = len(result.unchanged)
    if count:
        print(f"unchanged: {count} notebook{'s' if count != 1 else ''} already as released")
    return 0
