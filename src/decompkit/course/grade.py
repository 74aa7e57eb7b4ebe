"""Autograding a class: every submission of an assignment into the gradebook, none lost, and
none graded twice for nothing.

``python -m decompkit.course grade [ASSIGNMENT]`` (``python3 kit.py grade``) grades
``submitted/<student>/<assignment>/`` against ``solutions/<assignment>/``:

* The command's arguments, the course's settings and the submissions are checked first,
  before any notebook machinery is imported: a mistake is one line, at once.
* A student is graded again only if something their grade depends on changed since their
  last grading: their files, the assignment's sources, the grading settings or the kit
  (:mod:`decompkit.course.fingerprint`, stored in their grading record). ``--force`` grades
  everyone; a student named with ``--student`` is always graded.
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
  in it, never in between, and the same command again grades the students not yet graded.
  The integrity scan's findings go to ``integrity.csv`` / ``.txt``.
* Students are graded ``--workers`` at a time, each worker a process of its own; only this
  process writes the gradebook.

It prints a progress line while it works, and at the end a table of every student's final
score as the gradebook holds it (manual grades included, marked); it exits 1 when a
notebook could not be graded in full, 2 on a mistake in the command (each explained in one
line), 130 when interrupted.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from . import fingerprint as prints
from .arguments import Parser
from .engine import record as records
from .engine.environment import walls_for
from .engine.kitfiles import KitFiles
from .engine.limits import FAILED, Limits
from .gradebook import uninterrupted
from .settings import GradingError, settings
from .submissions import (
    find_class,
    find_submissions,  # noqa: F401 - tests/grading/test_collect.py takes it from here
    read_collected,
)

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
    """Everything a grading run did: per student the outcomes, who was left as they were
    (``unchanged``), why each other was graded (``reasons``), and what it left out."""

    assignment: str
    notebooks: list[str]
    maxima: dict
    graded: dict = field(default_factory=dict)  # student -> [NotebookOutcome]
    unchanged: list = field(default_factory=list)
    reasons: dict = field(default_factory=dict)  # student -> why graded in this run
    left_out: list = field(default_factory=list)
    problems: list = field(default_factory=list)  # lines about the run itself
    seconds: float = 0.0
    workers: int = 1
    interrupted: bool = False
    walls: object = None  # the kernels' walls (None: graded without)

    @property
    def failed(self) -> list:
        return [(s, o) for s, outs in self.graded.items() for o in outs if o.status in FAILED]

    @property
    def students(self) -> list[str]:
        """Every student this run was about: graded in it, or unchanged."""
        return sorted({*self.reasons, *self.unchanged})


def _limits(conf, timeout, notebook_limit, student_limit) -> Limits:
    for name, value in (
        ("timeout", timeout),
        ("notebook-limit", notebook_limit),
        ("student-limit", student_limit),
    ):
        if value is not None and not value > 0:
            raise GradingError(f"--{name} must be a number of seconds > 0, got {value!r}")
    limits = conf["limits"]
    return Limits(
        cell=float(timeout or limits.cell),
        notebook=float(notebook_limit or limits.notebook),
        student=float(student_limit or limits.student),
        output_bytes=limits.output_bytes,
    )


def _load_sources(root: Path, paths) -> dict:
    from .engine.notebooks import load_source

    sources = {}
    for path in paths:
        try:
            sources[path.stem] = load_source(path)
        except Exception as error:  # noqa: BLE001 - nbformat raises many unrelated types
            raise GradingError(
                f"the solution notebook {path.relative_to(root)} cannot be read "
                f"({type(error).__name__}); fix it (python3 kit.py check {path.relative_to(root)})"
            ) from None
    return sources


def _prepare_gradebook(root, conf, assignment, database, sources) -> None:
    from .gradebook import ensure_assignment

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


def _to_grade(root, conf, run, found, fingerprints, *, force, named) -> dict:
    """The submissions this run grades (with why, in ``run.reasons``); the others are
    ``run.unchanged``. ``named``: every student was named on the command line."""
    from .gradebook import final_scores, reading

    with reading(root / "gradebook.db", conf["course_id"]) as gb:
        book = final_scores(gb, run.assignment)
    wanted = {}
    for student, submission in found.items():
        scores = book.get(student, {})
        why = prints.why_graded(
            fingerprints[student],
            records.load_one(root, run.assignment, student),
            in_gradebook=set(scores) == set(run.notebooks)
            and all(s.complete for s in scores.values()),
            autograded=(root / conf["autograded"] / student / run.assignment).is_dir(),
        )
        if why is None and (force or named):
            why = "--force" if force else "named"
        if why is None:
            run.unchanged.append(student)
        else:
            run.reasons[student], wanted[student] = why, submission
    return wanted


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
    force: bool = False,
    progress=None,
) -> Run:
    """Grade ``root/submitted`` into ``root/gradebook.db``; see the module docstring.

    Students whose grade depends on nothing that changed since their last grading are left
    as they are (``run.unchanged``) unless ``force`` is set or they are named in
    ``students``.

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
    limits = _limits(conf, timeout, notebook_limit, student_limit)
    paths, found, left_out = find_class(root, conf, assignment, students)
    walls = walls_for(conf["bounds"]) if sandbox else None  # before anything is written
    bounds = conf["bounds"] if sandbox else None
    shared = (
        prints.kit_digest(KitFiles.read()),
        prints.assignment_digest(root / conf["source"] / assignment),
        prints.settings_digest(limits, bounds),
    )
    collected = read_collected(root, assignment)
    fingerprints = {
        s: prints.fingerprint(*shared, sub, collected.get(s, {})) for s, sub in found.items()
    }
    sources = _load_sources(root, paths)
    run = Run(assignment, list(sources), {n: sum(s.points.values()) for n, s in sources.items()})
    run.left_out, run.workers = left_out, workers
    database = root / "gradebook.db"
    _prepare_gradebook(root, conf, assignment, database, sources)
    found = _to_grade(root, conf, run, found, fingerprints, force=force, named=bool(students))
    if found:
        from .engine.workers import Plan

        bar = progress(len(found)) if progress is not None else None
        if bar is not None:
            why = Counter(run.reasons.values()).most_common()
            why = ", ".join(f"{n} {reason}" for reason, n in why)
            kept = f"; {len(run.unchanged)} unchanged, left as they are" if run.unchanged else ""
            bar.note(
                f"grading {assignment}: {len(found)} student{'s' if len(found) != 1 else ''} "
                f"({why}{kept}), "
                f"{len(sources)} notebooks, {min(workers, len(found))} at a time; first the "
                "solutions are checked against their own tests and the kernels warmed up"
            )
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
        saved = _Saving(root, conf, run, collected, fingerprints)
        _grade_all(plan, saved, found, bar)
    run.seconds = time.monotonic() - started
    return run


