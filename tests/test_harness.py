"""Tests for decompkit.harness: the simulated Manage-Execute-Audit loop (lecture section 3).

Monte Carlo checks use fixed seeds, so every outcome is deterministic, and a bound wide
enough that a correct simulation would pass it for almost any seed: the Wilson interval at
confidence 1 - 1e-6 (normal quantile z = 4.89), or 5 standard errors for a difference of two
estimates. Each such bound is shown to be informative: the same bound rejects a wrong model.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from collections import Counter
from dataclasses import fields
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from decompkit import harness
from decompkit.harness import (
    Auditor,
    Context,
    Correlation,
    Environment,
    Executor,
    Manager,
    Result,
    appended_context_cost,
    batch,
    exact_success,
    fresh_context_cost,
    relevant_share,
    run_loop,
    simulate,
)
from decompkit.markov import montecarlo, success_exact

STRICT = 1 - 1e-6  # confidence of the non-flaky Wilson intervals
Z_STRICT = 4.891638475671084  # its two-sided normal quantile


def outcomes_of_loops(runs, *args, seed, **options):
    """Outcome counts of ``runs`` object-level runs drawn from one generator."""
    rng = np.random.default_rng(seed)
    return Counter(run_loop(*args, seed=rng, **options).outcome for _ in range(runs))


def wilson_strict(successes, runs):
    return montecarlo.wilson(successes, runs, Z_STRICT)


# ---------------------------------------------------------------- the loop is the chain

# (n, p, q, B): middling points, q = 0, q = 1 (binomial tail and near-certain), B = n,
# B < n, n = 1, p = 1, p = 0 and two large horizons.
GRID = [
    (10, 0.9, 0.5, 20),
    (50, 0.95, 0.5, 100),
    (50, 0.95, 0.9, 100),
    (40, 0.9, 0.3, 80),
    (25, 0.95, 0.0, 50),
    (25, 0.8, 1.0, 30),
    (25, 0.95, 1.0, 50),
    (20, 0.9, 0.7, 20),
    (20, 0.9, 0.5, 19),
    (1, 0.6, 0.3, 3),
    (30, 1.0, 0.2, 30),
    (30, 0.0, 0.5, 60),
    (200, 0.99, 0.8, 260),
    (1000, 0.999, 0.5, 2000),
]


@pytest.fixture(scope="module")
def grid_run():
    n, p, q, budget = (np.array(column) for column in zip(*GRID, strict=True))
    sim = simulate(n, p, q, budget, runs=10_000, seed=2024, confidence=STRICT)
    return n, p, q, budget, sim


def test_simulation_agrees_with_the_chain_over_a_grid(grid_run):
    n, p, q, budget, sim = grid_run
    exact = success_exact(n, p, q, budget)
    # Wilson interval at 1 - 1e-6: a correct simulation leaves it with probability about
    # 1e-6 per point (1.4e-5 for the grid) whatever the seed; the seed is fixed.
    assert np.all((sim.low <= exact) & (exact <= sim.high))
    assert np.all(sim.successes + sim.corrupted + sim.out_of_budget == 10_000)
    # The bound is narrow: at most 0.025 either side at 10,000 runs.
    assert np.all(sim.high - sim.low <= 2 * Z_STRICT * 0.5 / 100 + 1e-12)


def test_the_grid_bound_rejects_a_wrong_q(grid_run):
    # Compare with the chain at a wrong detection rate, 0.2 away. Wherever the wrong chain
    # differs from the right one by more than 0.05 (twice the largest half-width), the
    # same interval must reject it. That is 10 of the 14 points; at the other four q
    # cannot matter (B = n, B < n, p = 0, p = 1).
    n, p, q, budget, sim = grid_run
    wrong_q = np.where(q <= 0.8, q + 0.2, q - 0.2)
    wrong = success_exact(n, p, wrong_q, budget)
    matters = np.abs(wrong - success_exact(n, p, q, budget)) > 0.05
    assert matters.sum() == 10
    rejected = (wrong < sim.low) | (wrong > sim.high)
    assert np.array_equal(rejected & matters, matters)


def test_degenerate_grid_points_are_exact(grid_run):
    n, p, q, budget, sim = grid_run
    by_point = dict(zip(GRID, range(len(GRID)), strict=True))
    short = by_point[(20, 0.9, 0.5, 19)]  # B < n: nothing can finish
    assert sim.successes[short] == 0 and sim.out_of_budget[short] == 10_000
    perfect = by_point[(30, 1.0, 0.2, 30)]  # p = 1: every run finishes in n rounds
    assert sim.successes[perfect] == 10_000
    hopeless = by_point[(30, 0.0, 0.5, 60)]  # p = 0: never advances
    assert sim.successes[hopeless] == 0
    for point in (by_point[(25, 0.8, 1.0, 30)], by_point[(25, 0.95, 1.0, 50)]):
        assert sim.corrupted[point] == 0  # q = 1 never corrupts


@pytest.mark.parametrize(("n", "p"), [(10, 0.9), (25, 0.95), (50, 0.95)])
def test_q0_gives_p_to_the_n_whatever_the_budget(n, p):
    # No error is ever caught, so no round is ever burned: a run either finishes in exactly
    # n rounds or is corrupted, and with the same seed the budget changes nothing at all.
    results = [
        simulate(n, p, 0.0, b, runs=10_000, seed=5, confidence=STRICT) for b in (n, 2 * n, 10 * n)
    ]
    assert len({r.successes for r in results}) == 1
    first = results[0]
    assert first.out_of_budget == 0 and first.successes + first.corrupted == 10_000
    assert first.low <= p**n <= first.high
    assert exact_success(n, p, 0.0, [n, 2 * n, 10 * n]).tolist() == [p**n] * 3


@pytest.mark.parametrize(("n", "p", "budget"), [(10, 0.3, 20), (25, 0.8, 30), (50, 0.95, 100)])
def test_q1_never_corrupts_and_gives_the_binomial_tail(n, p, budget):
    sim = simulate(n, p, 1.0, budget, runs=10_000, seed=11, confidence=STRICT)
    assert sim.corrupted == 0
    tail = sum(math.comb(budget, k) * p**k * (1 - p) ** (budget - k) for k in range(n, budget + 1))
    assert sim.low <= tail <= sim.high
    loops = outcomes_of_loops(300, n, p, 1.0, budget, seed=11)
    assert loops["corrupted"] == 0 and sum(loops.values()) == 300


def test_budget_below_n_finishes_nothing():
    sim = simulate([5, 5], 0.9, [0.0, 1.0], 4, runs=100, seed=0)
    assert sim.successes.tolist() == [0, 0] and sim.out_of_budget.tolist() == [100, 100]
    run = run_loop(5, 0.9, 1.0, 4, seed=0)
    assert run.rounds == () and run.outcome == "out of budget"
    assert run_loop(3, 1.0, 0.0, 0, seed=0).outcome == "out of budget"


def test_reproduces_the_lecture_reference_table():
    # Lecture, p = 0.95, B = 2n: success for q in {0, 0.5, 0.9, 1} and n in {10, 25, 50, 100},
    # printed to 3 decimals. The simulated loop's interval at 1 - 1e-6, widened by the
    # printing's 0.0005, must hold every printed cell.
    table = {
        0.0: [0.599, 0.277, 0.077, 0.006],
        0.5: [0.771, 0.522, 0.273, 0.074],
        0.9: [0.949, 0.877, 0.769, 0.592],
        1.0: [1.000, 1.000, 1.000, 1.000],
    }
    ns = np.array([10, 25, 50, 100])
    qs = np.array(list(table))[:, None]
    sim = simulate(ns, 0.95, qs, 2 * ns, runs=10_000, seed=3, confidence=STRICT)
    printed = np.array(list(table.values()))
    assert np.all((sim.low - 0.0005 <= printed) & (printed <= sim.high + 0.0005))
    assert np.all(sim.corrupted[-1] == 0)


def test_q_sweep_at_n50_agrees_within_the_lecture_tolerance():
    # Lecture: 20,000 runs per point over a q sweep at n = 50 agree within 0.0035, the
    # largest standard error of the sweep. Each point is held to 4 of its own standard
    # errors (a correct simulation passes all 21 with probability 0.9987 for any seed; the
    # seed is fixed), and the largest deviation must be inside 4 * 0.0035.
    qs = np.linspace(0, 1, 21)
    exact = success_exact(50, 0.95, qs, 100)
    sim = simulate(50, 0.95, qs, 100, runs=20_000, seed=0)
    se = np.sqrt(exact * (1 - exact) / 20_000)
    assert round(se.max(), 4) == 0.0035
    assert np.all(np.abs(sim.estimate - exact) <= 4 * se + 1e-12)
    assert np.abs(sim.estimate - exact).max() <= 4 * 0.0035


# ---------------------------------------------------------------- (a) and (b) agree

CASES = [
    pytest.param({}, 0.5, id="independent"),
    pytest.param({"correlated": True}, 0.5, id="correlated"),
    pytest.param({"auditor_reads_trace": True, "persuasion": 0.6}, 0.9, id="reads-trace"),
]


@pytest.mark.parametrize(("options", "q"), CASES)
def test_object_loop_agrees_with_vectorised_and_exact(options, q):
    # 3,000 object-level runs, 10,000 vectorised runs, n = 10, p = 0.9, B = 15.
    n, p, budget = 10, 0.9, 15
    exact = exact_success(n, p, q, budget, **options)
    loops = outcomes_of_loops(3000, n, p, q, budget, seed=17, **options)
    sim = simulate(n, p, q, budget, runs=10_000, seed=17, **options)
    low, high = wilson_strict(loops["success"], 3000)
    assert low <= exact <= high
    # Two estimates of the same probability differ by at most 5 standard errors of the
    # difference (probability 6e-7 to fail for a correct pair); the same holds for each
    # outcome kind, with its pooled share.
    for kind, simulated in [
        ("success", sim.successes),
        ("corrupted", sim.corrupted),
        ("out of budget", sim.out_of_budget),
    ]:
        share = (loops[kind] + simulated) / 13_000
        bound = 5 * math.sqrt(share * (1 - share) * (1 / 3000 + 1 / 10_000)) + 1e-12
        assert abs(loops[kind] / 3000 - simulated / 10_000) <= bound
    # Informative: the same interval rejects the model 0.2 away in q.
    wrong = exact_success(n, p, q - 0.2, budget, **options)
    assert not low <= wrong <= high


# ---------------------------------------------------------------- the first caveat


def test_correlation_keeps_the_mean_and_clusters_the_errors():
    for n, p in [(5, 0.95), (10, 0.9), (50, 0.5), (7, 0.3)]:
        first, retry = Correlation(0.2, spread=1.0, retry_penalty=0.25).rates(n, p)
        assert_allclose(first.mean(), p, rtol=1e-12)
        assert_allclose(retry, 0.75 * first, rtol=1e-15)
        k = round(0.2 * n)
        hard = first < p
        assert hard.sum() == k
        # spread = 1: easy subtasks never fail, or hard subtasks never succeed.
        assert np.all(first[~hard] == 1.0) or np.all(first[hard] == 0.0)
    no_hard = Correlation(0.2).rates(2, 0.9)[0]  # round(0.4) = 0: nothing to cluster on
    assert no_hard.tolist() == [0.9, 0.9]
    assert Correlation(spread=0.0, retry_penalty=0.0).rates(10, 0.9)[1].tolist() == [0.9] * 10


def convolution_reference(first, retry, q, budget):
    """Independent reference: convolve each subtask's distribution of rounds to success."""
    total = np.zeros(budget + 1)
    total[0] = 1.0
    k = np.arange(budget + 1)
    for f, r in zip(first, retry, strict=True):
        pmf = np.zeros(budget + 1)
        if budget >= 1:
            pmf[1] = f
        pmf[2:] = (1 - f) * q * ((1 - r) * q) ** (k[2:] - 2.0) * r
        total = np.convolve(total, pmf)[: budget + 1]
    return total.sum()


