r"""Reliability explorer: what a check at each step boundary does to a chain of n steps.

Curves against the chain length :math:`n = 0 .. n_\max`: the bare chain :math:`p^n`, one retry
behind a fallible check :math:`p'^n` with :math:`p' = p + p(1-p)(d-\varphi)`, retry until the
check passes :math:`{p'_\infty}^n` with :math:`p'_\infty = p/(1-d(1-p))`, and a perfect check
with :math:`\kappa` attempts :math:`(1-(1-p)^\kappa)^n`. A (d, phi) panel shows where the
check helps (:math:`d > \varphi`) and the current check in it. Its shading is the gain
:math:`p' - p = p(1-p)(d-\varphi)` on a scale in units of :math:`p(1-p)`, which is
:math:`d - \varphi` and one picture for every p: a step of p moves the curves alone.
"""

from __future__ import annotations

import html
import textwrap

import ipywidgets as widgets
import numpy as np
from matplotlib.patches import Rectangle

from .. import reliability as rel
from ..plots.reliability import plot_d_phi_plane
from ..plots.style import GREY, PALETTE
from .base import Explorer
from .controls import float_slider, int_slider, projector_fonts, rows_html
from .moving import Moving
from .view import CSS_DPI

__all__ = ["ReliabilityExplorer", "reliability_explorer"]

#: Colour and line style of each curve: the style tells them apart without colour.
SERIES = {
    "bare": {"color": "black", "linestyle": "-"},
    "one_retry": {"color": PALETTE[0], "linestyle": "--"},
    "until_pass": {"color": PALETTE[1], "linestyle": "-."},
    "kappa": {"color": PALETTE[2], "linestyle": ":"},
}

#: Below this width (CSS pixels) the titles, the (d, phi) panel's y label and the legend take
#: their short forms: the long ones leave the figure or run into the colour bar at 150 % zoom.
NARROW = 1000
#: Legend labels of the curves: wide and short.
_LABELS = {
    "bare": ("no check: $p^n$", "no check"),
    "one_retry": (r"one retry: $p'^n$ (with $\varphi$)", "one retry"),
    "until_pass": (r"retry until pass: $p'^n_\infty$", "until pass"),
    "kappa": (r"perfect check, $\kappa$ attempts", r"$\kappa$ attempts"),
}
#: Title of the chain panel, of the (d, phi) panel and the (d, phi) panel's y label where the
#: figure is narrow.
_NARROW_TEXTS = ("Checks slow the decay", "Helps where d > phi", "false alarm, phi")
#: The colour bar's ticks: the gain's ends and 0, in units of its largest size p(1-p).
_SCALE = {-1.0: "−p(1−p)", 0.0: "0", 1.0: "p(1−p)"}
#: Over the (d, phi) panel where p(1 - p) = 0: the gain is 0 everywhere, whatever d and phi.
_NO_GAIN = "At p = 0 or 1\na check changes\nnothing"
#: The readout's verdict there (``page.js`` writes the same).
_NO_GAIN_VERDICT = "changes nothing (p = 0 or 1)"

#: Grid points per axis of the (d, phi) panel; the shading is smooth at this size already.
_PLANE_RESOLUTION = 51


def _fmt(x) -> str:
    return "inf" if np.isinf(x) else f"{x:.4f}"


