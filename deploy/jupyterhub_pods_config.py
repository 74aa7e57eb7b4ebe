"""JupyterHub configuration: the course shaped as Zero to JupyterHub runs it, on one machine.

Loads deploy/jupyterhub_config.py (proxy, login, roles, the admin service) and changes what
Kubernetes changes:

- every user's server runs as the same unprivileged uid (as every pod runs as uid 1000),
  each in its own mount and PID namespace with its own disk as HOME (deploy/pod_entry.sh),
  so servers share no file and see no other server's processes;
- assignments, submissions and feedback move through the ngshare exchange service, an
  external hub service authenticated by the hub (the servers' nbgrader uses
  ngshare_exchange instead of a shared folder).

Started by tests/hub through deploy/hub.py and deploy/ngshare_service.py, which set the
DECOMPKIT_HUB_* variables read here. docs/deploy.md gives the same settings as Helm values.
"""

import os

from jupyterhub.spawner import LocalProcessSpawner
from traitlets import Integer, Unicode

c = get_config()  # noqa: F821 - injected by traitlets when this file is loaded

load_subconfig(os.path.join(os.path.dirname(os.path.abspath(__file__)), "jupyterhub_config.py"))  # noqa: F821


def _env(name):
    value = os.environ.get(f"DECOMPKIT_HUB_{name}")
    if value is None:
        raise RuntimeError(f"DECOMPKIT_HUB_{name} is not set: start the hub through deploy/hub.py")
    return value


class PodSpawner(LocalProcessSpawner):
    """One server per hub user, every one as the same uid, each in a pod-like namespace.

    The hub user's name never becomes a Unix user: like KubeSpawner, this spawner gives each
    server a disk of its own (``disks/<name>``, made on first start), sets
    ``JUPYTERHUB_USER`` (the hub does) and ``HOME``, and runs the server as ``pod_uid``.
    """

    pods_root = Unicode(help="folder with disks/ (one per user) and home/ (the mount point)").tag(
        config=True
    )
    pod_uid = Integer(help="the uid every server runs as").tag(config=True)
    pod_gid = Integer(help="the gid every server runs as").tag(config=True)
    pod_user = Unicode(help="the Unix name of pod_uid (USER in the server)").tag(config=True)

    @property
    def _disk(self):
        return os.path.join(self.pods_root, "disks", self.user.name)

    def make_preexec_fn(self, name):
        return None  # pod_entry.sh drops to pod_uid after setting up the namespace

    def user_env(self, env):
        env.update(
            USER=self.pod_user,
            HOME=os.path.join(self.pods_root, "home"),
            SHELL="/bin/bash",
            DECOMPKIT_POD_DISKS=os.path.join(self.pods_root, "disks"),
            DECOMPKIT_POD_DISK=self._disk,
            DECOMPKIT_POD_HOME=os.path.join(self.pods_root, "home"),
            DECOMPKIT_POD_UID=str(self.pod_uid),
            DECOMPKIT_POD_GID=str(self.pod_gid),
        )
        return env

    async def _signal(self, sig):
        # unshare ignores SIGINT and SIGTERM while its child runs: signal the whole process
        # group (unshare and the server; kernels have sessions of their own and end with
        # the PID namespace), so that stopping a server is as graceful as without a pod.
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            return False
        return True

    async def start(self):
        # The pod's persistent volume: created once, owned by the pods' uid, private.
        os.makedirs(self._disk, mode=0o700, exist_ok=True)
        os.chown(self._disk, self.pod_uid, self.pod_gid)
        os.chmod(self._disk, 0o700)
        return await super().start()


PODS = _env("PODS")
c.JupyterHub.spawner_class = PodSpawner
c.PodSpawner.pods_root = PODS
c.PodSpawner.pod_uid = int(_env("POD_UID"))
c.PodSpawner.pod_gid = int(_env("POD_GID"))
c.PodSpawner.pod_user = _env("POD_USER")
c.PodSpawner.cmd = [
    "unshare",
    "--mount",
    "--pid",
    "--fork",
    "--mount-proc",
    "--kill-child=SIGTERM",  # stopping the server's unshare stops the whole pod
    "--",
    "/bin/sh",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "pod_entry.sh"),
    os.path.join(_env("BIN"), "jupyterhub-singleuser"),
]
c.Spawner.notebook_dir = os.path.join(PODS, "home")
# The image's packages: ngshare_exchange sits beside the shared environment (on Kubernetes
# it is pip-installed into the single-user image instead).
EXCHANGE_CLIENT = _env("EXCHANGE_CLIENT")
c.Spawner.environment = {
    **c.Spawner.environment,
    "PATH": f"{EXCHANGE_CLIENT}/bin:{c.Spawner.environment['PATH']}",
    "PYTHONPATH": EXCHANGE_CLIENT,
}

# --- the exchange service ------------------------------------------------------------------
# ngshare runs as its own process (its own pod on Kubernetes) at NGSHARE_URL; the hub
# registers it, routes /services/ngshare/ to it through the proxy, and knows its token.
# ngshare asks the hub who owns each request's token (GET /hub/api/user), so a server can
# act in ngshare only as its own user.
c.JupyterHub.services.append(
    {
        "name": "ngshare",
        "url": _env("NGSHARE_URL"),
        "api_token": _env("NGSHARE_TOKEN"),
        "oauth_no_confirm": True,
    }
)