@pytest.mark.parametrize(
    ("n", "p", "q", "budget", "correlation"),
    [
        (10, 0.9, 0.5, 15, Correlation()),
        (20, 0.8, 0.9, 40, Correlation(0.3, 1.0, 0.0)),
        (7, 0.5, 1.0, 30, Correlation(0.5, 0.4, 0.7)),
        (12, 0.95, 0.0, 12, Correlation(0.1, 1.0, 0.5)),
    ],
)
def test_exact_correlated_equals_a_convolution(n, p, q, budget, correlation):
    first, retry = correlation.rates(n, p)
    expected = convolution_reference(first, retry, q, budget)
    assert_allclose(exact_success(n, p, q, budget, correlated=correlation), expected, rtol=1e-12)


def test_exact_with_no_clustering_is_the_chain():
    flat = Correlation(spread=0.0, retry_penalty=0.0)
    ns, qs = np.array([1, 10, 50]), np.array([[0.0], [0.5], [1.0]])
    assert_allclose(
        exact_success(ns, 0.95, qs, 2 * ns, correlated=flat),
        success_exact(ns, 0.95, qs, 2 * ns),
        rtol=1e-12,
        atol=1e-15,
    )


def test_unlimited_budget_success_is_the_product_and_jensen_holds():
    # With a budget far beyond need, success = prod_j s_j, s_j the chance subtask j is
    # verified before a miss: first try, or a caught failure and then s(retry rate).
    n, p, q = 50, 0.9, 0.6
    correlation = Correlation(0.2, spread=1.0, retry_penalty=0.3)
    first, retry = correlation.rates(n, p)

    def s(rate):
        return rate / (1 - (1 - rate) * q)

    product = np.prod(first + (1 - first) * q * s(retry))
    assert_allclose(exact_success(n, p, q, 5000, correlated=correlation), product, rtol=1e-10)
    assert product < s(p) ** n  # Jensen: clustering loses even with no budget limit
    # Equality case: q = 1 never corrupts, so with ample budget clustering costs nothing...
    assert_allclose(exact_success(n, p, 1.0, 5000, correlated=correlation), 1.0, rtol=1e-12)
    # ...but a tight budget still loses rounds to the hard subtasks (sum 1/p_j >= n/p).
    tight = exact_success(n, p, 1.0, 60, correlated=Correlation(0.2, 1.0, 0.0))
    assert tight < success_exact(n, p, 1.0, 60) - 0.05


