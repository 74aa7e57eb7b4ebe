"""decompkit.metrics: the lecture's weekly figures, undefined ratios, the event vocabulary."""

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from decompkit.artefact import (
    ACTIVE,
    DONE,
    PENDING,
    Plan,
    Revision,
    Step,
    Transition,
    migration_scenario,
)
from decompkit.metrics import (
    PathLength,
    PlanningMetrics,
    Ratio,
    ReadySample,
    TimeSpent,
    planning_metrics,
    weekly_slice_events,
)

# (attribute, numerator, denominator, shown as in the lecture)
WEEKLY = [
    ("evidence_coverage", 181, 184, "98.4 %"),
    ("structural_repair_rate", 7, 20, "35.0 %"),
    ("invalidation_ratio", 11, 184, "6.0 %"),
    ("planning_tax", 62, 410, "15.1 %"),
    ("critical_path_stretch", 690, 520, "1.33"),
    ("ready_idle_rate", 48, 160, "30.0 %"),
    ("goal_drift_rate", 0, 20, "0.0 %"),
]


@pytest.fixture(scope="module")
def weekly():
    return planning_metrics(weekly_slice_events())


@pytest.mark.parametrize(("name", "num", "den", "shown"), WEEKLY)
def test_weekly_slice_reproduces_the_lecture(weekly, name, num, den, shown):
    ratio = getattr(weekly, name)
    assert (ratio.numerator, ratio.denominator) == (num, den)  # exact counts
    # The fraction is one float division of exact integers: only rounding can differ.
    assert_allclose(ratio.value, num / den, rtol=1e-15, atol=0)
    assert ratio.formatted() == shown


def test_weekly_slice_rounded_figures(weekly):
    percent = {
        name: round(100 * getattr(weekly, name).value, 1)
        for name in [
            "evidence_coverage",
            "structural_repair_rate",
            "invalidation_ratio",
            "planning_tax",
            "ready_idle_rate",
            "goal_drift_rate",
        ]
    }
    assert percent == {
        "evidence_coverage": 98.4,
        "structural_repair_rate": 35.0,
        "invalidation_ratio": 6.0,
        "planning_tax": 15.1,
        "ready_idle_rate": 30.0,
        "goal_drift_rate": 0.0,
    }
    assert round(weekly.critical_path_stretch.value, 2) == 1.33


def test_weekly_slice_is_a_consistent_log():
    log = weekly_slice_events()
    assert [e.seq for e in log] == list(range(len(log)))
    dones = [e for e in log if isinstance(e, Transition) and e.after is DONE]
    assert len({e.step for e in dones}) == 173
    claimed = [e.step for e in dones if e.evidence is None]
    assert claimed == ["s171", "s172", "s173"]  # the looser tracker's unproven closes
    # Every reopen follows a done of the same step and comes with its revision.
    reopens = [e for e in log if isinstance(e, Transition) and e.kind == "reopen"]
    revisions = {r.reopened for r in log if isinstance(r, Revision) and r.reopened}
    assert {(e.step,) for e in reopens} == revisions and len(reopens) == 11


def test_to_text_table(weekly):
    lines = weekly.to_text().splitlines()
    assert lines[0].split() == ["metric", "value", "count"]
    assert len(lines) == 8
    assert "critical-path stretch   1.33    690 / 520" in lines
    assert "planning tax            15.1 %  62 / 410" in lines


def test_empty_log_gives_undefined_metrics_not_nan():
    metrics = planning_metrics([])
    for ratio in metrics.ratios():
        assert ratio.value is None
        assert (ratio.numerator, ratio.denominator) == (0, 0)
        assert ratio.formatted().startswith("n/a (")
    assert metrics.evidence_coverage.undefined == "no step reached done"
    assert metrics.goal_drift_rate.undefined == "no revision logged"
    assert "nan" not in metrics.to_text().lower()


def test_one_empty_denominator_leaves_the_others_defined():
    log = [
        TimeSpent(0, 0.0, "execution", 5),
        ReadySample(1, 0.0, "a", idle=True),
        Revision(2, 0.0, "r", "o", renoted=("a",)),
    ]
    m = planning_metrics(log)
    assert m.planning_tax.value == 0.0 and m.ready_idle_rate.value == 1.0
    assert m.structural_repair_rate.value == 0.0
    assert m.evidence_coverage.value is None and m.critical_path_stretch.value is None


def test_zero_planned_path_is_refused_at_the_event():
    with pytest.raises(ValueError, match="planned must be > 0, got 0"):
        PathLength(0, 0.0, planned=0, realised=3)


