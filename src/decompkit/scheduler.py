r"""The scheduler loop with checked steps, failure cones, and repair by unrolling, simulated.

A deterministic discrete-event simulation on a virtual clock. While a node is ready or
running: dispatch the ready set :math:`R = \{v \notin \mathrm{out} \cup B : \mathrm{pred}(v)
\subseteq \mathrm{done}\}` to the free workers, advance the clock to the next finish, and
record an artifact or a failure report; a failure of :math:`f` blocks its cone
:math:`B \mathrel{{+}{=}} \mathrm{desc}(f)`. Each node runs as a checked step: at most
:math:`\kappa` attempts of :math:`d_v` time units each, a retry prompt being the original
prompt plus the latest verdict.
"""

from __future__ import annotations

import bisect
import heapq
import math
import numbers
import reprlib
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ._validate import count, probability
from .dag import ancestors, descendants, predecessors_map, successors_map, topological_order

__all__ = [
    "OUTCOMES",
    "Verdict",
    "ScriptedStep",
    "SeededStep",
    "scripted",
    "seeded",
    "task_prompt",
    "retry_prompt",
    "Artifact",
    "FailureReport",
    "Event",
    "EVENT_KINDS",
    "Trace",
    "ScheduleResult",
    "schedule",
    "Primed",
    "Repair",
    "RepairLimitError",
    "unroll_failed_check",
    "RepairResult",
    "run_with_repair",
]

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60

#: What one attempt of a checked step can produce.
#: ``"pass"``: accepted, correct. ``"wrong"``: accepted, but wrong (the check missed it).
#: ``"reject"``: the solver produced an artifact and the check said no (retry if attempts are
#: left). ``"fail"``, ``"crash"``: a hard failure, no artifact at all.
OUTCOMES = ("pass", "wrong", "reject", "fail", "crash")
_ACCEPTED = ("pass", "wrong")

_DEFAULT_MESSAGES = {
    "pass": "accepted",
    "wrong": "accepted, but the artifact is wrong (the check missed it)",
    "reject": "the check rejected the artifact",
    "fail": "the solver returned no output",
    "crash": "the executor crashed",
}


# --------------------------------------------------------------------------------------------
# Steps: the executor of one task
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """The outcome of one attempt and the check's message about it.

    Attributes
    ----------
    outcome : str
        One of :data:`OUTCOMES`.
    message : str
        The verdict as text; after a rejection this is what the retry prompt carries.
    """

    outcome: str
    message: str = ""

    def __post_init__(self):
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {list(OUTCOMES)}, got {self.outcome!r}")
        if not isinstance(self.message, str):
            raise ValueError(f"message must be a str, got {_short.repr(self.message)}")


def _as_verdict(where: str, entry) -> Verdict:
    """A script entry (an outcome, or a pair outcome, message) as a Verdict."""
    if isinstance(entry, str):
        outcome, message = entry, None
    elif isinstance(entry, (tuple, list)) and len(entry) == 2:
        outcome, message = entry
    else:
        raise ValueError(
            f"{where} entries must be an outcome or a pair (outcome, message), "
            f"got {_short.repr(entry)}"
        )
    if outcome not in OUTCOMES:
        raise ValueError(f"{where} has outcome {outcome!r}; choose one of {list(OUTCOMES)}")
    return Verdict(outcome, _DEFAULT_MESSAGES[outcome] if message is None else message)


class ScriptedStep:
    """A checked step whose attempts produce outcomes given as data.

    Use :func:`scripted` to build one. The step remembers how many attempts of each node it
    has played, so a node that runs again (after a cancellation) continues its script.
    """

    def __init__(self, script, kappa, default):
        self.kappa = int(count("kappa", kappa, minimum=1))
        if not isinstance(script, Mapping):
            raise ValueError(f"script must be a mapping {{node: outcomes}}, got {script!r}")
        self._script = {}
        for node, entries in script.items():
            if isinstance(entries, str):
                raise ValueError(
                    f"script[{node!r}] must be a list of outcomes, not the str {entries!r}; "
                    f"write [{entries!r}]"
                )
            if not isinstance(entries, (list, tuple)):
                raise ValueError(
                    f"script[{node!r}] must be a list of outcomes, got {_short.repr(entries)}"
                )
            self._script[node] = [_as_verdict(f"script[{node!r}]", e) for e in entries]
        self.default = _as_verdict("default", default)
        self._played: dict = {}

    def attempt(self, node, prompt: str, number: int) -> Verdict:
        """The next scripted verdict of ``node`` (the default once its script is used up)."""
        k = self._played.get(node, 0)
        self._played[node] = k + 1
        entries = self._script.get(node, ())
        return entries[k] if k < len(entries) else self.default

    def __repr__(self):
        return f"scripted({self._script!r}, kappa={self.kappa})"


