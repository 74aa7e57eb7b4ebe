r"""LLMCompiler-style execution: a checked plan compiled into a pydantic-graph graph.

pydantic-graph composes steps in *series* (an edge) and in *parallel* (a broadcast fork and a
join), so it expresses exactly the series-parallel plans: those whose order
:math:`u < v \iff u \in \mathrm{anc}(v)` contains no induced N (:math:`a<c`, :math:`b<c`,
:math:`b<d`, with :math:`a, d` and :math:`c, d` unordered). Independent steps then run at the
same time and the wall time approaches the critical path
:math:`T = \max_v EF_v` instead of the serial sum :math:`\sum_v d_v`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from pydantic_graph import GraphBuilder, StepContext
from pydantic_graph.join import reduce_null

from ..dag import predecessors_map, topological_order
from ..plan import PlanError
from ..scheduler import ScheduleResult, schedule
from ..validate import count
from .execute import LabRun, Recorder, durations, run_checked_step
from .schema import TypedPlan, check_plan, require_plan
from .tools import TOOLS, Toolbox, require_toolbox

__all__ = [
    "Series",
    "Parallel",
    "ShapeError",
    "series_parallel",
    "CompiledPlan",
    "compile_plan",
    "run_if_valid",
    "run_on_scheduler",
]


@dataclass(frozen=True)
class Series:
    """Parts that run one after the other; each part may be a step id or a Parallel."""

    parts: tuple

    def __str__(self):
        return " -> ".join(map(str, self.parts))


@dataclass(frozen=True)
class Parallel:
    """Parts that run independently; each part may be a step id or a Series."""

    parts: tuple

    def __str__(self):
        return "(" + " | ".join(map(str, self.parts)) + ")"


class ShapeError(ValueError):
    """The plan is not series-parallel, so forks and joins cannot express it.

    Attributes
    ----------
    witness : tuple
        Four steps ``(a, b, c, d)`` forming an N: ``c`` comes after ``a`` and ``b``, ``d``
        after ``b`` only, and ``c``, ``d`` are unordered.
    """

    def __init__(self, witness):
        self.witness = tuple(witness)
        a, b, c, d = self.witness
        super().__init__(
            f"the plan is not series-parallel: {c!r} comes after {a!r} and {b!r}, {d!r} after "
            f"{b!r} but not after {a!r}, and {c!r}, {d!r} are unordered (an N). Forks and "
            "joins build series-parallel orders only: a graph of them would add an order the "
            f"plan does not have, such as {d!r} waiting for {a!r}"
        )


# --------------------------------------------------------------------------------------------
# Series-parallel decomposition
# --------------------------------------------------------------------------------------------


def series_parallel(graph):
    """Decompose a DAG into series and parallel parts, or find the N that prevents it.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``, acyclic, at least one node. Nodes are any
        hashables, found as a dict finds its keys (one NaN object is one node, as in
        :mod:`graphlib`), and never compared with each other.

    Returns
    -------
    node, Series or Parallel
        A single node for a one-node graph; otherwise nested :class:`Series` and
        :class:`Parallel` whose order is the graph's reachability order. Transitive edges
        need no part of their own: ``a -> b -> c`` plus ``a -> c`` is a series of three.

    Raises
    ------
    ShapeError
        If the order contains an induced N (``.witness`` names its four nodes).
    CycleError
        If the graph has a cycle.
    ValueError
        If the graph is empty or malformed.

    Notes
    -----
    Recursive: a set of nodes whose comparability graph is disconnected is the parallel
    composition of its components; a connected one is split in series at the shortest
    prefix of a topological order all of whose nodes precede all the others. When
    neither applies, the set contains an N (Valdes, Tarjan & Lawler 1982: a partial order is
    series-parallel iff it is N-free), which an exhaustive search then names. O(V^4) at worst,
    for the decomposition and for the witness; plans have a few dozen steps at most.

    Examples
    --------
    >>> g = {"E1": [], "E2": [], "E3": ["E1"], "E4": ["E2"], "E5": ["E3", "E4"]}
    >>> print(series_parallel(g))
    (E1 -> E3 | E2 -> E4) -> E5
    >>> series_parallel({"a": [], "b": [], "c": ["a", "b"], "d": ["b"]})
    Traceback (most recent call last):
    ...
    decompkit.lab.compiler.ShapeError: the plan is not series-parallel: 'c' comes after 'a' ...
    """
    order = topological_order(graph)
    if not order:
        raise ValueError("graph must have at least one node, got an empty graph")
    preds = predecessors_map(graph)
    below: dict = {}
    for v in order:
        seen = set()
        for p in preds[v]:
            seen |= below[p]
            seen.add(p)
        below[v] = seen
    return _split(order, below)


def _before(below, a, b) -> bool:
    return a in below[b]


def _split(nodes: list, below: dict):
    if len(nodes) == 1:
        return nodes[0]
    comps = _components(nodes, below)
    if len(comps) > 1:
        return Parallel(tuple(_split(c, below) for c in comps))
    for k in range(1, len(nodes)):
        head, tail = nodes[:k], nodes[k:]
        if all(_before(below, a, b) for a in head for b in tail):
            left, right = _split(head, below), _split(tail, below)
            return Series(_series_parts(left) + _series_parts(right))
    raise ShapeError(_n_witness(nodes, below))


def _series_parts(part) -> tuple:
    return part.parts if isinstance(part, Series) else (part,)


def _components(nodes: list, below: dict) -> list[list]:
    """Connected components of the comparability graph, each in the order of ``nodes``.

    The union-find runs on positions in ``nodes``: nodes are never compared with each
    other (a NaN node is not equal to itself, yet it is one node, as a dict key is).
    """
    root = list(range(len(nodes)))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    for (i, a), (j, b) in itertools.combinations(enumerate(nodes), 2):
        if _before(below, a, b) or _before(below, b, a):
            ri, rj = find(i), find(j)
            if ri != rj:
                root[rj] = ri
    groups: dict[int, list] = {}
    for i, v in enumerate(nodes):
        groups.setdefault(find(i), []).append(v)
    return list(groups.values())


def _n_witness(nodes: list, below: dict) -> tuple:
    def unordered(x, y):
        return not _before(below, x, y) and not _before(below, y, x)

    for c in nodes:
        for a in nodes:
            if not _before(below, a, c):
                continue
            for b in nodes:
                if not (_before(below, b, c) and unordered(a, b)):
                    continue
                for d in nodes:
                    if _before(below, b, d) and unordered(d, c) and unordered(a, d):
                        return (a, b, c, d)
    # Unreachable for a partial order (N-free orders are series-parallel).
    raise AssertionError(f"no series or parallel split of {nodes!r}, and no N found")


# --------------------------------------------------------------------------------------------
# Compiling the decomposition into a graph
# --------------------------------------------------------------------------------------------


class _Builder:
    """Makes the graph's nodes: one step per plan step, joins, sub-graph steps."""

    def __init__(self, execute, reserved, subgraphs: bool):
        self.execute = execute
        self.reserved = set(reserved)
        self.subgraphs = subgraphs
        self.counters: dict = {}

    def _fresh(self, prefix: str) -> str:
        counter = self.counters.setdefault(prefix, itertools.count(1))
        while True:
            name = f"{prefix}_{next(counter)}"
            if name not in self.reserved:
                return name

    def step(self, g, sid):
        execute = self.execute

        async def run_step(ctx: StepContext[Recorder, None, object]) -> None:
            await execute(sid, ctx.state)

        return g.step(run_step, node_id=sid)

    def join(self, g):
        return g.join(
            reduce_null, initial=None, node_id=self._fresh("join"), preferred_parent_fork="closest"
        )

    def sub_step(self, g, part):
        inner = self.graph(part)

        async def run_branch(ctx: StepContext[Recorder, None, object]) -> None:
            await inner.run(state=ctx.state)

        return g.step(run_branch, node_id=self._fresh("sub"), label=str(part))

    def graph(self, tree):
        g = GraphBuilder(state_type=Recorder, auto_instrument=False)
        last = _wire(g, tree, g.start_node, self)
        g.add(g.edge_from(last).to(g.end_node))
        return g.build()


