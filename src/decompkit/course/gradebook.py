"""Writing a student's grades into nbgrader's gradebook in one transaction.

nbgrader's own ``Gradebook`` methods commit after every change (``add_submission`` commits a
submission with empty grades before any score is set), so a grader stopped between two of
them leaves a student half written. :func:`write_student` builds the same rows with
nbgrader's models (``Student``, ``SubmittedAssignment``, ``SubmittedNotebook``, ``Grade``,
``Comment``) inside one session transaction and commits once: after a crash, a kill or a
Ctrl-C the gradebook holds the student as before the run or with every grade of the run.
:func:`final_scores` reads back what the gradebook holds now, manual grades included.

Ctrl-C that lands inside SQLAlchemy's work on the file makes it drop the connection half way
and print tracebacks about it; :func:`reading` and :func:`uninterrupted` hold Ctrl-C back
until a short read or a write is done, and it takes effect right after.
"""

from __future__ import annotations

import copy
import os
import shutil
import signal
import sys
import tempfile
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .settings import load_config, setting

__all__ = [
    "FinalScore",
    "assignment_shape",
    "create_gradebook",
    "ensure_assignment",
    "final_scores",
    "open_gradebook",
    "prepare_gradebook",
    "reading",
    "uninterrupted",
    "write_student",
]


def create_gradebook(database: Path) -> None:
    """Create an empty gradebook as nbgrader's ``Gradebook`` does, without its subprocess.

    nbgrader stamps a new gradebook with its schema version by running the ``alembic``
    command (a second Python start, seconds on a busy machine); the version is read here from
    nbgrader's own migration scripts instead. The file appears whole or not at all.
    """
    import os
    import tempfile

    from alembic.script import ScriptDirectory
    from nbgrader.api import Base
    from nbgrader.dbutil import ALEMBIC_DIR
    from sqlalchemy import create_engine, text

    head = ScriptDirectory(ALEMBIC_DIR).get_current_head()
    database = Path(database)
    handle, temporary = tempfile.mkstemp(dir=database.parent, prefix=".gradebook-", suffix=".db")
    os.close(handle)
    engine = create_engine(f"sqlite:///{temporary}", future=True)
    try:
        Base.metadata.create_all(bind=engine)
        with engine.begin() as connection:
            connection.execute(
                text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
            )
            connection.execute(text("INSERT INTO alembic_version VALUES (:v)"), {"v": head})
    finally:
        engine.dispose()
    os.replace(temporary, database)


@contextmanager
def open_gradebook(database: Path, course_id: str):
    """nbgrader's ``Gradebook`` on ``database``, closed on exit."""
    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning

    with warnings.catch_warnings():
        # nbgrader's models trip SQLAlchemy's autoflush notices; they are harmless here, and a
        # warning turned into an error would stop a grading run.
        warnings.simplefilter("ignore", category=SAWarning)
        gb = Gradebook(f"sqlite:///{database}", course_id=course_id)
        try:
            yield gb
        finally:
            with uninterrupted():
                gb.close()


@contextmanager
def reading(database: Path, course_id: str):
    """:func:`open_gradebook` for a short read: Ctrl-C waits until the gradebook is closed."""
    with uninterrupted(), open_gradebook(database, course_id) as gb:
        yield gb


