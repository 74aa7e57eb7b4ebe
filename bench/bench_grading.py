"""Throughput of ``decompkit.course.grade``: one worker against two (and all cores), one run,
with every kernel inside its walls as ``kit.py grade`` runs them, and what the walls cost.

Run from the repository root, with the environment that has nbgrader:

    python bench/bench_grading.py                    # 20 students x 6 notebooks
    python bench/bench_grading.py --quick            # 3 students, a smoke run
    python bench/bench_grading.py --strip-magic      # without `%matplotlib inline`
    python bench/bench_grading.py --strip-magic --skip-figures   # and no figure drawn

A scratch course (``nbgrader_config.py`` and ``solutions/`` copied from this checkout) gets
synthetic submissions of the whole assignment, built from the released notebooks: every third
student solves everything, every third fills in every other answer cell, every third hands
in the notebooks untouched. ``--strip-magic`` removes ``%matplotlib inline`` from the copies of
the sources and the submissions (a notebook that has it imports matplotlib in every kernel);
``--skip-figures`` also tags every cell that only draws a figure ``explore`` (grading skips
those), which is where the notebooks are going: no figure on the graded path.
The same course is then graded from scratch several times, each in a fresh copy: once with
``workers=1`` (the reference), once with ``workers=2`` and, when the machine has more cores,
once with ``workers=os.cpu_count()``, all inside walls (:mod:`decompkit.course.engine.sandbox`);
then once more with ``workers=1`` and no walls (``--no-sandbox``), which is what the walls
cost. ``--no-walls-run`` leaves that last run out.

For each run the script prints the wall time, the time per student (total / students) and its
ratio to the sequential run, with the fixed set-up of one call (the gradebook's copy of the
assignment, the solutions' self-test, the kernels' warm process) timed apart. In the
sequential run every student and every notebook is timed, so the median per student is the
work itself. Before the runs it times where a notebook's time goes: starting a kernel the
kit's way (forked from a warm process) against jupyter_client's ordinary start, and judging
the answers in the grader. Targets: at most 5 s per student for the whole assignment
(sequential), and the two-worker run at least 1.8x faster.

Grading is CPU-bound (the kernels and the grader), so the speed-up can only show on cores
nothing else is using: the script prints the load average and the CPU seconds per student
(this process and every finished child), which are the work itself whatever the load. Inside
walls a kernel's own CPU time is not among them: its namespace is killed, not waited for, so
no process collects it; compare the wall times there.

After every run the gradebook is read back: each student x notebook x graded cell must hold a
grade with ``auto_score`` set, every score must equal the sequential run's, and the fully
solved students must have full marks. Any miss stops the script with a non-zero exit.
"""

from __future__ import annotations

import argparse
import asyncio
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
from decompkit.course import gradebook as course_gradebook
from decompkit.course.engine import workers as course_workers

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "decomp"
KINDS = ("solved", "half", "untouched")
TARGET_PER_STUDENT = 5.0  # seconds, whole assignment, one worker
TARGET_SPEEDUP = 1.8


