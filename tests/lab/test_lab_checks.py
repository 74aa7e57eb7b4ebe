"""The lab notebook's answer checks (decompkit.lab.checks)."""

import re

import pytest

from decompkit.exercises.checks import CheckFailed
from decompkit.lab.checks import ITEMS, TITLES, check, diagnose, earned, expected
from decompkit.lab.tutorials import ForkJoinRun

RUN = ForkJoinRun("x", {"fetch_p": (1.0, 61.0), "fetch_q": (2.0, 63.0), "compare": (64, 84)}, 85)


def test_expected_values():
    assert expected("schema_rejects") == {"b", "d", "e"}
    assert expected("new_tasks") == {"write_code'", "run_tests'"}
    assert expected("plan_times") == (320, 120)
    assert expected("broken_kinds") == {"unknown_tool", "cycle", "dependency_without_placeholder"}
    with pytest.raises(ValueError, match="item must be one of .*, got 'overlap_ms'"):
        expected("overlap_ms")


@pytest.mark.parametrize(
    ("item", "answer"),
    [
        ("schema_rejects", ["e", "d", "b"]),
        ("new_tasks", {"run_tests'", "write_code'"}),
        ("plan_times", (320, 120)),
        ("plan_times", [320.0, 120.2]),
        ("broken_kinds", {"cycle", "unknown_tool", "dependency_without_placeholder"}),
        ("overlap_ms", 59.5),
    ],
)
def test_right_answers_are_on_track(item, answer, capsys):
    assert check(item, answer, run=RUN) is None  # nothing echoed under the line
    assert capsys.readouterr().out == f"[ok] {TITLES[item]}: on track\n"
    assert earned(item, answer, run=RUN)


@pytest.mark.parametrize("item", ITEMS)
def test_none_is_not_answered(item, capsys):
    assert check(item, None, run=RUN) is None
    assert capsys.readouterr().out == f"[ ] {TITLES[item]}: not answered yet\n"
    assert not earned(item, None, run=RUN)


@pytest.mark.parametrize(
    ("item", "answer", "hint"),
    [
        ("schema_rejects", {"b", "c", "d", "e"}, "well-formed: a schema checks the format"),
        ("schema_rejects", {"b", "d", "e", "f"}, "lax"),
        ("schema_rejects", {"b"}, "a missing field, or a number outside its allowed range"),
        ("schema_rejects", "bde", "expected a set of labels, got the str 'bde'"),
        ("new_tasks", {"write_code'", "run_tests'", "report"}, "it is not a new node"),
        ("new_tasks", {"write_code'", "run_tests"}, "never sent again"),
        ("new_tasks", {"write_code'"}, "needs a new test run of its own"),
        ("plan_times", (120, 320), "swapped"),
        ("plan_times", (300, 120), "the serial sum is off"),
        ("plan_times", (320, 100), "ends with the comparison"),
        ("plan_times", (320, 140), "the critical path is off"),
        ("plan_times", 320, r"expected a pair \(serial_ms, critical_ms\), got 320"),
        ("broken_kinds", {"cycle", "dependency_without_placeholder"}, "letter by letter"),
        ("broken_kinds", {"unknown_tool", "dependency_without_placeholder"}, "come back"),
        ("broken_kinds", {"unknown_tool", "cycle"}, "compare each step's depends_on"),
        (
            "broken_kinds",
            {"unknown_tool", "cycle", "placeholder_without_dependency"},
            "read the direction",
        ),
        ("overlap_ms", 0, "for how long did both run at once"),
    ],
)
def test_wrong_answers_get_a_one_line_hint_and_raise_only_in_strict_mode(
    item, answer, hint, capsys, monkeypatch
):
    monkeypatch.delenv("DECOMPKIT_STUDENT", raising=False)
    monkeypatch.delenv("DECOMPKIT_STRICT", raising=False)
    assert check(item, answer, run=RUN) is None  # a student's Run All goes on
    shown = capsys.readouterr().out
    assert re.match(rf"\[x\] {TITLES[item]}: .*{hint}", shown) and shown.count("\n") == 1, shown
    assert not earned(item, answer, run=RUN)
    monkeypatch.setenv("DECOMPKIT_STRICT", "1")  # kit.py check and the grader fail the cell
    with pytest.raises(CheckFailed, match=hint) as failed:
        check(item, answer, run=RUN)
    assert failed.value._render_traceback_() == [shown.rstrip("\n")]
    assert diagnose(item, answer, run=RUN).status in ("off", "invalid")


def test_bad_items():
    with pytest.raises(ValueError, match="item must be one of .*, got 'speed'"):
        check("speed", 1)
    with pytest.raises(ValueError, match="run must be the fork-and-join run"):
        check("overlap_ms", 60)
