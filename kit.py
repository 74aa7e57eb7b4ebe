#!/usr/bin/env python3
"""Set up decompkit in .venv from its lock file, then open it or test it.

    python3 kit.py lab      JupyterLab on notebooks/ as a student sees it (extra arguments go
                            to jupyter lab); --instructor: on the course root with nbgrader's
                            instructor tools (formgrader, Create Assignment, Nbgrader menu)
    python3 kit.py test     the whole test suite, as CI runs it (extra arguments go to pytest);
                            --fast: the unit tier, a couple of minutes (tests/run.py)
    python3 kit.py bench    the benchmarks in bench/ (extra arguments go to each script)
    python3 kit.py page [--student ID] [--out DIR]  the explorers as a static page, no Python
    python3 kit.py release  regenerate notebooks/ from solutions/ with nbgrader (never
                            overwrites a notebook edited since the last release)
    python3 kit.py check NOTEBOOK...   run notebooks, report every check, exit 1 if any is off
    python3 kit.py collect [ASSIGNMENT]  file downloaded/<a>/archive/ into submitted/<id>/<a>/
    python3 kit.py grade [--workers N]  autograde submitted/ into gradebook.db (students whose
                            submission, solutions or kit changed; --force: everyone)
    python3 kit.py key ID... [--csv FILE]  a student's numbers and answers; the class's key
    python3 kit.py feedback [--student ID]  feedback/<student>/decomp/*.html of students whose
                            grades changed (--all: every page)
    python3 kit.py export --to canvas|moodle|csv [--roster CSV]  exports/decomp-<format>.csv
    python3 kit.py report   reports/decomp/report.html (+ CSVs): what the class got wrong
    python3 kit.py nbgrader ARGS...    any nbgrader command inside the kit's environment
    python3 kit.py lock [ARGS...]      `uv lock ARGS` after a change of dependencies in
                            pyproject.toml, then requirements/*.txt exported from uv.lock

.venv holds the versions in uv.lock, installed by `uv sync --frozen`: the kit's dependencies
for `lab` and the course commands, with the test tools (the [dev] extra) for `test` and
`bench`. uv comes from DECOMPKIT_UV=/path/to/uv or PATH, else from PyPI into .venv-tools/;
without it pip installs the same versions from requirements/ (DECOMPKIT_UV=off: always pip).
Standard library only, so that a bare ``python3`` is enough.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NEEDED_PYTHON = (3, 11)  # nbgrader 0.9.6 needs 3.11, as pyproject.toml's requires-python says
UV_VERSION = "0.13.9"  # the uv that wrote uv.lock; a uv on PATH must be as new
ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".decompkit-installed"  # what is installed; written once that is complete
UV_HOME = ROOT / ".venv-tools" / "uv"  # uv, when it had to be fetched from PyPI
ROLES = ("student", "instructor")
DEV = "dev"  # the extra with the test and developer tools
#: What pip installs when uv cannot be had: uv.lock's versions, exported by `kit.py lock`.
REQUIREMENTS = {(): "requirements/lab.txt", (DEV,): "requirements/dev.txt"}

#: The Jupyter configuration folders of the two views, first on JUPYTER_CONFIG_PATH at launch
#: (each has a README.md): a student sees none of nbgrader's server extensions or lab plugins
#: (the notebooks are in the file browser, each answer is checked in the next cell), which
#: also spares their imports at every start; an instructor gets formgrader and its menus.
CONFIG = {role: ROOT / "src" / "decompkit" / "course" / "static" / role for role in ROLES}
#: JupyterLab and Notebook 7 settings of the kit (overrides.json).
LAB_SETTINGS = ROOT / "jupyter" / "settings"


def say(message: str) -> None:
    print(f"[kit] {message}", flush=True)


class SetupFailed(Exception):
    """The set-up cannot go on; the message is the one line shown."""


# --- what .venv must hold, and the commands that install it ----------------------------------


def wanted_state(extras, root: Path = ROOT) -> dict:
    """What .venv must match: uv.lock, pyproject.toml (the kit's own install), this Python."""
    files = {"lock": "uv.lock", "pyproject": "pyproject.toml"}
    state = {
        key: hashlib.sha256((root / name).read_bytes()).hexdigest() for key, name in files.items()
    }
    return dict(state, python=".".join(map(str, sys.version_info[:3])), extras=sorted(extras))


def read_stamp(path: Path = STAMP) -> dict | None:
    """The recorded installation, or None when there is none this kit can read."""
    try:
        stamp = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    keys = {"lock", "pyproject", "python", "extras"}
    return stamp if isinstance(stamp, dict) and keys <= stamp.keys() else None


def plan(stamp: dict | None, wanted: dict, *, fresh: bool) -> tuple[list[str], str] | None:
    """``(extras, why)`` to install, or None when .venv holds ``wanted`` already (``fresh``:
    there is no .venv). The extras installed before stay: `lab` after `test` keeps the test
    tools, and a new lock updates them too."""
    if stamp is None:
        why = "first run" if fresh else "it has no record of a complete set-up"
        return wanted["extras"], f"setting up .venv from uv.lock ({why})"
    extras = sorted(set(wanted["extras"]) | set(stamp["extras"]))
    names = {"python": "the Python", "lock": "uv.lock", "pyproject": "pyproject.toml"}
    changed = [name for key, name in names.items() if stamp[key] != wanted[key]]
    if changed:
        why = f"{' and '.join(changed)} changed: bringing .venv up to date"
        hint = " (changed dependencies? `python3 kit.py lock` first updates uv.lock)"
        return extras, why + (hint if "pyproject.toml" in changed else "")
    if extras != sorted(stamp["extras"]):
        return extras, "adding the test tools (the [dev] extra) to .venv"
    return None


def uv_sync_command(uv: str, extras) -> list[str]:
    """uv.lock's versions into .venv; ``--inexact`` keeps whatever else is there (what a
    student added with ``%pip install``). With the test tools, the bytecode is compiled
    too (as pip does): ~15 s once, then every test process and kernel is spared compiling
    its imports, each time where PYTHONDONTWRITEBYTECODE is set (CI, many containers)."""
    command = [uv, "sync", "--frozen", "--inexact", "--python", sys.executable]
    command += ["--compile-bytecode"] if DEV in extras else []
    return command + [f"--extra={extra}" for extra in extras]


def pip_commands(extras) -> list[list[str]]:
    """The same versions with pip: the exported requirements, then the kit itself, editable
    (the tests import decompkit from the checkout) and without dependencies."""
    pip = [str(PYTHON), "-m", "pip", "install"]
    return [[*pip, "-r", REQUIREMENTS[tuple(extras)]], [*pip, "--no-deps", "-e", "."]]


def export_command(uv: str, extras, path: str) -> list[str]:
    """``uv export`` of a requirements file (``path`` relative: the file's header shows it;
    ``--quiet``: not echoed on the screen as well)."""
    extra = [arg for name in extras for arg in ("--extra", name)]
    options = ["--frozen", "--no-hashes", "--no-emit-project", "--quiet", *extra]
    return [uv, "export", *options, "-o", path]


# --- uv: found, or fetched from PyPI -------------------------------------------------------


def _installer_environ() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["UV_PROJECT_ENVIRONMENT"] = str(VENV)  # whatever the user's settings name
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PIP_ROOT_USER_ACTION="ignore")
    return env


