"""Feedback pages a student can read: per item the answer, the score and the hint, in words.

nbgrader turns each autograded notebook into an HTML page (``generate_feedback``); this
module is what the course's ``nbgrader_config.py`` plugs into that step, so
``nbgrader generate_feedback decomp`` and ``python -m decompkit.course feedback`` write the
same page to ``feedback/<student>/<assignment>/<notebook>.html``:

- :class:`FeedbackView` (:mod:`decompkit.course.feedback_view`, a preprocessor after
  nbgrader's ``GetGrades``) puts one verdict per graded item where its test cell was: the
  item's name, the student's answer, the score and the hint, with no hidden test, no
  traceback and no path of the grading machine.
- :class:`FeedbackExporter` renders with the template in ``templates/decompkit_feedback``
  (JupyterLab's look in a small stylesheet of its own, a table of contents of the items, a
  notice when the notebook timed out or its kernel died). A page holds no script at all: its
  Content-Security-Policy (:data:`CONTENT_SECURITY_POLICY`) forbids every script, and the
  maths is typeset as MathML when the page is built (:mod:`decompkit.course.mathml`), which
  browsers render natively. A page works offline, attached to an LMS, or forwarded as one
  file (tens of kB), and loads nothing from the network. The notebook is sanitised first
  (:func:`decompkit.course.sanitize.sanitize_notebook`), and the policy stops anything that
  would slip through.

:func:`generate` (the ``feedback`` command) writes a class's pages: only those of students
whose grades changed since their pages were written (a regrade, a manual grade in
formgrader, a new kit: :mod:`decompkit.course.feedback_plan` keeps a fingerprint beside the
pages), or all of them with ``force`` (``--all``). Whole students go to ``workers``
processes, each with one nbgrader converter and one exporter of its own (nbgrader's
converters keep per-run state on the application and are not thread-safe), and a progress
line counts the students. A notebook nbgrader could not grade at all (its kernel died, the
file is unreadable, nothing was submitted) still gets a page, from the record, that says so.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from jinja2 import pass_context
from nbconvert.exporters import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from traitlets.config import Config

from .feedback_plan import (
    FeedbackRun,
    check_request,
    clear_stamp,
    due,
    fingerprints,
    parse_command,
    refuse,
    summary,
    write_stamp,
)
from .feedback_view import FeedbackView
from .gradebook import uninterrupted
from .mathml import tex_to_mathml
from .progress import Progress
from .settings import GradingError

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "FEEDBACK_CONFIG",
    "FeedbackExporter",
    "FeedbackView",
    "PageWriter",
    "generate",
    "main",
]

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
TEMPLATE_NAME = "decompkit_feedback"
#: What a feedback page may load and run: its own inline styles and images from data, nothing
#: else (no script, no frame, no font, no request, no form, no <base>).
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)

#: What the course's nbgrader_config.py sets for ``nbgrader generate_feedback``.
FEEDBACK_CONFIG = {
    "GenerateFeedback": {
        "preprocessors": [
            "nbgrader.preprocessors.GetGrades",
            "decompkit.course.feedback.FeedbackView",
        ],
        "exporter_class": "decompkit.course.feedback.FeedbackExporter",
        "force": True,
    }
}


class _MathMLRenderer(IPythonRenderer):
    """nbconvert's markdown renderer with every formula typeset as MathML."""

    def inline_math(self, body: str) -> str:
        return tex_to_mathml(body)

    def block_math(self, body: str) -> str:
        return tex_to_mathml(body, display=True)

    def latex_environment(self, name: str, body: str) -> str:
        return tex_to_mathml(f"\\begin{{{name}}}{body}\\end{{{name}}}", display=True)