@pytest.mark.parametrize(
    "correlation",
    [
        pytest.param(Correlation(0.2, spread=1.0, retry_penalty=0.0), id="hardness"),
        pytest.param(Correlation(0.2, spread=0.0, retry_penalty=0.5), id="retry"),
        pytest.param(Correlation(), id="both"),
    ],
)
def test_clustered_errors_lower_success_as_predicted(correlation):
    # n = 50, p = 0.95, q = 0.5, B = 100: the chain says 0.273 and each clustered model at
    # least 0.05 less (exactly). The clustered loop's 1 - 1e-6 interval (half-width <= 0.025)
    # must hold its own exact value and lie wholly below the chain; for that to fail, the
    # estimate would have to sit over 4 standard errors above its mean.
    n, p, q, budget = 50, 0.95, 0.5, 100
    chain = success_exact(n, p, q, budget)
    exact = exact_success(n, p, q, budget, correlated=correlation)
    assert exact < chain - 0.05
    sim = simulate(n, p, q, budget, runs=10_000, seed=8, correlated=correlation, confidence=STRICT)
    assert sim.low <= exact <= sim.high
    assert sim.high < chain


@given(
    n=st.integers(1, 30),
    p=st.floats(0.01, 1.0),
    q=st.floats(0.0, 1.0),
    extra=st.integers(0, 60),
    hard=st.floats(0.0, 1.0),
    spread=st.floats(0.0, 1.0),
    penalty=st.floats(0.0, 1.0),
)
def test_clustering_never_raises_exact_success(n, p, q, extra, hard, spread, penalty):
    # Proven for an unlimited budget (Jensen) and for the retry penalty (monotone); for a
    # finite budget with hardness it is the argument about means, checked here.
    correlation = Correlation(hard, spread, penalty)
    clustered = exact_success(n, p, q, n + extra, correlated=correlation)
    assert clustered <= success_exact(n, p, q, n + extra) + 1e-12


# ---------------------------------------------------------------- the second caveat


def test_trace_reading_auditor_falls_toward_no_audit():
    n, p, q, budget = 50, 0.95, 0.9, 100
    chain = success_exact(n, p, q, budget)  # 0.769
    persuasions = [0.0, 0.5, 0.9, 1.0]
    exact = exact_success(n, p, q, budget, auditor_reads_trace=True, persuasion=persuasions)
    assert exact[0] == chain and np.all(np.diff(exact) < 0) and exact[-1] == p**n
    sim = simulate(
        n, p, q, budget, runs=10_000, seed=21, auditor_reads_trace=True, confidence=STRICT
    )
    assert sim.low <= success_exact(n, p, q * (1 - 0.9), budget) <= sim.high
    assert sim.high < chain - 0.5  # the default persuasion 0.9 leaves little of the audit


def test_fully_persuaded_auditor_is_no_audit():
    n, p, q, budget = 25, 0.95, 0.9, 50
    sim = simulate(
        n,
        p,
        q,
        budget,
        runs=10_000,
        seed=4,
        auditor_reads_trace=True,
        persuasion=1.0,
        confidence=STRICT,
    )
    assert sim.low <= success_exact(n, p, 0.0, budget) <= sim.high
    # q (1 - 1) is exactly 0: the very same draws as the q = 0 loop.
    assert sim == simulate(n, p, 0.0, budget, runs=10_000, seed=4, confidence=STRICT)
    assert not sim.low <= success_exact(n, p, 0.2, budget) <= sim.high  # informative


# ---------------------------------------------------------------- the object-level loop


@given(
    n=st.integers(1, 8),
    p=st.floats(0.0, 1.0),
    q=st.floats(0.0, 1.0),
    budget=st.integers(0, 20),
    seed=st.integers(0, 2**32),
    correlated=st.booleans(),
    reads=st.booleans(),
)
def test_trace_invariants(n, p, q, budget, seed, correlated, reads):
    run = run_loop(n, p, q, budget, seed=seed, correlated=correlated, auditor_reads_trace=reads)
    state, grounded, attempts = (), True, Counter()
    for t, r in enumerate(run.rounds, start=1):
        assert r.round == t and t <= budget
        # The manager always hands out the next open subtask.
        assert r.subtask == len(state) + 1
        attempts[r.subtask] += 1
        assert r.attempt == attempts[r.subtask]
        if r.executor_correct:
            assert r.accepted  # the auditor never rejects a correct result
        # Only an accepted result enters the state, and nothing else does.
        state = (*state, r.subtask) if r.accepted else state
        assert r.state_after == state
        grounded = grounded and not (r.accepted and not r.executor_correct)
        assert r.grounded == grounded
        assert r.verdict == ("accepted" if r.accepted else "rejected")
    # The manager stops when its state is full or the open subtasks outnumber the rounds left.
    assert len(state) == n or n - len(state) > budget - len(run.rounds)
    expected = "corrupted" if not grounded else ("success" if len(state) == n else "out of budget")
    assert run.outcome == expected and run.success == (expected == "success")
    assert run.manager_believes_done == (len(state) == n)


