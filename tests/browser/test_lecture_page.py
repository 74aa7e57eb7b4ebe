"""The static lecture page in Chromium, opened from disk with every request outside its folder
blocked: each slider moved by keyboard (and three by a finger, as on a tablet) gives the numbers
the package gives, and the page fits a 1280 x 720 projector at 100 % and at 150 % zoom with no
text under 12 CSS pixels.

The package's side is the notebook explorer itself, moved to the same values: its readout and
the numbers it draws (``.values``) must equal the page's. Screenshots go to
tests/browser/artifacts/ (lecture-page-*.png).
"""

from __future__ import annotations

import base64
import io
import json
import re

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from decompkit.exercises.params import params
from decompkit.page import staged, trace_run
from decompkit.widgets import dag_explorer, horizon_explorer, reliability_explorer, trace_stepper
from decompkit.widgets.controls import projector_fonts
from decompkit.widgets.panels import PANELS
from decompkit.widgets.view import CSS_DPI

from .conftest import ARTIFACTS

pytestmark = pytest.mark.browser

#: Keys pressed on each slider, in order: steps, ten steps and both ends (p = 0 and 1 too).
KEYS = {
    "reliability": [
        ("p", "ArrowLeft"),
        ("p", "Home"),
        ("p", "End"),
        ("p", "PageDown"),
        ("n", "ArrowRight"),
        ("n", "End"),
        ("kappa", "ArrowRight"),
        ("d", "End"),
        ("d", "PageDown"),
        ("phi", "PageUp"),
    ],
    "horizon": [
        ("p", "ArrowRight"),
        ("p", "PageDown"),
        ("q", "End"),
        ("q", "ArrowLeft"),
        ("n", "Home"),
        ("n", "End"),
        ("n", "PageDown"),
        ("budget_factor", "Home"),
        ("budget_factor", "PageUp"),
    ],
    "trace": [
        ("event", "ArrowRight"),
        ("event", "PageUp"),
        ("event", "End"),
        ("event", "ArrowLeft"),
        ("event", "Home"),
    ],
}
#: The numbers each explorer draws, compared curve by curve.
DRAWN = {
    "reliability": lambda values: {f"curves.{k}": v for k, v in values["curves"].items()},
    "horizon": lambda values: {k: values[k] for k in ("success_by_n", "sweep", "grounded")},
    "trace": lambda values: {},  # its pictures are the kit's own scenes: compared as pixels
}
#: A pixel differs from matplotlib's full draw when a channel is off by more than this (of
#: 255), and this share of the pixels may differ so: the canvas antialiases edges a little
#: unlike Agg (tests/browser/test_explorers_browser.py uses the same bounds).
CANVAS_DIFFERENCE = 64
CANVAS_SHARE = 0.005

_STATE = """name => {
    const s = window.lecturePage.explorers[name];
    return {painted: s.painted, setting: s.setting, values: s.values,
            readout: document.querySelector(`#${name} .readout`).textContent,
            table: document.querySelector(`#${name} .table`).textContent};
}"""
_TEXT_OF = (
    "html => { const d = document.createElement('div'); d.innerHTML = html; return d.textContent; }"
)
#: The smallest font of any element that shows text, in CSS pixels.
_SMALLEST_TEXT = """() => {
    let smallest = Infinity, where = null;
    for (const el of document.body.querySelectorAll('*')) {
        const text = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
        if (!text || !el.getClientRects().length) continue;
        const size = parseFloat(getComputedStyle(el).fontSize);
        const said = el.tagName + ' ' + el.textContent.trim().slice(0, 30);
        if (size < smallest) [smallest, where] = [size, said];
    }
    return [smallest, where];
}"""
#: Per explorer: the figure's CSS width, its canvas' pixel width, and the height from its title
#: to the bottom of its figure.
_FIGURES = """() => [...document.querySelectorAll('section.explorer')].map(s => {
    const canvas = s.querySelector('canvas');
    const top = s.querySelector('h2').getBoundingClientRect().top;
    return {name: s.id, css: canvas.getBoundingClientRect().width, pixels: canvas.width,
            styled: parseFloat(canvas.style.width),
            height: canvas.getBoundingClientRect().bottom - top};
})"""


@pytest.fixture(scope="module")
def lecture_page(lecture_page_index):
    return lecture_page_index


