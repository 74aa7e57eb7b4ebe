"""Figures for chain reliability and boundary checks (lecture sections 1-2)."""

from __future__ import annotations

import numpy as np

from .. import reliability as rel
from .style import GREY, PALETTE, new_axes, series_style

__all__ = ["plot_chain_decay", "plot_check_value", "plot_d_phi_plane"]


def plot_chain_decay(ps=(0.8, 0.9, 0.95, 0.99), n_max=100, *, ax=None):
    """Draw the success of an n-step chain, p**n, against n for several p.

    Parameters
    ----------
    ps : sequence of float
        Per-step success rates, one curve each.
    n_max : int
        Longest chain shown.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made when omitted.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_chain_decay((0.9, 0.95), n_max=20)
    >>> [line.get_label() for line in fig.axes[0].lines][:2]
    ['p = 0.9', 'p = 0.95']
    """
    fig, ax = new_axes(ax)
    n = np.arange(0, int(n_max) + 1)
    for i, p in enumerate(ps):
        ax.plot(n, rel.chain_success(p, n), **series_style(i), label=f"p = {p:g}")
    ax.axhline(0.5, color=GREY, linestyle=":", linewidth=1, label="one half")
    ax.set(
        xlabel="steps in the chain, n",
        ylabel="P(all steps correct) = $p^n$",
        ylim=(0, 1.02),
        xlim=(0, n_max),
        title="Success decays exponentially with the number of steps",
    )
    ax.legend(loc="upper right")
    return fig


def plot_check_value(p=0.9, *, phi=0.0, ax=None):
    """Draw what a check is worth for one step: p' (one retry) and p'_inf against d.

    Parameters
    ----------
    p : float
        Success rate of one attempt.
    phi : float
        False-positive rate of the check, used for the one-retry curve.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_check_value(0.9)
    >>> len(fig.axes[0].lines)
    3
    """
    fig, ax = new_axes(ax)
    d = np.linspace(0.0, 1.0, 201)
    ax.plot(
        d,
        rel.checked_step_fallible(p, d, phi),
        color=PALETTE[0],
        label=f"one retry, p' (phi = {phi:g})",
    )
    ax.plot(
        d, rel.checked_step_limit(p, d), color=PALETTE[1], label="retry until pass, $p'_\\infty$"
    )
    ax.plot(d, np.full_like(d, p), color=GREY, linestyle="--", label=f"no check, p = {p:g}")
    ax.set(
        xlabel="detection rate of the check, d",
        ylabel="success probability of the step",
        xlim=(0, 1),
        title="A better check lifts the step; retrying until it passes lifts it most",
    )
    ax.legend(loc="lower right")
    return fig


def plot_d_phi_plane(p=0.9, *, resolution=201, ax=None):
    """Shade the (d, phi) plane by the gain p' - p of a fallible check with one retry.

    The diagonal ``d = phi`` separates checks that help (below) from checks that hurt.

    Parameters
    ----------
    p : float
        Success rate of one attempt.
    resolution : int
        Grid points per axis.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_d_phi_plane(0.9, resolution=11)
    >>> fig.axes[0].get_xlabel()
    'detection rate, d'
    """
    fig, ax = new_axes(ax, figsize=(5.6, 4.4))
    grid = np.linspace(0.0, 1.0, int(resolution))
    d, phi = np.meshgrid(grid, grid)
    gain = rel.checked_step_fallible(p, d, phi) - p
    limit = max(float(np.abs(gain).max()), 1e-12)
    mesh = ax.pcolormesh(d, phi, gain, cmap="PuOr_r", vmin=-limit, vmax=limit, shading="auto")
    fig.colorbar(mesh, ax=ax, label="gain p' - p")
    ax.plot([0, 1], [0, 1], color="black", linewidth=1.2)
    ax.text(0.68, 0.2, "check helps\n(d > phi)", ha="center", va="center")
    ax.text(0.3, 0.8, "check hurts\n(d < phi)", ha="center", va="center")
    ax.set(
        xlabel="detection rate, d",
        ylabel="false-positive rate, phi",
        xlim=(0, 1),
        ylim=(0, 1),
        aspect="equal",
        title=f"A check is worth adding only where d > phi (p = {p:g})",
    )
    return fig
