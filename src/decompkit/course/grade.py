"""Autograding with nbgrader, one submission at a time in a scratch copy of the course.

nbgrader executes and scores every notebook; this module only decides *where* that happens
and carries the scores home. Each student is graded in a fresh scratch course (the
configuration, the source notebooks, a copy of a gradebook that knows the assignment, and
that student's submission), so a submission's kernel can reach neither the course's
gradebook nor another student's folder through a relative path. When nbgrader gives up on a
student (a kernel that died, a notebook that is not valid JSON), the student's notebooks are
graded again one by one, so a fault costs only the notebook it happened in. The scores are
then written into the course gradebook by this one process: with ``workers > 1`` the
students are graded in parallel, and SQLite still sees a single writer.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .integrity import Flag, format_report, scan_submission, to_rows

__all__ = ["NotebookGrade", "autograde", "prepare_gradebook", "collect_submissions"]


@dataclass
class NotebookGrade:
    """The outcome of grading one notebook of one student.

    ``grades`` maps each graded cell's grade_id to its score; ``status`` is ``"graded"``, or
    ``"failed"`` with the reason in ``message`` (every item then scores 0).
    """

    student: str
    notebook: str
    status: str
    grades: dict[str, float] = field(default_factory=dict)
    message: str = ""
    flagged: bool = False  # the integrity scan found something no honest answer needs

    @property
    def score(self) -> float:
        return float(sum(self.grades.values()))


def _config(root: Path, overrides: dict | None = None):
    from traitlets.config import Config, PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    for section, values in (overrides or {}).items():
        config.merge(Config({section: values}))
    return config


def _course(scratch: Path, root: Path, assignment: str, config):
    from nbgrader.coursedir import CourseDirectory

    shutil.copy2(root / "nbgrader_config.py", scratch / "nbgrader_config.py")
    shutil.copytree(root / "solutions" / assignment, scratch / "solutions" / assignment)
    coursedir = CourseDirectory(config=config)
    coursedir.root = str(scratch)
    return coursedir


def _tools_on_path() -> None:
    """nbgrader calls its `alembic` tool by name: make this environment's tools findable."""
    bindir = str(Path(sys.executable).parent)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"


def _run(converter) -> tuple[bool, str]:
    from nbgrader.utils import capture_log

    _tools_on_path()
    with warnings.catch_warnings():
        # nbgrader's own gradebook calls trip SQLAlchemy's autoflush notice; it is harmless
        # here, and a warning turned into an error would abort the grading run.
        warnings.simplefilter("ignore", category=_sa_warning())
        result = capture_log(converter)
    return bool(result["success"]), f"{result.get('log', '')}\n{result.get('error', '')}"


def prepare_gradebook(
    root: Path, assignment: str, database: Path, config=None, *, release_to: Path | None = None
) -> list[Path]:
    """Run nbgrader's generate_assignment on a scratch copy of ``solutions/<assignment>``.

    It writes into ``database`` the assignment's notebooks and graded cells; with
    ``release_to``, the released notebooks are copied there too. Returns the copied files.
    The scratch copy holds only ``nbgrader_config.py`` and the sources, so the course's own
    gradebook and released folder are never touched.
    """
    from nbgrader.converters import GenerateAssignment

    config = config or _config(root)
    with tempfile.TemporaryDirectory(prefix="decompkit-gen-") as scratch:
        coursedir = _course(Path(scratch), root, assignment, config)
        coursedir.db_url = f"sqlite:///{database}"
        coursedir.assignment_id = assignment
        app = GenerateAssignment(coursedir=coursedir, config=config)
        app.force = True
        ok, log = _run(app)
        made = Path(scratch) / coursedir.release_directory / assignment
        if not ok or not made.is_dir():
            raise RuntimeError(f"nbgrader generate_assignment failed:\n{log[-3000:]}")
        written = []
        if release_to is not None:
            for path in sorted(made.rglob("*")):
                if path.is_file():
                    target = Path(release_to) / path.relative_to(made)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(path, target)
                    written.append(target)
        return written


def collect_submissions(root: Path, assignment: str) -> dict[str, list[Path]]:
    """Submissions in nbgrader's layout: ``submitted/<student>/<assignment>/*.ipynb``."""
    found = {}
    for folder in sorted((root / "submitted").glob(f"*/{assignment}")):
        found[folder.parent.name] = sorted(folder.glob("*.ipynb"))
    return found


