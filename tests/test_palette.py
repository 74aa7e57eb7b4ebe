"""Colour that survives colour blindness: every categorical palette of the figures, simulated.

Each set of colours that tells categories apart (trace states, curve series, critical or
not) is passed through a simulation of full deuteranopia and protanopia (Machado, Oliveira
and Fernandes 2009, as ``colorspacious`` implements it, severity 100) and every two colours
of the set must stay at least ``MIN_DELTA_E`` apart in CIEDE2000.

Why 12: the trace states that a deuteranope saw as one grey were 6.5-12 apart, so 12 is the
smallest bound that rejects every pair that merged; ΔE00 of about 2 is just noticeable side
by side, and small marks on a projector need several times that. The closest Okabe-Ito pair
(blue and reddish purple under protanopia) is 14.0 apart. Colour is never the only cue (line
styles, hatches, labels; tested below too), so this is the second line of defence.
"""

from itertools import combinations

import numpy as np
import pytest
from matplotlib.colors import to_rgb

from decompkit.plots import dag as dag_plots
from decompkit.plots import scheduler as scheduler_plots
from decompkit.plots.style import DASHES, series_style
from decompkit.widgets import reliability as reliability_widget
from decompkit.widgets.trace import STATES

colorspacious = pytest.importorskip("colorspacious")

MIN_DELTA_E = 12.0
DEFICIENCIES = ("deuteranomaly", "protanomaly")


def _simulated(colour, deficiency):
    space = {"name": "sRGB1+CVD", "cvd_type": deficiency, "severity": 100}
    return np.clip(colorspacious.cspace_convert(to_rgb(colour), space, "sRGB1"), 0, 1)


def _closest_pair(colours: dict, deficiency: str):
    pairs = [
        (
            colorspacious.deltaE(
                _simulated(a, deficiency), _simulated(b, deficiency), input_space="sRGB1"
            ),
            na,
            nb,
        )
        for (na, a), (nb, b) in combinations(colours.items(), 2)
    ]
    return min(pairs)


PALETTES = {
    "trace states": {state: face for state, (face, _, _) in STATES.items()},
    "reliability curves": {k: v["color"] for k, v in reliability_widget.SERIES.items()},
    # The horizon explorer: four reference levels of q and the current one in black.
    "series of four and the current": {
        **{f"series {i}": series_style(i)["color"] for i in range(4)},
        "current": "black",
    },
    "critical or not": {
        "critical": dag_plots.CRITICAL_BOX["edgecolor"],
        "other": dag_plots.NORMAL_BOX["edgecolor"],
    },
    "trace attempts": {name: style["facecolor"] for name, style in scheduler_plots._STYLE.items()},
}


@pytest.mark.parametrize("deficiency", DEFICIENCIES)
@pytest.mark.parametrize("name", sorted(PALETTES))
def test_palette_stays_apart_under_colour_blindness(name, deficiency):
    distance, a, b = _closest_pair(PALETTES[name], deficiency)
    assert distance >= MIN_DELTA_E, (
        f"{name}: {a} and {b} are only {distance:.1f} apart (CIEDE2000) under {deficiency}"
    )


def test_the_old_trace_palette_would_fail():
    """The check can fail: the grey 'blocked' of the old palette merges with 'cancelled'."""
    old = {"done": "#009E73", "blocked": "#999999", "cancelled": "#CC79A7"}
    distance, _, _ = _closest_pair(old, "deuteranomaly")
    assert distance < MIN_DELTA_E


def test_every_state_also_has_a_hatch_or_a_plain_face_of_its_own():
    """A state is named in its box; and no two states share both face and hatch."""
    looks = [(face, hatch) for face, _, hatch in STATES.values()]
    assert len(set(looks)) == len(looks)
    stopped = {s: STATES[s][2] for s in ("failed", "blocked", "cancelled")}
    assert all(stopped.values()) and len(set(stopped.values())) == 3


def test_curve_sets_differ_in_line_style_too():
    styles = [v["linestyle"] for v in reliability_widget.SERIES.values()]
    assert len(set(styles)) == len(styles)
    assert len(set(map(str, DASHES[:7]))) == 7
    assert dag_plots.CRITICAL_BOX["linestyle"] != dag_plots.NORMAL_BOX["linestyle"]
    assert dag_plots.CRITICAL_BAR["hatch"] != dag_plots.NORMAL_BAR["hatch"]
    hatches = [style.get("hatch") for style in scheduler_plots._STYLE.values()]
    assert len(set(hatches)) == len(hatches)
