r"""The scheduler loop: dispatch the ready set, advance a virtual clock, block failure cones.

A deterministic discrete-event simulation. While a node is ready or running: dispatch the
ready set :math:`R = \{v \notin \mathrm{out} \cup B : \mathrm{pred}(v) \subseteq
\mathrm{done}\}` to the free workers, advance the clock to the next finish, and record an
artifact or a failure report; a failure of :math:`f` blocks its cone
:math:`B \mathrel{{+}{=}} \mathrm{desc}(f)`. Each node runs as a checked step
(:mod:`decompkit.scheduler.steps`): at most :math:`\kappa` attempts of :math:`d_v` time
units each, a retry prompt being the original prompt plus the latest verdict.

The package lifts :func:`schedule` alone. What :mod:`decompkit.scheduler.repair` runs the same
loop with is public here too: the checked plan (:class:`CheckedPlan`, :func:`check_plan`,
:func:`repaired_plan`), the argument checks (:func:`check_out`, :func:`check_step`,
:func:`check_onfail`) and the loop itself (:func:`simulate`, its :class:`LoopState`, and
:func:`result_fields`).
"""

from __future__ import annotations

import heapq
import math
import numbers
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..dag.indexed import Indexed, as_mapping, index_graph
from ..dag.inputs import durations as _durations
from ..dag.inputs import resources as _resources
from ..dag.inputs import unknown_node
from ..dag.list_scheduling import dispatch_ranks
from ..validate import short, whole
from .steps import ACCEPTED, Verdict, retry_prompt, scripted, task_prompt
from .trace import Artifact, Event, FailureReport, ScheduleResult, Trace

__all__ = ["schedule"]


# --------------------------------------------------------------------------------------------
# The boundary: the graph indexed once, every other argument checked against it
# --------------------------------------------------------------------------------------------


@dataclass
class CheckedPlan:
    """A checked plan: the indexed graph and, by node index, what the loop reads."""

    g: Indexed  # distinct predecessors, nodes by first appearance
    graph: dict  # {node: [predecessors]}: the graph as run, reported in the result
    d: list  # durations
    keys: list  # resource keys (frozensets)
    rank: list  # dispatch keys: smaller first, ties by index


def check_plan(graph, durations, priority, resources) -> CheckedPlan:
    """Index ``graph`` once (reading each predecessor iterable once) and check against it."""
    g = index_graph(graph, distinct=True, self_loops=False)
    d = _durations(g, durations)
    rank = dispatch_ranks(g, d, priority)  # runs Kahn's pass: a cycle raises here
    return CheckedPlan(g, as_mapping(g), d, _resources(g, resources), rank)


def repaired_plan(graph: dict, durations: dict, priority, keys: dict) -> CheckedPlan:
    """A plan for a graph built from checked parts (a repaired one): no input to re-check."""
    g = index_graph(graph, distinct=True, self_loops=False)
    d = [durations[node] for node in g.nodes]
    none: frozenset = frozenset()
    return CheckedPlan(
        g, graph, d, [keys.get(node, none) for node in g.nodes], dispatch_ranks(g, d, priority)
    )


def check_out(out, g: Indexed) -> dict:
    if out is None:
        return {}
    if not isinstance(out, Mapping):
        raise ValueError(f"out must be a mapping {{node: result}}, got {short.repr(out)}")
    for node, result in out.items():
        if node not in g.index:
            raise unknown_node("out", node)
        if not isinstance(result, (Artifact, FailureReport)):
            raise ValueError(
                f"out[{node!r}] must be an Artifact or a FailureReport, got {short.repr(result)}"
            )
    return dict(out)


def check_step(step):
    if step is None:
        return scripted()
    kappa = getattr(step, "kappa", None)
    if not callable(getattr(step, "attempt", None)) or not isinstance(kappa, numbers.Integral):
        raise ValueError(
            "step must have an integer kappa and a method attempt(node, prompt, number), "
            f"got {short.repr(step)}"
        )
    whole("step.kappa", kappa, minimum=1)
    return step


def check_onfail(onfail) -> str:
    if not (isinstance(onfail, str) and onfail in ("stop", "drain")):
        raise ValueError(f"onfail must be 'stop' or 'drain', got {short.repr(onfail)}")
    return onfail


