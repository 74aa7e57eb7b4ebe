"""What ``kit.py grade`` costs when little changed: a second run with nothing changed against
the first, and one late student graded alone, with where the late run's time goes.

Run from the repository root, with the environment that has nbgrader:

    python bench/bench_regrade.py              # 8 students x 6 notebooks
    python bench/bench_regrade.py --quick      # 3 students, a smoke run
    python bench/bench_regrade.py --workers 2

A scratch course (``nbgrader_config.py`` and ``solutions/`` copied from this checkout) gets
the synthetic submissions of ``bench_grading.py`` (solved / half / untouched). Each run is
the command an instructor types, ``python -m decompkit.course grade`` in a process of its
own, timed from start to exit:

1. the first run grades everyone;
2. the same command again, nothing changed: every student must be left as they were;
3. a late student hands in, and ``--student late`` grades them alone.

Then a second late student is graded alone inside this process with each step of the run
timed (the imports of the grading machinery, in a process of their own; the walls' check,
the fingerprints, the solutions read, the gradebook's check, the solutions' self-test, the
warm kernel process, the student, the kit's last check): where one student's fixed cost goes.

Targets: the second run under 0.40 of the first, and one student alone under
``TARGET_ALONE`` seconds. A miss, or a run that grades other students than it should, exits
non-zero.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

try:
    import decompkit  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_grading  # noqa: E402 - the course builder and timers of the throughput bench

ASSIGNMENT = "decomp"
TARGET_RATIO = 0.40  # second run (nothing changed) / first run
TARGET_ALONE = 20.0  # seconds, one student alone (six notebooks), the whole command


def _grade(course: Path, workers: int, *extra: str) -> tuple[float, list[str], str]:
    """Run the command; its seconds, the students it graded, its output."""
    command = [sys.executable, "-m", "decompkit.course", "grade", ASSIGNMENT,
               "--root", str(course), "--workers", str(workers), "--kit-guard", "report",
               *extra]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{shlex.join(command)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    graded = re.findall(r"^\[\s*\d+/\d+\] (\S+)  ", done.stderr, re.M)
    return seconds, sorted(graded), done.stdout


def _hand_in(course: Path, student: str, helpers) -> None:
    inbox = course / "submitted" / student / ASSIGNMENT
    inbox.mkdir(parents=True)
    for notebook in helpers.NOTEBOOKS:
        nbformat.write(helpers.submission(notebook), inbox / f"{notebook}.ipynb")


def _import_seconds() -> float:
    """What a new process pays to import the grading machinery (over a bare start)."""
    heavy = "import decompkit.course.grade, decompkit.course.engine.workers, nbgrader.api"
    found = []
    for code in ("pass", heavy):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        found.append(time.perf_counter() - start)
    return found[1] - found[0]


def _steps(course: Path, student: str) -> tuple[float, dict[str, float]]:
    """Grade ``student`` alone in this process; the seconds of each step of the run (the
    imports measured in a process of their own: this one has them already)."""
    from decompkit.course import fingerprint, gradebook
    from decompkit.course import grade as course_grade
    from decompkit.course.engine import notebooks, workers

    imported = _import_seconds()
    timed = {
        "walls' check": (course_grade, "walls_for"),
        "fingerprints": (fingerprint, "fingerprint"),
        "kit digest": (fingerprint, "kit_digest"),
        "solutions read": (notebooks, "load_source"),
        "gradebook check": (gradebook, "ensure_assignment"),
        "unchanged check": (gradebook, "final_scores"),
        "self-test": (workers, "self_test"),
        "warm kernel process": (workers._Worker, "__init__"),
        "the student": (workers._Worker, "grade"),
        "kit's last check": (workers.Plan, "finish"),
    }
    with contextlib.ExitStack() as stack:
        timers = {
            name: stack.enter_context(bench_grading._Timed(owner, attr))
            for name, (owner, attr) in timed.items()
        }
        begin = time.perf_counter()
        run = course_grade.grade_class(
            course, ASSIGNMENT, students=[student], workers=1, kit_guard="report"
        )
        total = time.perf_counter() - begin
    if sorted(run.graded) != [student]:
        raise SystemExit(f"graded {sorted(run.graded)} alone, expected [{student!r}]")
    steps = {"imports": imported, **{n: sum(t.seconds) for n, t in timers.items()}}
    return imported + total, steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 students: a smoke run")
    parser.add_argument("--students", type=int, help="number of students (default 8)")
    parser.add_argument("--workers", type=int, default=1, help="students at once (default 1)")
    args = parser.parse_args(argv)
    students = args.students if args.students is not None else (3 if args.quick else 8)
    if students < 1:
        parser.error(f"--students must be >= 1, got {students}")
    given = sys.argv[1:] if argv is None else list(argv)
    print(f"command: {shlex.join([sys.executable, os.path.relpath(__file__), *given])}")
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, {students} students x "
        f"6 notebooks, workers={args.workers}, load average before: {os.getloadavg()[0]:.2f}"
    )
    helpers = bench_grading._submission_helpers()
    with tempfile.TemporaryDirectory(prefix="decompkit-bench-regrade-") as scratch:
        course = Path(scratch) / "course"
        course.mkdir()
        kinds = bench_grading.build_course(course, students, helpers, strip=False)
        first, graded, _ = _grade(course, args.workers)
        if graded != sorted(kinds):
            raise SystemExit(f"the first run graded {graded}, expected every student")
        second, graded, out = _grade(course, args.workers)
        if graded or f", {students} unchanged" not in out.splitlines()[0]:
            raise SystemExit(f"nothing changed, yet the second run graded {graded}:\n{out}")
        _hand_in(course, "late", helpers)
        alone, graded, _ = _grade(course, args.workers, "--student", "late")
        if graded != ["late"]:
            raise SystemExit(f"--student late graded {graded}")
        _hand_in(course, "later", helpers)
        inside, steps = _steps(course, "later")
        shutil.rmtree(course, ignore_errors=True)

    ratio = second / first
    print(f"\nfirst run, every student graded:   {first:7.1f} s")
    print(f"second run, nothing changed:       {second:7.1f} s  ({ratio:.2f} of the first)")
    print(f"one late student alone (--student): {alone:6.1f} s")
    print(f"\none student alone inside this process, {inside:.1f} s, by step:")
    for name, seconds in steps.items():
        print(f"  {name:<22} {seconds:6.2f} s")
    rest = inside - sum(steps.values())
    print(f"  {'the rest':<22} {rest:6.2f} s")
    ok_ratio, ok_alone = ratio < TARGET_RATIO, alone < TARGET_ALONE
    print(
        f"\ntarget: second run < {TARGET_RATIO:.2f} of the first: {ratio:.2f} -> "
        f"{'met' if ok_ratio else 'MISSED'}"
    )
    print(
        f"target: one student alone < {TARGET_ALONE:.0f} s: {alone:.1f} s -> "
        f"{'met' if ok_alone else 'MISSED'}"
    )
    return 0 if ok_ratio and ok_alone else 1


if __name__ == "__main__":
    sys.exit(main())