@pytest.fixture
def offline_page(chromium_context, lecture_page):
    """A tab that may load the page's folder and nothing else; ``.blocked`` lists the rest."""
    folder = lecture_page.parent.as_uri() + "/"
    page = chromium_context.new_page()
    page.blocked = []
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    def only_the_folder(route):
        url = route.request.url
        if url.startswith(folder) or url.startswith("blob:"):
            route.continue_()
        else:
            page.blocked.append(url)
            route.abort()

    page.route("**/*", only_the_folder)
    chromium_context.set_offline(True)
    try:
        yield page
    finally:
        chromium_context.set_offline(False)
        page.close()
    assert not errors, f"the page raised: {errors}"


def _open(page, index, width, height, scale):
    """Open the page at ``width`` x ``height`` CSS pixels of ``scale`` device pixels each."""
    page.set_viewport_size({"width": width, "height": height})  # before: it resets the scale
    # The override lasts while its session does: the page keeps it. Chromium may drop it when
    # the page's document changes, so it is set again once the page is open, and the page,
    # which follows a change of pixel ratio, draws again at the new one.
    page.metrics_session = session = page.context.new_cdp_session(page)
    metrics = {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": False}
    session.send("Emulation.setDeviceMetricsOverride", metrics)
    page.goto(index.as_uri())
    session.send("Emulation.setDeviceMetricsOverride", metrics)
    page.wait_for_function(f"() => window.devicePixelRatio === {scale}")
    page.wait_for_function(
        "() => document.body.dataset.ready && [...document.querySelectorAll('section.explorer')]"
        ".every(s => Number(s.dataset.painted) >= 1)"
    )
    ratio = 2 if scale >= 1.5 else 1
    page.wait_for_function(
        f"() => [...document.querySelectorAll('canvas')]"
        f".every(c => c.width === {ratio} * parseFloat(c.style.width))",
        timeout=5_000,
    )


def _python_explorers():
    chain, horizon = params("chain", "lecture"), params("horizon", "lecture")
    return {
        "trace": trace_stepper(trace_run(params("trace", "lecture"))),
        "reliability": reliability_explorer(
            p=chain.p, n=chain.n, d=chain.d, phi=chain.phi, kappa=chain.k
        ),
        "horizon": horizon_explorer(
            p=horizon.p, q=horizon.q, n=horizon.n, budget_factor=horizon.budget_factor
        ),
    }


def _same_numbers(page, name, explorer, state):
    with explorer._hold():
        for control, value in state["setting"].items():
            explorer.controls[control].value = value
    explorer.update()
    assert {c: explorer.controls[c].value for c in state["setting"]} == state["setting"]
    for part, widget in (
        ("readout", explorer.readout),
        ("table", getattr(explorer, "table", None)),
    ):
        html = re.sub(r"<style>.*?</style>", "", widget.value if widget else "", flags=re.S)
        assert state[part] == page.evaluate(_TEXT_OF, html), (name, part, state["setting"])
    drawn_page = DRAWN[name](state["values"])
    drawn_python = DRAWN[name](explorer.values)
    for key, ours in drawn_python.items():
        np.testing.assert_allclose(
            np.asarray(drawn_page[key], float), ours, rtol=1e-12, atol=1e-15, err_msg=key
        )


def _same_picture(page, name, draw, ratio=1, boxes=None):
    """The canvas, captured at ``ratio`` device pixels per CSS pixel, against ``draw(width)``:
    the kit's full draw (PNG) of the same setting at the canvas' CSS width and that ratio;
    within ``boxes`` (device pixels) only, if given."""
    box = page.evaluate(
        f"""() => {{ const r = document.querySelector('#{name} canvas').getBoundingClientRect();
        return {{x: r.left + scrollX, y: r.top + scrollY, width: r.width}}; }}"""
    )
    full = np.asarray(Image.open(io.BytesIO(draw(round(box["width"])))).convert("RGB"), dtype=int)
    # Chromium's own capture: in device pixels, and beyond the window if need be.
    clip = {"x": round(box["x"]), "y": round(box["y"]), "scale": 1}
    clip.update(width=full.shape[1] / ratio, height=full.shape[0] / ratio)
    png = page.metrics_session.send(
        "Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": True}
    )["data"]
    shot = np.asarray(Image.open(io.BytesIO(base64.b64decode(png))).convert("RGB"), dtype=int)
    assert full.shape == shot.shape, (name, full.shape, shot.shape)
    off = np.abs(full - shot).max(axis=2) > CANVAS_DIFFERENCE
    if boxes is not None:
        inside = np.zeros(off.shape, bool)
        for x0, y0, x1, y1 in (np.rint(box).astype(int) for box in boxes):
            inside[y0:y1, x0:x1] = True
        off = off[inside]
    if off.mean() > CANVAS_SHARE:
        pair = ARTIFACTS / f"lecture-page-{name}-page-vs-kit.png"
        Image.fromarray(np.concatenate([shot, full]).astype(np.uint8)).save(pair)
        pytest.fail(
            f"{name}: {off.mean():.2%} of the pixels differ from the kit's at ratio {ratio}; "
            f"see {pair.name}"
        )


