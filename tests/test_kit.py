"""The README's first command: `python3 kit.py lab` serves notebooks/ in JupyterLab; the
instructor's commands reach `python -m decompkit.course`."""

import importlib.util
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

import pytest

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


def _kit():
    spec = importlib.util.spec_from_file_location("_kit_under_test", ROOT / "kit.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("command", ["release", "check", "grade", "key"])
def test_instructor_commands_run_the_course_package(monkeypatch, command):
    kit = _kit()
    ran = []
    monkeypatch.setattr(kit, "_run", lambda argv: ran.append(argv) or 0)
    assert kit.COMMANDS[command](["--help"]) == 0
    assert ran == [[str(kit.PYTHON), "-m", "decompkit.course", command, "--help"]]


@pytest.mark.parametrize("command", ["release", "check", "grade", "key", "integrity"])
def test_every_course_command_answers_help(command):
    result = subprocess.run(
        [sys.executable, "-m", "decompkit.course", command, "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert f"python -m decompkit.course {command}" in result.stdout


def test_an_unknown_course_command_lists_the_commands():
    result = subprocess.run(
        [sys.executable, "-m", "decompkit.course", "autograde"], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert all(name in result.stderr for name in ("release", "check", "grade", "key"))
