r"""Horizon explorer: the audited long-horizon chain (Manage-Execute-Audit) under sliders.

With executor accuracy :math:`p`, audit detection :math:`q` and budget :math:`B =
\mathrm{round}(\gamma n)` rounds, the run finishes all :math:`n` subtasks with
:math:`P = (e_0^\top P^B)_n`; it stays uncorrupted for :math:`t` rounds with
:math:`g_t = (1-\lambda)^t`, :math:`\lambda = (1-p)(1-q)`.
"""

from __future__ import annotations

import html
import textwrap
import time

import ipywidgets as widgets
import numpy as np

from .. import markov
from ..plots.markov import (
    line_by_gid,
    plot_grounded_survival,
    plot_q_sweep,
    plot_success_vs_horizon,
)
from ..plots.style import GREY, PALETTE
from ..validate import count, probability
from .base import Explorer, serialised
from .controls import error_html, float_slider, int_slider, projector_fonts
from .moving import Moving
from .view import CSS_DPI

__all__ = ["HorizonExplorer", "horizon_explorer"]


def _fmt(x, digits=3) -> str:
    return "inf" if np.isinf(x) else f"{x:.{digits}f}"


#: Below this figure width (CSS pixels: a projector at 150 % zoom) the panels' titles and
#: y labels take their short forms, which fit a panel a third of 640-1000 pixels wide.
NARROW = 1000
#: Titles (by_n, sweep, grounded) and y labels (by_n, sweep) where the figure is narrow.
_NARROW_TITLES = (
    "Only a strong audit keeps\nlong horizons from collapsing",
    "At the current n, success\nhinges on the audit",
    "Corruption comes,\nunless q = 1",
)
#: The sweep's title where the figure is wide. It names no number: n and B are on the sliders
#: and in the readout, and a title that changed with them cost each step of n or the budget
#: factor a new text bitmap, about 7 of the update's 12 ms of CPU (bench/profile_updates.py).
_SWEEP_TITLE = "At the current n, success hinges on the audit"
_NARROW_YLABELS = (
    "P(all n done\nwithin B rounds)",
    "P(all n done\nwithin B rounds)",
    "P(still grounded)\n= $(1-\\lambda)^t$",
)
#: X labels (by_n, sweep) where the figure is narrow: the plot functions' run into each other.
_NARROW_XLABELS = ("horizon n, B = round(γ n)", "audit detection q")


