"""Every process a grading run starts ends with it: Ctrl-C, a terminate, or a kill of the run.

The grader is started under a keeper (a small Python process that is a child subreaper, so
that every process of the run that outlives its parent is re-parented to the keeper, not to
init). The run is stopped at a moment (while its workers and warm kernel processes start, or
in the middle of the class) in one of three ways: SIGINT to its process group (what Ctrl-C
in a terminal sends), SIGTERM to the grader (a service manager, ``kill``), SIGKILL to the
grader (an out-of-memory kill, a crash). Once the grader has ended, no process of the run may
be left; a stop the grader sees prints one line, never a traceback, and exits 130 or 143.
The same holds through ``python3 kit.py grade`` (Ctrl-C; a terminate or a kill of kit.py
is marked as expected to fail until kit.py ends its child with it).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import nbformat
import pytest

from .submissions import ROOT, submission

CHAIN = "01-chain-reliability"
STUDENTS = [f"s{n:02d}" for n in range(1, 7)]

#: The keeper: a child subreaper that runs the command, waits for it, then waits up to
#: GRACE seconds for every other descendant to end and writes what is left (pid, command
#: line) to a file, and kills it so that a failing test leaves nothing behind.
KEEPER = textwrap.dedent(
    """
    import ctypes, json, os, signal, subprocess, sys, time
    PR_SET_CHILD_SUBREAPER = 36
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    report, grace, command = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    if os.environ.pop("KEEPER_IGNORES_SIGINT", ""):  # as a script's `command &` starts it
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    run = subprocess.Popen(command, start_new_session=True)
    status = run.wait()

    def left():
        found = []
        for child in open(f"/proc/self/task/{os.getpid()}/children").read().split():
            try:
                os.waitpid(int(child), os.WNOHANG)
                with open(f"/proc/{child}/stat") as stat:
                    if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                        continue
                with open(f"/proc/{child}/cmdline", "rb") as cmdline:
                    found.append([int(child), cmdline.read().replace(b"\\0", b" ").decode()])
            except (OSError, ChildProcessError):
                pass
        return found

    end = time.monotonic() + grace
    while left() and time.monotonic() < end:
        time.sleep(0.1)
    survivors = left()
    with open(report, "w") as out:
        json.dump({"status": status, "survivors": survivors}, out)
    for pid, _ in survivors:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    while True:
        try:
            os.wait()
        except ChildProcessError:
            break
    """
)
GRACE = 5.0  # seconds a process of the run may take to end once the grader has ended


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    root = tmp_path_factory.mktemp("hygiene")
    shutil.copy2(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    (root / "solutions" / "decomp").mkdir(parents=True)
    shutil.copy2(ROOT / "solutions" / "decomp" / f"{CHAIN}.ipynb", root / "solutions" / "decomp")
    for student in STUDENTS:
        nb = submission(CHAIN, fill=True)
        nb.cells.append(nbformat.v4.new_code_cell("import time\ntime.sleep(1)"))
        folder = root / "submitted" / student / "decomp"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{CHAIN}.ipynb")
    return root


@pytest.fixture
def course(template, tmp_path):
    """A class none of whose students is graded yet."""
    return shutil.copytree(template, tmp_path / "course")


def _descendants(pid: int) -> list[tuple[int, str, int]]:
    """Every live descendant of ``pid``: ``(pid, command line, parent's pid)``."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            with open(f"/proc/{parent}/task/{parent}/children") as listing:
                children = [int(c) for c in listing.read().split()]
        except OSError:
            continue
        for child in children:
            try:
                with open(f"/proc/{child}/cmdline", "rb") as cmdline:
                    found.append((child, cmdline.read().replace(b"\0", b" ").decode(), parent))
            except OSError:
                continue
            todo.append(child)
    return found


def _grader(keeper: int, deadline: float) -> int:
    while time.monotonic() < deadline:
        for pid, cmdline, _ in _descendants(keeper):
            if "decompkit.course" in cmdline:
                return pid
        time.sleep(0.05)
    raise AssertionError("the grader did not start")


def _stop(course, tmp_path, moment, how, workers=2, kit=False, background=False):
    """Run the grader under the keeper (through ``kit.py grade`` if ``kit``; with Ctrl-C
    ignored if ``background``), stop it (or kit.py) ``how`` at ``moment``; what the keeper
    saw."""
    report = tmp_path / "left.json"
    start = ["python3", str(ROOT / "kit.py")] if kit else [sys.executable, "-m", "decompkit.course"]
    command = [*start, "grade", "decomp", "--root", str(course), "--workers", str(workers),
               "--kit-guard", "report"]  # fmt: skip
    keeper = subprocess.Popen(
        [sys.executable, "-c", KEEPER, str(report), str(GRACE), *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "KEEPER_IGNORES_SIGINT": "1" if background else ""},
    )
    deadline = time.monotonic() + 120
    _grader(keeper.pid, deadline)
    with open(f"/proc/{keeper.pid}/task/{keeper.pid}/children") as listing:
        leader = int(listing.read().split()[0])  # the grader, or kit.py in front of it
    seen = []
    if moment == "start":  # imports, the solutions' self-test: no other process yet
        time.sleep(1.0)
    elif moment == "setup":  # a warm kernel process has started, no student is graded yet
        while not any("forkserver" in c for _, c, _ in _descendants(keeper.pid)):
            assert time.monotonic() < deadline and keeper.poll() is None, "no warm process"
            time.sleep(0.05)
    else:  # a student is saved, others are being graded
        for line in keeper.stderr:
            seen.append(line)
            if line.startswith(f"[1/{len(STUDENTS)}]"):
                break
    running = _descendants(keeper.pid)
    if how == signal.SIGINT:
        os.killpg(leader, signal.SIGINT)  # as a terminal does: the foreground process group
    elif how == TWICE:  # an impatient instructor: Ctrl-C again while the run stops
        os.killpg(leader, signal.SIGINT)
        time.sleep(0.3)
        try:
            os.killpg(leader, signal.SIGINT)
        except ProcessLookupError:
            pass  # stopped already
    else:
        os.kill(leader, how)
    try:
        out, err = keeper.communicate(timeout=180)
    except subprocess.TimeoutExpired:  # the run hangs: end it here, not in a later test
        for pid, _, _ in _descendants(keeper.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        keeper.kill()
        keeper.communicate()
        raise
    left = json.loads(report.read_text())
    return left, running, out, "".join(seen) + err


TWICE = "Ctrl-C twice"
STOPS = [signal.SIGINT, TWICE, signal.SIGTERM, signal.SIGKILL]


@pytest.mark.parametrize("moment", ["start", "setup", "class"])
@pytest.mark.parametrize("how", STOPS, ids=["SIGINT", "SIGINT-twice", "SIGTERM", "SIGKILL"])
def test_no_process_of_the_run_outlives_it(course, tmp_path, moment, how):
    if moment == "start" and how == signal.SIGKILL:
        pytest.skip("nothing but the grader runs yet: a kill leaves nothing to end")
    left, running, out, err = _stop(course, tmp_path, moment, how)
    if moment != "start":
        assert any("forkserver" in c for _, c, _ in running), running  # what had to be ended
    assert left["survivors"] == [], err[-3000:]
    if how == signal.SIGKILL:
        assert left["status"] == -signal.SIGKILL
        return
    assert left["status"] == {signal.SIGINT: 130, TWICE: 130, signal.SIGTERM: 143}[how], err[-3000:]
    assert "Traceback" not in out + err, err[-3000:]
    assert "interrupted" in err.splitlines()[-1], err[-3000:]


def test_one_worker_ends_its_warm_process_on_a_terminate(course, tmp_path):
    """With one worker too, the students are graded in a worker process: a stop that landed
    in the grader's own kernel client (its event loop) once left a run hanging for good."""
    left, running, out, err = _stop(course, tmp_path, "class", signal.SIGTERM, workers=1)
    forkservers = [parent for _, c, parent in running if "forkserver" in c]
    assert forkservers, running
    graders = {pid for pid, c, _ in running if "decompkit.course" in c}
    grader = {pid for pid, c, parent in running if pid in graders and parent not in graders}
    assert len(grader) == 1, running
    assert grader.isdisjoint(forkservers), running  # a worker process starts the kernels
    assert left["survivors"] == [], err[-3000:]
    assert left["status"] == 143, err[-3000:]
    assert "Traceback" not in out + err, err[-3000:]


def test_a_run_started_in_the_background_stops_on_a_terminate(course, tmp_path):
    """A shell script's ``command &`` starts it with Ctrl-C ignored; SIGTERM still stops it."""
    left, running, out, err = _stop(course, tmp_path, "class", signal.SIGTERM, background=True)
    assert any("forkserver" in c for _, c, _ in running), running
    assert left["survivors"] == [], err[-3000:]
    assert left["status"] == 143, err[-3000:]
    assert "Traceback" not in out + err, err[-3000:]


@pytest.mark.parametrize(
    "how",
    [
        signal.SIGINT,
        signal.SIGTERM,
        signal.SIGKILL,
    ],
    ids=["SIGINT", "SIGTERM", "SIGKILL"],
)
def test_kit_py_grade_ends_every_process_of_the_run(course, tmp_path, how):
    # During set-up: a run left behind still has the whole class to grade, longer than GRACE.
    left, running, out, err = _stop(course, tmp_path, "setup", how, kit=True)
    assert any("forkserver" in c for _, c, _ in running), running
    assert left["survivors"] == [], err[-3000:]
    if how == signal.SIGKILL:
        return
    assert left["status"] == 128 + how, err[-3000:]
    assert "Traceback" not in out + err, err[-3000:]
