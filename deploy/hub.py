#!/usr/bin/env python3
"""Run the decompkit course on JupyterHub on this machine: set-up and a dry run.

    sudo python3 deploy/hub.py dry-run [--port 8000] [--students 3]
        Installs what is missing (the hub's environment, the proxy), creates the instructor
        and a few student Unix users, the nbgrader exchange and the instructor's course
        folder, then starts the hub on http://127.0.0.1:PORT and prints the logins.
        Ctrl-C stops the hub and every server it started; users and files stay.
    sudo python3 deploy/hub.py remove-users NAME...
        Deletes Unix users made for a dry run (with their home folders).

The hub runs as root and starts each user's server as that Unix user, so everything the
servers run must be readable by every user: the environment lives in PREFIX/venv (default
/opt/decompkit-hub), built from a world-readable Python with the kit installed as a
package (not in editable mode, so a repository under a private home still works). It is
rebuilt only when the kit's sources change. Only the standard library is used here; the
end-to-end test in tests/hub/ imports this file for the same steps.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tomllib

__all__ = [
    "HubLayout",
    "ensure_environment",
    "ensure_proxy",
    "ensure_user",
    "remove_user",
    "make_exchange",
    "make_course",
    "write_role_configs",
    "start_hub",
    "stop_hub",
    "free_port",
]

DEPLOY = Path(__file__).resolve().parent
REPO = DEPLOY.parent
CONFIG = DEPLOY / "jupyterhub_config.py"
PREFIX = Path(os.environ.get("DECOMPKIT_HUB_PREFIX", "/opt/decompkit-hub"))
COURSE_ID = "decomp"
# The files an instructor's course folder starts from (a copy; the repository is not shared).
COURSE_FILES = ["nbgrader_config.py", "solutions", "notebooks"]
PROXY_PACKAGE = "configurable-http-proxy"


def _say(message: str) -> None:
    print(f"[hub] {message}", flush=True)


# --- the environment the hub and every user's server run from ----------------------------


def _world_usable(path: Path) -> bool:
    """True when any user can reach and run ``path`` (every parent folder searchable)."""
    real = Path(os.path.realpath(path))
    if not real.exists() or not os.stat(real).st_mode & stat.S_IXOTH:
        return False
    return all(os.stat(parent).st_mode & stat.S_IXOTH for parent in real.parents)


def _base_python() -> str:
    """A Python >= 3.11 that other users can execute (the project's own may sit under a
    private /root, as pyenv installs do)."""
    candidates = [sys.executable, getattr(sys, "_base_executable", ""), "/usr/bin/python3"]
    candidates += [shutil.which(name) or "" for name in ("python3.12", "python3.11", "python3")]
    for candidate in filter(None, candidates):
        if not _world_usable(Path(candidate)):
            continue
        probe = [candidate, "-c", "import sys, venv; print(sys.version_info >= (3, 11))"]
        if subprocess.run(probe, capture_output=True, text=True).stdout.strip() == "True":
            return candidate
    raise RuntimeError("no Python >= 3.11 with the venv module that every user may run")


def _source_stamp() -> str:
    """A digest of everything that decides what gets installed (dependencies and sources)."""
    digest = hashlib.sha256()
    files = [REPO / "pyproject.toml", *sorted((REPO / "src").rglob("*.py"))]
    for path in files:
        digest.update(str(path.relative_to(REPO)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def lock_overrides() -> list[str]:
    """The requirements of pyproject.toml's ``[tool.uv] override-dependencies``: what the lock
    pins otherwise or leaves out (a marker that never holds), for the hub's environment too."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    return list(pyproject.get("tool", {}).get("uv", {}).get("override-dependencies", []))


