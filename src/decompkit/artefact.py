r"""The plan as an artefact: a fixed goal, steps with states and evidence, a log of every change.

A plan is a goal :math:`g`, fixed for its whole life, and a DAG :math:`G_t = (V_t, E_t)` of
steps that changes only through logged events. A step may start only when every predecessor
is done, and done needs evidence. Progress is stated against both plans: the original promise
:math:`|D \cap V_0| / |V_0|` and the work now known :math:`|D \cap V_t| / |V_t \setminus A|`
(:math:`D` done steps, :math:`A` abandoned steps).

The transition table (``TRANSITIONS``); a reason is required to enter blocked, abandoned or
pending; done needs evidence; abandoned is terminal::

    pending -> active      start      (every dependency done)
    pending -> blocked     block      (waiting on a person or another step)
    pending -> abandoned   abandon
    active  -> done        complete   (evidence)
    active  -> blocked     block
    active  -> pending     put_back
    active  -> abandoned   abandon
    blocked -> pending     unblock    (blocked -> active goes through pending, so the
    blocked -> abandoned   abandon     dependency check sits on one edge only)
    done    -> pending     reopen     (the result is invalidated; no descendant may still be
                                       active or done, since it rests on that result)

Completion invariants are the steps flagged ``invariant=True``, or, if none is flagged, the
sinks of the plan as accepted (a step a revision adds with the flag joins them). Their
verification is what "the goal is reached" means, so a revision may not remove one, an
invariant step may not be abandoned, and a revision may not let one run without a step it
used to wait for (unless that step itself is removed). No method edits a verification text.
"""

from __future__ import annotations

import reprlib
import time
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, replace
from enum import Enum
from types import MappingProxyType

from .dag import CycleError, ancestors, descendants, topological_order
from .plan import PlanError, PlanProblem

__all__ = [
    "State",
    "PENDING",
    "ACTIVE",
    "BLOCKED",
    "DONE",
    "ABANDONED",
    "TRANSITIONS",
    "TransitionError",
    "RevisionError",
    "Step",
    "Transition",
    "Revision",
    "Progress",
    "Plan",
    "migration_stages",
    "migration_scenario",
]

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60


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
_NEEDS_REASON = frozenset({BLOCKED, ABANDONED, PENDING})


def _state(name: str, value) -> State:
    try:
        return State(value)
    except ValueError:
        known = ", ".join(repr(s.value) for s in State)
        raise ValueError(f"{name} must be one of {known}, got {_short.repr(value)}") from None


