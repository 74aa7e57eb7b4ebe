"""Headless tests of the live explorers: controls drive the figure, the image and the text.

Each explorer is built once per module (a first render costs a few hundred milliseconds) and
its controls are reset to the start values before every test.
"""

import asyncio
import base64
import gc
import html
import importlib.util
import io
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.text import Annotation
from numpy.testing import assert_allclose
from PIL import Image

from decompkit import dag, examples, markov
from decompkit import reliability as rel
from decompkit import scheduler as sc
from decompkit.plots.dag import plot_dag
from decompkit.widgets import (
    DagExplorer,
    HorizonExplorer,
    ReliabilityExplorer,
    TraceStepper,
    dag_explorer,
    horizon_explorer,
    reliability_explorer,
    trace_stepper,
)
from decompkit.widgets import view as view_module
from decompkit.widgets.controls import projector_fonts
from decompkit.widgets.dag import time_axis_end
from decompkit.widgets.looks import look
from decompkit.widgets.render import Renderer
from decompkit.widgets.view import MAX_RATIO, FigureView

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from scene_replay import replay  # noqa: E402

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

# Exact lecture figures are printed to 3 or 4 decimals; compare within half a unit of the last.
TOL3 = 5e-4
TOL4 = 5e-5


def png(explorer) -> bytes:
    return explorer.png()


def pixels(explorer) -> np.ndarray:
    with Image.open(io.BytesIO(png(explorer))) as image:
        return np.asarray(image)


def sliders(explorer):
    return {name: c for name, c in explorer.controls.items() if hasattr(c, "min")}


def other_value(control):
    """A value of the slider's range different from its current value."""
    value = control.min if control.value != control.min else control.max
    return int(value) if isinstance(control.value, int) else value


def figures_alive() -> int:
    gc.collect()
    return sum(isinstance(obj, Figure) for obj in gc.get_objects())


@pytest.fixture(scope="module")
def _reliability():
    return reliability_explorer()


@pytest.fixture(scope="module")
def _horizon():
    # Few runs per Monte Carlo point keep the button fast; the tolerance below allows for it.
    return horizon_explorer(trials=400, seed=7)


@pytest.fixture(scope="module")
def _dag():
    return dag_explorer("A", workers=2)


def repaired_run():
    """Example A with the first test run red and the code diagnosed as wrong."""
    a = examples.coding_task()
    return sc.run_with_repair(
        a.graph,
        a.durations,
        workers=2,
        step=sc.scripted({"run_tests": ["fail"]}),
        faulty={"run_tests": "write_code"},
    )


@pytest.fixture(scope="module")
def _trace():
    return trace_stepper(repaired_run())


def _reset(explorer, start):
    with explorer._hold():  # one update for the lot
        for name, value in start.items():
            explorer.controls[name].value = value
    explorer.update()
    assert explorer.status.value == ""
    return explorer


@pytest.fixture
def rel_ex(_reliability):
    return _reset(_reliability, {"p": 0.9, "n": 10, "d": 0.8, "phi": 0.05, "kappa": 3})


@pytest.fixture
def dag_ex(_dag):
    if _dag.controls["example"].value != "A":
        _dag.controls["example"].value = "A"
    start = {f"duration {n}": d for n, d in examples.coding_task().durations.items()}
    start.update(workers=2, spurious_edge=False)
    return _reset(_dag, start)


@pytest.fixture
def trace_ex(_trace):
    return _reset(_trace, {"event": 0})


@pytest.fixture
def hor_ex(_horizon):
    _horizon.monte_carlo = None
    return _reset(_horizon, {"p": 0.95, "q": 0.5, "n": 50, "budget_factor": 2.0})


# ---------------------------------------------------------------------------------------------
# Reliability explorer
# ---------------------------------------------------------------------------------------------


def _reliability_curves(ex):
    c = {k: v.value for k, v in ex.controls.items()}
    m = ex.steps
    return {
        "bare": rel.chain_success(c["p"], m),
        "one_retry": rel.chain_success(rel.checked_step_fallible(c["p"], c["d"], c["phi"]), m),
        "until_pass": rel.chain_success(rel.checked_step_limit(c["p"], c["d"]), m),
        "kappa": rel.chain_success(rel.perfect_check_attempts(c["p"], c["kappa"]), m),
    }


@pytest.mark.parametrize(
    "name, value", [("p", 0.8), ("n", 25), ("d", 0.3), ("phi", 0.4), ("kappa", 7)]
)
def test_reliability_each_slider_redraws(rel_ex, name, value):
    before_png, before_text = png(rel_ex), rel_ex.readout.value
    before_renders = rel_ex.renders
    rel_ex.controls[name].value = value
    assert rel_ex.renders == before_renders + 1
    assert png(rel_ex) != before_png
    assert rel_ex.readout.value != before_text
    expected = _reliability_curves(rel_ex)
    for key, line in rel_ex.lines.items():
        assert_allclose(line.get_ydata(), expected[key], rtol=0, atol=1e-15)
    n = rel_ex.controls["n"].value
    assert list(rel_ex.marker.get_xdata()) == [n, n]
    assert f"chain of n = {n}" in rel_ex.readout.value
    d, phi = rel_ex.controls["d"].value, rel_ex.controls["phi"].value
    assert list(rel_ex.point.get_xdata()) == [d] and list(rel_ex.point.get_ydata()) == [phi]


def test_reliability_d_phi_shading_is_the_gain_in_units_of_p_1_minus_p(rel_ex):
    """The shading is the gain p' - p over its largest size p(1 - p), the same picture at
    every p; the colour bar says so, and a step of p draws nothing on the plane anew."""
    d, phi = rel_ex._plane_d, rel_ex._plane_phi
    before = (np.array(rel_ex.plane.get_array()), rel_ex.plane.get_clim())
    for p in (0.7, 0.31, 0.9):
        rel_ex.controls["p"].value = p
        gain = rel.checked_step_fallible(p, d, phi) - p
        shading = np.asarray(rel_ex.plane.get_array()).reshape(gain.shape)
        assert_allclose(shading * p * (1 - p), gain, rtol=0, atol=1e-15)
        assert_allclose(rel_ex.values["gain"], gain, rtol=0, atol=0)
        assert (shading == before[0]).all() and rel_ex.plane.get_clim() == before[1] == (-1, 1)
    labels = [t.get_text() for t in rel_ex.colorbar.ax.get_yticklabels()]
    assert list(rel_ex.colorbar.get_ticks()) == [-1, 0, 1]
    assert labels == ["−p(1−p)", "0", "p(1−p)"]
    assert "p =" not in rel_ex.plane_title.get_text()
    moving = rel_ex.renderer.moving
    assert rel_ex.plane not in moving and rel_ex.colorbar.ax not in moving


def test_reliability_lecture_figures(rel_ex):
    rel_ex.controls["d"].value = 1.0
    rel_ex.controls["phi"].value = 0.0
    rel_ex.controls["kappa"].value = 2
    curves = rel_ex.values["curves"]
    assert_allclose(curves["bare"][10], 0.3487, atol=TOL4)  # 0.9^10
    assert_allclose(curves["one_retry"][10], 0.904, atol=TOL3)  # per-step check, d = 1
    assert_allclose(curves["until_pass"][10], 1.0, atol=1e-12)  # p'_inf = 1 at d = 1
    assert_allclose(rel_ex.values["rates"]["kappa"], 0.99, atol=1e-12)  # 1 - 0.1^2
    assert "E[attempts] = 1.1111" in rel_ex.readout.value  # 1 / 0.9
    rel_ex.controls["p"].value = 0.8
    assert_allclose(rel_ex.values["curves"]["bare"][10], 0.1074, atol=TOL4)


