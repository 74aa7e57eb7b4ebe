"""JupyterHub configuration for the decompkit course on one machine.

Started by deploy/hub.py (``jupyterhub -f deploy/jupyterhub_config.py``), which sets the
DECOMPKIT_HUB_* variables read below; for a permanent installation, replace each ``_env``
call by the value itself. The hub runs as root; each user's server runs as that Unix user
(LocalProcessSpawner) from a shared environment every user can read, and nbgrader moves
assignments through the exchange folder named in the role configurations.
"""

import os

c = get_config()  # noqa: F821 - injected by traitlets when this file is loaded


def _env(name, default=None):
    value = os.environ.get(f"DECOMPKIT_HUB_{name}", default)
    if value is None:
        raise RuntimeError(f"DECOMPKIT_HUB_{name} is not set: start the hub with deploy/hub.py")
    return value


STATE = _env("STATE")  # root-only folder: database, cookie secret, proxy pid
CONFIGS = _env("CONFIGS")  # world-readable folder: one Jupyter config folder per role
INSTRUCTOR = _env("INSTRUCTOR")
STUDENTS = {name for name in _env("STUDENTS", "").split(",") if name}

# --- network: the proxy is the only public port --------------------------------------------
c.JupyterHub.ip = _env("IP", "127.0.0.1")
c.JupyterHub.port = int(_env("PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(_env("INTERNAL_PORT", "8081"))
c.ConfigurableHTTPProxy.command = [_env("PROXY", "configurable-http-proxy")]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{_env('PROXY_API_PORT', '8001')}"
c.ConfigurableHTTPProxy.pid_file = os.path.join(STATE, "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{os.path.join(STATE, 'jupyterhub.sqlite')}"
c.JupyterHub.cookie_secret_file = os.path.join(STATE, "jupyterhub_cookie_secret")
# A real course serves https: put TLS in front (or c.JupyterHub.ssl_cert / ssl_key).

# --- who may log in ------------------------------------------------------------------------
# Dry runs and tests: every listed user logs in with one shared password. Never in a course.
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = _env("PASSWORD")
c.Authenticator.allowed_users = STUDENTS | {INSTRUCTOR}
c.Authenticator.admin_users = {INSTRUCTOR}
# The institution's login instead (pip install oauthenticator; user names must map to Unix
# users, e.g. with LocalGenericOAuthenticator and create_system_users):
#   c.JupyterHub.authenticator_class = "generic-oauth"
#   c.GenericOAuthenticator.client_id = "..."; c.GenericOAuthenticator.client_secret = "..."
#   c.GenericOAuthenticator.oauth_callback_url = "https://hub.example.edu/hub/oauth_callback"
#   c.GenericOAuthenticator.authorize_url / token_url / userdata_url = "https://sso.example.edu/..."
#   c.GenericOAuthenticator.username_claim = "preferred_username"
#   c.GenericOAuthenticator.allowed_groups = {"course-decomp"}
# or LDAP (pip install jupyterhub-ldapauthenticator):
#   c.JupyterHub.authenticator_class = "ldapauthenticator.LDAPAuthenticator"
#   c.LDAPAuthenticator.server_address = "ldap.example.edu"
#   c.LDAPAuthenticator.bind_dn_template = ["uid={username},ou=people,dc=example,dc=edu"]
# or the machine's own accounts (PAM, the hub's default): c.JupyterHub.authenticator_class = "pam"

# A service holding the admin role: scripts and the end-to-end test use its token to create
# users, their tokens and their servers through the REST API (/hub/api/...).
c.JupyterHub.services = [{"name": "course-admin", "api_token": _env("ADMIN_TOKEN")}]
c.JupyterHub.load_roles = [{"name": "admin", "services": ["course-admin"]}]

# nbgrader's formgrader reached through the hub by course graders (optional; the
# instructor, an admin, already reaches their own server). A group formgrade-decomp whose
# members may use the instructor's server:
c.JupyterHub.load_groups = {"formgrade-decomp": {"users": [INSTRUCTOR]}}
c.JupyterHub.load_roles.append(
    {
        "name": "formgrade-decomp",
        "groups": ["formgrade-decomp"],
        "scopes": [f"access:servers!user={INSTRUCTOR}", f"read:users!user={INSTRUCTOR}"],
    }
)

# --- each user's server --------------------------------------------------------------------
c.JupyterHub.spawner_class = "localprocess"  # a process per user, run as that Unix user
c.Spawner.cmd = [os.path.join(_env("BIN"), "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.start_timeout = 60
c.Spawner.http_timeout = 60
c.Spawner.env_keep = ["LANG", "LC_ALL", "TZ"]
c.Spawner.environment = {
    "PATH": f"{_env('BIN')}:/usr/local/bin:/usr/bin:/bin",
}
# Memory a single server (and its kernels) may use; LocalProcessSpawner does not enforce
# it, a container spawner does (see docs/deploy.md for the measured figure).
c.Spawner.mem_limit = "1G"


def _role_config(spawner):
    """Instructor and students get different Jupyter configs: the formgrader for the one,
    the assignment list only for the others. The hub itself sets JUPYTERHUB_USER, which
    decompkit.exercises.params reads to pick each student's numbers."""
    role = "instructor" if spawner.user.name == INSTRUCTOR else "student"
    config_path = os.path.join(CONFIGS, role)
    spawner.environment = {**spawner.environment, "JUPYTER_CONFIG_PATH": config_path}


c.Spawner.pre_spawn_hook = _role_config
# Idle servers hold memory: cull them (pip install jupyterhub-idle-culler), e.g.
#   c.JupyterHub.services.append({"name": "idle-culler",
#       "command": [sys.executable, "-m", "jupyterhub_idle_culler", "--timeout=3600"]})
#   c.JupyterHub.load_roles.append({"name": "idle-culler", "services": ["idle-culler"],
#       "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]})