class FeedbackExporter(HTMLExporter):
    """nbconvert's HTML exporter with the course's feedback template, maths as MathML.

    The template and its folder are fixed here (nbgrader's own ``GenerateFeedback`` sets the
    HTMLExporter's template to its own, which this page replaces). The page runs no script:
    its Content-Security-Policy says so, and markdown maths (cells, ``text/markdown`` and
    ``text/latex`` outputs) is MathML made here.
    """

    export_from_notebook = None

    def __init__(self, config=None, **kwargs):
        given = config if config is not None else getattr(kwargs.get("parent"), "config", None)
        merged = Config()
        merged.merge(given or Config())
        own = merged.FeedbackExporter
        own.setdefault("template_name", TEMPLATE_NAME)
        own.setdefault("extra_template_basedirs", [str(TEMPLATES)])
        own.setdefault("exclude_input_prompt", True)
        own.setdefault("exclude_output_prompt", True)
        super().__init__(config=merged, **kwargs)

    @pass_context
    def markdown2html(self, context, source):
        """Markdown to HTML as nbconvert renders it, each formula typeset as MathML."""
        cell = context.get("cell", {})
        renderer = _MathMLRenderer(
            escape=False,
            attachments=cell.get("attachments", {}),
            anchor_link_text=self.anchor_link_text,
            exclude_anchor_links=self.exclude_anchor_links,
            **self.lexer_options,
        )
        return MarkdownWithMath(renderer=renderer).render(source)

    def default_filters(self):
        """nbconvert's filters, ``clean_html`` (bleach, the costliest) remembered: every
        student's page runs the same released cells through it. Same function, same page."""
        for name, function in super().default_filters():
            if name == "clean_html":
                function = functools.lru_cache(maxsize=4096)(function)
            yield name, function

    def _init_resources(self, resources):
        resources = super()._init_resources(resources)
        resources["decompkit_csp"] = CONTENT_SECURITY_POLICY
        return resources


def _config(root: Path):
    from traitlets.config import Config, PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    config.merge(Config(FEEDBACK_CONFIG))
    return config


def _notebook_stub(path: Path):
    """What to render for a notebook nbgrader did not autograde: the submission as the
    student left it (``path``) when it can be read, else an empty notebook."""
    import nbformat

    try:
        return nbformat.read(path, as_version=4)
    except Exception:  # noqa: BLE001 - missing or broken file: the notice says so
        return nbformat.v4.new_notebook()


class PageWriter:
    """Writes whole students' pages in this process with one nbgrader converter and one
    exporter (made once: its templates take a while to load).

    nbgrader's ``GenerateFeedback`` writes a page for every autograded notebook (with
    ``force``: it removes the student's folder first); a page for each recorded notebook
    that has no autograded one comes from the record (:class:`FeedbackView` says why).
    """

    def __init__(self, request):
        from nbconvert.writers import FilesWriter
        from nbgrader.converters import GenerateFeedback
        from nbgrader.coursedir import CourseDirectory

        class Converter(GenerateFeedback):
            def start(self):
                """nbgrader's ``start`` on the exporter made once, for one student."""
                self.init_notebooks()
                here = os.getcwd()
                os.chdir(self.coursedir.root)  # nbgrader's paths are relative to the course
                try:
                    self.convert_notebooks()
                finally:
                    os.chdir(here)

        self.request = request
        config = _config(request.root)
        coursedir = CourseDirectory(config=config)
        coursedir.root = str(request.root)
        coursedir.assignment_id = request.assignment
        self.app = Converter(coursedir=coursedir, config=config)
        self.app.writer = FilesWriter(parent=self.app, config=config)
        self.app.exporter = self.app.exporter_class(parent=self.app, config=config)
        for preprocessor in self.app.preprocessors:
            self.app.exporter.register_preprocessor(preprocessor)

    def _autograded(self, student: str) -> None:
        """nbgrader's converter on one student, with nbgrader's own log kept for an error."""
        from nbgrader.utils import capture_log

        self.app.coursedir.student_id = student
        result = capture_log(self.app)
        if not result["success"]:
            log = f"{result.get('log', '')}\n{result.get('error', '')}"
            raise RuntimeError(f"nbgrader generate_feedback failed for {student}:\n{log[-3000:]}")

    @functools.cached_property
    def _record_exporter(self) -> FeedbackExporter:
        """The exporter without nbgrader's GetGrades (the gradebook may not hold the
        student): the scores come from the record."""
        exporter = FeedbackExporter(config=self.app.config)
        exporter.register_preprocessor(FeedbackView, enabled=True)
        return exporter

    def _from_record(self, student: str, notebook: str) -> Path:
        request = self.request
        nb = _notebook_stub(request.submitted / student / request.assignment / f"{notebook}.ipynb")
        resources = {
            "nbgrader": {
                "student": student,
                "assignment": request.assignment,
                "notebook": notebook,
                "db_url": f"sqlite:///{request.root / 'gradebook.db'}",
            },
            "unique_key": notebook,
        }
        page, _ = self._record_exporter.from_notebook_node(nb, resources=resources)
        target = request.folder(student) / f"{notebook}.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, encoding="utf-8")
        return target

    def write(self, student: str, fingerprint: str) -> list[Path]:
        """Every page of ``student``, then the stamp that says what they were made from."""
        request = self.request
        clear_stamp(request, student)
        notebooks = request.pages[student]
        autograded = request.autograded / student / request.assignment
        if any((autograded / f"{n}.ipynb").is_file() for n in notebooks):
            self._autograded(student)
        for notebook in notebooks:
            if not (autograded / f"{notebook}.ipynb").is_file():
                self._from_record(student, notebook)
        write_stamp(request, student, fingerprint)
        return request.paths(student)