class SeededStep:
    """A checked step around a random solver and a random check; see :func:`seeded`."""

    def __init__(self, p, d, kappa, seed, phi, crash):
        self.p = float(probability("p", p))
        self.d = float(probability("d", d))
        self.phi = float(probability("phi", phi))
        self.crash = float(probability("crash", crash))
        self.kappa = int(count("kappa", kappa, minimum=1))
        if isinstance(seed, np.random.Generator):
            self._rng = seed
        elif seed is None or isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
            if seed is not None and seed < 0:
                raise ValueError(f"seed must be an integer >= 0 or a Generator, got {seed!r}")
            self._rng = np.random.default_rng(seed)
        else:
            raise ValueError(f"seed must be an integer >= 0 or a Generator, got {seed!r}")

    def attempt(self, node, prompt: str, number: int) -> Verdict:
        """Draw one attempt: three uniforms, whatever the outcome, so streams stay aligned."""
        u_crash, u_solve, u_check = self._rng.random(3)
        if u_crash < self.crash:
            return Verdict("crash", _DEFAULT_MESSAGES["crash"])
        if u_solve < self.p:
            if u_check < self.phi:
                return Verdict("reject", "the check rejected a correct artifact (false alarm)")
            return Verdict("pass", _DEFAULT_MESSAGES["pass"])
        if u_check < self.d:
            return Verdict("reject", "the check caught a wrong artifact")
        return Verdict("wrong", _DEFAULT_MESSAGES["wrong"])

    def __repr__(self):
        return (
            f"seeded(p={self.p}, d={self.d}, kappa={self.kappa}, phi={self.phi}, "
            f"crash={self.crash})"
        )


def scripted(script=None, *, kappa=1, default="pass") -> ScriptedStep:
    """A checked step whose attempts play a script: outcomes given as data, per node.

    Parameters
    ----------
    script : Mapping, optional
        ``{node: [entry, ...]}``: the outcomes of that node's attempts, in order. An entry is
        an outcome from :data:`OUTCOMES` or a pair ``(outcome, message)`` whose message the
        trace (and, after a rejection, the retry prompt) shows. Nodes not listed, and
        attempts past the end of a list, get ``default``.
    kappa : int, optional
        Attempts per node run, at least 1 (default 1: no retry).
    default : str or tuple, optional
        The entry played when the script says nothing (default ``"pass"``).

    Returns
    -------
    ScriptedStep
        Pass it as ``step=`` to :func:`schedule` or :func:`run_with_repair`.

    Raises
    ------
    ValueError
        If ``script`` is not a mapping, a node's entries are a str or not a list, an entry
        is not an outcome, or ``kappa`` is not an integer >= 1.

    Notes
    -----
    The script is consumed attempt by attempt and remembered across calls: with
    ``{"run_tests": ["fail"]}`` the first attempt of ``run_tests`` fails and any later one
    passes. Build a fresh step to replay a script from the start.

    Examples
    --------
    >>> step = scripted({"write_code": ["reject", "pass"]}, kappa=2)
    >>> [step.attempt("write_code", "do write_code", k).outcome for k in (1, 2)]
    ['reject', 'pass']
    >>> step.attempt("report", "do report", 1)
    Verdict(outcome='pass', message='accepted')
    """
    return ScriptedStep({} if script is None else script, kappa, default)


