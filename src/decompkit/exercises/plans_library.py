r"""The plans of the plans-as-objects notebook: the lecture's library, and each student's own,
drawn with defects of their own.

A drawn plan compares :math:`k \in \{2, 3\}` subjects: subject :math:`i` gets a chain
``search -> fetch_page -> summarise`` cut to :math:`\ell_i \in \{1, 2, 3\}` steps, one
``compare`` step cites the :math:`k` chain ends, and ``write_answer`` cites the comparison (and
perhaps a source), so :math:`n = \sum_i \ell_i + 2 \le 8`. Every citation points back in the
list, so the placeholder edges form a DAG, and ``depends_on`` starts equal to them; the
defects then bend ``depends_on`` (a back edge closes a cycle along a path of the DAG, an id
that names no step, a str instead of a list), a tool name (misspelt) or an id (repeated).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

from .support import text_table

__all__ = [
    "PLANS",
    "plan",
    "steps_table",
    "DrawnPlan",
    "TOPICS",
    "MISSPELT",
    "KINDS_PLAN_DEFECTS",
    "research_plan",
    "broken_plan",
    "cyclic_plan",
    "rewoo_plan",
    "contradicting_plan",
]


@dataclass(frozen=True, repr=False)
class DrawnPlan:
    """A plan drawn for one student, frozen so that a parameter object can hold it.

    Attributes
    ----------
    goal : str
        The question the plan answers.
    steps_json : str
        The steps as JSON (read them with :meth:`as_dict`).
    """

    goal: str
    steps_json: str

    def as_dict(self) -> dict:
        """The plan as a model writes it: ``{"goal": str, "steps": [step, ...]}`` (a fresh
        copy)."""
        return {"goal": self.goal, "steps": json.loads(self.steps_json)}

    def __repr__(self) -> str:
        return f"<your plan: {self.goal!r}, {len(json.loads(self.steps_json))} steps>"


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


def plan(name) -> dict:
    """A fresh copy of the plan ``name`` of :data:`PLANS`, or of a student's drawn plan
    (edit it freely).

    Raises
    ------
    ValueError
        If there is no plan of that name.

    Examples
    --------
    >>> [s["id"] for s in plan("two_cities")["steps"]]
    ['E1', 'E2', 'E3', 'E4', 'E5']
    """
    if isinstance(name, DrawnPlan):
        return name.as_dict()
    if name not in PLANS:
        raise ValueError(f"plan must be one of {sorted(PLANS)}, got {name!r}")
    return copy.deepcopy(PLANS[name])


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
        if isinstance(deps, (list, tuple)):
            shown = ", ".join(map(str, deps)) or "[]"
        else:  # missing, or not a list (a str, say): shown as written
            shown = "-" if deps is None else repr(deps)
        rows.append((str(step.get("id")), str(step.get("tool")), shown, repr(step.get("args"))))
    return text_table(rows)


#: ``(question, subjects, what a search asks about a subject)``; ``{}`` is the subject.
TOPICS = (
    (
        "Which laptop lasts longer on one charge",
        ("the Aero 14", "the Zen 13", "the Volt 15"),
        "{} battery test",
    ),
    ("Which city has more inhabitants", ("Lyon", "Marseille", "Toulouse"), "population of {}"),
    (
        "Which supplier quotes less for 500 units",
        ("supplier P", "supplier Q", "supplier R"),
        "{} quote 500 units",
    ),
    (
        "Which cloud region stores 1 TB for less",
        ("eu-west-1", "us-east-1", "ap-south-1"),
        "{} storage price per TB",
    ),
    (
        "Which library has the more permissive licence",
        ("httpx", "requests", "aiohttp"),
        "{} licence",
    ),
    (
        "Which train reaches Berlin first",
        ("the 8:05 ICE", "the 8:40 IC", "the 9:10 ICE"),
        "{} arrival time in Berlin",
    ),
    (
        "Which agent reports the higher ALFWorld success rate",
        ("ReAct", "Reflexion", "AdaPlanner"),
        "{} ALFWorld success rate",
    ),
    ("Which shop sells GPU X for less", ("shop A", "shop B", "shop C"), "GPU X price {}"),
    (
        "Which phone gets security updates for longer",
        ("the Pixel 8", "the Galaxy S24", "the Fairphone 5"),
        "{} update policy",
    ),
    (
        "Which hotel near the venue has the better reviews",
        ("Hotel Nord", "Hotel Parc", "Hotel Gare"),
        "{} guest reviews",
    ),
)

#: Names a model writes for each tool instead of the right one; each is closest to its tool
#: among the five (``difflib.get_close_matches`` maps it back).
MISSPELT = {
    "search": ("serch", "web_search", "search_web"),
    "fetch_page": ("fetch_url", "fetchpage", "fetch_pages"),
    "summarise": ("sumarise", "summarize", "summary"),
    "compare": ("comparison", "compare_values", "comapre"),
    "write_answer": ("write", "answer", "write_reply"),
}

#: The kinds of problem the broken plan of B1 draws two or three of: each can be repaired by
#: changing tools, ``depends_on`` lists and a repeated id only.
KINDS_PLAN_DEFECTS = ("unknown_tool", "unknown_dependency", "cycle", "duplicate_id", "malformed")

_CHAIN = ("search", "fetch_page", "summarise")


def _shape(rng, n_subjects: int) -> list:
    """Abstract steps ``(tool, subject, cited positions)`` in plan order (positions from 1)."""
    while True:
        lengths = [int(rng.integers(1, 4)) for _ in range(n_subjects)]
        if 5 <= sum(lengths) + 2 <= 8:
            break
    chains = [[(i, stage) for stage in range(n)] for i, n in enumerate(lengths)]
    if rng.random() < 0.5:  # subject after subject
        order = [node for chain in chains for node in chain]
    else:  # stage after stage: all searches first
        order = sorted((node for chain in chains for node in chain), key=lambda x: x[1])
    where = {node: k for k, node in enumerate(order, start=1)}
    steps = [(_CHAIN[stage], i, [where[(i, stage - 1)]] if stage else []) for i, stage in order]
    ends = [where[(i, n - 1)] for i, n in enumerate(lengths)]
    steps.append(("compare", None, ends))
    cited = [len(steps)]
    starts = [where[(i, 0)] for i in range(n_subjects) if lengths[i] > 1]
    if starts and rng.random() < 0.6:  # the answer quotes a source as well
        cited.append(starts[int(rng.integers(len(starts)))])
    steps.append(("write_answer", None, cited))
    return steps


def _token(rng, position: int, style: str) -> str:
    if style == "rewoo":
        return f"#E{position}"
    return f"${{{position}}}" if rng.random() < 0.2 else f"${position}"


def _args(rng, tool, subject, cited, topic, subjects, style):
    refs = [_token(rng, k, style) for k in cited]
    what = topic[2].format(subjects[subject]) if subject is not None else ""
    if style == "rewoo":
        if tool == "search":
            return what
        if tool == "fetch_page":
            return f"top result of {refs[0]}"
        if tool == "summarise":
            return f"the relevant passage of {refs[0]}"
        if tool == "compare":
            return " against ".join(refs) if len(refs) == 2 else f"{', '.join(refs)} side by side"
        return refs[0] if len(refs) == 1 else [refs[0], f"source: {refs[1]}"]
    if tool == "search":
        return {"query": what}
    if tool == "fetch_page":
        return {"url": refs[0]}
    if tool == "summarise":
        return {"text": refs[0]}
    if tool == "compare":
        return dict(zip("abc", refs, strict=False))
    return {"draft": refs[0], "sources": refs[1:]} if len(refs) > 1 else {"draft": refs[0]}


def research_plan(rng, topic, style: str = "compiler", prefix: str = "s") -> dict:
    """A consistent plan for ``topic``: its ``depends_on`` lists exactly what its arguments cite.

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness.
    topic : tuple
        One of :data:`TOPICS`.
    style : {"compiler", "rewoo"}
        ``$k`` placeholders in mapping arguments with ``depends_on``, or ``#Ek`` in str
        arguments without it (ids ``E1``, ``E2``, ...).
    prefix : str
        The ids are ``prefix + position`` (ignored for ReWOO).

    Raises
    ------
    ValueError
        For an unknown ``style``.

    Examples
    --------
    >>> import numpy as np
    >>> from decompkit.plan import placeholder_edges
    >>> p = research_plan(np.random.default_rng(1), TOPICS[1])
    >>> all(s["depends_on"] == list(e) for s, e in zip(p["steps"], placeholder_edges(p).values()))
    True
    """
    if style not in ("compiler", "rewoo"):
        raise ValueError(f"style must be 'compiler' or 'rewoo', got {style!r}")
    n_subjects = 3 if rng.random() < 0.35 else 2
    picked = sorted(rng.choice(3, size=n_subjects, replace=False).tolist())
    subjects = [topic[1][i] for i in picked]
    names = (
        " or ".join(subjects) if n_subjects == 2 else f"{subjects[0]}, {' or '.join(subjects[1:])}"
    )
    steps = []
    for k, (tool, subject, cited) in enumerate(_shape(rng, n_subjects), start=1):
        args = _args(rng, tool, subject, cited, topic, subjects, style)
        if style == "rewoo":
            steps.append({"id": f"E{k}", "tool": tool, "args": args})
        else:
            deps = [f"{prefix}{j}" for j in cited]
            steps.append({"id": f"{prefix}{k}", "tool": tool, "args": args, "depends_on": deps})
    return {"goal": f"{topic[0]}: {names}?", "steps": steps}


def _frozen(plan: dict) -> DrawnPlan:
    return DrawnPlan(plan["goal"], json.dumps(plan["steps"]))


def _cited(plan) -> dict:
    """``{id: [ids]}`` of a consistent plan (its ``depends_on`` before any defect)."""
    return {s["id"]: list(s["depends_on"]) for s in plan["steps"]}


def _path(rng, plan, length: int, avoid=()) -> list:
    """A path ``u1 -> ... -> uL`` along the citations (each cites the one before) outside
    ``avoid``, with ``L = length`` or, when the plan has no such path, the longest it has."""
    cited = _cited(plan)
    users = {sid: [u for u, refs in cited.items() if sid in refs] for sid in cited}
    paths = [[sid] for sid in cited if sid not in avoid]
    for _ in range(length - 1):
        longer = [p + [u] for p in paths for u in users[p[-1]] if u not in avoid]
        if not longer:
            break
        paths = longer
    return paths[int(rng.integers(len(paths)))] if len(paths[0]) > 1 else []


def _close_cycle(plan, path) -> None:
    """The first step of ``path`` waits on its last: ``depends_on`` closes the cycle."""
    step = next(s for s in plan["steps"] if s["id"] == path[0])
    step["depends_on"].append(path[-1])


def broken_plan(rng, topic) -> DrawnPlan:
    """The plan of B1 and C4: two or three kinds of :data:`KINDS_PLAN_DEFECTS`, each on a step
    of its own (so no defect hides another)."""
    plan = research_plan(rng, topic, "compiler", "s")
    steps = plan["steps"]
    n = len(steps)
    kinds = rng.choice(KINDS_PLAN_DEFECTS, size=int(rng.integers(2, 4)), replace=False).tolist()
    used: set = set()

    def free(candidates):
        left = [k for k in candidates if k not in used]
        k = left[int(rng.integers(len(left)))] if left else None
        used.add(k)
        return k

    if "cycle" in kinds:
        path = _path(rng, plan, int(rng.integers(2, 5)))
        if path:
            _close_cycle(plan, path)
            used.update(int(sid[1:]) - 1 for sid in path)
    if "duplicate_id" in kinds:
        k = free(range(1, n))  # a step (not the first) takes the id of the one before it
        if k is not None:
            old, new = steps[k]["id"], steps[k - 1]["id"]
            steps[k]["id"] = new
            for s in steps:  # its dependants now name the id it took
                s["depends_on"] = list(
                    dict.fromkeys(new if d == old else d for d in s["depends_on"])
                )
            used.add(k - 1)
    if "unknown_dependency" in kinds:
        k = free(range(n))
        if k is not None:
            steps[k]["depends_on"].append(f"s{n + int(rng.integers(1, 3))}")
    if "malformed" in kinds:
        k = free([k for k in range(n) if steps[k]["depends_on"]])
        if k is not None:
            steps[k]["depends_on"] = ", ".join(steps[k]["depends_on"])
    if "unknown_tool" in kinds:
        k = free(range(n))
        if k is not None:
            options = MISSPELT[steps[k]["tool"]]
            steps[k]["tool"] = options[int(rng.integers(len(options)))]
    return _frozen(plan)


def cyclic_plan(rng, topic) -> DrawnPlan:
    """The plan of B2: consistent but for one back edge in ``depends_on`` that closes a cycle
    of two to five steps."""
    plan = research_plan(rng, topic, "compiler", "s")
    path = _path(rng, plan, int(rng.integers(2, 6)), avoid={plan["steps"][-1]["id"]})
    if path:
        _close_cycle(plan, path)
    return _frozen(plan)


def contradicting_plan(rng, topic) -> DrawnPlan:
    """The plan of C2 and C3: ``depends_on`` forgets one or two citations and lists one or
    two steps no argument cites (always an earlier step, so it stays acyclic)."""
    plan = research_plan(rng, topic, "compiler", "t")
    steps = plan["steps"]
    cited = [(k, d) for k, s in enumerate(steps) for d in s["depends_on"]]
    for pick in rng.choice(len(cited), size=int(rng.integers(1, 3)), replace=False).tolist():
        k, d = cited[pick]
        steps[k]["depends_on"].remove(d)
    spare = [
        (k, s2["id"])
        for k, s in enumerate(steps)
        for s2 in steps[:k]
        if s2["id"] not in s["depends_on"] and (k, s2["id"]) not in cited
    ]
    for pick in rng.choice(len(spare), size=int(rng.integers(1, 3)), replace=False).tolist():
        k, d = spare[pick]
        steps[k]["depends_on"].append(d)
    for s in steps:  # in the plan's order, as a model would list them
        s["depends_on"].sort(key=lambda d: int(d[1:]))
    return _frozen(plan)


def rewoo_plan(rng, topic) -> DrawnPlan:
    """The ``#E`` plan of C1 (no ``depends_on``: its edges are stated once, in the arguments)."""
    return _frozen(research_plan(rng, topic, "rewoo"))
