"""A grading run stopped half way (Ctrl-C, then a kill) leaves no student half written.

A class starts with every score 0 in the gradebook (as an earlier run left it); solved
notebooks are then graded, and the run is stopped while it works: by SIGINT (what Ctrl-C
sends), then by SIGKILL. After each stop every student in the gradebook must be whole: all
of the old grades or all of the new ones, never a mix, never a grade left unset.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

import nbformat
import pytest

from .submissions import ROOT, points, submission

CHAIN = "01-chain-reliability"
STUDENTS = [f"s{n:02d}" for n in range(1, 6)]
FULL = sum(points(CHAIN).values())


def _old_grades(root) -> None:
    """Every student in the gradebook with 0 on every item, as a finished earlier run left it."""
    from decompkit.course.engine.runner import NotebookOutcome
    from decompkit.course.gradebook import open_gradebook, prepare_gradebook, write_student

    prepare_gradebook(root, "decomp", root / "gradebook.db")
    zero = NotebookOutcome(CHAIN, "graded", scores=dict.fromkeys(points(CHAIN), 0.0))
    with open_gradebook(root / "gradebook.db", "decomp") as gb:
        for student in STUDENTS:
            write_student(gb, "decomp", student, [zero])


def _write(root, solved: bool) -> None:
    for student in STUDENTS:
        nb = submission(CHAIN, fill=solved)
        nb.cells.append(nbformat.v4.new_code_cell("import time\ntime.sleep(0.5)"))
        folder = root / "submitted" / student / "decomp"
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / f"{CHAIN}.ipynb")


def _command(root):
    # --force: every run grades the whole class, the students the last run saved too, so that
    # each stop lands at the student it counts to (test_regrade.py: a run without it).
    return [sys.executable, "-m", "decompkit.course", "grade", "decomp", "--root", str(root),
            "--workers", "1", "--kit-guard", "report", "--force"]  # fmt: skip


def _stop_after(root, done: int, how: int):
    """Run the grader; send ``how`` once ``done`` students are reported; its exit and output."""
    process = subprocess.Popen(
        _command(root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    seen = []
    for line in process.stderr:
        seen.append(line)
        if line.startswith(f"[{done}/{len(STUDENTS)}]"):
            process.send_signal(how)
            break
    out, err = process.communicate(timeout=120)
    return process.returncode, out, "".join(seen) + err


def _scores(root) -> dict:
    """``{student: [score of every graded cell]}``; fails on any cell left without a score."""
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for sub in gb.find_assignment("decomp").submissions:
            cells = [g.auto_score for nb in sub.notebooks for g in nb.grades]
            assert None not in cells, f"{sub.student.id} has grades without a score"
            found[sub.student.id] = cells
    return found


def _whole(root) -> dict:
    """``{student: "old" | "new"}`` - and an assertion that nobody is in between."""
    state = {}
    for student, cells in _scores(root).items():
        total = sum(cells)
        assert total in (0.0, FULL), f"{student} is half written: {cells}"
        state[student] = "new" if total == FULL else "old"
    assert sorted(state) == STUDENTS
    return state


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("stopped")
    shutil.copy2(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    (root / "solutions" / "decomp").mkdir(parents=True)
    shutil.copy2(ROOT / "solutions" / "decomp" / f"{CHAIN}.ipynb", root / "solutions" / "decomp")
    _old_grades(root)
    assert set(_whole(root).values()) == {"old"}
    _write(root, solved=True)
    return root


def test_ctrl_c_saves_whole_students_and_says_how_to_go_on(course):
    status, out, err = _stop_after(course, 2, signal.SIGINT)
    assert status == 130, err[-2000:]
    assert "interrupted:" in err and "Run the same command again" in err
    assert "Traceback" not in out + err
    state = _whole(course)
    assert list(state.values())[:2] == ["new", "new"]  # graded in order: the first two saved
    assert "old" in state.values()


def test_a_kill_leaves_each_student_as_before_or_as_graded(course):
    status, _, _ = _stop_after(course, 3, signal.SIGKILL)
    assert status == -signal.SIGKILL
    state = _whole(course)
    assert list(state.values())[:3] == ["new"] * 3
    rest = [f"--student={s}" for s, value in state.items() if value == "old"]
    again = subprocess.run(_command(course) + rest, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert set(_whole(course).values()) == {"new"}
    # what the killed run left (its marker, a record it had not put in place) is gone
    assert not os.path.exists(course / "records" / ".grading-run.json")
    assert not [p for p in (course / "records" / "decomp").iterdir() if p.name.startswith(".")]


# A Ctrl-C that lands inside a read of the gradebook (SQLAlchemy fetching rows) made SQLAlchemy
# drop the connection half way and log "Exception closing connection" or "Error closing
# cursor" with a traceback, or Python print "Exception ignored in ..." from a collector hook,
# above the kit's one line "interrupted: ...". Each read is held whole; Ctrl-C acts after it.
PROBE = r"""
import os, random, signal, sys, time
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import Engine

