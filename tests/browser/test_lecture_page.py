"""The static lecture page in Chromium, opened from disk with every request outside its folder
blocked: each slider moved by keyboard gives the numbers the package gives, and the page fits
a 1280 x 720 projector at 100 % and at 150 % zoom with no text under 12 CSS pixels.

The package's side is the notebook explorer itself, moved to the same values: its readout and
the numbers it draws (``.values``) must equal the page's. Screenshots go to
tests/browser/artifacts/ (lecture-page-*.png).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from decompkit.exercises.params import params
from decompkit.page import build_page
from decompkit.widgets import horizon_explorer, reliability_explorer

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
}
#: The numbers each explorer draws, compared curve by curve.
DRAWN = {
    "reliability": lambda values: {f"curves.{k}": v for k, v in values["curves"].items()},
    "horizon": lambda values: {k: values[k] for k in ("success_by_n", "sweep", "grounded")},
}

_STATE = """name => {
    const s = window.lecturePage.explorers[name];
    return {painted: s.painted, setting: s.setting, values: s.values,
            readout: document.querySelector(`#${name} .readout`).textContent};
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
def lecture_page(tmp_path_factory):
    return build_page(tmp_path_factory.mktemp("lecture-page") / "page")


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
    session = page.context.new_cdp_session(page)
    session.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": False},
    )
    page.set_viewport_size({"width": width, "height": height})
    page.goto(index.as_uri())
    page.wait_for_function(
        "() => document.body.dataset.ready && [...document.querySelectorAll('section.explorer')]"
        ".every(s => Number(s.dataset.painted) >= 1)"
    )


def _python_explorers():
    chain, horizon = params("chain", "lecture"), params("horizon", "lecture")
    return {
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
    html = re.sub(r"<style>.*?</style>", "", explorer.readout.value, flags=re.S)
    assert state["readout"] == page.evaluate(_TEXT_OF, html), (name, state["setting"])
    drawn_page = DRAWN[name](state["values"])
    drawn_python = DRAWN[name](explorer.values)
    for key, ours in drawn_python.items():
        np.testing.assert_allclose(
            np.asarray(drawn_page[key], float), ours, rtol=1e-12, atol=1e-15, err_msg=key
        )


def test_every_control_gives_the_packages_numbers_offline(offline_page, lecture_page):
    page = offline_page
    _open(page, lecture_page, 1280, 720, 1)
    explorers = _python_explorers()
    for name, keys in KEYS.items():
        state = page.evaluate(_STATE, name)
        _same_numbers(page, name, explorers[name], state)
        moved = set()
        for control, key in keys:
            canvas = page.locator(f"#{name} canvas")
            before = canvas.screenshot() if control not in moved else None
            page.focus(f"#{name}-{control}")
            page.keyboard.press(key)
            page.wait_for_function(
                f"() => window.lecturePage.explorers['{name}'].painted > {state['painted']}"
            )
            state = page.evaluate(_STATE, name)
            _same_numbers(page, name, explorers[name], state)
            if before is not None:  # the first move of each control changes the picture
                assert canvas.screenshot() != before, f"{name}: {control} changed no pixel"
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
    page.screenshot(path=str(shot), full_page=True)
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{overflow} px wider than the window; see {shot.name}"
    smallest, where = page.evaluate(_SMALLEST_TEXT)
    assert smallest >= 12, f"text of {smallest} px ({where}); see {shot.name}"
    for figure in page.evaluate(_FIGURES):
        assert figure["css"] == figure["styled"], f"{figure['name']} is scaled down: {figure}"
        assert figure["pixels"] == ratio * figure["styled"], figure
        assert figure["height"] <= height, f"{figure['name']} does not fit: {figure}; {shot.name}"
    assert page.blocked == []