def seeded(p, d, *, kappa=1, seed=None, phi=0.0, crash=0.0) -> SeededStep:
    """A checked step around a solver right with probability ``p`` and a check of power ``d``.

    Parameters
    ----------
    p : float
        Probability that an attempt produces a correct artifact.
    d : float
        Probability that the check rejects a wrong artifact; a wrong artifact it misses is
        accepted with outcome ``"wrong"`` (the artifact records it).
    kappa : int, optional
        Attempts per node run, at least 1.
    seed : int, numpy.random.Generator or None, optional
        The source of randomness. An int makes a fresh generator: two steps built with the
        same seed give identical traces. A Generator is used (and advanced) as it is.
    phi : float, optional
        Probability that the check rejects a correct artifact (a false alarm), default 0.
    crash : float, optional
        Probability that an attempt fails hard, with no output at all, default 0.

    Returns
    -------
    SeededStep

    Raises
    ------
    ValueError
        If a probability is outside [0, 1], ``kappa`` is not an integer >= 1, or ``seed``
        is neither a non-negative int, a Generator nor None.

    Notes
    -----
    Every attempt draws three uniforms (crash, solve, check) from the step's generator, in
    the order the scheduler completes attempts, which the virtual clock fixes. With
    ``crash = phi = 0`` and ``kappa = 2`` a node is accepted correct with probability
    :math:`p + (1-p) d p` (the lecture's :math:`p'`), accepted wrong with
    :math:`(1-p)(1-d)(1 + (1-p)d)`, and rejected twice with :math:`((1-p)d)^2`.

    Examples
    --------
    >>> step = seeded(0.5, 1.0, kappa=3, seed=1)
    >>> [step.attempt("x", "do x", k).outcome for k in (1, 2, 3)]
    ['reject', 'pass', 'pass']
    """
    return SeededStep(p, d, kappa, seed, phi, crash)


def task_prompt(node, inputs=(), context=None) -> str:
    """The original prompt of a node: its name, the artifacts it reads, and any context.

    Parameters
    ----------
    node : hashable
    inputs : iterable of nodes, optional
        The predecessors whose artifacts the node reads.
    context : str, optional
        Extra input from the caller, such as the failure report a repaired node must see.

    Returns
    -------
    str

    Examples
    --------
    >>> task_prompt("run_tests", ["write_code", "write_tests"])
    'do run_tests with write_code, write_tests'
    """
    text = f"do {node}"
    if inputs:
        text += " with " + ", ".join(map(str, inputs))
    if context:
        text += f"; {context}"
    return text


def retry_prompt(prompt: str, verdict: str) -> str:
    """The prompt of a retry: the original prompt plus the latest verdict, nothing else.

    Parameters
    ----------
    prompt : str
        The node's original prompt (never a previous retry prompt).
    verdict : str
        The check's message on the latest attempt.

    Returns
    -------
    str

    Notes
    -----
    The failed attempt itself never enters the new prompt, and neither do older verdicts:
    the context is rebuilt, not accumulated, which keeps an error from being read again and
    again (context poisoning) and spares the solver superfluous text (context confusion).

    Examples
    --------
    >>> retry_prompt("do write_code with fetch_data", "test_empty fails")
    'do write_code with fetch_data | verdict on the last attempt: test_empty fails'
    """
    return f"{prompt} | verdict on the last attempt: {verdict}"


# --------------------------------------------------------------------------------------------
# Results and the trace
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Artifact:
    """The accepted output of a node.

    Attributes
    ----------
    node : hashable
    attempts : int
        Attempts it took, the accepted one included.
    correct : bool
        False when the check accepted a wrong artifact (outcome ``"wrong"``).
    time : float
        When it was accepted.
    """

    node: Hashable
    attempts: int
    correct: bool = True
    time: float = 0

    def __str__(self):
        note = "" if self.correct else " (wrong: the check missed it)"
        return f"artifact of {self.node} after {self.attempts} attempt(s){note}"


@dataclass(frozen=True)
class FailureReport:
    """Why a node produced no accepted artifact.

    Attributes
    ----------
    node : hashable
    kind : str
        ``"rejected"``: it ran and the check said no on every one of its ``kappa`` attempts;
        ``"hard"``: an attempt failed with no output at all.
    attempts : int
    verdict : str
        The last verdict, as text.
    time : float
        When it failed.
    """

    node: Hashable
    kind: str
    attempts: int
    verdict: str
    time: float = 0

    def __post_init__(self):
        if self.kind not in ("rejected", "hard"):
            raise ValueError(f"kind must be 'rejected' or 'hard', got {self.kind!r}")

    def __str__(self):
        what = "rejected" if self.kind == "rejected" else "hard failure"
        return f"{self.node} failed ({what}) after {self.attempts} attempt(s): {self.verdict}"


#: The kinds of events a trace holds.
EVENT_KINDS = ("dispatch", "attempt", "verdict", "finish", "fail", "block", "cancel", "unroll")