def test_reliability_axes_use_the_sliders_letter_for_the_chain_length(rel_ex):
    """The slider and the table say n; so do the axis and the legend."""
    left = rel_ex.figure.axes[0]
    assert rel_ex.controls["n"].description.startswith("n")
    assert left.get_xlabel().endswith(", n") and "all n steps" in left.get_ylabel()
    legend = [text.get_text() for text in left.get_legend().get_texts()]
    assert "no check: $p^n$" in legend and not any("^m" in label for label in legend)


def test_reliability_says_whether_the_check_helps(rel_ex):
    assert "helps (d &gt; φ)" in rel_ex.readout.value
    rel_ex.controls["phi"].value = 0.9
    assert "does not help (d ≤ φ)" in rel_ex.readout.value
    assert not rel_ex.values["helps"]
    # d = phi: the one-retry curve coincides with the bare chain.
    rel_ex.controls["d"].value = 0.9
    assert_allclose(rel_ex.lines["one_retry"].get_ydata(), rel_ex.lines["bare"].get_ydata())


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"p": 1.2}, r"p must be in \[0, 1\], got 1.2"),
        ({"d": -0.1}, r"d must be in \[0, 1\], got -0.1"),
        ({"phi": float("nan")}, r"phi must be in \[0, 1\], got nan"),
        ({"n": 0}, r"n must be in \[1, 50\], got 0"),
        ({"n": 60}, r"n must be in \[1, 50\], got 60"),
        ({"n": 2.5}, r"n must be an integer, got 2.5"),
        ({"kappa": 11}, r"kappa must be in \[1, 10\], got 11"),
        ({"p": "0.9"}, r"p must be a number, got '0.9'"),
        ({"n_max": 0}, r"n_max must be an integer >= 1, got 0"),
        ({"kappa_max": True}, r"kappa_max must be an integer >= 1, got True"),
    ],
)
def test_reliability_rejects_bad_start_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        reliability_explorer(**kwargs)


# ---------------------------------------------------------------------------------------------
# Horizon explorer
# ---------------------------------------------------------------------------------------------


def _budgets(ex):
    return np.rint(ex.controls["budget_factor"].value * ex.ns).astype(int)


@pytest.mark.parametrize(
    "name, value", [("p", 0.9), ("q", 0.8), ("n", 120), ("budget_factor", 1.5)]
)
def test_horizon_each_slider_redraws(hor_ex, name, value):
    before_png, before_text = png(hor_ex), hor_ex.readout.value
    hor_ex.controls[name].value = value
    assert png(hor_ex) != before_png
    assert hor_ex.readout.value != before_text
    c = {k: w.value for k, w in sliders(hor_ex).items()}
    p, q, n, gamma = c["p"], c["q"], c["n"], c["budget_factor"]
    budget = round(gamma * n)
    expected = markov.success_exact(hor_ex.ns, p, q, _budgets(hor_ex))
    assert_allclose(hor_ex.success_line.get_ydata(), expected, rtol=1e-13, atol=0)
    for line, ref_q in zip(hor_ex.reference_lines, hor_ex.reference_qs, strict=True):
        assert_allclose(
            line.get_ydata(), markov.success_exact(hor_ex.ns, p, ref_q, _budgets(hor_ex))
        )
    qs = hor_ex.sweep_line.get_xdata()
    assert_allclose(hor_ex.sweep_line.get_ydata(), markov.success_exact(n, p, qs, budget))
    assert_allclose(hor_ex.grounded_line.get_ydata(), markov.grounded_survival(hor_ex.rounds, p, q))
    assert list(hor_ex.n_marker.get_xdata()) == [n, n]
    assert list(hor_ex.q_marker.get_xdata()) == [q, q]
    assert list(hor_ex.budget_marker.get_xdata()) == [budget, budget]
    assert f"At n = {n} with B = {budget} rounds" in hor_ex.readout.value
    assert f"| {q:.2f} |" in hor_ex.readout.value  # the reference-table row of the current q


def _assert_steps_render_no_bitmap(explorer, names):
    """Steps of 1, 7 and 23 on each slider of ``names`` render no text bitmap, and the picture
    is a full draw's once the sliders are back."""
    for name in names:
        slider = explorer.controls[name]
        start = slider.value
        rendered = explorer.renderer.sprites.rendered
        for k in (1, 7, 23):
            value = min(start + k * slider.step, slider.max)
            slider.value = round(value) if isinstance(start, int) else round(value, 12)
        assert explorer.renderer.sprites.rendered == rendered, name
        slider.value = start
    assert _share_of_pixels_unlike_a_full_draw(explorer) < SCENE_TOLERANCE


def test_horizon_steps_of_n_and_the_budget_draw_no_new_text(hor_ex):
    """n and the budget factor move curves and markers only: no text of the picture changes
    with them, so a step renders no bitmap (a new text cost about half of the update)."""
    _assert_steps_render_no_bitmap(hor_ex, ("n", "budget_factor"))


def test_reliability_at_p_0_or_1_the_plane_says_a_check_changes_nothing(rel_ex):
    """There p(1 - p), the scale's end, is 0: a veil over the plane and the readout say that
    no check changes anything (the lecture page's readout says it in the same words)."""
    from decompkit.widgets import reliability as module

    for p, veiled in ((1.0, True), (0.5, False), (0.0, True)):
        rel_ex.controls["p"].value = p
        assert rel_ex.veil.get_visible() == rel_ex.veil_text.get_visible() == veiled, p
        assert (module._NO_GAIN_VERDICT in rel_ex.readout.value) == veiled, p
        assert (np.asarray(rel_ex.values["gain"]) == 0).all() == veiled, p
        assert _share_of_pixels_unlike_a_full_draw(rel_ex) < SCENE_TOLERANCE, p
    page_js = (ROOT / "src" / "decompkit" / "page" / "page.js").read_text(encoding="utf-8")
    assert f'const NO_GAIN = "{module._NO_GAIN_VERDICT}";' in page_js


def test_reliability_steps_of_any_slider_draw_no_new_text(rel_ex):
    """Every slider moves curves, the n marker or the dot only: a step renders no bitmap (a
    step of p drew the plane's title and colour bar anew, about 18 ms of a 20 ms update)."""
    _assert_steps_render_no_bitmap(rel_ex, sliders(rel_ex))


def test_horizon_reproduces_the_reference_table(hor_ex):
    # Lecture table, p = 0.95, B = 2n: success at n = 10, 25, 50, 100, 200.
    table = {
        0.0: [0.599, 0.277, 0.077, 0.006, 0.000],
        0.5: [0.771, 0.522, 0.273, 0.074, 0.006],
        0.9: [0.949, 0.877, 0.769, 0.592, 0.350],
        1.0: [1.000, 1.000, 1.000, 1.000, 1.000],
    }
    half_life = {0.0: "13.5", 0.5: "27.4", 0.9: "138.3", 1.0: "inf"}
    collapse = {0.0: "15", 0.5: "30", 0.9: "135", 1.0: ">200"}
    index = np.array([10, 25, 50, 100, 200]) - 1
    for q, row in table.items():
        hor_ex.controls["q"].value = q
        assert_allclose(hor_ex.success_line.get_ydata()[index], row, atol=TOL3)
        table_text = html.unescape(hor_ex.readout.value.split("<pre>")[1].split("</pre>")[0])
        cells = table_text.splitlines()[2]
        cells = [cell.strip() for cell in cells.strip("|").split("|")]
        assert cells[-2:] == [collapse[q], half_life[q]]
    # The grounded survival after 100 rounds at q = 0.9: 0.6058.
    hor_ex.controls["q"].value = 0.9
    assert_allclose(hor_ex.grounded_line.get_ydata()[100], 0.6058, atol=TOL4)
    # Half-life markers sit on g = 1/2 at the grounded half-life.
    assert_allclose(hor_ex.half_life_points[-1].get_xdata(), [138.3], atol=0.05)
    assert "1/p = 1.053" in hor_ex.readout.value


