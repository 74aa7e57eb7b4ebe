"""Throughput of ``decompkit.course.feedback``: a class's pages in parallel, then nothing,
then the one student whose grade changed; and how fast a wrong assignment is refused.

Run from the repository root, with the environment that has nbgrader:

    python bench/bench_feedback.py                  # 36 students x 6 notebooks
    python bench/bench_feedback.py --students 60    # a bigger class
    python bench/bench_feedback.py --sequential     # also one worker, for the speed-up

A scratch course (``nbgrader_config.py`` and ``solutions/`` copied from this checkout) gets
three students graded for real by ``decompkit.course.grade`` (one solves everything, one
half, one hands the notebooks in untouched; bench/bench_grading.py builds them). The class is
then made of copies of them, as the grader would have written them: the autograded
notebooks, the grading record and the gradebook's rows
(:func:`decompkit.course.gradebook.write_student`) under a new id each. The runs, each timed
from the command's start to its last page:

1. every page (``--all``) with ``--workers`` processes (default: the machine's cores, at
   most 4), which is the target: under 60 s for 36 students x 6 notebooks;
2. the same command again: every page up to date, nothing written (once through
   ``python -m decompkit.course feedback``, once through the light entry point
   :mod:`decompkit.course.feedback_command`, which needs no nbconvert for it);
3. one manual grade set in the gradebook (as formgrader does): that student's 6 pages only.

It prints wall and CPU seconds (the command and its workers), pages per second and the page
sizes (mean and largest; target: a mean under 300 kB), and checks that each run wrote what it
should. Then it times a wrong assignment name (``decmop``: one line, exit 2) through both entry
points; the target (under 2 s) is the light one's: ``python -m decompkit.course feedback``
reaches it once it dispatches to :mod:`decompkit.course.feedback_command`, and until then
imports nbconvert before it checks. Exit 1 when a target is missed or a run wrote the wrong
pages. Page writing is CPU-bound: the load average is printed before and after, and the CPU
seconds divided by the workers say what the run takes on cores nothing else uses.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

try:
    import decompkit  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from decompkit.course import grade as course_grade
from decompkit.course.gradebook import open_gradebook, write_student

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "decomp"
TARGET_SECONDS = 60.0  # every page of TARGET_CLASS students
TARGET_CLASS = 36
TARGET_MEAN_BYTES = 300_000
TARGET_REFUSAL = 2.0  # seconds for a wrong assignment name


def _bench_grading():
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_grading

    return bench_grading


def graded_course(folder: Path) -> list[str]:
    """A course in ``folder`` with three students graded for real; their ids."""
    helpers = _bench_grading()
    kinds = helpers.build_course(folder, 3, helpers._submission_helpers(), strip=False)
    run = course_grade.grade_class(folder, ASSIGNMENT, workers=2, kit_guard="report")
    if run.failed:
        raise SystemExit(f"grading the three students failed: {run.failed[:2]}")
    return sorted(kinds)


def clone(course: Path, base: str, student: str) -> None:
    """``student`` as a copy of ``base``: autograded notebooks, record and gradebook rows."""
    shutil.copytree(
        course / "autograded" / base / ASSIGNMENT, course / "autograded" / student / ASSIGNMENT
    )
    folder = course / "records" / ASSIGNMENT
    record = json.loads((folder / f"{base}.json").read_text(encoding="utf-8"))
    record["student"] = student
    (folder / f"{student}.json").write_text(json.dumps(record), encoding="utf-8")
    outcomes = [
        SimpleNamespace(
            notebook=name,
            scores={gid: item["score"] for gid, item in entry["items"].items()},
            flagged=entry["flagged"],
            comments={},
        )
        for name, entry in record["notebooks"].items()
    ]
    with open_gradebook(course / "gradebook.db", ASSIGNMENT) as gb:
        write_student(gb, ASSIGNMENT, student, outcomes)


def set_manual_grade(course: Path, student: str) -> None:
    """A manual score on the student's first graded cell, as formgrader stores one."""
    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        notebook = gb.find_submission_notebook("01-chain-reliability", ASSIGNMENT, student)
        grade = next(g for g in notebook.grades if g.max_score)
        grade.manual_score = grade.max_score
        gb.db.commit()


#: The command's light entry point (decompkit.course.feedback_command), as a script.
LIGHT = (
    "import sys; from decompkit.course.feedback_command import main; sys.exit(main(sys.argv[1:]))"
)


def timed(course: Path, *args: str, light: bool = False):
    """Seconds and CPU seconds of one feedback command in a fresh process, as the instructor
    runs it (``python -m decompkit.course feedback``, or with ``light`` the entry point that
    checks before importing nbconvert), and its outcome."""
    entry = ["-c", LIGHT] if light else ["-m", "decompkit.course", "feedback"]
    command = [sys.executable, *entry, *args, "--root", str(course)]
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    return time.perf_counter() - start, _children_cpu() - cpu, done