def uv_version(uv) -> tuple[int, ...] | None:
    """``(0, 13, 9)`` for a uv that runs, else None."""
    try:
        out = subprocess.run([str(uv), "--version"], capture_output=True, text=True, timeout=30)
        return tuple(int(part) for part in out.stdout.split()[1].split("."))
    except (OSError, subprocess.SubprocessError, IndexError, ValueError):
        return None


def _fetched_uv(home: Path | None = None) -> Path | None:
    home = home or UV_HOME
    found = [home / name for name in ("bin/uv", "Scripts/uv.exe") if (home / name).is_file()]
    return found[0] if found else None


def find_uv() -> str | None:
    """A uv as new as UV_VERSION (DECOMPKIT_UV, PATH, .venv-tools/, else fetched), or None
    after one line saying why, when pip is to do the work."""
    choice = os.environ.get("DECOMPKIT_UV", "").strip()
    if choice.lower() in {"0", "off", "no", "none", "false", "pip"}:
        say("DECOMPKIT_UV says not to use uv: installing with pip")
        return None
    needed = tuple(int(part) for part in UV_VERSION.split("."))
    for candidate in filter(None, [choice, shutil.which("uv"), _fetched_uv()]):
        version = uv_version(candidate)
        if version and version >= needed:
            return str(candidate)
        say(f"{candidate} {'is older than uv ' + UV_VERSION if version else 'does not run'}")
    return fetch_uv()