#: A new picture is painted and the canvas shows what the controls ask for (a late redraw of
#: the picture before may be painted first).
_SHOWN = (
    "() => {{ const e = window.lecturePage.explorers.{name}; return e.painted > {before} "
    "&& JSON.stringify(e.setting) === JSON.stringify(e.wanted); }}"
)


def _press(page, name, control, key):
    """Press ``key`` on a slider and wait for the explorer's next picture."""
    before = page.evaluate(f"() => window.lecturePage.explorers.{name}.painted")
    page.focus(f"#{name}-{control}")
    page.keyboard.press(key)
    try:
        page.wait_for_function(_SHOWN.format(name=name, before=before), timeout=10_000)
    except PlaywrightTimeout:
        pytest.fail(f"{name}: {key} on {control} painted no new picture")


def _canvas_png(page, name):
    box = page.evaluate(
        f"""() => {{ const r = document.querySelector('#{name} canvas').getBoundingClientRect();
        return {{x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height,
                 scale: 1}}; }}"""
    )
    return page.metrics_session.send(
        "Page.captureScreenshot", {"format": "png", "clip": box, "captureBeyondViewport": True}
    )["data"]


def _kit_trace(stepper, ratio, panel="plan"):
    def draw(width):
        stepper._on_screen({"new": [width, ratio, 0]})
        stepper.panel.value = panel  # the panel shown where the figure shows one at a time
        return stepper.png()

    return draw


def _kit_staged(name, numbers, setting, ratio):
    """The page's figure drawn whole by the kit: the explorer staged afresh, its artists
    moved to ``setting``, laid out once as the page's background was (constrained layout
    run a second time on a figure may move its axes by a pixel)."""

    def draw(width):
        stage = staged(name, numbers)
        ex = stage.explorer
        with ex._hold():
            for control, value in setting.items():
                ex.controls[control].value = value
        stage.restyle(width)
        figure = ex.figure
        figure.set_size_inches(width / CSS_DPI, figure.get_size_inches()[1])
        figure.set_dpi(CSS_DPI * ratio)
        with projector_fonts():
            ex._refresh()  # the artists at the setting, without a layout of its own
            ex.renderer.background()
            return ex.renderer.full()

    return draw


def test_the_curves_are_the_kits_picture(offline_page, lecture_page, artifacts):
    """What page.js computes and paints (curves, markers, the current point) lands on the
    pixels where the kit's full draw of the page's figure puts it, inside the axes (around
    them is the kit's own background; a second layout of a figure may move a title's text by
    a pixel)."""
    page = offline_page
    _open(page, lecture_page, 1280, 720, 1)
    numbers = {"reliability": "chain", "horizon": "horizon"}
    text = lecture_page.read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="page-data">(.*?)</script>', text, re.S).group(1))
    boxes = {
        spec["name"]: [ax["box"] for ax in spec["layouts"][0]["ratios"]["1"]["axes"].values()]
        for spec in data["explorers"]
        if spec["name"] in numbers
    }
    moves = {
        "reliability": [None, ("d", "PageDown"), ("n", "End")],
        "horizon": [None, ("q", "End")],
    }
    for name, notebook in numbers.items():
        lecture = params(notebook, "lecture")
        for move in moves[name]:
            if move:
                _press(page, name, *move)
            setting = page.evaluate(f"() => window.lecturePage.explorers.{name}.setting")
            _same_picture(page, name, _kit_staged(name, lecture, setting, 1), 1, boxes[name])


