"""The browser benchmark's verdicts (bench/bench_browser.py): which changes a row is judged
on, and its targets. No browser and no timing: rows are built by hand."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import bench_browser as bench  # noqa: E402


def _row(mode, latencies, ready, explorer="horizon", **extra):
    row = bench.Result("lab", mode, explorer, "q audit", "click", **extra)
    row.latencies, row.ready = list(latencies), list(ready)
    return row


def test_without_pictures_ahead_only_changes_that_waited_for_the_kernel_count():
    row = _row("kernel", [2, 3, 70, 80, 90], [True, True, False, False, False])
    assert row.judged("latencies") == [70, 80, 90]
    assert row.verdict == "FAIL"  # median 80 > 50: the pictures from the page do not hide it


def test_with_pictures_ahead_every_change_counts():
    row = _row("ahead", [2, 3, 70, 80, 90], [True, True, False, False, False])
    assert row.judged("latencies") == [2, 3, 70, 80, 90]
    assert row.verdict == "FAIL"  # median 70
    assert _row("ahead", [2, 3, 4, 80, 90], [True] * 3 + [False] * 2).verdict == "pass"


def test_with_pictures_computed_in_the_browser_every_change_counts():
    row = _row("browser", [2, 3, 70, 80, 90], [True, True, False, False, False])
    assert row.judged("latencies") == [2, 3, 70, 80, 90]
    assert _row("browser", [2, 3, 4, 80, 90], [True] * 3 + [False] * 2).verdict == "pass"


@pytest.mark.parametrize(
    ("mode", "ahead", "browser"),
    [("ahead", True, True), ("browser", False, True), ("kernel", False, False)],
)
def test_each_mode_sets_the_kit_up_as_it_says(mode, ahead, browser):
    setup = json.loads(bench.notebook_json(mode))["cells"][0]["source"]
    assert f"base.MAKE_AHEAD = {ahead}" in setup
    assert f"base.COMPUTE_IN_BROWSER = {browser}" in setup


def test_a_row_with_no_change_through_the_kernel_is_not_judged():
    assert _row("kernel", [2, 3], [True, True]).verdict == "n/a"


def test_a_change_without_a_picture_fails_the_row():
    assert _row("ahead", [10, 10], [False, False], missed=1).verdict == "FAIL"


@pytest.mark.parametrize(
    ("explorer", "median", "verdict"),
    [
        ("DAG", 79, "pass"),
        ("DAG", 81, "FAIL"),
        ("trace stepper", 50, "pass"),
        ("reliability", 51, "FAIL"),
    ],
)
def test_targets_per_explorer(explorer, median, verdict):
    assert _row("kernel", [median], [False], explorer=explorer).verdict == verdict


@pytest.mark.parametrize(
    ("fps", "values", "verdict"),
    [(19.0, 40.0, "FAIL"), (20.0, 40.0, "pass"), (9.5, 10.0, "FAIL"), (10.0, 10.0, "pass")],
)
def test_a_drag_needs_20_pictures_a_second_or_one_per_value_passed(fps, values, verdict):
    row = bench.Result("lab", "ahead", "DAG", "workers", "drag", fps=fps, values_per_s=values)
    assert row.target == min(20, values)
    assert row.verdict == verdict


def test_a_drag_counts_each_setting_drawn_once_and_the_last_ones_within_the_target():
    """The kernel's picture of the setting the browser just drew is not a new picture; one
    drawn after the hand stopped counts within the row's latency target only."""
    frames = [
        [90, "s0", 7],  # before the sweep: the setting the drag starts from
        [100, "s0", 8],  # the same again: not new
        [110, "s1", bench.COMPUTED],
        [130, "s1", 9],  # the kernel's picture replacing the browser's
        [150, "s2", -1],  # sent ahead
        [180, "s3", 10],
        [230, "s4", 11],  # 30 ms after the hand stopped
        [290, "s5", 12],  # 90 ms after: too late
    ]
    counted = bench.new_pictures(frames, 100, 200, 50)
    assert [f[1] for f in counted] == ["s1", "s2", "s3", "s4"]
    assert bench.new_pictures(frames, 100, 200, 100)[-1][1] == "s5"


def test_helpers():
    assert bench.p90([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]) == 91.0
    assert bench.on_step(0.537, 0.0, 0.01) == 0.54


# --- the lecture page's rows (bench/bench_page.py) -------------------------------------------

import bench_page  # noqa: E402


def test_a_page_change_row_is_judged_on_its_median_against_16_ms():
    row = bench_page.Row("horizon", "horizon-q", "click", latencies=[5, 9, 17, 30, 40])
    assert row.verdict == "FAIL"  # median 17
    assert bench_page.Row("horizon", "horizon-q", "click", latencies=[5, 9, 16]).verdict == "pass"
    missed = bench_page.Row("horizon", "horizon-q", "click", latencies=[5, 5], missed=1)
    assert missed.verdict == "FAIL"
    assert bench_page.Row("horizon", "horizon-q", "arrow").verdict == "FAIL"  # nothing timed


def test_a_page_drag_needs_50_pictures_a_second_or_one_per_change_of_value():
    fast = bench_page.Row("horizon", "horizon-q", "drag", pictures=99, values=120, seconds=2.0)
    assert fast.target == 50 and fast.verdict == "FAIL"  # 49.5 a second
    few = bench_page.Row("dag", "dag-workers", "drag", pictures=10, values=10, seconds=2.0)
    assert few.target == 5 and few.verdict == "pass"
    assert (
        bench_page.Row("dag", "dag-workers", "drag", pictures=9, values=10, seconds=2.0).verdict
        == "FAIL"
    )


#: A benchmark's main process in brief: the browser helpers' terminate handling (or not),
#: then a ``finally`` that stands for stopping JupyterLab and the browser.
_HOLDS_A_SERVER = """
import sys, time
sys.path.insert(0, {root!r})
from tests.browser.jupyter_server import interrupt_on_terminate
if {handled}:
    interrupt_on_terminate()
try:
    print("ready", flush=True)
    time.sleep(60)
finally:
    open({marker!r}, "w").write("stopped")
"""


@pytest.mark.parametrize("handled", [True, False])
def test_a_terminated_benchmark_stops_its_server_and_browser(tmp_path, handled):
    """``kill`` or ``timeout`` on a benchmark used to leave its JupyterLab and kernel running:
    Python ends on a terminate without running ``finally`` or ``with`` exits. Both browser
    benchmarks now turn it into a KeyboardInterrupt first; without that, nothing is stopped."""
    marker = tmp_path / "stopped"
    code = _HOLDS_A_SERVER.format(
        root=str(Path(__file__).resolve().parents[1]), handled=handled, marker=str(marker)
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    child.send_signal(signal.SIGTERM)
    child.wait(timeout=30)
    assert marker.exists() is handled
    source = (Path(__file__).resolve().parents[1] / "bench").glob("bench_*.py")
    for bench_file in source:
        text = bench_file.read_text()
        if "jupyter_server import" in text:
            assert "interrupt_on_terminate()" in text, bench_file.name