def _scores(database: Path, assignment: str, student: str, notebook: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{database}") as gb:
        nb = gb.find_submission_notebook(notebook, assignment, student)
        return {g.name: float(g.auto_score or 0.0) for g in nb.grades if g.max_score}


def _valid_json(path: Path) -> str:
    """An empty string when ``path`` is a readable notebook, else the reason it is not."""
    import nbformat

    try:
        nbformat.read(path, as_version=4)
    except Exception as error:  # nbformat raises several unrelated types on bad files
        return f"not a readable notebook ({type(error).__name__}: {str(error)[:200]})"
    return ""


def _grade_in_scratch(task: dict, notebooks: list[Path]) -> tuple[bool, str, dict]:
    """Autograde ``notebooks`` of one student in a fresh scratch course; scores per notebook."""
    from nbgrader.converters import Autograde

    root, assignment, student = Path(task["root"]), task["assignment"], task["student"]
    config = _config(root, task["overrides"])
    with tempfile.TemporaryDirectory(prefix="decompkit-grade-") as scratch:
        scratch = Path(scratch)
        coursedir = _course(scratch, root, assignment, config)
        shutil.copy2(task["template"], scratch / "gradebook.db")
        coursedir.db_url = f"sqlite:///{scratch / 'gradebook.db'}"
        inbox = scratch / "submitted" / student / assignment
        inbox.mkdir(parents=True)
        for path in notebooks:
            shutil.copy2(path, inbox / path.name)
        submitted = root / "submitted" / student / assignment
        if (submitted / "timestamp.txt").is_file():  # nbgrader's record of when it came in
            shutil.copy2(submitted / "timestamp.txt", inbox / "timestamp.txt")
        coursedir.assignment_id = assignment
        coursedir.student_id = student
        if len(notebooks) == 1:
            coursedir.notebook_id = notebooks[0].stem
        app = Autograde(coursedir=coursedir, config=config)
        app.force = True
        app.create_student = True
        ok, log = _run(app)
        graded = scratch / "autograded" / student / assignment
        scores = {}
        if ok:
            for path in notebooks:
                if (graded / path.name).exists():
                    scores[path.stem] = _scores(
                        scratch / "gradebook.db", assignment, student, path.stem
                    )
                    target = Path(task["autograded"]) / path.name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(graded / path.name, target)
        return ok and len(scores) == len(notebooks), log, scores


def _grade_student(task: dict) -> list[NotebookGrade]:
    student = task["student"]
    results, readable = [], []
    for path in map(Path, task["notebooks"]):
        problem = _valid_json(path)
        if problem:
            results.append(NotebookGrade(student, path.stem, "failed", message=problem))
        else:
            readable.append(path)
    if not readable:
        return results
    ok, log, scores = _grade_in_scratch(task, readable)
    if not ok:
        # nbgrader abandons the whole student after one fault; grade each notebook alone.
        scores = {}
        for path in readable:
            one_ok, one_log, one = _grade_in_scratch(task, [path])
            if one_ok:
                scores.update(one)
            else:
                results.append(
                    NotebookGrade(student, path.stem, "failed", message=_reason(one_log))
                )
    for path in readable:
        if path.stem in scores:
            results.append(NotebookGrade(student, path.stem, "graded", scores[path.stem]))
    return sorted(results, key=lambda r: r.notebook)


_CAUSES = {
    "DeadKernelError": "the kernel died while running this notebook",
    "Kernel died": "the kernel died while running this notebook",
    "CellTimeoutError": "a cell ran past the time limit and could not be interrupted",
    "Timeout waiting for": "the kernel stopped answering",
}


def _reason(log: str) -> str:
    """The cause of a failed grading run, in words, from nbgrader's log."""
    for marker, words in _CAUSES.items():
        if marker in log:
            return words
    lines = [line for line in log.strip().splitlines() if "Error" in line]
    return lines[-1][:300] if lines else "nbgrader could not grade this notebook"


def _submitted_at(folder: Path):
    """The time nbgrader stamped on a submission (``timestamp.txt``), or None."""
    from nbgrader.utils import parse_utc

    stamp = folder / "timestamp.txt"
    try:
        return parse_utc(stamp.read_text().strip()) if stamp.is_file() else None
    except (ValueError, OverflowError):
        return None


def _record(database: Path, assignment: str, results: list[NotebookGrade], submitted: Path) -> None:
    """Write the scores into the course gradebook (one writer), clamped to each cell's points."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{database}") as gb:
        for student in sorted({r.student for r in results}):
            gb.update_or_create_student(student)
            when = _submitted_at(submitted / student / assignment)
            try:
                submission = gb.find_submission(assignment, student)
            except MissingEntry:
                with warnings.catch_warnings():
                    # nbgrader's add_submission trips SQLAlchemy's autoflush notice; harmless.
                    warnings.simplefilter("ignore", category=_sa_warning())
                    submission = gb.add_submission(assignment, student)
            if when is not None:
                submission.timestamp = when
        for result in results:
            notebook = gb.find_submission_notebook(result.notebook, assignment, result.student)
            notebook.flagged = result.status != "graded" or result.flagged
            for grade in notebook.grades:
                if not grade.max_score:
                    continue
                score = result.grades.get(grade.name, 0.0)
                grade.auto_score = max(0.0, min(float(score), float(grade.max_score)))
                grade.needs_manual_grade = False
        gb.db.commit()


def autograde(
    root,
    assignment: str = "decomp",
    *,
    students: list[str] | None = None,
    workers: int = 1,
    timeout: int | None = None,
) -> list[NotebookGrade]:
    """Autograde the submissions under ``root/submitted`` into ``root/gradebook.db``.

    Parameters
    ----------
    root : path
        The course folder (holds ``nbgrader_config.py``, ``solutions/`` and ``submitted/``).
    assignment : str
        The assignment to grade.
    students : list of str, optional
        Grade only these students (default: every student with a submission).
    workers : int
        Students graded at once, each in its own process.
    timeout : int, optional
        Seconds a cell may run before it is interrupted (default: nbgrader_config.py).

    Returns
    -------
    list of NotebookGrade
        One entry per student and notebook; the autograded notebooks are written to
        ``root/autograded/<student>/<assignment>/`` for nbgrader's feedback.
    """
    root = Path(root).resolve()
    if int(workers) < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    database = root / "gradebook.db"
    submissions = collect_submissions(root, assignment)
    if students is not None:
        unknown = sorted(set(students) - set(submissions))
        if unknown:
            raise ValueError(f"no submission of {assignment!r} for students {unknown}")
        submissions = {s: submissions[s] for s in students}
    overrides = {"Execute": {"timeout": int(timeout)}} if timeout else {}
    with tempfile.TemporaryDirectory(prefix="decompkit-template-") as holder:
        template = Path(holder) / "gradebook.db"
        prepare_gradebook(root, assignment, template, _config(root))
        if not database.exists():
            shutil.copy2(template, database)
        elif not _has_assignment(database, assignment):
            prepare_gradebook(root, assignment, database, _config(root))
        tasks = [
            {
                "root": str(root),
                "assignment": assignment,
                "student": student,
                "notebooks": [str(p) for p in paths],
                "template": str(template),
                "overrides": overrides,
                "autograded": str(root / "autograded" / student / assignment),
            }
            for student, paths in submissions.items()
        ]
        if int(workers) == 1 or len(tasks) < 2:
            graded = [_grade_student(task) for task in tasks]
        else:
            with ProcessPoolExecutor(max_workers=int(workers)) as pool:
                graded = list(pool.map(_grade_student, tasks))
    results = [r for student in graded for r in student]
    for student in submissions:  # nbgrader's feedback also needs the submission's other files
        source = root / "submitted" / student / assignment
        target = root / "autograded" / student / assignment
        target.mkdir(parents=True, exist_ok=True)
        for path in source.iterdir():
            if path.is_file() and path.suffix != ".ipynb":
                shutil.copy2(path, target / path.name)
    flagged = _integrity_report(root, assignment, submissions)
    for result in results:
        result.flagged = (result.student, result.notebook) in flagged
    _record(database, assignment, results, root / "submitted")
    return results


def _integrity_report(root: Path, assignment: str, submissions: dict) -> set[tuple[str, str]]:
    """Scan every submission; write ``integrity.csv`` and ``integrity.txt`` in the course.

    Returns the (student, notebook) pairs with at least one finding of severity "flag".
    Flagged submissions are still graded; the instructor decides.
    """
    rows, report, flagged = [], [], set()
    for student in sorted(submissions):
        flags = scan_submission(root / "submitted" / student / assignment)
        if flags:
            report.append(f"== {student}\n{format_report(flags)}")
        for flag in flags:
            rows.append({"student": student, **to_rows([flag])[0]})
            if flag.severity == "flag":
                flagged.add((student, Path(flag.notebook).stem))
    with open(root / "integrity.csv", "w", newline="") as handle:
        columns = ["student", *(f.name for f in dataclasses.fields(Flag))]
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    (root / "integrity.txt").write_text(
        "\n\n".join(report) or "Integrity scan: nothing to report.\n"
    )
    return flagged


def _sa_warning():
    from sqlalchemy.exc import SAWarning

    return SAWarning


def _has_assignment(database: Path, assignment: str) -> bool:
    if not database.exists():
        return False
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{database}") as gb:
        try:
            gb.find_assignment(assignment)
        except MissingEntry:
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    """Command line: autograde an assignment, print one line per student and notebook."""
    parser = argparse.ArgumentParser(
        prog="python -m decompkit.course grade",
        description="Autograde submitted/<student>/<assignment>/ into gradebook.db.",
    )
    parser.add_argument("assignment", nargs="?", default="decomp")
    parser.add_argument("--root", default=".", help="course folder (default: here)")
    parser.add_argument("--student", action="append", help="grade only this student")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=int, help="seconds per cell (default: config)")
    args = parser.parse_args(argv)
    results = autograde(
        args.root,
        args.assignment,
        students=args.student,
        workers=args.workers,
        timeout=args.timeout,
    )
    for r in results:
        note = f"  ({r.message})" if r.message else ""
        print(f"{r.student:20} {r.notebook:32} {r.status:7} {r.score:6.1f}{note}")
    failed = [r for r in results if r.status != "graded"]
    print(json.dumps({"graded": len(results) - len(failed), "failed": len(failed)}))
    return 0
