"""The numbers each exercise notebook works with, gathered in one parameter object per notebook.

Every exercise reads its numbers (p, d, phi, q, n, durations, ...) from the notebook's
parameter object, never from literals typed into a cell, so each student can get numbers of
their own. ``params(notebook)`` without a student id gives the lecture's own numbers; with an id
it draws the numbers from a generator seeded by ``sha256(assignment : notebook : id)``, within
ranges that keep every exercise meaningful, and redraws until the notebook's exercise module
finds no degenerate case (``decompkit.exercises.<notebook>.degenerate``).

The id is resolved by :func:`student_id`: the grader's ``DECOMPKIT_STUDENT`` first (set for
the kernel that runs a submission, from the submission's folder), then the platform's
``JUPYTERHUB_USER``, then the id typed into the notebook's marked cell.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from importlib import import_module

import numpy as np

__all__ = [
    "ChainParams",
    "HorizonParams",
    "PlansParams",
    "DagParams",
    "TraceParams",
    "HarnessParams",
    "params",
    "student_id",
    "NOTEBOOKS",
    "ASSIGNMENT",
    "GRADER_VARIABLE",
    "HUB_VARIABLE",
    "LECTURE",
]

#: The nbgrader assignment the notebooks belong to; part of every seed.
ASSIGNMENT = "decomp"
#: Environment variable the grader sets for the kernel that runs a submission.
GRADER_VARIABLE = "DECOMPKIT_STUDENT"
#: Environment variable JupyterHub sets in every user's server.
HUB_VARIABLE = "JUPYTERHUB_USER"
#: The id that asks for the lecture's own numbers even where an id is known.
LECTURE = "lecture"


@dataclass(frozen=True)
class ChainParams:
    """Numbers of the chain-reliability notebook (lecture sections 1-2).

    Attributes
    ----------
    p, n : per-step success rate and chain length of the worked chain.
    p_monolithic : per-step rate behind the monolithic prompt whose task success is given.
    p_half : per-step rate for the half-life exercise.
    d, phi : detection and false-positive rates of the boundary check.
    k : attempts allowed behind a perfect check.
    d_other, phi_other : a second check, to decide whether it is worth adding.
    d_graph : detection rate in the per-step vs per-graph comparison.
    """

    p: float = 0.9
    n: int = 10
    p_monolithic: float = 0.8
    p_half: float = 0.95
    d: float = 0.8
    phi: float = 0.1
    k: int = 3
    d_other: float = 0.3
    phi_other: float = 0.4
    d_graph: float = 1.0

    @property
    def task_success(self) -> float:
        """Success of the monolithic prompt over n steps, rounded as a measurement would be."""
        return round(self.p_monolithic**self.n, 4)


@dataclass(frozen=True)
class HorizonParams:
    """Numbers of the long-horizon notebook (lecture section 3).

    Attributes
    ----------
    p, q : executor accuracy per round and audit detection probability.
    n : horizon (number of subtasks) of the worked example.
    budget_factor : rounds allowed per subtask; the budget is ``round(budget_factor * n)``.
    n_small : horizon of the transition matrix built by hand.
    t : rounds after which the grounded probability is asked for.
    trials, seed : size and seed of the Monte Carlo check.
    """

    p: float = 0.95
    q: float = 0.5
    n: int = 50
    budget_factor: float = 2.0
    n_small: int = 3
    t: int = 20
    trials: int = 20_000
    seed: int = 2026

    @property
    def budget(self) -> int:
        """Round budget of the worked example, ``round(budget_factor * n)``."""
        return round(self.budget_factor * self.n)


def _example(name: str):
    """The worked example built by ``decompkit.examples.<name>()`` (a fresh copy)."""
    from . import examples  # imported here: examples is data, variants only names it

    make = getattr(examples, name, None)
    if name not in ("coding_task", "migration") or make is None:
        raise ValueError(f"example must be 'coding_task' or 'migration', got {name!r}")
    return make()


def _with_durations(example, overrides: tuple):
    """``example`` with the ``(node, duration)`` pairs of ``overrides`` applied."""
    from dataclasses import replace

    durations = dict(example.durations)
    for node, value in overrides:
        if node not in durations:
            raise ValueError(f"duration override names {node!r}, not a task of {example.name!r}")
        durations[node] = value
    return replace(example, durations=durations)


@dataclass(frozen=True)
class PlansParams:
    """Choices of the plans-as-objects notebook (lecture section 6).

    Attributes
    ----------
    tools : the tool names the executor offers; a plan naming another tool is invalid.
    max_steps : the largest plan the validator accepts.
    plan_kinds : name (in ``decompkit.exercises.plans.PLANS``) of the broken plan whose kinds
        of problem are asked for, and which is repaired at the end.
    plan_cycle : name of the broken plan whose cycle is asked for.
    plan_rewoo : name of the ``#E`` plan whose edges are derived by hand.
    plan_compiler : name of the ``$k`` plan whose ``depends_on`` contradicts its arguments.
    """

    tools: tuple = ("search", "fetch_page", "summarise", "compare", "write_answer")
    max_steps: int = 8
    plan_kinds: str = "price_check"
    plan_cycle: str = "release_notes"
    plan_rewoo: str = "two_cities"
    plan_compiler: str = "supplier_quotes"


@dataclass(frozen=True)
class DagParams:
    """Numbers and choices of the plan-DAG notebook (lecture section 4).

    Attributes
    ----------
    example_a, example_b : names of the worked examples in ``decompkit.examples``
        (A: the coding task, B: the connector migration).
    durations_a, durations_b : ``(node, duration)`` pairs replacing the example's own
        durations; empty keeps the lecture's.
    coordination : coordination tax of example B's fan-out, in slots.
    done, running : tasks of example A finished and in progress for the ready-set exercise.
    slack_node : the task of example A whose slack is asked for.
    workers : workers of the list schedules of example B.
    """

    example_a: str = "coding_task"
    example_b: str = "migration"
    durations_a: tuple = ()
    durations_b: tuple = ()
    coordination: int = 4
    done: tuple = ("read_spec", "fetch_data")
    running: tuple = ("write_tests",)
    slack_node: str = "write_tests"
    workers: int = 3

    @property
    def A(self):
        """Worked example A with this object's durations (a fresh WorkedExample)."""
        return _with_durations(_example(self.example_a), self.durations_a)

    @property
    def B(self):
        """Worked example B with this object's durations and coordination tax."""
        from dataclasses import replace

        b = _with_durations(_example(self.example_b), self.durations_b)
        return replace(b, coordination=self.coordination)


