r"""Checks of a candidate plan: the steps a plan is built from, and every proposed revision.

A candidate :math:`(V', E')` is accepted only if its new steps are well formed, its ids are
unique, every dependency names a step, it is acyclic, and each invariant step :math:`v` keeps
:math:`\mathrm{anc}(v) \setminus R \subseteq \mathrm{anc}'(v)` (:math:`R` the removed steps).
The functions here only find problems and return them, all at once; :class:`decompkit.artefact.
Plan` raises and commits, so nothing here touches a plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..dag import CycleError, ancestors, descendants, topological_order
from ..plan import PlanProblem
from ..validate import short
from .states import ACTIVE, BLOCKED, DONE, PENDING, Step, is_text

__all__ = [
    "as_step",
    "as_items",
    "as_ids",
    "as_edges",
    "graph_problems",
    "live_descendants",
    "check_revision",
]


# --------------------------------------------------------------------------------------------
# Arguments: the shape of what a caller hands in (a ValueError, raised at once)
# --------------------------------------------------------------------------------------------


def as_items(name: str, value, what: str) -> list:
    """``value`` as a list, if it is an iterable other than a str."""
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        raise ValueError(f"{name} must be a list of {what}, got {short.repr(value)}")
    return list(value)


def as_ids(name: str, value) -> tuple:
    """``value`` as a tuple of step ids (str), repeats dropped, first occurrence kept."""
    ids = as_items(name, value, "step ids")
    for sid in ids:
        if not isinstance(sid, str):
            raise ValueError(f"{name} must hold step ids (str), got {short.repr(sid)}")
    return tuple(dict.fromkeys(ids))


def as_edges(name: str, value) -> list[tuple]:
    """``value`` as a list of ``(before, after)`` pairs of step ids, repeats dropped."""
    edges = as_items(name, value, "(before, after) pairs")
    for e in edges:
        if not (isinstance(e, tuple) and len(e) == 2 and all(isinstance(x, str) for x in e)):
            raise ValueError(f"{name} must hold (before, after) pairs of step ids, got {e!r}")
    return list(dict.fromkeys(edges))


def as_step(where: str, item) -> Step:
    """``item`` as a :class:`Step` (a mapping is passed to it as keywords) with a str id."""
    if isinstance(item, Mapping):
        try:
            item = Step(**item)
        except TypeError as error:
            raise ValueError(f"{where} is not a valid step: {error}") from None
    if not isinstance(item, Step):
        raise ValueError(
            f"{where} must be a Step or a mapping of its fields, got {short.repr(item)}"
        )
    if not isinstance(item.id, str):  # every later check keys on the id
        raise ValueError(f"{where} has id {short.repr(item.id)}; an id must be a str")
    return item


# --------------------------------------------------------------------------------------------
# Problems of a candidate step list (construction and every revision)
# --------------------------------------------------------------------------------------------


def _well_formed_deps(deps) -> bool:
    return isinstance(deps, tuple) and all(isinstance(d, str) for d in deps)


def _step_problems(step: Step, position: int) -> list[PlanProblem]:
    label = step.id if is_text(step.id) else f"#{position}"
    deps = step.depends_on
    bad_deps = not _well_formed_deps(deps)
    checks = [
        (
            not is_text(value),
            "malformed",
            f"{field} {short.repr(value)}; it must be a non-empty str",
        )
        for field, value in [
            ("id", step.id),
            ("description", step.description),
            ("verification", step.verification),
        ]
    ] + [
        (bad_deps, "malformed", f"depends_on {short.repr(deps)}; it must be a list of step ids"),
        (not bad_deps and len(set(deps)) < len(deps), "malformed", f"a repeated dependency {deps}"),
        (not isinstance(step.note, str), "malformed", f"note {short.repr(step.note)}, not a str"),
        (
            step.state is not PENDING or step.evidence is not None,
            "not_pending",
            f"state {str(step.state)!r}; new steps start pending, without evidence",
        ),
    ]
    where = f"step {label!r}" if is_text(step.id) else f"the step at position {position}"
    return [PlanProblem(kind, (label,), f"{where} has {why}") for bad, kind, why in checks if bad]


def graph_problems(steps: list[Step], fresh: int) -> list[PlanProblem]:
    """Problems of a candidate list: its last ``fresh`` steps' fields, ids, dependencies, cycles."""
    new = steps[len(steps) - fresh :]
    problems = [p for k, s in enumerate(new, start=1) for p in _step_problems(s, k)]
    seen: set = set()
    for s in steps:
        if s.id in seen:
            problems.append(
                PlanProblem("duplicate_id", (s.id,), f"step id {s.id!r} is used more than once")
            )
        seen.add(s.id)
    ids = {s.id for s in steps}
    graph = {}
    for s in steps:
        if s.id in graph or not _well_formed_deps(s.depends_on):
            continue
        for d in s.depends_on:
            if d not in ids:
                problems.append(
                    PlanProblem(
                        "unknown_dependency",
                        (s.id, d),
                        f"step {s.id!r} depends on {d!r}, which is not a step of the plan",
                    )
                )
        graph[s.id] = [d for d in s.depends_on if d in ids]
    try:
        topological_order(graph)
    except CycleError as error:
        shown = " -> ".join(map(repr, error.cycle))
        problems.append(
            PlanProblem(
                "cycle", tuple(error.cycle), f"the dependencies would form a cycle: {shown}"
            )
        )
    return problems


def live_descendants(steps: Mapping, step_id: str, besides) -> str:
    """The descendants of a step that are active or done and not in ``besides``, for a message.

    ``steps`` is ``{id: Step}``; the result lists them in its order as ``'id' (state)``,
    comma-separated, and is empty when there are none.
    """
    found = descendants({sid: s.depends_on for sid, s in steps.items()}, [step_id])
    live = [
        d for d in steps if d in found and d not in besides and steps[d].state in (ACTIVE, DONE)
    ]
    return ", ".join(f"{d!r} ({steps[d].state})" for d in live)