@dataclass
class _Saving:
    """What saving a student needs besides their outcomes."""

    root: Path
    conf: dict
    run: Run
    collected: dict
    fingerprints: dict


def _grade_all(plan, saving: _Saving, found: dict, bar) -> None:
    """Grade ``found`` with ``plan``, saving each student as they come; Ctrl-C stops it
    between two students (``run.interrupted``)."""
    from .engine.workers import NotGraded, grade_all
    from .gradebook import open_gradebook
    from .integrity import integrity_files
    from .progress import progress_line

    root, run = saving.root, saving.run
    folder = records.record_path(root, run.assignment, "x").parent
    records.clean_temporaries(folder)
    with open_gradebook(root / "gradebook.db", saving.conf["course_id"]) as gb:
        try:
            for student, outcomes, flags in grade_all(plan, found, run.workers):
                problem = ""
                if isinstance(outcomes, NotGraded):
                    problem = f"{student}: could not be graded ({outcomes.reason})"
                else:
                    try:
                        _store(saving, gb, found[student], outcomes, flags)
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
            # A second Ctrl-C (or a terminate) waits until the run has cleaned up after itself:
            # landing inside the removal of its scratch folder, it once ended the command with
            # an OSError's traceback instead of one line.
            with uninterrupted():
                if bar is not None:
                    bar.close()
                run.problems += plan.finish()
                integrity_files(root, run.assignment, run.graded, plan.flags)