def test_strict_plan_log_feeds_the_metrics():
    plan = migration_scenario()
    m = planning_metrics(plan.events)
    assert (m.evidence_coverage.numerator, m.evidence_coverage.denominator) == (5, 5)
    assert (m.structural_repair_rate.numerator, m.structural_repair_rate.denominator) == (1, 1)
    assert (m.invalidation_ratio.numerator, m.goal_drift_rate.numerator) == (0, 0)
    # Runtime observations join the plan's log.
    extra = [TimeSpent(0, 0.0, "planning", 1), TimeSpent(1, 0.0, "execution", 3)]
    assert planning_metrics([*plan.events, *extra]).planning_tax.value == 0.25


def test_invalidations_count_done_results_not_steps():
    plan = Plan("g", [Step("a", "x", verification="v")])
    for _ in range(2):
        plan.transition("a", ACTIVE)
        plan.transition("a", DONE, evidence="log")
        plan.transition("a", PENDING, reason="wrong table")
    m = planning_metrics(plan.events)
    assert (m.invalidation_ratio.numerator, m.invalidation_ratio.denominator) == (2, 2)


@pytest.mark.parametrize(("evidence", "counted"), [("log", 1), (None, 0), ("", 0), ("  ", 0)])
def test_loose_done_without_evidence_lowers_coverage(evidence, counted):
    log = [Transition(0, 0.0, "a", "active", "done", evidence=evidence)]
    assert planning_metrics(log).evidence_coverage.numerator == counted


def test_goal_drift_from_a_loose_log():
    log = [
        Revision(0, 0.0, "r", "o", new_goal="a narrower goal"),
        Revision(1, 0.0, "r", "o", added_nodes=("x",)),
    ]
    m = planning_metrics(log)
    assert m.goal_drift_rate.value == 0.5 and m.structural_repair_rate.value == 0.5


def test_unknown_event_is_refused_with_its_position():
    with pytest.raises(ValueError, match=r"events\[1\] is not a planning event, got 'start'"):
        planning_metrics([TimeSpent(0, 0.0, "planning", 1), "start"])


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: TimeSpent(0, 0.0, "coding", 1), "phase must be 'planning' or 'execution'"),
        (lambda: TimeSpent(0, 0.0, "planning", -1), "duration must be >= 0, got -1"),
        (lambda: TimeSpent(0, 0.0, "planning", math.nan), "duration must be a finite number"),
        (lambda: TimeSpent(0, 0.0, "planning", True), "duration must be a finite number"),
        (lambda: TimeSpent(0, 0.0, "planning", "3"), "duration must be a finite number"),
        (lambda: PathLength(0, 0.0, 5, -1), "realised must be >= 0, got -1"),
        (lambda: ReadySample(0, 0.0, "a", idle=1), "idle must be a bool, got 1"),
    ],
)
def test_event_validation(make, match):
    with pytest.raises(ValueError, match=match):
        make()


RUNTIME_RECORDS = {
    "TimeSpent": lambda seq, time: TimeSpent(seq, time, "planning", 1),
    "ReadySample": lambda seq, time: ReadySample(seq, time, "a", idle=False),
    "PathLength": lambda seq, time: PathLength(seq, time, 5, 6),
}


@pytest.mark.parametrize("record", sorted(RUNTIME_RECORDS))
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_runtime_records_refuse_a_seq_or_time_that_is_not_finite(record, bad):
    make = RUNTIME_RECORDS[record]
    with pytest.raises(ValueError, match=rf"^seq must be an integer >= 0, got {bad!r}$"):
        make(bad, 0.0)
    with pytest.raises(ValueError, match=rf"^time must be a finite number, got {bad!r}$"):
        make(0, bad)
    with pytest.raises(ValueError, match=r"^seq must be an integer >= 0, got -2$"):
        make(-2, 0.0)
    event = make(np.int64(1), np.float64(0.5))
    assert (type(event.seq), type(event.time)) == (int, float)


def test_results_are_frozen():
    m = planning_metrics(weekly_slice_events())
    assert isinstance(m, PlanningMetrics)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.planning_tax = None
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.planning_tax.numerator = 1


def test_to_text_prints_large_totals_and_fractional_durations_plainly():
    log = [TimeSpent(0, 0.0, "planning", 2.5), TimeSpent(1, 0.0, "execution", 1_234_567)]
    assert "2.5 / 1234569.5" in planning_metrics(log).to_text()
    log = [TimeSpent(0, 0.0, "planning", 3_000_000), TimeSpent(1, 0.0, "execution", 1_000_000)]
    assert "3000000 / 4000000" in planning_metrics(log).to_text()


