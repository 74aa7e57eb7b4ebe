"""decompkit.traces: pass^k against its definition, the fits against a plain likelihood
search, bad input, and the shipped data against the counts its README states."""

from __future__ import annotations

import itertools
import math
import re
from importlib import resources

import numpy as np
import pytest
from numpy.testing import assert_allclose

from decompkit.traces import (
    bootstrap_fit,
    by_task,
    estimators,
    fit_chain,
    mixture_pass_k,
    pass_hat_k,
    records,
)

# -- pass^k ---------------------------------------------------------------------------------


def _random_outcomes(rng, tasks=12):
    return [rng.random(int(rng.integers(4, 9))) < rng.random() for _ in range(tasks)]


def _enumerated(outcomes, k):
    """tau-bench's definition, by brute force: for each task, the share of all k-subsets of
    its trials in which every trial succeeded, averaged over tasks."""
    shares = []
    for task in outcomes:
        subsets = list(itertools.combinations(task, k))
        shares.append(sum(all(s) for s in subsets) / len(subsets))
    return sum(shares) / len(shares)


@pytest.mark.parametrize("seed", range(20))
def test_pass_hat_k_is_the_share_of_all_successful_k_subsets(seed):
    rng = np.random.default_rng(seed)
    outcomes = _random_outcomes(rng)
    for k in range(1, 5):
        assert_allclose(pass_hat_k(outcomes, k), _enumerated(outcomes, k), rtol=1e-12)


def test_pass_hat_k_matches_the_combinatorial_formula_and_broadcasts():
    rng = np.random.default_rng(7)
    outcomes = _random_outcomes(rng, 30)
    c = [int(np.sum(o)) for o in outcomes]
    n = [len(o) for o in outcomes]
    by_formula = [
        np.mean([math.comb(ci, k) / math.comb(ni, k) for ci, ni in zip(c, n, strict=True)])
        for k in (1, 2, 3, 4)
    ]
    assert_allclose(pass_hat_k(outcomes, [1, 2, 3, 4]), by_formula, rtol=1e-12)
    assert pass_hat_k(outcomes, np.array([[1, 2]])).shape == (1, 2)
    assert isinstance(pass_hat_k(outcomes, 2), float)


def test_pass_hat_k_is_unbiased_for_the_mean_of_p_to_the_k():
    """With rates p_i known, the estimate averaged over many simulated records is E[p_i^k]."""
    rng = np.random.default_rng(3)
    rates = rng.random(40)
    estimates = [pass_hat_k(rng.random((40, 4)) < rates[:, None], 3) for _ in range(1000)]
    # One record's estimate spreads by less than 0.05, so the mean of 1000 has a standard
    # error below 0.0016: 0.006 is nearly four of them.
    assert np.std(estimates) < 0.05
    assert abs(np.mean(estimates) - np.mean(rates**3)) < 0.006


@pytest.mark.parametrize("outcomes", [[[1, 1, 1]], [[0, 0]], [[True]]])
def test_pass_hat_k_edge_cases(outcomes):
    expected = float(np.all(outcomes[0]))
    assert pass_hat_k(outcomes, 1) == expected == pass_hat_k(outcomes, len(outcomes[0]))


@pytest.mark.parametrize(
    ("outcomes", "k", "match"),
    [
        ([], 1, r"outcomes must hold at least one task, got \[\]"),
        ("1101", 1, "outcomes must hold one sequence of booleans per task, got '1101'"),
        ([[1, 0.5]], 1, r"outcomes must hold one sequence of booleans per task, got \[1, 0.5\]"),
        ([[]], 1, r"got \[\]"),
        ([[1, 0], [1, 1, 1]], 3, r"k must be a whole number in \[1, 2\].*got 3"),
        ([[1, 0]], 0, "got 0"),
        ([[1, 0]], 1.0, "got 1.0"),
        ([[1, 0]], True, "got True"),
    ],
)
def test_pass_hat_k_refuses_bad_input(outcomes, k, match):
    with pytest.raises(ValueError, match=match):
        pass_hat_k(outcomes, k)


# -- the fits ---------------------------------------------------------------------------------