def fetch_uv(home: Path = UV_HOME) -> str | None:
    """``pip install --target .venv-tools/uv uv==UV_VERSION``, a binary wheel of ~20 MB,
    into a scratch folder that replaces ``home`` once complete. A Python without pip
    borrows one from a scratch venv."""
    started = time.monotonic()
    say(f"fetching uv {UV_VERSION} from PyPI into {home.relative_to(ROOT)} (once per clone)")
    home.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="fetch-", dir=home.parent))
    try:
        pip = [sys.executable, "-m", "pip"]
        if subprocess.run([*pip, "--version"], capture_output=True).returncode:
            subprocess.run([sys.executable, "-m", "venv", scratch / "venv"], check=True)
            pip = [scratch / "venv" / BIN.name / PYTHON.name, "-m", "pip"]
        options = ["-q", "--only-binary=:all:", "--timeout=20", "--retries=1", "--target"]
        command = [*pip, "install", *options, scratch / "uv", f"uv=={UV_VERSION}"]
        subprocess.run(command, env=_installer_environ(), check=True)
        if not uv_version(_fetched_uv(scratch / "uv") or "uv-missing"):
            raise OSError("the uv from PyPI does not run here")
        shutil.rmtree(home, ignore_errors=True)
        os.replace(scratch / "uv", home)
    except (subprocess.CalledProcessError, OSError) as error:
        why = error if isinstance(error, OSError) else "PyPI out of reach?"
        say(f"could not fetch uv ({why}); installing with pip instead, which is slower")
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    say(f"uv {UV_VERSION} fetched ({time.monotonic() - started:.1f} s)")
    return str(_fetched_uv(home))


# --- the environment ------------------------------------------------------------------------


def _runs(python: Path) -> bool:
    try:
        return subprocess.run([str(python), "-c", ""], capture_output=True).returncode == 0
    except OSError:
        return False


def _pip_install(extras, env: dict[str, str]) -> None:
    """pip's route: ``python3 -m venv .venv`` (which keeps what is there, and adds pip to a
    venv uv made), then :func:`pip_commands`; pip shows its own progress."""
    say(f"running {Path(sys.executable).name} -m venv .venv")
    if subprocess.run([sys.executable, "-m", "venv", VENV], env=env).returncode:
        hint = "on Debian or Ubuntu `sudo apt install python3-venv`, then the same command again"
        raise SetupFailed(f"Python could not make .venv ({hint})")
    for command in pip_commands(extras):
        say("running pip " + " ".join(command[3:]))
        if subprocess.run(command, cwd=ROOT, env=env).returncode:
            hint = "check that PyPI can be reached, then run the same command again"
            raise SetupFailed(f"pip could not install the packages either (see above): {hint}")


