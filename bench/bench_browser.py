"""Explorer latency in a real browser, per kind of change a lecturer makes, with and without
pictures made ahead.

Run from the repository root (needs /usr/bin/chromium: ``bash .ci/install-browser``):

    python bench/bench_browser.py             # JupyterLab and Notebook 7, both modes, 20 changes
    python bench/bench_browser.py --quick     # 5 changes per row
    python bench/bench_browser.py --no-ahead  # only without pictures made ahead
    python bench/bench_browser.py --mode kernel  # only the round trip to the kernel
    python bench/bench_browser.py --mode ahead --ui lab --explorer DAG --changes 40
    python bench/bench_browser.py --page      # the lecture page, no kernel (bench/bench_page.py)

What is measured. A throw-away Jupyter server serves a notebook with one explorer per cell;
headless Chromium (1280 x 800 CSS pixels, device pixel ratio 1: a projector) opens it in
JupyterLab, then in Notebook 7, and runs it in three modes, each in a fresh kernel and page:
``kernel``, every picture the kernel's answer (the round trip); ``browser``, the browser
computes the moving artists of the reliability and horizon explorers itself and draws them at
once (the other two explorers wait for the kernel, as in mode ``kernel``); ``ahead``, as the
kit ships: that, and the kernel making pictures ahead for the neighbouring steps. Every
change is measured from its first input event (a capture-phase listener stamps
``performance.now()`` at the key press or pointer down) to the moment the new picture is
drawn on the explorer's canvas (its ``decompkit-frame`` event). The next change comes at a
lecturer's pace: once the kernel's own answer has arrived too, and ``PACE_MS`` later; before
the first change of a control the script waits ``SWITCH_MS``, a hand moving to it.

Kinds of change, one row each per explorer and control:

- ``arrow``: one step by an arrow key from the slider's focused handle;
- ``click``: a pointer click on the slider's track at least 15 % of its length away from the
  handle (checkboxes, buttons and the example switch: a click on them);
- ``jump``: a click near the far end of the track (the value goes most of the way across);
- ``drag``: the mouse holds the handle and sweeps the track there and back in 2 s, its place
  following the clock as a hand's does (a move every 16 ms at most); the row gives pictures
  drawn per second and the slider's value changes per second. A picture counts when it shows
  a setting other than the one before it (the kernel's picture replacing the browser's own of
  the same setting does not) and is drawn during the sweep or, for the last values passed,
  within the row's latency target after the hand stops.

A click or a jump that changes the value by one step or less did not land on the track: the
benchmark stops with an error. Each change goes to a setting the page has not shown yet where
the control allows it (the page keeps every answer and every picture sent ahead, and a
setting seen before is drawn from there): ``ready`` counts the changes drawn from a picture
in the page. Without pictures ahead the row's times are those of the changes that waited for
the kernel (``n``); in the other modes, of every change, as the lecturer sees them.

Targets on a quiet machine: median <= 50 ms for the reliability, horizon and trace explorers,
<= 80 ms for the DAG explorer; >= 20 pictures a second while dragging (or one per value the
slider passes, when it passes fewer). The load average (``os.getloadavg``, 1 min) is printed
per row at its start and end: on a shared machine the times include waiting for a CPU, and
the CPU milliseconds per change (kernel, server, browser, from /proc) are what holds.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.browser.jupyter_server import (  # noqa: E402
    chromium,
    interrupt_on_terminate,
    running_server,
)

#: The notebook of each mode: as the kit ships (pictures ahead, moving artists computed in the
#: browser), computed in the browser only, and the kernel's round trip only.
NOTEBOOK = "bench_explorers.ipynb"
NOTEBOOKS = {
    "ahead": NOTEBOOK,
    "browser": "bench_explorers_browser.ipynb",
    "kernel": "bench_explorers_kernel.ipynb",
}

#: Code of the notebook's cells; each explorer cell's output is found by its order.
SETUP = """\
from decompkit import examples, scheduler, widgets
from decompkit.widgets import base

base.MAKE_AHEAD = {ahead}
base.COMPUTE_IN_BROWSER = {browser}

