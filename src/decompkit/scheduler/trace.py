"""What a scheduler run records: artifacts, failure reports, the event trace, the result.

An accepted node leaves an :class:`Artifact`; a node that never produced one leaves a
:class:`FailureReport` (rejected by its check, or a hard failure). Every dispatch, attempt,
verdict, finish, failure, block, cancellation and repair is an :class:`Event` of the
:class:`Trace`, which renders as a table.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from ..validate import finite

__all__ = [
    "Artifact",
    "FailureReport",
    "EVENT_KINDS",
    "Event",
    "Trace",
    "ScheduleResult",
]


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
        When it was accepted, a finite number.
    """

    node: Hashable
    attempts: int
    correct: bool = True
    time: float = 0

    def __post_init__(self):
        object.__setattr__(self, "time", finite("time", self.time))

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
        When it failed, a finite number.
    """

    node: Hashable
    kind: str
    attempts: int
    verdict: str
    time: float = 0

    def __post_init__(self):
        object.__setattr__(self, "time", finite("time", self.time))
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
        Virtual time of the event, a finite number.
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

    def __post_init__(self):
        object.__setattr__(self, "time", finite("time", self.time))


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
        The worker count given (above the number of nodes, the extra workers never ran).
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
