"""Update cost of the live explorers in the kernel, against a new figure per update.

Run from the repository root:

    python bench/bench_widgets.py          # full run (about a minute)
    python bench/bench_widgets.py --quick  # smoke run, a few seconds

For every explorer, each slider is set programmatically to a sequence of values; one update
is timed from the assignment until the observer returns, that is until the scene has been
recorded and handed to the view. Three sequences per slider, reported apart because the
renderer replays an artist whose look it has recorded before: *drag* moves the slider one
step at a time, as a hand dragging it does, mostly to settings not shown before; *back*
drags it back over the same steps (every look seen before: replayed, the hand's way back);
*jump* sets values spread over the whole range in a shuffled order (far settings, mostly
new; on a slider of few steps, such as the workers, some come back).

Per slider the script prints the median CPU time of an update (what holds on a busy machine;
wall time is printed too), the bytes one update sends (scene, plus the bitmaps new to the
browser) and how many bitmaps (lines of text) had to be rendered per update. The reference
is the naive update, a new Figure drawn by the same plot functions and saved to PNG as
``interact`` would do; the ratio naive / update is what to compare across machines.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from pathlib import Path

import numpy as np

try:
    import decompkit  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from decompkit import examples, scheduler, widgets
from decompkit.widgets.render import Renderer


def repaired_run():
    """Example A with its first test run red, repaired by unrolling write_code."""
    a = examples.coding_task()
    return scheduler.run_with_repair(
        a.graph,
        a.durations,
        workers=2,
        step=scheduler.scripted({"run_tests": ["fail"]}),
        faulty={"run_tests": "write_code"},
    )


#: Explorer name -> factory at default sizes (Monte Carlo points are not part of an update).
EXPLORERS = {
    "reliability_explorer": widgets.reliability_explorer,
    "horizon_explorer": widgets.horizon_explorer,
    "dag_explorer A": lambda: widgets.dag_explorer("A"),
    "dag_explorer B": lambda: widgets.dag_explorer("B"),
    "trace_stepper": lambda: widgets.trace_stepper(repaired_run()),
}


def drag_values(control, count):
    """``count`` values one slider step apart, from the current value up, then down."""
    step = control.step
    values, value, direction = [], control.value, 1
    for _ in range(count):
        if not control.min <= value + direction * step <= control.max:
            direction = -direction
        value = value + direction * step
        values.append(round(value, 10) if isinstance(value, float) else value)
    return values


def jump_values(control, count):
    """``count`` values drawn over the slider's whole range (fixed seed), none repeated."""
    draws = np.random.default_rng(0).uniform(control.min, control.max, 8 * count + 8)
    if isinstance(control.value, int):
        draws = np.rint(draws).astype(int)
    else:
        draws = np.clip(np.round(draws / control.step) * control.step, control.min, control.max)
    out, last = [], control.value
    for value in draws.tolist():
        if value != last:
            out.append(value)
            last = value
    return out[:count]


def time_updates(explorer, name, values, *, reset=True):
    """Per update of slider ``name``: (wall s, CPU s, bytes sent, bitmaps rendered); with
    ``reset`` the slider goes back to its value before, untimed."""
    control = explorer.controls[name]
    start_value = control.value
    rows = []
    for value in values:
        renders, bitmaps = explorer.renders, explorer.renderer.sprites.rendered
        start, start_cpu = time.perf_counter(), time.process_time()
        control.value = value
        wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        if explorer.renders != renders + 1:
            raise RuntimeError(f"{name} = {value!r} did not send a new picture")
        sent, texts = explorer.view.last_bytes, explorer.renderer.sprites.rendered - bitmaps
        rows.append((wall, cpu, sent, texts))
    if reset:
        control.value = start_value
    return rows


def time_naive(explorer, count):
    """Seconds per naive update: a new figure by the same drawing code, saved to PNG.

    Replaces the explorer's figure: call it last.
    """
    times = []
    for _ in range(count):
        start = time.perf_counter()
        figure = Figure(figsize=explorer.figure.get_size_inches(), dpi=explorer.figure.dpi)
        figure.set_layout_engine("constrained")
        explorer.figure, explorer.renderer = figure, Renderer(figure)
        explorer._draw()
        explorer._refresh()
        explorer.renderer.move()  # one pass over everything, as a fresh plot draws
        FigureCanvasAgg(figure)  # and matplotlib's own canvas
        figure.savefig(io.BytesIO(), format="png", dpi=figure.dpi)
        times.append(time.perf_counter() - start)
    return times


def ms(seconds):
    return f"{1e3 * statistics.median(seconds):7.1f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few updates, for a smoke run")
    parser.add_argument(
        "--only", choices=list(EXPLORERS), action="append", help="bench only this explorer"
    )
    args = parser.parse_args(argv)
    per_slider = 2 if args.quick else 15
    naive_count = 1 if args.quick else 5

    print(
        f"{'explorer':22} {'control':20} {'cpu ms':>7} {'drag':>7} {'back':>7} {'jump':>7}"
        f" {'wall ms':>7} {'bytes':>7} {'texts':>5}"
    )
    summary = []
    for name, factory in EXPLORERS.items():
        if args.only and name not in args.only:
            continue
        start = time.perf_counter()
        explorer = factory()
        build = time.perf_counter() - start
        every = []
        for slider, control in explorer.controls.items():
            if not hasattr(control, "min"):
                continue
            start = control.value
            steps = drag_values(control, per_slider)
            drag = time_updates(explorer, slider, steps, reset=False)
            back = time_updates(explorer, slider, [*reversed(steps[:-1]), start], reset=False)
            jump = time_updates(explorer, slider, jump_values(control, per_slider))
            rows = drag + back + jump
            every += rows
            wall, cpu, sent, texts = zip(*rows, strict=True)
            print(
                f"{name:22} {slider:20} {ms(cpu)} {ms([r[1] for r in drag])}"
                f" {ms([r[1] for r in back])} {ms([r[1] for r in jump])} {ms(wall)}"
                f" {statistics.median(sent):7.0f} {statistics.mean(texts):5.1f}"
            )
        naive = time_naive(explorer, naive_count)
        summary.append((name, build, every, naive))

    print()
    print(f"{'explorer':22} {'build ms':>9} {'cpu ms':>7} {'wall ms':>7} {'naive ms':>9} ratio")
    for name, build, every, naive in summary:
        wall, cpu = [r[0] for r in every], [r[1] for r in every]
        ratio = statistics.median(naive) / statistics.median(wall)
        print(f"{name:22} {1e3 * build:9.0f} {ms(cpu)} {ms(wall)} {ms(naive):>9} {ratio:5.1f}")
    print("cpu / wall: median of one update (scene recorded and handed to the view), drag, back")
    print("and jump together (each column: CPU); bytes: sent per update; texts: lines of text")
    print("rendered per update;")
    print("naive: a new figure + PNG per update; ratio = naive / update (wall)")


if __name__ == "__main__":
    main()
