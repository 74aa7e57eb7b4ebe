"""Release notebooks/ from solutions/ with nbgrader, without losing anybody's work.

``python -m decompkit.course release`` runs ``nbgrader generate_assignment`` in a scratch copy
of the course, then copies the result into ``notebooks/``. A released notebook that was
edited since the last release (someone worked in this clone) is never overwritten: the
command stops, names the file and says how to keep or replace it. The hashes of the last
release are kept in ``.release-manifest.json`` at the course root.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

from .gradebook import prepare_gradebook

__all__ = ["ASSIGNMENTS", "EditedNotebookError", "MANIFEST", "generate", "release", "main"]

MANIFEST = ".release-manifest.json"
ASSIGNMENTS = ("decomp", "lab")


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
        return prepare_gradebook(Path(root), assignment, database, release_to=destination)


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


def release(root: Path, *, force: bool = False) -> list[Path]:
    """Regenerate ``notebooks/`` from ``solutions/``; refuse to overwrite edited notebooks.

    Raises
    ------
    EditedNotebookError
        When a released notebook differs from the last release and ``force`` is false.
    """
    root = Path(root).resolve()
    manifest_path = root / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    edited = _edited(root, manifest)
    if edited and not force:
        raise EditedNotebookError(edited)
    for path in edited:
        print(f"kept your edited copy as {_keep_copy(path).relative_to(root)}")
    with tempfile.TemporaryDirectory(prefix="decompkit-out-") as staging:
        staging = Path(staging)
        fresh: dict[str, Path] = {}
        for assignment in ASSIGNMENTS:
            for path in generate(root, assignment, staging / assignment):
                fresh[f"notebooks/{path.relative_to(staging).as_posix()}"] = path
        written = []
        for rel, path in fresh.items():
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            written.append(target)
    new_manifest = {
        p.relative_to(root).as_posix(): _sha(p) for p in written if p.suffix == ".ipynb"
    }
    manifest_path.write_text(json.dumps(new_manifest, indent=1, sort_keys=True) + "\n")
    return written


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m decompkit.course release [--force] [--root FOLDER]``."""
    parser = argparse.ArgumentParser(
        prog="python -m decompkit.course release",
        description="Regenerate notebooks/ from solutions/ (edited notebooks are never lost).",
    )
    parser.add_argument(
        "--force", action="store_true", help="replace edited notebooks (kept aside)"
    )
    parser.add_argument("--root", default=".", help="course root (default: current folder)")
    args = parser.parse_args(argv)
    try:
        for path in release(Path(args.root), force=args.force):
            print(f"wrote {path}")
    except EditedNotebookError as error:
        print(error, file=sys.stderr)
        return 1
    return 0
