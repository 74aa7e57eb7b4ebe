"""The four explorers in a real browser at projector size: whole on screen, keys that work in
Notebook 7, and a saved notebook that shows every figure again without a kernel.

Uses the package's one JupyterLab server (conftest.py), which serves Notebook 7 too, and the
kit's settings (jupyter/settings/overrides.json: widget state saved with the notebook).
Screenshots go to tests/browser/artifacts/ (explorer-<ui>-<name>.png).
"""

from __future__ import annotations

import json
import sys
import time

import pytest

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import bench_browser as bench  # noqa: E402

pytestmark = pytest.mark.browser

#: The projector's screen (CSS pixels) the explorers are made for.
SCREEN = (1280, 720)


@pytest.fixture(scope="module")
def explorers_notebook(lab_server):
    path = lab_server.root / bench.NOTEBOOK
    path.write_text(bench.notebook_json(), encoding="utf-8")
    return bench.NOTEBOOK


@pytest.fixture(scope="module")
def projector_page(chromium_context):
    page = chromium_context.new_page()
    page.set_viewport_size({"width": 1280, "height": 720})
    yield page
    page.close()


def _run(page, server, ui):
    bench.open_and_run(page, server, ui)
    if ui == "lab" and page.locator(".jp-FileBrowser:visible").count():
        page.keyboard.press("Control+b")  # the file browser would take a third of the width
        bench.wait_until_drawn_to_size(page)


#: Height of the part of the page that scrolls the notebook (below menus and toolbars).
_VISIBLE_HEIGHT = """e => {
    for (let a = e.parentElement; a; a = a.parentElement) {
        const style = getComputedStyle(a);
        if (/(auto|scroll)/.test(style.overflowY) && a.scrollHeight > a.clientHeight)
            return a.getBoundingClientRect().height;
    }
    return window.innerHeight;
}"""


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_each_explorer_fits_a_projector_and_is_screenshotted(
    ui, projector_page, lab_server, explorers_notebook, artifacts
):
    """At 1280 x 720 each explorer, controls, figure and readout, fits the notebook's
    visible area whole, and its figure is drawn for the width it is shown at."""
    page = projector_page
    _run(page, lab_server, ui)
    for index, name in enumerate(bench.EXPLORERS):
        root = bench.explorer_root(page, index)
        root.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(200)
        root.screenshot(path=artifacts / f"explorer-{ui}-{name.replace(' ', '-')}.png")
        figure = root.locator(".decompkit-figure canvas")
        box = figure.bounding_box()
        backing = figure.evaluate("c => [c.width, c.height]")
        # No browser scaling: the canvas has as many pixels as CSS pixels (ratio 1).
        assert [round(box["width"]), round(box["height"])] == backing, name
        whole = root.bounding_box()
        visible = root.evaluate(_VISIBLE_HEIGHT)
        assert whole["height"] <= visible, (
            f"{name}: the explorer is {whole['height']:.0f} CSS pixels tall, the notebook "
            f"shows {visible:.0f} at 1280 x 720"
        )
        assert whole["width"] <= SCREEN[0], name


def test_arrow_keys_move_a_slider_in_notebook_7(projector_page, lab_server, explorers_notebook):
    page = projector_page
    _run(page, lab_server, "notebook")
    handle = bench.find_control(bench.explorer_root(page, 0), "n steps", "slider")
    handle.focus()
    before = float(handle.get_attribute("aria-valuenow"))
    latency = bench.one_change(page, 0, lambda: page.keyboard.press("ArrowRight"))
    assert float(handle.get_attribute("aria-valuenow")) == before + 1
    assert latency is not None, "the key moved the slider but no new picture came"


def _metadata(path) -> dict:
    """The notebook's metadata, or {} while the file is being written."""
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    except json.JSONDecodeError:
        return {}


def test_a_saved_notebook_shows_every_figure_without_a_kernel(
    projector_page, lab_server, explorers_notebook, artifacts
):
    page = projector_page
    _run(page, lab_server, "lab")
    page.keyboard.press("Control+s")
    path = lab_server.root / explorers_notebook
    deadline = time.monotonic() + 30
    while "widgets" not in _metadata(path):
        assert time.monotonic() < deadline, "the saved notebook carries no widget state"
        time.sleep(0.2)
    lab_server.shut_down_kernels()
    for ui in ("lab", "notebook"):
        url = lab_server.lab_url if ui == "lab" else lab_server.notebook_url
        page.goto(url(explorers_notebook))
        page.wait_for_function(
            "n => document.querySelectorAll('.decompkit-figure[data-seq]').length >= n",
            arg=len(bench.EXPLORERS),
            timeout=60_000,
        )
        notes = page.locator(".decompkit-figure-note")
        notes.first.wait_for(state="visible", timeout=15_000)
        page.screenshot(path=artifacts / f"reopened-{ui}.png")
        assert notes.filter(has_text="run this cell").count() == len(bench.EXPLORERS)
        assert page.get_by_text("model not found").count() == 0