@dataclass(frozen=True)
class Event:
    """One line of a trace.

    Attributes
    ----------
    time : float
        Virtual time of the event.
    kind : str
        ``"dispatch"`` (a worker takes the node), ``"attempt"`` (an attempt starts; ``detail``
        is its prompt), ``"verdict"`` (an attempt ends; ``detail`` is ``outcome: message``),
        ``"finish"`` (artifact recorded), ``"fail"`` (failure report recorded), ``"block"``
        (the node is in a failure's cone), ``"cancel"`` (stopped while running; its result
        is lost), ``"unroll"`` (a repair added the node).
    node : hashable
    worker : int or None
        The worker, for events that happen on one.
    attempt : int or None
        The attempt number, for attempt, verdict, fail and cancel events.
    detail : str
    round : int
        0 for the first call; each repair round adds one.
    """

    time: float
    kind: str
    node: Hashable
    worker: int | None = None
    attempt: int | None = None
    detail: str = ""
    round: int = 0


_COLUMNS = ("time", "round", "kind", "node", "worker", "attempt", "detail")


class Trace(tuple):
    """The ordered events of a run: a tuple of :class:`Event` that renders as a table."""

    __slots__ = ()

    def table(self) -> list[dict]:
        """One dict per event with the keys time, round, kind, node, worker, attempt, detail."""
        return [{c: getattr(e, c) for c in _COLUMNS} for e in self]

    def of_kind(self, *kinds: str) -> Trace:
        """The events of the given kinds, in order."""
        return Trace(e for e in self if e.kind in kinds)

    def to_text(self, *, width: int = 72) -> str:
        """A plain-text table, one line per event; ``detail`` is cut to ``width`` characters."""
        rows = [
            [
                f"{e.time:g}",
                str(e.round),
                e.kind,
                str(e.node),
                "" if e.worker is None else f"w{e.worker}",
                "" if e.attempt is None else str(e.attempt),
                e.detail if len(e.detail) <= width else e.detail[: width - 3].rstrip() + "...",
            ]
            for e in self
        ]
        head = list(_COLUMNS)
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        lines = [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in [head, *rows]
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)


@dataclass(frozen=True)
class ScheduleResult:
    """What a scheduler call returns.

    Attributes
    ----------
    out : dict
        ``{node: Artifact | FailureReport}`` for every attempted node, the results passed in
        included. Cancelled nodes are absent: they can run again.
    blocked : frozenset
        Nodes in the descendant cone of a failure that have not run.
    cancelled : frozenset
        Nodes stopped while running (policy ``"stop"``); not in ``out``.
    makespan : float
        The virtual time when the call returned.
    events : Trace
        Every event in order.
    graph : dict
        The graph as run, ``{node: [predecessors]}`` with every node a key.
    workers : int
    """

    out: dict
    blocked: frozenset
    cancelled: frozenset
    makespan: float
    events: Trace
    graph: dict
    workers: int

    @property
    def done(self) -> frozenset:
        """Nodes with an accepted artifact."""
        return frozenset(n for n, r in self.out.items() if isinstance(r, Artifact))

    @property
    def failed(self) -> frozenset:
        """Nodes with a failure report."""
        return frozenset(n for n, r in self.out.items() if isinstance(r, FailureReport))


# --------------------------------------------------------------------------------------------
# Validation at the boundary
# --------------------------------------------------------------------------------------------


def _durations(durations, nodes) -> dict:
    if not isinstance(durations, Mapping):
        raise ValueError(
            f"durations must be a mapping {{node: time}}, got {_short.repr(durations)}"
        )
    checked = {}
    for node in nodes:
        if node not in durations:
            raise ValueError(f"durations has no entry for node {node!r}")
        value = durations[node]
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or not math.isfinite(value)
            or value < 0
        ):
            raise ValueError(f"durations[{node!r}] must be a finite number >= 0, got {value!r}")
        checked[node] = value
    return checked


def _out(out, graph) -> dict:
    if out is None:
        return {}
    if not isinstance(out, Mapping):
        raise ValueError(f"out must be a mapping {{node: result}}, got {_short.repr(out)}")
    for node, result in out.items():
        if node not in graph:
            raise ValueError(f"out has a result for {node!r}, which is not a node of graph")
        if not isinstance(result, (Artifact, FailureReport)):
            raise ValueError(
                f"out[{node!r}] must be an Artifact or a FailureReport, got {_short.repr(result)}"
            )
    return dict(out)


