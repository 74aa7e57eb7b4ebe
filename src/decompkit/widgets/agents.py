r"""Agents explorer: pass^k against k when tasks differ, beside one shared rate's p^k.

Curves against :math:`k = 1 .. k_\max`: one rate shared by every task, :math:`p^k`, and tasks
whose rates spread around the same mean (:func:`~decompkit.traces.mixture_pass_k`, Beta
rates; spread 0 is :math:`p^k`, spread 1 splits the tasks into always and never solved).
The records' own pass^k, when given, are drawn as points.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from .. import traces
from ..plots.style import GREY, PALETTE
from .base import Explorer
from .controls import float_slider, int_slider, projector_fonts, rows_html

__all__ = ["AgentsExplorer", "agents_explorer"]


class AgentsExplorer(Explorer):
    """Sliders p, spread and k over pass^k; see :func:`agents_explorer`."""

    def __init__(self, p=0.42, spread=0.3, k=3, *, recorded=None, k_max=10):
        if isinstance(k_max, bool) or not isinstance(k_max, int) or k_max < 2:
            raise ValueError(f"k_max must be an integer >= 2, got {k_max!r}")
        points = np.asarray([] if recorded is None else recorded, dtype=float)
        if points.ndim != 1 or points.size > k_max or not np.all((points >= 0) & (points <= 1)):
            raise ValueError(
                f"recorded must hold pass^1, pass^2, ... (at most k_max, in [0, 1]), "
                f"got {recorded!r}"
            )
        super().__init__(height=320)
        self.recorded = points
        self.controls = {
            "p": float_slider(
                "p", p, 0.0, 1.0, 0.01, "mean rate p", "mean success rate over the tasks"
            ),
            "spread": float_slider(
                "spread",
                spread,
                0.0,
                1.0,
                0.01,
                "spread",
                "0: every task has rate p; 1: each task is always or never solved",
            ),
            "k": int_slider("k", k, 1, k_max, "k trials", "trials that must all succeed"),
        }
        self.ks = np.arange(1, k_max + 1)
        with projector_fonts():
            self._draw()
        self.readout.layout.width, self.readout.layout.margin = "420px", "0 0 0 16px"
        self.widget = self._box(
            [
                self._row([widgets.VBox(list(self.controls.values())), self.readout]),
                self.view,
                self.status,
            ]
        )
        self._watch()
        self.update()

    def _draw(self):
        ax = self.figure.subplots()
        self.shared = ax.plot(self.ks, self.ks * 0.0, "k--", linewidth=2, label="one rate: $p^k$")[
            0
        ]
        self.mixed = ax.plot(
            self.ks, self.ks * 0.0, color=PALETTE[0], linewidth=2, label="tasks differ: pass$^k$"
        )[0]
        scene = [self.shared, self.mixed]
        if self.recorded.size:
            ks = np.arange(1, self.recorded.size + 1)
            ax.plot(ks, self.recorded, "o", color=PALETTE[1], label="your records: pass$^k$")
        self.marker = ax.axvline(1, color=GREY, linewidth=1, linestyle=":")
        ax.set(
            xlabel="trials k that must all succeed",
            ylabel="P(all k trials succeed)",
            xlim=(1, self.ks[-1]),
            ylim=(0, 1.02),
            title="Tasks that differ keep pass^k above p^k",
        )
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        self._set_scene(*scene, self.marker, *self._spines(ax))

    def _refresh(self):
        p, spread, k = (self._value(name) for name in ("p", "spread", "k"))
        shared = p ** self.ks.astype(float)
        mixed = traces.mixture_pass_k(p, spread, self.ks)
        self.shared.set_ydata(shared)
        self.mixed.set_ydata(mixed)
        self.marker.set_xdata([k, k])
        rows = [("one rate, p^k", f"{shared[k - 1]:.3f}"), ("tasks differ", f"{mixed[k - 1]:.3f}")]
        self._text(self.readout, rows_html(rows, header=("", f"pass^k at k = {k}")))
        self.values = {"shared": shared, "mixed": mixed}


def agents_explorer(p=0.42, spread=0.3, k=3, *, recorded=None, k_max=10):
    r"""Sliders over pass^k when tasks differ, against one shared rate's :math:`p^k`.

    Parameters
    ----------
    p : float
        Start value of the mean success rate, in [0, 1].
    spread : float
        Start value of how much tasks differ, in [0, 1] (see
        :func:`~decompkit.traces.mixture_pass_k`).
    k : int
        Start value of the k the readout shows, in [1, k_max].
    recorded : sequence of float, optional
        The records' pass^1, pass^2, ..., drawn as points.
    k_max : int
        Largest k drawn.

    Returns
    -------
    AgentsExplorer
        Display it in a notebook; ``.values`` holds the curves drawn.

    Raises
    ------
    ValueError
        If a start value lies outside its slider's range, or ``recorded`` is not a sequence
        of probabilities no longer than ``k_max``.

    Examples
    --------
    >>> ex = agents_explorer(p=0.5, spread=0.0, k=2)
    >>> float(ex.values["mixed"][2]), float(ex.values["shared"][2])
    (0.125, 0.125)
    >>> ex.controls["spread"].value = 1.0
    >>> float(ex.values["mixed"][2])
    0.5
    >>> ex.png()[:4]
    b'\x89PNG'
    """
    return AgentsExplorer(p, spread, k, recorded=recorded, k_max=k_max)
