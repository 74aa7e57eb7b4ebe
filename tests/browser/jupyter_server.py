"""Start a throw-away Jupyter server (JupyterLab and Notebook 7) and a headless Chromium.

Plain functions, no pytest: ``tests/browser/conftest.py`` wraps them in fixtures and
``bench/bench_browser.py`` calls them directly. The server's configuration, runtime and
settings folders live in a temporary folder, so a user's own settings cannot change what a
test or a benchmark sees. The kit's own settings (``jupyter/settings/overrides.json`` at the
repository root) reach JupyterLab and Notebook 7 as kit.py passes them: as the application
settings folder (``--LabApp.app_settings_dir``, ``--JupyterNotebookApp.app_settings_dir``).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
#: The kit's JupyterLab / Notebook 7 settings folder; its overrides.json holds the defaults.
KIT_SETTINGS = ROOT / "jupyter" / "settings"

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]

#: User settings of the test server, on top of the kit's: no news or update check (its toast could
#: cover the page) and every cell kept in the DOM, so that all outputs can be seen at once.
TEST_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}

SERVER_START_TIMEOUT = 60.0


class ServerError(RuntimeError):
    """The server exited or did not answer in time; the message ends with its log."""


def settings_flags() -> list[str]:
    """Command-line options that hand the kit's settings to JupyterLab and Notebook 7."""
    if not (KIT_SETTINGS / "overrides.json").exists():
        return []
    return [
        f"--LabApp.app_settings_dir={KIT_SETTINGS}",
        f"--JupyterNotebookApp.app_settings_dir={KIT_SETTINGS}",
    ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def log_tail(path: Path, lines: int = 30) -> str:
    text = path.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:])


@dataclass
class LabServer:
    """A running Jupyter server: where it listens, what it serves and where it logs."""

    url: str
    token: str
    #: The folder the server serves (a temporary copy).
    root: Path
    log: Path
    #: The repository folder ``root`` is a copy of, if any.
    source: Path | None = None

    def api(self, path: str, method: str = "GET", body: dict | None = None):
        """Call the server's REST API, e.g. ``api("sessions")``; returns the decoded JSON."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.url}/api/{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def lab_url(self, notebook: str) -> str:
        """The notebook alone in JupyterLab: ``reset`` drops the tabs an earlier page left in
        the workspace, so what a test counts on the page belongs to this notebook only."""
        return f"{self.url}/lab/tree/{quote(notebook)}?reset&token={self.token}"

    def notebook_url(self, notebook: str) -> str:
        """The same notebook in Notebook 7's single-document page."""
        return f"{self.url}/notebooks/{quote(notebook)}?token={self.token}"

    def kernel_state(self, notebook: str) -> str:
        sessions = [s for s in self.api("sessions") if s["path"] == notebook]
        if not sessions or not sessions[0].get("kernel"):
            return "no kernel yet"
        return sessions[0]["kernel"]["execution_state"]

    def modified(self, notebook: str) -> str:
        """When the server last wrote ``notebook`` (its contents model's ``last_modified``)."""
        return self.api(f"contents/{quote(notebook)}?content=0")["last_modified"]

    def saved_since(self, notebook: str, written: str, timeout_s: float) -> dict | None:
        """The notebook as the server reads it once a write after ``written`` has finished.

        The server writes a notebook in place: it copies the file to ``.~<name>`` first,
        writes, then deletes the copy. A read in the middle finds half a notebook, and the
        server then puts the copy back over the file (HTTP 400 or 500, and a save undone),
        so nothing is read until the file's time has changed and the copy is gone.
        ``None`` if that does not happen within ``timeout_s``.
        """
        path = self.root / notebook
        backup = path.with_name(".~" + path.name)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.modified(notebook) != written and not backup.exists():
                return self.api(f"contents/{quote(notebook)}?content=1")["content"]
            time.sleep(0.1)
        return None

    def shut_down_kernels(self) -> None:
        """Stop every kernel of the server (a notebook reopened later starts cold)."""
        for session in self.api("sessions"):
            self.api(f"sessions/{session['id']}", method="DELETE")


def isolated_environment(base: Path, settings: dict) -> dict[str, str]:
    """Environment variables that point every Jupyter folder into ``base``."""
    env = dict(os.environ)
    for variable in (
        "JUPYTER_CONFIG_DIR",
        "JUPYTER_DATA_DIR",
        "JUPYTER_RUNTIME_DIR",
        "JUPYTERLAB_SETTINGS_DIR",
        "JUPYTERLAB_WORKSPACES_DIR",
        "IPYTHONDIR",
    ):
        folder = base / variable.lower()
        folder.mkdir(exist_ok=True)
        env[variable] = str(folder)
    # The kernel imports the decompkit of this checkout, whatever the working directory.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    folder = Path(env["JUPYTERLAB_SETTINGS_DIR"])
    for plugin, values in settings.items():  # "@scope/package:plugin" -> @scope/package/plugin
        target = folder / f"{plugin.replace(':', '/')}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values))
    return env


def interrupt_on_terminate() -> None:
    """Make a terminate (SIGTERM, as ``kill`` or ``timeout`` send) end the process as a Ctrl-C
    does, by raising KeyboardInterrupt: the ``with`` blocks of :func:`running_server` and
    :func:`chromium` then stop JupyterLab, its kernels and the browser. Python's default on a
    terminate ends at once and leaves them running. For a benchmark's main process."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)


@contextmanager
def running_server(root: Path, base: Path, *, settings: dict | None = None, source=None):
    """Run ``jupyter lab`` on ``root`` (it serves Notebook 7 too); stop it on exit.

    ``settings`` are user settings (default :data:`TEST_SETTINGS`), ``{plugin id: values}``.
    """
    env = isolated_environment(base, TEST_SETTINGS if settings is None else settings)
    token = secrets.token_hex(16)
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        # Fail at once if the port was taken meanwhile, rather than serve on another one.
        "--ServerApp.port_retries=0",
        *settings_flags(),
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # CI containers run as root; the server refuses otherwise
    log = base / "jupyter-server.log"
    server = LabServer(
        url=f"http://127.0.0.1:{port}", token=token, root=root, log=log, source=source
    )
    with open(log, "w") as log_file:
        # cwd=root: nbgrader's server extension takes the working directory as its course root.
        process = subprocess.Popen(
            command, cwd=root, env=env, stdout=log_file, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if process.poll() is not None:
                raise ServerError(
                    f"the Jupyter server exited with code {process.returncode} at start-up; "
                    f"log {log}:\n{log_tail(log)}"
                )
            try:
                server.api("status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise ServerError(
                        f"the Jupyter server did not answer /api/status within "
                        f"{SERVER_START_TIMEOUT:g} s; log {log}:\n{log_tail(log)}"
                    ) from None
                time.sleep(0.2)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


@contextmanager
def chromium(profile: Path, *, width=1280, height=800, scale=1.0):
    """A headless Chromium (Debian's) with a fresh profile, as one Playwright context."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": width, "height": height},
            device_scale_factor=scale,
        )
        context.set_default_timeout(30_000)
        try:
            yield context
        finally:
            context.close()
