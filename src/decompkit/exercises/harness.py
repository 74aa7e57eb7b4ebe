r"""Parameters, answer key and visible checks of the plan-artefact and harness notebook.

Part A plays the connector migration on a :class:`decompkit.artefact.Plan`: its frontier, which
moves and revisions the artefact refuses, and its honest progress. Part B runs the
Manage-Execute-Audit loop against the absorbing chain: success and corruption within the budget
:math:`B`, and the auditor that reads the executor's trace (detection :math:`q(1-\pi)`).
Part C compares the attention cost of an appended transcript,
:math:`\sum_{t<T} (L_0 + a t)^2`, with fresh bounded contexts, :math:`T L_*^2`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .. import harness, markov
from ..artefact import (
    ABANDONED,
    ACTIVE,
    BLOCKED,
    DONE,
    PENDING,
    RevisionError,
    Step,
    TransitionError,
    migration_scenario,
    migration_stages,
)
from .checks import (
    Mistake,
    form_choices,
    judge_choice,
    judge_choices,
    judge_number,
    judge_set,
    read_set,
)
from .contract import Diagnosis, Exercise, Item
from .page import GRADED_LATER, NumbersDisplay, report
from .support import cached_key, grid, known_item, mistake_clashes, text_table

__all__ = [
    "HarnessParams",
    "draw",
    "EXERCISE",
    "MOVES",
    "REVISIONS",
    "STAGE",
    "key",
    "judge",
    "form",
    "check",
    "ITEMS",
    "degenerate",
    "plan_at",
    "steps_table",
    "events_table",
]


@dataclass(frozen=True)
class HarnessParams(NumbersDisplay):
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


def draw(rng) -> HarnessParams:
    """One candidate of per-student numbers (see :func:`decompkit.exercises.params.params`).

    Budgets are tight (1 to 1.15 rounds per subtask), so running out of budget is a real
    outcome beside success and corruption.
    """
    return HarnessParams(
        n=int(rng.integers(10, 61)),
        p=grid(rng, 0.90, 0.98, 0.001),
        q=grid(rng, 0.30, 0.90, 0.001),
        budget_factor=grid(rng, 1.00, 1.15, 0.01),
        persuasion=grid(rng, 0.50, 0.95, 0.01),
        seed=int(rng.integers(0, 2**31)),
        T=int(rng.integers(20, 201)),
        a=50 * int(rng.integers(2, 21)),
        L0=100 * int(rng.integers(5, 41)),
        L_star=500 * int(rng.integers(4, 17)),
    )


#: The stage of the migration at which the frontier is asked for.
STAGE = "read_schemas done"


def plan_at(stage: str = STAGE):
    """The migration plan right after ``stage`` (a label of
    :func:`decompkit.artefact.migration_stages`).

    Examples
    --------
    >>> plan_at("plan accepted").ready()
    ('find_callers',)
    """
    for label, plan in migration_stages():
        if label == stage:
            return plan
    raise ValueError(f"stage must be a label of migration_stages(), got {stage!r}")


def steps_table(plan) -> str:
    """The steps of an artefact plan as a plain-text table: id, state, depends_on, evidence.

    Examples
    --------
    >>> print(steps_table(plan_at("plan accepted")).splitlines()[2])
    find_callers       pending  -             -
    """
    rows = [("id", "state", "depends_on", "evidence")]
    for step in plan.steps:
        deps = ", ".join(step.depends_on) or "-"
        rows.append((step.id, str(step.state), deps, step.evidence or "-"))
    return text_table(rows, rule_max=100)


def events_table(plan) -> str:
    """The event log of an artefact plan, one line per transition or revision.

    Examples
    --------
    >>> print(events_table(plan_at("find_callers done")).splitlines()[2])
    0    start     find_callers  pending -> active
    """
    rows = [("seq", "kind", "step", "what")]
    for event in plan.events:
        if hasattr(event, "step"):
            what = f"{event.before} -> {event.after}"
            if event.reason:
                what += f" ({event.reason})"
            rows.append((event.seq, event.kind, event.step, what))
        else:
            diff = [f"+{n}" for n in event.added_nodes] + [f"-{n}" for n in event.removed_nodes]
            diff += [f"+{u}->{v}" for u, v in event.added_edges]
            diff += [f"-{u}->{v}" for u, v in event.removed_edges]
            rows.append((event.seq, "revision", "-", " ".join(diff) or event.reason))
    return text_table(rows, rule_max=100)


def _fresh_step_plan(state):
    """A migration plan whose ``patch_etl`` has been brought to ``state``."""
    plan = plan_at(STAGE)  # find_callers and read_schemas done: patch_etl may start
    if state in (ACTIVE, DONE, BLOCKED):
        plan.transition("patch_etl", ACTIVE)
    if state is DONE:
        plan.transition("patch_etl", DONE, evidence="dry run: row counts equal")
    if state is BLOCKED:
        plan.transition("patch_etl", BLOCKED, reason="waiting for warehouse credentials")
    return plan


#: Proposed moves of the step ``patch_etl``: (its state before, target, keyword arguments).
MOVES = {
    "pending -> done, with evidence": (PENDING, DONE, {"evidence": "row counts equal"}),
    "active -> done, with evidence": (ACTIVE, DONE, {"evidence": "row counts equal"}),
    "active -> done, no evidence": (ACTIVE, DONE, {}),
    "active -> blocked, waiting for credentials": (ACTIVE, BLOCKED, {"reason": "credentials"}),
    "blocked -> active, credentials arrived": (BLOCKED, ACTIVE, {}),
    "blocked -> pending, credentials arrived": (BLOCKED, PENDING, {"reason": "credentials"}),
    "done -> abandoned, no longer needed": (DONE, ABANDONED, {"reason": "no longer needed"}),
    "pending -> abandoned, no reason given": (PENDING, ABANDONED, {}),
}


def _move_allowed(label: str) -> bool:
    before, target, kwargs = MOVES[label]
    plan = _fresh_step_plan(before)
    try:
        plan.transition("patch_etl", target, **kwargs)
    except TransitionError:
        return False
    return True


#: Proposed revisions of the migration plan after its revision (all keyword arguments of
#: :meth:`decompkit.artefact.Plan.revise` but the reason and the observation).
REVISIONS = {
    "drop the production check": {"remove": ["verify_production"]},
    "add a rollback rehearsal before redeploy": {
        "add": [
            Step(
                "rehearse_rollback",
                "Rehearse the rollback of the scheduler patch",
                depends_on=("patch_scheduler",),
                verification="rollback restores the old jobs in staging",
            )
        ],
        "add_edges": [("rehearse_rollback", "redeploy")],
    },
    "narrow the goal to the reporting jobs": {
        "goal": "Move the reporting jobs to the new warehouse connector"
    },
    "make the sweep wait for production verification": {
        "add_edges": [("verify_production", "sweep_scheduled_jobs")]
    },
    "remove the finished schema reading": {"remove": ["read_schemas"]},
    "reopen the ETL patch: its dry run used stale data": {"reopen": ["patch_etl"]},
}


def _revision_refused(label: str) -> bool:
    plan = migration_scenario()
    try:
        plan.revise(reason="proposed in class", observation=label, **REVISIONS[label])
    except RevisionError:
        return True
    return False


@functools.cache
def _verdicts() -> tuple[dict, frozenset]:
    """The artefact's verdicts on :data:`MOVES` and :data:`REVISIONS` (the same for every
    student): played once, not once per answer key and again per check."""
    moves = {m: "legal" if _move_allowed(m) else "illegal" for m in MOVES}
    return moves, frozenset(r for r in REVISIONS if _revision_refused(r))


@cached_key
def key(P: HarnessParams) -> dict:
    """Every answer of the notebook for the parameters ``P``.

    Examples
    --------
    >>> k = key(HarnessParams())
    >>> sorted(k["ready_now"]), f"{k['progress_original']:.3f} {k['progress_current']:.3f}"
    (['patch_etl', 'patch_reporting'], '0.833 0.556')
    >>> round(k["success"], 3), round(k["success_trace_reader"], 3)
    (0.769, 0.096)
    """
    progress = migration_scenario().progress()
    q_eff = P.q * (1 - P.persuasion)
    matrix = np.linalg.matrix_power(markov.transition_matrix(P.n, P.p, P.q), P.budget)
    appended = harness.appended_context_cost(P.T, P.a, P.L0)
    return {
        "ready_now": set(plan_at(STAGE).ready()),
        "moves": dict(_verdicts()[0]),
        "refused": set(_verdicts()[1]),
        "progress_original": progress.original_fraction,
        "progress_current": progress.current_fraction,
        "success": markov.success_exact(P.n, P.p, P.q, P.budget),
        "corrupted": float(matrix[0, -1]),
        "q_effective": q_eff,
        "success_trace_reader": markov.success_exact(P.n, P.p, q_eff, P.budget),
        "clustered": "lower",
        "appended_cost": appended,
        "cost_ratio": appended / harness.fresh_context_cost(P.T, P.L_star),
    }


def _mistakes(item: str, P: HarnessParams) -> list[Mistake]:
    p, q, n, B, r = P.p, P.q, P.n, P.budget, P.persuasion
    success = markov.success_exact(n, p, q, B)
    return {
        "progress_original": [
            Mistake(
                "used_current_plan",
                5 / 9,
                "that is the share of the plan as it stands now; the question asks about the "
                "steps it had when it was accepted",
            )
        ],
        "progress_current": [
            Mistake(
                "used_original_plan",
                5 / 6,
                "that is the share of the original plan; the current plan also holds the steps "
                "added after the evidence",
            )
        ],
        "success": [
            Mistake(
                "no_audit",
                p**n,
                "that is the chain without an audit; here caught errors are retried",
            ),
            Mistake(
                "perfect_audit",
                markov.success_exact(n, p, 1.0, B),
                "that is a perfect audit, which catches every error; this one misses some",
            ),
        ],
        "corrupted": [
            Mistake(
                "one_minus_success",
                1 - success,
                "not every failure is corruption: a run can also run out of budget",
            ),
            Mistake(
                "one_round_escape",
                (1 - p) * (1 - q),
                "that is one round's escape rate, not the chance over the whole budget",
            ),
        ],
        "q_effective": [
            Mistake(
                "used_persuasion",
                q * r,
                "that is the share of catches the narration talks the auditor out of; it "
                "keeps the others",
            ),
            Mistake(
                "forgot_q",
                1 - r,
                "detection still starts from the auditor's own rate q",
            ),
        ],
        "success_trace_reader": [
            Mistake(
                "full_detection",
                success,
                "that is the auditor reading the environment, with its full detection rate",
            ),
            Mistake(
                "no_detection",
                p**n,
                "the trace reader still catches some errors: its detection rate is not zero",
            ),
        ],
        "appended_cost": [
            Mistake(
                "rounds_off_by_one",
                harness.appended_context_cost(P.T + 1, P.a, P.L0) - P.L0**2,
                "round t reads L0 + a t tokens for t = 0 .. T-1, not t = 1 .. T",
            ),
            Mistake(
                "last_round_only",
                P.T * (P.L0 + P.a * (P.T - 1)) ** 2,
                "the cost adds up every round, each at its own context length, not the last "
                "round's T times",
            ),
        ],
        "cost_ratio": [
            Mistake(
                "inverted",
                harness.fresh_context_cost(P.T, P.L_star)
                / harness.appended_context_cost(P.T, P.a, P.L0),
                "inverted: the question asks how many times the fresh contexts' cost the "
                "appended transcript costs",
            )
        ],
    }.get(item, [])


_BOUNDS = {
    "progress_original": ((0.0, 1.0), "a share of steps lies in [0, 1]"),
    "progress_current": ((0.0, 1.0), "a share of steps lies in [0, 1]"),
    "success": ((0.0, 1.0), "a probability lies in [0, 1]"),
    "corrupted": ((0.0, 1.0), "a probability lies in [0, 1]"),
    "q_effective": ((0.0, 1.0), "a detection rate lies in [0, 1]"),
    "success_trace_reader": ((0.0, 1.0), "a probability lies in [0, 1]"),
    "appended_cost": ((0.0, np.inf), "a cost in tokens squared is positive"),
    "cost_ratio": ((0.0, np.inf), "a ratio of two costs is positive"),
}

_IDEAS = {
    "progress_original": "count the done steps among those the plan had when it was accepted",
    "progress_current": "count the done steps among all the steps the plan has now",
    "success": "the loop is the absorbing chain of notebook 2, with this notebook's n, p, q "
    "and budget",
    "corrupted": "read the entry of state C in the first row of the matrix power",
    "q_effective": "the auditor catches an error only when it would have caught it and is "
    "not talked out of it",
    "success_trace_reader": "the same chain as in B1, with the trace reader's detection rate",
    "appended_cost": "add up the squared context length of every round t = 0 .. T-1",
    "cost_ratio": "divide the appended transcript's cost by the cost of T fresh rounds",
}

_MOVE_HINTS = {
    "pending -> done, with evidence": "a step is done only after it was active",
    "active -> done, no evidence": "done requires evidence",
    "blocked -> active, credentials arrived": "a blocked step goes back to pending first",
    "done -> abandoned, no longer needed": "a done result is reopened, never abandoned",
    "pending -> abandoned, no reason given": "abandoning keeps its reason",
}
_REVISION_HINTS = [
    (
        "refused_an_addition",
        lambda got: "add a rollback rehearsal before redeploy" in got,
        "adding a step that waits for evidence is how a plan learns; it is accepted",
    ),
    (
        "refused_the_reopening",
        lambda got: "reopen the ETL patch: its dry run used stale data" in got,
        "a done result may be invalidated: reopening is a legal revision",
    ),
]
_CLUSTERED = ["lower", "higher", "unchanged"]


def judge(item: str, answer, P: HarnessParams) -> Diagnosis:
    """The verdict on one answer of the notebook (see :func:`key` for the items).

    Raises
    ------
    ValueError
        When ``item`` is not an item of this notebook.

    Examples
    --------
    >>> P = HarnessParams()
    >>> judge("q_effective", P.q * P.persuasion, P).mistake
    'used_persuasion'
    >>> judge("clustered", "higher", P).status
    'off'
    """
    expected = known_item(key(P), item)
    if item == "ready_now":
        plan = plan_at(STAGE)
        return judge_set(
            answer,
            expected[item],
            what="step ids",
            hints=[
                (
                    "waits_for_undone",
                    lambda got: any(
                        any(plan.step(d).state is not DONE for d in plan.step(s).depends_on)
                        for s in got
                        if s in plan.graph()
                    ),
                    "a step is ready only when every step it waits for is done",
                ),
                (
                    "done_is_ready",
                    lambda got: any(s in plan.graph() and plan.step(s).state is DONE for s in got),
                    "done steps are not ready any more",
                ),
            ],
        )
    if item == "moves":
        return judge_choices(answer, _verdicts()[0], ["legal", "illegal"], _MOVE_HINTS)
    if item == "refused":
        problem = _refused_form(answer)
        if problem is not None:
            return problem
        return judge_set(answer, _verdicts()[1], hints=_REVISION_HINTS, what="proposals")
    if item == "clustered":
        return judge_choice(
            answer,
            expected[item],
            _CLUSTERED,
            "with the same mean p, hard subtasks burn more rounds and slip more often",
        )
    bounds, hint = _BOUNDS[item]
    return judge_number(
        answer,
        expected[item],
        mistakes=_mistakes(item, P),
        bounds=bounds,
        bounds_hint=hint,
        idea=_IDEAS[item],
    )


def _refused_form(answer) -> Diagnosis | None:
    got, problem = read_set(answer, "proposals (the keys of loop.REVISIONS)")
    if problem is not None:
        return problem
    unknown = sorted(str(r) for r in got if r not in REVISIONS)
    if unknown:
        return Diagnosis("invalid", f"not among the proposals: {unknown}")
    return None


def form(item: str, answer, P: HarnessParams) -> Diagnosis:
    """What the visible check of a legal/illegal, refused or lower/higher item says: the
    form only (naming what is off would give the answer away); the hidden tests grade it."""
    graded = f"as asked; {GRADED_LATER}"
    if item == "moves":
        problem = form_choices(answer, MOVES, ["legal", "illegal"])
        return problem or Diagnosis("answered", f"a word for every move, {graded}")
    if item == "refused":
        problem = _refused_form(answer)
        return problem or Diagnosis("answered", f"a set of proposals, {graded}")
    verdict = judge_choice(answer, _CLUSTERED[0], _CLUSTERED)
    if verdict.status == "invalid":
        return verdict
    return Diagnosis("answered", f"one of the three words, {graded}")


def check(item: str, answer, P: HarnessParams) -> None:
    """The visible check of one item: prints ``[ok] B1 success: on track`` or a hint."""
    report(EXERCISE, item, answer, P)


def degenerate(P: HarnessParams) -> list[str]:
    """Why ``P`` would make an exercise of the notebook degenerate (empty when usable).

    Examples
    --------
    The lecture's budget of 2n rounds is so generous that almost no run runs out of it, so
    corruption is all but 1 - success; per-student budgets are tighter:

    >>> from decompkit.exercises.params import params
    >>> [problem.split(":")[0] for problem in degenerate(HarnessParams())]
    ['corrupted', 'no run runs out of budget']
    >>> degenerate(params("harness", "s0001"))
    []
    """
    expected = key(P)
    found = mistake_clashes(expected, lambda item: _mistakes(item, P))
    if not 0.05 <= expected["success"] <= 0.95:
        found.append(f"success = {expected['success']:.4f} is too close to 0 or 1")
    if not 0.02 <= expected["corrupted"] <= 0.9:
        found.append(f"corruption = {expected['corrupted']:.4f} is too close to 0 or 1")
    if expected["success"] - expected["success_trace_reader"] < 0.05:
        found.append("the trace-reading auditor barely changes success")
    if 1 - expected["success"] - expected["corrupted"] < 0.02:
        found.append("no run runs out of budget: corruption would be 1 - success")
    return found


#: Every graded item of the notebook, in its order.
ITEMS = (
    Item("ready_now", "A1", ("ready_now",), "ready_now_value", "set"),
    Item("moves", "A2", ("moves",), "moves_value", "choices", True),
    Item("progress_original", "A3", ("progress_original",), "progress_original_value", "number"),
    Item("progress_current", "A3", ("progress_current",), "progress_current_value", "number"),
    Item("refused", "A4", ("refused",), "refused_value", "set", True),
    Item("success", "B1", ("success",), "success_value", "number"),
    Item("corrupted", "B2", ("corrupted",), "corrupted_value", "number"),
    Item("q_effective", "B3", ("q_effective",), "q_effective_value", "number"),
    Item(
        "success_trace_reader",
        "B4",
        ("success_trace_reader",),
        "success_trace_reader_value",
        "number",
    ),
    Item("clustered", "B5", ("clustered",), "clustered_value", "choice", True),
    Item("appended_cost", "C1", ("appended_cost",), "appended_cost_value", "number"),
    Item("cost_ratio", "C2", ("cost_ratio",), "cost_ratio_value", "number"),
)

#: The notebook as the teaching layer knows it (see :class:`decompkit.exercises.Exercise`).
EXERCISE = Exercise(
    name="harness",
    file="06-plan-artefact-and-loop",
    Params=HarnessParams,
    draw=draw,
    key=key,
    judge=judge,
    degenerate=degenerate,
    items=ITEMS,
    form=form,
)