def _context(context, g: Indexed) -> dict:
    if context is None:
        return {}
    if not isinstance(context, Mapping):
        raise ValueError(f"context must be a mapping {{node: str}}, got {short.repr(context)}")
    for node, text in context.items():
        if node not in g.index:
            raise unknown_node("context", node)
        if not isinstance(text, str):
            raise ValueError(f"context[{node!r}] must be a str, got {short.repr(text)}")
    return dict(context)


# --------------------------------------------------------------------------------------------
# The loop
# --------------------------------------------------------------------------------------------


@dataclass
class _Run:
    worker: int
    seq: int
    prompt: str  # the original prompt; every retry prompt is rebuilt from it
    current: str  # the prompt of the attempt in progress
    attempt: int = 1


@dataclass
class LoopState:
    """What one scheduler call leaves behind (the simulation owns it; nobody else sees it)."""

    out: dict
    events: list = field(default_factory=list)
    blocked: dict = field(default_factory=dict)  # node index -> failed index whose cone holds it
    cancelled: list = field(default_factory=list)  # node indices
    failed: list = field(default_factory=list)  # node indices that failed in this call


def simulate(
    p: CheckedPlan,
    *,
    workers: int,
    onfail: str,
    out: dict,
    step,
    context: dict,
    start=0,
    rnd: int = 0,
) -> tuple[LoopState, float]:
    """Run the loop on a checked plan; returns the final state and the clock at return."""
    g = p.g
    nodes, preds, succ = g.nodes, g.preds, g.succ
    d, keys, rank, graph = p.d, p.keys, p.rank, p.graph
    n = len(nodes)
    state = LoopState(out)
    events, blocked = state.events, state.blocked
    result = [out.get(node) for node in nodes]
    walked = bytearray(n)  # 1 once a cone walk has passed the node: its cone is blocked
    clock = start

    def block(f: int) -> None:
        """Block every node of the cone of ``f`` without a result, logged in graph order."""
        stack = [s for s in succ[f] if not walked[s]]
        new = []
        while stack:
            v = stack.pop()
            if walked[v]:
                continue
            walked[v] = 1
            if result[v] is None:
                new.append(v)
            stack.extend(s for s in succ[v] if not walked[s])
        for v in sorted(new):
            blocked[v] = f
            events.append(
                Event(clock, "block", nodes[v], detail=f"in the cone of {nodes[f]}", round=rnd)
            )

    for node, r in out.items():
        if isinstance(r, FailureReport):
            block(g.index[node])

    # The ready set, kept up to date event by event instead of recomputed: each node counts
    # its unfinished predecessors and joins the ready heap (by priority) when the count
    # reaches zero. A node in a failure's cone never gets there, since a predecessor on its
    # path from the failure never finishes.
    done = [isinstance(r, Artifact) for r in result]
    waiting = [sum(not done[u] for u in ps) for ps in preds]
    ready = [
        (rank[v], v) for v in range(n) if not waiting[v] and result[v] is None and v not in blocked
    ]
    heapq.heapify(ready)

    kappa = whole("step.kappa", step.kappa, minimum=1)  # a plain int, as check_step checked it
    running: dict = {}  # node index -> _Run
    pending: list = []  # heap of (end time, dispatch number, node index)
    free = list(range(min(workers, max(n, 1))))  # a heap: the lowest free worker goes first
    held: set = set()  # resource keys in use
    seq = 0

    def emit(kind, v, run=None, detail=""):
        worker, attempt = (None, None) if run is None else (run.worker, run.attempt)
        events.append(Event(clock, kind, nodes[v], worker, attempt, detail, rnd))

    def begin(v, run):
        end = clock + d[v]
        if end == math.inf:
            raise ValueError(
                f"durations are too large for the clock: attempt {run.attempt} of node "
                f"{nodes[v]!r} would end after the largest float ({sys.float_info.max:.4g}); "
                "express them in a larger time unit"
            )
        emit("attempt", v, run, run.current)
        heapq.heappush(pending, (end, run.seq, v))

    while True:
        deferred = []
        while ready and free:
            item = heapq.heappop(ready)
            v = item[1]
            need = keys[v]
            if need and not held.isdisjoint(need):
                deferred.append(item)  # a resource it needs is busy: try the next ready node
                continue
            held.update(need)
            seq += 1
            node = nodes[v]
            prompt = task_prompt(node, graph[node], context.get(node))
            run = running[v] = _Run(heapq.heappop(free), seq, prompt, prompt)
            events.append(Event(clock, "dispatch", node, run.worker, None, "", rnd))
            begin(v, run)
        for item in deferred:
            heapq.heappush(ready, item)
        if not running:
            return state, clock

        clock = pending[0][0]
        while pending and pending[0][0] == clock:
            v = heapq.heappop(pending)[2]
            node = nodes[v]
            run = running[v]
            verdict = step.attempt(node, run.current, run.attempt)
            if not isinstance(verdict, Verdict):
                raise ValueError(
                    f"step.attempt must return a Verdict, got {short.repr(verdict)} for {node!r}"
                )
            emit("verdict", v, run, f"{verdict.outcome}: {verdict.message}")
            if verdict.outcome == "reject" and run.attempt < kappa:
                run.attempt += 1
                run.current = retry_prompt(run.prompt, verdict.message)
                begin(v, run)
                continue

            del running[v]
            heapq.heappush(free, run.worker)
            held.difference_update(keys[v])
            if verdict.outcome in ACCEPTED:
                out[node] = result[v] = Artifact(
                    node, run.attempt, verdict.outcome == "pass", clock
                )
                emit("finish", v, run, str(result[v]))
                for s in succ[v]:
                    waiting[s] -= 1
                    if not waiting[s] and result[s] is None and s not in blocked:
                        heapq.heappush(ready, (rank[s], s))
                continue

            kind = "rejected" if verdict.outcome == "reject" else "hard"
            out[node] = result[v] = FailureReport(node, kind, run.attempt, verdict.message, clock)
            state.failed.append(v)
            emit("fail", v, run, str(result[v]))
            block(v)
            if onfail == "stop":
                for other in sorted(running, key=lambda u: running[u].seq):
                    state.cancelled.append(other)
                    emit("cancel", other, running[other], f"stopped by the failure of {node}")
                return state, clock


