"""Tests for decompkit.plots.markov: figures of the audited long-horizon chain."""

from __future__ import annotations

import io

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure
from numpy.testing import assert_allclose

from decompkit import markov
from decompkit.plots.markov import (
    line_by_gid,
    plot_grounded_survival,
    plot_q_sweep,
    plot_success_vs_horizon,
)


def renders(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.tell() > 0


def assert_labelled(fig):
    (ax,) = fig.axes
    assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()


def test_success_vs_horizon_draws_the_exact_curves():
    ns = np.arange(5, 105, 5)
    fig = plot_success_vs_horizon(0.95, qs=(0.0, 0.9), ns=ns, budget_factor=2.0)
    assert isinstance(fig, Figure)
    assert_labelled(fig)
    for q in (0.0, 0.9):
        line = line_by_gid(fig, f"success q={q:g}")
        assert_allclose(line.get_xdata(), ns)
        assert_allclose(line.get_ydata(), markov.success_exact(ns, 0.95, q, 2 * ns))
    assert_allclose(line_by_gid(fig, "threshold").get_ydata(), [0.5, 0.5])
    assert renders(fig)


def test_success_vs_horizon_rounds_the_budget():
    fig = plot_success_vs_horizon(0.9, qs=(0.5,), ns=[3, 5], budget_factor=1.5)
    expected = markov.success_exact([3, 5], 0.9, 0.5, [round(4.5), round(7.5)])
    assert_allclose(line_by_gid(fig, "success q=0.5").get_ydata(), expected)


def test_q_sweep_with_monte_carlo_points():
    qs = [0.0, 0.5, 0.9, 1.0]
    fig = plot_q_sweep(50, 0.95, qs=qs, trials=2000, seed=4)
    assert_labelled(fig)
    exact = line_by_gid(fig, "exact")
    assert_allclose(exact.get_ydata(), markov.success_exact(50, 0.95, exact.get_xdata(), 100))
    mc = markov.success_monte_carlo(50, 0.95, qs, 100, trials=2000, seed=4)
    points = line_by_gid(fig, "monte-carlo")
    assert_allclose(points.get_xdata(), qs)
    assert_allclose(points.get_ydata(), mc.estimate)
    # The error bars span the Wilson intervals.
    (whiskers,) = [c for c in fig.axes[0].collections if c.get_gid() == "monte-carlo intervals"]
    segments = whiskers.get_segments()
    assert_allclose([seg[0][1] for seg in segments], mc.low)
    assert_allclose([seg[1][1] for seg in segments], mc.high)
    assert all(line.get_gid() for line in fig.axes[0].lines)  # every line is identifiable
    assert renders(fig)


def test_q_sweep_takes_a_precomputed_result_or_none():
    qs = np.array([0.2, 0.8])
    mc = markov.success_monte_carlo(20, 0.9, qs, 30, trials=500, seed=1)
    fig = plot_q_sweep(20, 0.9, 30, qs=qs, mc=mc)
    assert_allclose(line_by_gid(fig, "monte-carlo").get_ydata(), mc.estimate)
    assert "500 runs" in fig.axes[0].get_legend().get_texts()[1].get_text()
    exact_only = plot_q_sweep(20, 0.9, 30, trials=None)
    with pytest.raises(KeyError, match="no line with gid 'monte-carlo'"):
        line_by_gid(exact_only, "monte-carlo")


def test_grounded_survival_curves_and_half_life_marks():
    fig = plot_grounded_survival(0.95, qs=(0.0, 0.9, 1.0), t_max=200)
    assert_labelled(fig)
    t = np.arange(201)
    for q in (0.0, 0.9, 1.0):
        line = line_by_gid(fig, f"survival q={q:g}")
        assert_allclose(line.get_ydata(), markov.grounded_survival(t, 0.95, q))
    mark = line_by_gid(fig, "half-life q=0.9")
    assert_allclose(mark.get_xdata(), [markov.grounded_half_life(0.95, 0.9)])
    assert_allclose(mark.get_ydata(), [0.5])
    with pytest.raises(KeyError):
        line_by_gid(fig, "half-life q=1")  # infinite half-life: no mark
    assert renders(fig)


@pytest.mark.parametrize(
    "draw",
    [
        lambda ax: plot_success_vs_horizon(ax=ax),
        lambda ax: plot_q_sweep(trials=None, ax=ax),
        lambda ax: plot_grounded_survival(ax=ax),
    ],
)
def test_draws_on_given_axes_without_pyplot(draw):
    fig = Figure()
    ax = fig.add_subplot()
    open_before = plt.get_fignums()
    assert draw(ax) is fig
    assert ax.lines
    assert plt.get_fignums() == open_before  # no pyplot figure was created


def test_lines_can_be_updated_in_place():
    # A widget moves a slider: recompute one curve and set it on the existing line.
    ns = np.arange(5, 205, 5)
    fig = plot_success_vs_horizon(qs=(0.5,), ns=ns)
    line = line_by_gid(fig, "success q=0.5")
    new = markov.success_exact(ns, 0.95, 0.7, 2 * ns)
    line.set_ydata(new)
    assert_allclose(line_by_gid(fig, "success q=0.5").get_ydata(), new)
    assert renders(fig)