@contextmanager
def uninterrupted():
    """Hold Ctrl-C (SIGINT) back until the block is done: a student being written is written
    whole, a read ends cleanly, and the interrupt takes effect right after.

    The interrupt is caught by a Python handler for the block's length, not blocked with the
    thread's signal mask: a signal sent to the process reaches whichever thread does not
    block it (numpy's BLAS threads, a worker pool's), and Python would still raise it in the
    main thread at once.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.getsignal(signal.SIGINT)
    if before is None or before == signal.SIG_IGN:  # not Python's to hold, or ignored anyway
        yield
        return
    caught = []
    signal.signal(signal.SIGINT, lambda number, _frame: caught.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
        if caught:
            if callable(before):
                before(signal.SIGINT, None)  # Python's own handler raises KeyboardInterrupt
            else:
                signal.raise_signal(signal.SIGINT)


def assignment_shape(gb, assignment: str) -> dict[str, dict[str, float]] | None:
    """``{notebook: {grade_id: max points}}`` of an assignment in the gradebook (None if it
    is not there)."""
    from nbgrader.api import MissingEntry

    try:
        found = gb.find_assignment(assignment)
    except MissingEntry:
        return None
    return {
        nb.name: {cell.name: float(cell.max_score or 0) for cell in nb.grade_cells}
        for nb in found.notebooks
    }


def write_student(gb, assignment: str, student: str, outcomes, *, timestamp=None) -> None:
    """Store one student's outcomes (:class:`decompkit.course.engine.runner.NotebookOutcome`).

    Every notebook of the assignment gets its scores (0 for one not handed in), ``flagged``
    when it could not be graded in full or the integrity scan flagged it (``outcome.flagged``),
    and the grader's note on each answer cell as the cell's automatic comment. A manual score
    a grader already gave is kept and the cell is marked for review, as nbgrader does.
    """
    from nbgrader.api import (
        Comment,
        Grade,
        Student,
        SubmittedAssignment,
        SubmittedNotebook,
    )
    from sqlalchemy.exc import SAWarning

    by_name = {o.notebook: o for o in outcomes}
    db = gb.db
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=SAWarning)
            record = db.get(Student, student)
            if record is None:
                record = Student(id=student)
                db.add(record)
            target = gb.find_assignment(assignment)
            submission = (
                db.query(SubmittedAssignment)
                .filter(
                    SubmittedAssignment.assignment_id == target.id,
                    SubmittedAssignment.student_id == student,
                )
                .one_or_none()
            )
            if submission is None:
                submission = SubmittedAssignment(assignment=target, student=record)
                db.add(submission)
            have = {nb.notebook_id for nb in submission.notebooks}
            for notebook in target.notebooks:
                if notebook.id in have:
                    continue
                # Each new row is added explicitly: SQLAlchemy 2 no longer follows a backref
                # into the session when the parent is already in it.
                made = SubmittedNotebook(notebook=notebook, assignment=submission)
                db.add(made)
                for cell in [*notebook.grade_cells, *notebook.task_cells]:
                    db.add(Grade(cell_id=cell.id, notebook=made))
                for cell in [*notebook.solution_cells, *notebook.task_cells]:
                    db.add(Comment(cell_id=cell.id, notebook=made))
            if timestamp is not None:
                submission.timestamp = timestamp
            db.flush()
            for notebook in submission.notebooks:
                outcome = by_name.get(notebook.name)
                scores = {} if outcome is None else outcome.scores
                notebook.flagged = outcome is not None and bool(outcome.flagged)
                for grade in notebook.grades:
                    if not grade.max_score:
                        continue
                    score = float(scores.get(grade.name, 0.0))
                    grade.auto_score = max(0.0, min(score, float(grade.max_score)))
                    grade.needs_manual_grade = grade.manual_score is not None
                notes = {} if outcome is None else outcome.comments
                for comment in notebook.comments:
                    comment.auto_comment = notes.get(comment.name)
        db.commit()
    except BaseException:
        db.rollback()
        raise


@dataclass(frozen=True)
class FinalScore:
    """A notebook's score in the gradebook: ``score`` as nbgrader counts it (a grader's
    manual score where there is one, else the autograde, plus extra credit), ``auto`` the
    autograde alone, ``complete`` when every graded cell has an autograde."""

    score: float
    auto: float
    complete: bool

    @property
    def adjusted(self) -> bool:
        """A grader changed the score by hand (a manual score or extra credit)."""
        return self.score != self.auto


def final_scores(gb, assignment: str) -> dict[str, dict[str, FinalScore]]:
    """``{student: {notebook: FinalScore}}`` of every submission of ``assignment``.

    One query over nbgrader's models (``Grade.score`` is nbgrader's own expression of the
    final score); walking the objects instead loads every grade on its own, ten times slower.
    """
    from nbgrader.api import Assignment, Grade, Notebook, SubmittedAssignment, SubmittedNotebook

    rows = (
        gb.db.query(
            SubmittedAssignment.student_id,
            Notebook.name,
            Grade.score,
            Grade.auto_score,
            Grade.max_score,
        )
        .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id)
        .join(SubmittedNotebook, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
        .join(Notebook, Notebook.id == SubmittedNotebook.notebook_id)
        .outerjoin(Grade, Grade.notebook_id == SubmittedNotebook.id)  # keeps an ungraded one
        .filter(Assignment.name == assignment)
    )
    sums: dict = {}
    for student, notebook, score, auto, most in rows:
        entry = sums.setdefault(student, {}).setdefault(notebook, [0.0, 0.0, True])
        if most:
            entry[0] += score or 0.0
            entry[1] += auto or 0.0
            entry[2] = entry[2] and auto is not None
    return {
        student: {name: FinalScore(*entry) for name, entry in notebooks.items()}
        for student, notebooks in sums.items()
    }


# --- the assignment, as nbgrader's generate_assignment writes it -------------------------------


def _course(scratch: Path, root: Path, assignment: str, source_dir: str):
    from nbgrader.coursedir import CourseDirectory

    shutil.copy2(root / "nbgrader_config.py", scratch / "nbgrader_config.py")
    shutil.copytree(root / source_dir / assignment, scratch / source_dir / assignment)
    return CourseDirectory


def _tools_on_path() -> None:
    """nbgrader calls its `alembic` tool by name: make this environment's tools findable."""
    bindir = str(Path(sys.executable).parent)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"