def test_a_corrupted_run_can_look_done_to_the_manager():
    # q = 0, p = 0.5: the first wrong result slips in; the manager carries on to n.
    run = run_loop(6, 0.5, 0.0, 6, seed=2)
    assert run.outcome == "corrupted" and run.manager_believes_done and not run.success
    assert "outcome: corrupted after 6 rounds (the manager believes it is done)" in run.to_text()
    assert not run.rounds[-1].grounded


def test_to_text_shows_every_round():
    run = run_loop(6, 0.7, 0.5, 12, seed=3)
    lines = run.to_text().splitlines()
    assert lines[0].split() == [
        "round",
        "subtask",
        "attempt",
        "executor",
        "auditor",
        "verified",
        "grounded",
    ]
    assert len(lines) == len(run.rounds) + 2
    for line, r in zip(lines[1:-1], run.rounds, strict=True):
        cells = line.split()
        assert cells[:3] == [str(r.round), str(r.subtask), str(r.attempt)]
        assert cells[4] == r.verdict and cells[5] == f"{len(r.state_after)}/6"


def test_executor_sees_only_the_subtask_and_the_verified_facts():
    assert [f.name for f in fields(Context)] == ["subtask", "facts"]
    env = Environment([1.0, 1.0], [1.0, 1.0])
    result = Executor().work(Context(2, (1,)), env, np.random.default_rng(0))
    assert result == Result(2, "Subtask 2 is done, building on 1 facts.", False)
    assert dict(env.view) == {2: True}


def test_auditor_reads_the_environment_read_only():
    env = Environment([0.0], [0.0])
    rng = np.random.default_rng(0)
    result = Executor(persuasion=1.0).work(Context(1, ()), env, rng)
    assert isinstance(env.view, MappingProxyType)
    with pytest.raises(TypeError):
        env.view[1] = True  # the view cannot be written through
    before = dict(env.view)
    assert not Auditor(1.0).accepts(result, env.view, rng)  # sees the wrong result
    assert dict(env.view) == before == {1: False}
    # Reading the narration, it sees a claim of success and nothing to catch.
    assert Auditor(1.0, reads_trace=True).accepts(result, env.view, rng)
    # A narration that betrays the slip is caught.
    betrayed = Result(1, result.narration, slip_visible=True)
    assert not Auditor(1.0, reads_trace=True).accepts(betrayed, env.view, rng)


def test_environment_applies_the_retry_rate_and_manager_keeps_verified_facts():
    env = Environment([0.9, 0.8], [0.3, 0.2])
    assert env.accuracy(1) == 0.9
    env.apply(1, False)
    assert env.accuracy(1) == 0.3 and env.accuracy(2) == 0.8
    manager = Manager(2)
    manager.record(1, accepted=False)
    assert manager.state == () and manager.next_subtask() == 1
    manager.record(1, accepted=True)
    assert manager.state == (1,) and manager.next_subtask() == 2


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Auditor(q=float("nan")), r"^q must be in \[0, 1\], got nan$"),
        (lambda: Auditor(q=1.5), r"^q must be in \[0, 1\], got 1\.5$"),
        (lambda: Auditor(q=[0.5, 0.9]), r"^q must be a single number"),
        (
            lambda: Auditor(0.5, reads_trace="yes"),
            r"^reads_trace must be True or False, got 'yes'$",
        ),
        (lambda: Executor(persuasion="abc"), r"^persuasion must be a number .*, got 'abc'$"),
        (lambda: Executor(persuasion=-0.1), r"^persuasion must be in \[0, 1\], got -0\.1$"),
        (lambda: Manager(n=-1), r"^n must be an integer >= 0, got -1$"),
        (lambda: Manager(n=2.5), r"^n must be an integer >= 0, got 2\.5$"),
        (lambda: Manager(n="3"), r"^n must be an integer >= 0, got '3'$"),
    ],
)
def test_actors_refuse_bad_arguments(make, match):
    # Auditor(q=nan), Executor(persuasion="abc") and Manager(n=-1) were accepted.
    with pytest.raises(ValueError, match=match):
        make()


def test_actors_keep_their_arguments_as_plain_values():
    auditor, executor, manager = Auditor(np.float64(0.5), np.bool_(True)), Executor(1), Manager(3.0)
    assert (type(auditor.q), auditor.q, auditor.reads_trace) == (float, 0.5, True)
    assert (type(executor.persuasion), executor.persuasion) == (float, 1.0)
    assert (type(manager.n), manager.n) == (int, 3)


def test_reproducible_and_generator_is_advanced():
    a = simulate(30, 0.9, 0.7, 60, runs=2000, seed=123)
    assert a == simulate(30, 0.9, 0.7, 60, runs=2000, seed=123)
    rng = np.random.default_rng(9)
    b = simulate(30, 0.9, 0.7, 60, runs=2000, seed=rng)
    assert b == simulate(30, 0.9, 0.7, 60, runs=2000, seed=np.random.default_rng(9))
    assert simulate(30, 0.9, 0.7, 60, runs=2000, seed=rng) != b
    assert run_loop(8, 0.8, 0.5, 16, seed=4) == run_loop(8, 0.8, 0.5, 16, seed=4)


def test_simulate_broadcasts_and_returns_python_numbers_for_scalars():
    one = simulate(10, 0.9, 0.5, 20, runs=100, seed=0)
    assert type(one.estimate) is float and type(one.successes) is int
    assert one.estimate == one.successes / 100 and one.confidence == 0.95
    grid = simulate([10, 20], 0.9, [[0.0], [0.5], [1.0]], [20, 40], runs=100, seed=0)
    assert grid.estimate.shape == grid.low.shape == grid.corrupted.shape == (3, 2)


