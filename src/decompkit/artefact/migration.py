r"""The warehouse-connector migration, played step by step on a plan artefact.

Six steps are planned (:math:`|V_0| = 6`) and five are done with evidence; verifying production
finds a caller the first search missed, and a revision adds three steps, so honest progress
reads :math:`5/6` against the plan as accepted and :math:`5/9` against the work now known.
:mod:`decompkit.artefact` re-exports :func:`migration_stages` and :func:`migration_scenario`.
"""

from __future__ import annotations

from .plan import Plan
from .states import ACTIVE, DONE, PENDING, Step

__all__ = ["migration_stages", "migration_scenario"]


_MIGRATION_GOAL = "Move every reader of the warehouse from the old connector to the new one"
_MIGRATION = [
    (
        "find_callers",
        "Find every caller of the old connector",
        (),
        "a list of call sites, each with file and line",
        "grep + import graph: 14 call sites",
    ),
    (
        "read_schemas",
        "Read the old and new warehouse schemas",
        ("find_callers",),
        "a column mapping for every table a caller reads",
        "mapping.csv: 31 tables mapped",
    ),
    (
        "patch_reporting",
        "Point the reporting jobs at the new connector",
        ("find_callers", "read_schemas"),
        "reporting tests pass against the new connector",
        "CI run 4812: 212 reporting tests green",
    ),
    (
        "patch_etl",
        "Point the ETL loaders at the new connector",
        ("find_callers", "read_schemas"),
        "an ETL dry run loads yesterday with equal row counts",
        "dry run: 48 tables, row counts equal",
    ),
    (
        "deploy",
        "Deploy the patched services",
        ("patch_reporting", "patch_etl"),
        "the new connector version is live",
        "deploy 2026-03-02 10:14, health checks green",
    ),
    (
        "verify_production",
        "Verify production on the new connector",
        ("deploy",),
        "24 h of production logs without a call to the old connector",
        None,
    ),
]
_SCHEDULER_FOUND = (
    "production log: the nightly scheduler job refresh_aggregates still opens the old "
    "connector at 02:00; its call lives in the scheduler config, which the code search missed"
)
_DISCOVERED = [
    Step(
        "sweep_scheduled_jobs",
        "List every scheduled job that opens a warehouse connection",
        verification="every job in the scheduler config checked, callers listed",
    ),
    Step(
        "patch_scheduler",
        "Point the scheduler's jobs at the new connector",
        depends_on=("sweep_scheduled_jobs", "read_schemas"),
        verification="each listed job runs once against the new connector",
    ),
    Step(
        "redeploy",
        "Deploy the scheduler patch",
        depends_on=("patch_scheduler", "deploy"),
        verification="the patched scheduler config is live",
    ),
]


def migration_stages(*, clock=None):
    """Play the warehouse-connector migration, yielding ``(label, plan)`` after each stage.

    Six steps are planned; five are done with evidence; verifying production finds a caller
    the first search missed (a scheduler job configured outside the code), so verification is
    put back and three steps are added: sweep the scheduled jobs, patch the scheduler, deploy
    again; verification is re-pointed from ``deploy`` to ``redeploy`` (the lecture's
    "re-point" repair, so the invariant step stays the sink and still waits for ``deploy``).
    Verification was never done, so it is *put back* (active -> pending), not reopened: its
    result was not accepted, only its run stopped. The six steps are F, S, P, E, Y, V of worked
    example B (:func:`decompkit.examples.migration`), without the runbook, dashboard and
    approval steps.

    Parameters
    ----------
    clock : callable, optional
        Passed to :class:`~decompkit.artefact.Plan`.

    Yields
    ------
    label : str
        What just happened.
    plan : Plan
        The same live plan each time; read it before advancing the generator.

    Examples
    --------
    >>> for label, plan in migration_stages():
    ...     p = plan.progress()
    ...     print(f"{label:<22} {p.original_fraction:.3f} {p.current_fraction:.3f}")
    plan accepted          0.000 0.000
    find_callers done      0.167 0.167
    read_schemas done      0.333 0.333
    patch_reporting done   0.500 0.500
    patch_etl done         0.667 0.667
    deploy done            0.833 0.833
    verification put back  0.833 0.833
    plan revised           0.833 0.556
    """
    plan = Plan(
        _MIGRATION_GOAL,
        [Step(i, d, depends_on=p, verification=v) for i, d, p, v, _ in _MIGRATION],
        clock=clock,
    )
    yield "plan accepted", plan
    for sid, *_, evidence in _MIGRATION[:-1]:
        plan.transition(sid, ACTIVE)
        plan.transition(sid, DONE, evidence=evidence)
        yield f"{sid} done", plan
    plan.transition("verify_production", ACTIVE)
    plan.transition(
        "verify_production",
        PENDING,
        reason="an unpatched caller remains",
        observation=_SCHEDULER_FOUND,
    )
    yield "verification put back", plan
    plan.revise(
        reason="the caller search missed jobs configured in the scheduler: find them, patch "
        "them, deploy again, then verify",
        observation=_SCHEDULER_FOUND,
        add=_DISCOVERED,
        add_edges=[("redeploy", "verify_production")],
        remove_edges=[("deploy", "verify_production")],
    )
    yield "plan revised", plan


def migration_scenario(*, clock=None) -> Plan:
    """The warehouse-connector migration after all its stages (see :func:`migration_stages`).

    Examples
    --------
    >>> plan = migration_scenario()
    >>> p = plan.progress()
    >>> print(p)
    5 of 6 original steps done; 3 added after evidence; 5 of 9 current steps done
    >>> f"{p.original_fraction:.1%} -> {p.current_fraction:.1%}"
    '83.3% -> 55.6%'
    >>> [e.kind for e in plan.events][-3:]
    ['start', 'put_back', 'revision']
    """
    *_, (_, plan) = migration_stages(clock=clock)
    return plan