def _step(step):
    if step is None:
        return scripted()
    kappa = getattr(step, "kappa", None)
    if not callable(getattr(step, "attempt", None)) or not isinstance(kappa, numbers.Integral):
        raise ValueError(
            "step must have an integer kappa and a method attempt(node, prompt, number), "
            f"got {_short.repr(step)}"
        )
    count("step.kappa", kappa, minimum=1)
    return step


def _resources(resources, graph) -> dict:
    """``{node: frozenset of keys}`` for the nodes that need any."""
    if resources is None:
        return {}
    if not isinstance(resources, Mapping):
        raise ValueError(
            f"resources must be a mapping {{node: iterable of keys}}, got {_short.repr(resources)}"
        )
    sets = {}
    for node, keys in resources.items():
        if node not in graph:
            raise ValueError(f"resources names {node!r}, which is not a node of graph")
        if isinstance(keys, (str, bytes)):
            raise ValueError(
                f"resources[{node!r}] must be an iterable of keys, not the str {keys!r}; "
                f"write [{keys!r}]"
            )
        try:
            keys = frozenset(keys)
        except TypeError:
            raise ValueError(
                f"resources[{node!r}] must be an iterable of hashable keys, got {_short.repr(keys)}"
            ) from None
        if keys:
            sets[node] = keys
    return sets


def _ranks(graph, durations, priority) -> dict:
    """``{node: sort key}``: the smaller key is dispatched first; ties go to first appearance."""
    if isinstance(priority, str) and priority == "input":
        return {node: (0, i) for i, node in enumerate(graph)}
    if isinstance(priority, str) and priority == "critical":
        # Bottom level: a node's duration plus the longest chain of durations after it.
        succ = successors_map(graph)
        bottom: dict = {}
        for v in reversed(topological_order(graph)):
            bottom[v] = durations[v] + max((bottom[s] for s in succ[v]), default=0)
        return {node: (-bottom[node], i) for i, node in enumerate(graph)}
    if callable(priority):
        ranks = {}
        for i, node in enumerate(graph):
            value = priority(node)
            if (
                isinstance(value, (bool, np.bool_))
                or not isinstance(value, numbers.Real)
                or math.isnan(value)
            ):
                raise ValueError(f"priority({node!r}) must return a number, got {value!r}")
            ranks[node] = (-value, i)
        return ranks
    raise ValueError(f"priority must be 'critical', 'input' or a callable, got {priority!r}")


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
class _State:
    """The mutable state of one scheduler call (the simulation owns it; nobody else sees it)."""

    graph: dict
    durations: dict
    out: dict
    events: list = field(default_factory=list)
    blocked: dict = field(default_factory=dict)  # node -> failed node whose cone holds it
    cancelled: list = field(default_factory=list)


def _block(state: _State, failed_nodes, time, rnd) -> None:
    """Add the cones of ``failed_nodes`` to the blocked set and log each new member."""
    for f in failed_nodes:
        cone = descendants(state.graph, [f])
        for node in state.graph:  # graph order, so the trace is deterministic
            if node in cone and node not in state.out and node not in state.blocked:
                state.blocked[node] = f
                state.events.append(
                    Event(time, "block", node, detail=f"in the cone of {f}", round=rnd)
                )