def test_interval_at_95_percent_is_markovs_wilson():
    sim = simulate(10, 0.9, 0.5, 15, runs=300, seed=3)
    low, high = montecarlo.wilson(sim.successes, 300)
    assert_allclose([sim.low, sim.high], [low, high], rtol=1e-14)
    assert sim.low < sim.estimate < sim.high


# ---------------------------------------------------------------- context growth


def test_appended_cost_is_the_sum_in_floats():
    # Whole inputs give the sum exactly while three times it stays below 2**53: the
    # lecture's numbers (T, a, L0) = (100, 500, 2000) and every student's (T <= 200,
    # a <= 1000, L0 <= 4000, so at most about 3e12).
    cases = [(0, 5, 7), (1, 5, 7), (3, 10, 100), (37, 13, 1000), (100, 500, 2000),
             (200, 1000, 4000)]  # fmt: skip
    for T, a, L0 in cases:
        expected = sum((L0 + a * t) ** 2 for t in range(T))
        cost = appended_context_cost(T, a, L0)
        assert type(cost) is float and cost == expected
    costs = appended_context_cost(np.arange(6), 2, 1)
    assert costs.dtype == np.float64
    assert costs.tolist() == [sum((1 + 2 * t) ** 2 for t in range(T)) for T in range(6)]
    assert_allclose(
        appended_context_cost(4, 0.5, 1.5), sum((1.5 + 0.5 * t) ** 2 for t in range(4)), rtol=1e-15
    )