@pytest.mark.parametrize(("width", "height", "ratio"), [(853, 480, 1), (1280, 720, 2)])
def test_the_trace_is_the_kits_picture_in_every_layout(
    offline_page, lecture_page, artifacts, width, height, ratio
):
    """The trace stepper's narrow layout (one panel at a time: the plan, and the Gantt chart
    after a click on its button) and its pictures for screens of pixel ratio 2, against the
    kit's own drawing, at a few steps."""
    page = offline_page
    _open(page, lecture_page, width, height, ratio)
    stepper = trace_stepper(trace_run(params("trace", "lecture")))
    buttons = page.locator("#trace .panels")
    narrow = width < 1000
    assert buttons.is_visible() == narrow
    moves = [("plan", None), ("plan", "End"), ("plan", "PageDown")]
    if narrow:
        moves += [("gantt", "Gantt chart"), ("gantt", "Home"), ("plan", "plan")]
    for panel, move in moves:
        if move:
            before = page.evaluate("() => window.lecturePage.explorers.trace.painted")
            if move in ("plan", "Gantt chart"):
                buttons.get_by_role("button", name=move, exact=True).click()
            else:
                page.focus("#trace-event")
                page.keyboard.press(move)
            page.wait_for_function(_SHOWN.format(name="trace", before=before))
        shown = page.evaluate("() => window.lecturePage.explorers.trace")
        assert shown["panel"] == (panel if narrow else None)
        stepper.controls["event"].value = shown["setting"]["event"]
        _same_picture(page, "trace", _kit_trace(stepper, ratio, panel), ratio)
    assert page.blocked == []


def test_every_control_gives_the_packages_numbers_offline(offline_page, lecture_page, artifacts):
    page = offline_page
    _open(page, lecture_page, 1280, 720, 1)
    explorers = _python_explorers()
    for name, keys in KEYS.items():
        state = page.evaluate(_STATE, name)
        _same_numbers(page, name, explorers[name], state)
        moved = set()
        for control, key in keys:
            before = _canvas_png(page, name) if control not in moved else None
            _press(page, name, control, key)
            state = page.evaluate(_STATE, name)
            _same_numbers(page, name, explorers[name], state)
            if name == "trace":
                _same_picture(page, name, _kit_trace(explorers[name], 1))
            if before is not None:  # the first move of each control changes the picture
                assert _canvas_png(page, name) != before, f"{name}: {control} changed no pixel"
                moved.add(control)
        assert moved == {c for c, _ in keys}
    assert page.blocked == [], "the page asked for files outside its folder"


@pytest.mark.parametrize(
    ("width", "height", "scale", "ratio"), [(1280, 720, 1, 1), (853, 480, 1.5, 2)]
)
def test_the_page_fits_a_projector(
    offline_page, lecture_page, artifacts, width, height, scale, ratio
):
    """1280 x 720 at 100 % and 150 % zoom (853 x 480 CSS pixels at 1.5 device pixels each):
    nothing wider than the window, no text under 12 CSS pixels, each figure at a baked width
    (its text at 12 px or more) and pixel ratio, and each explorer's title, controls and
    figure on one screen."""
    page = offline_page
    _open(page, lecture_page, width, height, scale)
    shot = artifacts / f"lecture-page-{width}x{height}@{scale:g}.png"
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    smallest, where = page.evaluate(_SMALLEST_TEXT)
    figures = page.evaluate(_FIGURES)
    # Then the picture: a full-page screenshot ends the pixel-ratio override.
    page.screenshot(path=str(shot), full_page=True)
    assert overflow <= 0, f"{overflow} px wider than the window; see {shot.name}"
    assert smallest >= 12, f"text of {smallest} px ({where}); see {shot.name}"
    too_tall = []
    for figure in figures:
        assert figure["css"] == figure["styled"], f"{figure['name']} is scaled down: {figure}"
        assert figure["pixels"] == ratio * figure["styled"], figure
        if figure["height"] > height:
            too_tall.append(figure["name"])
    assert page.blocked == []
    assert too_tall == [], f"{too_tall} do not fit {width} x {height}; see {shot.name}"


# -- the DAG explorer -------------------------------------------------------------------------

#: The notebook's start (notebook 4 shows example B) and the package's numbers behind it.
DAG = params("dag", "lecture")


