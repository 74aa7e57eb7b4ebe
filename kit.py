#!/usr/bin/env python3
"""Set up decompkit in a local virtual environment, then open it or test it.

    python3 kit.py lab      JupyterLab on notebooks/, as a student sees it (extra arguments
                            go to jupyter lab)
    python3 kit.py lab --instructor   the same with nbgrader's instructor tools (formgrader,
                            Create Assignment, the Nbgrader menu)
    python3 kit.py test     the whole test suite (extra arguments go to pytest; -n 2 runs it
                            on two pytest-xdist workers)
    python3 kit.py bench    the benchmarks in bench/ (extra arguments go to each script)
    python3 kit.py release  regenerate notebooks/ from solutions/ with nbgrader (never
                            overwrites a notebook edited since the last release)
    python3 kit.py check NOTEBOOK...   run notebooks, report every check, exit 1 if any is off
    python3 kit.py collect [ASSIGNMENT]  file the LMS download in downloaded/<a>/archive/
                                       into submitted/<id>/<a>/
    python3 kit.py grade [--workers N]  autograde submitted/ into gradebook.db
    python3 kit.py key ID... [--csv FILE]  a student's numbers and answers; the class's key
    python3 kit.py feedback [--student ID]  feedback/<student>/decomp/*.html, always rewritten
    python3 kit.py export --to canvas|moodle|csv [--roster CSV]  exports/decomp-<format>.csv
    python3 kit.py report   reports/decomp/report.html (+ CSVs): what the class got wrong
    python3 kit.py nbgrader ARGS...    any nbgrader command inside the kit's environment

The environment lives in .venv next to this file. It is created when missing and
(re)installed whenever pyproject.toml or the Python version changes; nothing asks a question.
`lab` and the course commands install the kit's own dependencies; `test` adds the test tools
(the [dev] extra). The packages are installed with uv, which is fetched from PyPI into
.venv-tools/ when it is not on PATH; without uv (no network for it, a platform it does not
support) pip does the same work, more slowly. DECOMPKIT_UV=/path/to/uv picks a uv,
DECOMPKIT_UV=off always uses pip. Every step prints one line with the time it took.
Only the standard library is used here, so a bare ``python3`` is enough.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".decompkit-installed"  # what is installed; written only after a success
PENDING = VENV / ".decompkit-installing"  # present while an installation is under way
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
TOOLS = ROOT / ".venv-tools"  # uv, when it had to be fetched from PyPI
UV_HOME = TOOLS / "uv"
ROLES = VENV / "etc" / "decompkit-lab"  # per-launch Jupyter configuration, one folder a role
PROJECT = "decompkit"
DEV = "dev"  # the extra with the test and developer tools
HEARTBEAT = 5.0  # seconds of silence after which a log (not a terminal) gets a progress line

# nbgrader's pieces of JupyterLab. A student's `kit.py lab` shows none of them: the
# notebooks are in the file browser (no exchange to fetch from), each exercise checks its
# answer in the next cell, and `kit.py check` validates a whole notebook. Leaving the server
# extensions out also saves their import (nbgrader.apps) at every start.
#: The instructor's Jupyter configuration folder (see its README.md).
INSTRUCTOR_CONFIG = ROOT / "src" / "decompkit" / "course" / "static" / "instructor"
#: JupyterLab and Notebook 7 settings of the kit (overrides.json).
LAB_SETTINGS = ROOT / "jupyter" / "settings"
NBGRADER_SERVER_EXTENSIONS = (
    "nbgrader.server_extensions.formgrader",
    "nbgrader.server_extensions.course_list",
    "nbgrader.server_extensions.assignment_list",
    "nbgrader.server_extensions.validate_assignment",
)
NBGRADER_LAB_PLUGINS = (
    "@jupyter/nbgrader:menu",
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
    "@jupyter/nbgrader:assignment-list",
    "@jupyter/nbgrader:validate-assignment",
)


def _say(message: str) -> None:
    print(f"[kit] {message}", flush=True)


# --- progress: one line per step ---------------------------------------------------------


class Progress:
    """Report steps as ``[kit] <step>: <result> (<seconds> s)``, one line each.

    On a terminal the line of the running step is redrawn every second with its elapsed
    time, and completed in place when the step ends. In a log (CI, a pipe) a step prints its
    line when it ends, plus a ``... still <step>`` line after every HEARTBEAT seconds without
    one, so that no one watches a silent screen while a slow step works.
    """

    def __init__(self, stream=None, *, live: bool | None = None, heartbeat: float = HEARTBEAT):
        self.stream = stream if stream is not None else sys.stdout
        isatty = getattr(self.stream, "isatty", None)
        self.live = bool(isatty and isatty()) if live is None else live
        self.heartbeat = heartbeat
        self.title: str | None = None
        self.detail = ""
        self.started = self.last_output = 0.0
        self._width = 0

    def _write(self, text: str, *, final: bool) -> None:
        if self.live:
            if not final:  # a redrawn line must not wrap, or the carriage return misses it
                text = text[: max(20, shutil.get_terminal_size().columns - 1)]
            pad = max(0, self._width - len(text))
            self.stream.write("\r" + text + " " * pad + ("\n" if final else ""))
            self._width = 0 if final else len(text)
        elif final:
            self.stream.write(text + "\n")
        self.stream.flush()

    def start(self, title: str) -> None:
        """Begin a step (ending the running one first)."""
        if self.title is not None:
            self.finish()
        self.title, self.detail = title, ""
        self.started = self.last_output = time.monotonic()
        self.tick()

    def note(self, detail: str) -> None:
        """What the running step is doing now (shown on its live or heartbeat line)."""
        self.detail = detail

    def tick(self) -> None:
        """Show that the running step is alive (called about twice a second)."""
        if self.title is None:
            return
        now = time.monotonic()
        if self.live:
            detail = f": {self.detail}" if self.detail else ""
            self._write(f"[kit] {self.title}{detail} ... {now - self.started:.0f} s", final=False)
        elif now - self.last_output >= self.heartbeat:
            detail = f" ({self.detail})" if self.detail else ""
            self._write(
                f"[kit] ... still {self.title}{detail}, {now - self.started:.0f} s", final=True
            )
            self.last_output = now

    def finish(self, result: str = "") -> float:
        """End the running step with its result; return how long it took."""
        if self.title is None:
            return 0.0
        elapsed = time.monotonic() - self.started
        result = result or self.detail
        self._write(
            f"[kit] {self.title}{': ' + result if result else ''} ({elapsed:.1f} s)", final=True
        )
        self.title, self.detail = None, ""
        return elapsed

    def abandon(self, why: str) -> None:
        """End the running step as failed or interrupted."""
        if self.title is not None:
            self.finish(why)


class StepFailed(Exception):
    """A command of the set-up exited non-zero; ``tail`` holds its last lines of output."""

    def __init__(self, command: list[str], returncode: int, tail: list[str]):
        self.command, self.returncode, self.tail = command, returncode, tail
        super().__init__(f"{Path(command[0]).name} exited with status {returncode}")

    def reason(self) -> str:
        """The last line of the output that says what went wrong, for a one-line message."""
        for line in reversed(self.tail):
            text = line.strip()
            if text and not text.startswith(("hint:", "note:", "WARNING: Running pip as")):
                return text[:200]
        return str(self)


def run_step(command, progress: Progress, parse, *, env=None, poll: float = 0.5) -> None:
    """Run ``command`` with its output read line by line and turned into step lines.

    ``parse(line, progress)`` starts, notes and finishes steps; between lines the running
    step ticks. The output itself is kept (its end is in :class:`StepFailed`) but not shown.
    Interrupting (Ctrl-C) stops the command and ends the step line before re-raising.
    """
    process = subprocess.Popen(
        [str(part) for part in command],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
        encoding="utf-8",
        errors="replace",
        bufsize=1,
    )
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    tail: collections.deque = collections.deque(maxlen=60)
    try:
        while True:
            try:
                line = lines.get(timeout=poll)
            except queue.Empty:
                progress.tick()
                continue
            if line is None:
                break
            line = _ANSI.sub("", line.rstrip("\r\n"))
            tail.append(line)
            parse(line, progress)
            progress.tick()
        returncode = process.wait()
    except BaseException:
        progress.abandon("interrupted")
        _stop(process)
        raise
    if returncode != 0:
        progress.abandon("failed")
        raise StepFailed([str(part) for part in command], returncode, list(tail))


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


class UvOutput:
    """Turns ``uv pip install`` output into steps: resolving, downloading, installing."""

    RESOLVED = re.compile(r"^(Resolved|Audited) (\d+) packages? in ")
    PREPARED = re.compile(r"^Prepared (\d+) packages? in ")
    INSTALLED = re.compile(r"^Installed (\d+) packages? in ")

    def __init__(self):
        self.downloads = self.downloaded = 0

    def __call__(self, line: str, progress: Progress) -> None:
        text = line.strip()
        if match := self.RESOLVED.match(text):
            progress.finish(_plural(int(match[2]), "package"))
            if match[1] == "Resolved":
                progress.start("downloading and unpacking")
        elif match := self.PREPARED.match(text):
            progress.finish(_plural(int(match[1]), "package"))
            progress.start("installing")
        elif match := self.INSTALLED.match(text):
            if progress.title != "installing":  # everything came from the cache
                progress.finish("all in the cache")
                progress.start("installing")
            progress.finish(_plural(int(match[1]), "package"))
        elif text.startswith("Downloading "):
            self.downloads += 1
            progress.note(f"{self.downloaded} of {self.downloads} large files")
        elif text.startswith("Downloaded "):
            self.downloaded += 1
            progress.note(f"{self.downloaded} of {self.downloads} large files")
        elif text.startswith("Building "):
            progress.note(f"building {text.split()[1]}")


class PipOutput:
    """Turns ``pip install`` output into steps: resolving and downloading, building,
    installing (pip resolves and downloads at once, then installs everything in one go)."""

    FOUND = re.compile(
        r"^(?:Collecting|Obtaining|Processing|Requirement already satisfied:) (?P<what>\S+)"
    )

    def __init__(self, *, first: str = "resolving and downloading"):
        self.first = first
        self.seen = 0
        self.last = ""

    def __call__(self, line: str, progress: Progress) -> None:
        text = line.strip()
        if progress.title is None and not text.startswith("Successfully"):
            progress.start(self.first)
        if match := self.FOUND.match(text):
            self.seen += 1
            what = match["what"].rstrip("/").rsplit("/", 1)[-1]  # a path or file URL: its name
            self.last = re.split(r"[<>=!~;\[(]|-\d", what, maxsplit=1)[0]
            progress.note(f"{_plural(self.seen, 'package')} so far, last {self.last}")
        elif text.startswith("Downloading "):
            size = re.search(r"\(([^)]+)\)\s*$", text)
            progress.note(
                f"{_plural(self.seen, 'package')} so far, downloading {self.last}"
                + (f" ({size[1]})" if size else "")
            )
        elif text.startswith(("Building wheels for collected packages", "Building editable for")):
            if progress.title == self.first:
                progress.finish(_plural(self.seen, "package"))
                progress.start("building the kit's editable install")
        elif text.startswith("Installing collected packages: "):
            names = text.split(": ", 1)[1].split(", ")
            progress.finish()
            progress.start(f"installing {_plural(len(names), 'package')}")
        elif text.startswith("Successfully installed "):
            progress.finish(f"{len(text.split()) - 2} installed")


def _uv_env() -> dict[str, str]:
    env = _plain_environ()
    env["NO_COLOR"] = "1"
    # pip's settings are the usual way a campus mirror or proxy is configured; uv reads its
    # own, so the two that matter are passed on when uv has none.
    if env.get("PIP_INDEX_URL") and not (env.get("UV_INDEX_URL") or env.get("UV_DEFAULT_INDEX")):
        env["UV_DEFAULT_INDEX"] = env["PIP_INDEX_URL"]
    if env.get("PIP_CERT") and not env.get("SSL_CERT_FILE"):  # a campus proxy's certificate
        env["SSL_CERT_FILE"] = env["PIP_CERT"]
    return env


def _pip_env() -> dict[str, str]:
    env = _plain_environ()
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PIP_PROGRESS_BAR="off")
    env.update(PIP_ROOT_USER_ACTION="ignore", NO_COLOR="1")
    return env


def _plain_environ() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)  # uv would otherwise prefer an activated environment
    return env


# --- what is installed: the stamp ---------------------------------------------------------


def _pyproject_digest(root: Path = ROOT) -> str:
    return hashlib.sha256((root / "pyproject.toml").read_bytes()).hexdigest()


def _python_version() -> str:
    return ".".join(map(str, sys.version_info[:3]))


def read_stamp(path: Path = STAMP) -> dict | None:
    """The recorded installation, or None when there is none (or one this kit cannot read)."""
    try:
        stamp = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(stamp, dict) or not {"pyproject", "python", "extras"} <= stamp.keys():
        return None
    stamp["extras"] = sorted(stamp["extras"])
    return stamp


def _write_json(path: Path, data: dict) -> None:
    scratch = path.with_name(path.name + ".tmp")
    scratch.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(scratch, path)


def plan(stamp, wanted, *, pyproject, python, venv_ok, pending):
    """What to do to have the ``wanted`` extras installed; pure, for the tests.

    Returns ``(action, extras)``:

    - ``("ready", extras)``: nothing to do;
    - ``("add", missing)``: install only the requirements of the missing extras;
    - ``("install", extras)``: (re)install the kit with these extras in the existing .venv
      (pyproject.toml changed, or the environment has no stamp this kit wrote);
    - ``("create", extras)``: build .venv from scratch (none yet, a broken one, another
      Python version, or an installation that was interrupted or failed).

    What was installed before stays installed: a reinstall keeps the extras of the stamp.
    """
    wanted = frozenset(wanted)
    before = frozenset(stamp["extras"]) if stamp else frozenset()
    if not venv_ok or pending is not None or (stamp and stamp["python"] != python):
        return "create", wanted | before | frozenset((pending or {}).get("extras", ()))
    if stamp is None:
        return "install", wanted
    if stamp["pyproject"] != pyproject:
        return "install", wanted | before
    if wanted <= before:
        return "ready", before
    return "add", wanted - before


# --- uv: found, or fetched from PyPI -----------------------------------------------------


def _uv_version(uv: str | Path) -> str | None:
    try:
        out = subprocess.run(
            [str(uv), "--version"],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.startswith("uv ") else None


def _bootstrapped_uv(home: Path = UV_HOME) -> Path | None:
    for folder, name in (("bin", "uv"), ("Scripts", "uv.exe"), ("bin", "uv.exe")):
        if (home / folder / name).is_file():
            return home / folder / name
    return None


def find_uv(progress: Progress) -> tuple[str, str] | None:
    """``(path, version)`` of a working uv, fetching it when needed; None means use pip."""
    choice = os.environ.get("DECOMPKIT_UV", "").strip()
    if choice.lower() in {"0", "off", "no", "none", "false", "pip"}:
        _say("DECOMPKIT_UV says not to use uv: installing with pip")
        return None
    candidates = [choice] if choice else []
    candidates += [shutil.which("uv") or "", str(_bootstrapped_uv() or "")]
    for candidate in filter(None, candidates):
        version = _uv_version(candidate)
        if version:
            return candidate, version
        if candidate == choice:
            _say(f"DECOMPKIT_UV={choice} does not run as uv; looking for another")
    return fetch_uv(progress)


def fetch_uv(progress: Progress, home: Path = UV_HOME) -> tuple[str, str] | None:
    """Install uv from PyPI into ``home`` with pip; None (after one line saying why) if not.

    pip writes into a scratch folder that replaces ``home`` only once complete, so an
    interrupted fetch leaves nothing half-made behind. Only a binary wheel is accepted:
    where uv has none, building it from source is no shortcut. A Python without pip of
    its own borrows one from a scratch venv.
    """
    home.parent.mkdir(parents=True, exist_ok=True)
    for stale in home.parent.glob("fetch-*"):  # left by a run that was killed outright
        shutil.rmtree(stale, ignore_errors=True)
    scratch = Path(tempfile.mkdtemp(prefix="fetch-", dir=home.parent))
    shown = home.relative_to(ROOT) if home.is_relative_to(ROOT) else home
    try:
        progress.start(f"fetching uv from PyPI into {shown}")
        pip = [sys.executable, "-m", "pip"]
        if not _runs([sys.executable, "-c", "import pip"]):
            progress.note("making a scratch venv for pip")
            run_step(
                [sys.executable, "-m", "venv", scratch / "venv"], progress, _ignore, env=_pip_env()
            )
            pip = [scratch / "venv" / BIN.name / PYTHON.name, "-m", "pip"]
        run_step(
            [
                *pip,
                "install",
                "--target",
                scratch / "uv",
                "--only-binary=:all:",
                "--timeout",
                "20",
                "--retries",
                "1",
                "uv",
            ],
            progress,
            _bootstrap_note,
            env=_pip_env(),
        )
        uv = _bootstrapped_uv(scratch / "uv")
        if not (uv and _uv_version(uv)):
            raise StepFailed(["uv"], 1, ["the uv fetched from PyPI does not run here"])
        if home.exists():
            shutil.rmtree(home)
        os.replace(scratch / "uv", home)
        uv = _bootstrapped_uv(home)
        version = _uv_version(uv)
        progress.finish(version)
        return str(uv), version
    except (StepFailed, OSError) as error:
        progress.abandon("failed")
        reason = error.reason() if isinstance(error, StepFailed) else str(error)
        _say(f"could not fetch uv ({reason}); installing with pip instead, which is slower")
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _bootstrap_note(line: str, progress: Progress) -> None:
    text = line.strip()
    if text.startswith("Downloading "):
        size = re.search(r"\(([^)]+)\)\s*$", text)
        progress.note(f"downloading {size[1]}" if size else "downloading")
    elif text.startswith("Installing collected packages"):
        progress.note("unpacking")


# --- the environment ----------------------------------------------------------------------


def _venv_ok() -> bool:
    return PYTHON.exists() and (VENV / "pyvenv.cfg").is_file()


def _target(extras) -> str:
    return f"{ROOT}[{','.join(sorted(extras))}]" if extras else str(ROOT)


def _extra_requirements(extras) -> list[str]:
    """The requirements that only ``extras`` add, read from the installed kit's metadata
    (with pip's copy of ``packaging`` when the environment has none of its own)."""
    script = (
        "import importlib.metadata as m, sys\n"
        "try:\n    from packaging.requirements import Requirement\n"
        "except ImportError:\n    from pip._vendor.packaging.requirements import Requirement\n"
        f"for line in m.requires({PROJECT!r}) or ():\n"
        "    r = Requirement(line)\n"
        "    if r.marker is not None and not r.marker.evaluate({'extra': ''}) and any(\n"
        "            r.marker.evaluate({'extra': e}) for e in sys.argv[1:]):\n"
        "        r.marker = None\n"
        "        print(r)\n"
    )
    out = subprocess.run(
        [str(PYTHON), "-c", script, *sorted(extras)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=_plain_environ(),
    )
    if out.returncode != 0:
        raise StepFailed([str(PYTHON)], out.returncode, out.stderr.splitlines()[-5:])
    return out.stdout.split()


def _create(installer: str, uv, progress: Progress) -> None:
    """A new, empty .venv (whatever was there is removed): uv's takes a fraction of a
    second, ``python -m venv`` a few (it installs pip, which the pip route needs)."""
    if VENV.is_symlink() or VENV.is_file():
        VENV.unlink()
    elif VENV.exists():
        shutil.rmtree(VENV)
    progress.start(f"creating the environment {VENV.name} (Python {_python_version()})")
    if installer == "uv":
        command, env = [uv[0], "venv", "--quiet", "--python", sys.executable, VENV], _uv_env()
    else:
        command, env = [sys.executable, "-m", "venv", VENV], _pip_env()
    run_step(command, progress, _ignore, env=env)
    progress.finish()


def _ignore(line: str, progress: Progress) -> None:
    """For a step whose output only matters when it fails."""


def _install(installer: str, uv, action: str, extras, progress: Progress) -> None:
    """Install the kit with ``extras``, or (``action == "add"``) only what those extras add.

    Adding an extra leaves the kit's own editable install alone: uv reads the extra's
    requirements from pyproject.toml, pip gets them from the installed kit's metadata.
    """
    if installer == "uv":
        if action == "add":
            what = [
                "-r",
                ROOT / "pyproject.toml",
                *(f"--extra={extra}" for extra in sorted(extras)),
            ]
        else:
            what = ["-e", _target(extras)]
        progress.start("resolving the dependencies")
        run_step(
            [uv[0], "pip", "install", "--python", PYTHON, *what],
            progress,
            UvOutput(),
            env=_uv_env(),
        )
    else:
        if not _runs([PYTHON, "-c", "import pip"]):  # an environment made by uv has no pip
            progress.start("adding pip to the environment")
            run_step(
                [PYTHON, "-m", "ensurepip", "--default-pip"], progress, _ignore, env=_pip_env()
            )
            progress.finish()
        what = _extra_requirements(extras) if action == "add" else ["-e", _target(extras)]
        if what:
            progress.start("resolving and downloading")
            run_step([PYTHON, "-m", "pip", "install", *what], progress, PipOutput(), env=_pip_env())
    progress.finish()


def _runs(command) -> bool:
    try:
        return (
            subprocess.run(
                [str(part) for part in command],
                capture_output=True,
                stdin=subprocess.DEVNULL,
                env=_plain_environ(),
            ).returncode
            == 0
        )
    except OSError:
        return False


def ensure_environment(wanted=frozenset(), *, progress: Progress | None = None) -> None:
    """Make .venv hold the kit with the ``wanted`` extras; do nothing when it already does.

    The stamp is written only after a complete installation. While one runs, a pending
    marker says so: a run that finds it (after Ctrl-C, a crash, a failed download) starts
    from a new .venv, since a half-installed package cannot be told from a whole one.
    """
    progress = progress or Progress()
    stamp, pending, venv_ok = read_stamp(), read_pending(), _venv_ok()
    action, extras = plan(
        stamp,
        wanted,
        pyproject=_pyproject_digest(),
        python=_python_version(),
        venv_ok=venv_ok,
        pending=pending,
    )
    if action == "ready":
        return
    started = time.monotonic()
    _announce(action, extras, stamp, pending, venv_ok)
    # Everything the environment holds once this run is through.
    total = frozenset(extras) | (frozenset(stamp["extras"]) if action == "add" else set())
    uv = find_uv(progress)
    for installer in ("uv", "pip") if uv else ("pip",):
        try:
            if action == "create":
                _create(installer, uv, progress)
            _write_json(PENDING, {"extras": sorted(total)})
            _install(installer, uv, action, extras, progress)
            break
        except StepFailed as failure:
            if installer == "pip":
                _say("the installation failed; the last lines of its output:")
                for line in failure.tail[-25:]:
                    print(f"    {line}", flush=True)
                _say("run the same command again once that is fixed; it starts over cleanly")
                raise SystemExit(1) from None
            _say(f"uv could not finish ({failure.reason()}); starting over with pip")
            action, extras = "create", total
    _write_json(
        STAMP,
        {
            "pyproject": _pyproject_digest(),
            "python": _python_version(),
            "extras": sorted(total),
            "installer": uv[1] if installer == "uv" else "pip",
        },
    )
    PENDING.unlink(missing_ok=True)
    _say(f"{VENV.name} is ready ({time.monotonic() - started:.1f} s in all)")


def read_pending(path: Path = PENDING) -> dict | None:
    """The pending marker: None when absent, else the extras it was installing."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        data = {}
    return data if isinstance(data, dict) else {}


def _announce(action: str, extras, stamp, pending, venv_ok: bool) -> None:
    tools = "with the test tools" if DEV in extras else "with what the lab needs"
    if action == "add":
        _say(f"adding the [{', '.join(sorted(extras))}] extra (test tools) to {VENV.name}")
    elif pending is not None:
        _say(f"the last set-up of {VENV.name} did not finish: building it again {tools}")
    elif stamp and stamp["python"] != _python_version():
        _say(
            f"Python changed ({stamp['python']} -> {_python_version()}): "
            f"building {VENV.name} again {tools}"
        )
    elif not venv_ok and (VENV.exists() or VENV.is_symlink()):
        _say(f"{VENV.name} is broken (its Python does not run): building it again {tools}")
    elif action == "create":
        _say(f"first run: setting up {VENV.name} {tools} (each step prints a line)")
    elif stamp is None:
        _say(f"{VENV.name} was not set up by this kit: installing the kit into it {tools}")
    else:
        _say(f"pyproject.toml changed: updating {VENV.name} {tools}")


def _environ() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the editable install is the one source of decompkit
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(VENV)
    return env


def _run(command: list[str]) -> int:
    return subprocess.run(command, cwd=ROOT, env=_environ()).returncode


def _replace_process(command: list[str], env: dict[str, str] | None = None) -> int:
    """Become ``command``, so that signals (Ctrl-C, a terminate) reach it directly."""
    env = env or _environ()
    if os.name != "posix":
        return subprocess.run(command, cwd=ROOT, env=env).returncode
    os.chdir(ROOT)
    os.execve(command[0], command, env)


# --- JupyterLab for students and for instructors ----------------------------------------


def write_student_config(folder: Path | None = None) -> Path:
    """The students' Jupyter configuration folder, put on JUPYTER_CONFIG_PATH at launch.

    It switches nbgrader's server extensions and lab plugins off. Nothing is uninstalled:
    only this launch reads the folder, and it is rewritten at every launch. The user's own
    Jupyter settings still apply on top. (Instructors get the course's own folder,
    ``INSTRUCTOR_CONFIG``.)
    """
    folder = folder or ROLES / "student"
    (folder / "labconfig").mkdir(parents=True, exist_ok=True)
    off = dict.fromkeys(NBGRADER_SERVER_EXTENSIONS, False)
    server = {"ServerApp": {"jpserver_extensions": off}}
    page = {"disabledExtensions": dict.fromkeys(NBGRADER_LAB_PLUGINS, True)}
    _write_json(folder / "jupyter_server_config.json", server)
    _write_json(folder / "labconfig" / "page_config.json", page)
    return folder


def lab_command(args: list[str], *, instructor: bool) -> tuple[list[str], dict[str, str]]:
    """The JupyterLab command line and environment for one launch (see :func:`lab`).

    Students are served notebooks/; instructors the course root, since nbgrader's
    formgrader works only on a course inside the server's root folder.
    """
    env = _environ()
    if instructor:
        # The course's own instructor folder: formgrader on, the exchange's student side off,
        # and the course's exchange/ folder as nbgrader's exchange (nothing is sent through it).
        folders = [INSTRUCTOR_CONFIG]
        (ROOT / "exchange").mkdir(exist_ok=True)
    else:
        folders = [write_student_config()]
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
        filter(None, [*map(str, folders), env.get("JUPYTER_CONFIG_PATH", "")])
    )
    root = ROOT if instructor else ROOT / "notebooks"
    command = [
        str(PYTHON),
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={root}",
        # the kit's settings: explorers' widget state saved with the notebook, so a reopened
        # notebook still shows each explorer's last picture
        f"--LabApp.app_settings_dir={LAB_SETTINGS}",
        f"--JupyterNotebookApp.app_settings_dir={LAB_SETTINGS}",
    ]
    if env.get("PYTHONDONTWRITEBYTECODE"):
        # uv installs no bytecode (pip compiles at install time), and with this variable set
        # (as in many container images) every start would compile the server's modules from
        # source again: ~1.5 s a start here. The server alone writes its bytecode into .venv,
        # as pip would have; its kernels inherit the variable and keep it.
        command[1:3] = [
            "-c",
            "import sys; sys.dont_write_bytecode = False; "
            "from jupyterlab.labapp import main; sys.exit(main())",
        ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers, Binder-like images and CI run as root
    return [*command, *args], env


def lab(args: list[str]) -> int:
    """Serve JupyterLab: notebooks/ for students, the course root with ``--instructor``.

    Students get JupyterLab without nbgrader's menu, panels, formgrader and Validate
    button; ``--instructor`` switches them on for that launch. Opening notebooks only reads
    them: nothing here regenerates or overwrites one.
    """
    instructor = "--instructor" in args
    args = [arg for arg in args if arg != "--instructor"]
    command, env = lab_command(args, instructor=instructor)
    if instructor:
        role = "instructor view: the course root, with nbgrader's formgrader and menus"
    else:
        role = "student view; `python3 kit.py lab --instructor` has nbgrader's instructor tools"
    _say(f"starting JupyterLab ({role})")
    _report_when_ready(os.getpid(), time.monotonic(), env)
    return _replace_process(command, env)


def _runtime_dir(env: dict[str, str]) -> Path:
    """Where jupyter_core puts a server's jpserver-<pid>.json (its rules, for this launch)."""
    if env.get("JUPYTER_RUNTIME_DIR"):
        return Path(env["JUPYTER_RUNTIME_DIR"])
    if env.get("JUPYTER_DATA_DIR"):
        return Path(env["JUPYTER_DATA_DIR"]) / "runtime"
    home = Path.home().resolve()
    if sys.platform == "darwin":
        data = (
            home
            / "Library"
            / (
                "Application Support/jupyter"
                if env.get("JUPYTER_PLATFORM_DIRS", "").lower() in {"1", "true", "yes", "on"}
                else "Jupyter"
            )
        )
    else:
        data = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share") / "jupyter"
    return data / "runtime"


def _report_when_ready(pid: int, started: float, env: dict[str, str]) -> None:
    """Print one line once the JupyterLab about to run as ``pid`` answers, with its start time.

    A detached watcher (double fork, so nothing is left for JupyterLab to reap) waits for
    the server's info file, asks its /api/status, prints, and exits; it also exits when the
    server does, or after two minutes. Posix only; elsewhere JupyterLab's own log suffices.
    """
    if os.name != "posix" or not hasattr(os, "fork"):
        return
    try:
        child = os.fork()
    except OSError:
        return
    if child:
        os.waitpid(child, 0)
        return
    try:
        if os.fork():
            os._exit(0)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for JupyterLab
        info = _runtime_dir(env) / f"jpserver-{pid}.json"
        said = started
        while time.monotonic() - started < 120:
            try:
                os.kill(pid, 0)
            except OSError:
                break
            if time.monotonic() - said >= HEARTBEAT:  # its own log starts after its imports
                said = time.monotonic()
                _say(f"... still starting JupyterLab, {said - started:.0f} s")
            if _answers(info):
                _say(
                    f"JupyterLab answered after {time.monotonic() - started:.1f} s "
                    "(open the address it printed above; Ctrl-C stops it)"
                )
                break
            time.sleep(0.2)
    finally:
        os._exit(0)


def _answers(info: Path) -> bool:
    try:
        server = json.loads(info.read_text())
        url = server["url"].rstrip("/") + "/api/status"
    except (OSError, ValueError, KeyError, AttributeError):
        return False
    token = server.get("token", "")
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    try:
        urllib.request.urlopen(request, timeout=2).close()
    except urllib.error.HTTPError:
        return True  # it answered, only not to this request
    except (urllib.error.URLError, OSError):
        return False
    return True


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


def feedback(args: list[str]) -> int:
    """Write every graded student's feedback pages anew (see decompkit.course.feedback)."""
    return _course("feedback", args)


def export(args: list[str]) -> int:
    """Write the grades as a Canvas, Moodle or plain CSV (see decompkit.course.export)."""
    return _course("export", args)


def report(args: list[str]) -> int:
    """Write the class report from the grading records (see decompkit.course.report)."""
    return _course("report", args)


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
    "feedback": feedback,
    "export": export,
    "report": report,
    "nbgrader": nbgrader,
}

# The extras each command needs installed; the others need the kit's own dependencies only.
EXTRAS = {"test": frozenset({DEV})}


def set_up(extras=frozenset()) -> int:
    """:func:`ensure_environment`, with Ctrl-C turned into one line and exit status 130."""
    try:
        ensure_environment(extras)
    except KeyboardInterrupt:
        print(flush=True)
        _say(f"interrupted: {VENV.name} is incomplete; the next run sets it up again")
        return 130
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    status = set_up(EXTRAS.get(argv[0], frozenset()))
    if status:
        return status
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