a = examples.coding_task()
repaired = scheduler.run_with_repair(
    a.graph, a.durations, workers=2,
    step=scheduler.scripted({"run_tests": ["fail"]}), faulty={"run_tests": "write_code"},
)"""
EXPLORERS = {
    "reliability": "widgets.reliability_explorer()",
    "horizon": "widgets.horizon_explorer(trials=2000, seed=1)",
    "trace stepper": "widgets.trace_stepper(repaired)",
    "DAG": 'widgets.dag_explorer(example="B", workers=3)',
}
#: Target for the median latency of a change, ms, and for the pictures a second of a drag.
TARGET_MS = {"reliability": 50, "horizon": 50, "trace stepper": 50, "DAG": 80}
TARGET_FPS = 20
#: The ``seq`` of a picture the browser computed (explorer.js; a picture sent ahead has -1).
COMPUTED = -2

#: The controls to change, per explorer, in order: (label, kind). Kinds: "slider" (rows
#: arrow, click, jump and drag), "checkbox", "button" (clicked), "toggle" (the other option
#: of a ToggleButtons). The example switch comes last: it swaps the DAG's sliders.
CONTROLS = {
    "reliability": [
        ("p per step", "slider"),
        ("n steps", "slider"),
        ("κ attempts", "slider"),
        ("d detection", "slider"),
        ("φ false alarm", "slider"),
    ],
    "horizon": [
        ("p executor", "slider"),
        ("q audit", "slider"),
        ("n subtasks", "slider"),
        ("γ = B / n", "slider"),
    ],
    "trace stepper": [
        ("forward ▶", "button"),
        ("◀ back", "button"),
        ("events done", "slider"),
    ],
    "DAG": [
        ("workers", "slider"),
        ("patch ETL", "slider"),
        ("patch dashboard API", "slider"),
        ("read schemas", "slider"),
        ("find callers", "slider"),
        ("coordination tax", "checkbox"),
        ("one lock", "checkbox"),
        ("example", "toggle"),
    ],
}
#: A slider stepped (unmeasured) before each click on a checkbox or the example switch, so
#: that the click leads to a setting the page has not seen.
MOVER = {"DAG": "read runbook"}
#: A slider moved to the far end of its track (unmeasured) before a control's clicks: the
#: trace stepper's back button then steps through settings the page has not seen.
PREPARE = {("trace stepper", "◀ back"): "events done"}
#: Kinds of change of a slider, in the order measured.
SLIDER_KINDS = ("arrow", "click", "jump", "drag")

PAGE_SCRIPT = """() => {
  if (window.__dk) return;
  const dk = (window.__dk = { input: null, frames: [], values: [] });
  // On the window, in the capture phase, registered before any explorer: first in line.
  for (const type of ["keydown", "pointerdown", "mousedown", "pointermove"]) {
    window.addEventListener(type, (e) => {
      if (type === "pointermove" && !e.buttons) return;
      if (dk.input === null) dk.input = performance.now();
    }, true);
  }
  document.addEventListener("decompkit-frame", (e) => {
    const all = [...document.querySelectorAll(".decompkit-explorer")];
    const owner = all.findIndex((x) => x.contains(e.target));
    dk.frames.push({ explorer: owner, seq: e.detail.seq, time: e.detail.time,
                     received: e.detail.received, changed: e.detail.changed,
                     kernel: e.detail.kernel, input: dk.input, setting: e.detail.setting });
  }, true);
}"""

#: The setting an explorer's controls show in the page: ``[label, value, step]`` per slider,
#: checkboxes, the option chosen (the page keeps a picture per setting).
STATE_SCRIPT = """root => {
  const sliders = [...root.querySelectorAll('.widget-slider')].map(s => [
    (s.querySelector('.widget-label') || {}).textContent,
    Number(s.querySelector('.noUi-target').noUiSlider.get()),
    s.querySelector('.noUi-target').noUiSlider.options.step]);
  const boxes = [...root.querySelectorAll('.widget-checkbox input')].map(c => c.checked);
  const chosen = [...root.querySelectorAll('.widget-toggle-buttons .mod-active')]
    .map(b => b.textContent);
  return JSON.stringify([sliders, boxes, chosen]);
}"""

#: A slider's range, step and value, from its noUiSlider (``aria-valuenow`` is rounded to
#: one decimal).
SLIDER_SCRIPT = """handle => {
  const api = handle.closest('.noUi-target').noUiSlider;
  const o = api.options;
  return { low: o.range.min, high: o.range.max, step: o.step, value: Number(api.get()) };
}"""


#: Processes whose CPU time the benchmark reads, by a word of their command line.
PROCESSES = {"kernel": "ipykernel", "server": "jupyter", "browser": "chromium"}


def _descendants(root: int) -> list[int]:
    """Process ids under ``root`` (Linux /proc), found through their parent ids."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        children = [p for p, parent in parents.items() if parent == pid]
        found += children
        frontier += children
    return found


def cpu_seconds() -> dict:
    """CPU seconds (user + system) used so far by the kernel, the server and the browser."""
    totals = dict.fromkeys(PROCESSES, 0.0)
    if not Path("/proc/self/stat").exists():
        return totals
    tick = os.sysconf("SC_CLK_TCK")
    for pid in _descendants(os.getpid()):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        for name, word in PROCESSES.items():
            if word in command:
                totals[name] += (int(fields[11]) + int(fields[12])) / tick
                break
    return totals


