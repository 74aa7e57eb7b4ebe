r"""The vocabulary of the plan artefact: step states, the moves between them, the records.

A step is in one state :math:`s \in S = \{` pending, active, blocked, done, abandoned :math:`\}`
and moves only along the edges of the table :math:`T \subset S \times S` (``TRANSITIONS``); each
move is a :class:`Transition`, each change of the graph a :class:`Revision`, and
:class:`Progress` reports :math:`|D \cap V_0| / |V_0|` beside :math:`|D \cap V_t| / |V_t
\setminus A|`. The records are frozen; :class:`decompkit.artefact.Plan` makes new ones as it
changes, and :mod:`decompkit.artefact`, their public home, re-exports the states, the table,
the records and :class:`Progress`. :func:`as_state`, :func:`is_text`, :func:`required_text` and
:func:`check_stamp` are the checks the rest of the artefact (and :mod:`decompkit.metrics`)
share; they are public but stay out of ``__all__``, so the package does not lift them.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from enum import Enum
from types import MappingProxyType

from ..validate import finite, short, whole

__all__ = [
    "State",
    "PENDING",
    "ACTIVE",
    "BLOCKED",
    "DONE",
    "ABANDONED",
    "TRANSITIONS",
    "NEEDS_REASON",
    "Step",
    "Transition",
    "Revision",
    "Progress",
]


class State(str, Enum):
    """The state of a step; compares equal to its name (``State.DONE == "done"``).

    Examples
    --------
    >>> State("done") is DONE, sorted(map(str, TRANSITIONS[ACTIVE]))
    (True, ['abandoned', 'blocked', 'done', 'pending'])
    """

    PENDING = "pending"
    ACTIVE = "active"
    BLOCKED = "blocked"
    DONE = "done"
    ABANDONED = "abandoned"

    def __str__(self) -> str:
        return self.value


PENDING, ACTIVE, BLOCKED, DONE, ABANDONED = State

_KINDS = {
    (PENDING, ACTIVE): "start",
    (PENDING, BLOCKED): "block",
    (PENDING, ABANDONED): "abandon",
    (ACTIVE, DONE): "complete",
    (ACTIVE, BLOCKED): "block",
    (ACTIVE, PENDING): "put_back",
    (ACTIVE, ABANDONED): "abandon",
    (BLOCKED, PENDING): "unblock",
    (BLOCKED, ABANDONED): "abandon",
    (DONE, PENDING): "reopen",
}

#: ``{state: frozenset of the states a step may move to from it}``.
TRANSITIONS = MappingProxyType({s: frozenset(b for a, b in _KINDS if a is s) for s in State})
#: The states a step may enter only with a reason.
NEEDS_REASON = frozenset({BLOCKED, ABANDONED, PENDING})


def as_state(name: str, value) -> State:
    """``value`` as a :class:`State`, or a ValueError naming ``name`` and the known states."""
    try:
        return State(value)
    except ValueError:
        known = ", ".join(repr(s.value) for s in State)
        raise ValueError(f"{name} must be one of {known}, got {short.repr(value)}") from None


def is_text(value) -> bool:
    """Whether ``value`` is a str with something other than white space in it."""
    return isinstance(value, str) and bool(value.strip())


def required_text(name: str, value) -> str:
    """``value`` itself if :func:`is_text` holds, else a ValueError naming ``name``."""
    if not is_text(value):
        raise ValueError(f"{name} must be a non-empty str, got {short.repr(value)}")
    return value


def check_stamp(record) -> None:
    """Check a frozen log record's ``seq`` (a whole number >= 0) and ``time`` (a finite
    number), storing them as a plain int and a plain int or float; else a ValueError naming
    the field and showing the value."""
    object.__setattr__(record, "seq", whole("seq", record.seq, minimum=0))
    object.__setattr__(record, "time", finite("time", record.time))


@dataclass(frozen=True)
class Step:
    """One step of a plan, as a frozen snapshot; the plan replaces it on every change.

    Attributes
    ----------
    id, description : str
        A unique name and what the step does.
    verification : str
        How a reader will know the step is done (keyword-only, required).
    depends_on : tuple of str
        The ids of the steps that must be done first.
    invariant : bool
        Flags a completion invariant (see :mod:`decompkit.artefact`).
    note : str
        A free annotation; a revision may change it on any step.
    state : State
        Pending for a step handed to a plan; only the plan moves it.
    evidence, reason : str or None
        The evidence of a done step; the reason given with the latest move (an abandoned or
        blocked step keeps it).

    Examples
    --------
    >>> s = Step("deploy", "Deploy the services", depends_on=["patch"], verification="live")
    >>> s.depends_on, s.state
    (('patch',), <State.PENDING: 'pending'>)
    """

    id: str
    description: str
    _: KW_ONLY
    verification: str
    depends_on: tuple = ()
    invariant: bool = False
    note: str = ""
    state: State = PENDING
    evidence: str | None = None
    reason: str | None = None

    def __post_init__(self):
        if isinstance(self.depends_on, list):
            object.__setattr__(self, "depends_on", tuple(self.depends_on))
        object.__setattr__(self, "state", as_state("state", self.state))


@dataclass(frozen=True)
class Transition:
    """A logged move of one step from state ``before`` to state ``after``.

    ``kind`` names the move (``"start"``, ``"complete"``, ``"reopen"``, ...; ``"a->b"`` for a
    pair outside the table, which only a log from a looser tracker can hold).
    ``seq`` is a whole number >= 0 and ``time`` a finite number, as for every log record
    (:func:`check_stamp`).

    Examples
    --------
    >>> Transition(0, 0.0, "deploy", "active", "done", evidence="health checks green").kind
    'complete'
    >>> Transition(1, 0.0, "deploy", "pending", "done").kind  # a looser tracker's record
    'pending->done'
    """

    seq: int
    time: float
    step: str
    before: State
    after: State
    reason: str | None = None
    observation: str | None = None
    evidence: str | None = None

    def __post_init__(self):
        check_stamp(self)
        object.__setattr__(self, "before", as_state("before", self.before))
        object.__setattr__(self, "after", as_state("after", self.after))

    @property
    def kind(self) -> str:
        return _KINDS.get((self.before, self.after), f"{self.before}->{self.after}")


@dataclass(frozen=True)
class Revision:
    """A logged revision with its diff; an edge ``(u, v)`` means *u before v*.

    ``structural`` is true when nodes or edges changed (a reopen or a note alone is not);
    ``goal_changed`` when ``new_goal`` is set, which a :class:`Plan` always refuses.
    ``seq`` and ``time`` are checked as a :class:`Transition`'s are.

    Examples
    --------
    >>> r = Revision(0, 0.0, "result wrong", "test 7 red", reopened=("patch_etl",))
    >>> r.structural, r.goal_changed
    (False, False)
    """

    seq: int
    time: float
    reason: str
    observation: str
    added_nodes: tuple = ()
    removed_nodes: tuple = ()
    added_edges: tuple = ()
    removed_edges: tuple = ()
    reopened: tuple = ()
    renoted: tuple = ()
    new_goal: str | None = None
    kind = "revision"

    def __post_init__(self):
        check_stamp(self)

    @property
    def structural(self) -> bool:
        return bool(
            self.added_nodes or self.removed_nodes or self.added_edges or self.removed_edges
        )

    @property
    def goal_changed(self) -> bool:
        return self.new_goal is not None


@dataclass(frozen=True)
class Progress:
    """Progress against the original plan and against the current one.

    The original denominator counts every step of the plan as accepted, removed ones too
    (the promise made); the current one counts the steps now in the plan except abandoned
    ones (the work now known). Both are >= 1 for a plan: it starts non-empty and keeps its
    invariant steps.

    Examples
    --------
    >>> p = Progress(original_done=5, original_total=6, added=3, current_done=5,
    ...              current_total=9)
    >>> print(p)
    5 of 6 original steps done; 3 added after evidence; 5 of 9 current steps done
    >>> round(p.original_fraction, 4), round(p.current_fraction, 4)
    (0.8333, 0.5556)
    """

    original_done: int
    original_total: int
    added: int
    current_done: int
    current_total: int
    abandoned: int = 0
    removed: int = 0

    def __post_init__(self):
        if not (0 <= self.original_done <= self.original_total and self.original_total >= 1):
            raise ValueError(
                f"need 0 <= original_done <= original_total >= 1, got {self.original_done} "
                f"and {self.original_total}"
            )
        if not (0 <= self.current_done <= self.current_total and self.current_total >= 1):
            raise ValueError(
                f"need 0 <= current_done <= current_total >= 1, got {self.current_done} "
                f"and {self.current_total}"
            )

    @property
    def original_fraction(self) -> float:
        return self.original_done / self.original_total

    @property
    def current_fraction(self) -> float:
        return self.current_done / self.current_total

    def __str__(self) -> str:
        text = (
            f"{self.original_done} of {self.original_total} original steps done; "
            f"{self.added} added after evidence; "
            f"{self.current_done} of {self.current_total} current steps done"
        )
        extras = [(self.abandoned, "abandoned"), (self.removed, "removed")]
        return text + "".join(f"; {n} {what}" for n, what in extras if n)