def test_horizon_half_life_marker_disappears_when_infinite(hor_ex):
    hor_ex.controls["q"].value = 1.0
    assert len(hor_ex.half_life_points[-1].get_xdata()) == 0
    hor_ex.controls["q"].value = 0.0
    assert_allclose(hor_ex.half_life_points[-1].get_xdata(), [13.51], atol=0.01)


def test_horizon_monte_carlo_button(hor_ex):
    before = png(hor_ex)
    # the progress bar shows only while a simulation runs, not as an empty box before it
    assert hor_ex.progress.layout.visibility == "hidden"
    seen = []
    hor_ex.progress.observe(lambda _: seen.append(hor_ex.progress.layout.visibility), "value")
    hor_ex.controls["monte_carlo"].click()
    assert seen and set(seen) == {"visible"}
    assert hor_ex.progress.layout.visibility == "hidden"
    assert hor_ex.progress.value == hor_ex.progress.max == len(hor_ex.mc_qs)
    assert png(hor_ex) != before
    estimate = hor_ex.mc_points.get_ydata()
    assert_allclose(hor_ex.mc_points.get_xdata(), np.linspace(0, 1, 11))
    exact = markov.success_exact(50, 0.95, hor_ex.mc_qs, 100)
    # 400 runs per point: the standard error is at most 0.025; 0.1 is four of them.
    assert np.all(np.abs(estimate - exact) < 0.1)
    segments = hor_ex.mc_bars.get_segments()
    assert len(segments) == 11
    assert all(seg[0, 1] <= est <= seg[1, 1] for seg, est in zip(segments, estimate, strict=True))
    assert "400 runs" in hor_ex.mc_label.value
    # The same seed reproduces the points.
    hor_ex.run_monte_carlo()
    assert_allclose(hor_ex.mc_points.get_ydata(), estimate)
    # q does not enter the simulated sweep: the points stay. n does: they go.
    hor_ex.controls["q"].value = 0.3
    assert len(hor_ex.mc_points.get_xdata()) == 11
    hor_ex.controls["n"].value = 60
    assert len(hor_ex.mc_points.get_xdata()) == 0
    assert len(hor_ex.mc_bars.get_segments()) == 0


def test_horizon_monte_carlo_error_is_shown(hor_ex, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("trials must be an integer >= 1, got 0")

    monkeypatch.setattr(markov, "success_monte_carlo", broken)
    hor_ex.run_monte_carlo()
    assert "trials must be an integer &gt;= 1, got 0" in hor_ex.status.value
    assert len(hor_ex.mc_points.get_xdata()) == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"q": 1.5}, r"q must be in \[0, 1\], got 1.5"),
        ({"n": 201}, r"n must be in \[1, 200\], got 201"),
        ({"budget_factor": 0.5}, r"budget_factor must be in \[1, 4\], got 0.5"),
        ({"trials": 0}, r"trials must be an integer >= 1, got 0"),
        ({"mc_points": 1}, r"mc_points must be an integer >= 2, got 1"),
        ({"reference_qs": (0.5, 2.0)}, r"reference_qs must be in \[0, 1\], got 2.0"),
        ({"seed": -1}, r"seed must be None, an integer >= 0 .*, got -1"),
        ({"seed": "x"}, r"seed must be None, an integer >= 0 .*, got 'x'"),
    ],
)
def test_horizon_rejects_bad_start_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        horizon_explorer(**kwargs)


# ---------------------------------------------------------------------------------------------
# DAG explorer
# ---------------------------------------------------------------------------------------------


def _gantt_bars(ex):
    """(start, width) of every bar of the Gantt panel, sorted."""
    return sorted((p.get_x(), p.get_width()) for p in ex.gantt_ax.patches)


def _dag_look(ax, graph):
    """Per task its box text and edge colour, per edge its colour and width, and the title."""
    boxes = {t.get_text().split("\n")[0]: t for t in ax.texts if not isinstance(t, Annotation)}
    where = {tuple(b.get_position()): name for name, b in boxes.items()}
    arrows = {
        (where[tuple(a.xyann)], where[tuple(a.xy)]): a
        for a in ax.texts
        if isinstance(a, Annotation)
    }
    return (
        {n: (b.get_text(), to_hex(b.get_bbox_patch().get_edgecolor())) for n, b in boxes.items()},
        {
            e: (to_hex(a.arrow_patch.get_edgecolor()), a.arrow_patch.get_linewidth())
            for e, a in arrows.items()
        },
        ax.get_title(),
    )


@pytest.mark.parametrize("node", list(examples.coding_task().durations))
def test_dag_each_duration_slider_redraws(dag_ex, node):
    before_png, before_text = png(dag_ex), dag_ex.readout.value
    slider = dag_ex.controls[f"duration {node}"]
    slider.value = 7
    assert png(dag_ex) != before_png
    assert dag_ex.readout.value != before_text
    a = examples.coding_task()
    durations = a.with_duration(node, 7)
    cp = dag.critical_path(a.graph, durations)
    schedule = dag.list_schedule(a.graph, durations, 2)
    assert dag_ex.values["critical_path"] == cp
    assert dag_ex.values["schedule"] == schedule
    assert dag_ex.node_boxes[node].get_text().endswith(f"d = 7, slack {cp.slack[node]:g}")
    expected = sorted((schedule.start[v], d) for v, d in durations.items() if d > 0)
    assert _gantt_bars(dag_ex) == expected
    assert f"makespan {schedule.makespan:g} units" in dag_ex.readout.value


def test_dag_in_place_restyle_matches_a_fresh_plot_dag(dag_ex):
    """The texts and colours changed in place are those plot_dag would draw from scratch.

    The title is the explorer's own, shorter one (the totals are in the readout).
    """
    a = examples.coding_task()
    for node, value in [("write_tests", 9), ("fetch_data", 1), ("report", 0)]:
        dag_ex.controls[f"duration {node}"].value = value
        durations = {n: s.value for n, s in dag_ex.duration_sliders.items()}
        fresh = plot_dag(a.graph, durations, labels=a.labels).axes[0]
        boxes, arrows, _ = _dag_look(dag_ex.dag_ax, a.graph)
        assert (boxes, arrows) == _dag_look(fresh, a.graph)[:2]
        cp = dag.critical_path(a.graph, durations)
        assert dag_ex.dag_ax.get_title() == f"Critical path (highlighted): {cp.makespan:g} units"
        # no node ids, which the boxes and sliders do not show: the path is highlighted
        assert f"Critical path (highlighted): {cp.makespan:g} units;" in dag_ex.readout.value


def test_dag_workers_slider_reschedules(dag_ex):
    for workers in (1, 3):
        dag_ex.controls["workers"].value = workers
        schedule = dag_ex.values["schedule"]
        assert schedule.workers == workers
        labels = [t.get_text() for t in dag_ex.gantt_ax.get_yticklabels()]
        assert labels == [f"worker {w + 1}" for w in range(workers)]
    assert dag_ex.values["schedule"].makespan == 10
    dag_ex.controls["workers"].value = 1
    assert dag_ex.values["schedule"].makespan == 12  # serial