def _grid_search(n, s, t, start_up):
    """The likelihood maximised by brute force: a 500 x 500 grid over a in (0, 1] and p in
    (0, 1), then a second one of the same size over the four cells around its best point."""
    steps = np.unique(n)
    s = np.array([np.sum(np.asarray(s)[n == m]) for m in steps], dtype=float)
    t = np.array([np.sum(np.asarray(t)[n == m]) for m in steps], dtype=float)

    def best(p_axis, a_axis):
        p, a = p_axis[:, None, None], a_axis[None, :, None]
        q = np.clip(a * p**steps, 1e-300, 1 - 1e-16)
        ll = (s * np.log(q) + (t - s) * np.log1p(-q)).sum(axis=-1)
        i, j = np.unravel_index(ll.argmax(), ll.shape)
        return p_axis[i], a_axis[j], float(ll[i, j])

    p_axis = np.linspace(0.001, 0.999, 500)
    a_axis = np.linspace(0.002, 1.0, 500) if start_up else np.ones(1)
    p, a, _ = best(p_axis, a_axis)
    p_axis = np.linspace(max(p - 0.004, 1e-6), min(p + 0.004, 1 - 1e-9), 500)
    if start_up:
        a_axis = np.linspace(max(a - 0.004, 1e-6), min(a + 0.004, 1.0), 500)
    p, a, ll = best(p_axis, a_axis)
    return float(a), float(p), ll


@pytest.mark.parametrize("start_up", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_the_fits_agree_with_a_grid_search_of_the_likelihood(seed, start_up):
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 15, size=40)
    a, p = (rng.uniform(0.4, 0.95), rng.uniform(0.8, 0.98)) if start_up else (1.0, 0.9)
    s = rng.binomial(4, a * p**n)
    fit = fit_chain(n, s, 4, start_up=start_up)
    grid_a, grid_p, grid_ll = _grid_search(n, s, 4 + 0 * n, start_up)
    # The fit may only beat the grid, and by no more than the fine grid's spacing can lose.
    assert grid_ll - 1e-9 <= fit.log_likelihood <= grid_ll + 1e-3
    # The fine grid's spacing is 1.6e-5; a flat likelihood lets its argmax wander a little.
    assert_allclose((fit.a, fit.p), (grid_a, grid_p), atol=2e-3)


@pytest.mark.parametrize(
    "n, s, t",
    [
        ([1, 2, 3, 900, 1500], [3, 3, 2, 0, 0], 3),  # p^n rounds to 0 at the long tasks
        ([1, 4, 9], [0, 0, 0], 5),  # every run fails
        ([2, 5, 7], [5, 5, 5], 5),  # every run succeeds
        ([3, 3, 3, 3], [1, 2, 0, 2], 2),  # one step count: only a p^3 can be told
        ([1, 30, 60], [40, 1, 0], [40, 40, 40]),  # wins at one count, losses at the others
    ],
)
def test_the_start_up_fit_is_the_best_point_at_the_edges(n, s, t):
    """Where a search can fail: rates that round to 0, no losses or no wins, a flat ridge."""
    n, s = np.asarray(n), np.asarray(s)
    t = np.broadcast_to(t, n.shape)
    fit = fit_chain(n, s, t, start_up=True)
    assert 0 < fit.a <= 1 and 0 < fit.p < 1
    _, _, grid_ll = _grid_search(n, s, t, start_up=True)
    assert fit.log_likelihood >= grid_ll - 1e-9


def test_fit_results_and_aic():
    plain = fit_chain([1, 2, 3], [9, 8, 7], 10)
    assert plain.a == 1.0 and plain.parameters == 1
    assert plain.aic == pytest.approx(2 - 2 * plain.log_likelihood)
    assert_allclose(plain.success([1, 2]), plain.p ** np.array([1, 2]))
    # The nested model never fits worse.
    assert fit_chain([1, 2, 3], [9, 8, 7], 10, start_up=True).log_likelihood >= (
        plain.log_likelihood - 1e-9
    )


def test_per_run_rows_and_grouped_counts_give_the_same_fit():
    n, s = [1, 1, 1, 2, 2, 3], [True, True, False, True, False, False]
    grouped = fit_chain([1, 2, 3], [2, 1, 0], [3, 2, 1], start_up=True)
    rows = fit_chain(n, s, start_up=True)
    assert_allclose(
        (rows.a, rows.p, rows.log_likelihood),
        (grouped.a, grouped.p, grouped.log_likelihood),
        rtol=1e-9,
    )