def _simulate(
    graph,
    durations,
    *,
    workers,
    onfail,
    out,
    step,
    resources=None,
    priority="critical",
    context=None,
    start=0,
    rnd=0,
) -> tuple[_State, float]:
    """Run the loop; returns the final state and the clock at return."""
    state = _State(graph, durations, out)
    events = state.events
    context = {} if context is None else context
    resources = {} if resources is None else resources
    _block(state, [n for n, r in out.items() if isinstance(r, FailureReport)], start, rnd)

    # The ready set, kept up to date event by event instead of recomputed: each node counts
    # its unfinished predecessors and joins the ready list (sorted by priority) when the
    # count reaches zero. A node in a failure's cone never gets there, since a predecessor
    # on its path from the failure never finishes.
    rank = _ranks(graph, durations, priority)
    node_of = {key: node for node, key in rank.items()}
    succ = successors_map(graph)
    done = {n for n, r in out.items() if isinstance(r, Artifact)}
    waiting = {v: sum(u not in done for u in preds) for v, preds in graph.items()}
    ready = sorted(
        rank[v] for v in graph if not waiting[v] and v not in out and v not in state.blocked
    )

    kappa = int(step.kappa)
    running: dict = {}
    pending: list = []  # heap of (end time, dispatch number, node)
    free = list(range(workers))  # a heap: the lowest free worker goes first
    held: set = set()  # resource keys in use
    seq = 0
    clock = start

    def emit(kind, node, run=None, detail=""):
        worker, attempt = (None, None) if run is None else (run.worker, run.attempt)
        events.append(Event(clock, kind, node, worker, attempt, detail, rnd))

    def begin(node, run):
        emit("attempt", node, run, run.current)
        heapq.heappush(pending, (clock + durations[node], run.seq, node))

    while True:
        i = 0
        while free and i < len(ready):
            node = node_of[ready[i]]
            keys = resources.get(node)
            if keys and not held.isdisjoint(keys):
                i += 1  # a resource it needs is busy: try the next ready node
                continue
            del ready[i]
            if keys:
                held.update(keys)
            seq += 1
            prompt = task_prompt(node, graph[node], context.get(node))
            run = running[node] = _Run(heapq.heappop(free), seq, prompt, prompt)
            events.append(Event(clock, "dispatch", node, run.worker, None, "", rnd))
            begin(node, run)
        if not running:
            return state, clock

        clock = pending[0][0]
        while pending and pending[0][0] == clock:
            node = heapq.heappop(pending)[2]
            run = running[node]
            verdict = step.attempt(node, run.current, run.attempt)
            if not isinstance(verdict, Verdict):
                raise ValueError(
                    f"step.attempt must return a Verdict, got {_short.repr(verdict)} for {node!r}"
                )
            emit("verdict", node, run, f"{verdict.outcome}: {verdict.message}")
            if verdict.outcome == "reject" and run.attempt < kappa:
                run.attempt += 1
                run.current = retry_prompt(run.prompt, verdict.message)
                begin(node, run)
                continue

            del running[node]
            heapq.heappush(free, run.worker)
            held.difference_update(resources.get(node, ()))
            if verdict.outcome in _ACCEPTED:
                out[node] = Artifact(node, run.attempt, verdict.outcome == "pass", clock)
                emit("finish", node, run, str(out[node]))
                for s in succ[node]:
                    waiting[s] -= 1
                    if not waiting[s] and s not in out and s not in state.blocked:
                        bisect.insort(ready, rank[s])
                continue

            kind = "rejected" if verdict.outcome == "reject" else "hard"
            out[node] = FailureReport(node, kind, run.attempt, verdict.message, clock)
            emit("fail", node, run, str(out[node]))
            _block(state, [node], clock, rnd)
            if onfail == "stop":
                for other in sorted(running, key=lambda n: running[n].seq):
                    state.cancelled.append(other)
                    emit("cancel", other, running[other], f"stopped by the failure of {node}")
                return state, clock


def _prepare(graph, durations, workers, onfail, out, step, resources, priority):
    topological_order(graph)  # a cycle would leave its nodes silently unscheduled
    pm = predecessors_map(graph)
    dur = _durations(durations, pm)
    workers = int(count("workers", workers, minimum=1))
    if onfail not in ("stop", "drain"):
        raise ValueError(f"onfail must be 'stop' or 'drain', got {onfail!r}")
    _ranks(pm, dur, priority)  # reject a bad priority before anything runs
    return pm, dur, workers, _out(out, pm), _step(step), _resources(resources, pm)


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
        ``{node: iterable of predecessors}``; must be acyclic.
    durations : Mapping
        ``{node: time}``, a finite number >= 0 for every node: the time of *one attempt*
        (keys that are not nodes are ignored).
    workers : int
        Number of workers, at least 1.
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
        If the graph is malformed, a duration is missing, negative or not a number, ``workers``
        is not an integer >= 1, ``onfail`` or ``priority`` is unknown (or a priority is not
        a number), ``out``, ``resources`` or ``context`` names a node not in the graph or holds
        a value of the wrong type, or ``step`` does not fit the protocol.

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

    The ready set is kept up to date event by event (a count of unfinished predecessors
    per node), so a call costs O((V + E) log V) plus the steps' own work, not a fresh
    ready-set pass per event.

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
    pm, dur, workers, out, step, resources = _prepare(
        graph, durations, workers, onfail, out, step, resources, priority
    )
    state, clock = _simulate(
        pm,
        dur,
        workers=workers,
        onfail=onfail,
        out=out,
        step=step,
        resources=resources,
        priority=priority,
        context=_context(context, pm),
    )
    return ScheduleResult(
        out=state.out,
        blocked=frozenset(state.blocked),
        cancelled=frozenset(state.cancelled),
        makespan=clock,
        events=Trace(state.events),
        graph=pm,
        workers=workers,
    )