def test_ratio_formats():
    assert Ratio("x", 690, 520, percent=False).formatted() == "1.33"
    assert Ratio("x", 1, 3).formatted() == "33.3 %"
    assert Ratio("x", 0, 0, "nothing seen").formatted() == "n/a (nothing seen)"


# --- edges: no iterable, huge sums, NumPy scalars, Ratio's own fields --------------------------


@pytest.mark.parametrize("events", [None, 42, "TimeSpent", b"log"])
def test_events_must_be_an_iterable_of_events(events):
    # None used to fail with a bare TypeError from the for loop.
    with pytest.raises(ValueError, match=r"^events must be an iterable of planning events, got"):
        planning_metrics(events)


def test_sums_near_the_float_limit_give_the_exact_ratios():
    # A float running sum overflowed to inf: planning tax 0.0 and a NaN stretch.
    log = [
        TimeSpent(0, 0.0, "planning", 1e308),
        TimeSpent(1, 0.0, "execution", 1e308),
        PathLength(2, 0.0, 1e308, 1.5e308),
        PathLength(3, 0.0, 1e308, 1.5e308),
    ]
    m = planning_metrics(log)
    assert m.planning_tax.value == 0.5
    assert m.critical_path_stretch.value == 1.5
    assert m.planning_tax.denominator == 2 * int(1e308)  # the exact sum, as an int
    assert "50.0 %" in m.to_text() and "1.50" in m.to_text()


def test_a_ratio_beyond_the_float_range_is_refused():
    log = [PathLength(0, 0.0, 1e-300, 1e10)]
    with pytest.raises(ValueError, match=r"critical-path stretch = 10000000000 / 1e-300 is beyond"):
        planning_metrics(log)


@pytest.mark.parametrize(
    ("value", "stored"),
    [(np.int64(5), 5), (np.uint8(5), 5), (np.float64(2.5), 2.5), (np.float32(0.5), 0.5),
     (10**400, 10**400)],
)  # fmt: skip
def test_numpy_and_big_numbers_are_durations(value, stored):
    event = TimeSpent(0, 0.0, "planning", value)
    assert event.duration == stored and type(event.duration) is type(stored)
    assert PathLength(0, 0.0, value, value).planned == stored
    assert ReadySample(0, 0.0, "a", idle=np.bool_(True)).idle is True


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Ratio("x", "a", None), r"numerator must be a finite number, got 'a'"),
        (lambda: Ratio("x", 1, None), r"denominator must be a finite number, got None"),
        (lambda: Ratio("x", -1, 2), r"numerator must be >= 0, got -1"),
        (lambda: Ratio("x", 1, math.inf), r"denominator must be a finite number, got inf"),
        (lambda: Ratio("x", True, 2), r"numerator must be a finite number, got True"),
        (lambda: Ratio("", 1, 2), r"name must be a non-empty str, got ''"),
        (lambda: Ratio("x", 1, 2, undefined=None), r"undefined must be a non-empty str"),
        (lambda: Ratio("x", 1, 2, percent="yes"), r"percent must be True or False, got 'yes'"),
        (lambda: Ratio("x", 1e300, 1e-300), r"x = 1e\+300 / 1e-300 is beyond the float range"),
    ],
)
def test_ratio_checks_its_fields(make, match):
    with pytest.raises(ValueError, match=match):
        make()


durations = st.one_of(
    st.integers(0, 10**6),
    st.integers(0, 10**6).map(np.int64),
    st.floats(0, 1e6),
    st.floats(1e300, 1.7e308),
    st.floats(0, 1e6).map(np.float32),
    st.integers(10**300, 10**400),
)


@given(st.lists(st.tuples(st.sampled_from(["planning", "execution"]), durations), max_size=8))
def test_planning_tax_is_the_exact_fraction_never_nan(times):
    log = [TimeSpent(k, 0.0, phase, d) for k, (phase, d) in enumerate(times)]
    tax = planning_metrics(log).planning_tax
    total = sum(Fraction(float(d)) if not isinstance(d, int) else Fraction(d) for _, d in times)
    planning = sum(
        (Fraction(float(d)) if not isinstance(d, int) else Fraction(d))
        for phase, d in times
        if phase == "planning"
    )
    if total == 0:
        assert tax.value is None and tax.formatted().startswith("n/a")
    else:
        # The sums are exact and then rounded to floats (kept as ints when whole), so the
        # ratio is within a rounding or two of the exact fraction.
        assert 0.0 <= tax.value <= 1.0
        assert_allclose(tax.value, float(planning / total), rtol=5e-16, atol=0)