def _store(saving: _Saving, gb, submission, outcomes, flags) -> None:
    """Write one student: record (staged), autograded notebooks (staged), gradebook (the
    commit), then the staged files put in place; Ctrl-C waits until it is done."""
    with uninterrupted():
        _write_student(saving, gb, submission, outcomes, flags)


def _write_student(saving: _Saving, gb, submission, outcomes, flags) -> None:
    from .gradebook import write_student
    from .sanitize import safe_to_serve

    root, conf, run = saving.root, saving.conf, saving.run
    student, assignment = submission.student, run.assignment
    lms = saving.collected.get(student, {})
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
        fingerprint=saving.fingerprints[student].to_json(),
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
    force: bool = False,
) -> list[NotebookGrade]:
    """Autograde ``root/submitted`` into ``root/gradebook.db`` (no output; see grade_class).

    Returns one :class:`NotebookGrade` per notebook of each student graded in this run; a
    student left unchanged is not graded again (as nbgrader's ``autograde`` skips one) unless
    ``force`` is set or they are named in ``students``.
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
        force=force,
    )
    if run.interrupted:
        raise KeyboardInterrupt
    return [
        NotebookGrade(s, o.notebook, o.status, dict(o.scores), o.message, o.flagged)
        for s, outcomes in run.graded.items()
        for o in outcomes
    ]


# --- the command -----------------------------------------------------------------------------


def _table(root: Path, run: Run) -> tuple[str, bool]:
    """The end-of-run table (:mod:`decompkit.course.scoreboard`) and whether a notebook it
    shows could not be graded in full."""
    from .gradebook import final_scores, reading
    from .scoreboard import scoreboard

    with reading(root / "gradebook.db", settings(root)["course_id"]) as gb:
        book = final_scores(gb, run.assignment)
    shown = {s: book[s] for s in run.students if s in book}
    kept = {s: records.load_one(root, run.assignment, s) for s in shown}
    kept = {s: r for s, r in kept.items() if r is not None}
    text = scoreboard(
        run.assignment,
        run.notebooks,
        run.maxima,
        shown,
        kept,
        graded=len(run.graded),
        unchanged=len(run.unchanged),
        seconds=run.seconds,
        workers=run.workers,
        left_out=run.left_out,
        troubles=run.problems,
    )
    failed = any(nb.status in FAILED for r in kept.values() for nb in r.notebooks.values())
    return text, failed


def main(argv: list[str] | None = None) -> int:
    """Command line: grade an assignment, show progress, print the table of scores."""
    parser = Parser(
        prog="python -m decompkit.course grade",
        description="Autograde submitted/<student>/<assignment>/ into gradebook.db. A student "
        "is graded again only when their files, the assignment's sources, the grading "
        "settings or the kit changed since their last grading (their record says what it "
        "was); the others are left as they are and counted as unchanged.",
    )
    parser.add_argument("assignment", nargs="?", default="decomp")
    parser.add_argument("--root", default=".", help="course folder (default: here)")
    parser.add_argument(
        "--student",
        action="append",
        help="grade only this student, changed or not (repeat for more)",
    )
    parser.add_argument(
        "--force",
        "--all",
        action="store_true",
        help="grade every student again, changed or not",
    )
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
        from .progress import Progress

        nonlocal progress
        progress = Progress(total)
        return progress

    root = Path(args.root).resolve()
    try:
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
            force=args.force,
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
    text, failed = _table(root, run)
    print(text, end="")
    if run.graded:
        print(
            f"written: gradebook.db, records/{run.assignment}/, autograded/, integrity.csv, "
            "integrity.txt"
        )
    if run.interrupted:
        print(
            f"interrupted: {len(run.graded)} students were graded and saved; the others keep "
            "the grades they had. Run the same command again to grade them.",
            file=sys.stderr,
        )
        return 130
    return 1 if failed or run.failed or run.problems else 0