def find_uv() -> str | None:
    """The uv to install with: ``DECOMPKIT_UV`` (``off``: none), ``uv`` on PATH, or the one
    ``kit.py`` fetched into ``.venv-tools/``; None when there is none."""
    chosen = os.environ.get("DECOMPKIT_UV")
    if chosen == "off":
        return None
    for candidate in (chosen, shutil.which("uv"), str(REPO / ".venv-tools" / "uv" / "bin" / "uv")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def installer(python: Path) -> list[str]:
    """How to install into the environment of ``python``: uv (seconds; files copied, never
    linked to uv's cache, since other users' servers run from them), else pip (minutes)."""
    uv = find_uv()
    if uv:
        return [uv, "pip", "install", "-q", "--link-mode", "copy", "--python", str(python)]
    return [str(python), "-m", "pip", "--disable-pip-version-check", "--no-input", "-q", "install"]


def ensure_environment(prefix: Path = PREFIX) -> Path:
    """Create or refresh ``prefix/venv`` with jupyterhub and the kit; return its bin folder.

    A first build takes seconds with uv and about a minute and a half with pip (measured: 84
    s with the package cache warm); later calls return at once unless pyproject.toml or src/
    changed, when only the kit itself is reinstalled (plus any new dependency).
    """
    venv = prefix / "venv"
    python = venv / "bin" / "python"
    stamp = venv / ".decompkit-stamp"
    wanted = _source_stamp()
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return venv / "bin"
    prefix.mkdir(parents=True, exist_ok=True)
    os.chmod(prefix, 0o755)
    if not python.exists():
        _say(f"creating the shared environment {venv} (takes a minute or two)")
        subprocess.run([_base_python(), "-m", "venv", str(venv)], check=True)
    install = installer(python)
    _say("installing decompkit and jupyterhub into the shared environment")
    # Built from a copy, so that the build leaves nothing behind in the repository.
    with tempfile.TemporaryDirectory(prefix="decompkit-build-") as scratch:
        source = Path(scratch) / "decompkit"
        source.mkdir()
        shutil.copy2(REPO / "pyproject.toml", source)
        shutil.copy2(REPO / "README.md", source)
        shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("*.egg-info"))
        # The kit's dependencies at the versions of its lock (requirements/lab.txt), and
        # with uv the lock's overrides (what it leaves out; pip has no such option).
        pins = ["-c", str(REPO / "requirements" / "lab.txt")]
        uv = install[1:2] == ["pip"]
        if uv:
            overrides = Path(scratch) / "overrides.txt"
            overrides.write_text("\n".join(lock_overrides()) + "\n")
            pins += ["--overrides", str(overrides)]
        subprocess.run([*install, *pins, str(source), "jupyterhub"], check=True)
        reinstall = ["--reinstall-package", "decompkit"] if uv else ["--force-reinstall"]
        subprocess.run([*install, "--no-deps", *reinstall, str(source)], check=True)
    subprocess.run(["chmod", "-R", "a+rX", str(venv)], check=True)
    stamp.write_text(wanted)
    return venv / "bin"


def ensure_proxy(prefix: Path = PREFIX) -> str:
    """The path of configurable-http-proxy; npm-installs it under ``prefix/node`` if absent."""
    found = shutil.which(PROXY_PACKAGE)
    if found:
        return found
    local = prefix / "node" / "node_modules" / ".bin" / PROXY_PACKAGE
    if not local.exists():
        if not shutil.which("npm"):
            raise RuntimeError("configurable-http-proxy is missing and npm is not installed")
        _say(f"installing {PROXY_PACKAGE} from npm into {prefix / 'node'}")
        subprocess.run(
            ["npm", "install", "--silent", "--prefix", str(prefix / "node"), PROXY_PACKAGE],
            check=True,
        )
    return str(local)


# --- Unix users, exchange, course folder ------------------------------------------------


def ensure_user(name: str) -> pwd.struct_passwd:
    """Create the Unix user ``name`` with a private home folder unless it exists."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", name], check=True)
        entry = pwd.getpwnam(name)
    # Students must not read each other's notebooks, nor the instructor's gradebook.
    os.chmod(entry.pw_dir, 0o700)
    return entry


def remove_user(name: str) -> None:
    """Delete the Unix user ``name``, its home and its processes (quietly if absent)."""
    try:
        pwd.getpwnam(name)
    except KeyError:
        return
    subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
    for _ in range(20):
        if subprocess.run(["userdel", "-r", name], capture_output=True).returncode in (0, 6):
            return
        time.sleep(0.25)  # a process of the user was still exiting
    subprocess.run(["userdel", "-r", "-f", name], capture_output=True)


def make_exchange(root: Path) -> Path:
    """nbgrader's exchange folder: owned by root, world-writable with the sticky bit."""
    root.mkdir(parents=True, exist_ok=True)
    os.chown(root, 0, 0)
    os.chmod(root, 0o1777)
    for parent in root.parents:  # every user must be able to reach it
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            raise RuntimeError(f"{parent} is not searchable by other users: move the exchange")
    return root