@dataclass
class Result:
    """One row: the changes of one kind to one control, in one UI and mode."""

    ui: str
    mode: str
    explorer: str
    control: str
    kind: str
    latencies: list = field(default_factory=list)
    #: Per change: input to the picture's message in the page, and from there to drawn.
    wire: list = field(default_factory=list)
    paint: list = field(default_factory=list)
    #: Per change: input to the control's new value in the page; the kernel's own wall and
    #: CPU time for the update.
    page: list = field(default_factory=list)
    kernel: list = field(default_factory=list)
    cpu: list = field(default_factory=list)
    #: Per change: drawn from a picture in the page (made ahead, or an earlier answer).
    ready: list = field(default_factory=list)
    #: CPU milliseconds per change of each process, over all changes of the row.
    processes: dict = field(default_factory=dict)
    missed: int = 0
    #: Clicks on a track the slider took no notice of, made again (not measured).
    retried: int = 0
    #: A drag: pictures drawn and value changes of the slider, per second of the sweep.
    fps: float | None = None
    values_per_s: float | None = None
    drawn: int = 0
    drawn_ready: int = 0
    #: Of those ready, the pictures computed in the browser.
    drawn_computed: int = 0
    #: Of those drawn, the pictures drawn after the hand stopped (within the row's target).
    late: int = 0
    #: 1-minute load average at the row's start and end.
    load: tuple = (float("nan"), float("nan"))

    def judged(self, name: str) -> list:
        """The values of ``name`` for the changes the row is judged on: in mode ``kernel``,
        those that waited for the kernel; in the others, every change."""
        values = getattr(self, name)
        if self.mode != "kernel":
            return values
        return [v for v, ready in zip(values, self.ready, strict=True) if not ready]

    def kernel_path(self, name: str) -> list:
        """The values of ``name`` for the changes that waited for the kernel."""
        return [v for v, ready in zip(getattr(self, name), self.ready, strict=True) if not ready]

    @property
    def target(self) -> float:
        """The row's target: a median in ms, or pictures a second for a drag (one per value
        the slider passed, when it passed fewer than ``TARGET_FPS`` a second)."""
        if self.kind == "drag":
            return min(TARGET_FPS, self.values_per_s or 0.0)
        return TARGET_MS[self.explorer]

    @property
    def verdict(self) -> str:
        """ "pass", "FAIL", or "n/a" (no change waited for the kernel)."""
        if self.kind == "drag":
            return "pass" if self.fps is not None and self.fps >= self.target else "FAIL"
        judged = self.judged("latencies")
        if not judged and not self.missed:
            return "n/a"
        passed = judged and statistics.median(judged) <= self.target and not self.missed
        return "pass" if passed else "FAIL"


def p90(values) -> float:
    """The 90th percentile of ``values`` (linear between the closest ranks).

    >>> p90([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]), p90([7])
    (91.0, 7)
    """
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def notebook_json(mode: str = "ahead") -> str:
    """The notebook of ``mode``: the set-up cell, then explorer ``i`` as ``explorer_i`` in
    cell ``i + 1``."""
    setup = SETUP.replace("{ahead}", str(mode == "ahead"))
    cells = [setup.replace("{browser}", str(mode != "kernel"))]
    cells += [f"explorer_{i} = {code}\nexplorer_{i}" for i, code in enumerate(EXPLORERS.values())]
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "execution_count": None,
                    # a cell keeps its id from one page load to the next, as in a saved notebook
                    "id": f"cell-{i}",
                    "metadata": {},
                    "outputs": [],
                    "source": source,
                }
                for i, source in enumerate(cells)
            ],
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


#: What a page that did not finish Run All shows: its cells' prompts, its explorers'
#: pictures and the kernel's status, for the error message.
_RUN_STATE = """() => {
    const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
        .map(e => e.textContent.trim()).join(' ');
    const drawn = document.querySelectorAll('.decompkit-figure[data-seq]').length;
    const status = [...document.querySelectorAll('[data-status]')].map(e => e.dataset.status);
    return `prompts ${prompts || 'none'}; ${drawn} pictures; kernel ${status.join(',') || '?'}`;
}"""


def open_and_run(page, server, ui: str, *, hide_files: bool = False, notebook=NOTEBOOK) -> None:
    """Open ``notebook`` in ``ui``, run every cell and wait for every explorer's picture
    (``hide_files``: close JupyterLab's file browser first, which at 150 % zoom leaves the
    figures less than their narrowest width)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    url = server.lab_url(notebook) if ui == "lab" else server.notebook_url(notebook)
    page.goto(url)
    page.locator(".jp-Notebook .jp-Cell").nth(len(EXPLORERS)).wait_for(timeout=60_000)
    deadline = time.monotonic() + 60
    while server.kernel_state(notebook) != "idle":
        if time.monotonic() > deadline:
            raise RuntimeError(f"{ui}: the kernel did not become idle")
        time.sleep(0.2)
    # The server may report the new kernel idle before the page has connected to it.
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-status]')]
                 .some(e => e.dataset.status === 'idle')""",
        timeout=60_000,
    )
    page.evaluate(PAGE_SCRIPT)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    try:
        page.wait_for_function(
            "n => document.querySelectorAll('.decompkit-figure[data-seq]').length >= n",
            arg=len(EXPLORERS),
            timeout=120_000,
        )
    except PlaywrightTimeout as error:  # say what the page showed
        raise RuntimeError(
            f"{ui}: Run All did not draw every explorer within 120 s; {page.evaluate(_RUN_STATE)}"
        ) from error
    if hide_files and ui == "lab" and page.locator(".jp-FileBrowser:visible").count():
        page.keyboard.press("Control+b")
    wait_until_drawn_to_size(page)


#: True when every figure is drawn for the width its page offers (the explorers take it
#: within 640-1200 CSS pixels) and for the pixel ratio, so the browser scales nothing.
SETTLED = """() => [...document.querySelectorAll('.decompkit-figure canvas')].every(c => {
    const shown = c.getBoundingClientRect().width;
    const room = c.parentElement.getBoundingClientRect().width;
    return c.width > 0 && Math.abs(c.width - shown * devicePixelRatio) < 1
        && Math.abs(shown - Math.min(Math.max(room, 640), 1200)) < 4;
})"""


def wait_until_drawn_to_size(page) -> None:
    """Wait until each figure has been laid out again for the width its page gives it."""
    page.wait_for_function(SETTLED, timeout=60_000)
    page.wait_for_timeout(300)


