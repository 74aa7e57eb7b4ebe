"""Formgrader for manual review in a course without nbgrader's exchange, started as the
instructor's configuration folder says (decompkit/course/static/instructor/README.md): its
links resolve, it does not warn or log about a missing exchange, students have names."""

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
import warnings
from pathlib import Path

import pytest

from decompkit.course.__main__ import main as course_main

from .submissions import ROOT

INSTRUCTOR = ROOT / "src" / "decompkit" / "course" / "static" / "instructor"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, token: str) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, ""


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning

    root = tmp_path_factory.mktemp("formgrader-course")
    shutil.copy2(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    shutil.copytree(ROOT / "solutions" / "decomp", root / "solutions" / "decomp")
    path = os.environ["PATH"]
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{path}"  # nbgrader's alembic
    try:
        with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb, warnings.catch_warnings():
            warnings.simplefilter("ignore", SAWarning)
            gb.update_or_create_assignment("decomp")
            for student in ("s1", "s2"):
                gb.add_student(student)
    finally:
        os.environ["PATH"] = path
    (root / "exchange").mkdir()  # as the instructor's launcher makes it
    (root / "roster.csv").write_text("id,first_name,last_name\ns2,Grace,Hopper\n")
    assert course_main(["names", "--root", str(root)]) == 0
    return root


@pytest.fixture(scope="module")
def server(course, tmp_path_factory):
    home = tmp_path_factory.mktemp("jupyter-home")
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home), JUPYTER_RUNTIME_DIR=str(home),
               JUPYTER_CONFIG_PATH=str(INSTRUCTOR))  # fmt: skip
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1",
               f"--port={port}", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={course}", "--allow-root"]  # fmt: skip
    log = open(home / "server.log", "w+")
    process = subprocess.Popen(command, cwd=course, env=env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if _get(f"{base}/api/contents", token)[0] == 200:
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.3)
        else:
            pytest.fail(f"JupyterLab did not start:\n{(home / 'server.log').read_text()[-3000:]}")
        yield base, token, home / "server.log"
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def test_formgrader_links_resolve_and_no_exchange_is_asked_for(server, course):
    base, token, log = server
    status, page = _get(f"{base}/formgrader/manage_assignments", token)
    assert status == 200
    assert 'url_prefix = "."' in page  # links are relative to the course folder itself
    assert "warning-exchange" not in page
    assert _get(f"{base}/api/contents/solutions/decomp", token)[0] == 200
    assert _get(f"{base}/formgrader/api/assignments", token)[0] == 200
    assert "Unwritable directory" not in log.read_text()


def test_students_have_names(server):
    base, token, _ = server
    status, body = _get(f"{base}/formgrader/api/students", token)
    names = {s["id"]: (s["last_name"], s["first_name"]) for s in json.loads(body)}
    assert status == 200 and names == {"s1": ("s1", ""), "s2": ("Hopper", "Grace")}


def test_the_exchange_side_extensions_are_off(server):
    base, token, _ = server
    assert _get(f"{base}/assignments?course_id=decomp", token)[0] == 404
    assert _get(f"{base}/formgrader", token)[0] == 200