def test_a_record_without_failures_pushes_p_to_its_bound():
    fit = fit_chain([1, 2, 3], [4, 4, 4], 4)
    assert fit.p > 0.999999 and fit.log_likelihood == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (([0, 1], [0, 1], 1), "n must be >= 1 step .* got 0"),
        (([1.5], [1], 1), r"n must hold whole numbers, got \[1.5\]"),
        (([1, 2], [3, 1], 2), r"successes must lie in \[0, trials\].*got \[3, 1\] of \[2, 2\]"),
        (([1, 2], [0, 0], 0), "trials >= 1"),
        (([1, 2, 3], [0, 1], 1), "must broadcast together"),
        (([], [], 1), "n must hold at least one observation"),
    ],
)
def test_fit_chain_refuses_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        fit_chain(*args)


def test_bootstrap_intervals_are_seeded_and_cover_the_fit():
    tasks = by_task(records())
    keep = tasks.n_actions > 0
    n, s, t = tasks.n_actions[keep], tasks.successes[keep], tasks.trials[keep]
    fit = fit_chain(n, s, t, start_up=True)
    ci = bootstrap_fit(n, s, t, start_up=True, resamples=100, seed=5)
    assert ci == bootstrap_fit(n, s, t, start_up=True, resamples=100, seed=5)
    assert ci != bootstrap_fit(n, s, t, start_up=True, resamples=100, seed=6)
    assert ci["a"][0] < fit.a < ci["a"][1] and ci["p"][0] < fit.p <= ci["p"][1]
    assert bootstrap_fit(n, s, t, resamples=50)["a"] == (1.0, 1.0)


def test_a_fit_of_the_same_counts_is_computed_once_and_cannot_be_changed(monkeypatch):
    """A notebook's cells, its key and its checks fit the same records: the fit is kept by
    the counts' values, shape and type, and what is kept is read-only."""
    computed = []
    fitted = estimators._fitted
    monkeypatch.setattr(estimators, "_fitted", lambda *args: computed.append(args) or fitted(*args))
    estimators._fitted_once.cache_clear()
    n, s = [1, 2, 3, 5], [9, 8, 7, 4]
    first = fit_chain(n, s, 10, start_up=True)
    assert fit_chain(n, s, 10, start_up=True) == first and len(computed) == 1
    assert fit_chain(n, s, 10) != first and len(computed) == 2
    assert fit_chain(n, [9, 8, 7, 5], 10, start_up=True) != first and len(computed) == 3
    steps, wins, trials = (np.asarray(x) for x in (n, s, [10] * 4))
    flat = estimators._fit_arrays(steps, wins, trials, True)
    rows = estimators._fit_arrays(steps, wins[None], trials[None], True)
    assert [x.shape for x in flat] == [()] * 3 and [x.shape for x in rows] == [(1,)] * 3
    assert float(flat[1]) == float(rows[1][0]) == first.p
    with pytest.raises(ValueError, match="read-only"):
        rows[1][0] = 0.5
    many = (steps, np.tile(wins, (5000, 1)), np.tile(trials, (5000, 1)))  # too big to keep
    before = len(computed)
    assert estimators._fit_arrays(*many, True)[1].shape == (5000,)
    estimators._fit_arrays(*many, True)
    assert len(computed) == before + 2


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"resamples": 5}, "resamples must be an integer >= 10, got 5"),
        ({"resamples": 20.0}, "got 20.0"),
        ({"level": 1.0}, r"level must be in \(0, 1\), got 1.0"),
    ],
)
def test_bootstrap_refuses_bad_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bootstrap_fit([1, 2], [1, 0], 1, **kwargs)


# -- the shipped data -------------------------------------------------------------------------


def _readme() -> str:
    return resources.files("decompkit.traces").joinpath("data", "README.md").read_text()


def test_the_data_holds_the_counts_its_readme_states():
    text = " ".join(_readme().split())
    runs, tasks = records(), by_task(records())
    stated = re.search(
        r"(\d+) rows, (\d+) tasks, (\d+) trials each, (\d+) successes \(mean ([\d.]+)\); "
        r"(\d+) tasks never solved, (\d+) solved in all four trials; (\d+) tasks have no "
        r"ground-truth action .*?, (\d+) have 1 to (\d+)",
        text,
    )
    assert stated, "the README's counts sentence changed"
    rows, n_tasks, trials, wins, mean, never, always, none, some, most = stated.groups()
    assert len(runs) == int(rows) and len(tasks) == int(n_tasks)
    assert tasks.outcomes.shape[1] == int(trials) == 4
    assert int(runs.success.sum()) == int(wins) and runs.success.mean() == float(mean)
    assert (tasks.successes == 0).sum() == int(never) and (tasks.successes == 4).sum() == int(
        always
    )
    assert (tasks.n_actions == 0).sum() == int(none) and (tasks.n_actions > 0).sum() == int(some)
    assert tasks.n_actions.max() == int(most)