def _text(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _required_text(name: str, value) -> str:
    if not _text(value):
        raise ValueError(f"{name} must be a non-empty str, got {_short.repr(value)}")
    return value


class TransitionError(ValueError):
    """A step was asked to make a move the plan does not allow.

    Attributes
    ----------
    step : str
        The id of the step.
    current, requested : State
        The state the step is in and the state it was asked to move to.
    """

    def __init__(self, step, current, requested, why: str):
        self.step, self.current, self.requested, self._why = step, current, requested, why
        super().__init__(
            f"cannot move step {step!r} from {str(current)!r} to {str(requested)!r}: {why}"
        )

    def __reduce__(self):
        return type(self), (self.step, self.current, self.requested, self._why)


class RevisionError(PlanError):
    """A revision was refused and the plan left unchanged; ``.problems`` lists every reason.

    Besides the kinds of :class:`decompkit.plan.PlanProblem`, a revision problem may be
    ``"goal"``, ``"invariant"``, ``"immutable_step"``, ``"unknown_step"``, ``"unknown_edge"``,
    ``"duplicate_edge"``, ``"not_done"``, ``"dependent_done"``, ``"not_pending"`` or
    ``"empty"``.
    """


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
        Flags a completion invariant (see the module notes).
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
        object.__setattr__(self, "state", _state("state", self.state))


@dataclass(frozen=True)
class Transition:
    """A logged move of one step from state ``before`` to state ``after``.

    ``kind`` names the move (``"start"``, ``"complete"``, ``"reopen"``, ...; ``"a->b"`` for a
    pair outside the table, which only a log from a looser tracker can hold).

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
        object.__setattr__(self, "before", _state("before", self.before))
        object.__setattr__(self, "after", _state("after", self.after))

    @property
    def kind(self) -> str:
        return _KINDS.get((self.before, self.after), f"{self.before}->{self.after}")


@dataclass(frozen=True)
class Revision:
    """A logged revision with its diff; an edge ``(u, v)`` means *u before v*.

    ``structural`` is true when nodes or edges changed (a reopen or a note alone is not);
    ``goal_changed`` when ``new_goal`` is set, which a :class:`Plan` always refuses.

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


# --------------------------------------------------------------------------------------------
# Validation of a candidate step list (construction and every revision)
# --------------------------------------------------------------------------------------------


def _as_step(where: str, item) -> Step:
    if isinstance(item, Mapping):
        try:
            item = Step(**item)
        except TypeError as error:
            raise ValueError(f"{where} is not a valid step: {error}") from None
    if not isinstance(item, Step):
        raise ValueError(
            f"{where} must be a Step or a mapping of its fields, got {_short.repr(item)}"
        )
    if not isinstance(item.id, str):  # every later check keys on the id
        raise ValueError(f"{where} has id {_short.repr(item.id)}; an id must be a str")
    return item


def _well_formed_deps(deps) -> bool:
    return isinstance(deps, tuple) and all(isinstance(d, str) for d in deps)


def _step_problems(step: Step, position: int) -> list[PlanProblem]:
    label = step.id if _text(step.id) else f"#{position}"
    deps = step.depends_on
    bad_deps = not _well_formed_deps(deps)
    checks = [
        (not _text(value), "malformed", f"{field} {_short.repr(value)}; it must be a non-empty str")
        for field, value in [
            ("id", step.id),
            ("description", step.description),
            ("verification", step.verification),
        ]
    ] + [
        (bad_deps, "malformed", f"depends_on {_short.repr(deps)}; it must be a list of step ids"),
        (not bad_deps and len(set(deps)) < len(deps), "malformed", f"a repeated dependency {deps}"),
        (not isinstance(step.note, str), "malformed", f"note {_short.repr(step.note)}, not a str"),
        (
            step.state is not PENDING or step.evidence is not None,
            "not_pending",
            f"state {str(step.state)!r}; new steps start pending, without evidence",
        ),
    ]
    where = f"step {label!r}" if _text(step.id) else f"the step at position {position}"
    return [PlanProblem(kind, (label,), f"{where} has {why}") for bad, kind, why in checks if bad]


def _graph_problems(steps: list[Step], fresh: int) -> list[PlanProblem]:
    """Problems of a candidate list: its last ``fresh`` steps' fields, ids, dependencies, cycles."""
    new = steps[len(steps) - fresh :]
    problems = [p for k, s in enumerate(new, start=1) for p in _step_problems(s, k)]
    seen: set = set()
    for s in steps:
        if s.id in seen:
            problems.append(
                PlanProblem("duplicate_id", (s.id,), f"step id {s.id!r} is used more than once")
            )
        seen.add(s.id)
    ids = {s.id for s in steps}
    graph = {}
    for s in steps:
        if s.id in graph or not _well_formed_deps(s.depends_on):
            continue
        for d in s.depends_on:
            if d not in ids:
                problems.append(
                    PlanProblem(
                        "unknown_dependency",
                        (s.id, d),
                        f"step {s.id!r} depends on {d!r}, which is not a step of the plan",
                    )
                )
        graph[s.id] = [d for d in s.depends_on if d in ids]
    try:
        topological_order(graph)
    except CycleError as error:
        shown = " -> ".join(map(repr, error.cycle))
        problems.append(
            PlanProblem(
                "cycle", tuple(error.cycle), f"the dependencies would form a cycle: {shown}"
            )
        )
    return problems


def _items(name: str, value, what: str) -> list:
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        raise ValueError(f"{name} must be a list of {what}, got {_short.repr(value)}")
    return list(value)


def _ids(name: str, value) -> tuple:
    ids = _items(name, value, "step ids")
    for sid in ids:
        if not isinstance(sid, str):
            raise ValueError(f"{name} must hold step ids (str), got {_short.repr(sid)}")
    return tuple(dict.fromkeys(ids))


def _edges(name: str, value) -> list[tuple]:
    edges = _items(name, value, "(before, after) pairs")
    for e in edges:
        if not (isinstance(e, tuple) and len(e) == 2 and all(isinstance(x, str) for x in e)):
            raise ValueError(f"{name} must hold (before, after) pairs of step ids, got {e!r}")
    return list(dict.fromkeys(edges))


# --------------------------------------------------------------------------------------------
# The plan
# --------------------------------------------------------------------------------------------


class Plan:
    """A goal and a DAG of steps that change only through checked, logged events.

    Parameters
    ----------
    goal : str
        What the plan is for, kept verbatim; no method changes it.
    steps : iterable of Step or Mapping
        The steps, all pending and without evidence, in the order :meth:`ready` keeps.
    clock : callable, optional
        Returns the time stamped on each event (default :func:`time.time`).

    Raises
    ------
    PlanError
        If the steps have problems (malformed field, duplicate id, unknown dependency, cycle,
        a step not pending, no step at all); ``.problems`` lists every one.
    ValueError
        If ``goal`` is not a non-empty str, a step is neither a Step nor a mapping, or
        ``clock`` is not callable.

    Examples
    --------
    >>> plan = Plan("ship v2", [
    ...     Step("build", "compile", verification="binary exists"),
    ...     Step("test", "run the suite", depends_on=["build"], verification="suite green"),
    ... ])
    >>> plan
    Plan('ship v2', 2 steps, 0 done)
    >>> plan.goal, [s.id for s in plan.steps], plan.events, plan.invariants
    ('ship v2', ['build', 'test'], (), ('test',))
    """

    def __init__(self, goal: str, steps, *, clock=None):
        self._goal = _required_text("goal", goal)
        if clock is not None and not callable(clock):
            raise ValueError(f"clock must be callable, got {_short.repr(clock)}")
        self._clock = time.time if clock is None else clock
        steps = [_as_step(f"steps[{k}]", s) for k, s in enumerate(_items("steps", steps, "steps"))]
        problems = _graph_problems(steps, len(steps))
        if not steps:
            problems.append(PlanProblem("size", (), "plan has no steps"))
        if problems:
            raise PlanError(problems)
        flagged = tuple(s.id for s in steps if s.invariant)
        needed = {d for s in steps for d in s.depends_on}
        self._invariants = flagged or tuple(s.id for s in steps if s.id not in needed)
        self._steps = {s.id: replace(s, invariant=s.id in self._invariants) for s in steps}
        self._original = tuple(self._steps)
        self._used = set(self._steps)
        self._events: list = []

    def __repr__(self) -> str:
        done = sum(s.state is DONE for s in self._steps.values())
        return f"Plan({self._goal!r}, {len(self._steps)} steps, {done} done)"

    @property
    def goal(self) -> str:
        """The goal, verbatim; read-only."""
        return self._goal

    @property
    def steps(self) -> tuple:
        """The current steps as frozen snapshots, in insertion order."""
        return tuple(self._steps.values())

    @property
    def events(self) -> tuple:
        """The log: every :class:`Transition` and :class:`Revision`, ``seq`` 0, 1, 2, ..."""
        return tuple(self._events)

    @property
    def invariants(self) -> tuple:
        """The ids of the steps whose verification defines completion."""
        return self._invariants

    def step(self, step_id) -> Step:
        """The current snapshot of one step.

        Parameters
        ----------
        step_id : str

        Returns
        -------
        Step

        Raises
        ------
        ValueError
            If no step has that id.

        Examples
        --------
        >>> plan = Plan("g", [Step("a", "do a", verification="a checked")])
        >>> plan.step("a").state
        <State.PENDING: 'pending'>
        >>> plan.step("b")
        Traceback (most recent call last):
        ...
        ValueError: unknown step 'b'; the plan has 'a'
        """
        try:
            return self._steps[step_id]
        except (KeyError, TypeError):
            have = ", ".join(map(repr, self._steps))
            raise ValueError(f"unknown step {_short.repr(step_id)}; the plan has {have}") from None

    def graph(self) -> dict:
        """The dependency graph ``{id: tuple of ids it depends on}`` (a fresh dict).

        Examples
        --------
        >>> migration_scenario().graph()["verify_production"]
        ('redeploy',)
        """
        return {sid: s.depends_on for sid, s in self._steps.items()}

    def ready(self) -> tuple:
        """The frontier: pending steps whose dependencies are all done, in insertion order.

        Blocked, active, done and abandoned steps are never ready; a step that depends on an
        abandoned one never becomes ready until a revision re-points it.

        Examples
        --------
        >>> migration_scenario().ready()
        ('sweep_scheduled_jobs',)
        """
        done = {sid for sid, s in self._steps.items() if s.state is DONE}
        return tuple(
            sid
            for sid, s in self._steps.items()
            if s.state is PENDING and all(d in done for d in s.depends_on)
        )

    def progress(self) -> Progress:
        """Honest progress: against the plan as accepted and against the plan as it is now.

        Examples
        --------
        >>> print(migration_scenario().progress())
        5 of 6 original steps done; 3 added after evidence; 5 of 9 current steps done
        """
        states = [s.state for s in self._steps.values()]
        abandoned = states.count(ABANDONED)
        return Progress(
            original_done=sum(
                sid in self._steps and self._steps[sid].state is DONE for sid in self._original
            ),
            original_total=len(self._original),
            added=sum(sid not in self._original for sid in self._steps),
            current_done=states.count(DONE),
            current_total=len(states) - abandoned,
            abandoned=abandoned,
            removed=len(self._used) - len(self._steps),
        )

    def _log(self, event_type, **fields):
        event = event_type(seq=len(self._events), time=self._clock(), **fields)
        self._events.append(event)
        return event

    def transition(self, step_id, to, *, reason=None, evidence=None, observation=None):
        """Move one step to state ``to`` if the table and the step's rules allow it.

        Parameters
        ----------
        step_id : str
        to : State or str
        reason : str, optional
            Required to enter blocked, abandoned or pending.
        evidence : str, optional
            Required to enter done, and accepted only then.
        observation : str, optional
            What was seen that triggered the move.

        Returns
        -------
        Transition
            The logged event.

        Raises
        ------
        TransitionError
            If the move is not in :data:`TRANSITIONS`, a reason or evidence is missing, a
            dependency is not done (to active), an invariant step would be abandoned, or a
            descendant is still active or done (reopening); names the step and both states.
        ValueError
            If the step is unknown, ``to`` is no state, or evidence comes with another move.

        Examples
        --------
        >>> plan = Plan("g", [Step("a", "do a", verification="a checked"),
        ...                   Step("b", "do b", depends_on=["a"], verification="b checked")])
        >>> plan.transition("b", "active")
        Traceback (most recent call last):
        ...
        decompkit.artefact.TransitionError: cannot move step 'b' from 'pending' to 'active': \
dependencies not done: 'a' (pending)
        >>> plan.transition("a", "active").kind
        'start'
        >>> plan.transition("a", "done", evidence="log line 12").kind
        'complete'
        >>> plan.ready()
        ('b',)
        """
        step = self.step(step_id)
        to = _state("to", to)
        if evidence is not None and to is not DONE:
            raise ValueError(f"evidence is recorded only on a move to 'done', not to {str(to)!r}")
        current = step.state

        def refuse(why):
            raise TransitionError(step.id, current, to, why)

        if to not in TRANSITIONS[current]:
            allowed = ", ".join(repr(s.value) for s in State if s in TRANSITIONS[current])
            refuse(
                f"from {str(current)!r} a step may go to {allowed}"
                if allowed
                else f"{str(current)!r} is terminal"
            )
        if to in _NEEDS_REASON and not _text(reason):
            refuse(f"a reason is required, got {_short.repr(reason)}")
        if to is DONE and not _text(evidence):
            refuse(f"done needs evidence (a non-empty str), got {_short.repr(evidence)}")
        if to is ACTIVE:
            waiting = [d for d in step.depends_on if self._steps[d].state is not DONE]
            if waiting:
                refuse(
                    "dependencies not done: "
                    + ", ".join(f"{d!r} ({self._steps[d].state})" for d in waiting)
                )
        if to is ABANDONED and step.id in self._invariants:
            refuse("it carries a completion invariant; abandoning it would drop the goal's check")
        if current is DONE:
            live = self._live_descendants(step.id, ())
            if live:
                refuse(f"{live} rest on its result; reopen or put back those first")
        self._steps[step.id] = replace(
            step, state=to, reason=reason, evidence=evidence if to is DONE else None
        )
        return self._log(
            Transition,
            step=step.id,
            before=current,
            after=to,
            reason=reason,
            observation=observation,
            evidence=evidence,
        )

    def _live_descendants(self, step_id, besides) -> str:
        """The descendants of a step that are active or done (and not in ``besides``)."""
        found = descendants(self.graph(), [step_id])
        live = [
            d
            for d in self._steps
            if d in found and d not in besides and self._steps[d].state in (ACTIVE, DONE)
        ]
        return ", ".join(f"{d!r} ({self._steps[d].state})" for d in live)

    def revise(
        self,
        *,
        reason,
        observation,
        add=(),
        remove=(),
        add_edges=(),
        remove_edges=(),
        reopen=(),
        notes=None,
        goal=None,
    ) -> Revision:
        """Change the plan's structure, reopen done steps or annotate steps, all or nothing.

        Parameters
        ----------
        reason, observation : str
            Why, and what was seen that calls for it (both required).
        add : iterable of Step or Mapping
            New pending steps; their ``depends_on`` may name existing or other new steps.
        remove : iterable of str
            Pending steps to drop; their edges go with them (listed in the diff).
        add_edges, remove_edges : iterable of (str, str)
            Edges ``(before, after)``; ``after`` must be pending or blocked.
        reopen : iterable of str
            Done steps whose results are invalidated (each goes back to pending).
        notes : Mapping of str to str, optional
            New notes for any steps.
        goal : str, optional
            Refused unless it equals the goal (the check against goal drift).

        Returns
        -------
        Revision
            The logged event with its diff; a :class:`Transition` follows for each reopen.

        Raises
        ------
        RevisionError
            With every problem found; the plan is unchanged. Kinds: ``goal``, ``invariant``
            (removing an invariant step or a step it waits for), ``immutable_step`` (removing
            or re-edging a step that is not pending), ``duplicate_id``, ``unknown_dependency``,
            ``cycle``, ``unknown_step``, ``unknown_edge``, ``duplicate_edge``, ``not_done``,
            ``dependent_done``, ``not_pending``, ``malformed``, ``empty``.
        ValueError
            If ``reason`` or ``observation`` is missing or an argument has the wrong shape.

        Notes
        -----
        The candidate plan is built and checked first (with :func:`decompkit.dag.
        topological_order` for cycles) and committed only if it has no problem. Ids are
        never reused, even after a removal, so the log reads without ambiguity.

        Examples
        --------
        >>> plan = Plan("g", [Step("a", "do a", verification="a ok"),
        ...                   Step("b", "do b", depends_on=["a"], verification="b ok")])
        >>> r = plan.revise(reason="b needs c", observation="b's input lacks c",
        ...                 add=[Step("c", "do c", verification="c ok")], add_edges=[("c", "b")])
        >>> r.added_nodes, r.added_edges, r.structural
        (('c',), (('c', 'b'),), True)
        >>> plan.revise(reason="loop", observation="x", add_edges=[("b", "c")])
        Traceback (most recent call last):
        ...
        decompkit.artefact.RevisionError: plan has 1 problem:
          - the dependencies would form a cycle: 'b' -> 'c' -> 'b'
        """
        reason = _required_text("reason", reason)
        observation = _required_text("observation", observation)
        new = [_as_step(f"add[{k}]", s) for k, s in enumerate(_items("add", add, "steps"))]
        remove, reopen = _ids("remove", remove), _ids("reopen", reopen)
        add_edges, remove_edges = (
            _edges("add_edges", add_edges),
            _edges("remove_edges", remove_edges),
        )
        if notes is not None and not isinstance(notes, Mapping):
            raise ValueError(f"notes must be a mapping {{id: note}}, got {_short.repr(notes)}")
        notes = dict(notes or {})
        old, problems = self._steps, []

        def problem(kind, steps, message):
            problems.append(PlanProblem(kind, tuple(steps), message))

        drift = goal is not None and goal != self._goal
        if drift:
            problem(
                "goal",
                (),
                f"revision would change the goal from {self._goal!r} to "
                f"{_short.repr(goal)}; the goal is fixed for the life of the plan",
            )
        if not (drift or new or remove or add_edges or remove_edges or reopen or notes):
            problem("empty", (), "revision changes nothing")
        for sid in [*remove, *reopen, *notes]:
            if sid not in old:
                problem("unknown_step", (sid,), f"unknown step {_short.repr(sid)}")
        for sid in remove:
            if sid in self._invariants:
                problem(
                    "invariant",
                    (sid,),
                    f"step {sid!r} is a completion invariant and cannot be removed",
                )
            elif sid in old and old[sid].state is not PENDING:
                problem(
                    "immutable_step",
                    (sid,),
                    f"step {sid!r} is {old[sid].state}; only "
                    "pending steps can be removed (executed steps are immutable)",
                )
        for sid in reopen:
            if sid in old and old[sid].state is not DONE:
                problem(
                    "not_done",
                    (sid,),
                    f"step {sid!r} is {old[sid].state}; only done steps can be reopened",
                )
            elif sid in old and (live := self._live_descendants(sid, reopen)):
                problem(
                    "dependent_done",
                    (sid,),
                    f"reopening {sid!r} invalidates {live}; reopen them in the same revision",
                )
        for sid, text in notes.items():
            if not isinstance(text, str):
                problem(
                    "malformed", (sid,), f"note for {sid!r} must be a str, got {_short.repr(text)}"
                )
        for s in new:
            if s.id in self._used and s.id not in old:
                problem(
                    "duplicate_id",
                    (s.id,),
                    f"step id {s.id!r} was used earlier in this plan; ids are never reused",
                )

        # The candidate graph: kept steps, then new ones; ``deps`` is edited in place.
        kept = [s for sid, s in old.items() if sid not in remove]
        deps = {s.id: list(s.depends_on) for s in kept}
        for s in new:
            if _well_formed_deps(s.depends_on):
                deps.setdefault(s.id, list(s.depends_on))
        dropped = [(d, sid) for sid in remove if sid in old for d in old[sid].depends_on]
        for s in kept:
            dropped += [(sid, s.id) for sid in remove if sid in deps[s.id]]
            deps[s.id] = [d for d in deps[s.id] if d not in remove]
        for edges, adding in ((remove_edges, False), (add_edges, True)):
            for u, v in edges:
                if u not in deps or v not in deps:
                    problem("unknown_step", (u, v), f"edge {(u, v)!r} names an unknown step")
                elif v in old and old[v].state not in (PENDING, BLOCKED):
                    problem(
                        "immutable_step",
                        (v,),
                        f"step {v!r} is {old[v].state}; only "
                        "pending or blocked steps can change their dependencies",
                    )
                elif adding and u in deps[v]:
                    problem("duplicate_edge", (u, v), f"edge {(u, v)!r} is already in the plan")
                elif not adding and u not in deps[v]:
                    problem("unknown_edge", (u, v), f"edge {(u, v)!r} is not in the plan")
                elif adding:
                    deps[v].append(u)
                else:
                    deps[v].remove(u)
        candidate = [replace(s, depends_on=tuple(deps[s.id])) for s in kept]
        candidate += [
            replace(s, depends_on=tuple(deps[s.id])) if _well_formed_deps(s.depends_on) else s
            for s in new
        ]
        found = _graph_problems(candidate, len(new))
        problems += found
        graph = {s.id: s.depends_on for s in candidate}
        if not found:  # ancestor sets are only meaningful for a valid graph
            before = self.graph()
            for v in self._invariants:
                if v in graph:
                    lost = ancestors(before, [v]) - set(remove) - ancestors(graph, [v])
                    for u in [u for u in old if u in lost]:
                        problem(
                            "invariant",
                            (v, u),
                            f"invariant step {v!r} would no longer wait for {u!r}",
                        )
        if problems:
            raise RevisionError(problems)

        old_edges = {(d, sid) for sid, ds in self.graph().items() for d in ds}
        new_edges = {(d, sid) for sid, ds in graph.items() for d in ds}
        committed = {}
        for s in candidate:
            if s.id in notes:
                s = replace(s, note=notes[s.id])
            if s.id in reopen:
                s = replace(s, state=PENDING, evidence=None, reason=reason)
            committed[s.id] = s
        self._steps = committed
        self._used.update(s.id for s in new)
        self._invariants += tuple(s.id for s in new if s.invariant)
        event = self._log(
            Revision,
            reason=reason,
            observation=observation,
            added_nodes=tuple(s.id for s in new),
            removed_nodes=remove,
            added_edges=tuple(
                (d, v) for v, ds in graph.items() for d in ds if (d, v) not in old_edges
            ),
            removed_edges=tuple(e for e in [*dropped, *remove_edges] if e not in new_edges),
            reopened=reopen,
            renoted=tuple(notes),
        )
        for sid in reopen:
            self._log(
                Transition,
                step=sid,
                before=DONE,
                after=PENDING,
                reason=reason,
                observation=observation,
            )
        return event


# --------------------------------------------------------------------------------------------
# The warehouse-connector migration, scripted
# --------------------------------------------------------------------------------------------

_MIGRATION_GOAL = "Move every reader of the warehouse from the old connector to the new one"
_MIGRATION = [
    (
        "find_callers",
        "Find every caller of the old connector",
        (),
        "a list of call sites, each with file and line",
        "grep + import graph: 14 call sites",
    ),
    (
        "read_schemas",
        "Read the old and new warehouse schemas",
        ("find_callers",),
        "a column mapping for every table a caller reads",
        "mapping.csv: 31 tables mapped",
    ),
    (
        "patch_reporting",
        "Point the reporting jobs at the new connector",
        ("find_callers", "read_schemas"),
        "reporting tests pass against the new connector",
        "CI run 4812: 212 reporting tests green",
    ),
    (
        "patch_etl",
        "Point the ETL loaders at the new connector",
        ("find_callers", "read_schemas"),
        "an ETL dry run loads yesterday with equal row counts",
        "dry run: 48 tables, row counts equal",
    ),
    (
        "deploy",
        "Deploy the patched services",
        ("patch_reporting", "patch_etl"),
        "the new connector version is live",
        "deploy 2026-03-02 10:14, health checks green",
    ),
    (
        "verify_production",
        "Verify production on the new connector",
        ("deploy",),
        "24 h of production logs without a call to the old connector",
        None,
    ),
]
_SCHEDULER_FOUND = (
    "production log: the nightly scheduler job refresh_aggregates still opens the old "
    "connector at 02:00; its call lives in the scheduler config, which the code search missed"
)
_DISCOVERED = [
    Step(
        "sweep_scheduled_jobs",
        "List every scheduled job that opens a warehouse connection",
        verification="every job in the scheduler config checked, callers listed",
    ),
    Step(
        "patch_scheduler",
        "Point the scheduler's jobs at the new connector",
        depends_on=("sweep_scheduled_jobs", "read_schemas"),
        verification="each listed job runs once against the new connector",
    ),
    Step(
        "redeploy",
        "Deploy the scheduler patch",
        depends_on=("patch_scheduler", "deploy"),
        verification="the patched scheduler config is live",
    ),
]


def migration_stages(*, clock=None):
    """Play the warehouse-connector migration, yielding ``(label, plan)`` after each stage.

    Six steps are planned; five are done with evidence; verifying production finds a caller
    the first search missed (a scheduler job configured outside the code), so verification is
    put back and three steps are added: sweep the scheduled jobs, patch the scheduler, deploy
    again; verification is re-pointed from ``deploy`` to ``redeploy`` (the lecture's
    "re-point" repair, so the invariant step stays the sink and still waits for ``deploy``).
    Verification was never done, so it is *put back* (active -> pending), not reopened: its
    result was not accepted, only its run stopped. The six steps are F, S, P, E, Y, V of worked
    example B (:func:`decompkit.examples.migration`), without the runbook, dashboard and
    approval steps.

    Parameters
    ----------
    clock : callable, optional
        Passed to :class:`Plan`.

    Yields
    ------
    label : str
        What just happened.
    plan : Plan
        The same live plan each time; read it before advancing the generator.

    Examples
    --------
    >>> for label, plan in migration_stages():
    ...     p = plan.progress()
    ...     print(f"{label:<22} {p.original_fraction:.3f} {p.current_fraction:.3f}")
    plan accepted          0.000 0.000
    find_callers done      0.167 0.167
    read_schemas done      0.333 0.333
    patch_reporting done   0.500 0.500
    patch_etl done         0.667 0.667
    deploy done            0.833 0.833
    verification put back  0.833 0.833
    plan revised           0.833 0.556
    """
    plan = Plan(
        _MIGRATION_GOAL,
        [Step(i, d, depends_on=p, verification=v) for i, d, p, v, _ in _MIGRATION],
        clock=clock,
    )
    yield "plan accepted", plan
    for sid, *_, evidence in _MIGRATION[:-1]:
        plan.transition(sid, ACTIVE)
        plan.transition(sid, DONE, evidence=evidence)
        yield f"{sid} done", plan
    plan.transition("verify_production", ACTIVE)
    plan.transition(
        "verify_production",
        PENDING,
        reason="an unpatched caller remains",
        observation=_SCHEDULER_FOUND,
    )
    yield "verification put back", plan
    plan.revise(
        reason="the caller search missed jobs configured in the scheduler: find them, patch "
        "them, deploy again, then verify",
        observation=_SCHEDULER_FOUND,
        add=_DISCOVERED,
        add_edges=[("redeploy", "verify_production")],
        remove_edges=[("deploy", "verify_production")],
    )
    yield "plan revised", plan


def migration_scenario(*, clock=None) -> Plan:
    """The warehouse-connector migration after all its stages (see :func:`migration_stages`).

    Examples
    --------
    >>> plan = migration_scenario()
    >>> p = plan.progress()
    >>> print(p)
    5 of 6 original steps done; 3 added after evidence; 5 of 9 current steps done
    >>> f"{p.original_fraction:.1%} -> {p.current_fraction:.1%}"
    '83.3% -> 55.6%'
    >>> [e.kind for e in plan.events][-3:]
    ['start', 'put_back', 'revision']
    """
    *_, (_, plan) = migration_stages(clock=clock)
    return plan
