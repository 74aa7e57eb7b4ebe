"""The six hardening cases, each shown failing on plain nbgrader and passing in the kit.

The same hostile submissions of the bank are graded twice: by nbgrader 0.9.6 as it ships
(``nbgrader autograde`` with its default preprocessors, every student in one run in the
course folder: the pipeline before the hardening), and by the kit's grader (the bank's run,
shared through conftest.py). Each test asserts the defect on the first and its absence on the
second, so a test here fails if the kit's fix is removed *or* if the attack stops working on plain
nbgrader (then it no longer demonstrates anything and must be revised).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import write_submissions
from .submissions import ROOT, points

CHAIN, HORIZON = "01-chain-reliability", "02-long-horizons"
PLAIN_CONFIG = """c = get_config()
c.CourseDirectory.course_id = "decomp"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
c.Execute.timeout = 5
"""
ATTACKS = [
    "patched_modules",
    "input_transformer",
    "kernel_death",
    "invalid_json",
    "output_flood",
    "library_warned",
]


def _course(root: Path, students, config: str) -> Path:
    root.mkdir(parents=True)
    (root / "nbgrader_config.py").write_text(config)
    shutil.copytree(ROOT / "solutions" / "decomp", root / "solutions" / "decomp")
    write_submissions(root, students)
    return root


def _plain_autograde(root: Path) -> subprocess.CompletedProcess:
    bindir = str(Path(sys.executable).parent)
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(root)}
    generate = [sys.executable, "-m", "nbgrader", "generate_assignment", "decomp", "--force"]
    subprocess.run(generate, cwd=root, env=env, check=True, capture_output=True)
    command = [sys.executable, "-m", "nbgrader", "autograde", "decomp", "--force"]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)


def _score(root: Path, student: str, notebook: str) -> float:
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        try:
            return gb.find_submission_notebook(notebook, "decomp", student).score
        except MissingEntry:
            return 0.0


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """Plain nbgrader on the attacks (the writes-outside case gets a course of its own)."""
    root = _course(tmp_path_factory.mktemp("plain") / "course", ATTACKS, PLAIN_CONFIG)
    _plain_autograde(root)
    return root


@pytest.fixture(scope="module")
def kit(course):
    """The kit's grader on the same submissions: the bank's run (see conftest.py)."""
    return course[1]


FULL = sum(points(CHAIN).values())


@pytest.mark.parametrize("student", ["patched_modules", "input_transformer"])
def test_cases_1_and_2_patched_tests_no_longer_pass_wrong_answers(plain, kit, student):
    # Two answers are wrong (p_chain = p_prime = 0.5): they are worth 2 of the 14 points.
    assert _score(plain, student, CHAIN) == FULL  # plain nbgrader: the attack earns them
    assert kit[(student, CHAIN)].score == FULL - 2
    assert {k for k, v in kit[(student, CHAIN)].grades.items() if v == 0} == {
        "chain_success_value",
        "p_prime_value",
    }


def test_case_3_writes_outside_the_submission_stay_in_a_scratch_copy(tmp_path, course):
    # Alone in its course: on plain nbgrader it overwrites the gradebook the others need.
    root = _course(tmp_path / "plain", ["writes_outside"], PLAIN_CONFIG)
    _plain_autograde(root)
    assert (root / "nbgrader_config.py").read_text() == "overwritten by a submission"
    assert (root / "gradebook.db").read_text() == "overwritten by a submission"

    kit_root, results, _ = course  # the bank's run holds the same submission
    assert "overwritten" not in (kit_root / "nbgrader_config.py").read_text()
    assert (kit_root / "gradebook.db").read_bytes()[:15] == b"SQLite format 3"
    assert results[("writes_outside", HORIZON)].score == sum(points(HORIZON).values())


@pytest.mark.parametrize("student", ["kernel_death", "invalid_json"])
def test_case_4_one_broken_notebook_costs_only_itself(plain, kit, student):
    untouched = sum(points(HORIZON).values())
    assert _score(plain, student, HORIZON) == 0.0  # plain nbgrader gives up on the student
    assert kit[(student, HORIZON)].score == untouched
    assert kit[(student, CHAIN)].status == {"kernel_death": "kernel_died"}.get(
        student, "unreadable"
    )
    assert kit[(student, CHAIN)].flagged and kit[(student, CHAIN)].message


def test_case_5_output_is_capped_in_bytes(plain, course):
    stored = plain / "autograded" / "output_flood" / "decomp" / f"{CHAIN}.ipynb"
    assert stored.stat().st_size > 40_000_000  # plain nbgrader keeps the 50 MB line
    kept = course[0] / "autograded" / "output_flood" / "decomp" / f"{CHAIN}.ipynb"
    assert kept.stat().st_size < 1_000_000
    assert course[1][("output_flood", CHAIN)].score == FULL


def test_case_6_stderr_in_a_test_cell_costs_no_point(plain, kit):
    assert _score(plain, "library_warned", CHAIN) == FULL - 1  # plain: the warning costs it
    assert kit[("library_warned", CHAIN)].score == FULL
