r"""Part A of notebook 6: the plan artefact each student works on, and what is asked about it.

With the lecture's numbers (``P.artefact`` is None) the plan is the warehouse-connector
migration of :func:`decompkit.artefact.migration_stages`, with the lecture's moves of
``patch_etl`` (:data:`MOVES`) and revisions (:data:`REVISIONS`); a student's own plan is an
:class:`~decompkit.exercises.artefact_scenario.Artefact` drawn from the id. Every verdict is
played on the plan itself: a move is legal when :meth:`decompkit.artefact.Plan.transition`
accepts it, a revision refused when :meth:`~decompkit.artefact.Plan.revise` raises.
:mod:`decompkit.exercises.harness` lifts this module's ``__all__``.
"""

from __future__ import annotations

import functools

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
from ..artefact.states import as_state
from .artefact_scenario import kwargs, refuses
from .support import text_table

__all__ = [
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

#: The stage of the lecture's migration at which the frontier is asked for.
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


#: Proposed moves of the lecture's step ``patch_etl``: (its state before, target, keyword
#: arguments).
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

#: Proposed revisions of the lecture's migration after its revision (all keyword arguments of
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

_MOVE_HINTS = {
    "pending -> done, with evidence": "a step is done only after it was active",
    "active -> done, no evidence": "done requires evidence",
    "blocked -> active, credentials arrived": "a blocked step goes back to pending first",
    "done -> abandoned, no longer needed": "a done result is reopened, never abandoned",
    "pending -> abandoned, no reason given": "abandoning keeps its reason",
}
_ADDED = "adding a step that waits for evidence is how a plan learns; it is accepted"
_REOPENED = "a done result may be invalidated: reopening is a legal revision"


def frontier_plan(P):
    """The plan at the stage A1 asks about: the student's own, or the lecture's migration.

    Examples
    --------
    >>> from decompkit.exercises.harness import HarnessParams
    >>> frontier_plan(HarnessParams()).ready()
    ('patch_reporting', 'patch_etl')
    """
    return plan_at(STAGE) if P.artefact is None else P.artefact.plan_at("frontier")


def revised_plan(P):
    """The plan after its revision (A3 and A4): the student's own, or the lecture's."""
    return migration_scenario() if P.artefact is None else P.artefact.plan_at("plan revised")


def move_step(P) -> str:
    """The step whose proposed moves A2 asks about: everything it waits for is done (the
    lecture's ``patch_etl`` at the frontier; a student's step once the plan is revised)."""
    return "patch_etl" if P.artefact is None else P.artefact.move_step


def moves(P) -> dict:
    """``{label: (state before, target, keyword arguments)}`` of the moves A2 proposes."""
    if P.artefact is None:
        return MOVES
    return {label: (b, t, dict(pairs)) for label, b, t, pairs, _ in P.artefact.moves}


def revisions(P) -> dict:
    """``{label: keyword arguments of Plan.revise}`` of the revisions A4 proposes."""
    if P.artefact is None:
        return REVISIONS
    return {label: kwargs(pairs) for label, pairs, _ in P.artefact.proposals}


def move_plan(P, before):
    """A plan with the step of :func:`move_step` brought to the state ``before`` (pending,
    active, blocked or done), where A2 tries a move.

    Examples
    --------
    >>> from decompkit.exercises.harness import HarnessParams
    >>> move_plan(HarnessParams(), "blocked").step("patch_etl").state
    <State.BLOCKED: 'blocked'>
    """
    before = as_state("before", before)
    if P.artefact is not None:
        return P.artefact.move_plan(before)
    plan = plan_at(STAGE)  # find_callers and read_schemas done: patch_etl may start
    if before in (ACTIVE, DONE, BLOCKED):
        plan.transition("patch_etl", ACTIVE)
    if before is DONE:
        plan.transition("patch_etl", DONE, evidence="dry run: row counts equal")
    if before is BLOCKED:
        plan.transition("patch_etl", BLOCKED, reason="waiting for warehouse credentials")
    return plan


def _legal(P, label) -> bool:
    before, target, args = moves(P)[label]
    plan = move_plan(P, before)
    try:
        plan.transition(move_step(P), target, **args)
    except TransitionError:
        return False
    return True


def _refused(P, label) -> bool:
    if P.artefact is not None:
        return refuses(P.artefact, next(p for lab, p, _ in P.artefact.proposals if lab == label))
    try:
        revised_plan(P).revise(reason="proposed in class", observation=label, **REVISIONS[label])
    except RevisionError:
        return True
    return False


@functools.lru_cache(maxsize=256)
def verdicts(P) -> tuple[dict, frozenset]:
    """The artefact's verdicts on the moves (``{label: "legal" or "illegal"}``) and the set of
    refused revisions, played once per parameter object."""
    legal = {m: "legal" if _legal(P, m) else "illegal" for m in moves(P)}
    return legal, frozenset(r for r in revisions(P) if _refused(P, r))


def move_hints(P) -> dict:
    """``{label: why it is illegal}`` for the illegal moves the check explains."""
    if P.artefact is None:
        return _MOVE_HINTS
    return {label: hint for label, *_, hint in P.artefact.moves if hint}


def revision_hints(P) -> list:
    """``(mistake, predicate on the answer's set, hint)``: an accepted addition or reopening
    put among the refused ones."""
    if P.artefact is None:
        added = {"add a rollback rehearsal before redeploy"}
        reopened = {"reopen the ETL patch: its dry run used stale data"}
    else:
        refused = verdicts(P)[1]
        kinds = {label: kind for label, _, kind in P.artefact.proposals if label not in refused}
        added = {label for label, kind in kinds.items() if kind == "add"}
        reopened = {label for label, kind in kinds.items() if kind == "reopen_ok"}
    return [
        ("refused_an_addition", lambda got: bool(added & got), _ADDED),
        ("refused_the_reopening", lambda got: bool(reopened & got), _REOPENED),
    ]
