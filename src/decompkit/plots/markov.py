"""Figures for long-horizon execution as an absorbing Markov chain (lecture section 3).

Every line carries a ``gid`` (listed in each docstring) so a widget can find it with
:func:`line_by_gid` and update its data in place instead of redrawing the figure.
"""

from __future__ import annotations

import numpy as np

from .. import markov
from .style import GREY, PALETTE, new_axes, series_style

__all__ = ["plot_success_vs_horizon", "plot_q_sweep", "plot_grounded_survival", "line_by_gid"]


def line_by_gid(fig, gid):
    """Return the first line of ``fig`` whose ``gid`` is ``gid``.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        A figure made by one of this module's functions.
    gid : str
        The line's id, e.g. ``"success q=0.5"``.

    Returns
    -------
    matplotlib.lines.Line2D

    Raises
    ------
    KeyError
        If no line of the figure has that id.

    Examples
    --------
    >>> fig = plot_success_vs_horizon(qs=(0.5,))
    >>> line_by_gid(fig, "success q=0.5").get_label()
    'q = 0.5'
    """
    for ax in fig.axes:
        for line in ax.lines:
            if line.get_gid() == gid:
                return line
    raise KeyError(f"no line with gid {gid!r} in this figure")


def plot_success_vs_horizon(
    p=0.95,
    qs=(0.0, 0.5, 0.9, 1.0),
    ns=range(5, 205, 5),
    budget_factor=2.0,
    threshold=0.5,
    *,
    ax=None,
):
    """Draw success within ``round(budget_factor * n)`` rounds against the horizon ``n``.

    Parameters
    ----------
    p : float
        Executor accuracy per round.
    qs : sequence of float
        Audit detection probabilities, one curve each.
    ns : sequence of int
        Horizons on the x axis.
    budget_factor : float
        Rounds per subtask; horizon ``n`` gets ``round(budget_factor * n)`` rounds.
    threshold : float
        Success level drawn as a dotted line (the collapse level).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made when omitted.

    Returns
    -------
    matplotlib.figure.Figure
        Lines have gids ``"success q=<q:g>"`` and ``"threshold"``.

    Examples
    --------
    >>> fig = plot_success_vs_horizon(qs=(0.0, 0.9))
    >>> [line.get_gid() for line in fig.axes[0].lines]
    ['success q=0', 'success q=0.9', 'threshold']
    """
    fig, ax = new_axes(ax)
    ns = np.asarray(ns)
    qs = np.asarray(qs, dtype=float)
    budgets = np.rint(budget_factor * ns).astype(np.int64)
    success = np.atleast_2d(markov.success_exact(ns[None, :], p, qs[:, None], budgets))
    for i, (q, curve) in enumerate(zip(qs, success, strict=True)):
        ax.plot(
            ns,
            curve,
            **series_style(i),
            marker="o",
            markersize=3,
            label=f"q = {q:g}",
            gid=f"success q={q:g}",
        )
    ax.axhline(
        threshold, color=GREY, linestyle=":", linewidth=1, label="collapse level", gid="threshold"
    )
    ax.set(
        xlabel=f"horizon n (subtasks), budget B = {budget_factor:g} n rounds",
        ylabel="P(all n done within B rounds)",
        ylim=(0, 1.02),
        title="Only a strong audit keeps long horizons from collapsing",
    )
    ax.legend(loc="lower left", title=f"p = {p:g}")
    return fig