def _has_parallel(part) -> bool:
    return isinstance(part, Series) and any(isinstance(p, Parallel) for p in part.parts)


def _wire(g, part, src, build: _Builder):
    """Add ``part`` after ``src``; return the node the next part follows."""
    if isinstance(part, Series):
        for p in part.parts:
            src = _wire(g, p, src, build)
        return src
    if isinstance(part, Parallel):
        join = build.join(g)
        for branch in part.parts:
            if build.subgraphs and _has_parallel(branch):
                # A join is not triggered by its last input: it is looked at again when
                # another task of the run ends, or when nothing runs. Inside a branch, the
                # steps after it would wait on the siblings; so the branch gets its own run.
                tail = build.sub_step(g, branch)
                g.add(g.edge_from(src).to(tail))
            else:
                tail = _wire(g, branch, src, build)
            g.add(g.edge_from(tail).to(join))
        return join
    node = build.step(g, part)
    g.add(g.edge_from(src).to(node))
    return node


class CompiledPlan:
    """A checked plan as a pydantic-graph graph, ready to run.

    Attributes
    ----------
    plan : TypedPlan
    graph : dict
        ``{step id: tuple of ids it depends on}``, as checked.
    tree : node, Series, Parallel or None
        The series-parallel decomposition the graph follows (None: nothing left to run).
    pgraph : pydantic_graph.Graph or None
        The compiled graph; ``print(compiled.render())`` shows it as a Mermaid diagram.
    toolbox : Toolbox
    kappa : int
        Attempts each step is allowed.
    """

    def __init__(self, plan, graph, tree, toolbox, kappa, subgraphs):
        self.plan = plan
        self.graph = graph
        self.tree = tree
        self.toolbox = toolbox
        self.kappa = kappa
        ids = [s.id for s in plan.steps]
        steps = {s.id: s for s in plan.steps}

        async def execute(sid, rec):
            await run_checked_step(steps[sid], toolbox, rec, kappa=kappa, ids=ids)

        self.pgraph = None if tree is None else _Builder(execute, ids, subgraphs).graph(tree)

    def __repr__(self):
        return f"CompiledPlan({self.tree})"

    def render(self) -> str:
        """The compiled graph as a Mermaid state diagram (text)."""
        return "" if self.pgraph is None else self.pgraph.render()

    async def run(self, *, recorder: Recorder | None = None) -> LabRun:
        """Run the graph; independent steps run at the same time.

        Parameters
        ----------
        recorder : Recorder, optional
            Carry results and the clock over from an earlier round (steps already in it
            are not run again); a fresh one by default.

        Returns
        -------
        LabRun
            Times in ms since the recorder started.
        """
        rec = Recorder() if recorder is None else recorder
        if self.pgraph is not None:
            await self.pgraph.run(state=rec)
        return rec.result(self.graph, self.plan)