class ReliabilityExplorer(Explorer):
    """Sliders p, n, d, phi and kappa over the chain-success curves; see
    :func:`reliability_explorer`."""

    #: At 150 % zoom the figure takes the room under the sliders, down to this height.
    MIN_HEIGHT = 250

    def __init__(self, p=0.9, n=10, d=0.8, phi=0.05, kappa=3, *, n_max=50, kappa_max=10):
        if isinstance(n_max, bool) or not isinstance(n_max, int) or n_max < 1:
            raise ValueError(f"n_max must be an integer >= 1, got {n_max!r}")
        if isinstance(kappa_max, bool) or not isinstance(kappa_max, int) or kappa_max < 1:
            raise ValueError(f"kappa_max must be an integer >= 1, got {kappa_max!r}")
        super().__init__(height=336)
        self.controls = {
            "p": float_slider(
                "p",
                p,
                0.0,
                1.0,
                0.005,
                "p per step",
                "probability that one attempt of a step is correct",
                fmt=".3f",
            ),
            "n": int_slider("n", n, 1, n_max, "n steps", "number of dependent steps in the chain"),
            "d": float_slider(
                "d",
                d,
                0.0,
                1.0,
                0.01,
                "d detection",
                "probability that the check flags a wrong result",
            ),
            "phi": float_slider(
                "phi",
                phi,
                0.0,
                1.0,
                0.01,
                "φ false alarm",
                "probability that the check flags a correct result (used by the one-retry curve)",
            ),
            "kappa": int_slider(
                "kappa",
                kappa,
                1,
                kappa_max,
                "κ attempts",
                "attempts allowed behind a perfect check (d = 1, phi = 0)",
            ),
        }
        self.steps = np.arange(0, n_max + 1)
        with projector_fonts():
            self._draw()
        # The readout beside the sliders, not under the figure: one screen for all of it.
        # Where the page is narrow (a projector at 150 % zoom) explorer.css puts it under
        # the figure instead, so that the sliders and the figure fit the screen together.
        self.readout.layout.width, self.readout.layout.margin = "460px", "0 0 0 16px"
        self.readout.add_class("decompkit-aside")
        self.widget = self._box(
            [
                self._row(
                    [
                        self._row(
                            [
                                widgets.VBox([self.controls[k] for k in ("p", "n", "kappa")]),
                                widgets.VBox([self.controls[k] for k in ("d", "phi")]),
                            ]
                        ),
                        self.readout,
                    ]
                ),
                self.view,
                self.status,
            ]
        )
        self.widget.children[0].add_class("decompkit-top")
        self._watch()
        self.update()

    def _draw(self):
        fig = self.figure
        left, right = fig.subplots(1, 2, width_ratios=(1.7, 1.0))
        n = self.steps
        self.lines = {
            key: left.plot(n, n * 0.0, linewidth=2, label=wide, **SERIES[key])[0]
            for key, (wide, _) in _LABELS.items()
        }
        self.marker = left.axvline(0, color="black", linewidth=1, linestyle=":")
        left.axhline(0.5, color=GREY, linestyle=":", linewidth=1, zorder=1)  # under the curves
        left.set(
            xlabel="steps in the chain, n",
            ylabel="P(all n steps correct)",
            xlim=(0, n[-1]),
            ylim=(0, 1.02),
            title="A check at each boundary slows the decay",
        )
        # Beside the axes, never over the curves or the n marker.
        self.legend = left.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        self.panels = (left, right)
        plot_d_phi_plane(self.controls["p"].value, resolution=_PLANE_RESOLUTION, ax=right)
        self.plane = right.collections[0]
        self.plane_title = right.title
        # The plot function's title ends in "(p = ...)": the shading below does not depend
        # on p, so the title keeps its words alone, wrapped to the panel.
        words = self.plane_title.get_text().rsplit("(p =", 1)[0].strip()
        self._wide_texts = (left.get_title(), textwrap.fill(words, 30), right.get_ylabel())
        self.plane_title.set_fontsize(10)
        grid = np.linspace(0.0, 1.0, _PLANE_RESOLUTION)
        self._plane_d, self._plane_phi = np.meshgrid(grid, grid)
        # The gain p' - p = p(1-p)(d - phi) over its largest size p(1-p) is d - phi: the same
        # shading at every p, on a scale whose ends are -p(1-p) and p(1-p).
        self.plane.set_array(self._plane_d - self._plane_phi)
        self.plane.set_clim(-1.0, 1.0)
        self.colorbar = self.plane.colorbar
        self.colorbar.set_ticks(list(_SCALE), labels=list(_SCALE.values()))
        self._resized(self.figure.get_figwidth() * CSS_DPI, None)
        # Where p(1 - p) = 0 the scale's ends are 0: a veil says there is no gain to shade.
        self.veil = right.add_patch(
            Rectangle((0, 0), 1, 1, transform=right.transAxes, facecolor="white", alpha=0.85)
        )
        self.veil.set(edgecolor="none", zorder=5, visible=False)
        self.veil_text = right.text(
            0.5, 0.5, _NO_GAIN, transform=right.transAxes, ha="center", va="center", zorder=6
        )
        self.veil_text.set_visible(False)
        for spine in right.spines.values():  # the frame stays black over the veil
            spine.set_zorder(6.5)
        (self.point,) = right.plot(
            [], [], "o", color="white", markeredgecolor="black", markersize=9, markeredgewidth=2
        )
        self.point.set_zorder(6.25)  # over the veil, under the frame, as the scene paints it
        # The plane, its colour bar and title are background: the dot moves on it, and the
        # veil shows at p = 0 and 1 only.
        self._set_scene(
            *self.lines.values(),
            self.marker,
            self.veil,
            self.veil_text,
            self.point,
            *self._spines(left, right),
        )

    def moving_in_browser(self) -> Moving:
        """The curves, the n marker and the (d, phi) point, which ``page/moving.js`` computes
        (at p = 0 or 1 it leaves the picture to the kernel: the veil and its text)."""
        left, plane = self.panels
        artists = {**self.lines, "marker": self.marker, "point": self.point}
        spec = {"n_max": int(self.steps[-1])}
        return Moving(
            "reliability", spec, {"left": left, "plane": plane}, artists, self._spines(left, plane)
        )

    def _resized(self, width, height):
        """Short titles, (d, phi) y label and legend where the figure is narrow, the wide ones
        where it is wide."""
        narrow = int(width < NARROW)  # 1: the short forms
        left, right = self.panels
        texts = _NARROW_TEXTS if narrow else self._wide_texts
        # The texts' own setters: set_title would reset the font size outside projector_fonts.
        left.title.set_text(texts[0])
        self.plane_title.set_text(texts[1])
        right.yaxis.label.set_text(texts[2])
        for key, text in zip(self.lines, self.legend.get_texts(), strict=True):
            text.set_text(_LABELS[key][narrow])

    def _refresh(self):
        v = {name: self._value(name) for name in self.controls}
        p, n, d, phi, kappa = v["p"], v["n"], v["d"], v["phi"], v["kappa"]
        rates = {
            "bare": p,
            "one_retry": rel.checked_step_fallible(p, d, phi),
            "until_pass": rel.checked_step_limit(p, d),
            "kappa": rel.perfect_check_attempts(p, kappa),
        }
        curves = {key: rel.chain_success(rate, self.steps) for key, rate in rates.items()}
        gain = rel.checked_step_fallible(p, self._plane_d, self._plane_phi) - p
        helps = rel.check_helps(d, phi)
        attempts = rel.expected_attempts(p, d)
        for key, line in self.lines.items():
            line.set_ydata(curves[key])
        self.marker.set_xdata([n, n])
        self.point.set_data([d], [phi])
        no_gain = p * (1 - p) == 0
        self.veil.set_visible(no_gain)
        self.veil_text.set_visible(no_gain)
        verdict = (
            _NO_GAIN_VERDICT if no_gain else "helps (d > φ)" if helps else "does not help (d ≤ φ)"
        )
        self._text(
            self.readout,
            rows_html(
                [
                    ("no check", _fmt(p), _fmt(curves["bare"][n])),
                    (
                        "one retry, fallible check",
                        _fmt(rates["one_retry"]),
                        _fmt(curves["one_retry"][n]),
                    ),
                    ("retry until pass", _fmt(rates["until_pass"]), _fmt(curves["until_pass"][n])),
                    (f"perfect check, κ = {kappa}", _fmt(rates["kappa"]), _fmt(curves["kappa"][n])),
                ],
                header=("", "per step", f"chain of n = {n}"),
            )
            + (
                f'<p class="decompkit-note">The check {html.escape(verdict)}. '
                f"Retry until pass: E[attempts] = {_fmt(attempts)}; "
                f"undetected floor (1-p)(1-d) = {_fmt(rel.undetected_floor(p, d))}; "
                f"half-life of the bare chain = {_fmt(rel.half_life(p))} steps.</p>"
            ),
        )
        self.values = {"rates": rates, "curves": curves, "gain": gain, "helps": helps}