def explorer_root(page, index: int):
    return page.locator(".decompkit-explorer").nth(index)


def find_control(root, label: str, kind: str):
    """The element to act on for the control labelled ``label``."""
    if kind == "slider":
        slider = root.locator(".widget-slider").filter(
            has=root.page.locator(".widget-label", has_text=label)
        )
        return slider.first.locator(".noUi-handle").first
    if kind == "checkbox":
        box = root.locator(".widget-checkbox").filter(has_text=label)
        return box.first.locator("input").first
    if kind == "button":
        return root.locator("button", has_text=label).first
    if kind == "toggle":
        return root.locator(".widget-toggle-buttons button")
    raise ValueError(f"unknown control kind {kind!r}")


#: Pause after the kernel's answer before the next change: a lecturer's pace of stepping.
PACE_MS = 120
#: Pause before the first change of a control: the hand moves to another control.
SWITCH_MS = 1000


def _frames(page) -> int:
    return page.evaluate("() => window.__dk.frames.length")


def _answered(page, index: int) -> int:
    """Sequence number of the kernel's latest answer to explorer ``index``."""
    return page.evaluate(
        "i => Number(document.querySelectorAll('.decompkit-explorer')[i]"
        ".querySelector('.decompkit-figure').dataset.answered || -1)",
        index,
    )


def one_change(page, index: int, act, timeout_ms: int = 8000):
    """One change of explorer ``index``: ``act()``, then wait for its new picture.

    Returns ``[total, to the page, drawing, to the control's new value, [kernel wall,
    kernel CPU], drawn from a picture in the page]`` in ms (None: no picture), after the
    kernel's own answer has arrived too and a pause of ``PACE_MS``: changes at a human
    pace, each measured from its input event to the first new picture on the canvas.
    """
    answered = _answered(page, index)
    count = _frames(page)
    page.evaluate("() => { window.__dk.input = null; }")
    act()
    try:
        page.wait_for_function(
            """([n, i]) => window.__dk.frames.slice(n).some(f => f.explorer === i)
                 && window.__dk.input !== null""",
            arg=[count, index],
            timeout=timeout_ms,
            polling="raf",
        )
    except Exception:  # noqa: BLE001 - a change with no new picture counts as missed
        return None
    measured = page.evaluate(
        """([n, i]) => {
            const f = window.__dk.frames.slice(n).find(f => f.explorer === i);
            const changed = f.changed === null ? f.received : f.changed;
            return [f.time - window.__dk.input, f.received - window.__dk.input,
                    f.time - f.received, changed - window.__dk.input, f.kernel, f.seq < 0];
        }""",
        [count, index],
    )
    try:
        page.wait_for_function(
            """([i, seen]) => Number(document.querySelectorAll('.decompkit-explorer')[i]
                 .querySelector('.decompkit-figure').dataset.answered || -1) > seen""",
            arg=[index, answered],
            timeout=timeout_ms,
        )
    except Exception:  # noqa: BLE001 - no answer (a change the kernel found unchanged)
        pass
    page.wait_for_timeout(PACE_MS)
    return measured


def _note(result: Result, measured) -> bool:
    """Add one change's times to ``result``; False when no picture came."""
    if measured is None:
        result.missed += 1
        return False
    total, wire, paint, page, kernel, ready = measured
    result.latencies.append(total)
    result.wire.append(wire)
    result.paint.append(paint)
    result.page.append(page)
    result.kernel.append(kernel[0])
    result.cpu.append(kernel[1])
    result.ready.append(bool(ready))
    return True


#: Where on the track a click lands, as fractions of its length, in order of preference (one
#: at least ``CLICK_AWAY`` from the handle and leading to a setting not seen yet is taken).
CLICK_AT = (0.25, 0.75, 0.35, 0.65, 0.45, 0.55, 0.3, 0.7, 0.4, 0.6, 0.2, 0.8, 0.5, 0.15, 0.85)
CLICK_AWAY = 0.15
#: Where a jump lands: the far end of the track, then a little inside it.
JUMP_AT = tuple(k * 0.025 for k in range(9))
#: Where the page is saved when a click misses the track.
MISSED_SHOT = "/tmp/bench-browser-missed-click.png"


def on_step(value: float, low: float, step: float) -> float:
    """``value`` rounded to the slider's steps from ``low`` (as the slider rounds it).

    >>> on_step(0.537, 0.0, 0.01), on_step(7.4, 1, 1)
    (0.54, 7)
    """
    return round(low + round((value - low) / step) * step, 9)


