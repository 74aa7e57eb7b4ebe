"""The class report on a class with planned mistakes, one copier and one lecture-numbers
student, written as grading records (no notebook runs: the report never re-runs code)."""

from __future__ import annotations

import csv
import json
import random
from collections import Counter

import pytest

from decompkit.course import report
from decompkit.course.__main__ import main as course_main
from decompkit.course.engine.record import load
from decompkit.course.key import answer_key
from decompkit.exercises.params import params

from .classroom import CHAIN, NUMERIC, chain_record, key_of, notebook_record, write_record


def _planned(student: str, *items: str) -> tuple[dict, dict]:
    """Answers with the planned mistakes ``items`` made on the student's own numbers."""
    P = params("chain", student)
    wrong = {
        "chain_success_value": (P.p * P.n, "multiplied_p_by_n"),
        "p_prime_value": (P.p + (1 - P.p) * P.d, "retry_always_right"),
        "k_attempts_value": (1 - P.k * (1 - P.p), "k_times_the_miss"),
    }
    return {g: wrong[g][0] for g in items}, {g: wrong[g][1] for g in items}


def _class(root):
    plan = {
        "s01": (),
        "s02": ("chain_success_value",),
        "s03": (),
        "s04": ("chain_success_value", "p_prime_value"),
        "s05": ("chain_success_value", "p_prime_value"),
        "s06": ("k_attempts_value",),
    }
    for student, items in plan.items():
        answers, mistakes = _planned(student, *items)
        if student == "s05":
            answers["effective_rate_value"] = None
        write_record(root, chain_record(student, answers, mistakes=mistakes))
    copied = key_of("s03")  # s07 typed in s03's numbers
    write_record(root, chain_record("s07", {g: copied[g] for g in NUMERIC}))
    lecture = key_of(None)  # s08 worked with the lecture's numbers
    write_record(root, chain_record("s08", {g: lecture[g] for g in NUMERIC}))
    write_record(
        root,
        chain_record("s09", {}, status="timeout", message="cell 8 ran past the 30 s limit",
                     flags=("cell 12: reads the answer key (exercises.chain.key)",)),
    )  # fmt: skip


@pytest.fixture
def graded(tmp_path):
    _class(tmp_path)
    return tmp_path


def test_each_planned_mistake_is_counted_under_its_name(graded):
    result = report.analyse(load(graded, "decomp"), "decomp")
    items = result.items[CHAIN]
    assert items["chain_success_value"]["mistakes"] == Counter({"multiplied_p_by_n": 3})
    assert items["p_prime_value"]["mistakes"] == Counter({"retry_always_right": 2})
    assert items["k_attempts_value"]["mistakes"] == Counter({"k_times_the_miss": 1})
    assert items["half_life_value"]["mistakes"] == Counter()
    assert items["effective_rate_value"]["unanswered"] == 1
    assert items["chain_success_value"]["title"] == "A1 chain_success"
    # s01, s03, s06 and the timed-out s09 (not run) are not right on A1: 3 planned + s07/s08
    assert items["chain_success_value"]["right"] == 3


def test_the_copier_is_flagged_with_the_right_classmate(graded):
    result = report.analyse(load(graded, "decomp"), "decomp")
    found = {(m.student, m.source) for m in result.matches}
    assert found == {("s07", "s03"), ("s08", "lecture")}
    copier = next(m for m in result.matches if m.student == "s07")
    assert len(copier.items) == copier.wrong >= report.MIN_MATCHES
    assert "the numbers of s03" in copier.describe()


def test_the_page_is_self_contained_and_says_it_all(graded):
    folder = report.write(graded, "decomp")
    page = (folder / "report.html").read_text()
    assert "the numbers of s03" in page and "the lecture&#x27;s numbers" in page
    assert "multiplied_p_by_n</b> &times;3" in page
    assert "<svg" in page and "src=" not in page and "<script" not in page
    assert "timeout: cell 8 ran past the 30 s limit" in page
    assert "integrity (flagged): cell 12: reads the answer key" in page
    rows = list(csv.DictReader(open(folder / "items.csv", encoding="utf-8")))
    a1 = next(r for r in rows if r["grade_id"] == "chain_success_value")
    assert a1["mistakes"] == "multiplied_p_by_n x3" and a1["students"] == "9"
    students = {
        r["student"]: r for r in csv.DictReader(open(folder / "students.csv", encoding="utf-8"))
    }
    assert "the numbers of s03" in students["s07"]["matches"]
    assert students["s01"]["matches"] == "" and students["s03"]["matches"] == ""


