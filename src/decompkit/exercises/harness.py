r"""Parameters, answer key and visible checks of the plan-artefact and harness notebook.

Part A plays the student's own plan artefact (:mod:`~decompkit.exercises.artefact_scenario`;
the lecture's connector migration without an id) on a :class:`decompkit.artefact.Plan`: its
frontier, which moves and revisions the artefact refuses, and its honest progress
(:mod:`~decompkit.exercises.artefact_questions`). Part B runs the
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
from ..artefact import DONE
from .artefact_questions import (
    MOVES,
    REVISIONS,
    STAGE,
    events_table,
    frontier_plan,
    move_hints,
    move_plan,
    move_step,
    moves,
    plan_at,
    revised_plan,
    revision_hints,
    revisions,
    steps_table,
    verdicts,
)
from .artefact_scenario import Artefact, draw_artefact
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
from .support import cached_key, grid, known_item, mistake_clashes, two_digits_slip_through

__all__ = [
    "HarnessParams",
    "draw",
    "EXERCISE",
    "key",
    "judge",
    "form",
    "check",
    "ITEMS",
    "degenerate",
    # part A's plan artefact (decompkit.exercises.artefact_questions), lifted for the notebook
    "MOVES",
    "REVISIONS",
    "STAGE",
    "plan_at",
    "steps_table",
    "events_table",
    "frontier_plan",
    "revised_plan",
    "move_step",
    "move_plan",
    "moves",
    "revisions",
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
    artefact : the student's own plan artefact of part A (None: the lecture's migration).
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
    artefact: Artefact | None = None

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
        artefact=draw_artefact(rng),
    )


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
    progress = revised_plan(P).progress()
    legal, refused = verdicts(P)
    q_eff = P.q * (1 - P.persuasion)
    matrix = np.linalg.matrix_power(markov.transition_matrix(P.n, P.p, P.q), P.budget)
    appended = harness.appended_context_cost(P.T, P.a, P.L0)
    return {
        "ready_now": set(frontier_plan(P).ready()),
        "moves": dict(legal),
        "refused": set(refused),
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
    """The classic mistakes of numeric item ``item``, with the value each produces."""
    return list(_mistake_rows(P).get(item, ()))


@functools.lru_cache(maxsize=256)  # every check of an answer asks for its item's row
def _mistake_rows(P: HarnessParams) -> dict[str, tuple[Mistake, ...]]:
    """The classic mistakes of each numeric item for ``P``."""
    p, q, n, B, r = P.p, P.q, P.n, P.budget, P.persuasion
    success = markov.success_exact(n, p, q, B)
    progress = revised_plan(P).progress()
    rows = {
        "progress_original": [
            Mistake(
                "used_current_plan",
                progress.current_fraction,
                "that is the share of the plan as it stands now; the question asks about the "
                "steps it had when it was accepted",
            )
        ],
        "progress_current": [
            Mistake(
                "used_original_plan",
                progress.original_fraction,
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
    }
    return {name: tuple(row) for name, row in rows.items()}


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
        plan = frontier_plan(P)
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
        return judge_choices(answer, verdicts(P)[0], ["legal", "illegal"], move_hints(P))
    if item == "refused":
        problem = _refused_form(answer, P)
        if problem is not None:
            return problem
        return judge_set(answer, verdicts(P)[1], hints=revision_hints(P), what="proposals")
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


def _refused_form(answer, P) -> Diagnosis | None:
    got, problem = read_set(answer, "proposals (the keys of loop.revisions(P))")
    if problem is not None:
        return problem
    unknown = sorted(str(r) for r in got if r not in revisions(P))
    if unknown:
        return Diagnosis("invalid", f"not among the proposals: {unknown}")
    return None


def form(item: str, answer, P: HarnessParams) -> Diagnosis:
    """What the visible check of a legal/illegal, refused or lower/higher item says: the
    form only (naming what is off would give the answer away); the hidden tests grade it."""
    graded = f"as asked; {GRADED_LATER}"
    if item == "moves":
        problem = form_choices(answer, moves(P), ["legal", "illegal"])
        return problem or Diagnosis("answered", f"a word for every move, {graded}")
    if item == "refused":
        problem = _refused_form(answer, P)
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
    for item in two_digits_slip_through(expected):
        found.append(f"{item}: two significant digits would pass the four-digit rule")
    if P.artefact is not None:
        found += _artefact_problems(P, expected)
    return found


def _artefact_problems(P: HarnessParams, expected: dict) -> list[str]:
    """Why the student's own plan artefact would make part A degenerate: every situation
    asked about must occur, and every hint must fit the verdict it explains."""
    found = []
    plan = frontier_plan(P)
    if not expected["ready_now"]:
        found.append("the frontier is empty")
    if not any(s.state is DONE for s in plan.steps):
        found.append("no step is done at the frontier")
    if len(set(expected["moves"].values())) < 2:
        found.append("every proposed move gets the same verdict")
    hints = move_hints(P)
    if any((m in hints) != (v == "illegal") for m, v in expected["moves"].items()):
        found.append("a move's hint does not fit its verdict")
    refused, proposed = expected["refused"], revisions(P)
    if len(proposed) < 5 or not 2 <= len(refused) <= len(proposed) - 2:
        found.append(f"{len(refused)} of {len(proposed)} revisions refused")
    if not any(applies(set(proposed) - refused) for _, applies, _ in revision_hints(P)[:1]):
        found.append("no accepted addition among the proposals")
    if expected["progress_original"] <= expected["progress_current"]:
        found.append("progress against the current plan is not below the original's")
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