class Explorers:
    """The explorers of one page, and every setting the page has shown a picture of, so that
    each change can go to a setting the page has no picture of yet."""

    def __init__(self, page, ui: str, mode: str):
        self.page, self.ui, self.mode = page, ui, mode
        self.seen: dict[int, set] = {}

    def state(self, index: int) -> list:
        return json.loads(explorer_root(self.page, index).evaluate(STATE_SCRIPT))

    @staticmethod
    def key(state, label=None, value=None) -> str:
        """The key of ``state`` (with the first slider whose label holds ``label`` at
        ``value``)."""
        sliders, boxes, chosen = state
        out, done = [], False
        for name, now, _ in sliders:
            if not done and label is not None and label in name:
                now, done = value, True
            out.append([name, round(now, 9)])
        return json.dumps([out, boxes, chosen])

    def see(self, index: int) -> None:
        """Note the current setting; with pictures ahead, also those up to two steps away on
        any slider (the kernel may have sent them ahead)."""
        state = self.state(index)
        seen = self.seen.setdefault(index, set())
        seen.add(self.key(state))
        if self.mode == "ahead":
            for name, now, step in state[0]:
                for d in (-2, -1, 1, 2):
                    seen.add(self.key(state, name, now + d * step))

    def fresh(self, index: int, label: str, value: float, state=None) -> bool:
        """True if the page has shown no picture of the setting with ``label`` at ``value``
        (from ``state``, the explorer's setting now, if given)."""
        state = self.state(index) if state is None else state
        return self.key(state, label, value) not in self.seen.get(index, ())

    def change(self, index: int, act, result: Result | None = None, timeout_ms: int = 8000):
        """``act()``, wait for its picture (noted in ``result`` if given), note the setting."""
        measured = one_change(self.page, index, act, timeout_ms)
        if result is not None:
            _note(result, measured)
        self.see(index)
        return measured

    def slider(self, index: int, label: str) -> dict:
        handle = find_control(explorer_root(self.page, index), label, "slider")
        info = handle.evaluate(SLIDER_SCRIPT)
        if not isinstance(info.get("step"), (int, float)) or info["step"] <= 0:
            raise RuntimeError(f"{self.ui}: no step for slider {label!r}: {info!r}")
        return info

    # -- the kinds of change ----------------------------------------------------------------

    def arrows(self, index: int, label: str, result: Result, changes: int) -> None:
        """One step by an arrow key per change, towards a setting not seen where possible,
        turning at the ends of the range."""
        handle = find_control(explorer_root(self.page, index), label, "slider")
        handle.scroll_into_view_if_needed()
        key = "ArrowRight"
        for _ in range(changes):
            s, now = self.slider(index, label), self.state(index)
            other = "ArrowLeft" if key == "ArrowRight" else "ArrowRight"
            options = [
                (k, s["value"] + (1 if k == "ArrowRight" else -1) * s["step"]) for k in (key, other)
            ]
            inside = [(k, v) for k, v in options if s["low"] - 1e-9 <= v <= s["high"] + 1e-9]
            new = [
                (k, v)
                for k, v in inside
                if self.fresh(index, label, on_step(v, s["low"], s["step"]), now)
            ]
            key = (new or inside)[0][0]
            handle.focus()
            self.change(index, lambda k=key: self.page.keyboard.press(k), result)

    def clicks(self, index: int, label: str, result: Result, changes: int, far: bool) -> None:
        """A pointer click on the track per change: at least ``CLICK_AWAY`` of the track and
        a handle's width from the handle (``far``: near the far end). Raises RuntimeError
        when the value moves one step or less: the click missed the track."""
        root = explorer_root(self.page, index)
        slider = root.locator(".widget-slider").filter(
            has=self.page.locator(".widget-label", has_text=label)
        )
        track = slider.first.locator(".noUi-target").first
        track.scroll_into_view_if_needed()
        grip = slider.first.locator(".noUi-handle").first
        for _ in range(changes):
            s = self.slider(index, label)
            span = s["high"] - s["low"]
            track.scroll_into_view_if_needed()
            lane, handle = track.bounding_box(), grip.bounding_box()
            centre = handle["x"] + handle["width"] / 2

            def place(f, lane=lane):  # on a whole pixel, as pointer events are
                return float(math.floor(lane["x"] + 0.5 + f * (lane["width"] - 1.5)))

            def value(x, lane=lane, s=s, span=span):  # as the slider reads a click at x
                return on_step(
                    s["low"] + (x - lane["x"]) / lane["width"] * span, s["low"], s["step"]
                )

            # Off the handle (a press on it starts a drag instead), and for a click at least
            # CLICK_AWAY of the track from it.
            if far:
                here = (centre - lane["x"]) / lane["width"]
                spots = [1 - f for f in JUMP_AT] if here < 0.5 else list(JUMP_AT)
                clear = handle["width"]
            else:
                spots = CLICK_AT
                clear = max(handle["width"], CLICK_AWAY * lane["width"])
            places = [place(f) for f in spots if abs(place(f) - centre) >= clear]
            moving = [x for x in places if abs(value(x) - s["value"]) > 1.5 * s["step"]]
            # Where a step is under 4 pixels, the slider may read the pixel a step off: fresh
            # with a step to spare either side.
            now = self.state(index)
            spare = (-1, 0, 1) if lane["width"] * s["step"] / span < 4 else (0,)
            new = [
                x
                for x in moving
                if all(self.fresh(index, label, value(x) + d * s["step"], now) for d in spare)
            ]
            x = (new or moving or places)[0]
            spot = (x - lane["x"]) / lane["width"]
            y = lane["y"] + lane["height"] / 2
            for attempt in (1, 2):
                measured = self.change(
                    index, lambda x=x, y=y: self.page.mouse.click(x, y), timeout_ms=4000
                )
                after = self.slider(index, label)["value"]
                if after != s["value"] or attempt == 2:
                    break
                result.retried += 1  # the slider took no notice: once more, as a hand would
                self.page.wait_for_timeout(300)
            if abs(after - s["value"]) <= s["step"] * (1 + 1e-9):
                self.page.screenshot(path=MISSED_SHOT)
                raise RuntimeError(
                    f"{self.ui}: a {result.kind} on the track of {label!r} (at {spot:.0%} of"
                    f" its length, x={x:.0f}, y={y:.0f}) moved its value from {s['value']} to"
                    f" {after}: one step or less, so the click did not land on the track"
                    f" (screenshot {MISSED_SHOT})"
                )
            _note(result, measured)

    def presses(self, index: int, label: str, kind: str, result: Result, changes: int) -> None:
        """Clicks on a checkbox, a button or the example switch's other option. Without
        pictures ahead, a change of the explorer's mover slider comes first (unmeasured), so
        that the click leads to a setting the page has not seen."""
        root = explorer_root(self.page, index)
        target = find_control(root, label, kind)
        if (result.explorer, label) in PREPARE:
            slider = PREPARE[result.explorer, label]
            self.clicks(index, slider, Result("", "", "", slider, "jump"), 1, far=True)
        target.first.scroll_into_view_if_needed()
        for _ in range(changes):
            if self.mode != "ahead" and MOVER.get(result.explorer):
                self.move_aside(index, MOVER[result.explorer])
            if kind == "toggle":
                act = root.locator(".widget-toggle-buttons button:not(.mod-active)").first.click
            else:
                if not target.is_enabled():  # a button at the end of the trace
                    other = "◀ back" if "forward" in label else "forward ▶"
                    self.change(index, find_control(root, other, "button").click)
                act = target.click
            self.change(index, act, result)

    def move_aside(self, index: int, label: str) -> None:
        """One arrow step of slider ``label`` to a setting not seen, unmeasured."""
        if not explorer_root(self.page, index).locator(".widget-label", has_text=label).count():
            return  # not in this example
        self.arrows(index, label, Result("", "", "", label, "arrow"), 1)

    def drag(self, index: int, label: str, result: Result, seconds: float = 2.0) -> None:
        """Pictures per second drawn while the mouse sweeps the slider's handle across the
        track and back (:func:`new_pictures`), and value changes per second of the slider
        meanwhile."""
        root = explorer_root(self.page, index)
        handle = find_control(root, label, "slider")
        slider = root.locator(".widget-slider").filter(
            has=self.page.locator(".widget-label", has_text=label)
        )
        track = slider.first.locator(".noUi-target").first
        handle.scroll_into_view_if_needed()
        box, lane = handle.bounding_box(), track.bounding_box()
        y = box["y"] + box["height"] / 2
        x0, x1 = lane["x"] + 2, lane["x"] + lane["width"] - 2
        page = self.page
        handle.evaluate(
            """h => { const dk = window.__dk; dk.values = [];
                h.closest('.noUi-target').noUiSlider.on('update.dk', (values) =>
                    dk.values.push([performance.now(), Number(values[0])])); }"""
        )
        page.mouse.move(box["x"] + box["width"] / 2, y)
        page.mouse.down()
        start = page.evaluate("() => performance.now()")
        # The handle's place follows the clock, as a hand's does: a move at most every
        # 16 ms, as many as the browser takes in while it draws.
        began = time.monotonic()
        while (elapsed := time.monotonic() - began) < seconds:
            phase = 2 * elapsed / seconds
            frac = phase if phase <= 1 else 2 - phase  # there and back
            page.mouse.move(x0 + frac * (x1 - x0), y)
            time.sleep(max(0.0, 0.016 - (time.monotonic() - began - elapsed)))
        end = page.evaluate("() => performance.now()")
        page.mouse.up()
        page.wait_for_timeout(800)  # let the last picture arrive before the next control
        frames, values = page.evaluate(
            """([i, a, b]) => {
                const dk = window.__dk;
                const frames = dk.frames.filter(f => f.explorer === i)
                    .map(f => [f.time, f.setting, f.seq]);
                const values = dk.values.filter(([t]) => t >= a && t <= b).map(([, v]) => v);
                return [frames, values];
            }""",
            [index, start, end],
        )
        track.evaluate("t => t.noUiSlider.off('.dk')")
        span = (end - start) / 1000
        grace = TARGET_MS[result.explorer]
        counted = new_pictures(frames, start, end, grace)
        drawn = len(counted)
        ready = sum(1 for _, _, seq in counted if seq < 0)
        computed = sum(1 for _, _, seq in counted if seq == COMPUTED)
        result.late = sum(1 for time, _, _ in counted if time > end)
        result.fps = drawn / span
        changes = sum(1 for a, b in zip(values, values[1:], strict=False) if a != b) + 1
        result.values_per_s = changes / span
        result.drawn, result.drawn_ready, result.drawn_computed = drawn, ready, computed
        state = self.state(index)
        seen = self.seen.setdefault(index, set())
        for value in set(values):  # the page may have an answer for any of them
            seen.add(self.key(state, label, float(value)))
        seen.add(self.key(state))