def test_dag_lecture_figures_example_a(dag_ex):
    cp = dag_ex.values["critical_path"]
    assert (cp.makespan, cp.serial_time, cp.slack["write_tests"]) == (10, 12, 5)
    assert cp.path == ["read_spec", "fetch_data", "write_code", "run_tests", "report"]
    assert dag_ex.dag_ax.get_title().endswith(": 10 units")
    assert ": 10 units; serial 12; on " in dag_ex.readout.value
    dag_ex.controls["spurious_edge"].value = True  # fetch_data -> write_tests
    cp = dag_ex.values["critical_path"]
    assert (cp.makespan, cp.slack["write_tests"]) == (10, 2)
    assert "fetch_data" in dag_ex.values["graph"]["write_tests"]
    assert dag_ex.controls["coordination"].disabled and dag_ex.controls["resources"].disabled


def test_dag_lecture_figures_example_b(dag_ex):
    figure, alive = dag_ex.figure, figures_alive()
    before = png(dag_ex)
    dag_ex.controls["example"].value = "B"
    assert dag_ex.figure is figure and figures_alive() == alive
    assert dag_ex.gantt_ax.get_xlabel() == "time (slots)"  # B counts in slots, A in units
    assert png(dag_ex) != before
    assert "duration read_spec" not in dag_ex.controls
    assert set(dag_ex.duration_sliders) == set("FSRPEDAYV")
    assert dag_ex.controls["spurious_edge"].disabled
    dag_ex.controls["workers"].value = 4
    cp = dag_ex.values["critical_path"]
    assert (cp.serial_time, cp.makespan, cp.path) == (30, 18, list("FSEAYV"))
    dag_ex.controls["duration D"].value = 3  # cutting D changes nothing
    assert dag_ex.values["critical_path"].makespan == 18
    dag_ex.controls["duration D"].value = 5
    dag_ex.controls["duration E"].value = 6  # cutting E gives 16
    assert dag_ex.values["critical_path"].makespan == 16
    dag_ex.controls["duration E"].value = 8
    dag_ex.controls["coordination"].value = True  # 34 work, 22 wall
    cp, schedule = dag_ex.values["critical_path"], dag_ex.values["schedule"]
    assert (cp.serial_time, cp.makespan, schedule.makespan) == (34, 22, 22)
    assert_allclose(examples.speedup(30, schedule.makespan), 1.36, atol=0.005)
    dag_ex.controls["resources"].value = True  # one tenant lock: 33 with coordination
    assert dag_ex.values["schedule"].makespan == 33
    dag_ex.controls["coordination"].value = False  # 29 without
    assert dag_ex.values["schedule"].makespan == 29


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"example": "C"}, r"example must be one of \['A', 'B'\], got 'C'"),
        ({"workers": 0}, r"workers must be in \[1, 6\], got 0"),
        ({"workers": 2.0}, r"workers must be an integer, got 2.0"),
    ],
)
def test_dag_rejects_bad_start_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dag_explorer(**kwargs)


# ---------------------------------------------------------------------------------------------
# Trace stepper
# ---------------------------------------------------------------------------------------------


def test_trace_buttons_and_slider_step_through_events(trace_ex):
    c = trace_ex.controls
    n = len(trace_ex.events)
    assert c["event"].max == n and c["back"].disabled and not c["forward"].disabled
    images, tables = {png(trace_ex)}, {trace_ex.table.value}
    for k in range(1, 6):
        c["forward"].click()
        assert c["event"].value == k
        event = trace_ex.events[k - 1]
        assert list(trace_ex.cursor.get_xdata()) == [event.time, event.time]
        assert f"After event {k} of {n}" in trace_ex.dag_ax.get_title()
        assert '<tr class="current"><td>' + str(k) in (trace_ex.table.value)
        images.add(png(trace_ex))
        tables.add(trace_ex.table.value)
    assert len(tables) == 6  # every step changed the table
    assert len(images) >= 4  # a verdict and its finish at the same time may look alike
    c["back"].click()
    assert c["event"].value == 4
    c["event"].value = n
    assert c["forward"].disabled and not c["back"].disabled
    c["forward"].click()  # at the end: stays
    assert c["event"].value == n


def test_trace_states_follow_the_repaired_run(trace_ex):
    c = trace_ex.controls
    kinds = [(e.kind, e.node) for e in trace_ex.events]
    states = trace_ex.values["states"]
    assert states["read_spec"] == "ready" and states["report"] == "pending"
    c["event"].value = kinds.index(("dispatch", "fetch_data")) + 1
    assert trace_ex.values["states"]["fetch_data"] == "running"
    c["event"].value = kinds.index(("fail", "run_tests")) + 1
    states = trace_ex.values["states"]
    assert states["run_tests"] == "failed" and states["report"] == "pending"
    assert "write_code'" not in states  # not yet unrolled
    c["event"].value = kinds.index(("block", "report")) + 1
    assert trace_ex.values["states"]["report"] == "blocked"
    c["event"].value = kinds.index(("unroll", "run_tests'")) + 1
    states, graph = trace_ex.values["states"], trace_ex.values["graph"]
    assert graph["report"] == ["run_tests'"] and graph["run_tests'"] == [
        "write_code'",
        "write_tests",
    ]
    assert set(trace_ex.node_boxes) == set(graph)  # the plan was redrawn with the copies
    assert states["write_code'"] == "ready" and states["report"] == "pending"
    assert states["run_tests"] == "failed"


@pytest.mark.parametrize(
    "make",
    [
        repaired_run,
        lambda: sc.schedule(
            examples.coding_task().graph,
            examples.coding_task().durations,
            workers=2,
            step=sc.scripted({"write_tests": ["fail"]}),
        ),
        lambda: sc.schedule(
            examples.migration().graph,
            examples.migration().durations,
            workers=3,
            step=sc.scripted({"S": ["reject", "fail"]}, kappa=2),
            onfail="drain",
        ),
    ],
    ids=["repair", "stop", "drain"],
)
def test_trace_final_states_match_the_result(make):
    result = make()
    stepper = TraceStepper(result)
    stepper.controls["event"].value = len(result.events)
    states = stepper.values["states"]
    by_state = {s: {n for n, v in states.items() if v == s} for s in set(states.values())}
    assert by_state.get("done", set()) == set(result.done)
    assert by_state.get("failed", set()) == set(result.failed)
    assert by_state.get("blocked", set()) == set(result.blocked)
    assert by_state.get("cancelled", set()) == set(result.cancelled)
    assert "running" not in by_state
    ready = set(dag.ready_set(result.graph, result.done, (), [*result.failed, *result.blocked]))
    assert by_state.get("ready", set()) == ready - set(result.cancelled)


def test_trace_of_an_empty_plan():
    stepper = trace_stepper(sc.schedule({}, {}, workers=1))
    assert stepper.controls["event"].max == 0
    assert stepper.values["states"] == {}
    assert "no events" in stepper.table.value


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((object(),), {}, r"result must be what decompkit.scheduler.schedule .*, got object"),
        ((None,), {}, r"got NoneType"),
        (
            (sc.schedule({"a": []}, {"a": 1}, workers=1),),
            {"window": 0},
            r"window must be an integer >= 1, got 0",
        ),
    ],
)
def test_trace_rejects_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        trace_stepper(*args, **kwargs)


# ---------------------------------------------------------------------------------------------
# Shared behaviour
# ---------------------------------------------------------------------------------------------


@pytest.fixture(params=["rel_ex", "hor_ex", "dag_ex", "trace_ex"])
def any_ex(request):
    return request.getfixturevalue(request.param)