def _children_cpu() -> float:
    """CPU seconds of every finished child process (the command and its workers)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _last_line(done: subprocess.CompletedProcess) -> str:
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else done.stderr.strip()[-300:]


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=TARGET_CLASS, help="class size")
    parser.add_argument("--workers", type=int, default=min(os.cpu_count() or 1, 4))
    parser.add_argument("--sequential", action="store_true", help="also time one worker")
    args = parser.parse_args(argv)
    if args.students < 3:
        parser.error(f"--students must be >= 3, got {args.students}")

    import nbgrader

    given = sys.argv[1:] if argv is None else list(argv)
    print(f"command: {shlex.join([sys.executable, os.path.relpath(__file__), *given])}")
    print(
        f"python {platform.python_version()}, nbgrader {nbgrader.__version__}, "
        f"{os.cpu_count()} cores, {args.students} students, {args.workers} workers, "
        f"load average before: {os.getloadavg()[0]:.2f}"
    )
    problems = []
    with tempfile.TemporaryDirectory(prefix="decompkit-bench-feedback-") as scratch:
        course = Path(scratch) / "course"
        course.mkdir()
        start = time.perf_counter()
        bases = graded_course(course)
        for i in range(args.students - len(bases)):
            clone(course, bases[i % len(bases)], f"s{3000 + i}")
        notebooks = len(list((course / "autograded" / bases[0] / ASSIGNMENT).glob("*.ipynb")))
        pages = args.students * notebooks
        print(
            f"class made in {time.perf_counter() - start:.1f} s: 3 graded, "
            f"{args.students - 3} copies; {pages} pages to write\n"
        )

        runs = []
        if args.sequential:
            runs.append(("all, 1 worker", ["--all", "--workers", "1"], pages, False))
        runs += [
            (
                f"all, {args.workers} workers",
                ["--all", "--workers", str(args.workers)],
                pages,
                False,
            ),
            ("again, nothing changed", [], 0, False),
            ("again, light entry point", [], 0, True),
        ]
        results = {}
        print(f"{'run':<28} {'wall s':>7} {'cpu s':>7}  last line")
        for label, extra, expected, light in runs:
            seconds, cpu, done = timed(course, ASSIGNMENT, *extra, light=light)
            results[label] = (seconds, cpu)
            said = _last_line(done)
            print(f"{label:<28} {seconds:7.1f} {cpu:7.1f}  {said}")
            if done.returncode != 0 or not said.startswith(f"wrote {expected} feedback page"):
                problems.append(f"{label}: expected {expected} pages written, got: {said}")
        set_manual_grade(course, bases[0])
        seconds, cpu, done = timed(course, ASSIGNMENT, "--workers", str(args.workers))
        said = _last_line(done)
        print(f"{'one manual grade changed':<28} {seconds:7.1f} {cpu:7.1f}  {said}")
        if not said.startswith(f"wrote {notebooks} feedback pages for 1 student"):
            problems.append(f"after one manual grade: {said}")

        sizes = [p.stat().st_size for p in (course / "feedback").glob(f"*/{ASSIGNMENT}/*.html")]
        refusal, _, done = timed(course, "decmop")
        light, _, alone = timed(course, "decmop", light=True)
        if done.returncode == 0 or alone.returncode == 0:
            problems.append(f"a wrong assignment was accepted: {done.stderr or alone.stderr}")

    full, cpu = results[f"all, {args.workers} workers"]
    mean = statistics.mean(sizes)
    print(
        f"\nevery page, {args.workers} workers: {full:.1f} s for {args.students} students, "
        f"{pages / full:.1f} pages/s, {full / args.students:.2f} s per student; "
        f"{cpu:.1f} CPU s ({cpu / pages:.2f} per page), so {cpu / args.workers:.1f} s "
        f"on {args.workers} free cores"
    )
    if args.sequential:
        one = results["all, 1 worker"][0]
        print(f"one worker: {one:.1f} s, {pages / one:.1f} pages/s; speed-up {one / full:.2f}x")
    print(f"pages: {len(sizes)}, mean {mean / 1000:.0f} kB, largest {max(sizes) / 1000:.0f} kB")
    print(
        f"a wrong assignment: {refusal:.2f} s through `python -m decompkit.course feedback` "
        f"(exit {done.returncode}), {light:.2f} s through decompkit.course.feedback_command "
        f"(exit {alone.returncode}): {_last_line(alone)!r}"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")

    scaled = full * TARGET_CLASS / args.students
    print(
        f"target: every page of {TARGET_CLASS} students in < {TARGET_SECONDS:.0f} s: "
        f"{scaled:.1f} s -> {_verdict(scaled < TARGET_SECONDS)}"
    )
    print(
        f"target: mean page < {TARGET_MEAN_BYTES / 1000:.0f} kB: {mean / 1000:.0f} kB -> "
        f"{_verdict(mean < TARGET_MEAN_BYTES)}"
    )
    print(
        f"target: a wrong assignment refused in < {TARGET_REFUSAL:.0f} s: "
        f"python -m decompkit.course {refusal:.2f} s -> {_verdict(refusal < TARGET_REFUSAL)}, "
        f"feedback_command {light:.2f} s -> {_verdict(light < TARGET_REFUSAL)}"
    )
    missed = scaled >= TARGET_SECONDS or mean >= TARGET_MEAN_BYTES or light >= TARGET_REFUSAL
    for problem in problems:
        print(f"PROBLEM: {problem}")
    return 1 if missed or problems else 0


if __name__ == "__main__":
    sys.exit(main())