def make_course(instructor: str, repo: Path = REPO) -> Path:
    """Copy the course files into ``~instructor/course`` (kept when already there)."""
    entry = pwd.getpwnam(instructor)
    course = Path(entry.pw_dir) / "course"
    if not course.exists():
        course.mkdir()
        for name in COURSE_FILES:
            source = repo / name
            if source.is_dir():
                shutil.copytree(source, course / name)
            else:
                shutil.copy2(source, course / name)
        subprocess.run(["chown", "-R", f"{entry.pw_uid}:{entry.pw_gid}", str(course)], check=True)
    return course


def write_role_configs(
    config_root: Path, exchange: Path | None, course: Path, *, exchange_lines: str | None = None
) -> dict[str, Path]:
    """Jupyter configuration folders for the two roles (put on JUPYTER_CONFIG_PATH by the hub).

    Students see the assignment list only; the instructor also gets the formgrader, whose
    course is ``course`` (the course's own nbgrader_config.py is loaded first). nbgrader
    uses the filesystem exchange at ``exchange``, or whatever ``exchange_lines`` (lines of
    an nbgrader_config.py) configure instead.
    """
    folders = {}
    exchange_line = exchange_lines or f"c.Exchange.root = {str(exchange)!r}\n"
    for role in ("student", "instructor"):
        folder = config_root / role
        (folder / "labconfig").mkdir(parents=True, exist_ok=True)
        lines = ["c = get_config()  # noqa: F821\n"]
        if role == "instructor":
            lines.append(f"load_subconfig({str(course / 'nbgrader_config.py')!r})  # noqa: F821\n")
            lines.append(f"c.CourseDirectory.root = {str(course)!r}\n")
        lines += [f"c.CourseDirectory.course_id = {COURSE_ID!r}\n", exchange_line]
        (folder / "nbgrader_config.py").write_text("".join(lines))
        student = role == "student"
        server = {
            "nbgrader.server_extensions.formgrader": not student,
            "nbgrader.server_extensions.assignment_list": True,
            "nbgrader.server_extensions.course_list": not student,
            "nbgrader.server_extensions.validate_assignment": True,
        }
        (folder / "jupyter_server_config.json").write_text(
            json.dumps({"ServerApp": {"jpserver_extensions": server}}, indent=2)
        )
        hidden = ["formgrader", "create-assignment", "course-list"] if student else []
        page = {"disabledExtensions": {f"@jupyter/nbgrader:{name}": True for name in hidden}}
        (folder / "labconfig" / "page_config.json").write_text(json.dumps(page, indent=2))
        folders[role] = folder
    subprocess.run(["chmod", "-R", "a+rX", str(config_root)], check=True)
    return folders


