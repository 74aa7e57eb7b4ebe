"""One JupyterLab server and one headless Chromium for the browser tests.

The server runs on a temporary copy of ``notebooks/`` (so the tests never write into the
repository) with its configuration, runtime and settings directories in the temporary folder
too, so that a user's own JupyterLab settings cannot change what the tests see. Chromium is
Debian's ``/usr/bin/chromium`` driven by Playwright for Python.

Without Chromium, Playwright or the released notebook the tests are skipped; with
``DECOMPKIT_REQUIRE_BROWSER=1`` (set in CI) they fail instead, so that a broken set-up cannot
pass as a skipped test. Screenshots of the last run are kept in tests/browser/artifacts/.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
#: The released notebook the browser tests open, relative to notebooks/.
NOTEBOOK = "decomp/02-long-horizons.ipynb"
CHROMIUM = Path("/usr/bin/chromium")
#: Screenshots of the last run (the folder is emptied of them when a run starts).
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

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

#: User settings of the test server: no news or update check (its toast could cover the page)
#: and every cell kept in the DOM, so that the tests can see all prompts and outputs at once.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}

SERVER_START_TIMEOUT = 60.0


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail when the environment promises a browser (``DECOMPKIT_REQUIRE_BROWSER=1``)."""
    if os.environ.get("DECOMPKIT_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (required because DECOMPKIT_REQUIRE_BROWSER=1)", pytrace=False)
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _log_tail(path: Path, lines: int = 30) -> str:
    text = path.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:])


@dataclass
class LabServer:
    """A running JupyterLab: where it listens, what it serves and where it logs."""

    url: str
    token: str
    #: The repository folder the server serves a copy of, and that copy.
    source: Path
    root: Path
    log: Path

    def api(self, path: str):
        """GET a JSON resource of the server's REST API, e.g. ``api("sessions")``."""
        request = urllib.request.Request(
            f"{self.url}/api/{path}", headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.load(response)

    def lab_url(self, notebook: str) -> str:
        return f"{self.url}/lab/tree/{notebook}?token={self.token}"


def _isolated_environment(base: Path) -> dict[str, str]:
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
        folder.mkdir()
        env[variable] = str(folder)
    # The kernel imports the decompkit of this checkout, whatever the working directory.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    settings = Path(env["JUPYTERLAB_SETTINGS_DIR"])
    for plugin, values in LAB_SETTINGS.items():
        target = settings / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values))
    return env


@pytest.fixture(scope="package")
def released_notebook() -> Path:
    """The notebook under test in the repository (only read: the server serves a copy)."""
    path = NOTEBOOKS / NOTEBOOK
    if not path.exists():
        unavailable(f"the released notebook notebooks/{NOTEBOOK} is missing")
    return path


@pytest.fixture(scope="package")
def lab_server(tmp_path_factory):
    """Start JupyterLab on a copy of notebooks/; stop it (terminate, then kill) at the end."""
    base = tmp_path_factory.mktemp("lab")
    root = base / "notebooks"
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    env = _isolated_environment(base)
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
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # CI containers run as root; the server refuses otherwise
    log = base / "jupyterlab.log"
    server = LabServer(
        url=f"http://127.0.0.1:{port}", token=token, source=NOTEBOOKS, root=root, log=log
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
                pytest.fail(
                    f"JupyterLab exited with code {process.returncode} at start-up; "
                    f"log {log}:\n{_log_tail(log)}",
                    pytrace=False,
                )
            try:
                server.api("status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"JupyterLab did not answer /api/status within {SERVER_START_TIMEOUT:g} s;"
                        f" log {log}:\n{_log_tail(log)}",
                        pytrace=False,
                    )
                time.sleep(0.2)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


# Package scope, not session: Playwright's sync API keeps an asyncio event loop running in this
# thread while it is open, and later tests that call asyncio.run() (the lab's) need it closed.
@pytest.fixture(scope="package")
def chromium_context(tmp_path_factory):
    """A headless Chromium with a fresh profile, as one Playwright browser context."""
    if not CHROMIUM.exists():
        unavailable(f"{CHROMIUM} is missing (install Debian's chromium: .ci/install-browser)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the Python package playwright is not installed (pip install playwright)")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            tmp_path_factory.mktemp("chromium-profile"),
            executable_path=str(CHROMIUM),
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1600, "height": 1000},
        )
        context.set_default_timeout(30_000)
        try:
            yield context
        finally:
            context.close()


@pytest.fixture(scope="package")
def artifacts() -> Path:
    """The folder for this run's screenshots; failure messages name the file to look at."""
    ARTIFACTS.mkdir(exist_ok=True)
    for stale in ARTIFACTS.glob("*.png"):
        stale.unlink()
    return ARTIFACTS
