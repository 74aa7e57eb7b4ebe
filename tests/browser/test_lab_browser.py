"""End to end in a real browser: the long-horizons notebook runs in JupyterLab and its explorer
redraws when a slider moves.

One JupyterLab and one Chromium serve the whole module (see conftest.py). Screenshots go to
tests/browser/artifacts/; every failure message names the screenshot to look at.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import NoReturn

import pytest
from PIL import Image, ImageChops

pytestmark = pytest.mark.browser

#: Slider descriptions of the horizon explorer start with the symbol: "q audit", "p executor".
Q_LABEL = re.compile(r"^\s*q\b")
WIDGET_ERROR = ".jupyter-widgets-error-widget"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

OPEN_TIMEOUT_MS = 60_000
SAVE_TIMEOUT_S = 30.0
RUN_ALL_TIMEOUT_MS = 120_000
REDRAW_TIMEOUT_S = 20.0
#: Moving q by ten slider steps shifts the q marker and redraws three black curves: far more
#: than this many pixels change. A handful of pixels would not show a real redraw.
MIN_CHANGED_PIXELS = 200


@dataclass
class NotebookPage:
    """The browser tab with the executed notebook, and what the tab reported on the way."""

    page: object
    server: object
    name: str
    artifacts: Path
    page_errors: list[str] = field(default_factory=list)
    #: The notebook as the page saved it after Run All (nbformat JSON).
    saved: dict | None = None

    def screenshot(self, name: str) -> Path:
        path = self.artifacts / f"{name}.png"
        self.page.screenshot(path=path, full_page=True)
        return path

    def fail(self, message: str, name: str) -> NoReturn:
        """Fail with the message and the path of a screenshot taken now."""
        pytest.fail(f"{message}\nscreenshot: {self.screenshot(name)}", pytrace=False)

    def assert_no_page_errors(self) -> None:
        assert not self.page_errors, f"uncaught errors in the page: {self.page_errors}"

    def kernel_state(self) -> str:
        """The execution state of the notebook's kernel as the server reports it."""
        sessions = [s for s in self.server.api("sessions") if s["path"] == self.name]
        if not sessions or not sessions[0].get("kernel"):
            return "no kernel yet"
        return sessions[0]["kernel"]["execution_state"]

    def wait_for_idle_kernel(self, timeout_s: float) -> None:
        """Wait until the server reports the notebook's kernel idle (bounded poll)."""
        deadline = time.monotonic() + timeout_s
        while (state := self.kernel_state()) != "idle":
            if time.monotonic() > deadline:
                self.fail(
                    f"the kernel of {self.name} is still {state!r} after {timeout_s:g} s", "kernel"
                )
            time.sleep(0.1)

    def save(self) -> None:
        """Save the notebook from the page and keep what was written in :attr:`saved`.

        The outputs are read back from the file because the page draws an error and text
        written to stderr alike; only the saved notebook tells them apart.
        """
        written = self.server.modified(self.name)
        self.page.locator('.jp-NotebookPanel-toolbar [data-command="docmanager:save"]').click()
        self.saved = self.server.saved_since(self.name, written, timeout_s=SAVE_TIMEOUT_S)
        if self.saved is None:
            self.fail(f"saving {self.name} did not finish within {SAVE_TIMEOUT_S:g} s", "save")


def _runnable(cell: dict) -> bool:
    """A code cell with code in it (Run All leaves an empty cell without a count)."""
    return cell["cell_type"] == "code" and bool("".join(cell["source"]).strip())


# Done when no code cell is queued or running any more and at least one has run. Run All marks
# every cell [*] at once, so this holds only at the end, or where it stopped at an error.
_RUN_ALL_DONE = """(total) => {
    const cells = document.querySelectorAll('.jp-Notebook .jp-Notebook-cell');
    if (cells.length !== total) return false;
    const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')]
        .map(p => p.textContent.trim());
    return !prompts.includes('[*]:') && prompts.some(p => /^\\[\\d+\\]:$/.test(p));
}"""