def test_the_data_names_its_source_commit_and_licence():
    text = _readme()
    assert (
        "sierra-research/tau-bench" in text and "59a200c6d575d595120f1cb70fea53cef0632f6b" in text
    )
    assert "MIT License" in text and "Copyright (c) 2024 Sierra" in text


def test_the_data_is_small_and_consistent():
    path = resources.files("decompkit.traces").joinpath("data", "tau_bench.csv")
    assert len(path.read_bytes()) < 200_000
    runs = records()
    for task in set(runs.task_id.tolist()):
        mask = runs.task_id == task
        assert len(set(runs.n_actions[mask].tolist())) == 1  # a task's actions in every trial
        assert sorted(runs.trial[mask].tolist()) == [0, 1, 2, 3]
    assert (runs.n_tool_calls >= 0).all()


def test_the_issues_first_look_figures():
    """pass^k for k = 1..4 and the 14 / 10 / 26 split of tasks (issue 32)."""
    tasks = by_task(records())
    assert_allclose(pass_hat_k(tasks.outcomes, [1, 2, 3, 4]), [0.42, 0.2733, 0.22, 0.2], atol=5e-5)
    assert ((tasks.successes > 0) & (tasks.successes < 4)).sum() == 26


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: records(model="gpt-5"), r"model must be one of \['gpt-4o'\], got 'gpt-5'"),
        (lambda: by_task(records(), [0, 99]), "tasks must be ids of recorded tasks, got 99"),
        (lambda: by_task("runs"), "runs must be Records, got 'runs'"),
    ],
)
def test_records_refuse_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_by_task_keeps_the_order_and_repeats_asked_for():
    tasks = by_task(records(), [5, 1, 5])
    assert tasks.task_id.tolist() == [5, 1, 5]
    assert tasks.outcomes[0].tolist() == tasks.outcomes[2].tolist()
    assert tasks.trials.tolist() == [4, 4, 4]


# -- pass^k of tasks that differ ---------------------------------------------------------------


@pytest.mark.parametrize(("mean", "spread"), [(0.42, 0.3), (0.8, 0.05), (0.5, 0.25)])
def test_mixture_pass_k_is_the_mean_of_p_to_the_k_under_its_beta(mean, spread):
    c = 1 / spread - 1
    a, b = mean * c, (1 - mean) * c
    x = np.linspace(0, 1, 400_001)[1:-1]
    log_norm = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    density = np.exp(log_norm + (a - 1) * np.log(x) + (b - 1) * np.log1p(-x))
    dx = x[1] - x[0]
    assert_allclose(np.sum(density) * dx, 1, atol=2e-3)  # the grid holds the whole density
    for k in (1, 2, 3, 5):
        # a Riemann sum on 400,000 points: well within 2e-3 of the integral for these shapes
        assert_allclose(mixture_pass_k(mean, spread, k), np.sum(x**k * density) * dx, atol=2e-3)


def test_mixture_pass_k_runs_from_p_to_the_k_to_p_and_broadcasts():
    ks = np.arange(1, 6)
    assert_allclose(mixture_pass_k(0.42, 0.0, ks), 0.42**ks)
    assert_allclose(mixture_pass_k(0.42, 1.0, ks), 0.42)
    spreads = np.linspace(0, 1, 11)
    values = mixture_pass_k(0.42, spreads, 3)
    assert values.shape == (11,) and np.all(np.diff(values) > 0)
    assert mixture_pass_k([[0.2], [0.5]], [0.1, 0.9], 2).shape == (2, 2)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((1.2, 0.1, 2), "mean must be in \\[0, 1\\], got 1.2"),
        ((0.5, -0.1, 2), "spread must be in \\[0, 1\\], got -0.1"),
        ((0.5, 0.1, 0), "k must be a whole number >= 1, got 0"),
        ((0.5, 0.1, 1.5), "got 1.5"),
    ],
)
def test_mixture_pass_k_refuses_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        mixture_pass_k(*args)
