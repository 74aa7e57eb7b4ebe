"""Running a class through the runner, in worker processes.

:class:`Plan` is what every grading process shares, made once before any student code runs:
the instructor's notebooks (run through their own hidden tests first, which imports all the
judging code and proves the solutions pass), the kit's files as read then, the environment of
the kernels (no hub token, private IPython and Jupyter folders, no user site-packages, the
kit's private copy first on ``sys.path``) and the import statements the warm kernel process
runs. :func:`grade_all` grades the students ``workers`` at a time (one too) in forked worker
processes, each with its own kernels and its own copy of the kit, and yields each student's
outcomes as they come; Ctrl-C stops the workers and their kernels, and a
worker is killed when the main process ends in any way.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

from ..integrity import Flag, scan_notebook
from .clean_check import judge, run_cells
from .codec import encode
from .environment import GradingError, kernel_environment, walled_environment
from .kernels import KernelFactory
from .kitfiles import KitFiles
from .runner import grade_notebooks
from .sandbox import Walls, die_with_parent
from .views import GRADER_VARIABLE, LECTURE, views

__all__ = ["NotGraded", "Plan", "grade_all", "self_test"]

MARKER = ".grading-run.json"


def _imports(sources) -> list[str]:
    """The import statements of the notebooks' cells that run when grading."""
    found = ["import decompkit.course.engine.codec"]
    for source in sources.values():
        for cell in source.nb.cells:
            if cell.cell_type != "code" or "explore" in cell.metadata.get("tags", []):
                continue
            code = "\n".join(
                line
                for line in cell.source.splitlines()
                if not line.lstrip().startswith(("%", "!"))
            )
            try:
                tree = ast.parse(code)
            except SyntaxError:
                continue
            for node in tree.body:
                if isinstance(node, ast.Import) or (
                    isinstance(node, ast.ImportFrom) and not node.level
                ):
                    found.append(ast.unparse(node))
    return list(dict.fromkeys(found))


def self_test(sources) -> None:
    """Run each instructor's notebook and judge its own answers as the grader will; raise
    :class:`GradingError` naming every hidden test that fails on the solution."""
    for name, source in sources.items():
        try:
            verdicts, bound = run_cells(source.nb.cells, LECTURE)
            exported = {n: encode(v) for names in bound.values() for n, v in names.items()}
            judged = judge(source.nb, LECTURE, exported)
        except Exception as error:  # noqa: BLE001 - reported with what to do
            raise GradingError(
                f"the solution notebook {name} cannot be run here ({type(error).__name__}: "
                f"{error}); check it with `python3 kit.py check` before grading"
            ) from None
        bad = [g for g in source.points if not (verdicts.get(g) and judged.get(g))]
        if bad:
            raise GradingError(
                f"the hidden tests {', '.join(bad)} of {name} fail on its own solution; fix "
                f"the solution notebook (python3 kit.py check solutions/.../{name}.ipynb)"
            )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