@dataclass(frozen=True)
class TraceParams:
    """Numbers and choices of the scheduler-trace notebook (lecture section 5).

    Attributes
    ----------
    example : name of the worked example in ``decompkit.examples`` (the coding task).
    durations : ``(node, duration)`` pairs replacing the example's own; empty keeps them.
    workers : workers of the scheduler.
    kappa : attempts per task in the demonstration of a checked step.
    failing : the task whose check fails (the red test run).
    failing_early : a task whose failure catches another task still running.
    faulty : the diagnosis of the failure of ``failing``: the task to unroll.
    faulty_other : a second diagnosis, whose unrolling copies more of the plan.
    kappa_plan : the plan-level cap on copies of one task.
    red_runs : how many runs of ``failing`` in a row fail (the original, then its copies).
    """

    example: str = "coding_task"
    durations: tuple = ()
    workers: int = 2
    kappa: int = 2
    failing: str = "run_tests"
    failing_early: str = "write_tests"
    faulty: str = "write_code"
    faulty_other: str = "fetch_data"
    kappa_plan: int = 2
    red_runs: int = 3

    @property
    def A(self):
        """The worked example with this object's durations (a fresh WorkedExample)."""
        return _with_durations(_example(self.example), self.durations)


@dataclass(frozen=True)
class HarnessParams:
    """Numbers of the plan-artefact and harness notebook (lecture sections 3 and 4).

    Attributes
    ----------
    n, p, q : subtasks, executor accuracy per round and audit detection of the loop.
    budget_factor : rounds allowed per subtask; the budget is ``round(budget_factor * n)``.
    persuasion : chance that an auditor reading the executor's trace is talked out of a catch.
    runs, seed : size and seed of the simulated runs.
    T, a, L0, L_star : rounds, tokens appended per round, starting context, and the bounded
        context of a fresh round, for the context-growth comparison.
    """

    n: int = 50
    p: float = 0.95
    q: float = 0.9
    budget_factor: float = 2.0
    persuasion: float = 0.9
    runs: int = 10_000
    seed: int = 2026
    T: int = 100
    a: int = 500
    L0: int = 2000
    L_star: int = 4000

    @property
    def budget(self) -> int:
        """Round budget of the loop, ``round(budget_factor * n)``."""
        return round(self.budget_factor * self.n)


