"""``nbgrader autograde`` under the course's own nbgrader_config.py still grades correctly.

The kit's grader is one path; nbgrader's converter with the course's preprocessors is the
other (README: How grading works). Three students hand in notebook 01: solved, with two
wrong answers hidden behind patched comparisons, and solved but followed by slow cells that
the notebook's time limit (``GradingLimits.notebook_time_limit``) must stop. nbgrader's
commands run as an instructor would type them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from .bank import CASES
from .submissions import ROOT, points, submission

CHAIN = "01-chain-reliability"
FULL = sum(points(CHAIN).values())


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("nbgrader-path")
    config = (ROOT / "nbgrader_config.py").read_text()
    config += "\nc.Execute.timeout = 5\nc.GradingLimits.notebook_time_limit = 12\n"
    (root / "nbgrader_config.py").write_text(config)
    (root / "solutions" / "decomp").mkdir(parents=True)
    shutil.copy2(ROOT / "solutions" / "decomp" / f"{CHAIN}.ipynb", root / "solutions" / "decomp")
    slow = submission(CHAIN)
    slow.cells += [nbformat.v4.new_code_cell("import time\ntime.sleep(3)") for _ in range(6)]
    patched = next(c for c in CASES if c.student == "patched_modules").notebooks[CHAIN]()
    for student, nb in [("solved", submission(CHAIN)), ("patched", patched), ("slow", slow)]:
        (root / "submitted" / student / "decomp").mkdir(parents=True)
        nbformat.write(nb, root / "submitted" / student / "decomp" / f"{CHAIN}.ipynb")
    bindir = str(Path(sys.executable).parent)
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(root)}
    run = [sys.executable, "-m", "nbgrader"]
    for command in (["generate_assignment", "decomp", "--force"], ["autograde", "decomp"],
                    ["generate_feedback", "decomp"]):  # fmt: skip
        done = subprocess.run([*run, *command], cwd=root, env=env, capture_output=True,
                              text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, (command, done.stderr[-3000:])
    return root


def _score(root, student):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return gb.find_submission_notebook(CHAIN, "decomp", student).score


def test_the_course_configuration_grades_with_the_clean_check(course):
    assert _score(course, "solved") == FULL
    assert _score(course, "patched") == FULL - 2  # the patched comparisons earn nothing


def test_the_notebook_time_limit_stops_a_notebook_of_slow_cells(course):
    assert _score(course, "slow") == FULL  # every test ran before the slow cells
    graded = nbformat.read(course / "autograded" / "slow" / "decomp" / f"{CHAIN}.ipynb", 4)
    stopped = [
        c for c in graded.cells if any(o.get("ename") == "NotRun" for o in c.get("outputs", []))
    ]
    assert 1 <= len(stopped) <= 5  # 12 s for the notebook and 6 x 3 s: the last ones did not run


def test_feedback_is_generated_from_what_nbgrader_wrote(course):
    page = course / "feedback" / "solved" / "decomp" / f"{CHAIN}.html"
    assert page.is_file() and f"{FULL:g}" in page.read_text()
