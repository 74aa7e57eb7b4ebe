"""The ngshare exchange service and its client, installed and run for the course.

ngshare (PyPI ``ngshare``) is nbgrader's exchange behind a REST API, a JupyterHub service
that identifies every caller by their hub token; ``ngshare-exchange`` is the nbgrader
plug-in in each user's server that talks to it. Both were last released in 2022
(ngshare 0.6.0, ngshare-exchange 0.5.3) and need two settings to work with today's
packages, both applied here:

- ngshare 0.6.0 under SQLAlchemy 2 answers "success" to a release or a submission and
  stores nothing (new objects are no longer added to the session through their parent;
  fixed upstream after 0.6.0, unreleased). Its environment pins ``SQLAlchemy<2``.
- ngshare-exchange 0.5.3 requires ``jupyter-core<4.11.2``, which no current Jupyter server
  accepts; it is installed without its dependencies (it needs only ``rapidfuzz`` beyond
  nbgrader's own), which works with nbgrader 0.9.6.

Used by the end-to-end test in tests/hub/ (with deploy/hub.py) and deploy/measure.py; only
the standard library. As a command, it writes the two roles' Jupyter configurations for a
single-user image (docs/deploy.md):

    python3 deploy/ngshare_service.py role-configs FOLDER --course PATH --url URL
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = [
    "NGSHARE_REQUIREMENTS",
    "EXCHANGE_CLIENT_REQUIREMENTS",
    "ensure_service_environment",
    "ensure_exchange_client",
    "exchange_config",
    "start_service",
]

# What the service's own environment (its pod's image on Kubernetes) holds.
NGSHARE_REQUIREMENTS = ["ngshare==0.6.0", "SQLAlchemy>=1.4,<2"]
# Added to every single-user environment, each with --no-deps (see the module docstring).
EXCHANGE_CLIENT_REQUIREMENTS = ["ngshare-exchange==0.5.3", "rapidfuzz>=3,<4"]
SERVICE_NAME = "ngshare"


def _say(message: str) -> None:
    print(f"[ngshare] {message}", flush=True)


def _installer(python: Path) -> list[str]:
    """uv when deploy/hub.py finds one (seconds), else pip (about half a minute)."""
    return _hub_module().installer(python)


def ensure_service_environment(prefix: Path, base_python: str) -> Path:
    """Create ``prefix/ngshare/venv`` with ngshare unless it is there; return its python.

    The environment is readable by every user (the service runs as an unprivileged uid).
    """
    venv = prefix / "ngshare" / "venv"
    python = venv / "bin" / "python"
    stamp = venv / ".decompkit-stamp"
    wanted = " ".join(NGSHARE_REQUIREMENTS)
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    _say(f"installing {wanted} into {venv}")
    if venv.exists():
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(venv.parent, 0o755)
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True)
    subprocess.run([*_installer(python), *NGSHARE_REQUIREMENTS], check=True)
    subprocess.run(["chmod", "-R", "a+rX", str(venv)], check=True)
    stamp.write_text(wanted)
    return python


def ensure_exchange_client(prefix: Path, python: Path) -> Path:
    """Install ngshare-exchange for ``python`` into ``prefix/ngshare-exchange``; return it.

    A folder to put on the servers' PYTHONPATH, so that the shared environment the
    other hub test uses stays as it is.
    """
    target = prefix / "ngshare-exchange"
    stamp = target / ".decompkit-stamp"
    wanted = f"{' '.join(EXCHANGE_CLIENT_REQUIREMENTS)} for {python}"
    if stamp.exists() and stamp.read_text() == wanted:
        return target
    _say(f"installing {' '.join(EXCHANGE_CLIENT_REQUIREMENTS)} into {target}")
    if target.exists():
        shutil.rmtree(target)
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]
    subprocess.run(
        [*pip, "install", "--no-deps", "--target", str(target), *EXCHANGE_CLIENT_REQUIREMENTS],
        check=True,
    )
    subprocess.run(["chmod", "-R", "a+rX", str(target)], check=True)
    os.chmod(target, 0o755)
    stamp.write_text(wanted)
    return target


def exchange_config(url: str) -> str:
    """The lines of an nbgrader_config.py that make nbgrader use ngshare at ``url``.

    ``url`` is the service as the servers reach it, e.g. through the hub's proxy
    (``http://proxy-public/services/ngshare`` on Zero to JupyterHub).
    """
    return f"from ngshare_exchange import configureExchange\nconfigureExchange(c, {url!r})\n"


def start_service(
    python: Path,
    *,
    state: Path,
    port: int,
    hub_api_url: str,
    token: str,
    admins: list[str],
    uid: int = 65534,
    log=None,
) -> subprocess.Popen:
    """Start ngshare on 127.0.0.1:``port`` as ``uid``, as its Helm chart's pod runs it.

    ``state`` (made here, private to ``uid``) holds its SQLite database and stored files.
    The environment variables are the ones a hub sets for a service it manages and the
    chart sets for its pod. ngshare listens on every interface of the machine (its code
    gives no choice); nothing outside this machine can reach it here.
    """
    state.mkdir(parents=True, exist_ok=True)
    os.chown(state, uid, uid)
    os.chmod(state, 0o700)
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": str(state),
        "JUPYTERHUB_SERVICE_NAME": SERVICE_NAME,
        "JUPYTERHUB_API_TOKEN": token,
        "JUPYTERHUB_API_URL": hub_api_url,
        "JUPYTERHUB_BASE_URL": "/",
        "JUPYTERHUB_SERVICE_PREFIX": f"/services/{SERVICE_NAME}/",
        "JUPYTERHUB_SERVICE_URL": f"http://127.0.0.1:{port}/",
        "JUPYTERHUB_CLIENT_ID": f"service-{SERVICE_NAME}",
    }
    command = [
        "setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--no-new-privs",
        "--",
        str(python),
        "-m",
        "ngshare",
        f"--database=sqlite:///{state / 'ngshare.db'}",
        f"--storage={state / 'files'}",
        f"--admins={','.join(admins)}",
    ]
    return subprocess.Popen(
        command,
        cwd=state,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT if log is not None else None,
        start_new_session=True,
    )


def _hub_module():
    path = Path(__file__).resolve().parent / "hub.py"
    spec = importlib.util.spec_from_file_location("decompkit_deploy_hub", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="the ngshare exchange for the course")
    sub = parser.add_subparsers(dest="command", required=True)
    roles = sub.add_parser(
        "role-configs",
        help="write FOLDER/student and FOLDER/instructor, the roles' Jupyter configurations",
    )
    roles.add_argument("folder", type=Path)
    roles.add_argument("--course", type=Path, required=True, help="the course folder in a pod")
    roles.add_argument("--url", required=True, help="ngshare as pods reach it")
    args = parser.parse_args(argv)
    folders = _hub_module().write_role_configs(
        args.folder, None, args.course, exchange_lines=exchange_config(args.url)
    )
    for role, folder in folders.items():
        print(f"{role}: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