def test_appended_cost_beyond_2_53_is_the_closed_form_to_rounding():
    T, a, L0 = 10**7, 10**4, 3
    exact = sum(  # closed form in Python integers, checked against the brute-force sum above
        [T * L0**2, a * L0 * T * (T - 1), a**2 * ((T - 1) * T * (2 * T - 1) // 6)]
    )
    assert_allclose(appended_context_cost(T, a, L0), float(exact), rtol=4 * np.finfo(float).eps)


def test_fresh_cost_and_share():
    assert fresh_context_cost(10, 4000) == 160_000_000
    assert type(fresh_context_cost(10, 4000)) is float
    assert fresh_context_cost(np.arange(4), 3).tolist() == [0, 9, 18, 27]
    assert fresh_context_cost(2, 0.5) == 0.5
    assert type(fresh_context_cost(2, 0.5)) is float
    assert relevant_share(0, 500, 100, 1000) == 0.5
    assert_allclose(relevant_share([0, 10, 90], 500, 100, 1000), [0.5, 0.25, 0.05], rtol=1e-15)
    assert relevant_share(10**6, 500, 0, 1000) == 0.5  # nothing appended: share stays


def test_theta_orders_of_context_growth():
    # Lecture: appended cost Theta(a^2 T^3), fresh Theta(L*^2 T), share Theta(1/t).
    a, L0 = 500, 2000
    T = np.array([10, 100, 1000, 10_000, 100_000])
    ratio = appended_context_cost(2 * T, a, L0) / appended_context_cost(T, a, L0)
    assert np.all(np.diff(ratio) > 0) and abs(ratio[-1] - 8) < 1e-3  # rises toward 8
    # cost = a^2 T^3 / 3 + (a L0 - a^2 / 2) T^2 + O(T), so the relative excess over the
    # leading term is (3 L0 / a - 3/2) / T + O(1/T^2) = 10.5 / T here.
    big = T[2:].astype(float)
    excess = appended_context_cost(T[2:], a, L0) / (a**2 * big**3 / 3) - 1
    assert_allclose(big * excess, 10.5, rtol=2e-2)
    fresh = fresh_context_cost(2 * T, 4000) / fresh_context_cost(T, 4000)
    assert np.all(fresh == 2)
    # t * m / (L0 + a t) = (m / a) / (1 + L0 / (a t)): within 1e-4 of m / a from t = 1e5.
    t = np.array([10**5, 10**6, 10**7])
    assert_allclose(t * relevant_share(t, 500, 100, 1000), 500 / 100, rtol=1e-4)


# ---------------------------------------------------------------- huge counts and overflow
# Counts as floats >= 2**63 used to wrap to -2**63: fresh_context_cost(1e19, 1) was a
# negative cost. Costs beyond the float range were a bare OverflowError, and T = 0 with a
# huge a gave NaN.

HUGE = [1e19, 2.0**63, 2**63, 10**30, 1e300, np.float64(1e19)]


@pytest.mark.parametrize("T", HUGE)
def test_costs_of_huge_round_counts(T):
    assert fresh_context_cost(T, 1) == float(T)
    assert fresh_context_cost(T, 0) == 0.0
    if float(T) < 1e100:  # a^2 T^3 / 3 stays within the float range
        assert_allclose(appended_context_cost(T, 1, 0), float(T) ** 3 / 3, rtol=1e-12)
    else:
        with pytest.raises(ValueError, match=r"appended_context_cost is beyond the float range"):
            appended_context_cost(T, 1, 0)
    assert relevant_share(T, 500, 100, 1000) == pytest.approx(500 / (1000 + 100 * float(T)))


def test_zero_or_one_round_costs_what_it_reads():
    assert appended_context_cost(0, 1e200, 0.5) == 0.0  # was NaN (0 * inf)
    assert appended_context_cost(1, 1e200, 0.5) == 0.25  # only L0 is read
    assert appended_context_cost([0, 1], 1e300, 1e154).tolist() == [0.0, 1e154**2]
    assert fresh_context_cost(0, 1e200) == 0


@pytest.mark.parametrize(
    ("call", "where"),
    [
        (lambda: appended_context_cost(10, 1e300, 0), "T=10, a=1e+300, L0=0"),
        (lambda: appended_context_cost(10, 1e300, 0.5), "T=10, a=1e+300, L0=0.5"),
        (lambda: appended_context_cost(1e10, 1e-20, 1e300), "T=10000000000, a=1e-20, L0=1e+300"),
        (lambda: fresh_context_cost(2, 1e200), "T=2, L_star=1e+200"),
        (lambda: fresh_context_cost([1, 2], 1.5e154), "T=1, L_star=1.5e+154"),
        (lambda: fresh_context_cost(1e300, 1e10), "T=1e+300, L_star=10000000000"),
        # Whole numbers are no exception: their cost is a float too, refused past the range.
        (lambda: appended_context_cost(10**103, 1, 0), "T=1e+103, a=1, L0=0"),
        (
            lambda: appended_context_cost([3, 2**40], 2**470, 0),
            "T=1099511627776, a=3.048582568667961e+141, L0=0",
        ),
        (lambda: fresh_context_cost(2, 10**154), "T=2, L_star=1e+154"),
    ],
)
def test_costs_beyond_the_float_range_are_refused(call, where):
    with pytest.raises(
        ValueError, match=rf"beyond the float range \(about 1\.8e308\) at {re.escape(where)}$"
    ):
        call()


def test_factors_far_apart_are_paired_so_that_no_partial_product_overflows():
    # T L0^2, a L0 T^2 and a^2 T^3 / 3 are all finite, while T^2 and T^3 are not.
    T, a, L0 = 1e160, 1e-200, 1e-10
    expected = T * L0**2 + a * L0 * T * (T - 1) + a**2 * (T - 1) * T * (2 * T - 1) / 6
    assert_allclose(appended_context_cost(T, a, L0), expected, rtol=1e-12)


costs_T = st.one_of(
    st.integers(0, 10**6),
    st.integers(0, 10**6).map(np.int64),
    st.integers(0, 10**6).map(np.uint32),
    st.integers(2**53, 2**70),
    st.floats(0, 1e200).map(math.floor),
)
tokens = st.one_of(
    st.integers(0, 10**4),
    st.integers(0, 10**4).map(np.int64),
    st.floats(0, 1e4),
    st.floats(0, 1e200),
    st.floats(0, 1e200).map(np.float64),
)


def log_appended_cost(T, a, L0):
    """log of T L0^2 + a L0 T(T-1) + a^2 (T-1) T (2T-1) / 6, from logs of the factors."""

    def lg(x):
        return math.log(x) if x > 0 else -math.inf

    terms = [lg(T) + 2 * lg(L0)]
    if T > 1:
        terms += [lg(a) + lg(L0) + lg(T) + lg(T - 1),
                  2 * lg(a) + lg(T - 1) + lg(T) + lg(2 * T - 1) - math.log(6)]  # fmt: skip
    top = max(terms)
    return top if top == -math.inf else top + math.log(sum(math.exp(t - top) for t in terms))


LOG_FLOAT_MAX = math.log(np.finfo(float).max)


@given(T=costs_T, a=tokens, L0=tokens)
def test_appended_cost_is_its_closed_form_or_refused(T, a, L0):
    log_cost = log_appended_cost(float(T), float(a), float(L0))
    try:
        cost = appended_context_cost(T, a, L0)
    except ValueError as error:
        # Refused past the float range, or within the factor 3 by which the partial product
        # a^2 T (T-1)(T-1/2) of the last term exceeds the term (see the Notes).
        assert "beyond the float range" in str(error)
        assert log_cost > LOG_FLOAT_MAX - math.log(3) - 1e-9
        return
    assert log_cost < LOG_FLOAT_MAX + 1e-9 and type(cost) is float and cost >= 0
    expected = math.exp(log_cost) if log_cost > -math.inf else 0.0
    assert_allclose(cost, expected, rtol=1e-9, atol=1e-300)
    if float(T) < 2**52 and float(a).is_integer() and float(L0).is_integer():
        Ti, ai, Li = int(T), int(a), int(L0)
        exact = Ti * Li**2 + ai * Li * Ti * (Ti - 1) + ai**2 * ((Ti - 1) * Ti * (2 * Ti - 1) // 6)
        if 3 * exact < 2**53:  # every partial product is a whole number below 2**53
            assert cost == exact


@given(T1=costs_T, T2=costs_T, L=tokens)
def test_fresh_cost_grows_with_rounds(T1, T2, L):
    lo, hi = sorted((T1, T2), key=float)
    try:
        high = fresh_context_cost(hi, L)
    except ValueError as error:
        log_cost = math.log(float(hi)) + 2 * math.log(float(L))
        assert "beyond the float range" in str(error) and log_cost > math.log(1.79e308)
        return
    assert fresh_context_cost(lo, L) <= high


@pytest.mark.parametrize("budget", HUGE)
def test_huge_budgets_give_the_chains_limit(budget):
    limit = success_exact(10, 0.9, 0.5, budget)
    assert limit == pytest.approx(0.5823566532299396, rel=1e-14)
    assert exact_success(10, 0.9, 0.5, budget) == limit
    sim = simulate(10, 0.9, 0.5, budget, runs=4000, seed=3)
    assert sim.low <= limit <= sim.high and sim.out_of_budget == 0
    run = run_loop(10, 0.9, 0.5, budget, seed=0)
    assert run.budget == int(float(budget)) and run.outcome in {"success", "corrupted"}
    clustered = exact_success(10, 0.9, 0.5, budget, correlated=True)
    assert clustered == pytest.approx(exact_success(10, 0.9, 0.5, 10**4, correlated=True))


# ---------------------------------------------------------------- runs that can never advance
# simulate(1, 0.0, 1.0, 10**6, runs=1) used to step all 10**6 rounds (16 s): runs with
# p = 0 were not retired.


def test_p0_runs_are_settled_with_one_uniform_each():
    rng = np.random.default_rng(4)
    sim = simulate(1, 0.0, 1.0, 10**15, runs=7, seed=rng)
    assert (sim.successes, sim.corrupted, sim.out_of_budget) == (0, 0, 7)  # q = 1: never lost
    reference = np.random.default_rng(4)
    reference.random(7)
    assert rng.random() == reference.random()
    assert simulate(3, 0.0, 0.5, 1e19, runs=50, seed=0).corrupted == 50


@pytest.mark.parametrize(("n", "q", "budget"), [(1, 0.9, 10), (3, 0.97, 40), (2, 0.5, 2)])
def test_p0_outcomes_have_the_stepped_distribution(n, q, budget):
    # Stepped round by round, the run is corrupted unless all budget - n + 1 rounds it plays
    # are caught: probability 1 - q^(budget - n + 1). 20,000 runs, checked with the strict
    # interval (confidence 1 - 1e-6), and against the object-level loop's frequencies (1000
    # runs: a cross-check of the same process, not a second measurement of the formula).
    sim = simulate(n, 0.0, q, budget, runs=20_000, seed=5)
    low, high = wilson_strict(sim.corrupted, 20_000)
    assert low <= 1 - q ** (budget - n + 1) <= high
    loops = outcomes_of_loops(1000, n, 0.0, q, budget, seed=6)
    low, high = wilson_strict(loops["corrupted"], 1000)
    assert low <= sim.corrupted / 20_000 <= high


STUCK = [
    Correlation(hard_fraction=0.5, spread=1.0, retry_penalty=0.5),  # p = 0.4: hard rate 0
    Correlation(hard_fraction=0.0, spread=0.0, retry_penalty=1.0),  # every retry fails
]


@pytest.mark.parametrize("correlation", STUCK)
@pytest.mark.parametrize("q", [1.0, 0.8])
def test_clustered_runs_that_can_never_advance_are_settled_at_once(correlation, q):
    n, p = 4, 0.4
    first, retry = correlation.rates(n, p)
    assert (first == 0).any() or (retry == 0).any()
    # A huge budget: without settling, every stuck run would be stepped to its end.
    big = simulate(n, p, q, 10**12, runs=2000, seed=1, correlated=correlation)
    assert big.successes + big.corrupted + big.out_of_budget == 2000
    # A small budget: the vectorised outcomes agree with the object-level loop's.
    sim = simulate(n, p, q, 12, runs=20_000, seed=2, correlated=correlation)
    loops = outcomes_of_loops(1500, n, p, q, 12, seed=3, correlated=correlation)
    for outcome, count in [("success", sim.successes), ("corrupted", sim.corrupted),
                           ("out of budget", sim.out_of_budget)]:  # fmt: skip
        low, high = wilson_strict(loops[outcome], 1500)
        assert low <= count / 20_000 <= high, outcome
    exact = exact_success(n, p, q, 10**12, correlated=correlation)
    assert exact == pytest.approx(exact_success(n, p, q, 10**4, correlated=correlation))
    assert big.low <= exact <= big.high


# ---------------------------------------------------------------- size and work limits


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: Correlation(0.5).rates(10**9, 0.9),
         r"n must be an integer <= 1000000 \(one first-attempt and one retry rate per subtask\)"),
        (lambda: simulate(3, 0.5, 0.5, 6, runs=10**12),
         r"runs must be an integer <= 10000000 \(simulated runs per call\), got 10{12}"),
        (lambda: simulate(3, 0.5, np.linspace(0, 1, 21), 6, runs=10**6),
         r"runs must be an integer <= 476190 for 21 points"),
        (lambda: simulate(np.full(20, 10**5), 0.9, 0.5, 10**6, runs=10, correlated=True),
         r"points times n must be <= 1,000,000 with clustered errors .* 20 points and n up to"),
        (lambda: simulate(3, 1e-9, 1.0, 1e19, runs=10),
         r"runs at n=3, p=1e-09, q=1.0, budget=1e\+19 live about 3e\+09 rounds on average"),
        (lambda: simulate(3, 1e-9, 1.0, 1e19, runs=10, correlated=Correlation(spread=0.0)),
         r"runs at n=3, .* live about 6e\+09 rounds on average"),
        (lambda: run_loop(10**7, 0.9, 0.5, 10**8), r"n must be an integer <= 1000000"),
        (lambda: run_loop(1, 0.0, 1.0, 10**6), r"run_loop records every round .* about 1e\+06"),
        (lambda: run_loop(10**5, 0.99, 0.5, 2 * 10**5), r"n times those rounds at most"),
    ],
)  # fmt: skip
def test_work_beyond_the_limits_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_long_runs_that_corrupt_early_are_simulated():
    # 10**6 subtasks would take 10**6 rounds, but at q = 0.5 a run lives about 40 rounds.
    sim = simulate(10**6, 0.95, 0.5, 3 * 10**6, runs=10, seed=0)
    assert sim.corrupted == 10


