r"""Checks of a generated plan before anything runs: structure, tools, references, cycles.

A plan is a list of steps :math:`s_i = (\mathrm{id}_i, \mathrm{tool}_i, \mathrm{args}_i,
D_i)` with :math:`D_i` the ids it depends on. It is runnable only if
:math:`1 \le |s| \le \mathrm{max\_steps}`, the ids are unique, every tool is known, every
:math:`D_i` names existing steps and the graph :math:`\{\mathrm{id}_i: D_i\}` is acyclic.
Placeholders in the arguments (``#E1``, ``$1``) are edges too; ``depends_on`` states every
edge a second time and may contradict them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import NamedTuple

from .dag import CycleError, topological_order
from .validate import short, whole

__all__ = [
    "PlanProblem",
    "PlanError",
    "validate_plan",
    "placeholder_edges",
    "edge_contradictions",
    "STEP_KEYS",
    "BLOCKSWORLD_VALID_PLANS",
]

#: The keys every step of a plan must have.
STEP_KEYS = ("id", "tool", "args", "depends_on")

#: Share of valid Blocksworld plans written by each planner (percent), the lecture's case for
#: checking a generated plan before running it.
BLOCKSWORLD_VALID_PLANS = {"GPT-3": 1.0, "Instruct-GPT3": 6.8, "people": 78.0}

# ``#E3`` (ReWOO) and ``$3`` or ``${3}`` (LLMCompiler). Digits are matched greedily, so
# ``#E12`` is step 12, never step 1 followed by a literal "2".
_REWOO = re.compile(r"#E(\d+)")
_COMPILER = re.compile(r"\$(?:\{(\d+)\}|(\d+))")


class PlanProblem(NamedTuple):
    """One thing wrong with a plan.

    Attributes
    ----------
    kind : str
        One of ``"malformed"``, ``"size"``, ``"duplicate_id"``, ``"unknown_tool"``,
        ``"unknown_dependency"``, ``"cycle"``, ``"unknown_reference"``,
        ``"placeholder_without_dependency"``, ``"dependency_without_placeholder"``.
    steps : tuple
        The ids of the steps involved (for a cycle, the cycle with its first id repeated at
        the end; for a malformed step without a usable id, its position ``"#3"``).
    message : str
        A sentence naming the step and the offending value.
    """

    kind: str
    steps: tuple
    message: str


class PlanError(ValueError):
    """A plan failed its checks; ``.problems`` lists every problem found, not just the first.

    Attributes
    ----------
    problems : list of PlanProblem
        Every problem, in the order the checks found them.
    """

    def __init__(self, problems):
        self.problems = list(problems)
        n = len(self.problems)
        lines = "\n".join(f"  - {p.message}" for p in self.problems)
        super().__init__(f"plan has {n} problem{'s' if n != 1 else ''}:\n{lines}")

    def kinds(self) -> list[str]:
        """The kinds of the problems, in order (handy in tests and graded cells)."""
        return [p.kind for p in self.problems]


# --------------------------------------------------------------------------------------------
# Structure
# --------------------------------------------------------------------------------------------


def _has_id(step) -> bool:
    return isinstance(step, Mapping) and isinstance(step.get("id"), str) and bool(step["id"])


def _label(step, position: int):
    """The id of a step if it has a usable one, else its 1-based position as ``"#k"``."""
    return step["id"] if _has_id(step) else f"#{position}"


def _steps(plan, required) -> tuple[list, list[PlanProblem]]:
    """The well-formed steps of ``plan`` as ``(position, step)`` and the problems of the rest.

    Steps with a structural problem are left out of the returned list, so later checks never
    trip over a missing key; their problems are reported instead.
    """
    if not isinstance(plan, Mapping) or "steps" not in plan:
        raise PlanError(
            [
                PlanProblem(
                    "malformed",
                    (),
                    f"plan must be a mapping with a 'steps' list, got {short.repr(plan)}",
                )
            ]
        )
    steps = plan["steps"]
    if not isinstance(steps, (list, tuple)):
        raise PlanError(
            [PlanProblem("malformed", (), f"plan['steps'] must be a list, got {short.repr(steps)}")]
        )
    good, problems = [], []
    for position, step in enumerate(steps, start=1):
        found = _step_problems(step, position, _label(step, position), required)
        problems.extend(found)
        if not found:
            good.append((position, step))
    return good, problems


def _step_problems(step, position: int, label, required) -> list[PlanProblem]:
    where = f"step {label!r}" if _has_id(step) else f"step at position {position}"
    if not isinstance(step, Mapping):
        return [
            PlanProblem("malformed", (label,), f"{where} must be a mapping, got {short.repr(step)}")
        ]
    problems = [
        PlanProblem("malformed", (label,), f"{where} is missing the key {key!r}")
        for key in required
        if key not in step
    ]
    if "id" in step and not (isinstance(step["id"], str) and step["id"]):
        problems.append(
            PlanProblem(
                "malformed",
                (label,),
                f"{where} has id {short.repr(step['id'])}; an id must be a non-empty str",
            )
        )
    if "tool" in step and not (isinstance(step["tool"], str) and step["tool"]):
        problems.append(
            PlanProblem(
                "malformed",
                (label,),
                f"{where} has tool {short.repr(step['tool'])}; a tool must be a non-empty str",
            )
        )
    if "args" in step and not isinstance(step["args"], (Mapping, list, tuple, str)):
        problems.append(
            PlanProblem(
                "malformed",
                (label,),
                f"{where} has args {short.repr(step['args'])}; args must be a mapping, "
                "a list or a str",
            )
        )
    if "depends_on" in step:
        deps = step["depends_on"]
        if not isinstance(deps, (list, tuple)) or not all(isinstance(d, str) for d in deps):
            problems.append(
                PlanProblem(
                    "malformed",
                    (label,),
                    f"{where} has depends_on {short.repr(deps)}; it must be a list of step ids",
                )
            )
    return problems


# --------------------------------------------------------------------------------------------
# The full check
# --------------------------------------------------------------------------------------------


def validate_plan(plan, tools, *, max_steps: int = 20) -> dict:
    """Check a generated plan and return its dependency graph, or list everything wrong.

    Parameters
    ----------
    plan : Mapping
        ``{"steps": [{"id": str, "tool": str, "args": mapping | list | str,
        "depends_on": [ids]}, ...]}``, as a model writes it in JSON. Other keys of a step
        (a description, a thought) are allowed and ignored.
    tools : iterable of str
        The names of the tools the executor offers (a set, a list or a mapping's keys).
    max_steps : int, optional
        The largest plan accepted (default 20).

    Returns
    -------
    dict
        ``{id: tuple of ids it depends on}`` in plan order (repeated dependencies listed
        once), ready for :mod:`decompkit.dag` and :mod:`decompkit.scheduler`.

    Raises
    ------
    PlanError
        If anything is wrong; ``.problems`` lists every problem found (see
        :class:`PlanProblem` for the kinds), not only the first.
    ValueError
        If ``tools`` is a str or ``max_steps`` is not an integer >= 1 (a mistake of the
        caller, not of the plan).

    Notes
    -----
    The checks, in order: the plan's shape; each step's keys and types; the size bounds
    ``1 <= len(steps) <= max_steps``; unique ids; known tools (with the closest known name as
    a hint); dependencies that name existing steps; no cycle. Every problem is reported,
    also where problems overlap: each check runs on every step whose fields it reads are
    well formed, so a step with a repeated id, or a malformed argument, is still checked for
    an unknown tool and dangling dependencies, and a dependency on a malformed step is not
    dangling. The graph searched for a cycle holds the first step of each id and only the
    dependencies that name a step, so one mistake is never reported twice. One cycle is
    named (the one Kahn's algorithm leaves behind), with its first step repeated at the end.
    Theta(V + E).

    Examples
    --------
    >>> plan = {"steps": [
    ...     {"id": "s1", "tool": "search", "args": {"q": "x"}, "depends_on": []},
    ...     {"id": "s2", "tool": "summarise", "args": {"text": "$1"}, "depends_on": ["s1"]},
    ... ]}
    >>> validate_plan(plan, {"search", "summarise"})
    {'s1': (), 's2': ('s1',)}
    >>> plan["steps"][1]["tool"] = "sumarise"
    >>> plan["steps"][0]["depends_on"] = ["s2"]
    >>> try:
    ...     validate_plan(plan, {"search", "summarise"})
    ... except PlanError as error:
    ...     for problem in error.problems:
    ...         print(problem.kind, problem.steps)
    unknown_tool ('s2',)
    cycle ('s1', 's2', 's1')
    """
    if isinstance(tools, str):
        raise ValueError(f"tools must be a collection of tool names, not the str {tools!r}")
    try:
        known_tools = set(tools)
    except TypeError:
        raise ValueError(f"tools must be a collection of tool names, got {tools!r}") from None
    max_steps = whole("max_steps", max_steps, minimum=1)

    steps, problems = _steps(plan, STEP_KEYS)
    n = len(plan["steps"])
    if n == 0:
        problems.append(PlanProblem("size", (), "plan has no steps"))
    elif n > max_steps:
        problems.append(
            PlanProblem("size", (), f"plan has {n} steps, more than max_steps={max_steps}")
        )

    # Each check reads only the fields it needs, on every step where those are well formed:
    # a step with one problem (malformed, or a repeated id) is still checked for the others.
    named = [(k, step) for k, step in enumerate(plan["steps"], start=1) if _has_id(step)]
    _unique(named, problems)
    first = {}
    for position, step in named:
        first.setdefault(step["id"], position)
    mappings = [(k, s) for k, s in enumerate(plan["steps"], start=1) if isinstance(s, Mapping)]
    for position, step in mappings:
        tool = step.get("tool")
        if isinstance(tool, str) and tool and tool not in known_tools:
            hint = difflib.get_close_matches(tool, sorted(map(str, known_tools)), n=1)
            also = f" (did you mean {hint[0]!r}?)" if hint else ""
            label = _label(step, position)
            problems.append(
                PlanProblem(
                    "unknown_tool", (label,), f"unknown tool {tool!r} in step {label!r}{also}"
                )
            )

    # The graph searched for a cycle: the first step of each id, with the dependencies that
    # name a step, so a dangling dependency or a repeated id is never reported twice.
    graph = {}
    for position, step in mappings:
        deps = step.get("depends_on", ())
        if not (isinstance(deps, (list, tuple)) and all(isinstance(d, str) for d in deps)):
            deps = ()  # reported as malformed already
        label = _label(step, position)
        kept = []
        for dep in dict.fromkeys(deps):
            if dep in first:
                kept.append(dep)
            else:
                problems.append(
                    PlanProblem(
                        "unknown_dependency",
                        (label, dep),
                        f"step {label!r} depends on {dep!r}, which is not a step of the plan",
                    )
                )
        if _has_id(step) and first[step["id"]] == position:
            graph[step["id"]] = tuple(kept)

    try:
        topological_order(graph)
    except CycleError as error:
        cycle = tuple(error.cycle)
        shown = " -> ".join(map(repr, cycle))
        problems.append(PlanProblem("cycle", cycle, f"the dependencies form a cycle: {shown}"))

    if problems:
        raise PlanError(problems)
    return graph


# --------------------------------------------------------------------------------------------
# Placeholders are edges
# --------------------------------------------------------------------------------------------


def _strings(value):
    """Every str nested anywhere in ``value`` (mapping values, list items, the str itself)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _references(args):
    """``(token, id candidate, position)`` for each placeholder in ``args``, in reading order."""
    for text in _strings(args):
        found = [
            (m.start(), m.group(0), "E" + m.group(1), int(m.group(1)))
            for m in _REWOO.finditer(text)
        ]
        for m in _COMPILER.finditer(text):
            digits = m.group(1) or m.group(2)
            found.append((m.start(), m.group(0), digits, int(digits)))
        for _, token, candidate, position in sorted(found):
            yield token, candidate, position


def _resolve(plan, steps, problems) -> dict:
    """``{id: {referenced id: first token}}`` for each step, resolving every placeholder."""
    # Positions count every step of the plan, well-formed or not, as the model wrote them.
    ids = [_label(step, k) for k, step in enumerate(plan["steps"], start=1)]
    known = {step["id"] for step in steps}
    edges = {}
    for step in steps:
        refs: dict[str, str] = {}
        for token, candidate, position in _references(step["args"]):
            if token in known:
                target = token
            elif candidate in known:
                target = candidate
            elif 1 <= position <= len(ids):
                target = ids[position - 1]
            else:
                problems.append(
                    PlanProblem(
                        "unknown_reference",
                        (step["id"],),
                        f"step {step['id']!r} refers to {token!r}, which names no step "
                        f"(no id {candidate!r} and the plan has {len(ids)} steps)",
                    )
                )
                continue
            refs.setdefault(target, token)
        edges[step["id"]] = refs
    return edges


def _unique(steps, problems) -> list:
    """The steps whose id is seen for the first time; each repeat is reported once."""
    first: dict[str, int] = {}
    unique = []
    for position, step in steps:
        sid = step["id"]
        if sid in first:
            problems.append(
                PlanProblem(
                    "duplicate_id",
                    (sid,),
                    f"step id {sid!r} is used more than once (steps {first[sid]} and {position})",
                )
            )
        else:
            first[sid] = position
            unique.append(step)
    return unique


def placeholder_edges(plan) -> dict:
    """The dependency graph a plan's arguments imply through their placeholders.

    Parameters
    ----------
    plan : Mapping
        ``{"steps": [{"id": str, "args": ..., ...}, ...]}``; only ``id`` and ``args`` are
        read. Placeholders may sit anywhere in ``args``: in a str, in list items, in mapping
        values, nested to any depth.

    Returns
    -------
    dict
        ``{id: tuple of referenced ids}`` for every step in plan order, each tuple in reading
        order of the arguments, repeated references listed once.

    Raises
    ------
    PlanError
        If a step lacks ``id`` or ``args`` or has a malformed one, an id repeats, or a
        placeholder names no step (kind ``"unknown_reference"``); every such problem is
        listed.

    Notes
    -----
    The id mapping rule, first match wins: (1) the step whose id is the placeholder itself
    (``"#E2"``); (2) the step whose id is its name without the sign: ``"E<k>"`` for ``#E<k>``
    (ReWOO), ``"<k>"`` for ``$<k>`` and ``${<k>}`` (LLMCompiler); (3) the ``k``-th step of
    the list, counting from 1 over all steps as written. An id always wins over a position.
    A step that refers to itself gets a self-edge, which :func:`validate_plan` would report
    as a cycle if ``depends_on`` said the same.

    Examples
    --------
    >>> plan = {"steps": [
    ...     {"id": "E1", "tool": "search", "args": "capital of France"},
    ...     {"id": "E2", "tool": "search", "args": "population of #E1"},
    ...     {"id": "E3", "tool": "llm", "args": {"q": ["compare #E1", "with #E2"]}},
    ... ]}
    >>> placeholder_edges(plan)
    {'E1': (), 'E2': ('E1',), 'E3': ('E1', 'E2')}
    >>> placeholder_edges({"steps": [{"id": "a", "args": []}, {"id": "b", "args": ["$1"]}]})
    {'a': (), 'b': ('a',)}
    """
    steps, problems = _steps(plan, ("id", "args"))
    steps = _unique(steps, problems)
    edges = _resolve(plan, steps, problems)
    if problems:
        raise PlanError(problems)
    return {sid: tuple(refs) for sid, refs in edges.items()}


def edge_contradictions(plan) -> list[PlanProblem]:
    """Where ``depends_on`` and the placeholders in the arguments disagree, both ways.

    Parameters
    ----------
    plan : Mapping
        ``{"steps": [{"id", "tool", "args", "depends_on"}, ...]}``; ``tool`` is not read.

    Returns
    -------
    list of PlanProblem
        One problem per disagreeing edge, in plan order: kind
        ``"placeholder_without_dependency"`` (an argument reads a step that ``depends_on``
        does not list: the step could start before its input exists) or
        ``"dependency_without_placeholder"`` (``depends_on`` lists a step no argument reads:
        a spurious edge that only delays the plan, or an input the arguments forgot).
        ``steps`` is ``(step, other step)``. An empty list means the two agree.

    Raises
    ------
    PlanError
        As for :func:`placeholder_edges`, and if ``depends_on`` is missing or malformed.

    Notes
    -----
    Placeholders are resolved by the rule of :func:`placeholder_edges`. A dependency on an
    id that is not in the plan is a ``dependency_without_placeholder`` here; use
    :func:`validate_plan` to have it reported as dangling.

    Examples
    --------
    >>> plan = {"steps": [
    ...     {"id": "s1", "tool": "search", "args": ["a"], "depends_on": []},
    ...     {"id": "s2", "tool": "search", "args": ["b"], "depends_on": ["s1"]},
    ...     {"id": "s3", "tool": "llm", "args": ["$1"], "depends_on": ["s2"]},
    ... ]}
    >>> for problem in edge_contradictions(plan):
    ...     print(problem.kind, problem.steps)
    dependency_without_placeholder ('s2', 's1')
    placeholder_without_dependency ('s3', 's1')
    dependency_without_placeholder ('s3', 's2')
    """
    steps, problems = _steps(plan, ("id", "args", "depends_on"))
    steps = _unique(steps, problems)
    edges = _resolve(plan, steps, problems)
    if problems:
        raise PlanError(problems)
    found = []
    for step in steps:
        sid = step["id"]
        refs = edges[sid]
        deps = list(dict.fromkeys(step["depends_on"]))
        for target, token in refs.items():
            if target not in deps:
                found.append(
                    PlanProblem(
                        "placeholder_without_dependency",
                        (sid, target),
                        f"step {sid!r} reads {token!r} (step {target!r}) but its depends_on "
                        "does not list it",
                    )
                )
        for dep in deps:
            if dep not in refs:
                found.append(
                    PlanProblem(
                        "dependency_without_placeholder",
                        (sid, dep),
                        f"step {sid!r} lists {dep!r} in depends_on but no argument refers to it",
                    )
                )
    return found
