"""One tolerance rule for every number an answer holds, stated on the page and kept by the
hidden tests, the visible checks and the report: four significant digits, rounded or cut,
pass; two do not (unless the two digits are also the exact value's first four)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from decompkit.exercises.params import EXERCISES, params
from decompkit.grading import close

ROOT = Path(__file__).resolve().parents[1]
#: The first 100 of test_variants' ids: the suite runs the files that draw many students in one
#: process (conftest.DRAWS_MANY), where each student's numbers are drawn once.
IDS = [f"s{number:04d}" for number in range(100)]
SOLUTIONS = sorted((ROOT / "solutions" / "decomp").glob("*.ipynb"))
HIDDEN = re.compile(r"close_\((\w+), expected_\(\"(\w+)\", \"(\w+)\"\)(, rtol=[^)]*)?\)")


def _hidden_comparisons() -> list[tuple[str, str, str]]:
    """(notebook, item, tolerance argument or "") of every hidden test that calls close_."""
    found = []
    for path in SOLUTIONS:
        for cell in json.loads(path.read_text())["cells"]:
            for match in HIDDEN.finditer("".join(cell["source"])):
                found.append((match[2], match[3], match[4] or ""))
    return found


def _significant(x: float, digits: int, how) -> float:
    scale = 10 ** (digits - 1 - math.floor(math.log10(abs(x))))
    # Written out and read back: 3.1e10 comes out as 3.1e10, not 30999999999.999996.
    return float(f"{how(x * scale) / scale:.{digits - 1}e}")


def test_a_hidden_test_compares_a_number_by_the_rule_or_exactly():
    comparisons = _hidden_comparisons()
    assert len(comparisons) >= 30
    assert {extra for _, _, extra in comparisons} <= {"", ", rtol=0"}


def _graded_by_the_rule() -> list[tuple[str, str]]:
    return sorted({(nb, item) for nb, item, extra in _hidden_comparisons() if not extra})


@pytest.mark.slow  # 100 students' numbers in every notebook
@pytest.mark.parametrize(("notebook", "item"), _graded_by_the_rule())
def test_four_digits_pass_and_two_digits_fail_for_every_id(notebook, item):
    exercise = EXERCISES[notebook]
    for who in IDS:
        P = params(notebook, who)
        value = float(exercise.key(P)[item])
        rounded, cut, up = (_significant(value, 4, how) for how in (round, math.trunc, math.ceil))
        two = _significant(value, 2, round)
        for answer in (rounded, cut):
            assert close(answer, value), (who, answer, value)
            assert exercise.diagnose(item, answer, P).status == "ok", (who, answer, value)
        if close(two, value):  # only when the two digits are also four: 0.63 for 0.62994
            assert two in (rounded, cut, up), (who, two, value)
        else:
            assert exercise.diagnose(item, two, P).status in ("close", "off"), (who, two)


@pytest.mark.slow  # 100 students' numbers in every notebook
def test_two_digits_pass_about_one_time_in_fifty():
    """Two digits are off by up to 50 units of the fourth and pass within one unit: about
    2 % of answers, by the luck of the exact value's digits (8 % under the 0.1 % rule).
    Answers that two digits give exactly (a progress of 3/4 is 0.75) are right, not lucky,
    and not counted."""
    passed = total = 0
    for notebook, item in _graded_by_the_rule():
        for who in IDS:
            value = float(EXERCISES[notebook].key(params(notebook, who))[item])
            two = _significant(value, 2, round)
            if math.isclose(two, value, rel_tol=1e-12):
                continue
            passed += close(two, value)
            total += 1
    assert total >= 2000  # most answers need more than two digits
    assert passed / total <= 0.03, passed / total


def test_the_pages_state_the_rule_the_checks_keep():
    by_the_rule = {EXERCISES[notebook].file for notebook, _ in _graded_by_the_rule()}
    assert len(by_the_rule) >= 4
    for path in SOLUTIONS:
        text = "".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"])
        assert "0.1 %" not in text and "0.5 %" not in text, path.name
        if path.stem in by_the_rule:
            assert "**4 significant digits**" in text, path.name
    students = (ROOT / "docs" / "students.md").read_text()
    assert "0.1 %" not in students and "4 significant digits" in students