def ensure_environment(extras=()) -> None:
    """Bring .venv to uv.lock with ``extras`` and those installed before; nothing to do when
    it is there already. uv and pip show their own progress, kit.py one line a step."""
    wanted, runs = wanted_state(extras), _runs(PYTHON)
    stamp = read_stamp() if runs else None
    todo = plan(stamp, wanted, fresh=not VENV.exists())
    if todo is None:
        return
    (extras, why), started = todo, time.monotonic()
    say(why)
    STAMP.unlink(missing_ok=True)  # until the end: an interrupted set-up is done again
    if not runs or (stamp and stamp["python"] != wanted["python"]):
        shutil.rmtree(VENV, ignore_errors=True)  # uv refuses a .venv whose Python is gone
    env, uv = _installer_environ(), find_uv()
    installer = "pip"
    if uv:
        command = uv_sync_command(uv, extras)
        say("running uv " + " ".join(command[1:]))
        if subprocess.run(command, cwd=ROOT, env=env).returncode == 0:
            installer = "uv " + ".".join(map(str, uv_version(uv)))
        else:
            say("uv could not install (see above): trying pip with the same pinned versions")
    if installer == "pip":
        _pip_install(extras, env)
    STAMP.write_text(json.dumps(dict(wanted_state(extras), installer=installer), indent=1))
    say(f".venv holds the versions in uv.lock ({time.monotonic() - started:.1f} s in all)")


def set_up(extras=()) -> int:
    """:func:`ensure_environment`, with a failure or Ctrl-C as one line and a status."""
    try:
        ensure_environment(extras)
    except SetupFailed as failure:
        say(str(failure))
        return 1
    except KeyboardInterrupt:
        print(flush=True)
        say("interrupted: .venv is incomplete; the next run sets it up again")
        return 130
    return 0


def _environ(*, bytecode: bool = False) -> dict[str, str]:
    """A .venv process's environment; ``bytecode`` overrides PYTHONDONTWRITEBYTECODE (many
    images set it): the lab's or the suite's processes would each compile their imports."""
    env = dict(os.environ)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)  # the editable install is the one source of decompkit
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(VENV)
    return env


def run_command(command: list[str]) -> int:
    """``command`` to its end. Ctrl-C in the terminal reaches the child as well, which stops
    in its own way (the grader finishes the student it holds, pytest stops its servers);
    this process waits for that instead of killing the child a moment later. A SIGTERM to
    this process is passed on, and on Linux the child gets one if this process dies."""
    linux = sys.platform.startswith("linux")
    setup = functools.partial(_die_with, os.getpid()) if linux else None
    # While the child runs, Ctrl-C only wakes this process, never raises in it: an exception
    # inside Popen.wait could leave its lock held, and a second wait would hang. exec gives
    # the child the default action back; an ignored SIGINT (a background job) stays ignored.
    before = signal.getsignal(signal.SIGINT)
    ours = before not in (signal.SIG_IGN, None)  # None: a handler Python cannot set back
    if ours:
        signal.signal(signal.SIGINT, _child_stops_itself)
    try:
        process = subprocess.Popen(command, cwd=ROOT, env=_environ(), preexec_fn=setup)
        if os.name == "posix":
            signal.signal(signal.SIGTERM, lambda *_: process.send_signal(signal.SIGTERM))
        return process.wait()
    finally:
        if ours:
            signal.signal(signal.SIGINT, before)


def _child_stops_itself(*_) -> None:
    """SIGINT while a child runs: the child got it too and decides how to stop."""


