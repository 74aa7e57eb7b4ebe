r"""Repair by unrolling: a failed check becomes new primed nodes, then the plan runs again.

For a failed node :math:`x` diagnosed as caused by :math:`f` (``x`` itself or an ancestor),
the nodes on a path between them, :math:`S = (\{f\} \cup \mathrm{desc}(f)) \cap (\{x\} \cup
\mathrm{anc}(x))`, are copied (``write_code'``, ``run_tests'``); nodes that have not run and
read :math:`S` are re-pointed to the copies. A plan-level cap :math:`\kappa_{plan}` bounds
how many times one node may be copied. :func:`run_with_repair` alternates scheduler rounds
and repairs on one virtual clock.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from ..dag.indexed import Indexed, as_mapping, index_graph, reach, unhashable
from ..dag.inputs import durations as _durations
from ..dag.kahn import fifo_order, reverse_kahn
from ..validate import short, whole
from .loop import (
    check_onfail,
    check_out,
    check_plan,
    check_step,
    repaired_plan,
    result_fields,
    simulate,
)
from .trace import Event, FailureReport, ScheduleResult, Trace

__all__ = [
    "Primed",
    "Repair",
    "RepairLimitError",
    "unroll_failed_check",
    "RepairResult",
    "run_with_repair",
]


@dataclass(frozen=True)
class Primed:
    """The copy of a node that is not a str: ``Primed(x)`` prints as ``x'``.

    A str node ``"write_code"`` is copied as ``"write_code'"``; any other node ``x`` as
    ``Primed(x)``, whose repr is ``x'`` (and ``Primed(Primed(x))`` prints as ``x''``).
    """

    original: Hashable

    def __repr__(self):
        return f"{self.original!r}'"

    def __str__(self):
        return f"{self.original}'"


def _prime(node):
    return node + "'" if isinstance(node, str) else Primed(node)


def _level(node) -> int:
    """How many times ``node`` is a copy: the primes of a str, the nesting of Primed."""
    if isinstance(node, str):
        return len(node) - len(node.rstrip("'"))
    level = 0
    while isinstance(node, Primed):
        node, level = node.original, level + 1
    return level


def _base(node):
    if isinstance(node, str):
        return node.rstrip("'")
    while isinstance(node, Primed):
        node = node.original
    return node


class RepairLimitError(ValueError):
    """The plan-level cap is spent: a repair would copy a node a ``kappa_plan + 1``-th time.

    Attributes
    ----------
    node : hashable
        The failed node that could not be repaired.
    kappa_plan : int
    result : RepairResult or None
        The run so far, when raised by :func:`run_with_repair` (its trace shows every round).
    capped : hashable
        The node already copied ``kappa_plan`` times that the repair would copy again:
        ``node`` itself, or a node between it and the diagnosed cause.
    """

    __module__ = "decompkit.scheduler"  # where users import it from

    def __init__(self, node, kappa_plan, result=None, capped=None):
        self.node = node
        self.kappa_plan = kappa_plan
        self.result = result
        self.capped = node if capped is None else capped
        if self.capped == node:
            what = f"{node} failed after {_level(node)} repair(s)"
        else:
            what = (
                f"{node} failed and its repair would copy {self.capped} again, already "
                f"copied {_level(self.capped)} time(s)"
            )
        super().__init__(
            f"{what}; the plan-level cap kappa_plan={kappa_plan} allows no further copy, "
            "so the plan gives up"
        )

    def __reduce__(self):  # pickle by the data, not by the message
        return type(self), (self.node, self.kappa_plan, self.result, self.capped)


@dataclass(frozen=True)
class Repair:
    """A repaired graph: the result of :func:`unroll_failed_check`.

    Attributes
    ----------
    graph : dict
        The new graph, ``{node: tuple of predecessors}``; the input is not modified.
    durations : dict
        The durations of every node, the copies getting their original's.
    context : dict
        ``{new node: str}``: the copy of the faulty node carries the failure report; pass it
        as ``context=`` to :func:`schedule`.
    copies : dict
        ``{copied node: its copy}``, in topological order.
    repointed : dict
        ``{node: (old predecessors, new predecessors)}`` for each not yet executed node whose
        edges now point at a copy.
    """

    graph: dict
    durations: dict
    context: dict
    copies: dict
    repointed: dict


def unroll_failed_check(graph, out, failed, faulty, kappa_plan, *, durations) -> Repair:
    r"""Repair a failure by unrolling: new primed nodes, not a retry in place.

    Parameters
    ----------
    graph : Mapping
        The plan that ran, ``{node: iterable of predecessors}``.
    out : Mapping
        The results so far; ``out[failed]`` must be a :class:`FailureReport`.
    failed : hashable
        The node whose check failed (e.g. ``"run_tests"``).
    faulty : hashable
        The node diagnosed as wrong: ``failed`` itself or one of its ancestors (e.g.
        ``"write_code"``, ``"write_tests"`` or ``"fetch_data"``).
    kappa_plan : int
        The plan-level cap: how many times one node may be copied. No node of the graph
        after this repair is more than a ``kappa_plan``-fold copy.
    durations : Mapping
        ``{node: time}`` for the graph's nodes, checked as for :func:`schedule`.

    Returns
    -------
    Repair
        The new graph and durations, the context of the new nodes, the copies made and the
        re-pointed edges.

    Raises
    ------
    RepairLimitError
        If a node to copy (``failed``, ``faulty`` or one between them) is already a
        ``kappa_plan``-fold copy (a ValueError subclass).
    ValueError
        If ``failed`` or ``faulty`` is not a node of the graph (an unhashable value
        included), ``out[failed]`` is not a failure report, ``faulty`` is not ``failed`` or
        an ancestor of it, a copy's name is already taken, a duration is invalid, or
        ``kappa_plan`` is not an integer >= 0.

    Notes
    -----
    The copied set is ``faulty``, ``failed`` and every node on a path between them:
    :math:`S = (\{f\} \cup \mathrm{desc}(f)) \cap (\{x\} \cup \mathrm{anc}(x))` for faulty
    :math:`f` and failed :math:`x`. Each copy gets the original's predecessors, with those in
    :math:`S` replaced by their copies. The failure report enters the *faulty copy's prompt*
    through ``context``, not as an edge from the failed node: that edge would put the copy
    in the failure's blocked cone. Every node that has not run and reads a node of
    :math:`S` is re-pointed to the copy (``report`` now waits for ``run_tests'``). Nodes
    that ran keep their edges and results. Only new nodes are added, so no cycle can appear;
    both invariants are checked before returning.

    A str node gains a prime (``write_code'``, then ``write_code''``); other nodes are wrapped
    in :class:`Primed`. The number of trailing primes (or of Primed wrappers) is a node's
    copy level, which ``kappa_plan`` caps for every copy: ``kappa_plan=0`` forbids any
    repair, so do not end the name of an original str node with a prime. Theta(V + E).

    Examples
    --------
    >>> from decompkit.scheduler import Artifact, FailureReport
    >>> g = {"code": [], "test": ["code"], "report": ["test"]}
    >>> out = {"code": Artifact("code", 1), "test": FailureReport("test", "hard", 1, "red")}
    >>> r = unroll_failed_check(g, out, "test", "code", 2, durations=dict.fromkeys(g, 1))
    >>> r.graph
    {'code': (), 'test': ('code',), 'report': ("test'",), "code'": (), "test'": ("code'",)}
    >>> r.context["code'"]
    'repairs code; failure report: test failed (hard failure) after 1 attempt(s): red'
    """
    kappa_plan = whole("kappa_plan", kappa_plan, minimum=0)
    g = index_graph(graph, distinct=True, self_loops=False)
    reverse_kahn(g)  # a cycle raises here
    x, f = _node(g, "failed", failed), _node(g, "faulty", faulty)
    out = check_out(out, g)
    d = _durations(g, durations)
    return _unroll(g, as_mapping(g), out, [(x, f)], kappa_plan, dict(zip(g.nodes, d, strict=True)))


def _node(g: Indexed, name: str, node) -> int:
    """The index of ``node``; anything else (an unhashable value too) raises naming ``name``."""
    i = g.index.get(node) if isinstance(node, Hashable) and not unhashable(node) else None
    if i is None:
        raise ValueError(f"{name} node {short.repr(node)} is not a node of graph")
    return i


def _unroll(
    g: Indexed, graph: dict, out: dict, diagnoses, kappa_plan: int, dur: dict, made=frozenset()
) -> Repair:
    """One unrolling for every ``(failed, faulty)`` index pair of ``diagnoses``, together.

    The copied set is the union of each failure's :math:`S`; a node in several of them is
    copied once, and the faulty copy's context carries every failure report blamed on it.
    ``made``: the copies earlier repairs of the same run made. A task copied before whose
    copy is still in the plan gets the next name (``1''`` when ``1'`` is there), one copy more
    of that task under the cap; any other name clash is the graph's and an error.
    O(V + E) for the graph, plus O(V + E) per failure blamed on a node other than itself.
    """
    nodes, preds, succ = g.nodes, g.preds, g.succ
    on_path: set[int] = set()
    blamed: dict[int, list] = {}  # faulty index -> the failure reports blamed on it
    failed_for: dict[int, int] = {}  # a node to copy -> the first failure it is copied for
    for x, f in diagnoses:
        report = out.get(nodes[x])
        if not isinstance(report, FailureReport):
            raise ValueError(
                f"out[{nodes[x]!r}] must be a FailureReport to unroll, got {short.repr(report)}"
            )
        if f == x:
            between = {x}
        else:
            upstream = reach(preds, [x])
            if f not in upstream:
                raise ValueError(
                    f"faulty node {nodes[f]!r} must be {nodes[x]!r} or one of its ancestors in "
                    "graph"
                )
            upstream.add(x)
            between = {f, *(v for v in reach(succ, [f]) if v in upstream)}
        for v in [x, *sorted(between - {x})]:  # the failed node first: the usual case
            if _level(nodes[v]) >= kappa_plan:
                raise RepairLimitError(nodes[x], kappa_plan, capped=nodes[v])
            failed_for.setdefault(v, x)
        on_path |= between
        blamed.setdefault(f, []).append(report)

    # The copies in the graph's Kahn order, the order topological_order gives.
    order = [v for v in fifo_order(g) if v in on_path]
    copies, taken, ours = {}, set(g.index), set(made)
    for v in order:
        copy = _prime(nodes[v])
        while copy in ours and copy in taken:  # a copy made before, still in the plan
            copy = _prime(copy)
        if copy in taken:
            raise ValueError(f"cannot copy {nodes[v]!r}: the name {copy!r} is already a node")
        if _level(copy) > kappa_plan:
            raise RepairLimitError(nodes[failed_for[v]], kappa_plan, capped=nodes[v])
        copies[nodes[v]] = copy
        taken.add(copy)
        ours.add(copy)

    def swap(ps):
        return tuple(copies.get(u, u) for u in ps)

    new = {}
    repointed = {}
    for node, ps in graph.items():
        ps = tuple(ps)
        if node not in out and any(u in copies for u in ps):
            repointed[node] = (ps, swap(ps))
            ps = swap(ps)
        new[node] = ps
    for original, copy in copies.items():
        new[copy] = swap(graph[original])
    new_durations = dict(dur)
    new_durations.update({copy: dur[original] for original, copy in copies.items()})
    context = {copy: f"copy of {original}" for original, copy in copies.items()}
    for f, reports in blamed.items():
        told = "; ".join(f"failure report: {r}" for r in reports)
        context[copies[nodes[f]]] = f"repairs {nodes[f]}; {told}"

    # The two invariants of a graph mutation, checked rather than trusted.
    reverse_kahn(index_graph(new, self_loops=False))  # raises CycleError if a cycle appeared
    for node in out:
        if new[node] != tuple(graph[node]):
            raise AssertionError(f"executed node {node!r} changed its predecessors")
    return Repair(new, new_durations, context, copies, repointed)


# --------------------------------------------------------------------------------------------
# The planning architecture's loop: schedule, read failures, unroll, schedule again
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RepairResult(ScheduleResult):
    """A :class:`ScheduleResult` over several rounds, with the repairs made between them.

    Attributes
    ----------
    durations : dict
        The durations of the final graph's nodes.
    repairs : tuple of Repair
        The unrolling of each repair round, in order.
    rounds : int
        How many scheduler calls ran (1 + the number of repair rounds).
    """

    durations: dict = field(default_factory=dict)
    repairs: tuple = ()
    rounds: int = 1


def _diagnosis(faulty, g: Indexed):
    """``faulty`` checked at the boundary: None, a callable, or a mapping on graph nodes."""
    if faulty is None or callable(faulty) and not isinstance(faulty, Mapping):
        return faulty
    if not isinstance(faulty, Mapping):
        raise ValueError(f"faulty must be None, a mapping or a callable, got {short.repr(faulty)}")
    for failed, cause in faulty.items():
        for what, node in (("a failed node", failed), ("a cause", cause)):
            if not isinstance(node, Hashable) or unhashable(node) or node not in g.index:
                raise ValueError(
                    f"faulty names {short.repr(node)} as {what}, which is not a node of graph"
                )
    return dict(faulty)


def _diagnose(faulty, g: Indexed, graph: dict, x: int) -> int:
    """The index of the live node to unroll for the failure of node ``x``."""
    nodes = g.nodes
    failed = nodes[x]
    if faulty is None:
        return x
    if callable(faulty):
        cause = faulty(failed, graph)
        if not isinstance(cause, Hashable) or unhashable(cause) or cause not in g.index:
            raise ValueError(
                f"faulty({failed!r}, graph) must return a node of graph, got {short.repr(cause)}"
            )
        return g.index[cause]
    target = faulty.get(_base(failed), _base(failed))
    upstream = [x, *sorted(reach(g.preds, [x]))]
    candidates = [v for v in upstream if _base(nodes[v]) == target]
    if not candidates:
        raise ValueError(
            f"faulty names {target!r} for {_base(failed)!r}, but no copy of it is an "
            f"ancestor of {failed!r}"
        )
    return max(candidates, key=lambda v: _level(nodes[v]))


def run_with_repair(
    graph,
    durations,
    *,
    workers,
    step=None,
    faulty=None,
    kappa_plan=2,
    onfail="drain",
    priority="critical",
    resources=None,
) -> RepairResult:
    """Schedule, read the failures, unroll them, schedule again: one continuous trace.

    Parameters
    ----------
    graph, durations, workers, step, priority, resources
        As for :func:`schedule`. A copy needs the resource keys of its original (a copy of a
        patch still mutates what the patch did). The same ``step`` serves every round, so a
        scripted step continues its script and a seeded one its random stream.
    faulty : None, Mapping or callable, optional
        The diagnosis of each failure. None: the failed node itself is re-run as a copy.
        A mapping ``{failed: faulty}`` on original names, e.g. ``{"run_tests": "write_code"}``:
        the live copy of ``faulty`` upstream of the failure is unrolled (so the second
        failure, of ``run_tests'``, unrolls ``write_code'``). A callable
        ``faulty(failed, graph) -> node`` that returns a node of ``graph`` (the graph of
        the round, with its copies).
    kappa_plan : int, optional
        The plan-level cap of :func:`unroll_failed_check`: no node is copied more than
        ``kappa_plan`` times (default 2).
    onfail : {"drain", "stop"}, optional
        The policy of each round (default ``"drain"``: repair once the round has finished all
        it can; under ``"stop"`` the cancelled nodes run again in the next round).

    Returns
    -------
    RepairResult
        ``out``, ``blocked`` and ``cancelled`` describe the final state, ``graph`` and
        ``durations`` the final graph, ``events`` every round, each event carrying its round
        number, with ``"unroll"`` events where a repair added nodes.

    Raises
    ------
    RepairLimitError
        When a failure's repair would copy a node a ``kappa_plan + 1``-th time; its
        ``.result`` holds the run so far.
    CycleError, ValueError
        As for :func:`schedule` and :func:`unroll_failed_check`; also when ``faulty`` is
        none of None, a mapping or a callable, names a node the graph does not have, or
        the callable returns something that is not a node.

    Notes
    -----
    The virtual clock continues across rounds: round ``r + 1`` starts when round ``r``
    returned. All failures of a round are repaired together, in one unrolling: each node
    is copied at most once per round, however many failures are blamed on it or pass
    through it, and every copy reads the copies of that round. Two red test runs blamed on
    the same code give one new version of the code, read by both new test runs, whose prompt
    carries both failure reports. ``repairs`` holds one :class:`Repair` per repair round.
    Every repair adds copies one prime further, so the loop ends after at most
    ``kappa_plan`` repairs of any one chain of copies.

    Examples
    --------
    Example A of the lecture, with the first test run red and the code diagnosed as wrong:

    >>> from decompkit.examples import coding_task
    >>> from decompkit.scheduler import scripted
    >>> g, d = coding_task().graph, coding_task().durations
    >>> result = run_with_repair(g, d, workers=2, step=scripted({"run_tests": ["fail"]}),
    ...                          faulty={"run_tests": "write_code"})
    >>> result.rounds, result.makespan, "report" in result.done
    (2, 15, True)
    >>> [(e.time, e.node) for e in result.events.of_kind("unroll")]
    [(9, "write_code'"), (9, "run_tests'")]
    >>> result.graph["report"]
    ["run_tests'"]
    """
    workers = whole("workers", workers, minimum=1)
    kappa_plan = whole("kappa_plan", kappa_plan, minimum=0)
    onfail = check_onfail(onfail)
    p = check_plan(graph, durations, priority, resources)
    step = check_step(step)
    faulty = _diagnosis(faulty, p.g)
    dur = dict(zip(p.g.nodes, p.d, strict=True))
    keys = {node: k for node, k in zip(p.g.nodes, p.keys, strict=True) if k}
    out: dict = {}
    context: dict = {}
    events: list = []
    repairs: list = []
    clock = 0
    rnd = 0
    while True:
        state, clock = simulate(
            p,
            workers=workers,
            onfail=onfail,
            out=out,
            step=step,
            context=context,
            start=clock,
            rnd=rnd,
        )
        events.extend(state.events)
        out = state.out
        fields = result_fields(p, state, clock, workers)
        so_far = RepairResult(
            **{**fields, "out": dict(out), "events": Trace(events), "graph": dict(p.graph)},
            durations=dict(dur),
            repairs=tuple(repairs),
            rounds=rnd + 1,
        )
        if not state.failed:
            return so_far
        diagnoses = [(x, _diagnose(faulty, p.g, p.graph, x)) for x in state.failed]
        try:
            made = {copy for earlier in repairs for copy in earlier.copies.values()}
            repair = _unroll(p.g, p.graph, out, diagnoses, kappa_plan, dur, made)
        except RepairLimitError as error:
            error.result = so_far
            raise
        repairs.append(repair)
        for original, copy in repair.copies.items():
            events.append(Event(clock, "unroll", copy, detail=f"copy of {original}", round=rnd + 1))
            if original in keys:
                keys[copy] = keys[original]
        dur = repair.durations
        context.update(repair.context)
        p = repaired_plan({n: list(ps) for n, ps in repair.graph.items()}, dur, priority, keys)
        rnd += 1