def new_pictures(frames, start: float, end: float, grace: float) -> list:
    """The pictures of a drag: of ``frames``, ``[time, setting, seq]`` of one explorer in the
    order drawn, those drawn from ``start`` until ``grace`` ms after ``end`` (the hand stops:
    its last values' pictures may still be on their way) that show a setting other than the
    picture before them (the kernel's picture replacing the browser's of the same setting is
    not a new one).

    >>> frames = [[5, "a", 3], [12, "b", -2], [14, "b", 4], [20, "c", -2], [70, "d", 5]]
    >>> [f[1] for f in new_pictures(frames, 10, 30, 50)]
    ['b', 'c', 'd']
    >>> [f[1] for f in new_pictures(frames, 10, 15, 4)]
    ['b']
    """
    out, before = [], None
    for frame in frames:
        time, setting = frame[0], frame[1]
        if start <= time <= end + grace and setting != before:
            out.append(frame)
        before = setting
    return out


def measure(session: Explorers, index: int, name: str, label: str, kind: str, changes: int):
    """The rows of one control: one per kind of change (a slider's four, or clicks)."""
    kinds = SLIDER_KINDS if kind == "slider" else ("click",)
    session.page.wait_for_timeout(SWITCH_MS)
    rows = []
    for change in kinds:
        result = Result(session.ui, session.mode, name, label, change)
        load, before = os.getloadavg()[0], cpu_seconds()
        if change == "arrow":
            session.arrows(index, label, result, changes)
        elif change in ("click", "jump") and kind == "slider":
            session.clicks(index, label, result, changes, far=change == "jump")
        elif change == "drag":
            session.drag(index, label, result)
        else:
            session.presses(index, label, kind, result, changes)
        after = cpu_seconds()
        result.load = (load, os.getloadavg()[0])
        count = max(len(result.latencies) + result.missed, result.drawn, 1)
        result.processes = {k: 1e3 * (after[k] - before[k]) / count for k in PROCESSES}
        print(f"  {_label(result)} {_summary(result)}", flush=True)
        rows.append(result)
    return rows