def plot_q_sweep(
    n=50,
    p=0.95,
    budget=None,
    *,
    qs=None,
    trials=20_000,
    seed=0,
    mc=None,
    ax=None,
):
    """Draw success against audit quality ``q`` at a fixed horizon, with Monte Carlo points.

    Parameters
    ----------
    n : int
        Horizon (number of subtasks).
    p : float
        Executor accuracy per round.
    budget : int, optional
        Round budget; ``2 n`` when omitted.
    qs : sequence of float, optional
        Audit levels of the Monte Carlo points; 21 levels 0, 0.05, ..., 1 when omitted.
    trials : int or None
        Simulated runs per point; ``None`` draws the exact curve only.
    seed : None, int or numpy.random.Generator
        Randomness of the simulation.
    mc : MonteCarloResult, optional
        Precomputed :func:`decompkit.markov.success_monte_carlo` result at ``qs`` (then
        ``trials`` and ``seed`` are not used).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.

    Returns
    -------
    matplotlib.figure.Figure
        The exact curve has gid ``"exact"``; the Monte Carlo points have gid
        ``"monte-carlo"``, their Wilson 95 % intervals (a line collection) gid
        ``"monte-carlo intervals"`` and the interval caps gid ``"monte-carlo caps"``.

    Examples
    --------
    >>> fig = plot_q_sweep(50, 0.95, qs=[0.0, 0.5, 1.0], trials=2000, seed=1)
    >>> line_by_gid(fig, "exact").get_label()
    'exact'
    >>> line_by_gid(fig, "monte-carlo").get_ydata().shape
    (3,)
    """
    fig, ax = new_axes(ax)
    budget = 2 * n if budget is None else budget
    q_fine = np.linspace(0.0, 1.0, 201)
    ax.plot(
        q_fine,
        markov.success_exact(n, p, q_fine, budget),
        color=PALETTE[0],
        label="exact",
        gid="exact",
    )
    qs = np.linspace(0.0, 1.0, 21) if qs is None else np.asarray(qs, dtype=float)
    if mc is None and trials is not None:
        mc = markov.success_monte_carlo(n, p, qs, budget, trials=trials, seed=seed)
    if mc is not None:
        estimate = np.asarray(mc.estimate)
        errors = np.vstack([estimate - mc.low, mc.high - estimate])
        bars = ax.errorbar(
            qs,
            estimate,
            yerr=errors,
            fmt="o",
            markersize=4,
            capsize=2,
            color=PALETTE[1],
            label=f"Monte Carlo, {mc.trials:,} runs (95 % interval)",
        )
        data_line, caps, (whiskers,) = bars.lines
        data_line.set_gid("monte-carlo")
        whiskers.set_gid("monte-carlo intervals")
        for cap in caps:
            cap.set_gid("monte-carlo caps")
    ax.set(
        xlabel="audit detection probability q",
        ylabel="P(all n done within B rounds)",
        ylim=(0, 1.02),
        title=f"At n = {n} success hinges on the audit (p = {p:g}, B = {budget})",
    )
    ax.legend(loc="upper left")
    return fig


def plot_grounded_survival(p=0.95, qs=(0.0, 0.5, 0.9, 1.0), t_max=300, *, ax=None):
    """Draw the grounded survival ``g_t = (1 - lambda)^t`` against rounds ``t``.

    Parameters
    ----------
    p : float
        Executor accuracy per round.
    qs : sequence of float
        Audit detection probabilities, one curve each.
    t_max : int
        Last round shown.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.

    Returns
    -------
    matplotlib.figure.Figure
        Lines have gids ``"survival q=<q:g>"`` and ``"half"``; finite half-lives are marked
        by points with gids ``"half-life q=<q:g>"``.

    Examples
    --------
    >>> fig = plot_grounded_survival(qs=(0.0, 1.0), t_max=50)
    >>> [line.get_gid() for line in fig.axes[0].lines]
    ['survival q=0', 'half-life q=0', 'survival q=1', 'half']
    """
    fig, ax = new_axes(ax)
    t = np.arange(int(t_max) + 1)
    for i, q in enumerate(qs):
        style = series_style(i)
        color = style["color"]
        ax.plot(
            t,
            markov.grounded_survival(t, p, q),
            **style,
            label=f"q = {q:g}",
            gid=f"survival q={q:g}",
        )
        half = markov.grounded_half_life(p, q)
        if np.isfinite(half) and half <= t_max:
            ax.plot([half], [0.5], "o", color=color, gid=f"half-life q={q:g}")
    ax.axhline(0.5, color=GREY, linestyle=":", linewidth=1, label="one half", gid="half")
    ax.set(
        xlabel="round t",
        ylabel="P(still grounded) = $(1-\\lambda)^t$",
        ylim=(0, 1.02),
        xlim=(0, t_max),
        title="Unless q = 1, corruption comes for certain; q only slows it",
    )
    ax.legend(loc="upper right", title=f"p = {p:g}")
    return fig