def test_exact_correlated_with_dead_mass_settles():
    # The hard subtasks can never be passed: success is 0 and the sum says so at once
    # instead of walking 2**20 rounds of mass that can never advance.
    assert exact_success(4, 0.4, 1.0, 10**9, correlated=STUCK[0]) == 0.0


# ---------------------------------------------------------------- no subtasks
# markov takes n = 0 (success_exact gives 1, success_monte_carlo counts every trial a
# success without a draw); the loop functions refused it.


@pytest.mark.parametrize(
    "options", [{}, {"correlated": True}, {"auditor_reads_trace": True, "persuasion": 1.0}]
)
def test_no_subtasks_is_success_with_certainty_as_in_the_chain(options):
    assert success_exact(0, 0.3, 0.2, 0) == 1.0
    assert exact_success(0, 0.3, 0.2, 0, **options) == 1.0
    assert exact_success([0, 2], 0.3, 0.2, [0, 1], **options).tolist() == [1.0, 0.0]
    rng = np.random.default_rng(1)
    sim = simulate(0, 0.3, 0.2, 0, runs=50, seed=rng, **options)
    assert (sim.estimate, sim.successes, sim.corrupted, sim.out_of_budget) == (1.0, 50, 0, 0)
    assert rng.random() == np.random.default_rng(1).random()  # no draw was needed
    mixed = simulate([0, 3, 0], 0.0, 1.0, 5, runs=40, seed=0, **options)
    assert mixed.successes.tolist() == [40, 0, 40]  # p = 0: the middle point cannot succeed
    run = run_loop(0, 0.3, 0.2, 0, seed=0, **options)
    assert (run.outcome, run.rounds, run.manager_believes_done) == ("success", (), True)
    assert run.to_text().endswith(
        "outcome: success after 0 rounds (the manager believes it is done)"
    )


# ---------------------------------------------------------------- bad input

LOOP_ERRORS = [
    ({"p": 1.2}, r"p must be in \[0, 1\], got 1\.2"),
    ({"p": -0.1}, r"p must be in \[0, 1\], got -0\.1"),
    ({"q": float("nan")}, r"q must be in \[0, 1\], got nan"),
    ({"q": 2}, r"q must be in \[0, 1\], got 2"),
    ({"n": -1}, r"n must be an integer >= 0, got -1"),
    ({"n": 2.5}, r"n must be an integer >= 0, got 2\.5"),
    ({"n": "ten"}, r"n must be a number or an array of numbers, got 'ten'"),
    ({"budget": -1}, r"budget must be an integer >= 0, got -1"),
    ({"budget": 3.5}, r"budget must be an integer >= 0, got 3\.5"),
    ({"persuasion": 1.5}, r"persuasion must be in \[0, 1\], got 1\.5"),
    ({"auditor_reads_trace": "yes"}, r"auditor_reads_trace must be True or False, got 'yes'"),
    ({"correlated": 0.5}, r"correlated must be None, True, False or a Correlation, got 0\.5"),
    ({"seed": -3}, r"seed must be None, an integer >= 0 or a numpy.random.Generator, got -3"),
]


