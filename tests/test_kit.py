"""The README's first command: `python3 kit.py lab` serves notebooks/ in JupyterLab."""

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url, token):
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.load(response)


def test_lab_command_serves_the_notebooks_folder(tmp_path):
    port, token = _free_port(), secrets.token_hex(16)
    before = {p: p.stat().st_mtime_ns for p in (ROOT / "notebooks").rglob("*.ipynb")}
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path), JUPYTER_CONFIG_DIR=str(tmp_path))
    command = [
        sys.executable,
        str(ROOT / "kit.py"),
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
    ]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        listing = None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                listing = _get(f"http://127.0.0.1:{port}/api/contents", token)
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.3)
        if listing is None:
            server.terminate()
            _, log = server.communicate(timeout=30)
            raise AssertionError(f"JupyterLab did not answer:\n{log.decode()[-3000:]}")
        names = {item["name"] for item in listing["content"]}
        assert "decomp" in names
        lab_page = urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token={token}", timeout=5)
        assert lab_page.status == 200
    finally:
        if server.poll() is None:
            server.terminate()
            server.communicate(timeout=30)
    after = {p: p.stat().st_mtime_ns for p in (ROOT / "notebooks").rglob("*.ipynb")}
    assert after == before, "opening the kit must not write any notebook"