def test_mimebundle_has_widget_png_and_text(any_ex):
    bundle = any_ex._repr_mimebundle_()
    assert set(bundle) >= {WIDGET_VIEW, "image/png", "text/plain"}
    assert bundle[WIDGET_VIEW]["model_id"] == any_ex.widget.model_id
    assert base64.b64decode(bundle["image/png"]) == png(any_ex)
    assert "running Jupyter kernel" in bundle["text/plain"]


def test_image_is_a_png_of_the_figure_size(any_ex):
    data = png(any_ex)
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        width, height = any_ex.figure.get_size_inches() * any_ex.figure.dpi
        assert image.size == (round(width), round(height))
        assert image.mode == "RGB"


def _share_of_pixels_unlike_a_full_draw(explorer, scene=None) -> float:
    """Share of pixels where background + scene, painted as the browser paints them, differ
    visibly (by more than 16 of 255 in a channel) from one full draw of the figure."""
    painted = replay(explorer.view) if scene is None else replay(_Scene(explorer.view, scene))
    full = pixels(explorer)
    return float(np.mean(np.abs(painted.astype(int) - full.astype(int)).max(axis=-1) > 16))


class _Scene:
    """A view's state with another scene (the negative control below)."""

    def __init__(self, view, scene):
        self.frame, self.sprites, self.scene = view.frame, view.sprites, scene


# The scene paints moving artists over the whole background, so where a marker sits on a
# static reference line (the horizon explorer's half-lives on g = 1/2) the stacking differs
# from a full draw: at most 0.021 % of the pixels, at every width. A missing line of text
# changes 0.05 % or more (the test below), a missing curve or bar far more.
SCENE_TOLERANCE = 0.0003


def test_scene_paints_what_a_full_draw_paints(any_ex):
    """Background + scene (recorded, or replayed from the cache): the picture of a full draw."""
    controls = sliders(any_ex)
    start = {name: control.value for name, control in controls.items()}
    for control in controls.values():  # jumps
        control.value = other_value(control)
    assert _share_of_pixels_unlike_a_full_draw(any_ex) < SCENE_TOLERANCE
    for name, control in list(controls.items())[:3]:  # a step and back: from the caches
        control.value = start[name]
        control.value = min(control.value + control.step, control.max)
        control.value = start[name]
    assert _share_of_pixels_unlike_a_full_draw(any_ex) < SCENE_TOLERANCE