NOTEBOOKS = {
    "chain": ChainParams,
    "horizon": HorizonParams,
    "plans": PlansParams,
    "dag": DagParams,
    "trace": TraceParams,
    "harness": HarnessParams,
}


def _clean_id(name: str, value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string or None, got {value!r}")
    value = value.strip()
    if any(ch.isspace() for ch in value):
        raise ValueError(f"{name} must not contain spaces, got {value!r}")
    return value or None


def student_id(student=None) -> str | None:
    """The id whose numbers this session uses, or None for the lecture's numbers.

    Parameters
    ----------
    student : str or None
        The id typed into the notebook's marked cell.

    Returns
    -------
    str or None
        In order of precedence: the grader's ``DECOMPKIT_STUDENT`` (a submission is always
        graded under the id of its folder, whatever its cells say), the hub's
        ``JUPYTERHUB_USER``, then ``student``. ``None`` when none is set.

    Raises
    ------
    ValueError
        When ``student`` is not a string or contains white space.

    Examples
    --------
    >>> import os
    >>> os.environ.pop("DECOMPKIT_STUDENT", None), os.environ.pop("JUPYTERHUB_USER", None)
    (None, None)
    >>> student_id(" s1234 "), student_id(None), student_id("")
    ('s1234', None, None)
    """
    typed = _clean_id("student", student)
    for variable in (GRADER_VARIABLE, HUB_VARIABLE):
        value = os.environ.get(variable, "").strip()
        if value:
            return value
    return typed


def _seed(assignment: str, notebook: str, student: str) -> int:
    text = f"{assignment}:{notebook}:{student}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:16], "big")


def params(notebook: str, student=None, *, assignment: str = ASSIGNMENT):
    """The parameter object of ``notebook`` for a student, or with the lecture's numbers.

    Parameters
    ----------
    notebook : str
        One of ``"chain"``, ``"horizon"``, ``"plans"``, ``"dag"``, ``"trace"``, ``"harness"``.
    student : str or None
        The id typed into the notebook's marked cell; the grader's and the hub's id take
        precedence (see :func:`student_id`). ``None`` (and no id in the environment) or
        ``"lecture"`` give the lecture's own numbers.
    assignment : str
        Part of the seed, so the same student gets other numbers in another assignment.

    Returns
    -------
    ChainParams, HorizonParams, PlansParams, DagParams or TraceParams

    Raises
    ------
    ValueError
        For an unknown notebook or a malformed id.

    Notes
    -----
    The draw is a pure function of ``(assignment, notebook, id)``: the same id gives the same
    numbers on every machine and in every session, in the student's kernel, in the grader's and
    in the instructor's answer key. Candidates that the notebook's exercise module reports as
    degenerate (ties, indistinguishable mistakes, trivial comparisons) are skipped in a fixed
    order, so the result stays deterministic.

    Examples
    --------
    >>> import os
    >>> os.environ.pop("DECOMPKIT_STUDENT", None), os.environ.pop("JUPYTERHUB_USER", None)
    (None, None)
    >>> P = params("chain")
    >>> P.p, P.n, P.task_success
    (0.9, 10, 0.1074)
    >>> params("chain", "s1234") == params("chain", "s1234") != P
    True
    """
    if notebook not in NOTEBOOKS:
        raise ValueError(f"notebook must be one of {sorted(NOTEBOOKS)}, got {notebook!r}")
    who = student_id(student)
    if who is None or who == LECTURE:
        return NOTEBOOKS[notebook]()
    return _draw(notebook, who, assignment)


@functools.lru_cache(maxsize=1024)  # every hidden test asks again; the objects are frozen
def _draw(notebook: str, who: str, assignment: str):
    checker = import_module(f"decompkit.exercises.{notebook}")
    rng = np.random.default_rng(_seed(assignment, notebook, who))
    for _ in range(_MAX_DRAWS):
        candidate = _DRAWS[notebook](rng)
        if not checker.degenerate(candidate):
            return candidate
    raise RuntimeError(  # a bug in the ranges, not an input error
        f"no usable {notebook} parameters for id {who!r} in {_MAX_DRAWS} draws"
    )


_MAX_DRAWS = 500


def _grid(rng, low: float, high: float, step: float) -> float:
    """A value of the grid ``low, low + step, ..., high``, rounded to the step's decimals."""
    count = round((high - low) / step)
    decimals = max(0, -int(np.floor(np.log10(step) + 1e-9)))
    return round(low + step * int(rng.integers(0, count + 1)), decimals)


def _draw_chain(rng) -> ChainParams:
    p = _grid(rng, 0.60, 0.88, 0.001)
    d = _grid(rng, 0.40, 0.90, 0.001)
    d_other = _grid(rng, 0.20, 0.80, 0.001)
    gap = _grid(rng, 0.05, 0.20, 0.001)
    helps = bool(rng.integers(0, 2))
    return ChainParams(
        p=p,
        n=int(rng.integers(5, 13)),
        p_monolithic=round(p - _grid(rng, 0.03, 0.10, 0.001), 3),
        p_half=_grid(rng, 0.90, 0.99, 0.0001),
        d=d,
        phi=_grid(rng, 0.01, round(d - 0.15, 3), 0.001),
        k=int(rng.integers(2, 4)),
        d_other=d_other,
        phi_other=round(d_other - gap if helps else d_other + gap, 3),
        d_graph=_grid(rng, 0.60, 1.00, 0.01),
    )


def _draw_horizon(rng) -> HorizonParams:
    return HorizonParams(
        p=_grid(rng, 0.90, 0.98, 0.001),
        q=_grid(rng, 0.20, 0.80, 0.001),
        n=int(rng.integers(20, 81)),
        budget_factor=_grid(rng, 1.5, 2.5, 0.1),
        t=int(rng.integers(10, 41)),
        seed=int(rng.integers(0, 2**31)),
    )


def _draw_plans(rng) -> PlansParams:
    return PlansParams()  # the plans notebook asks about structure, which every student shares


def _durations(rng, ranges: dict) -> tuple:
    return tuple((node, int(rng.integers(low, high + 1))) for node, (low, high) in ranges.items())


_RANGES_A = {
    "read_spec": (2, 9),
    "fetch_data": (6, 30),
    "write_tests": (4, 24),
    "write_code": (8, 40),
    "run_tests": (2, 9),
    "report": (2, 8),
}
_RANGES_B = {
    "F": (2, 12),
    "S": (2, 12),
    "R": (1, 9),
    "P": (8, 30),
    "E": (10, 40),
    "D": (6, 30),
    "A": (1, 6),
    "Y": (2, 12),
    "V": (3, 15),
}


def _draw_dag(rng) -> DagParams:
    return DagParams(
        durations_a=_durations(rng, _RANGES_A),
        durations_b=_durations(rng, _RANGES_B),
        coordination=int(rng.integers(4, 19)),
    )


def _draw_trace(rng) -> TraceParams:
    kappa_plan = int(rng.integers(1, 4))
    return TraceParams(
        durations=_durations(rng, {node: (3 * a, 3 * b) for node, (a, b) in _RANGES_A.items()}),
        workers=int(rng.integers(2, 4)),
        failing_early=("write_tests", "fetch_data")[int(rng.integers(0, 2))],
        kappa_plan=kappa_plan,
        red_runs=kappa_plan + 1,
    )


def _draw_harness(rng) -> HarnessParams:
    return HarnessParams(
        n=int(rng.integers(10, 61)),
        p=_grid(rng, 0.90, 0.98, 0.001),
        q=_grid(rng, 0.30, 0.90, 0.001),
        budget_factor=_grid(rng, 1.00, 1.15, 0.01),
        persuasion=_grid(rng, 0.50, 0.95, 0.01),
        seed=int(rng.integers(0, 2**31)),
        T=int(rng.integers(20, 201)),
        a=50 * int(rng.integers(2, 21)),
        L0=100 * int(rng.integers(5, 41)),
        L_star=500 * int(rng.integers(4, 17)),
    )


_DRAWS = {
    "chain": _draw_chain,
    "horizon": _draw_horizon,
    "plans": _draw_plans,
    "dag": _draw_dag,
    "trace": _draw_trace,
    "harness": _draw_harness,
}