def _dag_keys():
    """Every control of the DAG explorer, moved by keyboard, in order: the workers, each
    duration of B (one to 0: a task of length 0), B's options, the switch to A, A's option
    and each duration of A."""
    b_nodes, a_nodes = list(DAG.B.durations), list(DAG.A.durations)
    return [
        ("workers", "ArrowLeft"),
        ("workers", "Home"),
        ("workers", "End"),
        ("workers", "PageDown"),
        *[(f"duration-B-{node}", "ArrowRight") for node in b_nodes],
        (f"duration-B-{b_nodes[0]}", "Home"),
        (f"duration-B-{b_nodes[-1]}", "End"),
        ("coordination", "Space"),
        ("resources", "Space"),
        ("workers", "ArrowRight"),
        ("coordination", "Space"),
        ("example-B", "ArrowLeft"),  # to example A
        ("spurious_edge", "Space"),
        *[(f"duration-A-{node}", "ArrowRight") for node in a_nodes],
        (f"duration-A-{a_nodes[1]}", "End"),
        (f"duration-A-{a_nodes[2]}", "Home"),
        ("spurious_edge", "Space"),
    ]


def _set_dag(ex, setting):
    """The notebook explorer ``ex`` moved to the page's ``setting``."""
    if ex.controls["example"].value != setting["example"]:
        ex.controls["example"].value = setting["example"]  # which turns the options off
    with ex._hold():
        for name in ("spurious_edge", "coordination", "resources", "workers"):
            ex.controls[name].value = setting[name]
        for name, value in setting.items():
            if name.startswith("duration-"):
                _, key, node = name.split("-", 2)
                ex._sliders_of(key)[node].value = value
    ex.update()


_DAG_STATE = """() => {
    const s = window.lecturePage.explorers.dag;
    return {painted: s.painted, setting: s.setting, values: s.values,
            readout: document.querySelector('#dag .readout').textContent,
            table: document.querySelector('#dag .table-body').textContent};
}"""


def _same_dag_numbers(page, ex, state):
    _set_dag(ex, state["setting"])
    for part, widget in (("readout", ex.readout), ("table", ex.table)):
        html = re.sub(r"<style>.*?</style>", "", widget.value, flags=re.S)
        assert state[part] == page.evaluate(_TEXT_OF, html), (part, state["setting"])
    cp, schedule = ex.values["critical_path"], ex.values["schedule"]
    ours = state["values"]
    assert ours["critical_path"] == {
        "makespan": cp.makespan,
        "path": list(cp.path),
        "slack": dict(cp.slack),
        "earliest_start": dict(cp.earliest_start),
        "serial_time": cp.serial_time,
    }, state["setting"]
    assert ours["schedule"] == {
        "start": dict(schedule.start),
        "finish": dict(schedule.finish),
        "worker": dict(schedule.worker),
        "makespan": schedule.makespan,
    }, state["setting"]


def _kit_dag(setting, ratio, panel="plan"):
    """The notebook explorer's full draw at ``setting``, laid out as the page's (first
    on its start example, as in the notebook), showing ``panel`` where it shows one."""

    def draw(width):
        ex = dag_explorer(DAG, example="B")
        ex._on_screen({"new": [width, ratio, 0]})
        ex.panel.value = panel
        _set_dag(ex, setting)
        try:
            return ex.png()
        finally:
            ex.close()

    return draw


def test_every_dag_control_gives_the_packages_numbers_offline(
    offline_page, lecture_page, artifacts
):
    """Each control of the DAG explorer, moved by keyboard on the page opened from disk with
    nothing outside its folder allowed: the readout, the table of every task, the critical
    path (makespan, path, slack, earliest starts) and the schedule (start, finish and worker
    of every task, makespan) equal the notebook explorer's at the same values, and the first
    move of each control changes the picture."""
    page = offline_page
    _open(page, lecture_page, 1280, 720, 1)
    ex = dag_explorer(DAG, example="B")
    state = page.evaluate(_DAG_STATE)
    assert state["setting"]["example"] == "B" and state["setting"]["workers"] == DAG.workers
    _same_dag_numbers(page, ex, state)
    moved = set()
    keys = _dag_keys()
    for control, key in keys:
        before = _canvas_png(page, "dag") if control not in moved else None
        _press(page, "dag", control, key)
        state = page.evaluate(_DAG_STATE)
        _same_dag_numbers(page, ex, state)
        if before is not None:
            assert _canvas_png(page, "dag") != before, f"dag: {control} changed no pixel"
            moved.add(control)
    assert moved == {c for c, _ in keys}
    assert state["setting"]["example"] == "A"
    assert page.blocked == [], "the page asked for files outside its folder"