def test_the_scene_check_sees_a_missing_item(any_ex):
    """The comparison above can fail: leave out a line of text of median size and it does (a
    curve of median length where the scene draws no text: the horizon explorer's)."""
    scene = any_ex.view.scene
    sprites = any_ex.view.sprites
    texts = sorted((len(sprites[it["id"]]), i) for i, it in enumerate(scene) if it["t"] == "i")
    curves = sorted((len(it["xy"]), i) for i, it in enumerate(scene) if it["t"] == "p")
    some = texts or curves
    left_out = some[len(some) // 2][1]
    rest = [item for i, item in enumerate(scene) if i != left_out]
    assert _share_of_pixels_unlike_a_full_draw(any_ex, rest) > SCENE_TOLERANCE


def test_dag_unchanged_artists_are_replayed_not_drawn(dag_ex):
    """A step back and forth renders no new text and records no artist again."""
    slider = dag_ex.controls["duration write_tests"]
    for value in (3, 4, 5, 4):
        slider.value = value
    rendered, recorded = dag_ex.renderer.sprites.rendered, dag_ex.renderer.recorded
    for value in (3, 4, 5, 4):
        slider.value = value
    assert dag_ex.renderer.sprites.rendered == rendered
    assert dag_ex.renderer.recorded == recorded
    assert dag_ex.node_boxes["write_tests"].get_text().endswith("d = 4, slack 3")
    assert _share_of_pixels_unlike_a_full_draw(dag_ex) < SCENE_TOLERANCE
    for workers in (3, 1):  # the Gantt chart's axes and rows change with the workers
        dag_ex.controls["workers"].value = workers
        assert _share_of_pixels_unlike_a_full_draw(dag_ex) < SCENE_TOLERANCE


def test_every_moving_artist_has_a_look(any_ex):
    """Each moving artist can be replayed: none is recorded at every update."""
    seen = {}
    assert [a for a in any_ex.renderer.moving if look(a, seen) is None] == []


def test_a_setting_seen_before_is_replayed_not_recorded(any_ex):
    """Each slider a step up and back, twice over: the second time every artist is replayed
    from its look (the look of an artist depends on what it shows, not on what it showed
    before) and no text is rendered; the picture is still a full draw's."""

    def walk():
        for control in sliders(any_ex).values():
            start = control.value
            up = start + control.step if start + control.step <= control.max else start
            for value in (up, start, up, start):
                control.value = round(value, 12) if isinstance(value, float) else value

    walk()
    recorded, rendered = any_ex.renderer.recorded, any_ex.renderer.sprites.rendered
    walk()
    assert any_ex.renderer.recorded == recorded
    assert any_ex.renderer.sprites.rendered == rendered
    assert _share_of_pixels_unlike_a_full_draw(any_ex) < SCENE_TOLERANCE


def _random_changes(explorer, seed, count):
    """``count`` random changes of random controls: a slider stepped or set anywhere in its
    range, a checkbox flipped, another option chosen; yields after each change."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        controls = [c for c in explorer.controls.values() if hasattr(c, "value")]
        control = controls[rng.integers(len(controls))]
        if control.disabled:
            continue
        if hasattr(control, "step"):
            steps = round((control.max - control.min) / control.step)
            here = round((control.value - control.min) / control.step)
            k = here + rng.choice([-1, 1]) if rng.random() < 0.5 else rng.integers(steps + 1)
            value = control.min + min(max(int(k), 0), steps) * control.step
            control.value = value if isinstance(control.value, int) else round(value, 12)
        elif hasattr(control, "options"):
            options = [o[1] if isinstance(o, tuple) else o for o in control.options]
            control.value = options[rng.integers(len(options))]
        else:
            control.value = not control.value
        yield


@pytest.mark.parametrize("seed", [0, 1])
def test_a_replayed_scene_is_the_scene_recorded_afresh(any_ex, seed):
    """After every one of many random changes, the scene sent (each artist replayed when its
    look was recorded before) is the scene of every artist recorded anew."""
    replayed, renderer = 0, any_ex.renderer
    before = (any_ex.renders, renderer.recorded)
    for _ in _random_changes(any_ex, seed, 40):
        if any_ex.renders == before[0] + 1:  # one update: its artists not recorded anew
            replayed += len(renderer.moving) - (renderer.recorded - before[1])
        sent = (list(any_ex.view.scene), dict(any_ex.view.sprites))
        with projector_fonts():
            fresh = renderer.scene(replay=False)
        assert sent == fresh
        before = (any_ex.renders, renderer.recorded)
    assert replayed > 0  # the comparison did meet replayed artists


def test_the_replay_check_sees_a_look_that_misses_a_change(dag_ex, monkeypatch):
    """The comparison above can fail: take texts and data for bookkeeping, and a replay
    shows an earlier text or bar."""
    from decompkit.widgets import looks

    monkeypatch.setattr(looks, "_BOOKKEEPING", looks._BOOKKEEPING | {"_text", "_x0", "_width"})
    monkeypatch.setattr(looks, "_SKIPS", {})  # the sets left out, by class, made anew
    differ = 0
    for _ in _random_changes(dag_ex, 0, 40):
        with projector_fonts():
            fresh = dag_ex.renderer.scene(replay=False)
        differ += (list(dag_ex.view.scene), dict(dag_ex.view.sprites)) != fresh
    assert differ > 0


def test_a_text_starts_on_a_whole_pixel_and_one_bitmap_serves_every_place():
    """A label moved by fractions of a pixel: one bitmap, anchored on whole pixels, and the
    background with the scene is the picture of a full draw."""
    figure = Figure(figsize=(3, 1), dpi=96)
    renderer = Renderer(figure)
    ax = figure.subplots()
    ax.set_axis_off()
    label = ax.text(0.1, 0.5, "write code", fontsize=9)
    renderer.move(label)
    background = renderer.background()
    to_data = ax.transData.inverted()
    left = round(ax.transData.transform((0.1, 0.5))[0])  # a whole pixel
    ids, anchors = set(), []
    for shift in (0.0, 0.3, 0.45, 0.6, 47.25):
        label.set_x(to_data.transform((left + shift, 0))[0])
        items, used = renderer.scene()
        (item,) = items
        ids.add(item["id"])
        anchors.append(item["x"])
        painted = replay(_Scene(types.SimpleNamespace(frame=background, sprites=used), items))
        with Image.open(io.BytesIO(renderer.full())) as image:
            full = np.asarray(image)
        assert np.abs(painted.astype(int) - full.astype(int)).max() <= 2, shift
    assert len(ids) == 1 and renderer.sprites.rendered == 1
    assert [a - anchors[0] for a in anchors] == [0, 0, 0, 1, 47]


def test_trace_steps_match_a_full_draw(trace_ex):
    n = len(trace_ex.events)
    for k in (*range(1, 8), *range(n - 14, n - 8), n):  # the repair round draws a new plan
        trace_ex.controls["event"].value = k
        if k in (7, n - 9, n):
            assert _share_of_pixels_unlike_a_full_draw(trace_ex) < SCENE_TOLERANCE


def test_the_view_keeps_its_ipywidgets_layout(any_ex):
    """The browser styles every widget view from its ``layout`` model: a trait of the same
    name holding anything else breaks the view in the page."""
    import ipywidgets

    assert isinstance(any_ex.view.layout, ipywidgets.Layout)


#: The browser side of the explorers' view: an ES module, and the explorer's style sheet.
VIEW_SCRIPT = ROOT / "src" / "decompkit" / "widgets" / "explorer.js"
VIEW_STYLE = ROOT / "src" / "decompkit" / "widgets" / "explorer.css"


def test_the_view_loads_its_script_and_style_from_their_files():
    """The script is explorer.js after the modules it imports (each once, imports gone)."""
    view = FigureView()
    script = view._esm
    bodies = [
        re.sub(r'^import \{[^}]*\} from "[^"]+";\n', "", path.read_text(), flags=re.M)
        for path in view_module.MODULES
    ]
    assert view_module.MODULES[-1] == VIEW_SCRIPT and script.endswith(bodies[-1])
    assert all(script.count(body) == 1 for body in bodies)
    assert not re.search(r"^import", script, re.M)
    assert view._css == VIEW_STYLE.read_text(encoding="utf-8")
    assert "export default" in script and ".decompkit-explorer" in view._css


def test_the_bundle_refuses_a_module_whose_import_comes_after_it(tmp_path):
    first, second = tmp_path / "a.js", tmp_path / "b.js"
    first.write_text('import { f } from "./b.js";\nexport const g = f;\n')
    second.write_text("export const f = 1;\n")
    with pytest.raises(ValueError, match="a.js imports b.js, not bundled before it"):
        view_module.bundle((first, second))
    first.write_text('import * as B from "./b.js";\n')
    with pytest.raises(ValueError, match="a.js imports in a form the bundle cannot inline"):
        view_module.bundle((second, first))


def test_the_view_draws_for_the_pixel_ratios_the_kernel_renders():
    """The page reports at most MAX_RATIO: the kernel renders no finer than that."""
    found = re.search(r"^const MAX_RATIO = ([0-9.]+);$", VIEW_SCRIPT.read_text(), re.MULTILINE)
    assert found is not None, "explorer.js declares no MAX_RATIO"
    assert float(found.group(1)) == MAX_RATIO


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_view_script_is_a_module_node_can_parse(tmp_path):
    """node --check parses the module (as .mjs: an ES module); a broken copy it refuses."""

    def check(text):
        copy = tmp_path / "explorer.mjs"
        copy.write_text(text, encoding="utf-8")
        return subprocess.run(["node", "--check", str(copy)], capture_output=True, text=True)

    script = FigureView()._esm  # explorer.js with the modules it imports
    parsed = check(script)
    assert parsed.returncode == 0, parsed.stderr
    assert check(script.replace("export default {", "export default {{", 1)).returncode != 0


def test_an_update_sends_no_picture_only_the_scene(any_ex):
    """After the first picture a slider change sends the scene, no new background."""
    backdrop = any_ex.view.backdrop
    control = next(iter(sliders(any_ex).values()))
    control.value = other_value(control)
    assert any_ex.view.backdrop == backdrop
    assert all(item["t"] in ("p", "m", "i") for item in any_ex.view.scene)
    assert set(any_ex.view.sprites) == {
        sid for item in any_ex.view.scene for sid in (item.get("id"), item.get("hatch")) if sid
    }


def test_the_figure_takes_the_width_the_browser_reports(any_ex):
    low, high = type(any_ex).WIDTHS
    try:
        for reported, expected in ((900, 900), (5000, high), (100, low)):
            any_ex.view.screen = [reported, 1.0]
            assert any_ex.view.css_width == expected
            assert pixels(any_ex).shape[1] == expected
            assert _share_of_pixels_unlike_a_full_draw(any_ex) < SCENE_TOLERANCE
        any_ex.view.screen = [1000, 2.0]  # a 2x screen: twice the pixels, same CSS size
        assert any_ex.view.css_width == 1000 and pixels(any_ex).shape[1] == 2000
    finally:
        any_ex.view.screen = [1104, 1.0]


def test_no_pyplot_figures_and_one_figure_per_explorer(any_ex):
    figure = any_ex.figure
    alive = figures_alive()
    for i in range(2):
        for control in sliders(any_ex).values():
            control.value = other_value(control) if i % 2 else control.min
    assert plt.get_fignums() == []
    assert any_ex.figure is figure
    assert figures_alive() == alive


def test_slider_ranges_keep_settings_valid(any_ex):
    ranges = {
        "p": (0, 1),
        "q": (0, 1),
        "d": (0, 1),
        "phi": (0, 1),
        "n": (1, np.inf),
        "kappa": (1, np.inf),
        "budget_factor": (1, np.inf),
        "workers": (1, np.inf),
        "event": (0, len(getattr(any_ex, "events", ()))),
    }
    with any_ex._hold():
        for name, control in sliders(any_ex).items():
            low, high = (0, np.inf) if name.startswith("duration ") else ranges[name]
            assert low <= control.min < control.max <= high, name
            control.value = control.max + 1  # a slider clamps: the setting stays valid
            assert control.value == control.max
            control.value = control.min - 1
            assert control.value == control.min
    assert any_ex.update() is True
    assert any_ex.status.value == ""


def test_controls_are_labelled(any_ex):
    for name, control in any_ex.controls.items():
        assert control.description, name
        assert control.tooltip, name


@pytest.mark.parametrize(
    "kind, module, function, control, value",
    [
        ("rel_ex", rel, "checked_step_fallible", "p", 0.6),
        ("hor_ex", markov, "success_exact", "p", 0.6),
        ("dag_ex", dag, "critical_path", "workers", 3),
        ("trace_ex", dag, "ready_set", "event", 3),
    ],
)
def test_compute_errors_are_shown_not_swallowed(
    request, monkeypatch, kind, module, function, control, value
):
    ex = request.getfixturevalue(kind)
    before = png(ex)

    def broken(*args, **kwargs):
        raise ValueError("p must be in [0, 1], got 1.5")

    monkeypatch.setattr(module, function, broken)
    ex.controls[control].value = value
    assert "p must be in [0, 1], got 1.5" in ex.status.value
    assert png(ex) == before  # the last good picture stays
    assert ex.update() is False
    monkeypatch.undo()
    assert ex.update() is True
    assert ex.status.value == ""
    assert png(ex) != before


def test_explorer_classes_are_exported(rel_ex, hor_ex, dag_ex, trace_ex):
    assert isinstance(rel_ex, ReliabilityExplorer) and isinstance(hor_ex, HorizonExplorer)
    assert isinstance(dag_ex, DagExplorer) and isinstance(trace_ex, TraceStepper)


def test_bench_quick_runs(capsys):
    spec = importlib.util.spec_from_file_location(
        "bench_widgets", ROOT / "bench" / "bench_widgets.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.main(["--quick", "--only", "reliability_explorer", "--only", "trace_stepper"])
    out = capsys.readouterr().out
    assert set(bench.EXPLORERS) >= {"reliability_explorer", "trace_stepper", "dag_explorer A"}
    for name in ("reliability_explorer", "trace_stepper"):
        assert f"{name} " in out
    assert "horizon_explorer" not in out
    assert "ratio" in out
    assert plt.get_fignums() == []


# ---------------------------------------------------------------------------------------------
# Pictures made ahead (in the kernel's idle time, one per turn of its event loop)
# ---------------------------------------------------------------------------------------------


def _made_ahead(explorer, change, planned=None):
    """Run ``change()`` in an event loop, let the loop make the pictures ahead, return them.

    ``{key: items}`` as the view sends them (the bytes of the items included), in the
    order sent; ``planned`` (a list) receives the settings queued right after the change.
    """
    sent = {}
    original = explorer.view.send_ahead

    def record(key, items, used):
        sent[key] = items
        return original(key, items, used)

    async def run():
        change()
        if planned is not None:
            planned.extend(explorer._ahead + explorer._ahead_rest)
        while explorer._ahead or explorer._ahead_rest or explorer._ahead_handle is not None:
            await asyncio.sleep(0.01)

    explorer.view.send_ahead = record
    try:
        asyncio.run(run())
    finally:
        del explorer.view.send_ahead
    return sent


def test_pictures_ahead_are_the_pictures_of_their_settings(any_ex):
    """Two steps either side on the slider moved first, then one step on every other
    control; each picture is the scene that a change to its setting sends."""
    name, control = next(iter(sliders(any_ex).items()))
    start = control.value
    moved = start + control.step if start + control.step <= control.max else start - control.step
    moved = round(moved) if isinstance(start, int) else round(moved, 12)
    planned = []
    sent = _made_ahead(any_ex, lambda: setattr(control, "value", moved), planned)
    neighbours = [moved + k * control.step for k in (1, -1, 2, -2)]
    neighbours = [v for v in neighbours if control.min <= v <= control.max]
    assert [list(change) for change in planned[: len(neighbours)]] == [[name]] * len(neighbours)
    assert len(sent) == len(planned) >= len(neighbours)  # the stepper has one slider only
    numbers, picture = any_ex.values, png(any_ex)
    for change in planned:  # outside a loop nothing is made ahead: these are real updates
        ((other, value),) = change.items()
        before = any_ex.controls[other].value
        any_ex.controls[other].value = value
        assert sent[any_ex._key()] == any_ex.view.scene, change
        any_ex.controls[other].value = before
    assert png(any_ex) == picture  # the artists show the controls' setting again
    assert any_ex.values.keys() == numbers.keys()


def test_the_numbers_stay_those_of_the_controls_while_pictures_are_made_ahead(rel_ex):
    control = rel_ex.controls["n"]
    _made_ahead(rel_ex, lambda: setattr(control, "value", 20))
    assert "chain of n = 20" in rel_ex.readout.value
    assert list(rel_ex.marker.get_xdata()) in ([20, 20], [22, 22], [18, 18])  # artists moved
    assert _share_of_pixels_unlike_a_full_draw(rel_ex) < SCENE_TOLERANCE  # png() restored
    assert list(rel_ex.marker.get_xdata()) == [20, 20]


def test_a_change_replaces_the_pictures_still_to_make(rel_ex):
    control = rel_ex.controls["kappa"]

    async def two_changes():
        control.value = 5
        first = list(rel_ex._ahead)
        control.value = 8  # before the loop had a turn to make any
        return first, list(rel_ex._ahead), list(rel_ex._ahead_rest)

    first, second, rest = asyncio.run(two_changes())
    assert [v["kappa"] for v in first] == [6, 4, 7, 3]
    assert [v["kappa"] for v in second] == [9, 7, 10, 6]
    assert {name for v in rest for name in v} == {"p", "n", "d", "phi"}  # a step each, later
    rel_ex._ahead.clear()
    rel_ex._ahead_rest.clear()


def test_the_dag_explorer_makes_the_other_example_and_flipped_boxes_ahead():
    explorer = DagExplorer(example="A")
    sent = _made_ahead(explorer, lambda: explorer.update(full=True))
    for change in ({"example": "B"}, {"spurious_edge": True}):
        key = explorer._key(change)
        assert key in sent, change
        name, value = next(iter(change.items()))
        explorer.controls[name].value = value
        assert sent[key] == explorer.view.scene, change
        explorer.controls[name].value = {"example": "A", "spurious_edge": False}[name]


def test_a_picture_depends_on_its_setting_alone(any_ex):
    """Pictures made ahead are sent under their setting's key: after any walk over the
    controls, coming back to a setting gives exactly the picture it gave before."""
    before = any_ex.view.scene
    controls = sliders(any_ex)
    start = {name: control.value for name, control in controls.items()}
    for name, control in controls.items():
        control.value = control.max
        control.value = control.min
        halfway = (start[name] + control.max) / 2  # a larger scale that the start fits in
        control.value = round(halfway) if isinstance(start[name], int) else halfway
    with any_ex._hold():
        for name, value in start.items():
            controls[name].value = value
    any_ex.update()
    assert any_ex.view.scene == before


def test_the_gantt_scale_depends_on_the_makespan_alone(dag_ex):
    """A moderate rise of the makespan and back: the same picture as before the rise."""
    before, ax = dag_ex.view.scene, dag_ex.gantt_ax
    slider = dag_ex.controls["duration write_code"]
    for value in (8, 4):  # makespan 14, then 10 again
        slider.value = value
        makespan = dag_ex.values["schedule"].makespan
        assert ax.get_xlim() == (0, time_axis_end(makespan))
    assert dag_ex.view.scene == before


def test_a_new_view_gets_the_pictures_ahead_again(rel_ex):
    control = rel_ex.controls["kappa"]
    _made_ahead(rel_ex, lambda: setattr(control, "value", 4))
    assert _made_ahead(rel_ex, rel_ex.update) == {}  # the view has them all
    rel_ex.view._answer(rel_ex.view, {"type": "ping"}, [])  # the page was reloaded
    assert len(_made_ahead(rel_ex, rel_ex.update)) >= 4


def _watch_pictures(explorer) -> list:
    """Record every picture ``explorer`` sends, as ``(css size, scene)`` with each bitmap's
    PNG in place of its id (ids differ between explorers, bitmaps do not)."""
    sent, show = [], explorer.view.show

    def record(items, used, css_size, **kwargs):
        sent.append((tuple(round(v) for v in css_size), _scene_by_bitmap(items, used)))
        return show(items, used, css_size, **kwargs)

    explorer.view.show = record
    return sent


def _scene_by_bitmap(items, used):
    return [{k: used.get(v, v) if k in ("id", "hatch") else v for k, v in i.items()} for i in items]


def test_a_handler_in_another_thread_waits_for_the_picture_being_made():
    """ipykernel 7 may run a widget message's handler (here: the page's width) in a subshell
    thread while the main thread's loop makes pictures ahead. Each waits for the other, so
    every picture sent is its setting's picture at its width: one setting here, the same
    picture as a quiet explorer's at each width."""
    import threading
    import time

    widths = (700, 1100, 900, 1000)
    expected = {}
    for width in widths:
        quiet = DagExplorer(example="B", workers=3)
        pictures = _watch_pictures(quiet)
        quiet.view.screen = [width, 1.0]
        size, scene = pictures[-1]
        expected[size] = scene
    explorer = DagExplorer(example="B", workers=3)
    explorer.update(full=True)
    sent = _watch_pictures(explorer)
    stop = threading.Event()

    async def make_ahead():
        for _ in range(15):
            explorer.update()  # plans the pictures ahead in this thread's loop
            for _ in range(40):
                await asyncio.sleep(0.002)
        stop.set()

    worker = threading.Thread(target=lambda: asyncio.run(make_ahead()))
    worker.start()
    changes = 0
    while not stop.is_set():
        explorer.view.screen = [widths[changes % len(widths)], 1.0]
        changes += 1
        time.sleep(0.003)
    worker.join()
    resized = [(size, scene) for size, scene in sent if size in expected]
    assert changes > 10 and len(resized) > 10
    wrong = [size for size, scene in resized if scene != expected[size]]
    assert not wrong, f"{len(wrong)} of {len(resized)} pictures mix two states"


