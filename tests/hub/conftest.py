"""A real JupyterHub on loopback for the course's end-to-end test.

The fixture ``hub`` creates an instructor and three students as Unix users (random names,
deleted afterwards), an exchange under a fresh temporary folder, the instructor's course
folder, and starts deploy/jupyterhub_config.py through deploy/hub.py. Everything is torn
down on success and on failure: the users' processes (their servers among them) are killed
and the users removed with their homes, then the hub and its proxy are stopped.

Needs root and useradd (CI has both); elsewhere the tests are skipped with the reason.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
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
        # The users' processes go first: the hub then finds its servers gone and stops at
        # once, instead of polling each server's shutdown with growing pauses (6-9 s).
        for name in [instructor, *students]:
            deploy.remove_user(name)
        if process is not None:
            deploy.stop_hub(process)
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


# --- the course shaped as on Kubernetes: one uid for every server, the ngshare service ---------


def _pods_skip_reason() -> str | None:
    reason = _skip_reason()
    if reason:
        return reason
    for tool in ("unshare", "setpriv", "mount"):
        if not shutil.which(tool):
            return f"needs {tool} to give each server a namespace of its own"
    probe = subprocess.run(
        ["unshare", "--mount", "--pid", "--fork", "--mount-proc", "true"], capture_output=True
    )
    if probe.returncode != 0:
        return f"cannot create mount and PID namespaces here: {probe.stderr.decode()[-300:]}"
    return None


class PodHub:
    """What the pods test needs to know about its hub, its service and its pods."""

    def __init__(self, client, *, pods: Path, pod_user: str, service_url: str, logs: Path):
        self.client = client
        self.pods = pods
        self.pod_user = pod_user
        self.service_url = (
            service_url  # ngshare as the servers reach it (directly, as pods reach its Service)
        )
        self.logs = logs

    def disk(self, user: str) -> Path:
        """``user``'s pod disk, as the machine (not the pod) sees it."""
        return self.pods / "disks" / user

    @property
    def home(self) -> Path:
        """Where every pod sees its own disk (its HOME)."""
        return self.pods / "home"

    @contextmanager
    def logs_on_failure(self):
        """Print the end of the hub's log (the servers' too) and the exchange's when the
        block fails: the run's folder, logs included, is removed at teardown."""
        try:
            yield
        except BaseException:
            for name in ("hub.log", "ngshare.log"):
                print(f"---- {name} (last 6000 characters) ----")
                print((self.logs / name).read_text(errors="replace")[-6000:])
            raise


@pytest.fixture(scope="module")
def pod_hub():
    reason = _pods_skip_reason()
    if reason:
        pytest.skip(reason)
    deploy = _load_deploy("hub")
    ngshare = _load_deploy("ngshare_service")
    bindir = deploy.ensure_environment()
    try:
        service_python = ngshare.ensure_service_environment(deploy.PREFIX, deploy._base_python())
        client_path = ngshare.ensure_exchange_client(deploy.PREFIX, bindir / "python")
    except subprocess.CalledProcessError as error:
        pytest.skip(f"could not install ngshare or ngshare-exchange from PyPI: {error}")
    suffix = secrets.token_hex(3)
    instructor = f"dkin{suffix}"
    students = [f"dkst{suffix}{letter}" for letter in "abc"]
    pod_user = f"dkpod{suffix}"
    # Not under /tmp: every pod gets a private /tmp, which would hide the run's folders.
    run = Path(tempfile.mkdtemp(prefix="pods-run-", dir=deploy.PREFIX))
    os.chmod(run, 0o755)
    pods = run / "pods"
    for folder in (pods, pods / "disks", pods / "home"):
        folder.mkdir()
        os.chmod(folder, 0o755)
    hub_log = open(run / "hub.log", "w")  # noqa: SIM115 - closed at teardown
    service_log = open(run / "ngshare.log", "w")  # noqa: SIM115 - closed at teardown
    hub_process = service_process = None
    try:
        subprocess.run(
            [
                "useradd",
                "--no-create-home",
                "--home-dir",
                str(pods / "home"),
                "--user-group",
                "--shell",
                "/bin/bash",
                pod_user,
            ],
            check=True,
        )
        entry = pwd.getpwnam(pod_user)
        # The instructor's disk starts with the course folder (on Kubernetes: copied into
        # the instructor's home once, e.g. with git clone from a terminal).
        disk = pods / "disks" / instructor
        disk.mkdir(mode=0o700)
        course = disk / "course"
        course.mkdir()
        for name in deploy.COURSE_FILES:
            source = REPO / name
            if source.is_dir():
                shutil.copytree(source, course / name)
            else:
                shutil.copy2(source, course / name)
        subprocess.run(["chown", "-R", f"{entry.pw_uid}:{entry.pw_gid}", str(disk)], check=True)

        layout = deploy.HubLayout(
            run / "hub", exchange=None, instructor=instructor, students=students
        )
        service_port = deploy.free_port()
        service_token = secrets.token_hex(32)
        service_process = ngshare.start_service(
            service_python,
            state=run / "ngshare",
            port=service_port,
            hub_api_url=f"http://127.0.0.1:{layout.hub_port}/hub/api",
            token=service_token,
            admins=[instructor],
            log=service_log,
        )
        service_url = f"http://127.0.0.1:{service_port}/services/ngshare"
        hub_process = deploy.start_hub(
            layout,
            course=pods / "home" / "course",
            log=hub_log,
            config=REPO / "deploy" / "jupyterhub_pods_config.py",
            extra_env={
                "DECOMPKIT_HUB_PODS": str(pods),
                "DECOMPKIT_HUB_POD_UID": str(entry.pw_uid),
                "DECOMPKIT_HUB_POD_GID": str(entry.pw_gid),
                "DECOMPKIT_HUB_POD_USER": pod_user,
                "DECOMPKIT_HUB_NGSHARE_URL": f"http://127.0.0.1:{service_port}",
                "DECOMPKIT_HUB_NGSHARE_TOKEN": service_token,
                "DECOMPKIT_HUB_EXCHANGE_CLIENT": str(client_path),
            },
            exchange_lines=ngshare.exchange_config(service_url),
        )
        client = _load_deploy("hub_client").HubClient(deploy, layout, course, bindir)
        yield PodHub(client, pods=pods, pod_user=pod_user, service_url=service_url, logs=run)
    except BaseException:
        for log in (hub_log, service_log):
            log.flush()
            print(f"---- {Path(log.name).name} (last 6000 characters) ----")
            print(Path(log.name).read_text()[-6000:])
        raise
    finally:
        deploy.remove_user(pod_user)  # every pod first, as in ``hub``
        if hub_process is not None:
            deploy.stop_hub(hub_process)
        if service_process is not None:
            deploy.stop_hub(service_process)
        hub_log.close()
        service_log.close()
        shutil.rmtree(run, ignore_errors=True)
