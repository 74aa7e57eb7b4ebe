r"""The :class:`Plan`: a fixed goal and a DAG of steps that change only through logged events.

The plan holds :math:`g` and :math:`G_t = (V_t, E_t)`; a step may start only when every
predecessor is done, and done needs evidence. Every accepted move is a
:class:`~decompkit.artefact.states.Transition`, every accepted change of the graph a
:class:`~decompkit.artefact.states.Revision`, both appended to the log; a refused one raises
:class:`TransitionError` or :class:`RevisionError` and leaves the plan as it was.

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

import time
from collections.abc import Mapping
from dataclasses import replace

from ..plan import PlanError, PlanProblem
from ..validate import short
from .revisions import (
    as_edges,
    as_ids,
    as_items,
    as_step,
    check_revision,
    graph_problems,
    live_descendants,
)
from .states import (
    ABANDONED,
    ACTIVE,
    DONE,
    NEEDS_REASON,
    PENDING,
    TRANSITIONS,
    Progress,
    Revision,
    State,
    Step,
    Transition,
    as_state,
    is_text,
    required_text,
)

__all__ = ["TransitionError", "RevisionError", "Plan"]


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


def _clock_or(clock, default):
    """``clock``, or ``default`` for None; anything else not callable is refused."""
    if clock is None:
        return default
    if not callable(clock):
        raise ValueError(f"clock must be callable, got {short.repr(clock)}")
    return clock


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
        self._goal = required_text("goal", goal)
        self._clock = _clock_or(clock, time.time)
        steps = [as_step(f"steps[{k}]", s) for k, s in enumerate(as_items("steps", steps, "steps"))]
        problems = graph_problems(steps, len(steps))
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
            raise ValueError(f"unknown step {short.repr(step_id)}; the plan has {have}") from None

    def graph(self) -> dict:
        """The dependency graph ``{id: tuple of ids it depends on}`` (a fresh dict).

        Examples
        --------
        >>> from decompkit.artefact import migration_scenario
        >>> migration_scenario().graph()["verify_production"]
        ('redeploy',)
        """
        return {sid: s.depends_on for sid, s in self._steps.items()}

    def copy(self, *, clock=None) -> Plan:
        """An independent plan in the same state: the same steps, invariants and log, with
        nothing shared that either changes later.

        Parameters
        ----------
        clock : callable, optional
            The copy's clock (default: this plan's).

        Raises
        ------
        ValueError
            If ``clock`` is not callable.

        Examples
        --------
        >>> plan = Plan("g", [Step("a", "do a", verification="a checked")])
        >>> twin = plan.copy()
        >>> twin.transition("a", "active").seq, plan.step("a").state, len(plan.events)
        (0, <State.PENDING: 'pending'>, 0)
        """
        clock = _clock_or(clock, self._clock)
        twin = object.__new__(Plan)
        twin.__dict__.update(self.__dict__)  # the goal, invariants and original ids: immutable
        twin._steps, twin._used, twin._events = (
            dict(self._steps),
            set(self._used),
            list(self._events),
        )
        twin._clock = clock
        return twin

    def ready(self) -> tuple:
        """The frontier: pending steps whose dependencies are all done, in insertion order.

        Blocked, active, done and abandoned steps are never ready; a step that depends on an
        abandoned one never becomes ready until a revision re-points it.

        Examples
        --------
        >>> from decompkit.artefact import migration_scenario
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
        >>> from decompkit.artefact import migration_scenario
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
        decompkit.artefact.plan.TransitionError: cannot move step 'b' from 'pending' to 'active': \
dependencies not done: 'a' (pending)
        >>> plan.transition("a", "active").kind
        'start'
        >>> plan.transition("a", "done", evidence="log line 12").kind
        'complete'
        >>> plan.ready()
        ('b',)
        """
        step = self.step(step_id)
        to = as_state("to", to)
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
        if to in NEEDS_REASON and not is_text(reason):
            refuse(f"a reason is required, got {short.repr(reason)}")
        if to is DONE and not is_text(evidence):
            refuse(f"done needs evidence (a non-empty str), got {short.repr(evidence)}")
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
            live = live_descendants(self._steps, step.id, ())
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
        decompkit.artefact.plan.RevisionError: plan has 1 problem:
          - the dependencies would form a cycle: 'b' -> 'c' -> 'b'
        """
        reason = required_text("reason", reason)
        observation = required_text("observation", observation)
        new = [as_step(f"add[{k}]", s) for k, s in enumerate(as_items("add", add, "steps"))]
        remove, reopen = as_ids("remove", remove), as_ids("reopen", reopen)
        add_edges, remove_edges = (
            as_edges("add_edges", add_edges),
            as_edges("remove_edges", remove_edges),
        )
        if notes is not None and not isinstance(notes, Mapping):
            raise ValueError(f"notes must be a mapping {{id: note}}, got {short.repr(notes)}")
        notes = dict(notes or {})
        candidate, dropped, problems = check_revision(
            self._steps,
            goal=self._goal,
            invariants=self._invariants,
            used=self._used,
            new=new,
            remove=remove,
            add_edges=add_edges,
            remove_edges=remove_edges,
            reopen=reopen,
            notes=notes,
            proposed_goal=goal,
        )
        if problems:
            raise RevisionError(problems)

        graph = {s.id: s.depends_on for s in candidate}
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