def _live(explorer) -> bool:
    """Whether any of the explorer's widgets still has its comm open."""
    parts = [explorer.widget, explorer.view, explorer.readout, *explorer.controls.values()]
    return any(getattr(w, "comm", None) is not None for w in parts)


def test_running_a_cell_again_closes_the_explorers_its_earlier_run_showed(monkeypatch):
    from decompkit.widgets import base

    run = {"now": ("cell-1", "request-1")}
    monkeypatch.setattr(base, "_current_run", lambda: run["now"])
    monkeypatch.setattr(base, "_SHOWN_IN_CELL", {})
    first = reliability_explorer()
    first._repr_mimebundle_()
    twin = reliability_explorer()  # a second explorer shown by the same run of the cell
    twin._repr_mimebundle_()
    run["now"] = ("cell-2", "request-2")
    elsewhere = reliability_explorer()
    elsewhere._repr_mimebundle_()
    assert _live(first) and _live(twin) and _live(elsewhere)

    run["now"] = ("cell-1", "request-3")  # the first cell runs again
    again = reliability_explorer()
    bundle = again._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert not _live(first) and not _live(twin), "the earlier run's explorers stay open"
    assert _live(again) and _live(elsewhere)
    first.close()  # closing twice is harmless
    assert first.update() is False  # a change already on its way draws nothing