# --- the hub process ---------------------------------------------------------------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class HubLayout:
    """Where one hub keeps its state, and the environment its configuration reads.

    ``root`` holds ``secret/`` (database, cookie secret; root only) and ``config/`` (the
    role folders, readable by all). The exchange may live elsewhere.
    """

    def __init__(self, root: Path, *, exchange: Path | None, instructor: str, students: list[str]):
        self.root = Path(root)
        self.exchange = Path(exchange) if exchange is not None else None
        self.instructor = instructor
        self.students = list(students)
        self.port = free_port()
        self.hub_port = free_port()
        self.proxy_api_port = free_port()
        self.password = secrets.token_urlsafe(9)
        self.admin_token = secrets.token_hex(32)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def environ(self, bindir: Path, proxy: str, course: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DECOMPKIT_")}
        env.pop("JUPYTERHUB_USER", None)
        env.pop("PYTHONPATH", None)
        env.update(
            PATH=f"{bindir}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}",
            DECOMPKIT_HUB_STATE=str(self.root / "secret"),
            DECOMPKIT_HUB_CONFIGS=str(self.root / "config"),
            DECOMPKIT_HUB_BIN=str(bindir),
            DECOMPKIT_HUB_PROXY=proxy,
            DECOMPKIT_HUB_PORT=str(self.port),
            DECOMPKIT_HUB_INTERNAL_PORT=str(self.hub_port),
            DECOMPKIT_HUB_PROXY_API_PORT=str(self.proxy_api_port),
            DECOMPKIT_HUB_INSTRUCTOR=self.instructor,
            DECOMPKIT_HUB_STUDENTS=",".join(self.students),
            DECOMPKIT_HUB_PASSWORD=self.password,
            DECOMPKIT_HUB_ADMIN_TOKEN=self.admin_token,
            DECOMPKIT_HUB_COURSE=str(course),
        )
        return env


def start_hub(
    layout: HubLayout,
    *,
    course: Path,
    log=None,
    config: Path = CONFIG,
    extra_env: dict[str, str] | None = None,
    exchange_lines: str | None = None,
) -> subprocess.Popen:
    """Install what is missing, write the role configurations and start the hub.

    Returns the hub process once its REST API answers (the proxy is its child). ``log`` is
    a file object for the hub's output (default: inherit this process's). ``config`` is the
    hub's configuration file, ``extra_env`` more DECOMPKIT_HUB_* settings it reads, and
    ``exchange_lines`` replace the filesystem exchange in the role configurations.
    """
    bindir = ensure_environment()
    proxy = ensure_proxy()
    (layout.root / "secret").mkdir(parents=True, exist_ok=True)
    os.chmod(layout.root, 0o755)
    os.chmod(layout.root / "secret", 0o700)
    write_role_configs(
        layout.root / "config", layout.exchange, course, exchange_lines=exchange_lines
    )
    env = {**layout.environ(bindir, proxy, course), **(extra_env or {})}
    hub = subprocess.Popen(
        [str(bindir / "jupyterhub"), "-f", str(config)],
        cwd=layout.root / "secret",
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT if log is not None else None,
        start_new_session=True,
    )
    _wait_for_api(layout, hub)
    return hub


def _wait_for_api(layout: HubLayout, hub: subprocess.Popen, timeout: float = 60) -> None:
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if hub.poll() is not None:
            raise RuntimeError(f"the hub exited with status {hub.returncode} while starting")
        try:
            with urllib.request.urlopen(f"{layout.url}/hub/api/", timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.3)
    raise RuntimeError(f"the hub did not answer on {layout.url} within {timeout:.0f} s")


def stop_hub(hub: subprocess.Popen, timeout: float = 15) -> None:
    """Stop the hub (it stops the servers it spawned and its proxy), then kill what is left."""
    if hub.poll() is None:
        hub.terminate()
        try:
            hub.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
    try:  # the hub's own session: the proxy and anything the hub left running
        os.killpg(hub.pid, 9)
    except ProcessLookupError:
        pass
    hub.wait()


# --- command line ------------------------------------------------------------------------


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def dry_run(port: int | None, students: int) -> int:
    signal.signal(signal.SIGTERM, _interrupt)  # a `kill` stops the hub as Ctrl-C does
    if os.geteuid() != 0 or not shutil.which("useradd"):
        print("dry-run needs root and useradd: it creates Unix users", file=sys.stderr)
        return 1
    instructor = "instructor"
    names = [f"student{i}" for i in range(1, students + 1)]
    for name in [instructor, *names]:
        ensure_user(name)
    root = PREFIX / "dry-run"
    exchange = make_exchange(PREFIX / "exchange")
    course = make_course(instructor)
    layout = HubLayout(root, exchange=exchange, instructor=instructor, students=names)
    if port:
        layout.port = port
    hub = start_hub(layout, course=course)
    print(
        f"\nJupyterHub for course {COURSE_ID!r} is up: {layout.url}\n"
        f"  instructor login : {instructor}  (course folder {course})\n"
        f"  student logins   : {', '.join(names)}\n"
        f"  password (all)   : {layout.password}\n"
        f"  exchange         : {exchange}\n"
        "Ctrl-C stops the hub and all servers.\n",
        flush=True,
    )
    try:
        hub.wait()
    except KeyboardInterrupt:
        pass
    finally:
        stop_hub(hub)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("dry-run", help="start the hub on localhost with test users")
    run.add_argument("--port", type=int, help="public port (default: a free one)")
    run.add_argument("--students", type=int, default=3)
    remove = sub.add_parser("remove-users", help="delete Unix users made for a dry run")
    remove.add_argument("names", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "dry-run":
        return dry_run(args.port, args.students)
    for name in args.names:
        remove_user(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