def _die_with(parent: int) -> None:
    """In the child, before it runs: a SIGTERM when ``parent`` dies (PR_SET_PDEATHSIG)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os.kill(os.getpid(), signal.SIGTERM)


def _replace_process(command: list[str], env: dict[str, str] | None = None) -> int:
    """Become ``command``, so that signals (Ctrl-C, a terminate) reach it directly."""
    env = env or _environ()
    if os.name != "posix":
        return subprocess.run(command, cwd=ROOT, env=env).returncode
    os.chdir(ROOT)
    os.execve(command[0], command, env)


# --- JupyterLab for students and for instructors ----------------------------------------


def lab_command(args: list[str], *, instructor: bool) -> tuple[list[str], dict[str, str]]:
    """The JupyterLab command line and environment for one launch: notebooks/ for students,
    the course root for instructors (nbgrader's formgrader needs the course inside it)."""
    env = _environ(bytecode=True)
    if instructor:
        (ROOT / "exchange").mkdir(exist_ok=True)  # the course's exchange: nothing goes through it
    folder = str(CONFIG["instructor" if instructor else "student"])
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
        filter(None, [folder, env.get("JUPYTER_CONFIG_PATH")])
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
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers, Binder-like images and CI run as root
    return [*command, *args], env


def lab(args: list[str]) -> int:
    """JupyterLab on notebooks/ without nbgrader's tools, or with ``--instructor`` on the
    course root with them. Opening a notebook only reads it: none is regenerated here."""
    instructor = "--instructor" in args
    args = [arg for arg in args if arg != "--instructor"]
    command, env = lab_command(args, instructor=instructor)
    if instructor:
        role = "instructor view: the course root, with nbgrader's formgrader and menus"
    else:
        role = "student view; `python3 kit.py lab --instructor` has nbgrader's instructor tools"
    say(f"starting JupyterLab ({role}); it prints the address to open when it is ready")
    return _replace_process(command, env)


def test(args: list[str]) -> int:
    """The suite as tests/run.py runs it (the whole suite as CI does, ``--fast``, or pytest
    with the arguments given)."""
    command = [str(PYTHON), str(ROOT / "tests" / "run.py"), *args]
    return _replace_process(command, _environ(bytecode=True))


def bench(args: list[str]) -> int:
    status = 0
    for script in sorted((ROOT / "bench").glob("bench_*.py")):
        say(f"running {script.relative_to(ROOT)}")
        status |= run_command([str(PYTHON), str(script), *args])
    return status


def lock(args: list[str]) -> int:
    """``uv lock ARGS`` (``--upgrade-package numpy``, ...), then requirements/ exported."""
    uv = find_uv()
    if uv is None:
        say("`kit.py lock` needs uv: PyPI within reach, or DECOMPKIT_UV=/path/to/uv")
        return 1
    commands = [[uv, "lock", *args]]
    commands += [export_command(uv, extras, path) for extras, path in REQUIREMENTS.items()]
    for command in commands:
        say("running uv " + " ".join(command[1:]))
        if subprocess.run(command, cwd=ROOT, env=_installer_environ()).returncode:
            return 1
    return 0


COURSE_COMMANDS = ("release", "check", "collect", "grade", "key", "feedback", "export", "report")
COMMANDS = {"lab": lab, "test": test, "bench": bench, "lock": lock}
#: nbgrader itself, and the course commands (decompkit.course), in the kit's environment
COMMANDS["nbgrader"] = lambda args: run_command([str(PYTHON), "-m", "nbgrader", *args])
COMMANDS["page"] = lambda args: run_command([str(PYTHON), "-m", "decompkit.page", *args])
for _name in COURSE_COMMANDS:
    COMMANDS[_name] = functools.partial(
        lambda name, args: run_command([str(PYTHON), "-m", "decompkit.course", name, *args]), _name
    )
#: The extras a command needs besides the kit's own dependencies.
EXTRAS = {"test": (DEV,), "bench": (DEV,)}


def main(argv: list[str]) -> int:
    if sys.version_info < NEEDED_PYTHON:
        this = ".".join(map(str, sys.version_info[:3]))
        advice = "install a newer Python and run the same command with it"
        say(f"decompkit needs Python 3.11 or newer, this is {this}: {advice}")
        return 1
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    if argv[0] != "lock":  # locking needs uv only, not the environment
        status = set_up(EXTRAS.get(argv[0], ()))
        if status:
            return status
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