def compile_plan(
    plan: TypedPlan,
    toolbox: Toolbox,
    *,
    tools=None,
    max_steps: int = 20,
    kappa: int = 1,
    subgraphs: bool = True,
    skip=(),
) -> CompiledPlan:
    """Check a plan, then compile it into a graph whose independent steps run concurrently.

    Parameters
    ----------
    plan : TypedPlan
    toolbox : Toolbox
        The tools the steps call.
    tools : iterable of str, optional
        The tools a plan may name (default :data:`~decompkit.lab.tools.TOOLS`).
    max_steps : int, optional
    kappa : int, optional
        Attempts per step (default 1).
    subgraphs : bool, optional
        Run a parallel branch that contains a join of its own as a sub-graph (default).
        With False the nested join is wired into the one graph, where it fires only when
        another task of the run ends or nothing runs any more; kept to show that delay.
    skip : iterable of str, optional
        Steps that already ran (a replanning round): checked with the plan but left out
        of the graph; their outputs come from the recorder the run is given.

    Returns
    -------
    CompiledPlan

    Raises
    ------
    decompkit.plan.PlanError
        If the plan fails its check; nothing has run.
    ShapeError
        If the plan is not series-parallel; run it with :func:`run_on_scheduler`.

    Examples
    --------
    >>> from decompkit.lab.schema import TypedPlan, TypedStep
    >>> plan = TypedPlan(goal="g", steps=[
    ...     TypedStep(id="E1", tool="search", args={"query": "supplier P"}),
    ...     TypedStep(id="E2", tool="search", args={"query": "supplier Q"}),
    ...     TypedStep(id="E3", tool="compare", args={"pages": ["#E1", "#E2"]},
    ...          depends_on=["E1", "E2"]),
    ... ])
    >>> compiled = compile_plan(plan, Toolbox())
    >>> print(compiled.tree)
    (E1 | E2) -> E3
    """
    require_plan(plan)
    require_toolbox(toolbox)
    kappa = int(count("kappa", kappa, minimum=1))
    graph = check_plan(plan, TOOLS if tools is None else tools, max_steps=max_steps)
    skip = set(skip)
    unknown = sorted(skip - set(graph))
    if unknown:
        raise ValueError(f"skip must name steps of the plan, got {unknown}")
    rest = {v: [p for p in preds if p not in skip] for v, preds in graph.items() if v not in skip}
    tree = series_parallel(rest) if rest else None
    return CompiledPlan(plan, graph, tree, toolbox, kappa, subgraphs)


