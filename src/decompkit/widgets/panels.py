"""Two panels of one figure, the plan and the Gantt chart: both where the notebook is wide,
one at a time, chosen with two buttons, where it is narrow (a projector at 150 % zoom).

The trace stepper puts its panels side by side and the DAG explorer one above the other;
both hand the switch between arrangements and the buttons to :class:`TwoPanels`.
"""

from __future__ import annotations

import ipywidgets as widgets

from .base import serialised

__all__ = ["ONE_PANEL", "ONE_PANEL_BELOW", "PANELS", "TwoPanels"]

#: Below this width (CSS pixels) the figure shows one panel at a time, the plan or the Gantt
#: chart, each as wide as the notebook, chosen with two buttons (the plan first: its boxes
#: are what a change moves). A projector at 150 % zoom (1280 x 720: about 673 x 320 CSS
#: pixels under the controls in JupyterLab) has room for neither two panels beside each
#: other (the plan's generations need about 85 pixels each, the Gantt chart's bars as much
#: again) nor one above the other (the plan's lanes need about 45 pixels each, the Gantt
#: chart's rows 15: 360 pixels and more for the lecture's trace). Side by side, the lecture's
#: plan needs 1030 pixels (at 1000 its boxes ran into each other).
ONE_PANEL_BELOW = 1050
#: The name of the narrow arrangement.
ONE_PANEL = "one panel"
#: The panel buttons' labels and the panel each shows.
PANELS = {"plan": "plan", "Gantt chart": "gantt"}


class TwoPanels:
    """Mixin for an :class:`~decompkit.widgets.base.Explorer` whose figure has a plan and a
    Gantt chart: the arrangement follows the width the page reports.

    The explorer sets :attr:`BOTH` and :attr:`BOTH_GRID`, calls :meth:`_panel_buttons`
    once and provides ``_plan_slot`` and ``gantt_ax`` (the axes of the panels' places),
    ``_height_of(arrangement)`` (the figure's height in CSS pixels) and ``_show_panels()``
    (show the panels of :meth:`_shown`, starting with :meth:`_show_buttons`).
    """

    #: The arrangement where both panels are shown.
    BOTH = "both"
    #: Its grid of two cells, plan first (``Figure.add_gridspec``'s arguments).
    BOTH_GRID: dict = {"nrows": 1, "ncols": 2}

    def _panel_buttons(self, plan_tip: str, gantt_tip: str) -> widgets.ToggleButtons:
        """The plan / Gantt chart buttons (``self.panel``), shown only in one panel."""
        self.arrangement = self.BOTH
        self.panel = widgets.ToggleButtons(
            options=list(PANELS.items()),
            value="plan",
            tooltips=[plan_tip, gantt_tip],
            style={"button_width": "auto"},
        )
        self.panel.observe(self._on_panel, names="value")
        return self.panel

    @serialised
    def _on_screen(self, change):
        """One panel at a time where the notebook is narrow, both elsewhere."""
        width = int(change["new"][0])
        arrangement = ONE_PANEL if width < ONE_PANEL_BELOW else self.BOTH
        if arrangement != self.arrangement:
            self.arrangement, self._height = arrangement, self._height_of(arrangement)
            self._place(arrangement == ONE_PANEL)
            self._show_panels()
        super()._on_screen(change)

    def _place(self, one):
        """Both panels in one cell of the figure (one of them is shown), or in the grid of
        the wide arrangement."""
        grid = self.figure.add_gridspec(**({"nrows": 1, "ncols": 1} if one else self.BOTH_GRID))
        self._plan_slot.set_subplotspec(grid[0])
        self.gantt_ax.set_subplotspec(grid[0 if one else 1])

    def _show_buttons(self) -> bool:
        """The panel buttons on screen and usable in one panel only; whether it is one."""
        one = self.arrangement == ONE_PANEL
        self.panel.layout.display = "flex" if one else "none"
        self.panel.disabled = not one
        return one

    @serialised
    def _on_panel(self, change):
        """The panel buttons: the other panel, on a background of its own."""
        self._show_panels()
        self._forget_ahead()
        self._laid_out = False
        self.update()

    def _shown(self) -> set:
        """The panels on screen: both in the wide arrangement, else the one the buttons chose."""
        return {"plan", "gantt"} if self.arrangement == self.BOTH else {self.panel.value}
