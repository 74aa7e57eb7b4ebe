r"""Parameters, answer key and visible checks of the plans-as-objects notebook (its plans:
:mod:`decompkit.exercises.plans_library`).

A placement of an architecture (the student's own version of it,
:mod:`decompkit.exercises.plans_placements`) is graded cell by cell with
:func:`decompkit.architectures.grade_placement`. A generated plan (the student's own, drawn by
:mod:`decompkit.exercises.plans_library` with defects of its own) :math:`\{s_i\}` is checked
with :func:`decompkit.plan.validate_plan`; its edges are read off the placeholders
(:math:`s_j \to s_i` when the arguments of :math:`s_i` name :math:`s_j`) and compared with
``depends_on`` by :func:`decompkit.plan.edge_contradictions`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..dag import descendants
from ..plan import PlanError, edge_contradictions, placeholder_edges, validate_plan
from .checks import ON_TRACK, judge_set, read_set
from .contract import Diagnosis, Exercise, Item
from .page import NumbersDisplay, report
from .plans_library import (
    PLANS,
    TOPICS,
    DrawnPlan,
    broken_plan,
    contradicting_plan,
    cyclic_plan,
    plan,
    rewoo_plan,
    steps_table,
)
from .plans_placements import VERSIONS, architecture_name
from .plans_placements import grade as grade_version
from .plans_placements import placement as version_placement
from .plans_placements import version as _version
from .support import cached_key

__all__ = [
    "PlansParams",
    "draw",
    "PLANS",
    "PROBLEM_KINDS",
    "PLACEMENTS",
    "plan",
    "your_version",
    "steps_table",
    "problems",
    "repair_problems",
    "degenerate",
    "key",
    "judge",
    "judge_edges",
    "check",
    "ITEMS",
    "EXERCISE",
]


@dataclass(frozen=True)
class PlansParams(NumbersDisplay):
    """Choices of the plans-as-objects notebook (lecture section 6).

    Attributes
    ----------
    tools : the tool names the executor offers; a plan naming another tool is invalid.
    max_steps : the largest plan the validator accepts.
    plan_kinds : the broken plan whose kinds of problem are asked for, and which is repaired
        at the end: a name in :data:`PLANS` (the lecture's) or a student's
        :class:`~decompkit.exercises.plans_library.DrawnPlan`; so are the three below.
    plan_cycle : the broken plan whose cycle is asked for.
    plan_rewoo : the ``#E`` plan whose edges are derived by hand.
    plan_compiler : the ``$k`` plan whose ``depends_on`` contradicts its arguments.
    versions : for each architecture of :data:`PLACEMENTS`, in order, which version of it is
        placed (0: the lecture's own; see :mod:`decompkit.exercises.plans_placements`).
    """

    tools: tuple = ("search", "fetch_page", "summarise", "compare", "write_answer")
    max_steps: int = 8
    plan_kinds: str | DrawnPlan = "price_check"
    plan_cycle: str | DrawnPlan = "release_notes"
    plan_rewoo: str | DrawnPlan = "two_cities"
    plan_compiler: str | DrawnPlan = "supplier_quotes"
    versions: tuple = (0, 0, 0, 0, 0)


def draw(rng) -> PlansParams:
    """One candidate of a student's plans and versions (see
    :func:`decompkit.exercises.params.params`): four plans on four different topics, each
    with defects of its own, and a changed version of every architecture."""
    topics = [TOPICS[k] for k in rng.choice(len(TOPICS), size=4, replace=False).tolist()]
    return PlansParams(
        plan_kinds=broken_plan(rng, topics[0]),
        plan_cycle=cyclic_plan(rng, topics[1]),
        plan_rewoo=rewoo_plan(rng, topics[2]),
        plan_compiler=contradicting_plan(rng, topics[3]),
        versions=tuple(int(rng.integers(1, len(VERSIONS[a]) + 1)) for a in PLACEMENTS.values()),
    )


#: The placements the notebook asks for: ``{key item: architecture}``.
PLACEMENTS = {
    "placement_plan_and_execute": "Plan-and-Execute",
    "placement_rewoo": "ReWOO",
    "placement_llmcompiler": "LLMCompiler",
    "placement_adapt": "ADaPT",
    "placement_adaplanner": "AdaPlanner",
}

#: The kinds of problem :func:`decompkit.plan.validate_plan` reports about a plan's structure.
PROBLEM_KINDS = (
    "malformed",
    "size",
    "duplicate_id",
    "unknown_tool",
    "unknown_dependency",
    "cycle",
)


def problems(name: str, P: PlansParams) -> list:
    """Every problem :func:`decompkit.plan.validate_plan` finds in the plan ``name`` (or [])."""
    try:
        validate_plan(plan(name), P.tools, max_steps=P.max_steps)
    except PlanError as error:
        return error.problems
    return []


def degenerate(P: PlansParams) -> list[str]:
    """Why ``P`` would make an exercise degenerate: the named plans must show their flaws.

    The broken plan has two kinds of problem or more and a repair; the cyclic plan has one
    problem, a cycle of at most five steps that no other cycle shares a step with, and a step
    that waits on it; the ``$k`` plan disagrees with its ``depends_on`` both ways; every plan
    has at most ``P.max_steps`` steps.

    Examples
    --------
    >>> degenerate(PlansParams())
    []
    """
    found = []
    for name in (P.plan_kinds, P.plan_cycle):
        if not problems(name, P):
            found.append(f"the plan {name!r} has no problem to find")
    for name in (P.plan_kinds, P.plan_cycle, P.plan_rewoo, P.plan_compiler):
        if len(plan(name)["steps"]) > P.max_steps:
            found.append(f"the plan {name!r} has more than {P.max_steps} steps")
    if len({p.kind for p in problems(P.plan_kinds, P)}) < 2:
        found.append(f"the plan {P.plan_kinds!r} shows fewer than two kinds of problem")
    repaired = key(P)["fixed_plan"]
    if repair_problems(repaired, P):
        found.append(f"the plan {P.plan_kinds!r} is not repaired by its tools and placeholders")
    found += _cycle_degenerate(P)
    for kind in ("placeholder_without_dependency", "dependency_without_placeholder"):
        if not _contradictions(P.plan_compiler, kind):
            found.append(f"the plan {P.plan_compiler!r} has no {kind}")
    return found


def _cycle_degenerate(P: PlansParams) -> list[str]:
    """Why the cycle of ``P.plan_cycle`` is not a clean exercise ([] when it is)."""
    kinds = [p.kind for p in problems(P.plan_cycle, P)]
    if kinds != ["cycle"]:
        return [f"the plan {P.plan_cycle!r} has the problems {kinds}, not one cycle"]
    cycle = _cycle(P.plan_cycle, P)
    steps = plan(P.plan_cycle)["steps"]
    graph = {s["id"]: [d for d in s["depends_on"] if d != s["id"]] for s in steps}
    on_cycles = {v for v in graph if v in descendants(graph, [v])}
    edges = sum(d in cycle for v in cycle for d in graph[v])
    found = []
    if on_cycles != cycle or edges != len(cycle) or not 2 <= len(cycle) <= 5:
        found.append(f"the plan {P.plan_cycle!r} has not one short simple cycle")
    if not descendants(graph, list(cycle)) - cycle:
        found.append(f"no step of {P.plan_cycle!r} waits on its cycle")
    return found


def _cycle(name: str, P: PlansParams) -> set:
    return {s for p in problems(name, P) if p.kind == "cycle" for s in p.steps}


def _contradictions(name: str, kind: str) -> set:
    return {p.steps for p in edge_contradictions(plan(name)) if p.kind == kind}


def _repeats(steps) -> set:
    """The positions (from 0) of the steps whose id an earlier step already has."""
    seen: set = set()
    found = set()
    for k, step in enumerate(steps):
        if step["id"] in seen:
            found.add(k)
        seen.add(step["id"])
    return found


def _repaired(name, P: PlansParams) -> dict:
    """One repair of the plan ``name``: a repeated id replaced by a fresh one, every unknown
    tool by the closest name of ``P.tools``, every ``depends_on`` read off the step's
    placeholders."""
    fixed = plan(name)
    ids = {s["id"] for s in fixed["steps"]}
    for k in sorted(_repeats(fixed["steps"])):
        fresh = fixed["steps"][k]["id"].rstrip("0123456789") + str(k + 1)
        while fresh in ids:
            fresh += "b"
        fixed["steps"][k]["id"] = fresh
        ids.add(fresh)
    cited = placeholder_edges(
        {"steps": [{"id": s["id"], "args": s["args"]} for s in fixed["steps"]]}
    )
    for step in fixed["steps"]:
        if step["tool"] not in P.tools:
            step["tool"] = difflib.get_close_matches(step["tool"], P.tools, n=1, cutoff=0)[0]
        step["depends_on"] = list(cited[step["id"]])
    return fixed


@cached_key
def key(P: PlansParams) -> dict:
    """Every answer of the notebook for the parameters ``P``.

    ``fixed_plan`` is one repair of the broken plan; any repair :func:`repair_problems`
    accepts is right.

    Examples
    --------
    >>> k = key(PlansParams())
    >>> sorted(k["kinds_a"]), sorted(k["cycle_b"])
    (['cycle', 'unknown_dependency', 'unknown_tool'], ['s3', 's4', 's5', 's6'])
    >>> k["rewoo_edges"]["E5"], sorted(k["reads_unlisted"])
    (('E4', 'E1', 'E2'), [('t5', 't4'), ('t6', 't3')])
    >>> k["placement_rewoo"]["execution_order"], k["fixed_plan"]["steps"][2]["tool"]
    ('list order', 'summarise')
    """
    placements = {
        item: version_placement(name, index)
        for (item, name), index in zip(PLACEMENTS.items(), P.versions, strict=True)
    }
    return placements | {
        "kinds_a": {p.kind for p in problems(P.plan_kinds, P)},
        "cycle_b": _cycle(P.plan_cycle, P),
        "rewoo_edges": placeholder_edges(plan(P.plan_rewoo)),
        "reads_unlisted": _contradictions(P.plan_compiler, "placeholder_without_dependency"),
        "listed_unread": _contradictions(P.plan_compiler, "dependency_without_placeholder"),
        "fixed_plan": _repaired(P.plan_kinds, P),
    }


def _placement(architecture: str, index: int, answer) -> Diagnosis:
    """The verdict on the placement of version ``index`` of one architecture.

    Every wrong cell is named with a hint that points at the deciding fact in the
    description (or at the version's own sentence); the expected choice is never shown.
    """
    if not isinstance(answer, Mapping):
        return Diagnosis(
            "invalid", f"expected a dict {{dimension: choice}}, got a {type(answer).__name__}"
        )
    try:
        grades = grade_version(architecture, index, answer)
    except ValueError as error:
        return Diagnosis("invalid", " ".join(str(error).split()))
    wrong = {dim: g for dim, g in grades.items() if not g.correct}
    if not wrong:
        return ON_TRACK
    details = "; ".join(f"{dim}: {g.hint}" for dim, g in wrong.items())
    return Diagnosis("off", f"{len(wrong)} of {len(grades)} cells off - {details}", "placement")


def _kind_hints(expected: set) -> list:
    return [
        (
            "kind_not_in_plan",
            lambda got: not got <= expected,
            "one of these kinds does not occur in this plan: the validator would not report it",
        ),
        (
            "kind_missing",
            lambda got: got < expected,
            "a kind of problem is missing: hold the plan against each rule of the validator "
            "in turn",
        ),
    ]


def _cycle_hints(name: str, P: PlansParams, expected: set) -> list:
    steps = plan(name)["steps"]
    ids = {s["id"] for s in steps}
    graph = {s["id"]: [d for d in s["depends_on"] if d in ids] for s in steps}
    downstream = descendants(graph, list(expected)) - expected
    return [
        (
            "waits_on_cycle",
            lambda got: bool(got & downstream),
            "a step that waits on the cycle is stuck too, but it is not on the cycle: from it "
            "you cannot get back to itself",
        ),
        (
            "feeds_cycle",
            lambda got: bool(got - expected - downstream),
            "a step the cycle waits on is not on the cycle either",
        ),
        (
            "cycle_too_short",
            lambda got: got < expected,
            "the cycle is longer: keep following depends_on until you come back to the start",
        ),
    ]


def _pair_hints(item: str, expected: dict) -> list:
    other = "listed_unread" if item == "reads_unlisted" else "reads_unlisted"
    flipped = {(b, a) for a, b in expected[item]}
    return [
        (
            "other_kind",
            lambda got: bool(got) and got <= expected[other],
            "these pairs are the other kind of disagreement: reread which list the question "
            "starts from",
        ),
        (
            "pair_reversed",
            lambda got: bool(got & flipped),
            "write each pair as (step, the step it reads or lists), the reader first",
        ),
        (
            "pair_missing",
            lambda got: got < expected[item],
            "a pair is missing: read every argument, lists and ${k} included",
        ),
    ]


def judge(item: str, answer, P: PlansParams) -> Diagnosis:
    """The verdict on one answer of the notebook (see :func:`key` for the items).

    The placements are graded cell by cell, ``"rewoo_edges"`` step by step
    (:func:`judge_edges`), ``"fixed_plan"`` by :func:`repair_problems`; the rest are sets.

    Raises
    ------
    ValueError
        When ``item`` is not an item of this notebook.

    Examples
    --------
    >>> judge("kinds_a", {"cycle", "unknown_tool"}, PlansParams()).mistake
    'kind_missing'
    """
    expected = key(P)
    if item not in expected:
        raise ValueError(f"item must be one of {sorted(expected)}, got {item!r}")
    if item in PLACEMENTS:
        return _placement(PLACEMENTS[item], P.versions[list(PLACEMENTS).index(item)], answer)
    if item == "rewoo_edges":
        return judge_edges(answer, P)
    if item == "fixed_plan":
        report = repair_problems(answer, P)
        return Diagnosis("off", " ".join(report.split()), "not_repaired") if report else ON_TRACK
    got, problem = read_set(answer, "strings" if item == "kinds_a" else "step ids")
    if problem is not None:
        return problem
    if item == "kinds_a":
        unknown = {k for k in got if k not in PROBLEM_KINDS}
        if unknown:
            return Diagnosis("invalid", f"not kinds of problem: {sorted(map(str, unknown))}")
        return judge_set(got, expected[item], hints=_kind_hints(expected[item]))
    if item == "cycle_b":
        ids = {s["id"] for s in plan(P.plan_cycle)["steps"]}
        if not got <= ids:
            return Diagnosis("invalid", f"not step ids of this plan: {sorted(map(str, got - ids))}")
        return judge_set(got, expected[item], hints=_cycle_hints(P.plan_cycle, P, expected[item]))
    bad = [x for x in got if not (isinstance(x, tuple) and len(x) == 2)]
    if bad:
        return Diagnosis("invalid", f"write each edge as a pair (step, other step), got {bad}")
    return judge_set(got, expected[item], hints=_pair_hints(item, expected))


def judge_edges(answer, P: PlansParams) -> Diagnosis:
    """The verdict on the edges read off the ``#E`` placeholders of ``P.plan_rewoo``.

    ``answer`` maps every step id to the ids its arguments read (a list, tuple or set; the
    order does not matter).
    """
    if not isinstance(answer, Mapping):
        return Diagnosis(
            "invalid", f"expected a dict {{step id: ids it reads}}, got a {type(answer).__name__}"
        )
    want = {sid: set(refs) for sid, refs in key(P)["rewoo_edges"].items()}
    missing = [sid for sid in want if sid not in answer]
    if missing:
        return Diagnosis(
            "invalid", f"give every step a key, also those that read nothing: {missing}"
        )
    extra = [sid for sid in answer if sid not in want]
    if extra:
        return Diagnosis("invalid", f"not step ids of this plan: {extra}")
    got = {}
    for sid, refs in answer.items():
        if isinstance(refs, (str, bytes)) or not isinstance(refs, Iterable):
            return Diagnosis("invalid", f"{sid}: expected a list of ids, got {refs!r}")
        try:
            got[sid] = set(refs)
        except TypeError:
            return Diagnosis("invalid", f"{sid}: expected a list of step ids")
    wrong = [sid for sid in want if got[sid] != want[sid]]
    if not wrong:
        return ON_TRACK
    closure = _closure(want)
    hints = []
    for sid in wrong:
        if want[sid] < got[sid] <= closure[sid]:
            hints.append(f"{sid}: only what its own arguments name, not what those steps read")
        elif got[sid] < want[sid]:
            hints.append(f"{sid}: an argument you missed names another step (lists included)")
        else:
            hints.append(f"{sid}: read its arguments again")
    mistake = "transitive_edges" if all("own arguments" in h for h in hints) else "edges_off"
    return Diagnosis("off", f"{len(wrong)} of {len(want)} steps off - " + "; ".join(hints), mistake)


def _closure(edges: dict) -> dict:
    """Every step mapped to all the steps it depends on, directly or not."""
    out: dict = {}

    def visit(sid):
        if sid not in out:
            out[sid] = set()
            for ref in edges[sid]:
                out[sid] |= {ref} | visit(ref)
        return out[sid]

    for sid in edges:
        visit(sid)
    return out


def repair_problems(answer, P: PlansParams) -> str:
    """What keeps ``answer`` from being a repair of ``P.plan_kinds`` ("" when it is one).

    A repair keeps every step with its id and arguments (a repeated id may, and must, take
    a new one), passes the validator, and lists in ``depends_on`` exactly the steps its
    arguments read. Never raises: a malformed answer
    gets a message too, so a hidden test can ask ``repair_problems(...) == ""``.

    Examples
    --------
    >>> repair_problems(plan("price_check"), PlansParams()).splitlines()[0]
    'the validator still objects:'
    >>> repair_problems(None, PlansParams())
    "expected a plan: a dict with a list under 'steps'"
    """
    original = plan(P.plan_kinds)
    if not isinstance(answer, Mapping) or not isinstance(answer.get("steps"), list):
        return "expected a plan: a dict with a list under 'steps'"
    try:
        kept = [(s["id"], s["args"]) for s in answer["steps"]]
    except (TypeError, KeyError):
        return "every step needs its 'id' and 'args'"
    repeats = _repeats(original["steps"])
    want = [(s["id"], s["args"]) for s in original["steps"]]
    if len(kept) != len(want) or any(
        got != old if k not in repeats else got[1] != old[1]
        for k, (got, old) in enumerate(zip(kept, want, strict=True))
    ):
        also = " and a repeated id" if repeats else ""
        return "keep every step, its id and its arguments; change only tools and depends_on" + also
    try:
        validate_plan(answer, P.tools, max_steps=P.max_steps)
    except PlanError as error:
        return f"the validator still objects:\n{error}"
    left = edge_contradictions(answer)
    if left:
        lines = "\n".join(f"  - {p.message}" for p in left)
        return f"valid, but depends_on and the arguments disagree:\n{lines}"
    return ""


def your_version(architecture: str, P: PlansParams) -> str:
    """How the version of ``architecture`` that ``P`` asks to place differs from the
    published one (a sentence; the lecture's own version says so).

    Examples
    --------
    >>> your_version("ReWOO", PlansParams())
    "Your version works exactly as described above (the lecture's own)."
    """
    name = architecture_name(architecture)
    return _version(name, P.versions[list(PLACEMENTS.values()).index(name)]).sentence


def check(item: str, answer, P: PlansParams) -> None:
    """The visible check of one item: prints ``[ok] B1 kinds_a: on track`` or a hint."""
    report(EXERCISE, item, answer, P)


#: Every graded item of the notebook, in its order.
ITEMS = (
    Item(
        "placement_plan_and_execute",
        "A1",
        ("plan_and_execute",),
        "placement_plan_and_execute_value",
        "choices",
    ),
    Item("placement_rewoo", "A2", ("rewoo",), "placement_rewoo_value", "choices"),
    Item("placement_llmcompiler", "A3", ("llmcompiler",), "placement_llmcompiler_value", "choices"),
    Item("placement_adapt", "A4", ("adapt",), "placement_adapt_value", "choices"),
    Item("placement_adaplanner", "A5", ("adaplanner",), "placement_adaplanner_value", "choices"),
    Item("kinds_a", "B1", ("kinds_a",), "plan_problem_kinds_value", "set"),
    Item("cycle_b", "B2", ("cycle_b",), "plan_cycle_steps_value", "set"),
    Item("rewoo_edges", "C1", ("rewoo_edges",), "rewoo_edges_value", "mapping"),
    Item("reads_unlisted", "C2", ("reads_unlisted",), "reads_unlisted_value", "set"),
    Item("listed_unread", "C3", ("listed_unread",), "listed_unread_value", "set"),
    Item("fixed_plan", "C4", ("fixed_plan",), "repaired_plan_value", "plan"),
)

#: The notebook as the teaching layer knows it (see :class:`decompkit.exercises.Exercise`).
EXERCISE = Exercise(
    name="plans",
    file="03-plans-as-objects",
    Params=PlansParams,
    draw=draw,
    key=key,
    judge=judge,
    degenerate=degenerate,
    items=ITEMS,
)