def result_fields(p: CheckedPlan, state: LoopState, clock, workers: int) -> dict:
    """The fields of a :class:`ScheduleResult` for the state a call left behind."""
    nodes = p.g.nodes
    return {
        "out": state.out,
        "blocked": frozenset(nodes[v] for v in state.blocked),
        "cancelled": frozenset(nodes[v] for v in state.cancelled),
        "makespan": clock,
        "events": Trace(state.events),
        "graph": p.graph,
        "workers": workers,
    }


def schedule(
    graph,
    durations,
    *,
    workers,
    onfail="stop",
    out=None,
    step=None,
    priority="critical",
    resources=None,
    context=None,
) -> ScheduleResult:
    """Run a plan through the scheduler loop on a virtual clock and return its trace.

    Parameters
    ----------
    graph : Mapping
        ``{node: iterable of predecessors}``; must be acyclic. Any iterable of
        predecessors works (a list, a set, a generator): each is read once.
    durations : Mapping
        ``{node: time}``, a finite number >= 0 for every node and no other key: the time of
        *one attempt*. Checked as for :func:`decompkit.dag.critical_path`.
    workers : int
        Number of workers, a whole number >= 1. A count above the number of nodes runs
        exactly as one worker per node (the others would never be used), so a huge count
        costs no memory; ``ScheduleResult.workers`` reports the count given.
    onfail : {"stop", "drain"}, optional
        On a failure: ``"stop"`` returns at once and cancels what still runs (default);
        ``"drain"`` blocks the failure's cone and finishes everything still ready.
    out : Mapping, optional
        Results of earlier calls, ``{node: Artifact | FailureReport}``. Done nodes are not
        rerun; the cones of the failures recorded here are blocked from the start. Not
        modified: the result holds a new dict.
    step : object, optional
        The executor of one node: an object with an integer ``kappa`` and a method
        ``attempt(node, prompt, number) -> Verdict``, e.g. from :func:`scripted` or
        :func:`seeded`. Default: every attempt passes.
    priority : {"critical", "input"} or callable, optional
        Which ready node a free worker takes first, as in :func:`decompkit.dag.list_schedule`:
        ``"critical"`` (default), the largest bottom level (own duration plus the longest
        chain of durations after it); ``"input"``, first appearance in the graph; a callable
        ``priority(node)`` returning a number, higher first. Ties go to first appearance.
    resources : Mapping, optional
        ``{node: iterable of keys}``: two nodes that share a key never run at the same time
        (one mutating branch at a time), as in :func:`decompkit.dag.list_schedule`.
    context : Mapping, optional
        ``{node: str}`` appended to the node's original prompt (a repair puts the failure
        report here).

    Returns
    -------
    ScheduleResult

    Raises
    ------
    CycleError
        If the graph has a cycle.
    ValueError
        If the graph is malformed, a duration is invalid or the durations name a node not in
        the graph (as for :func:`decompkit.dag.critical_path`), the clock would pass the
        largest float, ``workers`` is not an integer >= 1, ``onfail`` or ``priority`` is
        unknown (or a priority is not a number), ``out``, ``resources`` or ``context`` names
        a node not in the graph or holds a value of the wrong type, or ``step`` does not fit
        the protocol.

    Notes
    -----
    The loop: (1) the ready set, in priority order; (2) dispatch as many ready nodes as
    there are free workers, lowest worker id first, without waiting (a node one of whose
    resource keys is held is skipped, the next ready one tried); (3) advance the
    clock to the next attempt to end; (4) ask the step for its verdict: accepted gives an
    artifact; rejected with attempts left starts the retry at once on the same worker, its
    prompt rebuilt from the original prompt and the latest verdict; otherwise a failure
    report, and the failed node's descendant cone is blocked. The loop ends when nothing is
    ready and nothing runs; an empty ready set alone does not end it.

    Every attempt takes the node's full duration, so a node accepted on attempt ``k`` holds
    its worker for ``k * d``. Ties are broken deterministically: attempts ending at the same
    time are handled in dispatch order, all of them before the next dispatch. Under
    ``"stop"``, the call returns at the failure, so a node that would have finished at that
    same instant but comes later in dispatch order is cancelled.

    The graph is indexed once per call, at the boundary. The ready set is kept up to date
    event by event (a count of unfinished predecessors per node, a heap by priority), and
    each failure walks only the part of its cone no earlier failure has walked, so a call
    costs O((V + E) log V) plus the steps' own work, however many nodes fail (with
    resource keys, a ready node whose key is held is looked at again at every event).

    With a step that always passes, the result is the greedy list schedule of
    :func:`decompkit.dag.list_schedule` with the same ``priority`` and ``resources``: the same
    start time and worker for every node (Graham 1969: within ``2 - 1/workers`` of the
    optimal makespan without resources).

    Examples
    --------
    >>> g = {"b": ["a"], "c": ["a"], "d": ["b", "c"]}
    >>> d = {"a": 1, "b": 3, "c": 2, "d": 1}
    >>> result = schedule(g, d, workers=2)
    >>> result.makespan
    5
    >>> result = schedule(g, d, workers=2, step=scripted({"c": ["fail"]}), onfail="drain")
    >>> sorted(result.done), sorted(result.failed), sorted(result.blocked), result.makespan
    (['a', 'b'], ['c'], ['d'], 4)
    >>> print(result.events.of_kind("fail", "block").to_text(width=40))
    time  round  kind   node  worker  attempt  detail
    ----  -----  -----  ----  ------  -------  ----------------------------------------
    3     0      fail   c     w1      1        c failed (hard failure) after 1 attem...
    3     0      block  d                      in the cone of c
    """
    workers = whole("workers", workers, minimum=1)
    onfail = check_onfail(onfail)
    p = check_plan(graph, durations, priority, resources)
    out, step, context = check_out(out, p.g), check_step(step), _context(context, p.g)
    state, clock = simulate(p, workers=workers, onfail=onfail, out=out, step=step, context=context)
    return ScheduleResult(**result_fields(p, state, clock, workers))
