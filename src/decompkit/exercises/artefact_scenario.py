r"""Each student's own plan artefact for notebook 6: a small feature plan, played and revised.

A plan of :math:`|V_0| = 5` to :math:`9` steps (spec, design, tests, code, release notes, data
migration, review, deploy, verify: the task kinds of the lecture) is drawn for a feature, then
played on a :class:`decompkit.artefact.Plan`: some steps done (one perhaps active, one
blocked) when the frontier is asked for; later a check (the review or the production check)
finds a gap, is put back, and a revision adds :math:`m \in \{1, 2, 3\}` steps (and may drop
the pending release notes). Eight moves of one ready step and five or six proposed revisions
of the revised plan are drawn from tables of kinds; the answer key plays every one on the plan
itself, so the tables' kinds serve only the hints.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

from ..artefact import ABANDONED, ACTIVE, BLOCKED, DONE, PENDING, Plan, RevisionError, Step
from ..artefact.states import as_state

__all__ = ["Artefact", "draw_artefact"]

#: Features a plan may be for: (slug used in step ids, what is shipped, what a step may wait
#: for, an input the first code missed, that input's slug).
FEATURES = (
    (
        "export",
        "CSV export of the monthly reports",
        "the finance team's sign-off",
        "empty months",
        "month",
    ),
    (
        "ratelimit",
        "rate limiting on the public API",
        "the gateway credentials",
        "bursts of traffic",
        "burst",
    ),
    (
        "search",
        "autocomplete in the product search",
        "the search index dump",
        "accented names",
        "accent",
    ),
    (
        "sso",
        "single sign-on for the admin console",
        "the identity provider's keys",
        "expired sessions",
        "expiry",
    ),
    (
        "invoice",
        "the new invoice layout",
        "the legal text from the lawyers",
        "long addresses",
        "address",
    ),
    ("audit", "an audit log of admin actions", "a retention decision", "bulk edits", "bulk"),
    ("upload", "resumable file uploads", "a storage bucket", "dropped connections", "drop"),
    (
        "alerts",
        "e-mail alerts for failed payments",
        "the mail relay account",
        "repeated failures",
        "repeat",
    ),
    (
        "i18n",
        "a German translation of the checkout",
        "the translator's files",
        "plural forms",
        "plural",
    ),
    (
        "cache",
        "a cache in front of the pricing service",
        "a cache cluster",
        "price changes",
        "stale",
    ),
)


@dataclass(frozen=True)
class Artefact:
    """One student's plan artefact and the questions asked about it.

    Attributes
    ----------
    goal : str
    steps : tuple of Step
        The plan as accepted (all pending).
    frontier : tuple of (step, state, reason, evidence)
        The moves played before the frontier is asked for.
    run : tuple of (step, state, reason, evidence)
        The moves played after that, up to the check that finds the gap (put back last).
    found : str
        What that check observed.
    revision : tuple of (name, value)
        Keyword arguments of :meth:`decompkit.artefact.Plan.revise` besides the reason.
    move_step : str
        The step whose proposed moves are judged: one that may start once the plan is revised
        (not one of the frontier's, which A1 asks for).
    moves : tuple of (label, before, target, kwargs pairs, hint)
    proposals : tuple of (label, kwargs pairs, kind)
    """

    goal: str
    steps: tuple
    frontier: tuple
    run: tuple
    found: str
    revision: tuple
    move_step: str
    moves: tuple
    proposals: tuple

    def __repr__(self) -> str:  # the parameter display shows this line, never the answers
        return f"Artefact({self.goal!r}, {len(self.steps)} steps)"

    def stages(self):
        """Yield ``(label, plan)``: accepted, at the frontier, revised (one live plan)."""
        plan = Plan(self.goal, self.steps, clock=_clock())
        yield "plan accepted", plan
        _play(plan, self.frontier)
        yield "frontier", plan
        _play(plan, self.run[:-1])
        _play(plan, self.run[-1:], observation=self.found)
        plan.revise(observation=self.found, **dict(self.revision))
        yield "plan revised", plan

    def plan_at(self, stage: str) -> Plan:
        """A fresh plan right after ``stage`` (a label of :meth:`stages`): a copy of the one
        played once for these parameters, whose clock goes on from the same tick."""
        played = _played(self)
        if stage not in played:
            raise ValueError(f"stage must be a label of Artefact.stages(), got {stage!r}")
        plan = played[stage]
        return plan.copy(clock=_clock(start=len(plan.events)))

    def move_plan(self, before) -> Plan:
        """The revised plan with :attr:`move_step` brought to the state ``before``."""
        plan, sid = self.plan_at("plan revised"), self.move_step
        before = as_state("before", before)
        if before in (ACTIVE, DONE, BLOCKED):
            plan.transition(sid, ACTIVE)
        if before is DONE:
            plan.transition(sid, DONE, evidence="checked by hand")
        if before is BLOCKED:
            plan.transition(sid, BLOCKED, reason="waiting")
        return plan


@functools.lru_cache(maxsize=64)  # a draw asks for the same stages tens of times
def _played(artefact: Artefact) -> dict:
    """``{label: plan}`` of :meth:`Artefact.stages`, each a copy kept as it was then."""
    return {label: plan.copy() for label, plan in artefact.stages()}


def _clock(start=0):
    """Ticks 0, 1, 2, ...: one per event logged, so an event's time is its place in the log."""
    ticks = iter(range(start, 10**6))
    return lambda: float(next(ticks))


def _play(plan, moves, observation=None):
    for sid, state, reason, evidence in moves:
        plan.transition(sid, state, reason=reason, evidence=evidence, observation=observation)


def _kinds(slug: str, thing: str) -> dict:
    """``{kind: (id, description, verification, evidence)}`` of the feature's steps."""
    return {
        "spec": (
            f"write_{slug}_spec",
            f"Write the spec of {thing}",
            "the spec is approved by the product owner",
            "spec v3 approved in the design review",
        ),
        "design": (
            f"design_{slug}_schema",
            f"Design the data model of {thing}",
            "the schema is reviewed by a second engineer",
            "schema reviewed, 4 tables",
        ),
        "tests": (
            f"write_{slug}_tests",
            f"Write the acceptance tests of {thing}",
            "every case of the spec has a test",
            "18 acceptance tests, one per case",
        ),
        "code": (
            f"implement_{slug}",
            f"Implement {thing}",
            "the acceptance tests pass",
            "PR merged, CI green",
        ),
        "notes": (
            f"write_{slug}_notes",
            f"Write the release notes of {thing}",
            "the notes are published on the changelog page",
            "changelog entry published",
        ),
        "migrate": (
            f"migrate_{slug}_data",
            f"Migrate the stored data for {thing}",
            "a backfill in staging keeps the row counts",
            "backfill: row counts equal",
        ),
        "review": (
            f"review_{slug}",
            f"Review the code of {thing}",
            "two approvals on the pull request",
            "two approvals",
        ),
        "deploy": (
            f"deploy_{slug}",
            f"Deploy {thing}",
            "the new version is live, health checks green",
            "deployed, health checks green",
        ),
        "verify": (
            f"verify_{slug}",
            f"Verify {thing} in production",
            "a day of production logs without an error from it",
            None,
        ),
    }


def _skeleton(rng, kinds: dict) -> list:
    """The accepted plan's ``(kind, depends_on kinds)`` pairs, some steps and edges drawn."""
    have = {"spec", "tests", "code", "deploy", "verify"}
    for kind, chance in (("design", 0.5), ("notes", 0.5), ("migrate", 0.4), ("review", 0.8)):
        if rng.random() < chance:
            have.add(kind)
    if "migrate" in have:
        have.add("design")
    deps = {
        "spec": [],
        "design": ["spec"],
        "tests": ["spec"] + (["design"] if "design" in have and rng.random() < 0.5 else []),
        "code": ["design" if "design" in have else "spec"],
        "notes": ["spec"] if rng.random() < 0.5 else ["code"],
        "migrate": ["design"],
        "review": ["code", "tests"],
        "deploy": ["review"] if "review" in have else ["code", "tests"],
        "verify": ["deploy"],
    }
    if "review" in have and rng.random() < 0.5:
        deps["code"].append("tests")  # test first: the code waits for its tests
        deps["review"] = ["code"]
    deps["deploy"] += [k for k in ("notes", "migrate") if k in have]
    return [(kind, [d for d in deps[kind] if d in have]) for kind in kinds if kind in have]


def _order(rng, graph: dict) -> list:
    """A random topological order of ``graph`` (``{id: deps}``)."""
    order, left = [], list(graph)
    while left:
        ready = [s for s in left if all(d in order for d in graph[s])]
        pick = ready[int(rng.integers(len(ready)))]
        order.append(pick)
        left.remove(pick)
    return order


def draw_artefact(rng) -> Artefact:
    """One student's plan artefact, drawn from ``rng`` alone; always plays without an error.

    Examples
    --------
    >>> import numpy as np
    >>> A = draw_artefact(np.random.default_rng(1))
    >>> plan = A.plan_at("plan revised")
    >>> len(plan.events) > len(A.frontier) and plan.progress().added >= 1
    True
    """
    slug, thing, waits_for, missed, case = FEATURES[int(rng.integers(len(FEATURES)))]
    table = _kinds(slug, thing)
    skeleton = _skeleton(rng, table)
    ids = {kind: table[kind][0] for kind, _ in skeleton}
    steps = tuple(
        Step(
            ids[kind],
            table[kind][1],
            depends_on=tuple(ids[d] for d in deps),
            verification=table[kind][2],
        )
        for kind, deps in skeleton
    )
    evidence = {ids[k]: table[k][3] for k in ids}
    graph = {s.id: s.depends_on for s in steps}
    checker = "review" if "review" in ids and rng.random() < 0.5 else "verify"
    order = _order(rng, graph)
    check = ids[checker]
    before_check = order[: order.index(check)]
    # The frontier: a prefix done, then perhaps one ready step active and one blocked.
    done = before_check[: int(rng.integers(1, max(2, len(before_check) - 1)))]
    frontier = [m for sid in done for m in _complete(sid, evidence[sid])]
    ready = [s for s in order if s not in done and all(d in done for d in graph[s])]
    ready = [s for s in ready if s != check]
    rng.shuffle(ready)
    held = {}
    if len(ready) >= 2 and rng.random() < 0.6:
        held[ready.pop()] = ACTIVE
    if len(ready) >= 2 and rng.random() < 0.5:
        held[ready.pop()] = BLOCKED
    for sid, state in held.items():
        frontier.append((sid, ACTIVE, None, None))
        if state is BLOCKED:
            frontier.append((sid, BLOCKED, f"waiting for {waits_for}", None))
    run = []
    for sid in before_check:
        if sid in done:
            continue
        if held.get(sid) is BLOCKED:
            run.append((sid, PENDING, f"{waits_for} arrived", None))
        if held.get(sid) is not ACTIVE:
            run.append((sid, ACTIVE, None, None))
        run.append((sid, DONE, None, evidence[sid]))
    run += [(check, ACTIVE, None, None), (check, PENDING, "a gap in the plan", None)]
    found, revision = _revision(
        rng, (slug, thing, missed, case), ids, checker, [*before_check, *held]
    )
    A = Artefact(
        goal=f"Ship {thing} to every customer",
        steps=steps,
        frontier=tuple(frontier),
        run=tuple(run),
        found=found,
        revision=revision,
        move_step="",
        moves=_moves(rng, waits_for, missed),
        proposals=(),
    )
    return _with_proposals(rng, A, slug, thing)


def _complete(sid, evidence):
    return [(sid, ACTIVE, None, None), (sid, DONE, None, evidence)]


def _revision(rng, feature, ids, checker, started):
    """What the check found and the revision that answers it (keyword pairs)."""
    slug, thing, missed, case = feature
    handle = Step(
        f"handle_{slug}_{case}",
        f"Make {thing} handle {missed}",
        depends_on=(ids["code"],),
        verification=f"a test with {missed} passes",
    )
    added = [handle]
    if rng.random() < 0.5:
        added.append(
            Step(
                f"test_{slug}_{case}",
                f"Add {missed} to the acceptance tests",
                depends_on=(handle.id,),
                verification=f"the suite covers {missed}",
            )
        )
    edges, removed_edges = [], []
    if checker == "review":
        found = f"the review finds that {thing} breaks on {missed}"
        edges.append((added[-1].id, ids["review"]))
    else:
        found = f"production logs: {thing} fails on {missed}, which no test covered"
        redeploy = Step(
            f"redeploy_{slug}",
            f"Deploy the fix for {missed}",
            depends_on=(added[-1].id, ids["deploy"]),
            verification="the fixed version is live",
        )
        added.append(redeploy)
        edges.append((redeploy.id, ids["verify"]))
        removed_edges.append((ids["deploy"], ids["verify"]))
    if len(added) < 3 and rng.random() < 0.5:
        added.append(
            Step(
                f"monitor_{slug}_{case}",
                f"Add a monitor for {missed}",
                depends_on=(added[0].id,),
                verification="the monitor fires in a drill",
            )
        )
        edges.append((added[-1].id, ids[checker]))
    revision = [
        ("reason", f"{missed} were missed: handle them, then check again"),
        ("add", tuple(added)),
        ("add_edges", tuple(edges)),
        ("remove_edges", tuple(removed_edges)),
    ]
    notes = ids.get("notes")
    if notes and notes not in started and rng.random() < 0.5:
        revision.append(("remove", (notes,)))  # still pending: the changelog is generated now
    return found, tuple(revision)


def kwargs(pairs) -> dict:
    """Keyword arguments from the stored ``(name, value)`` pairs (notes become a dict)."""
    return {name: dict(value) if name == "notes" else value for name, value in pairs}


def _move_kinds(waits_for: str, missed: str) -> tuple:
    """``(before, target, what, keyword pairs, hint when illegal or "")`` of the moves."""
    seen = (("evidence", "checked against its verification"),)
    return (
        (PENDING, DONE, "with evidence", seen, "a step is done only after it was active"),
        (PENDING, ACTIVE, "everything it waits for is done", (), ""),
        (PENDING, BLOCKED, f"waiting for {waits_for}", (("reason", waits_for),), ""),
        (PENDING, ABANDONED, "no reason given", (), "abandoning keeps its reason"),
        (PENDING, ABANDONED, "the feature is cut", (("reason", "the feature is cut"),), ""),
        (ACTIVE, DONE, "with evidence", seen, ""),
        (ACTIVE, DONE, "no evidence", (), "done requires evidence"),
        (ACTIVE, BLOCKED, f"waiting for {waits_for}", (("reason", waits_for),), ""),
        (ACTIVE, BLOCKED, "no reason given", (), "blocking keeps its reason"),
        (ACTIVE, PENDING, f"put back: {missed} unclear", (("reason", missed),), ""),
        (BLOCKED, ACTIVE, f"{waits_for} arrived", (), "a blocked step goes back to pending first"),
        (BLOCKED, PENDING, f"{waits_for} arrived", (("reason", "arrived"),), ""),
        (BLOCKED, DONE, "with evidence", seen, "a step is done only after it was active"),
        (
            DONE,
            ABANDONED,
            "no longer needed",
            (("reason", "no longer needed"),),
            "a done result is reopened, never abandoned",
        ),
        (DONE, PENDING, f"result invalidated by {missed}", (("reason", missed),), ""),
        (DONE, ACTIVE, "redo it at once", (), "a done result goes back to pending first"),
    )


def _moves(rng, waits_for: str, missed: str) -> tuple:
    """Eight of the move kinds, three to five of them legal, in the table's order."""
    kinds = _move_kinds(waits_for, missed)
    while True:
        picked = sorted(rng.choice(len(kinds), size=8, replace=False))
        if 3 <= sum(kinds[k][4] == "" for k in picked) <= 5:
            break
    return tuple(
        (f"{before} -> {target}, {what}", before, target, pairs, hint)
        for before, target, what, pairs, hint in (kinds[k] for k in picked)
    )


_ADDED = (
    ("load_test_{s}", "Load-test {t}", "p95 latency under 300 ms at twice the peak"),
    ("security_review_{s}", "Have {t} reviewed for security", "no open high finding"),
    ("announce_{s}", "Announce {t} to the customers", "the announcement is sent"),
    ("dashboard_{s}", "Add a usage dashboard for {t}", "the dashboard shows a day of use"),
)


def _candidates(rng, plan: Plan, slug: str, thing: str) -> dict:
    """``{kind: (label, keyword pairs)}``: one proposed revision of each kind that applies."""
    state = {s.id: s.state for s in plan.steps}
    graph = plan.graph()
    done = [s for s in state if state[s] is DONE]
    pending = [s for s in state if state[s] is PENDING]
    below = {s: _descendants(graph, s) for s in state}

    def pick(options):
        return options[int(rng.integers(len(options)))] if options else None

    narrower = f"Ship {thing} to the beta customers"
    found = {"goal": ("narrow the goal to the beta customers", (("goal", narrower),))}
    inv = pick(list(plan.invariants))
    found["drop_invariant"] = (f"drop the final check {inv}", (("remove", (inv,)),))
    d = pick(done)
    found["remove_done"] = (f"remove the finished step {d}", (("remove", (d,)),))
    pairs = [(a, b) for a in pending for b in pending if b in below[a]]
    if pairs:
        a, b = pick(pairs)
        found["cycle"] = (f"make {a} wait for {b}", (("add_edges", ((b, a),)),))
    if done and pending:
        d, p = pick(done), pick(pending)
        found["edge_into_done"] = (f"make {d} wait for {p}", (("add_edges", ((p, d),)),))
    built_on = [d for d in done if any(state[x] is DONE for x in below[d])]
    free = [d for d in done if not any(state[x] is not PENDING for x in below[d])]
    if built_on:
        d = pick(built_on)
        found["reopen_alone"] = (f"reopen {d} alone", (("reopen", (d,)),))
    if free:
        d = pick(free)
        found["reopen_ok"] = (f"reopen {d}: its result is doubted", (("reopen", (d,)),))
    sid, what, check = _ADDED[int(rng.integers(len(_ADDED)))]
    sid = sid.format(s=slug)
    p = pick(pending)
    step = Step(sid, what.format(t=thing), depends_on=(pick(done),), verification=check)
    found["add"] = (f"add {sid} before {p}", (("add", (step,)), ("add_edges", ((sid, p),))))
    pairs = [
        (a, b)
        for a in pending
        for b in pending
        if a != b and a not in below[b] and a not in graph[b]
    ]
    if pairs:
        a, b = pick(pairs)
        found["edge_ok"] = (f"make {b} also wait for {a}", (("add_edges", ((a, b),)),))
    p = pick(pending)
    found["note"] = (f"note on {p}: owner changed", (("notes", ((p, "owner changed"),)),))
    return found


def _descendants(graph: dict, sid: str) -> set:
    below, todo = set(), [sid]
    while todo:
        node = todo.pop()
        for other, deps in graph.items():
            if node in deps and other not in below:
                below.add(other)
                todo.append(other)
    return below


#: Kinds of proposal the artefact refuses, and kinds it accepts.
REFUSED_KINDS = ("goal", "drop_invariant", "remove_done", "cycle", "edge_into_done", "reopen_alone")
ACCEPTED_KINDS = ("add", "reopen_ok", "edge_ok", "note")


def refuses(A: Artefact, pairs) -> bool:
    """Whether the revised plan of ``A`` refuses the revision ``pairs`` (played on a copy)."""
    plan = A.plan_at("plan revised")
    try:
        plan.revise(reason="proposed in class", observation="proposed in class", **kwargs(pairs))
    except RevisionError:
        return True
    return False


def _with_proposals(rng, A: Artefact, slug: str, thing: str) -> Artefact:
    """``A`` with five or six proposed revisions: two to four refused, an accepted addition."""
    found = _candidates(rng, A.plan_at("plan revised"), slug, thing)
    refused = [k for k in REFUSED_KINDS if k in found and refuses(A, found[k][1])]
    accepted = [k for k in ACCEPTED_KINDS if k in found and not refuses(A, found[k][1])]
    n = min(int(rng.integers(2, 5)), len(refused))
    kinds = list(rng.choice(refused, size=n, replace=False)) if n else []
    rest = [k for k in accepted if k != "add"]
    kinds += (["add"] if "add" in accepted else []) + list(
        rng.choice(rest, size=min(len(rest), 5 - n), replace=False) if rest else []
    )
    rng.shuffle(kinds)
    proposals = tuple((found[k][0], found[k][1], str(k)) for k in kinds)
    plan = A.plan_at("plan revised")
    ready = [s for s in plan.ready() if s not in plan.invariants]
    return dataclasses.replace(A, proposals=proposals, move_step=str(rng.choice(ready)))
