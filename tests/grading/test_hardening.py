"""The hardening cases, in the kit: each attack of the bank gains nothing.

These hostile submissions each got through plain nbgrader 0.9.6 (``python
bench/bench_hardening.py`` grades them with nbgrader as it ships and with the kit, side by
side, and fails if plain nbgrader stops showing a defect). Here the kit's half is checked on
the bank's run (see conftest.py), on every test run.
"""

from __future__ import annotations

import pytest

from .submissions import points

CHAIN, HORIZON = "01-chain-reliability", "02-long-horizons"
FULL = sum(points(CHAIN).values())


@pytest.fixture(scope="module")
def kit(course):
    """The kit's grader on the hostile submissions: the bank's run (see conftest.py)."""
    return course[1]


@pytest.mark.parametrize("student", ["patched_modules", "input_transformer"])
def test_cases_1_and_2_patched_tests_no_longer_pass_wrong_answers(kit, student):
    # Two answers are wrong (p_chain = p_prime = 0.5): they are worth 2 of the 14 points.
    assert kit[(student, CHAIN)].score == FULL - 2
    assert {k for k, v in kit[(student, CHAIN)].grades.items() if v == 0} == {
        "chain_success_value",
        "p_prime_value",
    }


def test_case_3_writes_outside_the_submission_reach_nothing(course):
    root, results, _ = course  # the bank's run holds a submission that writes through ../
    assert "overwritten" not in (root / "nbgrader_config.py").read_text()
    assert (root / "gradebook.db").read_bytes()[:15] == b"SQLite format 3"
    assert results[("writes_outside", HORIZON)].score == sum(points(HORIZON).values())


@pytest.mark.parametrize("student", ["kernel_death", "invalid_json"])
def test_case_4_one_broken_notebook_costs_only_itself(kit, student):
    assert kit[(student, HORIZON)].score == sum(points(HORIZON).values())
    assert kit[(student, CHAIN)].status == {"kernel_death": "kernel_died"}.get(
        student, "unreadable"
    )
    assert kit[(student, CHAIN)].flagged and kit[(student, CHAIN)].message


def test_case_5_output_is_capped_in_bytes(course):
    kept = course[0] / "autograded" / "output_flood" / "decomp" / f"{CHAIN}.ipynb"
    assert kept.stat().st_size < 1_000_000
    assert course[1][("output_flood", CHAIN)].score == FULL


def test_case_6_stderr_in_a_test_cell_costs_no_point(kit):
    assert kit[("library_warned", CHAIN)].score == FULL