from decompkit.course import export, grade

root, chain, full, tries = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
run = grade.Run("decomp", [chain], {chain: full}, unchanged=sys.argv[5:])
reads = {
    "the end-of-run table": lambda: grade._table(root, run),
    "the export's grades": lambda: export.read_grades(root, "decomp"),
}
queries = []
event.listen(Engine, "after_cursor_execute", lambda *_: queries.append(1))

def counted(read):
    queries.clear()
    read()
    return len(queries)

def interrupt_at_first_query(*_):
    if not queries:
        os.kill(os.getpid(), signal.SIGINT)

for name, read in reads.items():
    whole = counted(read)
    event.listen(Engine, "before_cursor_execute", interrupt_at_first_query)
    try:
        counted(read)
        print(f"{name}: Ctrl-C was lost")
    except KeyboardInterrupt:
        if len(queries) != whole:
            print(f"{name}: Ctrl-C stopped it after {len(queries)} of {whole} queries")
    event.remove(Engine, "before_cursor_execute", interrupt_at_first_query)

signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGINT))
for name, read in reads.items():
    start = time.perf_counter()
    read()
    took = time.perf_counter() - start
    for _ in range(tries):
        try:
            signal.setitimer(signal.ITIMER_REAL, random.uniform(0.0, took))
            read()
            signal.setitimer(signal.ITIMER_REAL, 0)
        except KeyboardInterrupt:
            pass
print("done")
"""


def test_ctrl_c_during_a_read_of_the_gradebook_waits_for_it_and_prints_nothing(course):
    probe = [sys.executable, "-c", PROBE, str(course), CHAIN, str(FULL), "150", *STUDENTS]
    done = subprocess.run(probe, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == "done\n"
    assert done.stderr == ""


def test_a_read_of_the_gradebook_lets_go_of_its_rows_while_ctrl_c_is_held(course, monkeypatch):
    """The gradebook's rows are objects whose clean-up runs when the last reference goes; one
    that went after the hold (a loop variable of the read) met a Ctrl-C there, and Python
    printed "Exception ignored in ... InstanceState._cleanup" with a traceback."""
    from sqlalchemy.orm.state import InstanceState

    from decompkit.course import export
    from decompkit.course.export import fill_names

    held = []
    cleanup = InstanceState._cleanup

    def watched(state, ref):
        held.append(signal.getsignal(signal.SIGINT) is not signal.default_int_handler)
        return cleanup(state, ref)

    monkeypatch.setattr(InstanceState, "_cleanup", watched)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert export.read_grades(course, "decomp")[2]  # rows of students
    fill_names(course)
    assert held and all(held), f"{held.count(False)} of {len(held)} rows let go after the hold"


HELD = r"""
import os, signal, threading
from decompkit.course.gradebook import uninterrupted

# A thread started before the hold (as numpy's BLAS threads are) may be the one the kernel
# hands a process's SIGINT to.
threading.Thread(target=threading.Event().wait, daemon=True).start()
said = []
try:
    with uninterrupted():
        os.kill(os.getpid(), signal.SIGINT)
        with uninterrupted():
            os.kill(os.getpid(), signal.SIGINT)
            said.append("inner done")
        said.append("outer done")
    said.append("not stopped")
except KeyboardInterrupt:
    said.append("stopped")
signal.signal(signal.SIGINT, signal.SIG_IGN)
with uninterrupted():
    os.kill(os.getpid(), signal.SIGINT)
said.append("ignored stays ignored")
print(", ".join(said))
"""


def test_a_held_ctrl_c_acts_once_after_the_outermost_block_whatever_thread_it_reached():
    done = subprocess.run([sys.executable, "-c", HELD], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == "inner done, outer done, stopped, ignored stays ignored\n"
