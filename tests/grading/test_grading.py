"""The grading pipeline on a bank of submissions: correct, different, wrong and hostile.

One autograde run (two workers, a 5 s cell limit) grades the whole bank; every test below
reads its outcome. The bank doubles as a measurement of the grader as a check: phi is the
share of correct-but-different notebooks that lose a point, d the share of wrong items that
lose their points.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from .bank import ALL, CASES, FAILED
from .conftest import SUBMITTED_AT
from .submissions import NOTEBOOKS, points


def _expected(notebook, lose):
    full = points(notebook)
    if lose in (ALL, FAILED):
        return dict.fromkeys(full, 0.0)
    return {k: (0.0 if k in lose else v) for k, v in full.items()}


CHECKED = [
    (case.student, notebook, lose, case.status.get(notebook, "graded"))
    for case in CASES
    for notebook, lose in case.lose.items()
    if lose is not None
]


def _id(value) -> str:
    """A test id that is the same in every process (a set's order is not)."""
    if isinstance(value, (set, frozenset)):
        value = "{" + ", ".join(sorted(map(str, value))) + "}"
    return str(value)[:40]


@pytest.mark.parametrize(("student", "notebook", "lose", "status"), CHECKED, ids=_id)
def test_every_item_scores_what_it_must(course, student, notebook, lose, status):
    _, results, _ = course
    result = results[(student, notebook)]
    assert result.status == status, result.message
    if status != "graded":
        assert result.message and result.flagged
    got = {k: result.grades.get(k, 0.0) for k in points(notebook)}
    assert got == _expected(notebook, lose)


def test_gradebook_holds_every_student_and_notebook(course):
    root, results, _ = course
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        students = {s.id for s in gb.students}
        assert students == {case.student for case in CASES}
        for case in CASES:
            for notebook in case.notebooks:
                stored = gb.find_submission_notebook(notebook, "decomp", case.student)
                expected = results[(case.student, notebook)]
                assert stored.score == pytest.approx(expected.score)
                assert stored.flagged == expected.flagged


def test_the_submission_time_reaches_the_gradebook_and_the_feedback_folder(course):
    from nbgrader.api import Gradebook
    from nbgrader.utils import parse_utc

    root, _, _ = course
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        assert gb.find_submission("decomp", "solved").timestamp == parse_utc(SUBMITTED_AT)
        assert gb.find_submission("decomp", "kernel_death").timestamp is None
    copied = root / "autograded" / "solved" / "decomp" / "timestamp.txt"
    assert copied.read_text() == SUBMITTED_AT  # release_feedback reads it there


def test_a_submission_cannot_touch_the_course(course):
    root, results, before = course
    after = {p: p.read_bytes() for p in (root / "solutions").rglob("*") if p.is_file()}
    assert after == before
    assert "overwritten" not in (root / "nbgrader_config.py").read_text()
    assert (root / "gradebook.db").read_bytes()[:15] == b"SQLite format 3"
    assert results[("writes_outside", "02-long-horizons")].status == "graded"


def test_the_grader_as_a_check_has_d_1_and_phi_0(course):
    _, results, _ = course
    correct = [(c.student, nb) for c in CASES if c.kind == "different" for nb in c.lose]
    false_positives = [key for key in correct if results[key].score < sum(points(key[1]).values())]
    wrong_items = [
        (c.student, nb, item)
        for c in CASES
        if c.kind == "wrong"
        for nb, lose in c.lose.items()
        for item in (points(nb) if lose == ALL else lose)
    ]
    detected = [k for k in wrong_items if results[k[:2]].grades.get(k[2], 0.0) == 0.0]
    phi = len(false_positives) / len(correct)
    d = len(detected) / len(wrong_items)
    print(
        f"\ngrader as a check: d = {d:.3f} over {len(wrong_items)} wrong items, "
        f"phi = {phi:.3f} over {len(correct)} correct-but-different notebooks"
    )
    assert (d, phi) == (1.0, 0.0), (false_positives, set(wrong_items) - set(detected))


def test_export_and_feedback_with_nbgrader(course):
    root, results, _ = course
    bindir = str(Path(sys.executable).parent)
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(root)}
    run = [sys.executable, "-m", "nbgrader"]
    subprocess.run(
        [*run, "export", "--to", "grades.csv"], cwd=root, env=env, check=True, capture_output=True
    )
    rows = (root / "grades.csv").read_text().splitlines()
    assert len(rows) == 1 + len({c.student for c in CASES})
    solved = next(r for r in rows if r.startswith("decomp,") and ",solved," in r)
    total = sum(sum(points(nb).values()) for nb in NOTEBOOKS)
    assert f",{total:.1f}," in solved or f",{total}," in solved
    subprocess.run(
        [*run, "generate_feedback", "decomp", "--student", "solved"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )
    feedback = sorted((root / "feedback" / "solved" / "decomp").glob("*.html"))
    assert [p.stem for p in feedback] == NOTEBOOKS


def test_no_hidden_test_writes_to_stderr_on_correct_answers(course):
    # nbgrader scores a test cell 0 when it writes anything to stderr, so a warning raised
    # by a correct answer would cost points.
    root, _, _ = course
    for path in sorted((root / "autograded" / "solved" / "decomp").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("grade"):
                streams = [o.get("name") for o in cell.get("outputs", []) if "name" in o]
                assert "stderr" not in streams, (path.name, cell.metadata.nbgrader.grade_id)


def test_stored_output_is_capped_in_bytes(course):
    # 50 MB printed in one line: nbgrader's line limit would store it whole.
    root, results, _ = course
    stored = root / "autograded" / "output_flood" / "decomp" / "01-chain-reliability.ipynb"
    assert results[("output_flood", "01-chain-reliability")].status == "graded"
    assert stored.stat().st_size < 1_000_000
    text = stored.read_text()
    assert "output cut by the grader" in text


def test_integrity_scan_flags_hostile_submissions_only(course):
    root, results, _ = course
    flagged = {key for key, result in results.items() if result.flagged}
    assert ("kernel_death", "01-chain-reliability") in flagged  # os._exit
    assert ("writes_outside", "01-chain-reliability") in flagged  # writes through ../
    honest = {(c.student, nb) for c in CASES if c.kind != "hostile" for nb in c.notebooks}
    assert not flagged & honest
    report = (root / "integrity.csv").read_text()
    assert "kernel_death" in report and "solved" not in report