# --------------------------------------------------------------------------------------------
# Problems of a proposed revision
# --------------------------------------------------------------------------------------------


def _with_deps(step, deps):
    """``step`` with dependencies ``deps``: itself (a frozen snapshot) if they are its own."""
    deps = tuple(deps)
    return step if deps == step.depends_on else replace(step, depends_on=deps)


def check_revision(
    old: Mapping,
    *,
    goal: str,
    invariants: tuple,
    used: set,
    new: list,
    remove: tuple,
    add_edges: list,
    remove_edges: list,
    reopen: tuple,
    notes: dict,
    proposed_goal=None,
) -> tuple[list, list, list]:
    """Build the plan a revision proposes and find every problem with it.

    Parameters
    ----------
    old : Mapping of str to Step
        The plan's current steps, in order.
    goal, invariants, used
        The plan's goal, its invariant step ids and every id it has ever held.
    new, remove, add_edges, remove_edges, reopen, notes
        The proposed change, already in shape (see :meth:`decompkit.artefact.Plan.revise`).
    proposed_goal : str, optional
        The ``goal`` the revision was given; a problem unless it equals ``goal``.

    Returns
    -------
    candidate : list of Step
        The kept steps, then the new ones, with their edited dependencies (states, notes and
        evidence as they were).
    dropped : list of (str, str)
        The edges that went with the removed steps.
    problems : list of PlanProblem
        Every problem found, in a fixed order; the revision may be committed only if empty.
    """
    problems = []

    def problem(kind, steps, message):
        problems.append(PlanProblem(kind, tuple(steps), message))

    drift = proposed_goal is not None and proposed_goal != goal
    if drift:
        problem(
            "goal",
            (),
            f"revision would change the goal from {goal!r} to "
            f"{short.repr(proposed_goal)}; the goal is fixed for the life of the plan",
        )
    if not (drift or new or remove or add_edges or remove_edges or reopen or notes):
        problem("empty", (), "revision changes nothing")
    for sid in [*remove, *reopen, *notes]:
        if sid not in old:
            problem("unknown_step", (sid,), f"unknown step {short.repr(sid)}")
    for sid in remove:
        if sid in invariants:
            problem(
                "invariant",
                (sid,),
                f"step {sid!r} is a completion invariant and cannot be removed",
            )
        elif sid in old and old[sid].state is not PENDING:
            problem(
                "immutable_step",
                (sid,),
                f"step {sid!r} is {old[sid].state}; only "
                "pending steps can be removed (executed steps are immutable)",
            )
    for sid in reopen:
        if sid in old and old[sid].state is not DONE:
            problem(
                "not_done",
                (sid,),
                f"step {sid!r} is {old[sid].state}; only done steps can be reopened",
            )
        elif sid in old and (live := live_descendants(old, sid, reopen)):
            problem(
                "dependent_done",
                (sid,),
                f"reopening {sid!r} invalidates {live}; reopen them in the same revision",
            )
    for sid, text in notes.items():
        if not isinstance(text, str):
            problem("malformed", (sid,), f"note for {sid!r} must be a str, got {short.repr(text)}")
    for s in new:
        if s.id in used and s.id not in old:
            problem(
                "duplicate_id",
                (s.id,),
                f"step id {s.id!r} was used earlier in this plan; ids are never reused",
            )

    # The candidate graph: kept steps, then new ones; ``deps`` is edited in place.
    kept = [s for sid, s in old.items() if sid not in remove]
    deps = {s.id: list(s.depends_on) for s in kept}
    for s in new:
        if _well_formed_deps(s.depends_on):
            deps.setdefault(s.id, list(s.depends_on))
    dropped = [(d, sid) for sid in remove if sid in old for d in old[sid].depends_on]
    for s in kept:
        dropped += [(sid, s.id) for sid in remove if sid in deps[s.id]]
        deps[s.id] = [d for d in deps[s.id] if d not in remove]
    for edges, adding in ((remove_edges, False), (add_edges, True)):
        for u, v in edges:
            if u not in deps or v not in deps:
                problem("unknown_step", (u, v), f"edge {(u, v)!r} names an unknown step")
            elif v in old and old[v].state not in (PENDING, BLOCKED):
                problem(
                    "immutable_step",
                    (v,),
                    f"step {v!r} is {old[v].state}; only "
                    "pending or blocked steps can change their dependencies",
                )
            elif adding and u in deps[v]:
                problem("duplicate_edge", (u, v), f"edge {(u, v)!r} is already in the plan")
            elif not adding and u not in deps[v]:
                problem("unknown_edge", (u, v), f"edge {(u, v)!r} is not in the plan")
            elif adding:
                deps[v].append(u)
            else:
                deps[v].remove(u)
    candidate = [_with_deps(s, deps[s.id]) for s in kept]
    candidate += [_with_deps(s, deps[s.id]) if _well_formed_deps(s.depends_on) else s for s in new]
    found = graph_problems(candidate, len(new))
    problems += found
    if not found:  # ancestor sets are only meaningful for a valid graph
        before = {sid: s.depends_on for sid, s in old.items()}
        graph = {s.id: s.depends_on for s in candidate}
        for v in invariants:
            if v in graph:
                lost = ancestors(before, [v]) - set(remove) - ancestors(graph, [v])
                for u in [u for u in old if u in lost]:
                    problem(
                        "invariant",
                        (v, u),
                        f"invariant step {v!r} would no longer wait for {u!r}",
                    )
    return candidate, dropped, problems