def prepare_gradebook(
    root: Path,
    assignment: str,
    database: Path,
    config=None,
    *,
    release_to: Path | None = None,
    cells: bool = True,
) -> list[Path]:
    """Run nbgrader's generate_assignment on a scratch copy of ``solutions/<assignment>``.

    It writes into ``database`` the assignment's notebooks and graded cells (with ``cells``
    False the notebooks only: nbgrader's SaveCells, which stores each cell's source with a
    commit of its own, is left out; the released notebooks are the same); with
    ``release_to``, the released notebooks are copied there too. Returns the copied files.
    The scratch copy holds only ``nbgrader_config.py`` and the sources, so the course's own
    gradebook and released folder are never touched.
    """
    from nbgrader.converters import GenerateAssignment
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.utils import capture_log
    from sqlalchemy.exc import SAWarning

    root = Path(root)
    config = config or load_config(root)
    if not cells:
        config = copy.deepcopy(config)
        config.SaveCells.enabled = False
    source_dir = str(setting(config, "CourseDirectory", "source_directory", "source"))
    if not Path(database).exists():
        create_gradebook(Path(database))
    with tempfile.TemporaryDirectory(prefix="decompkit-gen-") as scratch:
        _course(Path(scratch), root, assignment, source_dir)
        coursedir = CourseDirectory(config=config)
        coursedir.root = scratch
        coursedir.db_url = f"sqlite:///{database}"
        coursedir.assignment_id = assignment
        app = GenerateAssignment(coursedir=coursedir, config=config)
        app.force = True
        _tools_on_path()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=SAWarning)
            result = capture_log(app)
        made = Path(scratch) / coursedir.release_directory / assignment
        if not result["success"] or not made.is_dir():
            log = f"{result.get('log', '')}\n{result.get('error', '')}"
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


def ensure_assignment(root: Path, assignment: str, database: Path, course_id: str, sources):
    """The gradebook knows the assignment as the sources have it (generate it if not)."""
    wanted = {name: dict(source.points) for name, source in sources.items()}
    if database.exists():
        with reading(database, course_id) as gb:
            if assignment_shape(gb, assignment) == wanted:
                return
    prepare_gradebook(root, assignment, database)
