"""Throughput of ``decompkit.course.grade.autograde``: one worker against several, in one run.

Run from the repository root, with the environment that has nbgrader:

    python bench/bench_grading.py          # 20 students x 5 notebooks (~8 min on 2 cores)
    python bench/bench_grading.py --quick  # 2 students, a smoke run (about a minute)

A scratch course (``nbgrader_config.py`` and ``solutions/`` copied from this checkout) gets
synthetic submissions of the whole assignment, built from the released notebooks: every third
student solves everything, every third fills in every other answer cell, every third hands
in the notebooks untouched. The same course is then graded from scratch several times, each
in a fresh copy: once with ``workers=1`` (the reference), once with ``workers=2`` and, when
the machine has more cores, once with ``workers=os.cpu_count()``.

For each run the script prints the wall time, the time per student (the total over the
number of students) and its ratio to the sequential run. The fixed set-up of one call (the
template gradebook, one ``nbgrader generate_assignment``) is timed separately; in the
sequential run every student is timed too, by wrapping the grader's per-student function, so
the median time per student is the work itself, without the set-up. Targets: under 10 s per
student for the whole assignment, and the parallel run at least 1.6x faster.

Grading is CPU-bound (the kernels and nbgrader itself), so the speed-up can only show on cores
nothing else is using: the script prints the load average, and the CPU seconds per student
(this process and every finished child: kernels, workers), which are the work itself whatever
the load. The kernels' own start-up notices go to stderr; add ``2>/dev/null`` to hide them.

After every run the gradebook is read back: each student x notebook x graded cell must hold a
grade with ``auto_score`` set, every score must equal the sequential run's, and the fully
solved students must have full marks. Any miss stops the script with a non-zero exit.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import resource
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat

try:
    import decompkit  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from decompkit.course import grade as course_grade

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "decomp"
KINDS = ("solved", "half", "untouched")
TARGET_PER_STUDENT = 10.0  # seconds, whole assignment
TARGET_SPEEDUP = 1.6


def _submission_helpers():
    """The test suite's submission builders (filled answer cells from the source notebooks)."""
    path = ROOT / "tests" / "grading" / "submissions.py"
    spec = importlib.util.spec_from_file_location("_bench_grading_submissions", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_course(folder: Path, students: int, helpers) -> dict[str, str]:
    """A course in ``folder`` with ``students`` submissions; returns each student's kind."""
    shutil.copy2(ROOT / "nbgrader_config.py", folder / "nbgrader_config.py")
    shutil.copytree(ROOT / "solutions", folder / "solutions")
    kinds = {}
    for i in range(students):
        kind = KINDS[i % len(KINDS)]
        student = f"{kind}{i:02d}"
        kinds[student] = kind
        inbox = folder / "submitted" / student / ASSIGNMENT
        inbox.mkdir(parents=True)
        for notebook in helpers.NOTEBOOKS:
            if kind == "solved":
                nb = helpers.submission(notebook)
            elif kind == "half":
                key = helpers.answer_key(notebook)
                half = {k: key[k] for k in list(key)[::2]}
                nb = helpers.submission(notebook, half, fill=False)
            else:
                nb = helpers.submission(notebook, fill=False)
            nbformat.write(nb, inbox / f"{notebook}.ipynb")
    return kinds


def read_grades(course: Path) -> dict[tuple[str, str, str], float | None]:
    """Every graded cell's auto_score in the course gradebook, by (student, notebook, cell)."""
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for submission in gb.find_assignment(ASSIGNMENT).submissions:
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.max_score:
                        key = (submission.student.id, notebook.name, grade.name)
                        found[key] = grade.auto_score
    return found


class _Timed:
    """Wrap a module function in place, recording the wall time of every call."""

    def __init__(self, module, name):
        self.module, self.name = module, name
        self.original = getattr(module, name)
        self.seconds: list[float] = []
        self.args: list[tuple] = []

    def __enter__(self):
        original, seconds, calls = self.original, self.seconds, self.args

        def timed(*args, **kwargs):
            calls.append(args)
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                seconds.append(time.perf_counter() - start)

        setattr(self.module, self.name, timed)
        return self

    def __exit__(self, *exc):
        setattr(self.module, self.name, self.original)
        return False


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (kernels, worker processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run(pristine: Path, scratch: Path, workers: int, per_student: bool) -> dict:
    """Grade a fresh copy of the course; wall time, set-up time and per-student times."""
    course = scratch / f"workers-{workers}"
    shutil.copytree(pristine, course)
    cpu = _cpu_seconds()
    with _Timed(course_grade, "prepare_gradebook") as setup:
        if per_student:
            # Only in-process calls can be timed this way: with workers > 1 the students are
            # graded in other processes, so that run reports its wall time only.
            with _Timed(course_grade, "_grade_student") as students:
                start = time.perf_counter()
                results = course_grade.autograde(course, ASSIGNMENT, workers=workers)
                total = time.perf_counter() - start
            each = {
                task["student"]: t
                for (task,), t in zip(students.args, students.seconds, strict=True)
            }
        else:
            start = time.perf_counter()
            results = course_grade.autograde(course, ASSIGNMENT, workers=workers)
            total = time.perf_counter() - start
            each = {}
    return {
        "workers": workers,
        "total": total,
        "cpu": _cpu_seconds() - cpu,
        "load": os.getloadavg()[0],
        "setup": sum(setup.seconds),
        "each": each,
        "results": results,
        "grades": read_grades(course),
    }


def check(outcome: dict, reference: dict | None, expected: set, kinds: dict, full: dict) -> None:
    """Stop the script unless every grade is there and equals the reference run's."""
    label = f"workers={outcome['workers']}"
    grades = outcome["grades"]
    failed = [r for r in outcome["results"] if r.status != "graded"]
    if failed:
        raise SystemExit(f"{label}: {len(failed)} notebooks failed to grade: {failed[:3]}")
    missing = sorted(expected - set(grades))
    unset = sorted(k for k, v in grades.items() if v is None)
    if missing or unset or set(grades) != expected:
        raise SystemExit(
            f"{label}: GRADES LOST - {len(missing)} missing, {len(unset)} without auto_score, "
            f"{len(set(grades) - expected)} unexpected; first missing: {missing[:3]}"
        )
    for student, kind in kinds.items():
        if kind != "solved":
            continue
        for notebook, points in full.items():
            got = sum(grades[(student, notebook, cell)] for cell in points)
            if got != sum(points.values()):
                raise SystemExit(
                    f"{label}: solved student {student} scored {got} of "
                    f"{sum(points.values())} on {notebook}; grading is broken"
                )
    if reference is not None and grades != reference["grades"]:
        differ = sorted(k for k in grades if grades[k] != reference["grades"][k])
        raise SystemExit(
            f"{label}: scores differ from the sequential run on {len(differ)} cells, "
            f"e.g. {[(k, grades[k], reference['grades'][k]) for k in differ[:3]]}"
        )


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 students: a smoke run")
    parser.add_argument("--students", type=int, help="number of students (default 20)")
    args = parser.parse_args(argv)
    students = args.students if args.students is not None else (2 if args.quick else 20)
    if students < 1:
        parser.error(f"--students must be >= 1, got {students}")
    cores = os.cpu_count() or 1
    pools = sorted({2, cores})

    import nbgrader
    import nbgrader.converters  # noqa: F401 - imported once here, outside every timed run

    given = sys.argv[1:] if argv is None else list(argv)
    command = shlex.join([sys.executable, os.path.relpath(__file__), *given])
    print(f"command: {command}")
    print(
        f"python {platform.python_version()}, nbgrader {nbgrader.__version__}, "
        f"{cores} cores, {students} students x whole assignment, mix {'/'.join(KINDS)}, "
        f"load average before: {os.getloadavg()[0]:.2f}"
    )

    helpers = _submission_helpers()
    full = {notebook: helpers.points(notebook) for notebook in helpers.NOTEBOOKS}
    with tempfile.TemporaryDirectory(prefix="decompkit-bench-grading-") as scratch:
        scratch = Path(scratch)
        pristine = scratch / "pristine"
        pristine.mkdir()
        kinds = build_course(pristine, students, helpers)
        expected = {
            (student, notebook, cell)
            for student in kinds
            for notebook, points in full.items()
            for cell in points
        }
        print(
            f"{len(kinds)} students x {len(full)} notebooks, "
            f"{len(expected)} graded cells to score\n"
        )

        sequential = run(pristine, scratch, 1, per_student=True)
        check(sequential, None, expected, kinds, full)
        outcomes = [sequential]
        for workers in pools:
            outcome = run(pristine, scratch, workers, per_student=False)
            check(outcome, sequential, expected, kinds, full)
            outcomes.append(outcome)

    print(
        f"{'workers':>7} {'total s':>9} {'set-up s':>9} {'s/student':>10} {'speed-up':>9} "
        f"{'cpu s/student':>14} {'load after':>11}"
    )
    for outcome in outcomes:
        print(
            f"{outcome['workers']:>7} {outcome['total']:9.1f} {outcome['setup']:9.2f} "
            f"{outcome['total'] / students:10.2f} "
            f"{sequential['total'] / outcome['total']:8.2f}x "
            f"{outcome['cpu'] / students:14.2f} {outcome['load']:11.2f}"
        )
    each = sequential["each"]
    median = statistics.median(each.values())
    rest = sequential["total"] - sequential["setup"] - sum(each.values())
    print(
        f"\nsequential run, one student (whole assignment): median {median:.2f} s, "
        f"min {min(each.values()):.2f} s, max {max(each.values()):.2f} s; median by kind: "
        + ", ".join(
            f"{kind} {statistics.median(t for s, t in each.items() if kinds[s] == kind):.2f} s"
            for kind in KINDS
            if kind in kinds.values()
        )
    )
    print(
        f"sequential run split: set-up {sequential['setup']:.2f} s (fixed per autograde call)"
        f" + students {sum(each.values()):.1f} s + the rest (course gradebook written) "
        f"{rest:.2f} s"
    )
    for outcome in outcomes[1:]:
        grading = outcome["total"] - outcome["setup"]
        sequential_grading = sequential["total"] - sequential["setup"]
        print(
            f"workers={outcome['workers']}: without the set-up the grading itself is "
            f"{sequential_grading / grading:.2f}x faster ({grading:.1f} s vs "
            f"{sequential_grading:.1f} s)"
        )

    per_student = sequential["total"] / students
    best = max(outcomes[1:], key=lambda o: sequential["total"] / o["total"])
    speedup = sequential["total"] / best["total"]
    print(
        f"\ntarget: < {TARGET_PER_STUDENT:.0f} s per student: {per_student:.2f} s "
        f"(total/students), median {median:.2f} s -> "
        f"{_verdict(max(per_student, median) < TARGET_PER_STUDENT)}; throughput with "
        f"workers={best['workers']}: {best['total'] / students:.2f} s per student"
    )
    print(
        f"target: parallel >= {TARGET_SPEEDUP}x faster: {speedup:.2f}x "
        f"with workers={best['workers']} -> {_verdict(speedup >= TARGET_SPEEDUP)}"
    )
    if students < 4:
        print("(too few students for the speed-up to mean much; run without --quick)")
    print(
        f"no grade lost: {len(expected)} graded cells scored in each of {len(outcomes)} runs, "
        "parallel scores equal to the sequential run's"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
