"""Without walls, a submission that rewrites the kit's installed files or a gradebook gains nothing.

Inside walls a kernel sees neither the installed kit nor a gradebook (tests/grading/test_walls.py);
these tests grade with ``--no-sandbox``, where the kit's own check is what stands between the
attack and the grades. The kit is installed for them as a copy in a temporary folder (first on
the grader's ``PYTHONPATH``), so the attack never reaches the developer's checkout. The hostile
notebook rewrites the copy's hidden-test comparisons and clean check so that anything passes, and
overwrites every gradebook it finds above its folder; a blank classmate is graded after it,
in the same run and in the next one, and must still score 0.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import nbformat
import pytest

from decompkit.course.engine.environment import GradingError
from decompkit.course.engine.kitfiles import KitFiles
from decompkit.course.engine.workers import _check_marker

from .submissions import RELEASED, ROOT, insert_after

CHAIN = "01-chain-reliability"


def _attack(site) -> str:
    kit = site / "decompkit"
    return (
        "import pathlib\n"
        f"kit = pathlib.Path({str(kit)!r})\n"
        "(kit / 'grading.py').write_text((kit / 'grading.py').read_text() +\n"
        "    '\\nclose = same_bool = same_set = same_choices = lambda *a, **k: True\\n')\n"
        "(kit / 'course' / 'engine' / 'clean_check.py').write_text(\n"
        "    (kit / 'course' / 'engine' / 'clean_check.py').read_text() +\n"
        "    '\\ndef judge(source, student, exported):\\n'\n"
        "    '    import collections\\n'\n"
        "    '    return collections.defaultdict(lambda: True)\\n')\n"
        "(kit / 'course' / 'extra.py').write_text('print(1)')\n"
        "for up in range(1, 5):\n"
        "    for name in ('gradebook.db', 'scratch.db'):\n"
        "        found = pathlib.Path('../' * up) / name\n"
        "        if found.exists():\n"
        "            found.write_text('rewritten by a submission')\n"
    )


def _blank():
    return nbformat.read(RELEASED / f"{CHAIN}.ipynb", as_version=4)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    base = tmp_path_factory.mktemp("guard")
    site = base / "site"
    shutil.copytree(ROOT / "src" / "decompkit", site / "decompkit",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    root = base / "course"
    (root / "solutions" / "decomp").mkdir(parents=True)
    shutil.copy2(ROOT / "nbgrader_config.py", root)
    shutil.copy2(ROOT / "solutions" / "decomp" / f"{CHAIN}.ipynb", root / "solutions" / "decomp")
    hostile = insert_after(_blank(), "chain_success_answer", _attack(site))
    for student, nb in [("a-hostile", hostile), ("b-blank", _blank())]:
        (root / "submitted" / student / "decomp").mkdir(parents=True)
        nbformat.write(nb, root / "submitted" / student / "decomp" / f"{CHAIN}.ipynb")
    env = {**os.environ, "PYTHONPATH": str(site)}
    which = subprocess.run([sys.executable, "-c", "import decompkit; print(decompkit.__file__)"],
                           env=env, capture_output=True, text=True, check=True)  # fmt: skip
    assert which.stdout.startswith(str(site)), "the grader must import the temporary copy"
    return root, site, env


def _grade(root, env, *students):
    command = [
        sys.executable,
        "-m",
        "decompkit.course",
        "grade",
        "decomp",
        "--root",
        str(root),
        "--workers",
        "1",
        "--no-sandbox",
    ] + [f"--student={s}" for s in students]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def _score(root, student):
    record = json.loads((root / "records" / "decomp" / f"{student}.json").read_text())
    return record["notebooks"][CHAIN]


@pytest.fixture(scope="module")
def first(setup):
    root, site, env = setup
    return _grade(root, env)


def test_the_blank_classmate_graded_after_the_attack_scores_0(setup, first):
    root, _, _ = setup
    assert "Traceback" not in first.stdout + first.stderr, first.stderr[-3000:]
    assert _score(root, "b-blank")["score"] == 0.0
    assert _score(root, "a-hostile")["score"] == 0.0


def test_the_changed_files_are_put_back_kept_as_evidence_and_flagged(setup, first):
    root, site, _ = setup
    for name in ("grading.py", "course/engine/clean_check.py"):
        assert (site / "decompkit" / name).read_bytes() == (
            ROOT / "src" / "decompkit" / name
        ).read_bytes()
    assert not (site / "decompkit" / "course" / "extra.py").exists()
    kept = list((root / "records" / "kit-changes").rglob("grading.py"))
    assert kept and "lambda *a, **k: True" in kept[0].read_text()
    hostile = _score(root, "a-hostile")
    assert hostile["flagged"]
    assert any("kit's installed files changed" in flag for flag in hostile["flags"])
    assert "kit's installed files changed" in first.stdout


def test_the_next_run_still_grades_a_blank_notebook_0(setup, first):
    root, _, env = setup
    (root / "submitted" / "c-blank" / "decomp").mkdir(parents=True)
    nbformat.write(_blank(), root / "submitted" / "c-blank" / "decomp" / f"{CHAIN}.ipynb")
    again = _grade(root, env, "c-blank")
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert _score(root, "c-blank")["score"] == 0.0


def test_a_run_refuses_to_start_while_the_kit_differs_from_what_the_last_run_read(tmp_path):
    # What a run in report mode (or a killed run) leaves: its marker with the files it read.
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "grading.py").write_text("close = None\n")
    before = KitFiles.read(package)
    marker = tmp_path / ".grading-run.json"
    marker.write_text(json.dumps({"pid": 0, "kit": before.baseline}))
    (package / "grading.py").write_text("close = lambda *a: True\n")
    with pytest.raises(
        GradingError, match=r"differ from those the last grading run read \(grading.py\)"
    ):
        _check_marker(marker, KitFiles.read(package))
    (package / "grading.py").write_text("close = None\n")
    _check_marker(marker, KitFiles.read(package))  # as it was: the run may start
    assert not marker.exists()
