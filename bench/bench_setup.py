"""A fresh clone's first `python3 kit.py lab --no-browser`, until JupyterLab answers, and the
second start of the same clone.

Run from the repository root with any Python 3.10+ (it needs only the standard library):

    python3 bench/bench_setup.py            # empty caches, uv not on PATH (needs PyPI)
    python3 bench/bench_setup.py --repeat 3 # three fresh clones, then min and median
    python3 bench/bench_setup.py --pip      # also the pip route (DECOMPKIT_UV=off), the
                                            # reference: minutes, not seconds
    python3 bench/bench_setup.py --quick    # a smoke run: warm uv cache, offline, no fetch

Each round clones this repository's HEAD (`git clone`, so uncommitted changes are not
measured; the script says when there are some) into a scratch folder and starts the kit the
way a student does, with the base Python (not a virtual environment's) and in an environment
that has lost what a new machine would not have: the package caches point at empty scratch
folders (UV_CACHE_DIR, PIP_CACHE_DIR), every PATH entry holding a `uv` is dropped, Jupyter's
user folders are scratch folders. The clock runs from the start of `kit.py` until
`/api/status` answers on the port the script chose; then the server gets SIGTERM, and the
script waits for it (and anything left in its process group) to end before the next start.
The second start runs the same command in the same clone, with the environment in place.

The breakdown comes from the output: kit.py's own step lines (fetching uv, the set-up in
all), uv's summary lines (`Prepared 127 packages in 8.1s`, `Installed ...`) and JupyterLab
from kit.py's "starting JupyterLab" line until /api/status answered. `--keep` keeps each
start's output (with uv's `+ name==version` lines: the versions installed from uv.lock).
The wall times depend on the network and on the load:
the load average is printed before and after each round, and so is the CPU time of each
start (kit.py and every process it ran, up to the server's exit), which other jobs on the
machine do not inflate much.

``--quick`` keeps the user's uv cache and sets UV_OFFLINE=1, and hands the clone the uv
that this checkout uses (DECOMPKIT_UV, PATH, or the one kit.py fetched into .venv-tools/),
so it needs no network: `uv sync --frozen` installs uv.lock's versions from the cache. Without
such a uv it says so and exits 0 without measuring.
Targets (quiet machine, empty caches): first start <= 30 s, second start <= 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_FIRST = 30.0
TARGET_SECOND = 5.0
#: kit.py's step lines: "[kit] uv 0.13.9 fetched (3.2 s)", "[kit] ... (12.5 s in all)"
STEP = re.compile(r"^\[kit\] (?P<step>.+) \((?P<seconds>\d+\.\d) s(?: in all)?\)$")
#: uv's summary lines: "Prepared 127 packages in 8.12s", "Installed 140 packages in 481ms"
UV_STEP = re.compile(
    r"^(?P<step>(?:Resolved|Prepared|Installed|Checked|Built) .+)"
    r" in (?P<time>[\d.]+)(?P<unit>ms|s)$"
)


def base_python() -> str:
    """The interpreter a student would type: this one, or the base of its virtual env."""
    return getattr(sys, "_base_executable", None) or sys.executable


def path_without_uv(path: str) -> str:
    """PATH less every folder that holds a `uv` (pyenv shims included)."""
    keep = []
    for folder in path.split(os.pathsep):
        if folder and not any((Path(folder) / name).exists() for name in ("uv", "uv.exe")):
            keep.append(folder)
    return os.pathsep.join(keep)


def local_uv() -> str | None:
    """The uv this checkout's kit.py would use without fetching one, or None."""
    candidates = [os.environ.get("DECOMPKIT_UV", ""), shutil.which("uv") or ""]
    candidates += [str(ROOT / ".venv-tools" / "uv" / "bin" / "uv")]
    for candidate in filter(None, candidates):
        try:
            out = subprocess.run(
                [candidate, "--version"], capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode == 0 and out.stdout.startswith("uv "):
            return candidate
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} cores)"
    except OSError:
        return "unknown"


