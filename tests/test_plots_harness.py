"""Tests for decompkit.plots.harness: the simulated loop against the chain, context growth."""

from __future__ import annotations

import io

import numpy as np
import pytest
from matplotlib.figure import Figure
from numpy.testing import assert_allclose

from decompkit import harness, markov
from decompkit.plots.harness import plot_context_growth, plot_loop_vs_chain
from decompkit.plots.markov import line_by_gid


def renders(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.tell() > 0


def intervals(fig, gid):
    (whiskers,) = [c for c in fig.axes[0].collections if c.get_gid() == gid]
    segments = whiskers.get_segments()
    return [seg[0][1] for seg in segments], [seg[1][1] for seg in segments]


def test_loop_vs_chain_draws_the_computed_values():
    n, p, budget, qs = 20, 0.9, 40, np.array([0.0, 0.5, 0.9, 1.0])
    correlation = harness.Correlation(0.25, spread=1.0, retry_penalty=0.2)
    fig = plot_loop_vs_chain(
        n, p, budget, qs=qs, runs=800, seed=5, correlated=correlation, persuasion=0.7
    )
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    assert ax.get_title().startswith("The loop matches the chain")
    assert ax.get_xlabel() == "audit detection probability q"
    assert ax.get_ylabel() == "P(all n verified within B rounds)"
    assert ax.get_legend().get_title().get_text() == "n = 20, p = 0.9, B = 40"

    chain = line_by_gid(fig, "exact independent")
    q_fine = chain.get_xdata()
    assert_allclose(q_fine, np.linspace(0, 1, 201))
    assert_allclose(chain.get_ydata(), markov.success_exact(n, p, q_fine, budget))
    assert_allclose(
        line_by_gid(fig, "exact correlated").get_ydata(),
        harness.exact_success(n, p, q_fine, budget, correlated=correlation),
    )
    assert_allclose(
        line_by_gid(fig, "exact reads trace").get_ydata(),
        markov.success_exact(n, p, q_fine * 0.3, budget),
        rtol=1e-12,
    )
    assert_allclose(line_by_gid(fig, "no audit").get_ydata(), [p**n, p**n])

    # The points are the simulations, run in the documented order from one generator.
    rng = np.random.default_rng(5)
    expected = {
        "independent": harness.simulate(n, p, qs, budget, 800, seed=rng),
        "correlated": harness.simulate(n, p, qs, budget, 800, seed=rng, correlated=correlation),
        "reads trace": harness.simulate(
            n, p, qs, budget, 800, seed=rng, auditor_reads_trace=True, persuasion=0.7
        ),
    }
    for key, sim in expected.items():
        points = line_by_gid(fig, f"loop {key}")
        assert_allclose(points.get_xdata(), qs)
        assert_allclose(points.get_ydata(), sim.estimate)
        low, high = intervals(fig, f"loop {key} intervals")
        assert_allclose(low, sim.low)
        assert_allclose(high, sim.high)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "loop, errors clustered on hard subtasks (800 runs)" in labels
    assert labels[:3] == [
        "chain, exact",
        "exact, clustered errors",
        "exact, narration read (persuasion 0.7)",
    ]
    assert all(line.get_gid() for line in ax.lines)
    assert renders(fig)


def test_loop_vs_chain_without_switches_and_with_given_results():
    qs = np.array([0.2, 0.8])
    given = harness.simulate(10, 0.9, qs, 20, runs=300, seed=1)
    fig = plot_loop_vs_chain(
        10, 0.9, qs=qs, correlated=None, persuasion=None, results={"independent": given}
    )
    gids = {line.get_gid() for line in fig.axes[0].lines}
    assert gids == {"exact independent", "loop independent", "loop independent caps", "no audit"}
    assert_allclose(line_by_gid(fig, "loop independent").get_ydata(), given.estimate)
    assert fig.axes[0].get_legend().get_title().get_text() == "n = 10, p = 0.9, B = 20"
    with pytest.raises(KeyError, match="no line with gid 'loop correlated'"):
        line_by_gid(fig, "loop correlated")


def test_loop_vs_chain_default_draws_all_three_series_on_given_axes():
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_loop_vs_chain(10, 0.9, runs=200, seed=0, ax=ax) is fig
    for key in ("independent", "correlated", "reads trace"):
        assert line_by_gid(fig, f"loop {key}").get_xdata().size == 11
    assert_allclose(
        line_by_gid(fig, "exact correlated").get_ydata()[100],
        harness.exact_success(10, 0.9, 0.5, 20, correlated=harness.Correlation()),
    )


def test_context_growth_draws_both_costs():
    fig = plot_context_growth(T_max=300, a=200, L0=1000, L_star=3000)
    (ax,) = fig.axes
    T = np.arange(1, 301)
    appended = line_by_gid(fig, "appended")
    fresh = line_by_gid(fig, "fresh")
    assert np.array_equal(appended.get_xdata(), T) and np.array_equal(fresh.get_xdata(), T)
    assert np.array_equal(appended.get_ydata(), harness.appended_context_cost(T, 200, 1000))
    assert np.array_equal(fresh.get_ydata(), harness.fresh_context_cost(T, 3000))
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "Theta(a^2 T^3)" in ax.get_title() and "Theta(T)" in ax.get_title()
    assert ax.get_xlabel() == "rounds T"
    assert ax.get_ylabel().startswith("cumulative attention cost")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("appended transcript") and "a = 200" in labels[0]
    assert labels[1].startswith("fresh bounded context") and "3000" in labels[1]
    assert renders(fig)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"T_max": 0}, r"T_max must be an integer >= 1, got 0"),
        ({"T_max": [5, 6]}, r"T_max must be a single number"),
        ({"a": -1}, r"a must be a finite number >= 0, got -1"),
    ],
)
def test_context_growth_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        plot_context_growth(**kwargs)


def test_loop_vs_chain_rejects_bad_input():
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\], got 1\.5"):
        plot_loop_vs_chain(10, 1.5, runs=10)
    with pytest.raises(ValueError, match=r"runs must be an integer >= 1, got 0"):
        plot_loop_vs_chain(10, 0.9, runs=0)