def call_with(func, **changes):
    args = {"n": 5, "p": 0.9, "q": 0.5, "budget": 10}
    args.update(changes)
    return func(args.pop("n"), args.pop("p"), args.pop("q"), args.pop("budget"), **args)


@pytest.mark.parametrize(
    ("func", "bad", "message"),
    [
        (func, bad, message)
        for func in (run_loop, simulate, exact_success)
        for bad, message in LOOP_ERRORS
        if not (func is exact_success and "seed" in bad)  # exact_success takes no seed
    ],
)
def test_loop_functions_reject_bad_input(func, bad, message):
    with pytest.raises(ValueError, match=message):
        call_with(func, **bad)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"runs": 0}, r"runs must be an integer >= 1, got 0"),
        ({"runs": 2.5}, r"runs must be an integer >= 1, got 2\.5"),
        ({"confidence": 1.0}, r"confidence must be a number in \(0, 1\), got 1\.0"),
        ({"confidence": 0}, r"confidence must be a number in \(0, 1\), got 0"),
        ({"p": [0.5, 0.9, 1.2]}, r"p must be in \[0, 1\], got 1\.2"),
        ({"n": [2, 3], "q": [0.1, 0.2, 0.3]}, r"arguments cannot be broadcast together"),
    ],
)
def test_simulate_rejects_bad_runs_confidence_and_shapes(kwargs, message):
    with pytest.raises(ValueError, match=message):
        call_with(simulate, **kwargs)


def test_run_loop_takes_single_numbers_only():
    with pytest.raises(
        ValueError, match=r"p must be a single number, got an array of shape \(2,\)"
    ):
        run_loop(5, [0.9, 0.8], 0.5, 10)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"hard_fraction": 1.5}, r"hard_fraction must be in \[0, 1\], got 1\.5"),
        ({"spread": -0.2}, r"spread must be in \[0, 1\], got -0\.2"),
        ({"retry_penalty": "high"}, r"retry_penalty must be a number .*got 'high'"),
        ({"spread": [0.1, 0.2]}, r"spread must be a single number"),
    ],
)
def test_correlation_rejects_bad_fields(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Correlation(**kwargs)


def test_exact_correlated_refuses_an_endless_sum(monkeypatch):
    # p tiny and every error caught: the mass never settles within the walk's limit (2**20
    # rounds; lowered here to keep the test fast).
    monkeypatch.setattr(batch, "_MAX_ROUNDS", 1024)
    with pytest.raises(ValueError, match=r"needs more than 1024 rounds to settle at n=2"):
        exact_success(2, 1e-9, 1.0, 10**7, correlated=Correlation(spread=0.0))
    # Below the limit the same point is summed.
    assert 0 < exact_success(2, 1e-9, 1.0, 1000, correlated=Correlation(spread=0.0)) < 1e-9


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: appended_context_cost(-1, 1, 1), r"T must be an integer >= 0, got -1"),
        (lambda: appended_context_cost(1.5, 1, 1), r"T must be an integer >= 0, got 1\.5"),
        (lambda: appended_context_cost(3, -2, 1), r"a must be a finite number >= 0, got -2"),
        (lambda: appended_context_cost(3, 1, np.inf), r"L0 must be a finite number >= 0, got inf"),
        (lambda: appended_context_cost(3, True, 1), r"a must be a number, got True"),
        (lambda: fresh_context_cost(3, [1, -4]), r"L_star must be a finite number >= 0, got -4"),
        (lambda: fresh_context_cost([1, 2], [1, 2, 3]), r"arguments cannot be broadcast"),
        (lambda: relevant_share(1, 10, 1, 0), r"L0 must be > 0 .*got 0\.0"),
        (
            lambda: relevant_share(1, 3000, 1, 2000),
            r"m must be <= L0 .*got m=3000\.0 and L0=2000\.0",
        ),
        (lambda: relevant_share(-1, 1, 1, 2), r"t must be an integer >= 0, got -1"),
        (
            lambda: relevant_share(1, "x", 1, 2),
            r"m must be a number or an array of numbers, got 'x'",
        ),
    ],
)
def test_context_functions_reject_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---------------------------------------------------------------- the benchmark script


def test_bench_quick_mode_runs():
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [sys.executable, str(root / "bench" / "bench_harness.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(root / "src"), "PATH": ""},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("ratio") == 2


def test_all_is_exported():
    for name in harness.__all__:
        assert hasattr(harness, name)


# ---------------------------------------------------------------- size limits, generated


@given(n=st.one_of(st.integers(10**6 + 1, 2**70), st.floats(1.5e6, 1e300).map(math.floor)))
def test_subtask_limit_holds_for_every_n(n):
    with pytest.raises(ValueError, match=r"n must be an integer <= 1000000"):
        Correlation().rates(n, 0.9)
    with pytest.raises(ValueError, match=r"n must be an integer <= 1000000"):
        run_loop(n, 0.9, 0.5, 10)


@given(points=st.integers(1, 50), runs=st.integers(1, 2**40))
def test_simulate_refuses_exactly_the_calls_beyond_its_run_limit(points, runs):
    assume(runs * points > batch.MAX_RUNS)  # within it, a run would only cost time
    with pytest.raises(ValueError, match=r"runs must be an integer <= \d+"):
        simulate(3, 0.5, np.linspace(0.0, 1.0, points), 6, runs=runs)


@given(
    runs=st.one_of(st.integers(1, 200), st.integers(1, 200).map(np.int64)),
    budget=st.one_of(st.integers(0, 30), st.integers(2**63, 2**80), st.just(1e300)),
    p=st.one_of(st.floats(0, 1), st.floats(0, 1).map(np.float64)),
)
def test_every_run_gets_exactly_one_outcome(runs, budget, p):
    try:
        sim = simulate(4, p, 0.7, budget, runs=runs, seed=0)
    except ValueError as error:  # a tiny p over a huge budget: too many rounds to step
        assert "rounds on average" in str(error) and float(budget) > 10**6
        return
    assert sim.successes + sim.corrupted + sim.out_of_budget == runs