_STATE: dict = {}


def _init_worker(request) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C
    _STATE["writer"] = PageWriter(request)


def _write_in_worker(student: str, fingerprint: str):
    return student, _STATE["writer"].write(student, fingerprint), os.getpid()


def _add_default_course(request) -> None:
    """nbgrader's ``GetGrades`` opens the gradebook as the course ``default_course`` and adds
    that course the first time (a write): done here once, so that two workers never race to
    add it."""
    from nbgrader.api import Gradebook

    database = request.root / "gradebook.db"
    if database.is_file():
        with uninterrupted(), Gradebook(f"sqlite:///{database}"):
            pass


def _write_all(request, prints: dict, stale: list[str], workers: int):
    """Yield ``(student, pages, pid)`` as each student's pages are written."""
    if not stale:
        return
    if workers <= 1 or len(stale) == 1:
        writer = PageWriter(request)
        for student in stale:
            with uninterrupted():  # a student's pages, read from the gradebook, come whole
                pages = writer.write(student, prints[student])
            yield student, pages, os.getpid()
        return
    _add_default_course(request)
    context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(stale)),
        mp_context=context,
        initializer=_init_worker,
        initargs=(request,),
    )
    try:
        futures = [pool.submit(_write_in_worker, s, prints[s]) for s in stale]
        for future in as_completed(futures):
            yield future.result()
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def generate(
    root, assignment: str = "decomp", students=None, *, force=False, workers=1, progress=None
) -> FeedbackRun:
    """Write the feedback pages of ``assignment`` whose grades changed since they were
    written (with ``force``: every page).

    Parameters
    ----------
    root : path
        The course folder (``nbgrader_config.py``, ``gradebook.db``, ``autograded/``,
        ``records/``).
    assignment : str
        The assignment.
    students : list of str, optional
        Only these students (default: everyone autograded or recorded).
    force : bool
        Write every page, changed or not (``--all``).
    workers : int
        Processes writing pages at once, each taking whole students (nbgrader's converters
        are not thread-safe; a process has its own).
    progress : callable, optional
        ``progress(total)`` returns an object with ``advance(text)``, told of each student
        as their pages are written (:class:`decompkit.course.progress.Progress`).

    Returns
    -------
    FeedbackRun
        The pages written, ``feedback/<student>/<assignment>/<notebook>.html``, and those
        already up to date.

    Raises
    ------
    decompkit.course.settings.GradingError
        A wrong request (:func:`decompkit.course.feedback_plan.check_request`).
    RuntimeError
        When nbgrader's feedback step fails, with the end of its log.

    Notes
    -----
    A student's pages are up to date when the fingerprint of what they show (grades in the
    gradebook, manual ones included, grading record, autograded notebooks, the kit's page
    code) equals the one stored beside them (:mod:`decompkit.course.feedback_plan`).
    """
    request = check_request(root, assignment, students)
    prints = fingerprints(request)
    stale = due(request, prints, force)
    current = [p for s in request.students if s not in stale for p in request.paths(s)]
    bar = progress(len(stale)) if progress is not None and stale else None
    written, by_worker = [], {}
    try:
        for student, pages, worker in _write_all(request, prints, stale, workers):
            written += pages
            by_worker[student] = worker
            if bar is not None:
                bar.advance(f"{student}  {len(pages)} page{'s' * (len(pages) != 1)}")
    finally:
        if bar is not None:
            bar.close()
    return FeedbackRun(tuple(sorted(written)), tuple(sorted(current)), by_worker)


class _Progress(Progress):
    """The grader's progress display, saying what this command does."""

    def line(self) -> str:
        return "feedback" + super().line().removeprefix("grading")


def main(argv: list[str] | None = None) -> int:
    """Command line: write the pages that changed (``--all``: every page); say how many.
    Exit 2 for a wrong request (one line), 1 when nbgrader's feedback step fails."""
    status = refuse(argv)
    if status is not None:
        return status
    args, _ = parse_command(argv)
    try:
        run = generate(
            args.root,
            args.assignment,
            args.student,
            force=args.all,
            workers=args.workers,
            progress=_Progress,
        )
    except (GradingError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(summary(run))
    return 0
