"""Formgrader for manual review in a course without nbgrader's exchange, started as the
instructor's configuration folder says (decompkit/course/static/instructor/README.md): its
links resolve, it does not warn or log about a missing exchange, students have names; a
hostile submission's manual-grading page runs none of its script (in Chromium)."""

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

from .hostile import ARTIFACTS, CHAIN, MARK, Watch, chromium_browser, grade_hostile
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


# --- a hostile submission in the manual-grading view ---------------------------------------


@pytest.fixture(scope="module")
def hostile_submission(course):
    """s1 hands in the hostile chain notebook (tests/grading/hostile.py), graded by the kit;
    the id of its submitted notebook in the gradebook, which names formgrader's page of it."""
    from nbgrader.api import Gradebook

    grade_hostile(course, "s1")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return gb.find_submission_notebook(CHAIN, "decomp", "s1").id


@pytest.fixture(scope="module")
def browser():
    with chromium_browser() as chromium:
        yield chromium


@pytest.mark.browser
def test_no_script_of_a_submission_runs_in_formgrader(server, hostile_submission, browser):
    """The manual-grading page runs in the instructor's Jupyter origin: a script of the
    submission there could read every file (GET /api/contents) and run code (POST
    /api/kernels). None runs, none asks."""
    base, token, _ = server
    view = browser.new_page(viewport={"width": 1280, "height": 720})
    watch = Watch(view)
    response = view.goto(f"{base}/formgrader/submissions/{hostile_submission}/?token={token}")
    assert response.status == 200
    view.wait_for_timeout(1500)  # time for any handler or script that could run to run
    ARTIFACTS.mkdir(exist_ok=True)
    view.screenshot(path=str(ARTIFACTS / "hostile-formgrader-top.png"))
    state = watch.state("#notebook-container")

    assert MARK not in state["title"] and MARK not in state["name"], state
    assert watch.api_calls() == []
    assert state["scriptable"] == [] and state["handlers"] == []
    assert [m for m in watch.console if MARK in m] == []
    # ... and the instructor can still grade it: the answers, the outputs, the notes.
    view.get_by_role("heading", name="My notes").scroll_into_view_if_needed()
    view.evaluate("window.scrollBy(0, -150)")
    view.screenshot(path=str(ARTIFACTS / "hostile-formgrader-markdown.png"))
    view.get_by_text("bold HTML output", exact=True).scroll_into_view_if_needed()
    view.evaluate("window.scrollBy(0, -150)")
    view.screenshot(path=str(ARTIFACTS / "hostile-formgrader-outputs.png"))
    container = view.locator("#notebook-container")
    assert container.get_by_text("Student's answer").count() >= 10
    assert container.get_by_text("bold HTML output", exact=True).is_visible()
    assert container.get_by_text("application/javascript output removed by the grader").count()
    view.close()
