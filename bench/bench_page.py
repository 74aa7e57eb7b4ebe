"""The static lecture page's latency in a real browser, per kind of change, per control.

Run from the repository root (needs /usr/bin/chromium: ``bash .ci/install-browser``):

    python bench/bench_page.py              # every explorer and control, 20 changes per row
    python bench/bench_page.py --quick      # 5 changes per row
    python bench/bench_browser.py --page    # the same table, from the explorers' benchmark

What is measured. The page is built into a temporary folder (``decompkit.page.build_page``,
the lecture's numbers) and opened from disk in headless Chromium at 1280 x 800 CSS pixels,
device pixel ratio 1, as ``bench_browser.py`` opens the notebooks. Nothing runs but the page:
every change is computed and painted in the browser. A change is timed from its first input
event (a capture-phase listener stamps ``performance.now()`` at the key press or pointer
down) to the moment its explorer counts a new picture painted (``data-painted`` on its
section, set at the end of the animation frame that paints it). The next change comes
``PACE_MS`` later.

Kinds of change, one row each per explorer and slider (buttons: a click):

- ``arrow``: one step by an arrow key from the focused slider;
- ``click``: a pointer click on the track at least 15 % of its length away from the handle;
- ``jump``: a click near the far end of the track;
- ``drag``: the slider sweeps its track there and back in 2 s, one new value per animation
  frame, set in the page (a script's pointer moves arrive at about 30 a second, too few to
  measure 50 pictures a second); the row gives pictures painted per second, the slider's
  changes of value and the frames of the sweep.

Targets (the lecture-page issue): median <= 16 ms per change; >= 50 pictures a second while
dragging, or one per change of value when the sweep makes fewer. The load average (1 min) at
the start and end is printed: on a shared machine times include waiting for a CPU.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.browser.jupyter_server import chromium, interrupt_on_terminate  # noqa: E402

TARGET_MS = 16
TARGET_FPS = 50
PACE_MS = 60
DRAG_S = 2.0
CLICK_AWAY = 0.15
CLICK_AT = (0.25, 0.75, 0.35, 0.65, 0.45, 0.55, 0.3, 0.7, 0.2, 0.8)
#: Where a thumb's centre sits on a native range input: the track's ends less half a thumb.
THUMB_PX = 16

#: Installed before the page's scripts: the stamp of a change's first input, and every new
#: picture with its explorer and time.
WATCH = """(() => {
    const w = window.__bench = {input: null, pictures: []};
    for (const type of ['keydown', 'pointerdown']) {
        const stamp = () => { if (w.input === null) w.input = performance.now(); };
        document.addEventListener(type, stamp, {capture: true});
    }
    new MutationObserver(records => {
        const now = performance.now();
        for (const r of records) w.pictures.push({explorer: r.target.id, time: now});
    }).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-painted']});
})()"""


@dataclass
class Row:
    explorer: str
    control: str
    kind: str
    latencies: list = field(default_factory=list)
    missed: int = 0
    pictures: int = 0
    #: A drag's changes of value.
    values: int = 0
    #: A drag's animation frames.
    moves: int = 0
    seconds: float = 0.0

    @property
    def fps(self) -> float:
        return self.pictures / self.seconds if self.seconds else float("nan")

    @property
    def target(self) -> float:
        if self.kind != "drag":
            return TARGET_MS
        return min(TARGET_FPS, self.values / self.seconds) if self.seconds else TARGET_FPS

    @property
    def verdict(self) -> str:
        if self.kind == "drag":
            return "pass" if self.fps >= self.target - 1e-9 else "FAIL"
        if self.missed or not self.latencies:
            return "FAIL"
        return "pass" if statistics.median(self.latencies) <= TARGET_MS else "FAIL"


def _controls(page) -> list[tuple[str, str, str]]:
    """(explorer, control id, kind of element) of every slider and button shown on the page
    (a control shown only in another state, such as another example's durations, is left out)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('section.explorer')].flatMap(s =>
            [...s.querySelectorAll('input[type=range], .controls button')]
            .filter(e => e.getClientRects().length).map(e =>
                [s.id, e.id || e.getAttribute('aria-label') || e.textContent.trim(),
                 e.tagName === 'INPUT' ? 'range' : 'button']))"""
    )


def _element(page, explorer: str, control: str):
    section = page.locator(f"section#{explorer}")
    by_id = section.locator(f"input#{control}")
    if by_id.count():
        return by_id
    labelled = section.locator(f'.controls button[aria-label="{control}"]')
    return labelled if labelled.count() else section.locator(".controls button", has_text=control)


def _painted(page, explorer: str) -> int:
    return page.evaluate("id => Number(document.getElementById(id).dataset.painted || 0)", explorer)


def _one_change(page, explorer: str, act) -> float | None:
    """Milliseconds from ``act``'s first input event to its explorer's next picture."""
    before = page.evaluate("() => (window.__bench.input = null, window.__bench.pictures.length)")
    act()
    try:
        page.wait_for_function(
            """([id, n]) => window.__bench.input !== null
                 && window.__bench.pictures.slice(n).some(p => p.explorer === id)""",
            arg=[explorer, before],
            timeout=3000,
            polling="raf",
        )
    except Exception:  # noqa: BLE001 - no new picture (a value the page already shows)
        return None
    taken = page.evaluate(
        """([id, n]) => window.__bench.pictures.slice(n).find(p => p.explorer === id).time
                        - window.__bench.input""",
        [explorer, before],
    )
    page.wait_for_timeout(PACE_MS)
    return taken


def _track(element) -> tuple[float, float, float, float]:
    """The track's left end, usable length and middle height, and the value's fraction."""
    box = element.bounding_box()
    low, high, value = (float(element.evaluate(f"e => e.{k}")) for k in ("min", "max", "value"))
    usable = box["width"] - THUMB_PX
    left = box["x"] + THUMB_PX / 2
    fraction = (value - low) / (high - low) if high > low else 0.0
    return left, usable, box["y"] + box["height"] / 2, fraction


def _measure(page, explorer: str, control: str, kind: str, changes: int) -> Row:
    row = Row(explorer, control, kind)
    element = _element(page, explorer, control)
    element.scroll_into_view_if_needed()
    page.wait_for_timeout(200)
    if kind == "click" and element.evaluate("e => e.tagName") == "BUTTON":
        for _ in range(changes):
            if element.is_disabled():  # at an end (the trace's first event): the other way once
                element.locator("xpath=..").locator("button:enabled").first.click()
                page.wait_for_timeout(PACE_MS)
            _record(row, _one_change(page, explorer, element.click))
        return row
    if kind == "arrow":
        element.focus()
        for i in range(changes):
            at_end = element.evaluate("e => Number(e.value) >= Number(e.max)")
            at_start = element.evaluate("e => Number(e.value) <= Number(e.min)")
            key = "ArrowLeft" if at_end or (i % 2 and not at_start) else "ArrowRight"
            _record(row, _one_change(page, explorer, lambda k=key: page.keyboard.press(k)))
        return row
    if kind in ("click", "jump"):
        for i in range(changes):
            left, usable, middle, now = _track(element)
            if kind == "jump":
                far = 0.975 - 0.05 * (i % 3) if now < 0.5 else 0.025 + 0.05 * (i % 3)
                spots = [far]
            else:
                spots = [f for f in CLICK_AT if abs(f - now) >= CLICK_AWAY]
                spots = spots[i % len(spots) :] + spots[: i % len(spots)]
            x = left + spots[0] * usable
            _record(row, _one_change(page, explorer, lambda x=x, y=middle: page.mouse.click(x, y)))
        return row
    return _drag(page, row, element)


def _record(row: Row, taken: float | None) -> None:
    if taken is None:
        row.missed += 1
    else:
        row.latencies.append(taken)


#: A sweep there and back in ``DRAG_S`` as the page sees a hand's: one new value per animation
#: frame (Chromium coalesces pointer moves to one input per frame), set on the slider with its
#: ``input`` event, in the page itself, so the rate is not that of the script's round trips.
SWEEP = """(input, seconds) => new Promise(done => {
    const low = Number(input.min), high = Number(input.max), from = Number(input.value);
    const far = from - low < high - from ? high : low;
    let began = null, frames = 0, changes = 0;
    const frame = now => {
        began ??= now;
        const half = (now - began) / (seconds * 500);
        if (half >= 2) return done({frames, changes, seconds: (now - began) / 1000});
        const there = half <= 1 ? half : 2 - half;
        const value = String(Math.round(from + (far - from) * there));
        frames += 1;
        if (value !== input.value) {
            input.value = value;
            changes += 1;
            input.dispatchEvent(new Event('input', {bubbles: true}));
        }
        requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
})"""


def _drag(page, row: Row, element) -> Row:
    """A sweep there and back (:data:`SWEEP`); pictures painted per second of it."""
    painted = _painted(page, row.explorer)
    swept = element.evaluate(SWEEP, DRAG_S)
    page.wait_for_timeout(200)
    row.pictures = _painted(page, row.explorer) - painted
    row.values, row.moves, row.seconds = swept["changes"], swept["frames"], swept["seconds"]
    return row


def measure_page(changes: int, only=None) -> list[Row]:
    """Every row, on a freshly built page of the lecture's numbers."""
    from decompkit.page import build_page

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-page-") as scratch:
        index = build_page(Path(scratch) / "page")
        with chromium(Path(scratch) / "profile") as context:
            page = context.new_page()
            page.add_init_script(WATCH)
            page.goto(index.as_uri())
            page.wait_for_function(
                "() => [...document.querySelectorAll('section.explorer')]"
                ".every(s => Number(s.dataset.painted || 0) > 0)",
                timeout=30_000,
            )
            for explorer, control, element in _controls(page):
                if only and explorer not in only:
                    continue
                kinds = ("click",) if element == "button" else ("arrow", "click", "jump", "drag")
                for kind in kinds:
                    rows.append(_measure(page, explorer, control, kind, changes))
    return rows


def print_rows(rows: list[Row], load: tuple) -> bool:
    """The table; True when every row meets its target."""
    print()
    print(
        "Lecture page, input event to new picture painted (Chromium, 1280 x 800, ratio 1, from"
        f" disk); {os.cpu_count()} cores, load average at start/end {load[0]:.2f}/{load[1]:.2f}"
    )
    print("| explorer | control | change | n | median ms | p90 ms | pictures/s | target | result |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r.kind == "drag":
            cells = [str(r.pictures), "", "", f"{r.fps:.1f} ({r.values} changes, {r.moves} frames)",
                     f">={r.target:.1f}/s"]  # fmt: skip
        else:
            ms = sorted(r.latencies)
            cells = [
                f"{len(ms)}" + (f"+{r.missed}m" if r.missed else ""),
                f"{statistics.median(ms):.1f}" if ms else "-",
                f"{ms[min(len(ms) - 1, int(0.9 * len(ms)))]:.1f}" if ms else "-",
                "",
                f"<={TARGET_MS}",
            ]
        print("| " + " | ".join([r.explorer, r.control, r.kind, *cells, r.verdict]) + " |")
    verdicts = [r.verdict for r in rows]
    print(f"{verdicts.count('pass')} pass, {verdicts.count('FAIL')} FAIL of {len(rows)} rows.")
    print(
        "n: changes timed ('m': no new picture within 3 s, which fails the row). A drag row: n"
        " pictures painted over the sweep, pictures a second, the slider's changes of value and"
        " the sweep's animation frames, and its target (one picture per change of value when"
        " there are fewer than 50 a second)."
    )
    return "FAIL" not in verdicts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 changes per row")
    parser.add_argument("--changes", type=int, default=20, help="changes per row (20)")
    parser.add_argument("--explorer", action="append", help="only this section id (repeatable)")
    args = parser.parse_args(argv)
    interrupt_on_terminate()  # kill or timeout: stop the browser too
    if args.changes < 1:
        raise ValueError(f"--changes must be at least 1, got {args.changes!r}")
    before = os.getloadavg()[0]
    rows = measure_page(5 if args.quick else args.changes, args.explorer)
    return 0 if print_rows(rows, (before, os.getloadavg()[0])) else 1


if __name__ == "__main__":
    sys.exit(main())
