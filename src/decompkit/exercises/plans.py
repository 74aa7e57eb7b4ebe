r"""Parameters, answer key and visible checks of the plans-as-objects notebook, and its bank
of plans.

A placement of an architecture is graded cell by cell with
:func:`decompkit.architectures.grade_placement`. A generated plan :math:`\{s_i\}` is checked
with :func:`decompkit.plan.validate_plan`; its edges are read off the placeholders
(:math:`s_j \to s_i` when the arguments of :math:`s_i` name :math:`s_j`) and compared with
``depends_on`` by :func:`decompkit.plan.edge_contradictions`.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .. import architectures
from ..dag import descendants
from ..plan import PlanError, edge_contradictions, placeholder_edges, validate_plan
from .checks import ON_TRACK, judge_set, read_set
from .contract import Diagnosis, Exercise, Item
from .page import NumbersDisplay, report
from .support import cached_key, text_table

__all__ = [
    "PlansParams",
    "draw",
    "PLANS",
    "PROBLEM_KINDS",
    "PLACEMENTS",
    "plan",
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
    plan_kinds : name (in :data:`PLANS`) of the broken plan whose kinds of problem are asked
        for, and which is repaired at the end.
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


def draw(rng) -> PlansParams:
    """The plans notebook asks about structure, which every student shares: no draw at all."""
    return PlansParams()


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


def _step(sid, tool, args, depends_on=()):
    return {"id": sid, "tool": tool, "args": args, "depends_on": list(depends_on)}


#: Plans a model might write, as data. Read one with :func:`plan`, which returns a copy.
PLANS = {
    # A comparison of GPU prices, with a misspelt tool, a cycle and a dependency on a step
    # that does not exist.
    "price_check": {
        "goal": "Is the new GPU cheaper at shop A or at shop B?",
        "steps": [
            _step("s1", "search", {"query": "GPU X price shop A"}),
            _step("s2", "fetch_page", {"url": "$1"}, ["s1"]),
            _step("s3", "sumarise", {"text": "$2"}, ["s2"]),
            _step("s4", "compare", {"a": "$3", "b": "$5"}, ["s3", "s5"]),
            _step("s5", "search", {"query": "GPU X price shop B"}, ["s4"]),
            _step("s6", "write_answer", {"draft": "$4"}, ["s4", "s7"]),
        ],
    },
    # Release notes from a changelog, with a cycle of four steps and a step waiting on it.
    "release_notes": {
        "goal": "Write the release notes of version 2.0.",
        "steps": [
            _step("s1", "search", {"query": "changelog 2.0"}),
            _step("s2", "fetch_page", {"url": "$1"}, ["s1"]),
            _step("s3", "summarise", {"text": "$2", "style": "$6"}, ["s2", "s6"]),
            _step("s4", "compare", {"a": "$3", "b": "previous notes"}, ["s3"]),
            _step("s5", "summarise", {"text": "$4"}, ["s4"]),
            _step("s6", "fetch_page", {"url": "style guide linked in $5"}, ["s5"]),
            _step("s7", "write_answer", {"draft": "$4"}, ["s4"]),
        ],
    },
    # ReWOO style: evidence variables #E1, #E2, ... name the steps.
    "two_cities": {
        "goal": "Which city is larger, Lyon or Marseille, and who is its mayor?",
        "steps": [
            {"id": "E1", "tool": "search", "args": "population of Lyon"},
            {"id": "E2", "tool": "search", "args": "population of Marseille"},
            {"id": "E3", "tool": "compare", "args": "#E1 against #E2"},
            {"id": "E4", "tool": "search", "args": "mayor of the larger city in #E3"},
            {"id": "E5", "tool": "write_answer", "args": ["#E4", "figures: #E1, #E2"]},
        ],
    },
    # LLMCompiler style: $k names the k-th task; depends_on disagrees with the arguments.
    "supplier_quotes": {
        "goal": "Which supplier quotes less for 500 units, and by how much?",
        "steps": [
            _step("t1", "search", {"query": "supplier P quote 500 units"}),
            _step("t2", "search", {"query": "supplier Q quote 500 units"}),
            _step("t3", "fetch_page", {"url": "$1"}, ["t1", "t2"]),
            _step("t4", "fetch_page", {"url": "$2"}, ["t2"]),
            _step("t5", "compare", {"a": "$3", "b": "$4"}, ["t3"]),
            _step("t6", "write_answer", {"draft": "$5", "sources": ["$3", "${4}"]}, ["t5", "t4"]),
        ],
    },
}


def plan(name: str) -> dict:
    """A fresh copy of the plan ``name`` of :data:`PLANS` (edit it freely).

    Raises
    ------
    ValueError
        If there is no plan of that name.

    Examples
    --------
    >>> [s["id"] for s in plan("two_cities")["steps"]]
    ['E1', 'E2', 'E3', 'E4', 'E5']
    """
    if name not in PLANS:
        raise ValueError(f"plan must be one of {sorted(PLANS)}, got {name!r}")
    return copy.deepcopy(PLANS[name])


def problems(name: str, P: PlansParams) -> list:
    """Every problem :func:`decompkit.plan.validate_plan` finds in the plan ``name`` (or [])."""
    try:
        validate_plan(plan(name), P.tools, max_steps=P.max_steps)
    except PlanError as error:
        return error.problems
    return []


def degenerate(P: PlansParams) -> list[str]:
    """Why ``P`` would make an exercise degenerate: the named plans must show their flaws.

    Examples
    --------
    >>> degenerate(PlansParams())
    []
    """
    found = []
    for name in (P.plan_kinds, P.plan_cycle):
        if not problems(name, P):
            found.append(f"the plan {name!r} has no problem to find")
    repaired = key(P)["fixed_plan"]
    if repair_problems(repaired, P):
        found.append(f"the plan {P.plan_kinds!r} is not repaired by its tools and placeholders")
    return found


def _cycle(name: str, P: PlansParams) -> set:
    return {s for p in problems(name, P) if p.kind == "cycle" for s in p.steps}


def _contradictions(name: str, kind: str) -> set:
    return {p.steps for p in edge_contradictions(plan(name)) if p.kind == kind}


def _repaired(name: str, P: PlansParams) -> dict:
    """One repair of the plan ``name``: every unknown tool replaced by the closest name of
    ``P.tools``, every ``depends_on`` read off the step's placeholders."""
    fixed = plan(name)
    cited = placeholder_edges(fixed)
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
    placements = {item: architectures.placement(name) for item, name in PLACEMENTS.items()}
    return placements | {
        "kinds_a": {p.kind for p in problems(P.plan_kinds, P)},
        "cycle_b": _cycle(P.plan_cycle, P),
        "rewoo_edges": placeholder_edges(plan(P.plan_rewoo)),
        "reads_unlisted": _contradictions(P.plan_compiler, "placeholder_without_dependency"),
        "listed_unread": _contradictions(P.plan_compiler, "dependency_without_placeholder"),
        "fixed_plan": _repaired(P.plan_kinds, P),
    }


