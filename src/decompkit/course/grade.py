"""Autograding a class: every submission of an assignment into the gradebook, none lost.

``python -m decompkit.course grade [ASSIGNMENT]`` (``python3 kit.py grade``) grades
``submitted/<student>/<assignment>/`` against ``solutions/<assignment>/``:

* Before any student code runs, the grader runs every instructor's notebook through its own
  hidden tests (so the judging code is imported, and known to pass the solutions), reads the
  kit's installed files once, and gives the kernels a private copy of them.
* Each notebook runs in a fresh kernel of its own, inside walls, under the student's id
  (:mod:`decompkit.course.engine`), bounded per cell, per notebook and per student; its
  answers are read out and judged here. A notebook that fails costs that notebook only,
  named with the reason.
* Each student's scores go into ``gradebook.db`` in one transaction, with the grading record
  ``records/<assignment>/<student>.json`` and the executed notebooks in ``autograded/``: after
  a crash, a kill or Ctrl-C the gradebook holds every student as before the run or as graded
  in it, never in between. The integrity scan's findings go to ``integrity.csv`` / ``.txt``.
* Students are graded ``--workers`` at a time, each worker a process of its own; only this
  process writes the gradebook.

It prints a progress line while it works, a table of every score at the end, and exits 1 when
a notebook could not be graded in full, 2 on a mistake in the command (each explained in one
line), 130 when interrupted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..exercises.ids import IdError, normalise_id
from .engine import record as records
from .engine.environment import walls_for
from .engine.notebooks import load_source
from .engine.runner import FAILED, Limits
from .engine.workers import NotGraded, Plan, grade_all
from .gradebook import ensure_assignment, open_gradebook, write_student
from .integrity import integrity_files
from .progress import progress_line
from .sanitize import safe_to_serve
from .settings import GradingError, settings
from .submissions import find_submissions, read_collected

__all__ = ["NotebookGrade", "Run", "autograde", "grade_class", "main"]


@dataclass
class NotebookGrade:
    """The outcome of grading one notebook of one student.

    ``grades`` maps each graded cell's grade_id to its score; ``status`` is ``"graded"`` or
    one of ``"missing"``, ``"unreadable"``, ``"timeout"``, ``"kernel_died"``,
    ``"time_limit"``, ``"failed"`` with the reason in ``message``.
    """

    student: str
    notebook: str
    status: str
    grades: dict[str, float] = field(default_factory=dict)
    message: str = ""
    flagged: bool = False  # could not be graded in full, or the integrity scan flagged it

    @property
    def score(self) -> float:
        return float(sum(self.grades.values()))


# --- the run ---------------------------------------------------------------------------------


@dataclass
class Run:
    """Everything a grading run did: per student the outcomes, and what it left out."""

    assignment: str
    notebooks: list[str]
    maxima: dict
    graded: dict = field(default_factory=dict)  # student -> [NotebookOutcome]
    left_out: list = field(default_factory=list)
    problems: list = field(default_factory=list)  # lines about the run itself
    seconds: float = 0.0
    workers: int = 1
    interrupted: bool = False
    walls: object = None  # the kernels' walls (None: graded without)

    @property
    def failed(self) -> list:
        return [(s, o) for s, outs in self.graded.items() for o in outs if o.status in FAILED]


def _known(root: Path, source_dir: str) -> list[str]:
    base = root / source_dir
    return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def grade_class(
    root,
    assignment: str = "decomp",
    *,
    students=None,
    workers: int = 1,
    timeout: float | None = None,
    notebook_limit: float | None = None,
    student_limit: float | None = None,
    fork_kernels: bool = True,
    kit_guard: str = "restore",
    sandbox: bool = True,
    progress=None,
) -> Run:
    """Grade ``root/submitted`` into ``root/gradebook.db``; see the module docstring.

    Raises
    ------
    GradingError
        For a mistake in the request: not a course folder, an unknown assignment, nothing
        collected, an unknown student, a bad number of workers or a bad limit.
    """
    started = time.monotonic()
    root = Path(root).resolve()
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise GradingError(f"--workers must be a whole number >= 1, got {workers!r}")
    conf = settings(root)
    walls = walls_for(conf["bounds"]) if sandbox else None  # before anything else is done
    limits = conf["limits"]
    for name, value in (
        ("timeout", timeout),
        ("notebook-limit", notebook_limit),
        ("student-limit", student_limit),
    ):
        if value is not None and not value > 0:
            raise GradingError(f"--{name} must be a number of seconds > 0, got {value!r}")
    limits = Limits(
        cell=float(timeout or limits.cell),
        notebook=float(notebook_limit or limits.notebook),
        student=float(student_limit or limits.student),
        output_bytes=limits.output_bytes,
    )
    folder = root / conf["source"] / assignment
    paths = sorted(folder.glob("*.ipynb")) if folder.is_dir() else []
    if not paths:
        known = _known(root, conf["source"])
        hint = f" (assignments here: {', '.join(known)})" if known else ""
        raise GradingError(
            f"no assignment {assignment!r} in {conf['source']}/{hint}; check the name"
        )
    sources = {}
    for path in paths:
        try:
            sources[path.stem] = load_source(path)
        except Exception as error:  # noqa: BLE001 - nbformat raises many unrelated types
            raise GradingError(
                f"the solution notebook {path.relative_to(root)} cannot be read "
                f"({type(error).__name__}); fix it (python3 kit.py check {path.relative_to(root)})"
            ) from None
    found, left_out = find_submissions(root, conf["submitted"], assignment, list(sources))
    for student in [s for s, sub in found.items() if not sub.files]:
        left_out.append(
            f"{student}: no notebook of {assignment} to grade (see above); not graded, the "
            "grades they had are kept"
        )
        del found[student]
    if not found:
        raise GradingError(
            f"no notebook in {conf['submitted']}/*/{assignment}/ is one of {assignment}'s: "
            + "; ".join(left_out[:3])
        )
    if not found:
        raise GradingError(
            f"nothing collected for {assignment!r}: {conf['submitted']}/*/{assignment}/ holds no "
            f"notebook. Put the LMS download in downloaded/{assignment}/archive/ and run "
            f"`python3 kit.py collect {assignment}`, or run `nbgrader collect {assignment}`"
        )
    if students:
        wanted = {}
        for raw in students:
            try:
                student = normalise_id(raw)
            except IdError as error:
                raise GradingError(f"--student {raw!r}: {error}") from None
            if student not in found:
                import difflib

                close = difflib.get_close_matches(student, list(found), n=3)
                hint = f" (did you mean {', '.join(close)}?)" if close else ""
                raise GradingError(
                    f"no submission of {assignment!r} from student {raw!r}{hint}; "
                    f"{len(found)} students handed it in (see {conf['submitted']}/)"
                )
            wanted[student] = found[student]
        found = wanted
    run = Run(assignment, list(sources), {n: sum(s.points.values()) for n, s in sources.items()})
    run.left_out, run.workers = left_out, workers
    bar = progress(len(found)) if progress is not None else None
    if bar is not None:
        bar.note(
            f"grading {assignment}: {len(found)} students, {len(sources)} notebooks, "
            f"{min(workers, len(found))} at a time; first the solutions are checked against "
            "their own tests and the kernels warmed up"
        )
    database = root / "gradebook.db"
    try:
        ensure_assignment(root, assignment, database, conf["course_id"], sources)
    except RuntimeError as error:
        errors = [
            line.strip()
            for line in str(error).splitlines()
            if "Error: " in line and "NbGraderException" not in line
        ]
        last = errors[-1:] or ["see nbgrader's log"]
        raise GradingError(
            f"nbgrader cannot read the notebooks of {assignment!r} ({last[0].strip()[:200]}); "
            f"run `nbgrader generate_assignment {assignment} --force` to see every error"
        ) from None
    plan = Plan.prepare(
        root,
        assignment,
        sources,
        limits,
        fork_kernels=fork_kernels,
        kit_guard=kit_guard,
        walls=walls,
    )
    run.walls = plan.walls
    collected = read_collected(root, assignment)
    folder = records.record_path(root, assignment, "x").parent
    records.clean_temporaries(folder)
    with open_gradebook(database, conf["course_id"]) as gb:
        try:
            for student, outcomes, flags in grade_all(plan, found, workers):
                problem = ""
                if isinstance(outcomes, NotGraded):
                    problem = f"{student}: could not be graded ({outcomes.reason})"
                else:
                    try:
                        _store(root, conf, gb, run, found[student], outcomes, flags, collected)
                    except Exception as error:  # noqa: BLE001 - reported; the others go on
                        problem = f"{student}: could not be saved ({type(error).__name__}: {error})"
                if problem:
                    run.problems.append(f"{problem}; their grades were left as they were")
                if bar is not None:  # said once the student is saved
                    if problem:
                        bar.advance(f"{student}  NOT GRADED", [problem], failed=True)
                    else:
                        text, problems, failed, flagged = progress_line(student, outcomes)
                        bar.advance(text, problems, failed=failed, flagged=flagged)
        except KeyboardInterrupt:
            run.interrupted = True
        finally:
            if bar is not None:
                bar.close()
            run.problems += plan.finish()
            integrity_files(root, assignment, run.graded, plan.flags)
    run.seconds = time.monotonic() - started
    return run


@contextmanager
def _uninterrupted():
    """Hold Ctrl-C (SIGINT) back until the block is done: a student being written is written
    whole, and the interrupt takes effect right after."""
    block = getattr(signal, "pthread_sigmask", None)
    if block is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    block(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        block(signal.SIG_UNBLOCK, {signal.SIGINT})


def _store(root, conf, gb, run, submission, outcomes, flags, collected) -> None:
    """Write one student: record (staged), autograded notebooks (staged), gradebook (the
    commit), then the staged files put in place; Ctrl-C waits until it is done."""
    with _uninterrupted():
        _write_student(root, conf, gb, run, submission, outcomes, flags, collected)


def _write_student(root, conf, gb, run, submission, outcomes, flags, collected) -> None:
    student, assignment = submission.student, run.assignment
    lms = collected.get(student, {})
    names = [p.name for p in submission.files.values()]
    source_names = [lms.get("notebooks", {}).get(Path(n).stem, {}).get("source", n) for n in names]
    stamp = submission.timestamp
    submitted_at = stamp.isoformat() if stamp is not None else lms.get("submitted_at")
    record = records.build(
        assignment,
        student,
        outcomes,
        flags,
        submitted_at=submitted_at,
        source_names=source_names,
        walls=run.walls,
    )
    path = records.record_path(root, assignment, student)
    temporary = records.write(path, record)
    target = root / conf["autograded"] / student / assignment
    staged = target.parent / f".{assignment}.new-{os.getpid()}"
    try:
        shutil.rmtree(staged, ignore_errors=True)
        staged.mkdir(parents=True)
        for outcome in outcomes:
            if outcome.autograded is not None:
                (staged / f"{outcome.notebook}.ipynb").write_text(outcome.autograded, "utf-8")
        for folder in submission.folders:
            for extra in folder.iterdir():  # formgrader serves them: nothing a browser runs
                if extra.suffix != ".ipynb" and safe_to_serve(extra):
                    shutil.copy2(extra, staged / extra.name)
        write_student(gb, assignment, student, outcomes, timestamp=stamp)
    except BaseException:
        temporary.unlink(missing_ok=True)
        shutil.rmtree(staged, ignore_errors=True)
        raise
    records.commit(temporary, path)
    old = target.parent / f".{assignment}.old-{os.getpid()}"
    if target.exists():
        target.rename(old)
    staged.rename(target)
    shutil.rmtree(old, ignore_errors=True)
    run.graded[student] = outcomes


def autograde(
    root,
    assignment: str = "decomp",
    *,
    students=None,
    workers: int = 1,
    timeout=None,
    notebook_limit=None,
    student_limit=None,
    kit_guard: str = "restore",
    sandbox: bool = True,
) -> list[NotebookGrade]:
    """Autograde ``root/submitted`` into ``root/gradebook.db`` (no output; see grade_class).

    Returns one :class:`NotebookGrade` per student and notebook of the assignment.
    """
    run = grade_class(
        root,
        assignment,
        students=students,
        workers=workers,
        timeout=timeout,
        notebook_limit=notebook_limit,
        student_limit=student_limit,
        kit_guard=kit_guard,
        sandbox=sandbox,
    )
    if run.interrupted:
        raise KeyboardInterrupt
    return [
        NotebookGrade(s, o.notebook, o.status, dict(o.scores), o.message, o.flagged)
        for s, outcomes in run.graded.items()
        for o in outcomes
    ]


# --- the command -----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Command line: grade an assignment, show progress, print the table of scores."""
    from .progress import Progress, summary

    parser = argparse.ArgumentParser(
        prog="python -m decompkit.course grade",
        description="Autograde submitted/<student>/<assignment>/ into gradebook.db.",
    )
    parser.add_argument("assignment", nargs="?", default="decomp")
    parser.add_argument("--root", default=".", help="course folder (default: here)")
    parser.add_argument("--student", action="append", help="grade only this student (repeat)")
    parser.add_argument(
        "--workers",
        type=int,
        default=min(os.cpu_count() or 1, 4),
        help="students graded at once (default: the cores, at most 4)",
    )
    parser.add_argument("--timeout", type=float, help="seconds per cell (default: Execute.timeout)")
    parser.add_argument(
        "--notebook-limit", type=float, help="seconds per notebook (default: GradingLimits, 180)"
    )
    parser.add_argument(
        "--student-limit", type=float, help="seconds per student (default: GradingLimits, 600)"
    )
    parser.add_argument(
        "--kit-guard",
        choices=["restore", "report"],
        default="restore",
        help="what to do when a kernel changed the kit's installed files: put them back "
        "(default), or only report it (a developer's checkout, where it may be an edit)",
    )
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run the kernels without walls (only where walls cannot be built, and only for "
        "submissions you trust: a kernel can then reach the others, the grader and the kit)",
    )
    args = parser.parse_args(argv)
    progress = None

    def make_progress(total):
        nonlocal progress
        progress = Progress(total)
        return progress

    try:
        root = Path(args.root).resolve()

        run = grade_class(
            root,
            args.assignment,
            students=args.student,
            workers=args.workers,
            timeout=args.timeout,
            notebook_limit=args.notebook_limit,
            student_limit=args.student_limit,
            kit_guard=args.kit_guard,
            sandbox=not args.no_sandbox,
            progress=make_progress,
        )
    except GradingError as error:
        if progress is not None:
            progress.close()
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted before any student was graded; nothing was changed", file=sys.stderr)
        return 130
    if progress is not None:
        progress.close()
    print(
        summary(
            run.assignment,
            run.graded,
            run.notebooks,
            run.maxima,
            seconds=run.seconds,
            workers=run.workers,
            left_out=run.left_out,
            troubles=run.problems,
        ),
        end="",
    )
    print(
        f"written: gradebook.db, records/{run.assignment}/, autograded/, integrity.csv, "
        "integrity.txt"
    )
    if run.interrupted:
        done = len(run.graded)
        print(
            f"interrupted: {done} students were graded and saved; the others keep the grades "
            f"they had. Run the same command again to grade them.",
            file=sys.stderr,
        )
        return 130
    return 1 if run.failed or run.problems else 0
