"""Figures for the simulated Manage-Execute-Audit loop and for context growth (section 3).

Every line carries a ``gid`` (listed in each docstring); find one with
:func:`decompkit.plots.markov.line_by_gid`.
"""

from __future__ import annotations

import numpy as np

from .. import harness, markov
from ..validate import count
from .style import GREY, PALETTE, new_axes

__all__ = ["plot_loop_vs_chain", "plot_context_growth"]

#: Series of :func:`plot_loop_vs_chain`: key, label, colour, marker.
_SERIES = (
    ("independent", "loop, auditor reads the environment", PALETTE[0], "o"),
    ("correlated", "loop, errors clustered on hard subtasks", PALETTE[1], "s"),
    ("reads trace", "loop, auditor reads the narration", PALETTE[2], "^"),
)


def plot_loop_vs_chain(
    n=50,
    p=0.95,
    budget=None,
    *,
    qs=None,
    runs=2000,
    seed=0,
    correlated=True,
    persuasion=0.9,
    results=None,
    ax=None,
):
    """Draw measured success of the simulated loop against the exact chain, over ``q``.

    Parameters
    ----------
    n : int
        Number of subtasks.
    p : float
        Executor accuracy per round (mean over subtasks for the clustered series).
    budget : int, optional
        Round budget; ``2 n`` when omitted.
    qs : sequence of float, optional
        Audit levels of the simulated points; 0, 0.1, ..., 1 when omitted.
    runs : int
        Simulated runs per point.
    seed : None, int or numpy.random.Generator
        Randomness; the series are simulated in the order independent, correlated, reads
        trace, from one generator.
    correlated : None, bool or harness.Correlation
        Clustering of the correlated series (``True``: the default ``Correlation()``);
        ``None`` or ``False`` leaves that series out.
    persuasion : float or None
        Persuasion of the trace-reading series; ``None`` leaves it out.
    results : dict, optional
        Precomputed :func:`decompkit.harness.simulate` results at ``qs``, keyed
        ``"independent"``, ``"correlated"``, ``"reads trace"``; a series whose key is
        missing is simulated.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made when omitted.

    Returns
    -------
    matplotlib.figure.Figure
        Exact curves have gids ``"exact independent"`` (the chain,
        :func:`decompkit.markov.success_exact`), ``"exact correlated"`` and
        ``"exact reads trace"`` (:func:`decompkit.harness.exact_success` with the switch);
        measured points have gids ``"loop <key>"``, their Wilson 95 % intervals (line
        collections) ``"loop <key> intervals"``. The dotted level ``"no audit"`` is the
        chain at ``q = 0``, ``p**n``.

    Examples
    --------
    >>> from decompkit.plots.markov import line_by_gid
    >>> fig = plot_loop_vs_chain(20, 0.9, qs=[0.0, 0.5, 1.0], runs=500, seed=1)
    >>> line_by_gid(fig, "loop independent").get_ydata().shape
    (3,)
    """
    fig, ax = new_axes(ax)
    budget = 2 * n if budget is None else budget
    qs = np.linspace(0.0, 1.0, 11) if qs is None else np.asarray(qs, dtype=float)
    q_fine = np.linspace(0.0, 1.0, 201)
    switches = {"independent": {}}
    if correlated is not None and correlated is not False:
        switches["correlated"] = {"correlated": correlated}
    if persuasion is not None:
        switches["reads trace"] = {"auditor_reads_trace": True, "persuasion": persuasion}
    results = dict(results or {})
    rng = np.random.default_rng(seed)  # a Generator passes through unchanged
    for key, label, color, marker in _SERIES:
        if key not in switches:
            continue
        options = switches[key]
        exact = harness.exact_success(n, p, q_fine, budget, **options)
        style = "-" if key == "independent" else "--"
        name = {
            "independent": "chain, exact",
            "correlated": "exact, clustered errors",
            "reads trace": f"exact, narration read (persuasion {persuasion})",
        }[key]
        ax.plot(q_fine, exact, style, color=color, label=name, gid=f"exact {key}")
        if key not in results:
            results[key] = harness.simulate(n, p, qs, budget, runs, seed=rng, **options)
        sim = results[key]
        estimate = np.asarray(sim.estimate)
        bars = ax.errorbar(
            qs,
            estimate,
            yerr=np.vstack([estimate - sim.low, sim.high - estimate]),
            fmt=marker,
            markersize=4,
            capsize=2,
            color=color,
            label=f"{label} ({sim.runs:,} runs)",
        )
        data_line, caps, (whiskers,) = bars.lines
        data_line.set_gid(f"loop {key}")
        whiskers.set_gid(f"loop {key} intervals")
        for cap in caps:
            cap.set_gid(f"loop {key} caps")
    ax.axhline(
        markov.success_exact(n, p, 0.0, budget),
        color=GREY,
        linestyle=":",
        linewidth=1,
        label="no audit: $p^n$",
        gid="no audit",
    )
    ax.set(
        xlabel="audit detection probability q",
        ylabel="P(all n verified within B rounds)",
        ylim=(0, 1.02),
        title=(
            "The loop matches the chain; clustered errors\n"
            "and a narration-reading audit fall below it"
        ),
    )
    ax.legend(loc="upper left", fontsize="small", title=f"n = {n}, p = {p:g}, B = {budget}")
    return fig


def plot_context_growth(T_max=1000, a=500, L0=2000, L_star=4000, *, ax=None):
    """Draw the cumulative attention cost of an appended transcript and of fresh contexts.

    Parameters
    ----------
    T_max : int
        Last round shown (rounds ``1 .. T_max`` on the x axis), ``>= 1``.
    a : float
        Tokens appended per round.
    L0 : float
        Tokens of the starting context.
    L_star : float
        Tokens of the bounded fresh context.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.

    Returns
    -------
    matplotlib.figure.Figure
        Log-log axes with lines of gids ``"appended"``
        (:func:`decompkit.harness.appended_context_cost`) and ``"fresh"``
        (:func:`decompkit.harness.fresh_context_cost`); on log axes the slopes are 3 and 1
        once ``a T`` outgrows ``L0``.

    Raises
    ------
    ValueError
        If ``T_max < 1`` or another argument is rejected by the cost functions.

    Examples
    --------
    >>> from decompkit.plots.markov import line_by_gid
    >>> fig = plot_context_growth(T_max=10, a=1, L0=0, L_star=2)
    >>> line_by_gid(fig, "fresh").get_ydata().tolist()[:3]
    [4.0, 8.0, 12.0]
    """
    fig, ax = new_axes(ax)
    T_max = count("T_max", T_max, minimum=1)
    if T_max.ndim:
        raise ValueError(f"T_max must be a single number, got an array of shape {T_max.shape}")
    T = np.arange(1, int(T_max) + 1)
    ax.plot(
        T,
        harness.appended_context_cost(T, a, L0),
        color=PALETTE[5],
        label=f"appended transcript: $\\sum_t (L_0 + a t)^2$, a = {a:g}, $L_0$ = {L0:g}",
        gid="appended",
    )
    ax.plot(
        T,
        harness.fresh_context_cost(T, L_star),
        color=PALETTE[0],
        label=f"fresh bounded context: $T L_*^2$, $L_*$ = {L_star:g}",
        gid="fresh",
    )
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="rounds T",
        ylabel="cumulative attention cost (tokens$^2$)",
        title="An appended transcript costs $\\Theta(a^2 T^3)$; a fresh context only $\\Theta(T)$",
    )
    ax.legend(loc="upper left", fontsize="small")
    return fig