@pytest.mark.parametrize(
    ("width", "height", "ratio"), [(1280, 720, 1), (853, 480, 1), (1280, 720, 2)]
)
def test_the_dag_explorer_is_the_kits_picture(
    offline_page, lecture_page, artifacts, width, height, ratio
):
    """The picture the page assembles (boxes widened with their text, arrows to the new
    outlines, bars, labels, ticks and texts set from pieces) against the notebook
    explorer's full draw at the same setting, in both layouts and at pixel ratio 2: at the
    start, with a long task (wider boxes, a longer time axis), a task of length 0 (a tick),
    one worker, and on example A with its spurious edge. The narrow layout shows one panel
    at a time: the plan, then the Gantt chart after a click on its button, and the plan
    again."""
    page = offline_page
    _open(page, lecture_page, width, height, ratio)
    buttons = page.locator("#dag .panels")
    narrow = width < 1000
    assert buttons.is_visible() == narrow
    b_nodes = list(DAG.B.durations)
    moves = [
        None,
        (f"duration-B-{b_nodes[4]}", "End"),
        (f"duration-B-{b_nodes[0]}", "Home"),
        ("workers", "Home"),
        ("coordination", "Space"),
    ]
    if narrow:
        moves += [("Gantt chart",), ("workers", "End"), (f"duration-B-{b_nodes[4]}", "Home")]
    moves += [("example-B", "ArrowLeft"), ("spurious_edge", "Space")]
    if narrow:
        moves += [("plan",)]
    panel = "plan"
    for move in moves:
        if move and len(move) == 1:  # a panel's button
            before = page.evaluate("() => window.lecturePage.explorers.dag.painted")
            buttons.get_by_role("button", name=move[0], exact=True).click()
            page.wait_for_function(_SHOWN.format(name="dag", before=before))
            panel = PANELS[move[0]]
        elif move:
            _press(page, "dag", *move)
        shown = page.evaluate("() => window.lecturePage.explorers.dag")
        assert shown["panel"] == (panel if narrow else None)
        _same_picture(page, "dag", _kit_dag(shown["setting"], ratio, panel), ratio)
    assert page.blocked == []


def _finger(session, kind, x=None, y=None):
    points = [] if kind == "touchEnd" else [{"x": x, "y": y}]
    session.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})


#: Where a slider's handle is, in CSS pixels: the track less half a handle at each end.
_HANDLE = """e => { const r = e.getBoundingClientRect(), f = (e.value - e.min) / (e.max - e.min);
    return {x: r.left + 8 + f * (r.width - 16), y: r.top + r.height / 2, left: r.left + 8,
            usable: r.width - 16}; }"""


def test_a_finger_drags_the_sliders(offline_page, lecture_page):
    """On a tablet: a finger puts down on a slider's handle, slides along the track and lifts;
    the slider follows, a new picture comes and its numbers are the package's."""
    page = offline_page
    _open(page, lecture_page, 1280, 720, 1)
    session = page.metrics_session
    session.send("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 1})
    explorers = _python_explorers()
    for name, control in (("reliability", "p"), ("horizon", "q"), ("trace", "event")):
        slider = page.locator(f"#{name}-{control}")
        slider.scroll_into_view_if_needed()
        start = slider.evaluate(_HANDLE)
        value = slider.input_value()
        before = page.evaluate(f"() => window.lecturePage.explorers.{name}.painted")
        to = (
            start["left"]
            + (0.8 if start["x"] < start["left"] + start["usable"] / 2 else 0.2) * start["usable"]
        )
        _finger(session, "touchStart", start["x"], start["y"])
        for k in range(1, 11):
            _finger(session, "touchMove", start["x"] + (to - start["x"]) * k / 10, start["y"])
        _finger(session, "touchEnd")
        try:
            page.wait_for_function(_SHOWN.format(name=name, before=before), timeout=10_000)
        except PlaywrightTimeout:
            pytest.fail(f"{name}: a finger on {control} painted no new picture")
        assert slider.input_value() != value, f"{name}: the finger did not move {control}"
        _same_numbers(page, name, explorers[name], page.evaluate(_STATE, name))
    assert page.blocked == []