def test_a_rerun_after_a_regrade_shows_who_changed(graded):
    report.write(graded, "decomp")
    page = (report.write(graded, "decomp") / "report.html").read_text()
    assert "No score changed since the report of" in page
    regraded = chain_record("s02", {})  # s02's A1 regraded: now right
    write_record(graded, regraded)
    folder = report.write(graded, "decomp")
    page = (folder / "report.html").read_text()
    assert "<td>s02</td><td>01-chain-reliability</td><td>A1 chain_success</td>" in page
    result = report.analyse(
        load(graded, "decomp"), "decomp", json.loads((folder / "previous.json").read_text())
    )
    assert sorted(result.changes) == [
        ("s02", CHAIN, "A1 chain_success", 0.0, 1.0),
        ("s02", CHAIN, "total", 11.0, 12.0),
    ]
    # another run with no new grade still shows the last change
    assert "A1 chain_success" in (report.write(graded, "decomp") / "report.html").read_text()


def test_the_command_needs_records(tmp_path, capsys):
    assert course_main(["report", "--root", str(tmp_path)]) == 1
    assert "no grading records of 'decomp'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "text, value",
    [("0.5", 0.5), ("np.float64(0.5)", 0.5), ("3", 3.0), ("True", None), ("'0.5'", None),
     ("{0.5}", None), (None, None), ("nan", None), ("1e999", float("inf"))],
)  # fmt: skip
def test_number_reads_only_one_real(text, value):
    assert report.number(text) == value


def test_a_notebook_not_handed_in_is_listed_apart_and_counts_nowhere(graded):
    record = chain_record("s10", {})
    record["notebooks"][CHAIN].update(status="missing", message="not handed in", score=0.0)
    for item in record["notebooks"][CHAIN]["items"].values():
        item.update(score=0.0, status="not_run", answer=None, message="")
    write_record(graded, record)
    found = report.analyse(load(graded, "decomp"), "decomp")
    assert found.missing == {CHAIN: ["s10"]}
    assert "s10" not in found.scores[CHAIN]  # no zero in the score distribution
    assert all(student != "s10" for student, _, _ in found.flags)
    assert all(row["n"] == 9 for row in found.items[CHAIN].values())  # s01..s09 only
    page = (report.write(graded, "decomp") / "report.html").read_text()
    assert f"<b>{CHAIN}</b>: 1 of 10 (s10)" in page


def _independent_class(root, size: int, seed: int) -> list[str]:
    """``size`` students who work alone: each rounds three answers to two significant digits
    (most wrong answers look like this) and makes a planned mistake on a fourth; one more,
    s000, copies every number of s001."""
    rng = random.Random(seed)
    students = [f"s{i:03d}" for i in range(1, size)]
    for student in students:
        key = key_of(student)
        rounded = rng.sample([g for g in NUMERIC if g != "chain_success_value"], 3)
        answers = {g: float(f"{key[g]:.2g}") for g in rounded}
        planned, mistakes = _planned(student, "chain_success_value")
        write_record(root, chain_record(student, answers | planned, mistakes=mistakes))
    copied = key_of("s001")
    write_record(root, chain_record("s000", {g: copied[g] for g in NUMERIC}))
    return students


def _dag_class(root, size: int, seed: int) -> None:
    """``size`` students of the DAG notebook: s000 copies every number of s001; the others
    work alone and most miss the makespan by a slot or two, which the notebook asks twice
    (the spurious edge leaves it as it is); whole numbers of a few dozen values, so some
    classmate's right makespan is a wrong one's by chance."""
    rng = random.Random(seed)
    for i in range(1, size):
        student = f"s{i:03d}"
        key = {r.grade_id: r.answer for r in answer_key(student, ["dag"])}
        answers = {}
        if rng.random() < 0.8:
            wrong = key["makespan_a_value"] + rng.choice([-2, -1, 1, 2])
            answers = {"makespan_a_value": wrong, "spurious_makespan_value": wrong}
        if rng.random() < 0.3:
            answers["slack_value"] = key["slack_value"] + rng.choice([-1, 1])
        write_record(root, notebook_record(student, "dag", answers))
    copied = {r.grade_id: r.answer for r in answer_key("s001", ["dag"])}
    numbers = {g: v for g, v in copied.items() if report.number(repr(v)) is not None}
    write_record(root, notebook_record("s000", "dag", numbers))


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("notebook", ["chain", "dag"])
def test_a_class_of_40_names_the_copier_and_no_one_else_with_the_chance(tmp_path, notebook, seed):
    (_independent_class if notebook == "chain" else _dag_class)(tmp_path, 40, seed)
    result = report.analyse(load(tmp_path, "decomp"), "decomp")
    assert [(m.student, m.source) for m in result.matches] == [("s000", "s001")]
    copier = result.matches[0]
    assert 0 < copier.chance <= report.CHANCE
    assert "by chance" in copier.describe()
    page = (report.write(tmp_path, "decomp") / "report.html").read_text()
    assert "by chance" in page and f"{report.CHANCE:g}" in page


def test_items_with_few_values_or_asked_twice_count_at_most_once():
    from decompkit.course import chance

    spread = chance.spread("dag")
    assert "count_orders_a_value" not in spread.kept  # one answer for every id
    assert "makespan_a_value" in spread.kept
    assert "spurious_makespan_value" not in spread.kept  # the same number for every id