#: Seconds the page is left alone after it has run, to measure the CPU it uses at rest.
IDLE_S = 3


def run_ui(context, server, ui, mode, changes, shots, only=None, notes=None) -> list[Result]:
    page = context.new_page()
    results = []
    try:
        open_and_run(page, server, ui, notebook=NOTEBOOKS[mode])
        before = cpu_seconds()
        page.wait_for_timeout(1000 * IDLE_S)
        after = cpu_seconds()
        note = f"{ui}, mode {mode}: CPU ms per second at rest: " + ", ".join(
            f"{k} {1e3 * (after[k] - before[k]) / IDLE_S:.0f}" for k in PROCESSES
        )
        print("  " + note, flush=True)
        if notes is not None:
            notes.append(note)
        session = Explorers(page, ui, mode)
        for index, name in enumerate(EXPLORERS):
            if only and name not in only:
                continue
            root = explorer_root(page, index)
            root.scroll_into_view_if_needed()
            session.see(index)
            if shots:
                root.screenshot(path=shots / f"{ui}-{mode}-{name.replace(' ', '-')}.png")
            for label, kind in CONTROLS[name]:
                results += measure(session, index, name, label, kind, changes)
    finally:
        page.close()
    return results


def _label(r: Result) -> str:
    return f"{r.ui:8} {r.mode:6} {r.explorer:13} {r.control:19} {r.kind:5}"


def _median(values) -> float:
    return statistics.median(values) if values else float("nan")


def _summary(r: Result) -> str:
    if r.kind == "drag":
        return (
            f"{r.fps:5.1f} pictures/s ({r.drawn_ready} of {r.drawn} ready,"
            f" {r.drawn_computed} computed in the browser, {r.late} after the hand stopped) over"
            f" {r.values_per_s:5.1f} values/s; load {r.load[0]:.2f}/{r.load[1]:.2f}"
        )
    judged = r.judged("latencies")
    if not judged:
        return f"no change judged ({sum(r.ready)} ready, {r.missed} missed)"
    text = (
        f"median {statistics.median(judged):5.0f} ms, p90 {p90(judged):5.0f}, n {len(judged)},"
        f" {sum(r.ready)} ready; kernel path: page {_median(r.kernel_path('page')):4.0f},"
        f" kernel {_median(r.kernel_path('kernel')):4.0f} / cpu"
        f" {_median(r.kernel_path('cpu')):4.1f}, back {_median(r.kernel_path('wire')):4.0f},"
        f" drawing {_median(r.kernel_path('paint')):4.0f}; CPU ms per change: "
        + ", ".join(f"{k} {v:.0f}" for k, v in r.processes.items())
        + f"; load {r.load[0]:.2f}/{r.load[1]:.2f}"
    )
    if r.missed:
        text += f", {r.missed} missed"
    if r.retried:
        text += f", {r.retried} clicks not taken by the slider, made again"
    return text


COLUMNS = (
    ("UI", 8), ("mode", 7), ("explorer", 13), ("control", 19), ("change", 6), ("n", 3),
    ("ready", 5), ("median", 8), ("p90", 6), ("target", 8), ("page", 4), ("kernel cpu", 10),
    ("wire", 4), ("draw", 4), ("cpu/chg", 7), ("load", 9), ("result", 6),
)  # fmt: skip


