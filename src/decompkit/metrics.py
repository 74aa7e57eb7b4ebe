r"""Planning metrics read off an event log: how much work is proven, repaired, wasted or idle.

Every metric is a ratio :math:`r = a / b` of two counts or two durations taken from the log,
e.g. evidence coverage :math:`|\{\text{done with evidence}\}| / |\{\text{done}\}|` and
critical-path stretch :math:`\sum \ell_\text{realised} / \sum \ell_\text{planned}`. When
:math:`b = 0` the metric is undefined: its value is ``None`` with the reason, never NaN.

The log is a plain sequence of events, not only what a strict
:class:`decompkit.artefact.Plan` writes. The plan's own :class:`~decompkit.artefact.Transition`
and :class:`~decompkit.artefact.Revision` are joined by three kinds only a runtime can
observe, defined here: :class:`TimeSpent` (planning or execution time), :class:`ReadySample`
(a ready step seen dispatched or left idle) and :class:`PathLength` (critical path planned
vs realised). A strict plan never records *done* without evidence, so evidence coverage below
1 can only come from a log imported from a looser tracker, where "done" is a claim: such a
tracker writes a ``Transition`` to done with ``evidence=None``. :func:`weekly_slice_events`
builds the lecture's week in this way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from fractions import Fraction

from numpy import bool_ as np_bool

from .artefact.states import ACTIVE, DONE, PENDING, Revision, Transition, check_stamp
from .validate import finite

__all__ = [
    "TimeSpent",
    "ReadySample",
    "PathLength",
    "Ratio",
    "PlanningMetrics",
    "planning_metrics",
    "weekly_slice_events",
]

PHASES = ("planning", "execution")


def _duration(name: str, value, *, positive: bool = False):
    value = finite(name, value)
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value!r}")
    return value


def _plain(total: Fraction):
    """An exact sum as an int when whole (of any size), else as the nearest float."""
    if total.denominator == 1:
        return total.numerator
    try:
        return float(total)
    except OverflowError:  # beyond 1.8e308 the fraction is far below the last digit
        return round(total)


def _number(x) -> str:
    """A whole number without a decimal point, any other in its shortest exact form."""
    return str(x) if isinstance(x, int) else str(int(x)) if x.is_integer() else repr(x)


@dataclass(frozen=True)
class TimeSpent:
    """Time spent in one phase (``"planning"`` or ``"execution"``), any unit, >= 0.

    Like every record of the log (these three and the plan's own), its ``seq`` is a whole
    number >= 0 and its ``time`` a finite number (:func:`decompkit.artefact.states.check_stamp`).

    Examples
    --------
    >>> log = [TimeSpent(0, 0.0, "planning", 62), TimeSpent(1, 0.0, "execution", 348),
    ...        ReadySample(2, 0.0, "patch_etl", idle=True), PathLength(3, 0.0, 520, 690)]
    >>> m = planning_metrics(log)
    >>> m.planning_tax.formatted(), m.ready_idle_rate.formatted(), m.critical_path_stretch.value
    ('15.1 %', '100.0 %', 1.3269230769230769)
    """

    seq: int
    time: float
    phase: str
    duration: float
    kind = "time"

    def __post_init__(self):
        check_stamp(self)
        if self.phase not in PHASES:
            raise ValueError(f"phase must be 'planning' or 'execution', got {self.phase!r}")
        object.__setattr__(self, "duration", _duration("duration", self.duration))


@dataclass(frozen=True)
class ReadySample:
    """A step seen ready at one instant, and whether it was left idle (not dispatched)."""

    seq: int
    time: float
    step: str
    idle: bool
    kind = "ready"

    def __post_init__(self):
        check_stamp(self)
        if not isinstance(self.idle, (bool, np_bool)):
            raise ValueError(f"idle must be a bool, got {self.idle!r}")
        object.__setattr__(self, "idle", bool(self.idle))


@dataclass(frozen=True)
class PathLength:
    """The critical path of one plan as planned (> 0) and as it turned out (>= 0)."""

    seq: int
    time: float
    planned: float
    realised: float
    kind = "critical_path"

    def __post_init__(self):
        check_stamp(self)
        object.__setattr__(self, "planned", _duration("planned", self.planned, positive=True))
        object.__setattr__(self, "realised", _duration("realised", self.realised))


@dataclass(frozen=True)
class Ratio:
    """One metric: ``numerator / denominator``, or ``None`` with the reason when undefined.

    ``numerator`` and ``denominator`` are finite numbers >= 0 (ints of any size included);
    the fraction is taken exactly and rounded once, so it is right even where a float
    quotient would over- or underflow on the way.

    Raises
    ------
    ValueError
        If ``name`` or ``undefined`` is not a non-empty str, ``percent`` is not a bool, a
        count is negative, not finite or not a number, or the fraction is beyond the float
        range (about 1.8e308).

    Examples
    --------
    >>> Ratio("evidence coverage", 181, 184).value
    0.983695652173913
    >>> Ratio("critical-path stretch", 690, 520, percent=False).formatted()
    '1.33'
    >>> r = Ratio("evidence coverage", 0, 0, undefined="no step reached done")
    >>> r.value is None, r.formatted()
    (True, 'n/a (no step reached done)')
    >>> Ratio("planning tax", 10**400, 2 * 10**400).value
    0.5
    """

    name: str
    numerator: float
    denominator: float
    undefined: str = "denominator is 0"
    percent: bool = True

    def __post_init__(self):
        for field in ("name", "undefined"):
            text = getattr(self, field)
            if not (isinstance(text, str) and text.strip()):
                raise ValueError(f"{field} must be a non-empty str, got {text!r}")
        if not isinstance(self.percent, (bool, np_bool)):
            raise ValueError(f"percent must be True or False, got {self.percent!r}")
        object.__setattr__(self, "percent", bool(self.percent))
        for field in ("numerator", "denominator"):
            object.__setattr__(self, field, _duration(field, getattr(self, field)))
        if self.denominator:
            try:
                float(Fraction(self.numerator) / Fraction(self.denominator))
            except OverflowError:
                raise ValueError(
                    f"{self.name} = {self.numerator!r} / {self.denominator!r} is beyond the "
                    "float range (about 1.8e308)"
                ) from None

    @property
    def value(self) -> float | None:
        """The fraction, or ``None`` when the denominator is 0."""
        if not self.denominator:
            return None
        return float(Fraction(self.numerator) / Fraction(self.denominator))

    def formatted(self) -> str:
        """``'98.4 %'`` (``'1.33'`` for a ratio shown as a multiple), or ``'n/a (...)'``."""
        if self.value is None:
            return f"n/a ({self.undefined})"
        return f"{100 * self.value:.1f} %" if self.percent else f"{self.value:.2f}"


@dataclass(frozen=True)
class PlanningMetrics:
    """The seven planning metrics of a log, each a :class:`Ratio`.

    Attributes
    ----------
    evidence_coverage
        Done results with evidence / done results.
    structural_repair_rate
        Revisions that changed nodes or edges / revisions.
    invalidation_ratio
        Done results later moved out of done / done results.
    planning_tax
        Planning time / planning plus execution time.
    critical_path_stretch
        Realised critical-path length / planned length, summed over the logged plans.
    ready_idle_rate
        Ready samples left idle / ready samples.
    goal_drift_rate
        Revisions that changed the goal / revisions (target 0).
    """

    evidence_coverage: Ratio
    structural_repair_rate: Ratio
    invalidation_ratio: Ratio
    planning_tax: Ratio
    critical_path_stretch: Ratio
    ready_idle_rate: Ratio
    goal_drift_rate: Ratio

    def ratios(self) -> list[Ratio]:
        """The seven ratios in the order of the table.

        Examples
        --------
        >>> [r.name for r in planning_metrics([]).ratios()][:2]
        ['evidence coverage', 'structural repair rate']
        """
        return [getattr(self, f.name) for f in fields(self)]

    def to_text(self) -> str:
        """A plain-text table: metric, value, numerator / denominator.

        Examples
        --------
        >>> print(planning_metrics([]).to_text())
        metric                  value                                 count
        evidence coverage       n/a (no step reached done)            0 / 0
        structural repair rate  n/a (no revision logged)              0 / 0
        invalidation ratio      n/a (no step reached done)            0 / 0
        planning tax            n/a (no planning or execution time)   0 / 0
        critical-path stretch   n/a (no critical path logged)         0 / 0
        ready-but-idle rate     n/a (no ready step observed)          0 / 0
        goal-drift rate         n/a (no revision logged)              0 / 0
        """
        rows = [("metric", "value", "count")] + [
            (r.name, r.formatted(), f"{_number(r.numerator)} / {_number(r.denominator)}")
            for r in self.ratios()
        ]
        w0, w1 = (max(len(row[k]) for row in rows) for k in (0, 1))
        return "\n".join(f"{a:<{w0}}  {b:<{w1}}  {c}".rstrip() for a, b, c in rows)


def planning_metrics(events) -> PlanningMetrics:
    """Compute the seven planning metrics of an event log.

    Parameters
    ----------
    events : iterable
        :class:`~decompkit.artefact.Transition`, :class:`~decompkit.artefact.Revision`,
        :class:`TimeSpent`, :class:`ReadySample` and :class:`PathLength` events in any order,
        e.g. ``[*plan.events, *runtime_events]``.

    Returns
    -------
    PlanningMetrics
        Each metric with its numerator and denominator; a metric whose denominator is 0
        has value ``None`` and says why (``Ratio.undefined``).

    Raises
    ------
    ValueError
        If ``events`` is not an iterable, an item is not one of the five event kinds (naming
        its position), or a ratio is beyond the float range (a critical path planned at
        1e-300 and realised at 1e10, say).

    Notes
    -----
    A *done result* is one transition into done: a step done, reopened and done again gives
    two. It is *invalidated* by a later transition out of done (a reopen in a strict plan).
    Evidence counts when it is a non-blank str. Durations and path lengths are summed exactly
    and then kept as ints when whole (of any size, beyond 1.8e308 too) or rounded to the
    nearest float; a longer plan weighs more in the stretch. One pass, Theta(len(events)).

    Examples
    --------
    >>> from decompkit.artefact import migration_scenario
    >>> m = planning_metrics(migration_scenario().events)
    >>> m.evidence_coverage.value, m.structural_repair_rate.value, m.goal_drift_rate.value
    (1.0, 1.0, 0.0)
    >>> m.planning_tax.value is None
    True
    """
    if isinstance(events, (str, bytes)) or not isinstance(events, Iterable):
        raise ValueError(f"events must be an iterable of planning events, got {events!r}")
    done = evidenced = invalidated = revisions = structural = drifted = idle = samples = 0
    # Durations are summed exactly (as fractions): a float running sum would overflow to inf
    # near 1e308 and turn the ratios into NaN or 0.
    planning = total = planned = realised = Fraction(0)
    for position, event in enumerate(events):
        if isinstance(event, Transition):
            if event.after is DONE:
                done += 1
                evidenced += isinstance(event.evidence, str) and bool(event.evidence.strip())
            if event.before is DONE and event.after is not DONE:
                invalidated += 1
        elif isinstance(event, Revision):
            revisions += 1
            structural += event.structural
            drifted += event.goal_changed
        elif isinstance(event, TimeSpent):
            duration = Fraction(event.duration)
            total += duration
            planning += duration if event.phase == "planning" else 0
        elif isinstance(event, ReadySample):
            samples += 1
            idle += event.idle
        elif isinstance(event, PathLength):
            planned += Fraction(event.planned)
            realised += Fraction(event.realised)
        else:
            raise ValueError(f"events[{position}] is not a planning event, got {event!r}")
    no_done, no_rev = "no step reached done", "no revision logged"
    return PlanningMetrics(
        Ratio("evidence coverage", evidenced, done, no_done),
        Ratio("structural repair rate", structural, revisions, no_rev),
        Ratio("invalidation ratio", invalidated, done, no_done),
        Ratio("planning tax", _plain(planning), _plain(total), "no planning or execution time"),
        Ratio(
            "critical-path stretch",
            _plain(realised),
            _plain(planned),
            "no critical path logged",
            False,
        ),
        Ratio("ready-but-idle rate", idle, samples, "no ready step observed"),
        Ratio("goal-drift rate", drifted, revisions, no_rev),
    )


def weekly_slice_events() -> list:
    """The lecture's week of planning, as an event log from a looser tracker.

    Returns
    -------
    list
        173 steps started and closed, three of them closed without evidence (claimed done);
        11 of them reopened, each by a revision, and closed again with evidence (184 done
        results, 181 with evidence, 11 invalidated); 20 revisions (7 add a step, 11 reopen,
        2 only annotate; none touches the goal); 62 time units of planning and 348 of
        execution; four plans with critical paths 520 planned, 690 realised; 160 ready
        samples, 48 left idle.

    Notes
    -----
    The three evidence-less closes could not happen in a :class:`decompkit.artefact.Plan`,
    which refuses done without evidence; the log stands for one imported from a tracker
    where "done" is a claim, and the metrics accept it for that reason.

    Examples
    --------
    >>> print(planning_metrics(weekly_slice_events()).to_text())
    metric                  value   count
    evidence coverage       98.4 %  181 / 184
    structural repair rate  35.0 %  7 / 20
    invalidation ratio      6.0 %   11 / 184
    planning tax            15.1 %  62 / 410
    critical-path stretch   1.33    690 / 520
    ready-but-idle rate     30.0 %  48 / 160
    goal-drift rate         0.0 %   0 / 20
    """
    log: list = []

    def add(kind, **fields):
        log.append(kind(seq=len(log), time=float(len(log)), **fields))

    def close(sid, evidence):
        add(Transition, step=sid, before=PENDING, after=ACTIVE)
        add(Transition, step=sid, before=ACTIVE, after=DONE, evidence=evidence)

    add(TimeSpent, phase="planning", duration=42)
    for k in range(1, 174):
        sid = f"s{k:03d}"
        if k > 166:  # the last seven steps were added by structural revisions
            add(
                Revision,
                reason="missing step",
                observation=f"check before {sid}",
                added_nodes=(sid,),
                added_edges=((f"s{k - 1:03d}", sid),),
            )
        close(sid, None if k > 170 else f"artefact of {sid}")
    for k in range(1, 12):
        sid = f"s{k:03d}"
        add(
            Revision,
            reason="result invalid",
            observation=f"{sid} failed downstream",
            reopened=(sid,),
        )
        add(Transition, step=sid, before=DONE, after=PENDING, reason="result invalid")
        close(sid, f"second artefact of {sid}")
    for k in (12, 13):
        add(Revision, reason="clarify", observation="reviewer asked", renoted=(f"s{k:03d}",))
    for _ in range(20):
        add(TimeSpent, phase="planning", duration=1)
    for _ in range(4):
        add(TimeSpent, phase="execution", duration=87)
    for planned, realised in [(100, 130), (140, 190), (120, 160), (160, 210)]:
        add(PathLength, planned=planned, realised=realised)
    for k in range(160):
        add(ReadySample, step=f"s{k + 1:03d}", idle=k % 10 < 3)
    return log
