"""Update cost of the live explorers, against a new figure per update measured in the same run.

Run from the repository root:

    python bench/bench_widgets.py          # full run (about a minute)
    python bench/bench_widgets.py --quick  # smoke run, a few seconds

For every explorer at its default size, each slider is set programmatically to a sequence of
values; one update is timed from the assignment until the observer returns, that is until
the figure has been re-rendered into the ``ipywidgets.Image``. Two sequences per slider:
*drag* moves the slider one step at a time, as a hand dragging it does; *jump* sets values
spread over the whole range in a shuffled order. The script prints wall-clock medians per
slider and per explorer (target: below 100 ms) and, as the reference, the naive update: a
new Figure drawn by the same plot functions and saved to PNG, as ``interact`` would do. The
ratio naive / in-place is what to compare across machines. On a shared machine the wall
time includes waiting for the CPU; the CPU-time column shows the work itself.
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


def time_updates(explorer, name, values):
    """(wall seconds, CPU seconds) per update for assigning ``values`` to slider ``name``."""
    control = explorer.controls[name]
    start_value = control.value
    wall, cpu = [], []
    for value in values:
        renders = explorer.renders
        start, start_cpu = time.perf_counter(), time.process_time()
        control.value = value
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        if explorer.renders != renders + 1:
            raise RuntimeError(f"{name} = {value!r} did not re-render the figure")
    control.value = start_value
    return wall, cpu


def time_naive(explorer, count):
    """Seconds per naive update: a new figure by the same drawing code, saved to PNG.

    Replaces the explorer's figure: call it last.
    """
    times = []
    for _ in range(count):
        start = time.perf_counter()
        figure = Figure(
            figsize=explorer.figure.get_size_inches(), dpi=explorer.figure.dpi, layout="constrained"
        )
        FigureCanvasAgg(figure)
        explorer.figure = figure
        explorer._draw()
        explorer._refresh()
        explorer._set_layers()  # draw everything in one pass, as a fresh plot would
        figure.savefig(io.BytesIO(), format="png", dpi=figure.dpi)
        times.append(time.perf_counter() - start)
    return times


def ms(seconds):
    return f"{1e3 * statistics.median(seconds):9.1f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few updates, for a smoke run")
    parser.add_argument(
        "--only", choices=list(EXPLORERS), action="append", help="bench only this explorer"
    )
    args = parser.parse_args(argv)
    per_slider = 1 if args.quick else 15
    naive_count = 1 if args.quick else 7
    trials = 2_000 if args.quick else 20_000

    print(f"{'explorer':22} {'control':20} {'drag ms':>9} {'jump ms':>9} {'cpu ms':>9}")
    summary, extra = [], []
    for name, factory in EXPLORERS.items():
        if args.only and name not in args.only:
            continue
        start = time.perf_counter()
        explorer = factory()
        build = time.perf_counter() - start
        every, every_cpu = [], []
        for slider, control in explorer.controls.items():
            if not hasattr(control, "min"):
                continue
            drag, drag_cpu = time_updates(explorer, slider, drag_values(control, per_slider))
            jump, jump_cpu = time_updates(explorer, slider, jump_values(control, per_slider))
            every += drag + jump
            every_cpu += drag_cpu + jump_cpu
            print(f"{name:22} {slider:20} {ms(drag)} {ms(jump)} {ms(drag_cpu + jump_cpu)}")
        if hasattr(explorer, "run_monte_carlo"):
            explorer.trials = trials
            start = time.perf_counter()
            explorer.run_monte_carlo()
            extra.append(
                f"{name} Monte Carlo button: {len(explorer.mc_qs)} points x {trials:,} runs "
                f"in {time.perf_counter() - start:.2f} s"
            )
        naive = time_naive(explorer, naive_count)
        summary.append((name, build, every, every_cpu, naive))

    print()
    print(f"{'explorer':22} {'build ms':>9} {'update ms':>9} {'cpu ms':>9} {'naive ms':>9} ratio")
    for name, build, every, every_cpu, naive in summary:
        ratio = statistics.median(naive) / statistics.median(every)
        print(f"{name:22} {1e3 * build:9.0f} {ms(every)} {ms(every_cpu)} {ms(naive)} {ratio:5.1f}")
    print("update: median wall time of one in-place update + PNG, drag and jump together;")
    print("naive: a new figure + PNG per update; ratio = naive / update")
    for line in extra:
        print(line)


if __name__ == "__main__":
    main()