def table_row(r: Result) -> list[str]:
    """The cells of ``r``'s row in the table, as text."""
    ahead = r.mode
    load = f"{r.load[0]:.2f}/{r.load[1]:.2f}"
    cpu = f"{sum(r.processes.values()):.0f}"
    if r.kind == "drag":
        head = [r.ui, ahead, r.explorer, r.control, r.kind, str(r.drawn), str(r.drawn_ready)]
        return [
            *head, f"{r.fps:.1f}/s", f"{r.values_per_s:.0f}v/s", f">={r.target:.1f}/s",
            "", "", "", "", cpu, load, r.verdict,
        ]  # fmt: skip
    judged = r.judged("latencies")
    median = f"{statistics.median(judged):.0f}" if judged else "-"
    tail = f"{p90(judged):.0f}" if judged else "-"

    def path(name, digits=0):
        values = r.kernel_path(name)
        return f"{statistics.median(values):.{digits}f}" if values else "-"

    n = (
        f"{len(judged)}"
        + (f"+{r.missed}m" if r.missed else "")
        + (f"+{r.retried}r" if r.retried else "")
    )
    return [
        r.ui, ahead, r.explorer, r.control, r.kind, n, str(sum(r.ready)), median, tail,
        f"<={r.target:.0f}", path("page"), path("cpu", 1), path("wire"), path("paint"), cpu,
        load, r.verdict,
    ]  # fmt: skip


def print_table(results: list[Result], load: tuple, notes=()) -> bool:
    """The table of the rows with their targets; returns True when no row fails."""
    print()
    print(
        "Browser latency, input event to new picture drawn (Chromium, 1280 x 800, ratio 1);"
        f" {os.cpu_count()} cores, load average at start/end: {load[0][0]:.2f}/{load[1][0]:.2f}"
        f" (1 min), {load[0][1]:.2f}/{load[1][1]:.2f} (5 min)"
    )
    for note in notes:
        print(note)
    print("| " + " | ".join(f"{name:>{width}}" for name, width in COLUMNS) + " |")
    print("|" + "|".join("-" * (width + 2) for _, width in COLUMNS) + "|")
    for r in results:
        cells = table_row(r)
        print(
            "| " + " | ".join(f"{c:>{w}}" for c, (_, w) in zip(cells, COLUMNS, strict=True)) + " |"
        )
    verdicts = [r.verdict for r in results]
    print(
        f"{verdicts.count('pass')} pass, {verdicts.count('FAIL')} FAIL,"
        f" {verdicts.count('n/a')} n/a of {len(results)} rows."
    )
    print(
        "mode: kernel (every picture the kernel's answer), browser (the reliability and horizon"
        " explorers' pictures computed in the browser), ahead (that, and pictures made ahead by"
        " the kernel: the kit as it ships). change: arrow (one step by key), click (on"
        " the track away from the handle, or on a checkbox, button or option), jump (a click"
        " near the far end of the track), drag (2 s sweep there and back). n: changes judged"
        " (in mode kernel, those that waited for the kernel; else all of them; 'm': no"
        " picture within 8 s, which fails the row; 'r': clicks the slider took no notice of, made"
        " again); ready: changes drawn from a picture in the page (made ahead, computed there,"
        " or an earlier answer); median, p90: ms from input to picture drawn; page, kernel"
        " cpu, wire, draw: medians over the changes that waited for the"
        " kernel, ms: input to the control's new value in the page, the kernel's CPU for the"
        " update, input to the kernel's picture in the page, and painting it; cpu/chg: CPU ms"
        " of kernel, server and browser together per change (work ahead included); load: 1"
        " min load average at the row's start/end. A drag row: n pictures drawn, of them ready,"
        " pictures and slider values per second, and its target (one picture per value passed"
        " when fewer than 20 a second); n/a: no change of the row waited for the kernel."
    )
    return "FAIL" not in verdicts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 changes per row")
    parser.add_argument("--changes", type=int, default=20, help="changes per row (20)")
    parser.add_argument("--ui", choices=["lab", "notebook"], action="append", help="only this UI")
    parser.add_argument(
        "--mode", choices=list(NOTEBOOKS), action="append", help="only this mode (all three)"
    )
    parser.add_argument(
        "--no-ahead",
        action="store_true",
        help="only without pictures ahead: --mode kernel --mode browser",
    )
    parser.add_argument("--explorer", choices=list(EXPLORERS), action="append", help="only this")
    parser.add_argument("--screenshots", type=Path, help="save each explorer's screenshot here")
    parser.add_argument(
        "--page", action="store_true", help="the lecture page instead (bench/bench_page.py)"
    )
    args = parser.parse_args(argv)
    interrupt_on_terminate()  # kill or timeout: stop JupyterLab and the browser too
    if args.page:  # no kernel and no server: its own table, its own targets
        import bench_page

        return bench_page.main(["--changes", str(5 if args.quick else args.changes)])
    if args.changes < 1:
        raise ValueError(f"--changes must be at least 1, got {args.changes!r}")
    changes = 5 if args.quick else args.changes
    uis = args.ui or ["lab", "notebook"]
    modes = ["kernel", "browser"] if args.no_ahead else args.mode or list(NOTEBOOKS)[::-1]
    if args.screenshots:
        args.screenshots.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-browser-") as scratch:
        base = Path(scratch)
        root = base / "root"
        root.mkdir()
        for mode, name in NOTEBOOKS.items():
            (root / name).write_text(notebook_json(mode), encoding="utf-8")
        results, notes = [], []
        with running_server(root, base) as server:
            with chromium(base / "profile") as context:
                for ui in uis:
                    for mode in modes:
                        results += run_ui(
                            context,
                            server,
                            ui,
                            mode,
                            changes,
                            args.screenshots,
                            args.explorer,
                            notes,
                        )
                        server.shut_down_kernels()
    ok = print_table(results, (load_before, os.getloadavg()), notes)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