class Start:
    """One `kit.py lab` run: started, timed until /api/status answers, then stopped."""

    def __init__(self, clone: Path, python: str, env: dict[str, str], log: Path):
        self.port, self.token = free_port(), secrets.token_hex(16)
        command = [
            python,
            "kit.py",
            "lab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
        ]
        self.lines: list[tuple[float, str]] = []
        self.log = log
        self.cpu_before = _children_cpu()
        self.started = time.monotonic()
        self._stderr = log.open("w")
        self.process = subprocess.Popen(
            command,
            cwd=clone,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            start_new_session=True,
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append((time.monotonic() - self.started, line.rstrip("\n")))

    def wait_until_answering(self, timeout: float) -> float:
        url = f"http://127.0.0.1:{self.port}/api/status"
        request = urllib.request.Request(url, headers={"Authorization": f"token {self.token}"})
        while time.monotonic() - self.started < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(self._failure(f"kit.py exited with {self.process.returncode}"))
            try:
                with urllib.request.urlopen(request, timeout=2) as response:
                    json.load(response)
                return time.monotonic() - self.started
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.05)
        raise RuntimeError(self._failure(f"no answer on port {self.port} within {timeout:.0f} s"))

    def _failure(self, why: str) -> str:
        kit = "\n".join(line for _, line in self.lines[-20:])
        jupyter = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
        return f"{why}\n--- kit.py ---\n{kit}\n--- stderr ---\n{jupyter}"

    def stop(self) -> float:
        """SIGTERM to the server (kit.py became it), wait, then clear its process group."""
        began = time.monotonic()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        try:  # the kit's readiness watcher, or anything else the server left in its group
            os.killpg(self.process.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
        self.reader.join(timeout=5)
        self._stderr.close()
        self.log.with_suffix(".out").write_text("".join(f"{line}\n" for _, line in self.lines))
        self.cpu = _children_cpu() - self.cpu_before  # everything it ran, now that it ended
        with socket.socket() as probe:  # nothing listens on the port any more
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", self.port))
        return time.monotonic() - began

    def steps(self, answered: float) -> list[tuple[str, float]]:
        """The kit's step lines with their times, and JupyterLab's own start."""
        steps, lab_started = [], None
        for at, line in self.lines:
            if match := STEP.match(line):
                steps.append((match["step"].split(": ")[0], float(match["seconds"])))
            elif line.startswith("[kit] starting JupyterLab"):
                lab_started = at
        for line in self.log.read_text(errors="replace").splitlines():  # uv writes to stderr
            if match := UV_STEP.match(line.strip()):
                scale = 1e-3 if match["unit"] == "ms" else 1.0
                steps.append((f"uv: {match['step']}", float(match["time"]) * scale))
        if lab_started is not None:
            steps.append(("JupyterLab until /api/status", answered - lab_started))
        return steps


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def environment(scratch: Path, *, quick: bool, uv: str | None, pip_only: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    for name in ("JUPYTER_RUNTIME_DIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR"):
        (scratch / name).mkdir()
        env[name] = str(scratch / name)
    env["JUPYTER_CONFIG_PATH"] = ""
    env["PATH"] = path_without_uv(env.get("PATH", ""))
    env.pop("DECOMPKIT_UV", None)
    if quick:
        env.update(UV_OFFLINE="1", DECOMPKIT_UV=uv)
    else:
        (scratch / "uv-cache").mkdir()
        (scratch / "pip-cache").mkdir()
        env.update(UV_CACHE_DIR=str(scratch / "uv-cache"), PIP_CACHE_DIR=str(scratch / "pip-cache"))
    if pip_only:
        env["DECOMPKIT_UV"] = "off"
    return env


def one_round(
    label: str, *, quick: bool, uv: str | None, pip_only: bool, timeout: float, keep: bool
) -> dict:
    scratch = Path(tempfile.mkdtemp(prefix="bench-setup-"))
    try:
        clone = scratch / "clone"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        env = environment(scratch, quick=quick, uv=uv, pip_only=pip_only)
        load_before = load()
        first = Start(clone, base_python(), env, scratch / "first.log")
        try:
            first_time = first.wait_until_answering(timeout)
        finally:
            first_stop = first.stop()
        second = Start(clone, base_python(), env, scratch / "second.log")
        try:
            second_time = second.wait_until_answering(120)
        finally:
            second_stop = second.stop()
        result = {
            "label": label,
            "first": first_time,
            "second": second_time,
            "steps": first.steps(first_time),
            "second_steps": second.steps(second_time),
            "stops": (first_stop, second_stop),
            "load": (load_before, load()),
            "cpu": (first.cpu, second.cpu),
        }
        report(result)
        return result
    finally:
        if keep:
            print(f"  kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def report(result: dict) -> None:
    print(f"{result['label']}:")
    print(f"  first start  {result['first']:6.1f} s  (target {TARGET_FIRST:.0f} s)")
    for step, seconds in result["steps"]:
        print(f"      {seconds:6.1f} s  {step}")
    print(f"  second start {result['second']:6.1f} s  (target {TARGET_SECOND:.0f} s)")
    print(
        f"  first / second {result['first'] / result['second']:.1f}x;"
        f" servers stopped in {result['stops'][0]:.1f} s and {result['stops'][1]:.1f} s"
    )
    print(
        f"  CPU time (kit.py and all it ran, until stopped): first {result['cpu'][0]:.1f} s,"
        f" second {result['cpu'][1]:.1f} s"
    )
    print(f"  load average before {result['load'][0]}, after {result['load'][1]}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="warm uv cache, offline, the local uv: a smoke run"
    )
    parser.add_argument("--repeat", type=int, default=1, help="fresh clones to time")
    parser.add_argument(
        "--pip",
        action="store_true",
        help="also time the pip route (DECOMPKIT_UV=off) as the reference",
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds to wait for a first start"
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders")
    args = parser.parse_args(argv)

    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    status = ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"]
    dirty = subprocess.run(status, capture_output=True, text=True, check=True).stdout.strip()
    uv = local_uv() if args.quick else None
    if args.quick and uv is None:
        print(
            "bench_setup --quick: no uv here (DECOMPKIT_UV, PATH, .venv-tools/); nothing measured"
        )
        return 0
    caches = "the user's uv cache, offline" if args.quick else "empty uv and pip caches"
    note = " (uncommitted changes not included)" if dirty else ""
    given = f"given: {uv}" if uv else "not on PATH"
    print(
        f"bench_setup: fresh clones of {ROOT} at {head}{note}; {caches}; uv {given}; "
        f"Python {base_python()}"
    )
    results = [
        one_round(
            f"round {i + 1} (uv route)",
            quick=args.quick,
            uv=uv,
            pip_only=False,
            timeout=args.timeout,
            keep=args.keep,
        )
        for i in range(max(1, args.repeat))
    ]
    if len(results) > 1:
        firsts = [r["first"] for r in results]
        seconds = [r["second"] for r in results]
        print(
            f"first start: min {min(firsts):.1f} s, median {statistics.median(firsts):.1f} s; "
            f"second start: min {min(seconds):.1f} s, median {statistics.median(seconds):.1f} s"
        )
    if args.pip:
        reference = one_round(
            "reference (pip route, DECOMPKIT_UV=off)",
            quick=args.quick,
            uv=uv,
            pip_only=True,
            timeout=max(args.timeout, 1800),
            keep=args.keep,
        )
        best = min(r["first"] for r in results)
        print(f"first start, pip / uv: {reference['first'] / best:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
