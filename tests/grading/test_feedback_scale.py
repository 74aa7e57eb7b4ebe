"""Feedback for a whole class: pages written by several processes with a progress line, only
for students whose grades changed (``--all``: everyone), and a wrong assignment or student
refused in one line before nbgrader is imported.

The class is 32 students' grading records (tests/grading/classroom.py writes them as the
grader does); their pages come from the records, as for a notebook nbgrader could not grade.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from decompkit.course import feedback, feedback_plan

from .classroom import CHAIN, NUMERIC, chain_record, key_of, write_record
from .submissions import ROOT

STUDENTS = [f"s{2000 + i}" for i in range(32)]


def _answers(i: int) -> dict:
    """Student ``i`` gets the first ``i % 5`` numeric items wrong (twice the right value)."""
    key = key_of(STUDENTS[i])
    return {grade_id: 2 * key[grade_id] for grade_id in NUMERIC[: i % 5]}


@pytest.fixture
def klass(tmp_path):
    shutil.copy2(ROOT / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    (tmp_path / "solutions" / "decomp").mkdir(parents=True)
    for i, student in enumerate(STUDENTS):
        write_record(tmp_path, chain_record(student, _answers(i)))
    return tmp_path


def _page(root: Path, student: str) -> Path:
    return root / "feedback" / student / "decomp" / f"{CHAIN}.html"


def test_a_class_gets_every_page_from_two_processes(klass):
    run = feedback.generate(klass, "decomp", workers=2)
    assert sorted(run.written) == [_page(klass, s) for s in STUDENTS]
    assert run.current == ()
    for i in (0, 3, 31):
        page = " ".join(_page(klass, STUDENTS[i]).read_text(encoding="utf-8").split())
        assert f"Feedback for {STUDENTS[i]}" in page
        assert f"Score: {12 - i % 5} / 12" in page
    assert sorted(run.workers) == STUDENTS
    assert len(set(run.workers.values()) - {os.getpid()}) == 2  # two processes took a share


def test_a_second_run_writes_nothing(klass):
    feedback.generate(klass, "decomp", workers=2)
    before = {s: _page(klass, s).stat().st_mtime_ns for s in STUDENTS}
    run = feedback.generate(klass, "decomp", workers=2)
    assert run.written == ()
    assert sorted(run.current) == [_page(klass, s) for s in STUDENTS]
    assert {s: _page(klass, s).stat().st_mtime_ns for s in STUDENTS} == before


def test_a_regraded_student_is_written_again_and_no_one_else(klass):
    feedback.generate(klass, "decomp")
    wrong = {NUMERIC[0]: 3 * key_of(STUDENTS[7])[NUMERIC[0]]}
    write_record(klass, chain_record(STUDENTS[7], wrong))
    run = feedback.generate(klass, "decomp")
    assert run.written == (_page(klass, STUDENTS[7]),)
    assert len(run.current) == len(STUDENTS) - 1
    assert "Score: 11 / 12" in _page(klass, STUDENTS[7]).read_text(encoding="utf-8")


def test_a_deleted_page_or_stamp_is_written_again(klass):
    feedback.generate(klass, "decomp")
    _page(klass, STUDENTS[1]).unlink()
    (klass / "feedback" / STUDENTS[2] / "decomp" / feedback_plan.STAMP).unlink()
    run = feedback.generate(klass, "decomp")
    assert sorted(run.written) == [_page(klass, STUDENTS[1]), _page(klass, STUDENTS[2])]


def test_all_rewrites_every_page_and_student_only_that_one(klass):
    feedback.generate(klass, "decomp")
    assert len(feedback.generate(klass, "decomp", force=True).written) == len(STUDENTS)
    run = feedback.generate(klass, "decomp", [STUDENTS[4]], force=True)
    assert run.written == (_page(klass, STUDENTS[4]),) and run.current == ()


def test_the_stamp_says_what_the_pages_were_made_from(klass):
    feedback.generate(klass, "decomp", [STUDENTS[0]])
    stamp = json.loads(
        (klass / "feedback" / STUDENTS[0] / "decomp" / feedback_plan.STAMP).read_text()
    )
    request = feedback_plan.check_request(klass, "decomp", [STUDENTS[0]])
    assert stamp == {
        "fingerprint": feedback_plan.fingerprints(request)[STUDENTS[0]],
        "pages": [f"{CHAIN}.html"],
    }


# --- the command -----------------------------------------------------------------------------


def _command(root: Path, *args: str):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "decompkit.course", "feedback", *args, "--root", str(root)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip


def test_the_command_shows_progress_and_says_what_it_wrote(klass):
    done = _command(klass, "decomp", "--workers", "2")
    assert done.returncode == 0, done.stderr
    progress = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == len(STUDENTS) and progress[-1].startswith(f"[{len(STUDENTS)}/")
    assert all("1 page" in line for line in progress)
    assert done.stdout.splitlines()[-1] == (
        f"wrote {len(STUDENTS)} feedback pages for {len(STUDENTS)} students under feedback/; "
        "0 pages already up to date"
    )
    write_record(klass, chain_record(STUDENTS[6], {}))  # regraded: all right now
    again = _command(klass, "decomp")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-1] == (
        f"wrote 1 feedback page for 1 student under feedback/; {len(STUDENTS) - 1} pages "
        "already up to date (--all rewrites them)"
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["decmop"], "no assignment 'decmop' (assignments here: decomp); check the name"),
        (["decomp", "--student", "s9999"], "no student 's9999' graded for 'decomp'"),
        (["decomp", "--student", "S2001x"], "did you mean s2001"),
        (["decomp", "--workers", "0"], "--workers must be at least 1, got 0"),
    ],
)
def test_a_wrong_request_is_one_line_and_a_failure(klass, args, said):
    done = _command(klass, *args)
    assert done.returncode != 0
    assert said in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (klass / "feedback").exists()


def test_an_assignment_nothing_of_which_is_graded_is_said_so(klass):
    (klass / "solutions" / "other").mkdir()
    done = _command(klass, "other")
    assert done.returncode != 0
    assert "nothing of 'other' is graded yet" in done.stderr and "kit.py grade other" in done.stderr


_LIGHT = (
    "import sys; from decompkit.course.feedback_command import main\n"
    "status = main(sys.argv[1:])\n"
    "heavy = ('nbformat', 'nbconvert', 'nbgrader', 'jinja2')\n"
    "print(sorted(m for m in heavy if m in sys.modules))\n"
    "sys.exit(status)"
)


def _light(root: Path, *args: str):
    """The feedback command's light entry point in a fresh interpreter; the heavy modules it
    imported are the last line of its output."""
    command = [sys.executable, "-c", _LIGHT, *args, "--root", str(root)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_a_wrong_request_is_refused_without_notebook_machinery(klass):
    done = _light(klass, "decmop")
    assert done.returncode == 2
    assert (
        done.stderr == "error: no assignment 'decmop' (assignments here: decomp); check the name\n"
    )
    assert done.stdout.splitlines() == ["[]"]


def test_nothing_to_write_needs_no_notebook_machinery(klass):
    first = _light(klass, "decomp", "--student", STUDENTS[0])  # a page to write: the full path
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[-2].startswith("wrote 1 feedback page for 1 student")
    assert "nbconvert" in first.stdout.splitlines()[-1]
    again = _light(klass, "decomp", "--student", STUDENTS[0])
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == [
        "wrote 0 feedback pages for 0 students under feedback/; 1 page already up to date "
        "(--all rewrites them)",
        "[]",
    ]