def _context(context, graph) -> dict:
    if context is None:
        return {}
    if not isinstance(context, Mapping):
        raise ValueError(f"context must be a mapping {{node: str}}, got {_short.repr(context)}")
    for node, text in context.items():
        if node not in graph:
            raise ValueError(f"context names {node!r}, which is not a node of graph")
        if not isinstance(text, str):
            raise ValueError(f"context[{node!r}] must be a str, got {_short.repr(text)}")
    return dict(context)


# --------------------------------------------------------------------------------------------
# Repair: unroll a failed check into new nodes
# --------------------------------------------------------------------------------------------


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
    """The plan-level retry cap is spent: the node failed again after ``kappa_plan`` repairs.

    Attributes
    ----------
    node : hashable
        The failed node that could not be unrolled again.
    kappa_plan : int
    result : RepairResult or None
        The run so far, when raised by :func:`run_with_repair` (its trace shows every round).
    """

    def __init__(self, node, kappa_plan, result=None):
        self.node = node
        self.kappa_plan = kappa_plan
        self.result = result
        super().__init__(
            f"{node} failed after {_level(node)} repair(s); the plan-level cap "
            f"kappa_plan={kappa_plan} allows no further copy, so the plan gives up"
        )


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
        The plan-level cap: how many times one node may be copied (``failed`` may be at most
        a ``kappa_plan``-fold copy after this repair).
    durations : Mapping
        ``{node: time}`` for the graph's nodes.

    Returns
    -------
    Repair
        The new graph and durations, the context of the new nodes, the copies made and the
        re-pointed edges.

    Raises
    ------
    RepairLimitError
        If ``failed`` is already a ``kappa_plan``-fold copy (a ValueError subclass).
    ValueError
        If a node is unknown, ``out[failed]`` is not a failure report, ``faulty`` is not
        ``failed`` or an ancestor of it, a copy's name is already taken, a duration is
        missing, or ``kappa_plan`` is not an integer >= 0.

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
    copy level, which ``kappa_plan`` caps: ``kappa_plan=0`` forbids any repair, so do not
    end the name of an original str node with a prime.

    Examples
    --------
    >>> g = {"code": [], "test": ["code"], "report": ["test"]}
    >>> out = {"code": Artifact("code", 1), "test": FailureReport("test", "hard", 1, "red")}
    >>> r = unroll_failed_check(g, out, "test", "code", 2, durations=dict.fromkeys(g, 1))
    >>> r.graph
    {'code': (), 'test': ('code',), 'report': ("test'",), "code'": (), "test'": ("code'",)}
    >>> r.context["code'"]
    'repairs code; failure report: test failed (hard failure) after 1 attempt(s): red'
    """
    kappa_plan = int(count("kappa_plan", kappa_plan, minimum=0))
    pm = predecessors_map(graph)
    topological_order(pm)
    for name, node in (("failed", failed), ("faulty", faulty)):
        if node not in pm:
            raise ValueError(f"{name} node {node!r} is not a node of graph")
    out = _out(out, pm)
    report = out.get(failed)
    if not isinstance(report, FailureReport):
        raise ValueError(
            f"out[{failed!r}] must be a FailureReport to unroll, got {_short.repr(report)}"
        )
    if faulty != failed and faulty not in ancestors(pm, [failed]):
        raise ValueError(
            f"faulty node {faulty!r} must be {failed!r} or one of its ancestors in graph"
        )
    if _level(failed) >= kappa_plan:
        raise RepairLimitError(failed, kappa_plan)
    dur = _durations(durations, pm)

    on_path = ({faulty} | descendants(pm, [faulty])) & ({failed} | ancestors(pm, [failed]))
    order = [n for n in topological_order(pm) if n in on_path]
    copies = {n: _prime(n) for n in order}
    for original, copy in copies.items():
        if copy in pm:
            raise ValueError(f"cannot copy {original!r}: the name {copy!r} is already a node")

    def swap(preds):
        return tuple(copies.get(p, p) for p in preds)

    new = {}
    repointed = {}
    for node, preds in pm.items():
        preds = tuple(preds)
        if node not in out and any(p in copies for p in preds):
            repointed[node] = (preds, swap(preds))
            preds = swap(preds)
        new[node] = preds
    for original, copy in copies.items():
        new[copy] = swap(pm[original])
    new_durations = dict(dur)
    new_durations.update({copy: dur[original] for original, copy in copies.items()})
    context = {
        copy: f"copy of {original}" for original, copy in copies.items() if original != faulty
    }
    context[copies[faulty]] = f"repairs {faulty}; failure report: {report}"

    # The two invariants of a graph mutation, checked rather than trusted.
    topological_order(new)  # raises CycleError if a cycle appeared
    for node in out:
        if new[node] != tuple(pm[node]):
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
        Each unrolling, in order.
    rounds : int
        How many scheduler calls ran (1 + the number of repair rounds).
    """

    durations: dict = field(default_factory=dict)
    repairs: tuple = ()
    rounds: int = 1