class HorizonExplorer(Explorer):
    """Sliders p, q, n and budget factor over the audited chain; see :func:`horizon_explorer`."""

    #: At 150 % zoom the figure takes the room under the controls, down to this height.
    MIN_HEIGHT = 250

    def __init__(
        self,
        p=0.95,
        q=0.5,
        n=50,
        budget_factor=2.0,
        *,
        n_max=200,
        reference_qs=(0.0, 0.5, 0.9, 1.0),
        mc_points=11,
        trials=20_000,
        seed=None,
    ):
        n_max = int(count("n_max", n_max, minimum=1))
        self.mc_qs = np.linspace(0.0, 1.0, int(count("mc_points", mc_points, minimum=2)))
        self.reference_qs = probability("reference_qs", reference_qs).ravel()
        self.trials = int(count("trials", trials, minimum=1))
        try:  # a bad seed fails here, not at the first click
            np.random.default_rng(seed)
        except (TypeError, ValueError):
            raise ValueError(
                f"seed must be None, an integer >= 0 or a numpy.random.Generator, got {seed!r}"
            ) from None
        self.seed = seed
        super().__init__(height=360)
        self.controls = {
            "p": float_slider(
                "p",
                p,
                0.0,
                1.0,
                0.005,
                "p executor",
                "probability that one round is correct",
                fmt=".3f",
            ),
            "q": float_slider(
                "q",
                q,
                0.0,
                1.0,
                0.01,
                "q audit",
                "probability that the audit catches a wrong round",
            ),
            "n": int_slider("n", n, 1, n_max, "n subtasks", "horizon: subtasks to finish"),
            "budget_factor": float_slider(
                "budget_factor",
                budget_factor,
                1.0,
                4.0,
                0.05,
                "γ = B / n",
                "round budget per subtask; the run gets B = round(γ n) rounds",
            ),
            "monte_carlo": widgets.Button(
                description="Monte Carlo",
                tooltip="simulate the q sweep at the current n, p and budget",
                icon="random",
            ),
        }
        self.progress = widgets.IntProgress(
            value=0,
            min=0,
            max=len(self.mc_qs),
            description="points",
            style={"description_width": "50px"},
            # shown while a simulation runs: before the first press it would be an empty bar
            layout=widgets.Layout(visibility="hidden"),
        )
        self.mc_label = widgets.HTML("Press <i>Monte Carlo</i> to simulate the q sweep.")
        self.ns = np.arange(1, n_max + 1)
        self.rounds = np.arange(0, 2 * n_max + 1)
        #: ((n, p, budget), {"estimate", "low", "high"}) of the last simulation, or None.
        self.monte_carlo = None
        with projector_fonts():
            self._draw()
        c = self.controls
        controls = self._row(
            [
                widgets.VBox([c["p"], c["q"]]),
                widgets.VBox([c["n"], c["budget_factor"]]),
                widgets.VBox([c["monte_carlo"], self.progress]),
            ]
        )
        controls.add_class("decompkit-compact")  # narrower sliders at 150 % zoom: two rows
        self.widget = self._box(
            [
                controls,
                self.view,
                self.mc_label,
                self.readout,
                self.status,
            ]
        )
        self._watch("p", "q", "n", "budget_factor")
        c["monte_carlo"].on_click(lambda _: self.run_monte_carlo())
        self.update()

    def _draw(self):
        p, q, n, gamma, budget = self._setting()
        by_n, by_q, grounded = self.figure.subplots(1, 3)
        k = len(self.reference_qs)
        qs = (*self.reference_qs, q)  # the last curve follows the q slider
        current = {
            "color": "black",
            "linestyle": "-",
            "linewidth": 2.4,
            "label": "current q",
            "zorder": 3,
        }

        plot_success_vs_horizon(p, qs, self.ns, gamma, ax=by_n)
        curves = [line for line in by_n.lines if line.get_gid().startswith("success q=")]
        self.reference_lines, self.success_line = curves[:k], curves[k]
        self.success_line.set(**current)
        for line in curves:
            line.set_marker("None")  # every n is on the slider: a curve, not grid points
        self.n_marker = by_n.axvline(n, color=GREY, linestyle="--", linewidth=1)
        # p and the budget factor move with the sliders: they are in the readout instead.
        by_n.set_xlabel("horizon n (subtasks), B = round(γ n)")

        plot_q_sweep(n, p, budget, trials=None, ax=by_q)
        self.sweep_line = line_by_gid(self.figure, "exact")
        # The sweep is the current n, p and B over every q: drawn like the current curves.
        self.sweep_line.set(color="black", linewidth=2.2, label="exact, at the current n")
        (self.mc_points,) = by_q.plot(
            [],
            [],
            "s",
            markersize=6,
            markerfacecolor="white",
            markeredgecolor=PALETTE[5],
            label="Monte Carlo (95 % interval)",
        )
        self.mc_bars = by_q.vlines([], [], [], color=PALETTE[5], linewidth=1.5)
        self.q_marker = by_q.axvline(q, color=GREY, linestyle="--", linewidth=1)
        by_q.get_legend().remove()

        plot_grounded_survival(p, qs, t_max=self.rounds[-1], ax=grounded)
        self.survival_lines, self.half_life_points = [], []
        for line in list(grounded.lines):
            if line.get_gid().startswith("survival q="):
                self.survival_lines.append(line)
                self.half_life_points.append(None)
            elif line.get_gid().startswith("half-life q="):
                self.half_life_points[-1] = line
        for i, (line, point) in enumerate(
            zip(self.survival_lines, self.half_life_points, strict=True)
        ):
            if point is None:  # drawn only for a finite half-life; the sliders may make one
                (self.half_life_points[i],) = grounded.plot([], [], "o", color=line.get_color())
        self.grounded_line = self.survival_lines[k]
        self.grounded_line.set(**current)
        self.half_life_points[k].set(color="black", zorder=3)
        self.budget_marker = grounded.axvline(budget, color=GREY, linestyle="--", linewidth=1)
        grounded.get_legend().remove()
        by_n.get_legend().remove()
        # One legend for the three panels, under them: no legend covers a curve.
        handles = [*self.reference_lines, self.success_line, self.mc_points]
        labels = [f"q = {ref:g}" for ref in self.reference_qs] + ["current q", "Monte Carlo"]
        self.figure.legend(handles, labels, loc="outside lower center", ncols=len(handles))

        self.panels = (by_n, by_q, grounded)
        # Titles and y labels as the plot functions write them (wrapped) and short.
        self._wide_texts = (
            [textwrap.fill(ax.get_title(), 40) for ax in self.panels[::2]],
            [ax.get_ylabel() for ax in self.panels],
            [ax.get_xlabel() for ax in self.panels[:2]],
        )
        for ax in self.panels:
            ax.set_title(ax.get_title(), fontsize=10)
        self._resized(self.figure.get_figwidth() * CSS_DPI, None)
        self._drawn_for = None  # (p, gamma) of the reference curves
        self._set_scene(
            *self.reference_lines,  # they move with p and the budget factor only
            *self.survival_lines[:k],
            *self.half_life_points[:k],
            self.success_line,
            self.n_marker,
            self.sweep_line,
            self.mc_points,
            self.mc_bars,
            self.q_marker,
            self.grounded_line,
            self.half_life_points[k],
            self.budget_marker,
            *self._spines(by_n, by_q, grounded),
        )

    def moving_in_browser(self) -> Moving:
        """Every curve, marker and half-life point, which ``page/moving.js`` computes, and the
        last simulation's points whole: the browser draws them where n, p and the budget are
        the simulation's, as :meth:`_show_monte_carlo` does."""
        by_n, by_q, grounded = self.panels
        k = len(self.reference_qs)
        artists = {f"ref{i}": self.reference_lines[i] for i in range(k)}
        artists.update({f"g{i}": self.survival_lines[i] for i in range(k)})
        artists.update({f"half{i}": self.half_life_points[i] for i in range(k)})
        artists.update(
            success=self.success_line,
            n_marker=self.n_marker,
            sweep=self.sweep_line,
            q_marker=self.q_marker,
            grounded=self.grounded_line,
            half=self.half_life_points[k],
            budget_marker=self.budget_marker,
        )
        spec = {
            "n_max": int(self.ns[-1]),
            "t_max": int(self.rounds[-1]),
            "reference_qs": [float(q) for q in self.reference_qs],
            "sweep_qs": [float(q) for q in self.sweep_line.get_xdata()],
        }
        whole = {}
        if self.monte_carlo is not None:
            (n, p, budget), _ = self.monte_carlo
            spec["monte_carlo"] = {"n": int(n), "p": float(p), "budget": int(budget), "key": "mc"}
            whole["mc"] = (self.mc_points, self.mc_bars)
        axes = {"by_n": by_n, "by_q": by_q, "grounded": grounded}
        return Moving("horizon", spec, axes, artists, self._spines(*self.panels), whole)

    def _browser_layout(self) -> dict:
        """As the base class', with the last simulation's points drawn while they are
        recorded, whatever the setting."""
        if self.monte_carlo is None:
            return super()._browser_layout()
        self._show_monte_carlo(always=True)
        try:
            return super()._browser_layout()
        finally:
            self._show_monte_carlo()

    def _resized(self, width, height):
        """Short titles and y labels where the figure is narrow, the plot functions' own
        where it is wide."""
        narrow = width < NARROW
        titles, ylabels, xlabels = self._wide_texts
        by_n, by_q, grounded = self.panels
        by_n.set_title(_NARROW_TITLES[0] if narrow else titles[0], fontsize=10)
        by_q.set_title(_NARROW_TITLES[1] if narrow else _SWEEP_TITLE, fontsize=10)
        grounded.set_title(_NARROW_TITLES[2] if narrow else titles[1], fontsize=10)
        for ax, wide, short in zip(self.panels, ylabels, _NARROW_YLABELS, strict=True):
            ax.set_ylabel(short if narrow else wide)
        for ax, wide, short in zip(self.panels, xlabels, _NARROW_XLABELS, strict=False):
            ax.set_xlabel(short if narrow else wide)

    def _setting(self):
        p, q, n, gamma = (self._value(name) for name in ("p", "q", "n", "budget_factor"))
        return p, q, n, gamma, round(gamma * n)

    def _refresh(self):
        p, q, n, gamma, budget = self._setting()
        budgets = np.rint(gamma * self.ns).astype(np.int64)
        if self._drawn_for != (p, gamma):
            for line, ref_q in zip(self.reference_lines, self.reference_qs, strict=True):
                line.set_ydata(markov.success_exact(self.ns, p, ref_q, budgets))
            self._drawn_for = (p, gamma)
        curve = markov.success_exact(self.ns, p, q, budgets)
        self.success_line.set_ydata(curve)
        self.n_marker.set_xdata([n, n])
        sweep = markov.success_exact(n, p, self.sweep_line.get_xdata(), budget)
        self.sweep_line.set_ydata(sweep)
        self.q_marker.set_xdata([q, q])
        t = self.rounds
        for line, point, line_q in zip(
            self.survival_lines,
            self.half_life_points,
            (*self.reference_qs, q),
            strict=True,
        ):
            line.set_ydata(markov.grounded_survival(t, p, line_q))
            half = markov.grounded_half_life(p, line_q)
            point.set_data(([half], [0.5]) if half <= t[-1] else ([], []))
        grounded = self.grounded_line.get_ydata()
        self.budget_marker.set_xdata([budget, budget])
        self._show_monte_carlo()

        table = markov.reference_table(p, gamma, qs=(q,))
        # The rounds axis may end before the budget; g_B is then read off the formula.
        grounded_at_budget = markov.grounded_survival(budget, p, q)
        self._text(
            self.readout,
            f"<b>Reference-table row</b> for q = {q:g} (p = {p:g}, B = round({gamma:g} n)):"
            f"<pre>{html.escape(table.to_text())}</pre>"
            f"<p>At n = {n} with B = {budget} rounds: P(success) = {_fmt(curve[n - 1])}; "
            f"still grounded after B rounds: g_B = {_fmt(grounded_at_budget)}; grounded "
            f"half-life {_fmt(markov.grounded_half_life(p, q), 1)} rounds; full verification "
            f"needs γ > 1/p = {_fmt(markov.min_budget_factor(p))}.</p>",
        )
        self.values = {
            "success_by_n": curve,
            "sweep": sweep,
            "grounded": grounded,
            "budget": budget,
            "row": table.rows[0],
        }

    def _show_monte_carlo(self, *, always=False):
        """Show the last simulation if it was run at the current n, p and budget (or
        ``always``, if there is one)."""
        p, _, n, _, budget = self._setting()
        if self.monte_carlo is not None and (always or self.monte_carlo[0] == (n, p, budget)):
            result = self.monte_carlo[1]
            self.mc_points.set_data(self.mc_qs, result["estimate"])
            low = np.column_stack([self.mc_qs, result["low"]])
            high = np.column_stack([self.mc_qs, result["high"]])
            self.mc_bars.set_segments(np.stack([low, high], axis=1))
        else:
            self.mc_points.set_data([], [])
            self.mc_bars.set_segments([])

    @serialised
    def run_monte_carlo(self):
        """Simulate the q sweep at the current setting, one point at a time, and draw it."""
        p, _, n, _, budget = self._setting()
        rng = np.random.default_rng(self.seed)
        estimate, low, high = [], [], []
        self.progress.value = 0
        self.progress.layout.visibility = "visible"
        self.mc_label.value = f"simulating {len(self.mc_qs)} points x {self.trials:,} runs ..."
        start = time.perf_counter()
        try:
            for q in self.mc_qs:
                point = markov.success_monte_carlo(n, p, q, budget, trials=self.trials, seed=rng)
                estimate.append(point.estimate)
                low.append(point.low)
                high.append(point.high)
                self.progress.value += 1
        except ValueError as err:
            self.mc_label.value = ""
            self.status.value = error_html(str(err))
            return
        finally:
            self.progress.layout.visibility = "hidden"
        result = {"estimate": np.array(estimate), "low": np.array(low), "high": np.array(high)}
        self.monte_carlo = ((n, p, budget), result)
        exact = markov.success_exact(n, p, self.mc_qs, budget)
        worst = float(np.max(np.abs(result["estimate"] - exact)))
        inside = int(np.count_nonzero((result["low"] <= exact) & (exact <= result["high"])))
        self.mc_label.value = (
            f"{len(self.mc_qs)} points x {self.trials:,} runs in "
            f"{time.perf_counter() - start:.2f} s: largest gap to exact {worst:.4f}, "
            f"{inside}/{len(self.mc_qs)} intervals hold the exact value"
        )
        self.status.value = ""
        self._forget_ahead()  # the pictures of other q now show the points too
        self._restore()
        self._show_monte_carlo()
        self.render()