async def run_if_valid(
    plan: TypedPlan, toolbox: Toolbox, *, tools=None, max_steps: int = 20, kappa=1
):
    """Check, compile and run a plan; or return what stopped it, before any tool was called.

    Parameters
    ----------
    plan : TypedPlan
    toolbox : Toolbox
    tools, max_steps, kappa
        As for :func:`compile_plan`.

    Returns
    -------
    LabRun, decompkit.plan.PlanError or ShapeError
        The run, or the error (not raised) when the plan failed its check or cannot be
        compiled; in that case ``toolbox.calls`` is unchanged.

    Examples
    --------
    >>> import asyncio
    >>> from decompkit.lab.models import PLANS
    >>> box = Toolbox()
    >>> outcome = asyncio.run(run_if_valid(TypedPlan(goal="g", steps=PLANS["cycle"]), box))
    >>> outcome.kinds(), box.calls
    (['cycle'], [])
    """
    try:
        compiled = compile_plan(plan, toolbox, tools=tools, max_steps=max_steps, kappa=kappa)
    except (PlanError, ShapeError) as error:
        return error
    return await compiled.run()


def run_on_scheduler(plan: TypedPlan, latency=None, *, tools=None, max_steps: int = 20):
    """Run a plan the graph library cannot express on the kit's scheduler instead.

    The scheduler dispatches the ready set as workers free up, so any DAG runs; here with
    one worker per step, so the makespan is the critical path. It is a simulation on a
    virtual clock whose time unit is the millisecond: the tools' latencies are the
    durations, and no tool is called.

    Parameters
    ----------
    plan : TypedPlan
    latency : Mapping, optional
        ``{tool: ms}`` (default :data:`~decompkit.lab.tools.LATENCY_MS`).
    tools : iterable of str, optional
    max_steps : int, optional

    Returns
    -------
    decompkit.scheduler.ScheduleResult

    Raises
    ------
    decompkit.plan.PlanError
        If the plan fails its check.

    Examples
    --------
    >>> from decompkit.lab.models import PLANS
    >>> plan = TypedPlan(goal="g", steps=PLANS["n_shape"])
    >>> run_on_scheduler(plan).makespan
    160
    """
    graph = check_plan(require_plan(plan), TOOLS if tools is None else tools, max_steps=max_steps)
    result: ScheduleResult = schedule(graph, durations(plan, latency), workers=len(graph))
    return result