@pytest.mark.parametrize(
    "make",
    [
        reliability_explorer,
        horizon_explorer,
        lambda: dag_explorer("B", workers=3),
        lambda: trace_stepper(repaired_run()),
    ],
    ids=["reliability", "horizon", "dag", "trace"],
)
def test_closing_an_explorer_closes_every_widget_it_made(make):
    from ipywidgets.widgets.widget import _instances

    before = set(_instances)
    explorer = make()
    made = set(_instances) - before
    explorer._repr_mimebundle_()
    explorer.close()
    left = [type(_instances[k]).__name__ for k in set(_instances) - before]
    assert len(made) > 10 and not left, f"still open after close(): {left}"
    assert not explorer.update()  # closed: draws nothing, says so


def test_outside_a_notebook_cell_nothing_is_closed(monkeypatch):
    from decompkit.widgets import base

    monkeypatch.setattr(base, "_current_run", lambda: (None, None))
    monkeypatch.setattr(base, "_SHOWN_IN_CELL", {})
    shown = [reliability_explorer() for _ in range(2)]
    for explorer in shown:
        explorer._repr_mimebundle_()
    assert all(_live(e) for e in shown) and base._SHOWN_IN_CELL == {}


def test_a_kernel_keeps_only_the_widgets_of_the_cells_last_run():
    """Through a real ipykernel, with the ``cellId`` JupyterLab puts in each execute request:
    the number of live widgets after a cell's third run is the number after its first."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:

        def run(code, cell):
            message = client.session.msg(
                "execute_request",
                {
                    "code": code,
                    "silent": False,
                    "store_history": True,
                    "user_expressions": {"live": "len(_w_.Widget.widgets)"},
                    "allow_stdin": False,
                    "stop_on_error": True,
                },  # fmt: skip
                metadata={"cellId": cell},
            )
            client.shell_channel.send(message)
            while True:
                reply = client.get_shell_msg(timeout=60)
                if reply["parent_header"].get("msg_id") == message["header"]["msg_id"]:
                    break
            assert reply["content"]["status"] == "ok", reply["content"]
            return int(reply["content"]["user_expressions"]["live"]["data"]["text/plain"])

        run("from ipywidgets.widgets import widget as _w_\n"
            "from decompkit.widgets import reliability_explorer", "a")  # fmt: skip
        before = run("pass", "b")
        once = run("display(reliability_explorer())", "c")
        thrice = [run("display(reliability_explorer())", "c") for _ in range(2)][-1]
        other = run("display(reliability_explorer())", "d")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert once > before
    assert thrice == once, f"{thrice - once} widgets of earlier runs are still open"
    assert other - thrice == once - before  # another cell's explorer is its own


def test_new_bitmaps_reach_the_browser_as_pixels_before_the_state_that_names_them(monkeypatch):
    """A text new to the browser goes first as RGBA pixels, which the page puts on the canvas
    at once (a PNG it would decode off its main thread, 5-28 ms on a busy page), then in the
    state as PNG, as a saved notebook keeps it; a bitmap the browser has goes again as
    neither."""
    explorer = dag_explorer("A", workers=2)  # a longer task: new texts in its box
    explorer.view.screen = [1104, 1.0, 0]
    events = []
    monkeypatch.setattr(
        explorer.view, "send", lambda content, buffers=None: events.append((content, buffers))
    )
    explorer.view.observe(lambda change: events.append(("state", change["new"])), names="sprites")
    had = set(explorer.view.sprites)
    slider = explorer.controls["duration read_spec"]
    start = slider.value
    slider.value = start + slider.step
    pixels = [(c, b) for c, b in events if isinstance(c, dict) and c.get("type") == "pixels"]
    assert len(pixels) == 1 and events[0][0] is pixels[0][0], events
    state = events[1][1]
    new = set(state) - had
    content, buffers = pixels[0]
    assert new and set(content["sprites"]) == new
    for sid, (width, height, index) in content["sprites"].items():
        decoded = np.asarray(Image.open(io.BytesIO(state[sid])).convert("RGBA"))
        assert decoded.shape == (height, width, 4)
        assert bytes(buffers[index]) == decoded.tobytes(), sid
    events.clear()
    slider.value = start  # back to a picture whose texts the browser has
    assert not [c for c, _ in events if isinstance(c, dict) and c.get("type") == "pixels"]
    explorer.close()