def horizon_explorer(
    p=0.95,
    q=0.5,
    n=50,
    budget_factor=2.0,
    *,
    n_max=200,
    reference_qs=(0.0, 0.5, 0.9, 1.0),
    mc_points=11,
    trials=20_000,
    seed=None,
):
    r"""Sliders over the audited long-horizon chain: success against n and q, and g_t.

    Parameters
    ----------
    p : float
        Start value of the executor accuracy per round, in [0, 1].
    q : float
        Start value of the audit detection probability, in [0, 1].
    n : int
        Start value of the horizon (subtasks), in [1, n_max].
    budget_factor : float
        Start value of the budget factor :math:`\gamma = B/n`, in [1, 4]; horizon ``n`` gets
        ``round(budget_factor * n)`` rounds, as in :func:`decompkit.markov.reference_table`.
    n_max : int
        Longest horizon drawn (and largest n on its slider); the rounds axis ends at
        ``2 * n_max``.
    reference_qs : sequence of float
        Audit levels drawn as thin reference curves.
    mc_points : int
        Number of equally spaced q values, from 0 to 1, that the *Monte Carlo* button
        simulates.
    trials : int
        Simulated runs per Monte Carlo point.
    seed : None, int or numpy.random.Generator
        Randomness of the Monte Carlo points; an int makes every press reproducible.

    Returns
    -------
    HorizonExplorer
        Display it in a notebook. ``.controls`` holds the sliders and the button,
        ``.run_monte_carlo()`` does what the button does, ``.values`` holds the numbers drawn.

    Raises
    ------
    ValueError
        If a start value lies outside its slider's range, or ``n_max``, ``reference_qs``,
        ``mc_points``, ``trials`` or ``seed`` is invalid.

    Notes
    -----
    Left: :func:`~decompkit.markov.success_exact` against n for the current q (black) and the
    reference levels. Middle: the same at the current n against q, with the Monte Carlo points
    (:func:`~decompkit.markov.success_monte_carlo`, Wilson 95 % intervals) once simulated;
    a change of p, n or the budget hides them, a change of q keeps them. Right:
    :func:`~decompkit.markov.grounded_survival`, with the budget B marked. Below: the row of
    :func:`~decompkit.markov.reference_table` for the current q.

    Examples
    --------
    >>> ex = horizon_explorer(p=0.95, q=0.9, n=50, budget_factor=2.0, trials=200, seed=1)
    >>> round(float(ex.values["success_by_n"][49]), 3)
    0.769
    >>> ex.controls["q"].value = 0.0
    >>> round(float(ex.values["success_by_n"][49]), 3)
    0.077
    >>> ex.controls["monte_carlo"].click()
    >>> ex.progress.value == ex.progress.max
    True
    """
    return HorizonExplorer(
        p,
        q,
        n,
        budget_factor,
        n_max=n_max,
        reference_qs=reference_qs,
        mc_points=mc_points,
        trials=trials,
        seed=seed,
    )
