"""The numbers each exercise notebook works with, gathered in one parameter object per notebook.

Every exercise reads its numbers (p, d, phi, q, n, durations, ...) from the notebook's
parameter object, never from literals typed into a cell, so the same notebook can be handed
out with other numbers. ``params(notebook)`` gives the lecture's own numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ChainParams",
    "HorizonParams",
    "PlansParams",
    "DagParams",
    "TraceParams",
    "params",
    "NOTEBOOKS",
]


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


NOTEBOOKS = {
    "chain": ChainParams,
    "horizon": HorizonParams,
    "plans": PlansParams,
    "dag": DagParams,
    "trace": TraceParams,
}


def params(notebook: str):
    """The parameter object of ``notebook`` with the lecture's own numbers.

    Examples
    --------
    >>> P = params("chain")
    >>> P.p, P.n, P.task_success
    (0.9, 10, 0.1074)
    """
    try:
        return NOTEBOOKS[notebook]()
    except KeyError:
        raise ValueError(f"notebook must be one of {sorted(NOTEBOOKS)}, got {notebook!r}") from None
