"""Where an explorer's update spends the kernel's time: a click or jump on a slider, profiled
in a plain Python process (no browser, no Jupyter: quicker and steadier on a loaded machine).

    python bench/profile_updates.py                        # every explorer, 40 changes each
    python bench/profile_updates.py --explorer DAG --top 25

Each explorer is made as ``bench/bench_browser.py``'s notebook makes it and laid out at the
width JupyterLab gives it (1000 CSS pixels, ratio 1). Then, per slider, ``--changes`` values
that are new to the explorer (a click on the track lands on a value the figure has not shown)
are set one by one; each change runs the explorer's whole update: compute, move the artists,
record or replay the scene and set the view's traits (no wire: no kernel). The script prints
the CPU milliseconds per change (median and p90 per slider) and, per explorer, the functions
with the most cumulative time under ``cProfile`` over the same changes of a second explorer
(the times printed are taken without the profiler). CPU time, not wall
time, is what holds on a shared machine.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import ipywidgets as widgets  # noqa: E402
from bench_widgets import repaired_run  # noqa: E402

from decompkit import widgets as explorers  # noqa: E402
from decompkit.widgets import base, recorder, render, view  # noqa: E402

#: The explorers as the browser benchmark's notebook makes them.
MAKERS = {
    "reliability": lambda: explorers.reliability_explorer(),
    "horizon": lambda: explorers.horizon_explorer(trials=2000, seed=1),
    "trace stepper": lambda: explorers.trace_stepper(repaired_run()),
    "DAG": lambda: explorers.dag_explorer(example="B", workers=3),
}
#: Width in CSS pixels and pixel ratio the page reports (JupyterLab at 1280 x 800).
SCREEN = [1000, 1.0, 700]


def far_values(low, high, step, start, count):
    """``count`` values of a slider, each new and more than one step from the one before: the
    values a series of clicks on the track lands on (fewer if the slider has fewer).

    The fractions of the track follow the golden-ratio sequence from half-way across.

    >>> far_values(0, 10, 1, 0, 4)
    [5, 1, 7, 4]
    """
    steps = round((high - low) / step)
    last = round((start - low) / step)
    seen, order = {last}, []
    for i in range(50 * count):
        if len(order) == count or len(seen) > steps:
            break
        k = round(((0.5 + 0.618034 * i) % 1.0) * steps)
        if k in seen or abs(k - last) <= 1:
            continue
        seen.add(k)
        order.append(k)
        last = k
    whole = isinstance(step, int) and isinstance(low, int)
    return [low + k * step if whole else round(low + k * step, 12) for k in order]


#: Parts of an update timed apart (CPU ms per change, inclusive): (label, owner, attribute).
PHASES = (
    ("update", base.Explorer, "update"),
    ("compute + artists (_refresh)", None, "_refresh"),
    ("scene", render.Renderer, "scene"),
    ("  looks", render, "look"),
    ("  record (draw)", recorder.SceneRecorder, "record"),
    ("    text bitmaps", recorder.SceneRecorder, "_text_bitmap"),
    ("view.show (traits)", view.FigureView, "show"),
)


class Phases:
    """CPU seconds spent in each of :data:`PHASES` while in use (``with Phases(cls) as p``),
    counted once per outermost call."""

    def __init__(self, explorer_class):
        self.spent = {label: 0.0 for label, *_ in PHASES}
        self._patches = []
        self.on = False  # counting only while a change is made
        for _label, owner, name in PHASES:
            owner = owner or explorer_class
            self._patches.append((owner, name, getattr(owner, name)))
        self._labels = [label for label, *_ in PHASES]

    def __enter__(self):
        for label, (owner, name, original) in zip(self._labels, self._patches, strict=True):
            setattr(owner, name, self._timed(label, original))
        return self

    def __exit__(self, *exc):
        for owner, name, original in self._patches:
            setattr(owner, name, original)

    def _timed(self, label, original):
        depth = [0]

        def timed(*args, **kwargs):
            depth[0] += 1
            started = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                depth[0] -= 1
                if not depth[0] and self.on:
                    self.spent[label] += time.process_time() - started

        return timed


def changes_of(name, changes, profiler=None, phases=None):
    """CPU ms per change of each slider of a new explorer ``name`` (under ``profiler``, if
    given: its times then include the profiler's own cost; timed by ``phases``, if given)."""
    explorer = MAKERS[name]()
    explorer.png()  # the first draw, as the notebook's display makes it
    explorer.view.screen = list(SCREEN)
    sliders = {
        label: control
        for label, control in explorer.controls.items()
        if isinstance(control, (widgets.IntSlider, widgets.FloatSlider)) and not control.disabled
    }
    times = {}
    for label, control in sliders.items():
        values = far_values(control.min, control.max, control.step, control.value, changes)
        spent = []
        for value in values:
            started = time.process_time()
            if profiler is not None:
                profiler.enable()
            if phases is not None:
                phases.on = True
            control.value = value
            if phases is not None:
                phases.on = False
            if profiler is not None:
                profiler.disable()
            spent.append(1e3 * (time.process_time() - started))
        times[label] = spent
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--explorer", choices=list(MAKERS), action="append", help="only this")
    parser.add_argument("--changes", type=int, default=40, help="changes per slider (40)")
    parser.add_argument("--top", type=int, default=15, help="functions listed per explorer")
    args = parser.parse_args(argv)
    if args.changes < 1:
        raise ValueError(f"--changes must be at least 1, got {args.changes!r}")
    for name in args.explorer or MAKERS:
        times = changes_of(name, args.changes)
        sample = MAKERS[name]()
        with Phases(type(sample)) as phases:
            again = changes_of(name, args.changes, phases=phases)
        count = sum(len(v) for v in again.values())
        profiler = cProfile.Profile()
        changes_of(name, args.changes, profiler)  # a second explorer, the same changes
        print(f"== {name}: CPU ms per change (a click on the track: a value new to the figure)")
        every = [t for spent in times.values() for t in spent]
        for label, spent in times.items():
            tail = statistics.quantiles(spent, n=10)[-1] if len(spent) > 1 else spent[0]
            print(
                f"  {label:22} median {statistics.median(spent):6.1f}  p90 {tail:6.1f}"
                f"  (n {len(spent)})"
            )
        print(f"  {'all':22} median {statistics.median(every):6.1f}  (n {len(every)})")
        print(f"  where it goes, CPU ms per change (mean over {count}, a second explorer):")
        for label, spent in phases.spent.items():
            print(f"    {label:30} {1e3 * spent / count:6.1f}")
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("cumulative").print_stats(args.top)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
