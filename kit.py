#!/usr/bin/env python3
"""Set up decompkit in a local virtual environment, then open it or test it.

    python3 kit.py lab      JupyterLab on notebooks/ (extra arguments go to jupyter lab)
    python3 kit.py test     the whole test suite (extra arguments go to pytest)
    python3 kit.py bench    the benchmarks in bench/ (extra arguments go to each script)
    python3 kit.py release  regenerate notebooks/ from solutions/ with nbgrader (never
                            overwrites a notebook edited since the last release)
    python3 kit.py check NOTEBOOK...   run notebooks, report every check, exit 1 if any is off
    python3 kit.py collect [ASSIGNMENT]  file the LMS download in downloaded/<a>/archive/
                                       into submitted/<id>/<a>/
    python3 kit.py grade [--workers N]  autograde submitted/ into gradebook.db
    python3 kit.py key ID... [--csv FILE]  a student's numbers and answers; the class's key
    python3 kit.py nbgrader ARGS...    any nbgrader command inside the kit's environment

The environment lives in .venv next to this file. It is created when missing and
(re)installed whenever pyproject.toml or the Python version changes; nothing asks a question.
Only the standard library is used here, so a bare ``python3`` is enough.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".decompkit-installed"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")


def _say(message: str) -> None:
    print(f"[kit] {message}", flush=True)


def _wanted_stamp() -> str:
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    return f"{digest} {sys.version_info[:3]}"


def ensure_environment() -> None:
    """Create .venv if missing and install the kit with its dev extras when out of date."""
    if not PYTHON.exists():
        _say(f"creating a virtual environment in {VENV}")
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    wanted = _wanted_stamp()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    _say("installing decompkit and its dependencies (first run takes a few minutes)")
    pip = [str(PYTHON), "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]
    subprocess.run([*pip, "install", "-e", f"{ROOT}[dev]"], check=True)
    STAMP.write_text(wanted)


def _environ() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the editable install is the one source of decompkit
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(VENV)
    return env


def _run(command: list[str]) -> int:
    return subprocess.run(command, cwd=ROOT, env=_environ()).returncode


def _replace_process(command: list[str]) -> int:
    """Become ``command``, so that signals (Ctrl-C, a terminate) reach it directly."""
    if os.name != "posix":
        return _run(command)
    os.chdir(ROOT)
    os.execve(command[0], command, _environ())


def lab(args: list[str]) -> int:
    """Serve notebooks/ in JupyterLab. Notebooks are only opened here, never written."""
    command = [str(PYTHON), "-m", "jupyter", "lab", f"--ServerApp.root_dir={ROOT / 'notebooks'}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers, Binder-like images and CI run as root
    return _replace_process([*command, *args])


def test(args: list[str]) -> int:
    return _replace_process([str(PYTHON), "-m", "pytest", *args])


def _course(command: str, args: list[str]) -> int:
    """Run ``python -m decompkit.course <command> ARGS`` in the kit's environment."""
    return _run([str(PYTHON), "-m", "decompkit.course", command, *args])


def release(args: list[str]) -> int:
    """Regenerate notebooks/ from solutions/ (refuses to overwrite edited notebooks)."""
    return _course("release", args)


def check(args: list[str]) -> int:
    """Run notebooks and report each visible check; exits 1 unless all are on track."""
    return _course("check", args)


def nbgrader(args: list[str]) -> int:
    """Any nbgrader command, run inside the kit's environment from the course root."""
    return _run([str(PYTHON), "-m", "nbgrader", *args])


def collect(args: list[str]) -> int:
    """File an LMS download into submitted/<id>/<assignment>/ (see decompkit.course.collect)."""
    return _course("collect", args)


def grade(args: list[str]) -> int:
    """Autograde submitted/<student>/decomp/ into gradebook.db (see decompkit.course.grade)."""
    return _course("grade", args)


def key(args: list[str]) -> int:
    """Print a student's numbers and answers, or write the class's answer key as CSV."""
    return _course("key", args)


def bench(args: list[str]) -> int:
    status = 0
    for script in sorted((ROOT / "bench").glob("bench_*.py")):
        _say(f"running {script.relative_to(ROOT)}")
        status |= _run([str(PYTHON), str(script), *args])
    return status


COMMANDS = {
    "lab": lab,
    "test": test,
    "bench": bench,
    "release": release,
    "check": check,
    "collect": collect,
    "grade": grade,
    "key": key,
    "nbgrader": nbgrader,
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    ensure_environment()
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