def _submission_helpers():
    """The test suite's submission builders (filled answer cells from the source notebooks)."""
    path = ROOT / "tests" / "grading" / "submissions.py"
    spec = importlib.util.spec_from_file_location("_bench_grading_submissions", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _draws_only(source: str) -> bool:
    import ast

    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    return bool(body) and all(
        isinstance(node, (ast.Import, ast.ImportFrom))
        or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", "").startswith(("plot_", "reliability_explorer")))
        for node in body
    ) and any(isinstance(node, ast.Expr) for node in body)  # fmt: skip


def _strip(nb, figures: bool = True):
    for cell in nb.cells:
        if cell.cell_type == "code":
            lines = cell.source.splitlines()
            cell.source = "\n".join(x for x in lines if x.strip() != "%matplotlib inline")
            tags = cell.metadata.setdefault("tags", [])
            if not figures and not cell.metadata.get("nbgrader") and _draws_only(cell.source):
                if "explore" not in tags:
                    tags.append("explore")
            if not tags:
                del cell.metadata["tags"]
    return nb


def build_course(folder: Path, students: int, helpers, strip: bool, figures=True) -> dict:
    """A course in ``folder`` with ``students`` submissions; returns each student's kind."""
    shutil.copy2(ROOT / "nbgrader_config.py", folder / "nbgrader_config.py")
    (folder / "solutions" / ASSIGNMENT).mkdir(parents=True)
    for path in sorted((ROOT / "solutions" / ASSIGNMENT).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        nb = _strip(nb, figures) if strip else nb
        nbformat.write(nb, folder / "solutions" / ASSIGNMENT / path.name)
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
            nbformat.write(_strip(nb, figures) if strip else nb, inbox / f"{notebook}.ipynb")
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
    """Wrap a function of a class or module in place, recording the wall time of every call."""

    def __init__(self, owner, name):
        self.owner, self.name = owner, name
        self.original = getattr(owner, name)
        self.seconds: list[float] = []
        self.results: list = []

    def __enter__(self):
        original, seconds, results = self.original, self.seconds, self.results

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                result = original(*args, **kwargs)
                results.append(result)
                return result
            finally:
                seconds.append(time.perf_counter() - start)

        setattr(self.owner, self.name, timed)
        return self

    def __exit__(self, *exc):
        setattr(self.owner, self.name, self.original)
        return False


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (kernels, worker processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run(pristine: Path, scratch: Path, workers: int, sandbox: bool = True) -> dict:
    """Grade a fresh copy of the course; wall time, set-up time and per-student times."""
    course = scratch / f"workers-{workers}-{'walls' if sandbox else 'no-walls'}"
    shutil.copytree(pristine, course)
    cpu = _cpu_seconds()
    with (
        _Timed(course_workers.Plan, "prepare") as plan,
        _Timed(course_gradebook, "ensure_assignment") as book,
        _Timed(course_workers._Worker, "__init__") as warm,
        _Timed(course_workers._Worker, "grade") as students,
    ):
        start = time.perf_counter()
        # kit_guard="report": the bench runs from a checkout; an edit made meanwhile stays
        outcome = course_grade.grade_class(
            course, ASSIGNMENT, workers=workers, kit_guard="report", sandbox=sandbox
        )
        total = time.perf_counter() - start
    # With workers > 1 the students and the warm processes are in other processes: only the
    # sequential run times them one by one.
    each = {
        student: t for (student, _, _), t in zip(students.results, students.seconds, strict=True)
    }
    notebooks = {}
    for _, outcomes, _ in students.results:
        for o in outcomes:
            notebooks.setdefault(o.notebook, []).append(o.seconds)
    return {
        "workers": workers,
        "walls": sandbox,
        "total": total,
        "cpu": _cpu_seconds() - cpu,
        "load": os.getloadavg()[0],
        "setup": sum(plan.seconds) + sum(book.seconds) + sum(warm.seconds),
        "each": each,
        "notebooks": notebooks,
        "run": outcome,
        "grades": read_grades(course),
    }


def check(outcome: dict, reference: dict | None, expected: set, kinds: dict, full: dict) -> None:
    """Stop the script unless every grade is there and equals the reference run's."""
    label = f"workers={outcome['workers']}{'' if outcome['walls'] else ', no walls'}"
    grades = outcome["grades"]
    failed = outcome["run"].failed
    if failed:
        raise SystemExit(f"{label}: {len(failed)} notebooks not graded in full: {failed[:3]}")
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


async def _kernel_starts(folder: Path, count: int) -> dict[str, float]:
    """Median seconds to a ready kernel: forked from a warm process inside walls, the same
    without walls, and jupyter_client's ordinary start."""
    from decompkit.course.engine.environment import python_folders, walled_environment
    from decompkit.course.engine.kernels import KernelFactory
    from decompkit.course.engine.sandbox import Walls

    found = {}
    kinds = {
        "walls": (True, Walls(python_folders())),
        "fork": (True, None),
        "jupyter_client": (False, None),
    }
    for kind, (fork, walls) in kinds.items():
        env = walled_environment(dict(os.environ)) if walls else dict(os.environ)
        factory = KernelFactory(folder, env, ["import numpy"], fork=fork, walls=walls)
        if fork:
            factory._start_server()
        seconds = []
        for _ in range(count):
            start = time.perf_counter()
            kernel = await factory.start({}, {})
            seconds.append(time.perf_counter() - start)
            await kernel.kill()
        factory.close()
        found[kind] = statistics.median(seconds)
    return found


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 students: a smoke run")
    parser.add_argument("--students", type=int, help="number of students (default 20)")
    parser.add_argument("--strip-magic", action="store_true",
                        help="remove `%%matplotlib inline` from the notebooks first")  # fmt: skip
    parser.add_argument("--skip-figures", action="store_true",
                        help="with --strip-magic: tag cells that only draw `explore`")  # fmt: skip
    parser.add_argument("--no-walls-run", action="store_true",
                        help="leave out the sequential run without walls")  # fmt: skip
    args = parser.parse_args(argv)
    students = args.students if args.students is not None else (3 if args.quick else 20)
    if students < 1:
        parser.error(f"--students must be >= 1, got {students}")
    cores = os.cpu_count() or 1
    pools = sorted({2, cores})

    import nbgrader

    given = sys.argv[1:] if argv is None else list(argv)
    command = shlex.join([sys.executable, os.path.relpath(__file__), *given])
    print(f"command: {command}")
    print(
        f"python {platform.python_version()}, nbgrader {nbgrader.__version__}, "
        f"{cores} cores, {students} students x whole assignment, mix {'/'.join(KINDS)}, "
        f"%matplotlib inline {'stripped' if args.strip_magic else 'kept'}, figures "
        f"{'skipped' if args.skip_figures and args.strip_magic else 'drawn'}, "
        f"load average before: {os.getloadavg()[0]:.2f}"
    )

    helpers = _submission_helpers()
    full = {notebook: helpers.points(notebook) for notebook in helpers.NOTEBOOKS}
    with tempfile.TemporaryDirectory(prefix="decompkit-bench-grading-") as scratch:
        scratch = Path(scratch)
        starts = asyncio.run(_kernel_starts(Path(tempfile.mkdtemp(dir=scratch)), 5))
        print(
            f"kernel start to ready (median of 5): forked from the warm process inside walls "
            f"{starts['walls']:.3f} s, without walls {starts['fork']:.3f} s, jupyter_client's "
            f"ordinary start {starts['jupyter_client']:.2f} s "
            f"({starts['jupyter_client'] / starts['walls']:.1f}x the walled fork)"
        )
        pristine = scratch / "pristine"
        pristine.mkdir()
        kinds = build_course(pristine, students, helpers, args.strip_magic,
                             figures=not args.skip_figures)  # fmt: skip
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
        sequential = run(pristine, scratch, 1)
        check(sequential, None, expected, kinds, full)
        outcomes = [sequential]
        for workers in pools:
            if workers >= 2 and students >= 2:
                outcome = run(pristine, scratch, workers)
                check(outcome, sequential, expected, kinds, full)
                outcomes.append(outcome)
        bare = None
        if not args.no_walls_run:
            bare = run(pristine, scratch, 1, sandbox=False)
            check(bare, sequential, expected, kinds, full)

    print(
        f"{'workers':>7} {'walls':>6} {'total s':>9} {'set-up s':>9} {'s/student':>10} "
        f"{'speed-up':>9} {'cpu s/student':>14} {'load after':>11}"
    )
    # "cpu s/student" inside walls leaves the kernels out (the module docstring says why).
    for outcome in [*outcomes, *([bare] if bare else [])]:
        setup = f"{outcome['setup']:9.2f}" if outcome["workers"] == 1 else f"{'-':>9}"
        print(
            f"{outcome['workers']:>7} {'yes' if outcome['walls'] else 'no':>6} "
            f"{outcome['total']:9.1f} {setup} "
            f"{outcome['total'] / students:10.2f} "
            f"{sequential['total'] / outcome['total']:8.2f}x "
            f"{outcome['cpu'] / students:14.2f} {outcome['load']:11.2f}"
        )
    each = sequential["each"]
    median = statistics.median(each.values())
    print(
        f"\nsequential run, one student (whole assignment): median {median:.2f} s, "
        f"min {min(each.values()):.2f} s, max {max(each.values()):.2f} s; by kind: "
        + ", ".join(
            f"{kind} {statistics.median(t for s, t in each.items() if kinds[s] == kind):.2f} s"
            for kind in KINDS
            if kind in kinds.values()
        )
    )
    print(
        "sequential run, one notebook (median): "
        + ", ".join(
            f"{name[:2]} {statistics.median(times):.2f} s"
            for name, times in sorted(sequential["notebooks"].items())
        )
    )
    rest = sequential["total"] - sequential["setup"] - sum(each.values())
    print(
        f"sequential run split: set-up {sequential['setup']:.2f} s (fixed per call: the "
        f"gradebook's assignment, the solutions' self-test, the warm kernel process) + "
        f"students {sum(each.values()):.1f} s + the rest {rest:.2f} s"
    )

    if bare is not None:
        cost = (sequential["total"] - bare["total"]) / students
        print(
            f"what the walls cost, one worker: {sequential['total'] / students:.2f} s per "
            f"student inside walls, {bare['total'] / students:.2f} s without "
            f"({cost:+.2f} s per student, {sequential['total'] / bare['total'] - 1:+.1%})"
        )
    per_student = sequential["total"] / students
    if len(outcomes) > 1:
        best = max(outcomes[1:], key=lambda o: sequential["total"] / o["total"])
        speedup = sequential["total"] / best["total"]
    print(
        f"\ntarget: <= {TARGET_PER_STUDENT:.0f} s per student, one worker: median "
        f"{median:.2f} s, total/students {per_student:.2f} s -> "
        f"{_verdict(median <= TARGET_PER_STUDENT)}"
    )
    if len(outcomes) > 1:
        print(
            f"target: two workers >= {TARGET_SPEEDUP}x faster: {speedup:.2f}x with "
            f"workers={best['workers']} -> {_verdict(speedup >= TARGET_SPEEDUP)}"
        )
    if students < 6:
        print("(too few students for the speed-up to mean much; run without --quick)")
    print(
        f"no grade lost: {len(expected)} graded cells scored in each of {len(outcomes)} runs, "
        "parallel scores equal to the sequential run's"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
