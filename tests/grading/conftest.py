"""The bank's autograde run, shared by every test module that reads its outcome."""

from __future__ import annotations

import shutil

import nbformat
import pytest

from decompkit.course.grade import autograde

from .bank import CASES
from .submissions import ROOT

CELL_TIMEOUT = 5
SUBMITTED_AT = "2026-11-30 09:15:00.000000 UTC"


def write_submissions(root, students=None) -> None:
    """Put the bank's submissions (or only those of ``students``) into ``root/submitted``."""
    for case in CASES:
        if students is not None and case.student not in students:
            continue
        folder = root / "submitted" / case.student / "decomp"
        folder.mkdir(parents=True)
        for notebook, build in case.notebooks.items():
            made = build()
            target = folder / f"{notebook}.ipynb"
            if isinstance(made, bytes):
                target.write_bytes(made)
            else:
                nbformat.write(made, target)


@pytest.fixture(scope="session")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    shutil.copy2(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    shutil.copytree(ROOT / "solutions", root / "solutions")
    write_submissions(root)
    # nbgrader's exchange stamps every submission; the grader must carry the stamp along.
    (root / "submitted" / "solved" / "decomp" / "timestamp.txt").write_text(SUBMITTED_AT)
    before = {p: p.read_bytes() for p in (root / "solutions").rglob("*") if p.is_file()}
    # The suite grades with the developer's checkout as the installed kit: a change found in it
    # during the run is reported, never undone (it may be an edit made meanwhile).
    results = autograde(root, "decomp", workers=2, timeout=CELL_TIMEOUT, kit_guard="report")
    return root, {(r.student, r.notebook): r for r in results}, before