@dataclasses.dataclass
class Plan:
    """What every grading process of one run shares (see the module docstring)."""

    root: Path
    assignment: str
    sources: dict
    limits: object
    fork_kernels: bool
    views: dict
    kit: KitFiles
    run_dir: Path
    env: dict
    preload: list
    kit_guard: str = "restore"
    walls: Walls | None = None
    flags: dict = dataclasses.field(default_factory=dict)

    @property
    def evidence(self) -> Path:
        """Where changed kit files are copied before they are restored."""
        return self.root / "records" / "kit-changes" / self.run_dir.name

    @classmethod
    def prepare(
        cls,
        root,
        assignment,
        sources,
        limits,
        *,
        fork_kernels=True,
        kit_guard="restore",
        walls: Walls | None = None,
    ) -> Plan:
        """Check, import and read everything before any student code runs.

        ``kit_guard`` says what happens to a change to the kit's installed files found after
        a notebook ran: ``"restore"`` copies the changed file to :attr:`evidence` and puts
        the original back; ``"report"`` only reports it (for a developer's checkout, where
        the change may be an edit). Either way the next run refuses to start while the files
        differ from what this run read. ``walls`` are every kernel's walls
        (:func:`walls_for`); ``None`` grades without walls.
        """
        if kit_guard not in ("restore", "report"):
            raise GradingError(f"kit_guard must be 'restore' or 'report', got {kit_guard!r}")
        if walls is not None:
            fork_kernels = True
        marker = Path(root) / "records" / MARKER
        kit = KitFiles.read()
        _check_marker(marker, kit)
        self_test(sources)
        kit = KitFiles.read()  # after the self-test: every module the judging needs is loaded
        run_dir = Path(tempfile.mkdtemp(prefix="decompkit-run-"))
        env = kernel_environment("-")
        env.pop(GRADER_VARIABLE, None)
        if walls is not None:
            env = walled_environment(env)
        else:
            private = run_dir / "home"
            env.update(
                PYTHONNOUSERSITE="1",
                IPYTHONDIR=str(private / "ipython"),
                JUPYTER_CONFIG_DIR=str(private / "jupyter-config"),
                JUPYTER_DATA_DIR=str(private / "jupyter-data"),
                JUPYTER_RUNTIME_DIR=str(private / "jupyter-runtime"),
                MPLCONFIGDIR=str(private / "matplotlib"),
            )
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps({"pid": os.getpid(), "kit": kit.baseline}))
        return cls(
            Path(root),
            assignment,
            sources,
            limits,
            fork_kernels,
            views(list(sources)),
            kit,
            run_dir,
            env,
            _imports(sources),
            kit_guard,
            walls,
        )

    def finish(self) -> list[str]:
        """Check the kit one last time (the workers have ended); return problems."""
        problems = []
        restore = self.kit_guard == "restore"
        changed = self.kit.repair(restore=restore, keep=self.evidence)
        marker = self.root / "records" / MARKER
        if changed:
            done = "were put back as they were" if restore else "were left as they are"
            problems.append(
                f"the kit's installed files changed during grading and {done}: "
                f"{', '.join(changed)} (copies of the changed files: {self.evidence})"
            )
        still = self.kit.repair(restore=False) if changed else []
        if still:
            marker.write_text(json.dumps({"pid": 0, "kit": self.kit.baseline}))
            problems.append(
                "the next grading run will refuse to start until these files are as they were "
                "(git checkout src/, or pip install --force-reinstall decompkit)"
            )
        else:
            marker.unlink(missing_ok=True)
        shutil.rmtree(self.run_dir, ignore_errors=True)
        return problems


def _check_marker(marker: Path, kit: KitFiles) -> None:
    """Refuse to run beside another run, or after a killed run if the kit changed since."""
    try:
        last = json.loads(marker.read_text())
    except (OSError, ValueError):
        return
    pid = int(last.get("pid", 0) or 0)
    if pid and pid != os.getpid() and _alive(pid):
        raise GradingError(
            f"another grading run (process {pid}) is working on this course; wait for it to "
            f"finish or stop it, then run this again (its marker: {marker})"
        )
    before = last.get("kit", {})
    changed = sorted(
        name
        for name in set(before) | set(kit.baseline)
        if not name.endswith(".pyc") and before.get(name) != kit.baseline.get(name)
    )
    if changed:
        raise GradingError(
            "the kit's installed files differ from those the last grading run read ("
            f"{', '.join(changed[:5])}): a submission may have changed them (see "
            "records/kit-changes/). Put them back (git checkout src/, or pip install "
            f"--force-reinstall decompkit), or if the change is yours delete {marker}; then "
            "grade again"
        )
    marker.unlink(missing_ok=True)


