"""The Kubernetes files of deploy/k8s/ say what the end-to-end exchange test runs.

docs/deploy.md sends a reader to deploy/k8s/ (two images, ngshare's manifest, the Zero to
JupyterHub values); the exchange test starts the same service with deploy/ngshare_service.py.
These checks keep the two in step: the same package pins, the same service environment,
one port and one label from the hub's registration to the pod, and a role hook that picks
each user's configuration. They need neither root nor a cluster.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

REPO = Path(__file__).resolve().parents[2]
K8S = REPO / "deploy" / "k8s"


def _ngshare_service():
    spec = importlib.util.spec_from_file_location(
        "decompkit_deploy_ngshare_service", REPO / "deploy" / "ngshare_service.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pins(dockerfile: str) -> list[str]:
    return re.findall(r'"([A-Za-z][A-Za-z0-9_.-]*(?:==|>=)[^"]+)"', dockerfile)


def _manifests() -> dict[str, dict]:
    return {doc["kind"]: doc for doc in yaml.safe_load_all((K8S / "ngshare.yaml").read_text())}


def test_images_pin_what_the_test_installs():
    service = _ngshare_service()
    assert _pins((K8S / "ngshare.Dockerfile").read_text()) == service.NGSHARE_REQUIREMENTS
    singleuser = (K8S / "singleuser.Dockerfile").read_text()
    client_line = next(line for line in singleuser.splitlines() if "--no-deps" in line)
    assert _pins(client_line) == service.EXCHANGE_CLIENT_REQUIREMENTS


def test_service_pod_gets_the_environment_the_test_gives_it(tmp_path, monkeypatch):
    service = _ngshare_service()
    seen = {}

    class Recorder:
        def __init__(self, command, **kwargs):
            seen.update(command=command, env=kwargs["env"])

    monkeypatch.setattr(service.subprocess, "Popen", Recorder)
    monkeypatch.setattr(service.os, "chown", lambda *args: None)
    service.start_service(
        Path("python"), state=tmp_path, port=1, hub_api_url="u", token="t", admins=["i"]
    )
    container = _manifests()["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert {item["name"] for item in container["env"]} == set(seen["env"]) - {
        "PATH",
        "LANG",
        "HOME",
    }
    flags = {arg.split("=", 1)[0] for arg in container["args"]}
    assert flags == {
        arg.split("=", 1)[0]
        for arg in seen["command"]
        if arg.startswith("--admins") or arg.startswith("--database") or arg.startswith("--storage")
    }


def test_hub_and_pods_reach_the_service_by_one_port_and_label():
    values = yaml.safe_load((K8S / "config.yaml").read_text())
    manifests = _manifests()
    port = manifests["Service"]["spec"]["ports"][0]["port"]
    assert values["hub"]["services"]["ngshare"]["url"] == f"http://ngshare:{port}"
    labels = manifests["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert labels["hub.jupyter.org/network-access-hub"] == "true"
    (rule,) = values["singleuser"]["networkPolicy"]["egress"]
    assert rule["to"][0]["podSelector"]["matchLabels"].items() <= labels.items()
    assert rule["ports"] == [{"port": port}]
    url = re.search(r"--url (\S+)", (K8S / "singleuser.Dockerfile").read_text()).group(1)
    assert url == f"http://ngshare:{port}/services/ngshare"


def test_role_hook_picks_each_users_configuration():
    values = yaml.safe_load((K8S / "config.yaml").read_text())

    class Config(dict):
        def __getattr__(self, name):
            return self.setdefault(name, Config())

        def __setattr__(self, name, value):
            self[name] = value

    c = Config()
    exec(values["hub"]["extraConfig"]["decompkit-roles"], {"c": c})  # noqa: S102
    hook = c.KubeSpawner.pre_spawn_hook

    class Spawner:
        def __init__(self, name):
            self.user = type("User", (), {"name": name})()
            self.environment = {"KEPT": "1"}

    paths = {}
    for name in ("INSTRUCTOR", "some-student"):
        spawner = Spawner(name)
        hook(spawner)
        assert spawner.environment["KEPT"] == "1"
        paths[name] = spawner.environment["JUPYTER_CONFIG_PATH"]
    assert paths == {
        "INSTRUCTOR": "/etc/decompkit/instructor",
        "some-student": "/etc/decompkit/student",
    }