@pytest.fixture(scope="module")
def notebook_page(answered_notebook, chromium_context, lab_server, artifacts):
    """Open the notebook in JupyterLab, run all cells and wait until they have all run.

    Its answers are filled in: the explorer opens only once they are on track.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # present: chromium_context

    total = len(json.loads(answered_notebook.read_text(encoding="utf-8"))["cells"])
    name = answered_notebook.relative_to(lab_server.root).as_posix()
    page = chromium_context.new_page()
    tab = NotebookPage(page=page, server=lab_server, name=name, artifacts=artifacts)
    page.on("pageerror", lambda error: tab.page_errors.append(str(error)))
    try:
        page.goto(lab_server.lab_url(name))
        cells = page.locator(".jp-Notebook .jp-Notebook-cell")
        try:
            cells.nth(total - 1).wait_for(timeout=OPEN_TIMEOUT_MS)
        except PlaywrightTimeout:
            tab.fail(f"{name} did not open with its {total} cells", "open-failed")
        tab.wait_for_idle_kernel(OPEN_TIMEOUT_MS / 1000)
        # The server may report the new kernel idle before the page has connected to it.
        status = page.locator("#jp-main-statusbar")
        try:
            status.get_by_text(re.compile(r"\|\s*Idle")).wait_for(timeout=OPEN_TIMEOUT_MS)
        except PlaywrightTimeout:
            tab.fail("the notebook's kernel never showed as idle in the status bar", "kernel")
        if page.locator(".jp-Dialog").count():
            text = page.locator(".jp-Dialog").first.inner_text()
            tab.fail(f"a dialog blocks the notebook: {text!r}", "dialog")

        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        try:
            page.wait_for_function(_RUN_ALL_DONE, arg=total, timeout=RUN_ALL_TIMEOUT_MS)
        except PlaywrightTimeout:
            tab.fail(f"Run All did not finish within {RUN_ALL_TIMEOUT_MS / 1000:g} s", "run-all")
        tab.wait_for_idle_kernel(RUN_ALL_TIMEOUT_MS / 1000)
        tab.screenshot("lab-after-run-all")
        tab.save()
        yield tab
    finally:
        page.close()


def test_every_cell_runs_without_error(notebook_page):
    cells = notebook_page.saved["cells"]
    errors = [
        (i, output)
        for i, cell in enumerate(cells)
        for output in cell.get("outputs", [])
        if output["output_type"] == "error"
    ]
    if errors:
        i, first = errors[0]
        traceback = ANSI.sub("", "\n".join(first["traceback"]))
        notebook_page.fail(
            f"{len(errors)} cell(s) raised; cell {i}: {first['ename']}: {first['evalue']}\n"
            f"{traceback[-3000:]}",
            "cell-error",
        )
    not_run = [i for i, c in enumerate(cells) if _runnable(c) and c["execution_count"] is None]
    assert not not_run, f"code cells {not_run} of {notebook_page.name} did not run"
    broken_widgets = notebook_page.page.locator(WIDGET_ERROR).all_inner_texts()
    if broken_widgets:
        notebook_page.fail(f"widgets failed to render: {broken_widgets}", "widget-error")
    notebook_page.assert_no_page_errors()


def _changed_pixels(before: bytes, after: bytes) -> int:
    """Pixels that differ between two screenshots (all of them if the sizes differ)."""
    a = Image.open(BytesIO(before)).convert("RGB")
    b = Image.open(BytesIO(after)).convert("RGB")
    if a.size != b.size:
        return max(a.width * a.height, b.width * b.height)
    difference = ImageChops.difference(a, b).convert("L")
    return a.width * a.height - difference.histogram()[0]


def test_q_slider_redraws_the_horizon_plot(notebook_page):
    page = notebook_page.page
    q_label = page.locator(".widget-label", has_text=Q_LABEL)
    explorer = page.locator(".jp-Cell-outputArea > .jp-OutputArea-child").filter(
        has=page.locator(".widget-slider").filter(has=q_label)
    )
    if explorer.count() == 0:
        notebook_page.fail("no output of the notebook shows a slider labelled 'q ...'", "no-q")
    explorer = explorer.first
    handle = explorer.locator(".widget-slider").filter(has=q_label).locator('[role="slider"]')
    plot = explorer.locator(".decompkit-figure canvas")
    if plot.count() != 1:
        notebook_page.fail(f"the explorer shows {plot.count()} figures, not one", "no-plot")

    start = float(handle.get_attribute("aria-valuenow"))
    upper = float(handle.get_attribute("aria-valuemax"))
    key = "ArrowRight" if start < upper else "ArrowLeft"
    before = plot.screenshot(path=notebook_page.artifacts / "horizon-plot-before.png")
    handle.focus()
    for _ in range(10):
        page.keyboard.press(key)
    moved = float(handle.get_attribute("aria-valuenow"))
    if moved == start:
        notebook_page.fail(f"pressing {key} on the q slider left it at {start}", "q-stuck")

    # Bounded poll: the kernel redraws after each step. Done when the image differs from the
    # start, the kernel is idle and two screenshots in a row agree (the last redraw arrived).
    deadline = time.monotonic() + REDRAW_TIMEOUT_S
    previous = before
    while True:
        current = plot.screenshot()
        changed = _changed_pixels(before, current)
        settled = not _changed_pixels(previous, current) and notebook_page.kernel_state() == "idle"
        if changed and settled:
            break
        if time.monotonic() > deadline:
            notebook_page.fail(
                f"q moved from {start} to {moved} but the plot did not settle into a new image "
                f"within {REDRAW_TIMEOUT_S:g} s ({changed} pixels differ from the start)",
                "q-no-redraw",
            )
        previous = current
        page.wait_for_timeout(150)
    after = plot.screenshot(path=notebook_page.artifacts / "horizon-plot-after.png")
    notebook_page.screenshot("lab-after-q-slider")

    changed = _changed_pixels(before, after)
    assert changed >= MIN_CHANGED_PIXELS, (
        f"moving q from {start} to {moved} changed only {changed} pixels of the plot "
        f"(screenshots in {notebook_page.artifacts})"
    )
    notebook_page.assert_no_page_errors()
