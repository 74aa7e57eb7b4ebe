"""The moving artists the browser computes (page/moving.js) are the kernel's own picture.

For the reliability and horizon explorers the view draws a setting's picture the moment a
control moves, computed in the browser from the layout the kernel sent (``view.moving``); the
kernel's picture replaces it when it comes. Here Node computes those scenes for many settings
and each must equal, item by item and float by float, the scene the kernel sends for the same
setting; where the kernel draws something the formulas do not (the reliability veil at p = 0
or 1), the browser must decline.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess

import numpy as np
import pytest

from decompkit.widgets import base, horizon_explorer, reliability_explorer
from decompkit.widgets.moving import Moving, layout_of
from decompkit.widgets.view import MODULES

RUNNER = __import__("pathlib").Path(__file__).with_name("moving_scene.mjs")
NODE = shutil.which("node")

needs_node = pytest.mark.skipif(
    NODE is None, reason="Node.js is not on PATH: the browser's JavaScript cannot be run here"
)


def _portable(value):
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {k: _portable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_portable(v) for v in value]
    return value


def _plain(item):
    """A scene item with its bytes as numbers, as moving_scene.mjs writes them."""
    out = {}
    for key, value in item.items():
        if isinstance(value, bytes):
            kind = np.uint8 if key == "c" else np.float32
            out[key] = np.frombuffer(value, kind).tolist()
        else:
            out[key] = value
    return out


def _scenes(explorer, settings):
    """Per setting: (the kernel's scene, the browser's), each item with numbers for bytes."""
    cases, kernel = [], []
    for setting in settings:
        with explorer._hold():
            for name, value in setting.items():
                explorer.controls[name].value = value
        assert explorer.update()
        moving = explorer.view.moving
        assert moving["backdrop"] == explorer.view.backdrop
        assert moving["epoch"] == explorer.view.epoch
        values = {name: explorer.controls[name].value for name in moving["names"]}
        layout = _portable(moving["layout"])
        cases.append(
            {"kind": moving["kind"], "spec": moving["spec"], "values": values, "layout": layout}
        )
        kernel.append([_plain(item) for item in explorer.view.scene])
    path = RUNNER.parent / ".moving-cases.json"
    try:
        path.write_text(json.dumps(cases, allow_nan=False), encoding="utf-8")
        run = subprocess.run(
            [NODE, str(RUNNER), *map(str, MODULES[:3]), str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        path.unlink(missing_ok=True)
    assert run.returncode == 0, run.stderr
    return list(zip(kernel, json.loads(run.stdout), strict=True))


RELIABILITY = [
    {},
    {"p": 0.5, "n": 37, "d": 0.3, "phi": 0.9},
    {"p": 0.01, "n": 1, "d": 1.0, "phi": 0.0, "kappa": 10},
    {"p": 0.99, "n": 50, "d": 0.0, "phi": 1.0, "kappa": 1},
    {"p": 0.73, "n": 12, "d": 0.55, "phi": 0.55},
]
HORIZON = [
    {},
    {"p": 0.8, "q": 0.3, "n": 120, "budget_factor": 1.5},
    {"q": 0.0},
    {"q": 1.0, "p": 1.0},  # flat curves: Agg snaps them to the pixel grid
    {"p": 0.5, "q": 0.05, "n": 1, "budget_factor": 4.0},
    {"p": 0.0, "n": 200, "budget_factor": 1.0},
]


@needs_node
def test_the_browsers_reliability_scene_is_the_kernels():
    explorer = reliability_explorer()
    for kernel, browser in _scenes(explorer, RELIABILITY):
        assert browser == kernel


@needs_node
@pytest.mark.parametrize("p", [0.0, 1.0])
def test_where_the_kernel_veils_the_plane_the_browser_declines(p):
    """At p = 0 or 1 the kernel draws a veil and a text over the plane; the browser, which
    draws no text, leaves that picture to the kernel."""
    explorer = reliability_explorer()
    [(kernel, browser)] = _scenes(explorer, [{"p": p}])
    assert browser is None
    assert any(item["t"] == "i" for item in kernel)  # the veil's text


@needs_node
def test_the_browsers_horizon_scene_is_the_kernels():
    explorer = horizon_explorer(trials=200, seed=1)
    for kernel, browser in _scenes(explorer, HORIZON):
        assert browser == kernel


@needs_node
def test_after_a_simulation_the_browser_draws_its_points_where_the_kernel_does():
    """The simulation's points are the kernel's items, drawn where n, p and the budget are
    the simulation's (a change of q keeps them, one of n hides them); the layout the browser
    has is renewed with the pictures' epoch."""
    explorer = horizon_explorer(p=0.9, q=0.5, n=40, trials=200, seed=1)
    before = explorer.view.epoch
    explorer.run_monte_carlo()
    assert explorer.view.epoch == before + 1 == explorer.view.moving["epoch"]
    assert explorer.view.moving["spec"]["monte_carlo"] == {
        "n": 40,
        "p": 0.9,
        "budget": 80,
        "key": "mc",
    }
    pairs = _scenes(explorer, [{}, {"q": 0.7}, {"n": 41}, {"n": 40, "budget_factor": 2.5}])
    simulated = [len(kernel) for kernel, _ in pairs]
    assert simulated[0] == simulated[1] > simulated[2] == simulated[3]
    for kernel, browser in pairs:
        assert browser == kernel


def test_without_browser_computing_the_view_gets_no_layout(monkeypatch):
    monkeypatch.setattr(base, "COMPUTE_IN_BROWSER", False)
    assert reliability_explorer().view.moving == {}
    assert horizon_explorer(trials=200).view.moving == {}


def test_a_new_layout_brings_the_browser_a_new_one():
    """A new width: the layout goes with the new background, its axes where the figure's
    are now."""
    explorer = reliability_explorer()
    wide = explorer.view.moving["layout"]["axes"]["plane"]["box"]
    explorer._on_screen({"new": [700, 1, 0]})
    moving = explorer.view.moving
    assert moving["backdrop"] == explorer.view.backdrop > 1
    assert moving["layout"]["axes"]["plane"]["box"][2] < wide[2]
    assert moving["layout"]["size"][0] == 700


def test_an_artist_that_draws_nothing_has_no_look_to_record():
    explorer = reliability_explorer()
    explorer.marker.set_visible(False)
    left, plane = explorer.panels
    moving = Moving("reliability", {}, {"left": left}, {"marker": explorer.marker}, [])
    with pytest.raises(ValueError, match="draws nothing: no look to record"):
        layout_of(explorer.figure, moving)