def reliability_explorer(p=0.9, n=10, d=0.8, phi=0.05, kappa=3, *, n_max=50, kappa_max=10):
    r"""Sliders over the success of a chain with and without checks at its boundaries.

    Parameters
    ----------
    p : float
        Start value of the per-step success rate, in [0, 1].
    n : int
        Start value of the chain length whose numbers the readout shows, in [1, n_max].
    d : float
        Start value of the check's detection rate, in [0, 1].
    phi : float
        Start value of the check's false-positive rate, in [0, 1].
    kappa : int
        Start value of the attempts allowed behind a perfect check, in [1, kappa_max].
    n_max : int
        Longest chain drawn (and largest n on its slider).
    kappa_max : int
        Largest kappa on its slider.

    Returns
    -------
    ReliabilityExplorer
        Display it in a notebook; ``.controls`` holds the sliders, ``.figure`` the figure,
        ``.values`` the numbers drawn.

    Raises
    ------
    ValueError
        If a start value lies outside its slider's range (a slider would clamp it silently).

    Notes
    -----
    Curves: :math:`p^n`, :func:`~decompkit.reliability.checked_step_fallible` and
    :func:`~decompkit.reliability.checked_step_limit` raised to the power n, and
    :func:`~decompkit.reliability.perfect_check_attempts` to the power n; the vertical line
    marks the slider's n. The (d, phi) panel is :func:`~decompkit.plots.plot_d_phi_plane` with the
    current check as a white dot, its scale in units of p(1 - p): the gain
    :math:`p' - p = p(1-p)(d - \varphi)` there is :math:`d - \varphi` at every p.

    Examples
    --------
    >>> ex = reliability_explorer(p=0.9, n=10, d=1.0, phi=0.0)
    >>> round(float(ex.values["curves"]["one_retry"][10]), 3)
    0.904
    >>> ex.controls["d"].value = 0.0
    >>> round(float(ex.values["curves"]["one_retry"][10]), 4)
    0.3487
    >>> ex.png()[:4]
    b'\x89PNG'
    """
    return ReliabilityExplorer(p, n, d, phi, kappa, n_max=n_max, kappa_max=kappa_max)