def _diagnose(faulty, graph, failed):
    """The live node to unroll for ``failed``, following the caller's diagnosis."""
    if faulty is None:
        return failed
    if callable(faulty):
        return faulty(failed, graph)
    if not isinstance(faulty, Mapping):
        raise ValueError(f"faulty must be None, a mapping or a callable, got {_short.repr(faulty)}")
    target = faulty.get(_base(failed), _base(failed))
    candidates = [n for n in [failed, *ancestors(graph, [failed])] if _base(n) == target]
    if not candidates:
        raise ValueError(
            f"faulty names {target!r} for {_base(failed)!r}, but no copy of it is an "
            f"ancestor of {failed!r}"
        )
    return max(candidates, key=_level)


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
        As for :func:`schedule`; a copy inherits no resource keys unless ``resources`` names
        it. The same ``step`` serves every round, so a scripted step
        continues its script and a seeded one its random stream.
    faulty : None, Mapping or callable, optional
        The diagnosis of each failure. None: the failed node itself is re-run as a copy.
        A mapping ``{failed: faulty}`` on original names, e.g. ``{"run_tests": "write_code"}``:
        the live copy of ``faulty`` upstream of the failure is unrolled (so the second
        failure, of ``run_tests'``, unrolls ``write_code'``). A callable
        ``faulty(failed, graph) -> node``.
    kappa_plan : int, optional
        The plan-level cap passed to :func:`unroll_failed_check` (default 2).
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
        When a node fails again after ``kappa_plan`` repairs; its ``.result`` holds the run
        so far.
    CycleError, ValueError
        As for :func:`schedule` and :func:`unroll_failed_check`.

    Notes
    -----
    The virtual clock continues across rounds: round ``r + 1`` starts when round ``r``
    returned. A round's failures are repaired one after another in the order they happened.
    Every repair adds copies one prime further, so the loop ends after at most ``kappa_plan``
    repairs of any one chain of copies.

    Examples
    --------
    Example A of the lecture, with the first test run red and the code diagnosed as wrong:

    >>> from decompkit.examples import coding_task
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
    pm, dur, workers, _, step, resources = _prepare(
        graph, durations, workers, onfail, None, step, resources, priority
    )
    out: dict = {}
    context: dict = {}
    events: list = []
    repairs: list = []
    clock = 0
    rnd = 0
    while True:
        state, clock = _simulate(
            pm,
            dur,
            workers=workers,
            onfail=onfail,
            out=out,
            step=step,
            resources=resources,
            priority=priority,
            context=context,
            start=clock,
            rnd=rnd,
        )
        events.extend(state.events)
        out = state.out
        so_far = RepairResult(
            out=dict(out),
            blocked=frozenset(state.blocked),
            cancelled=frozenset(state.cancelled),
            makespan=clock,
            events=Trace(events),
            graph=dict(pm),
            workers=workers,
            durations=dict(dur),
            repairs=tuple(repairs),
            rounds=rnd + 1,
        )
        new_failures = [e.node for e in state.events if e.kind == "fail"]
        if not new_failures:
            return so_far
        for failed in new_failures:
            node = _diagnose(faulty, pm, failed)
            try:
                repair = unroll_failed_check(pm, out, failed, node, kappa_plan, durations=dur)
            except RepairLimitError as error:
                error.result = so_far
                raise
            repairs.append(repair)
            for original, copy in repair.copies.items():
                events.append(
                    Event(clock, "unroll", copy, detail=f"copy of {original}", round=rnd + 1)
                )
            pm = {n: list(p) for n, p in repair.graph.items()}
            dur = repair.durations
            context.update(repair.context)
        rnd += 1