class _Worker:
    """One grading process: its kernels (a warm forking process), its copy of the kit."""

    def __init__(self, plan: Plan, parent: int | None = None):
        self.plan, self.parent = plan, parent
        self.workdir = Path(tempfile.mkdtemp(prefix="worker-", dir=plan.run_dir))
        self.snapshot = plan.kit.snapshot(self.workdir / "kit")
        env = dict(plan.env)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(self.snapshot), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
        )
        walls = plan.walls
        if walls is not None:
            walls = dataclasses.replace(walls, read_only=(*walls.read_only, str(self.snapshot)))
        self.factory = KernelFactory(
            self.workdir, env, plan.preload, fork=plan.fork_kernels, walls=walls
        )
        if self.factory.fork:
            try:
                self.factory._start_server()
            except Exception:  # noqa: BLE001 - kernels then start the ordinary way (no walls)
                if walls is not None:
                    raise
                self.factory.fork = False
        self.expected = KitFiles.seal(self.snapshot)
        self.reported: set = set()

    def check(self, outcome) -> list[str]:
        """After each notebook: the kit's installed files and this worker's copy unchanged?"""
        plan, problems = self.plan, []
        restore = plan.kit_guard == "restore"
        changed = [
            name
            for name in plan.kit.repair(restore=restore, keep=plan.evidence)
            if restore or name not in self.reported
        ]
        self.reported.update(changed)
        if changed:
            done = "put back" if restore else "left as they are"
            problems.append(
                "the kit's installed files changed while this notebook ran "
                f"({done}; copies in records/kit-changes/): {', '.join(changed[:5])}"
            )
        copy = self.snapshot / "decompkit"
        changed = plan.kit.repair(copy, self.expected)
        if changed:
            KitFiles.seal(self.snapshot)
            problems.append(
                "the notebook changed the kit's files its kernel imports (put back): "
                + ", ".join(changed[:5])
            )
        return problems

    def grade(self, submission):
        plan = self.plan
        flags = {}
        for name, path in submission.files.items():
            flags[name] = scan_notebook(path)
        outcomes = grade_notebooks(
            self.factory,
            submission.files,
            plan.sources,
            submission.student,
            {GRADER_VARIABLE: submission.student},
            self.workdir,
            plan.limits,
            plan.views,
            after=self.check,
            parent=self.parent,
        )
        for outcome in outcomes:
            first = next(
                (
                    f
                    for f in flags.get(outcome.notebook, [])
                    if f.severity == "flag" and f.kind != "notebook"
                ),
                None,
            )
            if first is not None and not outcome.integrity:
                outcome.integrity = _flag_text(first)
        return submission.student, outcomes, flags

    def close(self) -> None:
        self.factory.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _flag_text(flag: Flag) -> str:
    where = f"cell {flag.cell}: " if flag.cell is not None else ""
    return f"{where}{flag.reason} ({flag.construct})"


_STATE: dict = {}


def _init_worker(plan: Plan, parent: int) -> None:
    import signal
    from multiprocessing.util import Finalize

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the pool's terminate() ends a worker
    die_with_parent(parent)  # killed with the main process, whatever ends it
    worker = _Worker(plan, parent)
    _STATE["worker"] = worker
    Finalize(worker, worker.close, exitpriority=10)


def _grade_in_worker(submission):
    return _STATE["worker"].grade(submission)


def _cost(submission) -> tuple[int, int]:
    """How long a submission will likely take to grade: its notebooks, then their bytes."""
    size = 0
    for path in submission.files.values():
        try:
            size += path.stat().st_size
        except OSError:
            pass  # a file that cannot be read is reported when it is graded
    return len(submission.files), size


def grade_all(plan: Plan, found: dict, workers: int):
    """Yield ``(student, outcomes, flags)`` for every submission in ``found``, as each is
    done, the likely longest started first.

    Every student is graded in a worker process, one worker too: this process only waits,
    so a Ctrl-C or a terminate lands between two of its own steps and the workers (with
    their kernels) are ended whole. (Graded here, a stop could land inside the kernel
    client's event loop and leave the run hanging on its way out.)
    """
    if not found:
        return
    context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(found)),
        mp_context=context,
        initializer=_init_worker,
        initargs=(plan, os.getpid()),
    )
    # Longest first: the pool takes them in this order, so the last to start are short and
    # no worker is left alone with a whole class's slowest submission at the end.
    longest_first = sorted(found.values(), key=_cost, reverse=True)
    pending = {pool.submit(_grade_in_worker, s): s.student for s in longest_first}
    try:
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                submitted = pending.pop(future)
                try:
                    student, outcomes, flags = future.result()
                except Exception as error:  # noqa: BLE001 - a worker's fault costs its student
                    yield submitted, NotGraded(error), {}
                    continue
                plan.flags[student] = flags
                yield student, outcomes, flags
    except BaseException:
        for future in list(pending):
            future.cancel()
        processes = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(5)
        raise
    pool.shutdown(wait=True)


class NotGraded(list):
    """What a student's grading gave when it failed as a whole (an empty list of outcomes
    that carries the error): nothing is written for the student."""

    def __init__(self, error: BaseException):
        super().__init__()
        self.reason = (
            f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"
        )
