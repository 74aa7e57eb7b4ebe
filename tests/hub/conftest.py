"""A real JupyterHub on loopback for the course's end-to-end test.

The fixture ``hub`` creates an instructor and three students as Unix users (random names,
deleted afterwards), an exchange under a fresh temporary folder, the instructor's course
folder, and starts deploy/jupyterhub_config.py through deploy/hub.py. Everything is torn
down on success and on failure: the hub stops the servers it spawned, the users' leftover
processes are killed and the users removed with their homes.

Needs root and useradd (CI has both); elsewhere the tests are skipped with the reason.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "hub: end-to-end run of the course on a real JupyterHub (root only)"
    )


def _load_deploy(name: str):
    """A module of deploy/ (a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(
        f"decompkit_deploy_{name}", REPO / "deploy" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _skip_reason() -> str | None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "needs root: the hub test creates Unix users and runs the hub as root"
    for tool in ("useradd", "userdel", "runuser"):
        if not shutil.which(tool):
            return f"needs {tool} to create and act as Unix users"
    if not shutil.which("configurable-http-proxy") and not shutil.which("npm"):
        return "needs configurable-http-proxy or npm to install it"
    return None


@pytest.fixture(scope="module")
def hub():
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    deploy = _load_deploy("hub")
    suffix = secrets.token_hex(3)
    instructor = f"dkin{suffix}"
    students = [f"dkst{suffix}{letter}" for letter in "abc"]
    temp = Path(tempfile.mkdtemp(prefix="decompkit-hub-"))
    os.chmod(temp, 0o755)  # the exchange inside must be reachable by every user
    log = open(temp / "hub.log", "w")  # noqa: SIM115 - closed at teardown
    process = None
    try:
        bindir = deploy.ensure_environment()
        for name in [instructor, *students]:
            deploy.ensure_user(name)
        exchange = deploy.make_exchange(temp / "exchange")
        course = deploy.make_course(instructor)
        layout = deploy.HubLayout(
            temp / "hub", exchange=exchange, instructor=instructor, students=students
        )
        process = deploy.start_hub(layout, course=course, log=log)
        yield _load_deploy("hub_client").HubClient(deploy, layout, course, bindir)
    except BaseException:
        log.flush()
        print("---- hub log (last 6000 characters) ----")
        print((temp / "hub.log").read_text()[-6000:])
        raise
    finally:
        if process is not None:
            deploy.stop_hub(process)
        for name in [instructor, *students]:
            deploy.remove_user(name)
        log.close()
        shutil.rmtree(temp, ignore_errors=True)