def _placement(architecture: str, answer) -> Diagnosis:
    """The verdict on one architecture's placement on the seven dimensions.

    Every wrong cell is named with a hint that points at the deciding fact in the
    description; the expected choice is never shown.
    """
    if not isinstance(answer, Mapping):
        return Diagnosis(
            "invalid", f"expected a dict {{dimension: choice}}, got a {type(answer).__name__}"
        )
    try:
        grades = architectures.grade_placement(architecture, answer)
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
        return _placement(PLACEMENTS[item], answer)
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

    A repair keeps every step with its id and arguments, passes the validator, and lists in
    ``depends_on`` exactly the steps its arguments read. Never raises: a malformed answer
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
    if kept != [(s["id"], s["args"]) for s in original["steps"]]:
        return "keep every step, its id and its arguments; change only tools and depends_on"
    try:
        validate_plan(answer, P.tools, max_steps=P.max_steps)
    except PlanError as error:
        return f"the validator still objects:\n{error}"
    left = edge_contradictions(answer)
    if left:
        lines = "\n".join(f"  - {p.message}" for p in left)
        return f"valid, but depends_on and the arguments disagree:\n{lines}"
    return ""


def check(item: str, answer, P: PlansParams) -> None:
    """The visible check of one item: prints ``[ok] B1 kinds_a: on track`` or a hint."""
    report(EXERCISE, item, answer, P)


def steps_table(plan) -> str:
    """The steps of a plan as a plain-text table: id, tool, depends_on, args.

    Examples
    --------
    >>> print(steps_table(plan("two_cities")).splitlines()[3])
    E2  search        -           'population of Marseille'
    """
    rows = [("id", "tool", "depends_on", "args")]
    for step in plan["steps"]:
        deps = step.get("depends_on")
        shown = "-" if deps is None else (", ".join(map(str, deps)) or "[]")
        rows.append((str(step.get("id")), str(step.get("tool")), shown, repr(step.get("args"))))
    return text_table(rows)


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
