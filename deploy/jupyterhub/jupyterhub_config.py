"""JupyterHub for one class on one machine: students and instructors as system users, nbgrader's exchange.

Run as root (the hub starts each user's server as that user):
``jupyterhub -f deploy/jupyterhub/jupyterhub_config.py`` (``make hub`` does it for a trial, with made-up
users: ``deploy/jupyterhub/local_hub.py``). Every setting a class changes comes from an
environment variable, with the default in brackets:

- ``DP_HUB_URL`` [http://127.0.0.1:8000]: where the hub listens (put TLS in front of it, see README.md);
  ``DP_HUB_INTERNAL_PORT`` [8081] and ``DP_HUB_PROXY_API_PORT`` [8001]: localhost ports of the hub and the proxy's API;
- ``DP_HUB_STATE`` [/srv/dp-course-hub]: the hub's database, cookie secret and proxy pid (root only);
- ``DP_HUB_EXCHANGE`` [/srv/nbgrader/exchange]: nbgrader's exchange, ``chmod 1777``;
- ``DP_HUB_VENV`` [this repository's .venv-hub]: the course's Python environment, every user's server runs in it;
- ``DP_HUB_INSTRUCTORS`` / ``DP_HUB_STUDENTS`` [dp-instructors / dp-students]: the two Unix groups
  whose members may log in; the group decides the role.

Roles: each user's server gets ``JUPYTER_CONFIG_PATH=deploy/jupyterhub/jupyter/<role>``. Students get
the Assignment List and Validate, and no formgrader, course list or Create Assignment (server
extension and JupyterLab plug-in both off); instructors get everything, with their course folder in
``~/dp-course`` (``jupyter/instructor/nbgrader_config.py``).
"""

import grp
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VENV = Path(os.environ.get("DP_HUB_VENV", REPO / ".venv-hub"))
STATE = Path(os.environ.get("DP_HUB_STATE", "/srv/dp-course-hub"))
EXCHANGE = os.environ.get("DP_HUB_EXCHANGE", "/srv/nbgrader/exchange")
INSTRUCTORS = os.environ.get("DP_HUB_INSTRUCTORS", "dp-instructors")
STUDENTS = os.environ.get("DP_HUB_STUDENTS", "dp-students")

c = get_config()  # noqa: F821 (provided by JupyterHub)

# --- the hub and its proxy: localhost only; TLS terminates in front (nginx, caddy) or via ssl_cert/ssl_key
c.JupyterHub.bind_url = os.environ.get("DP_HUB_URL", "http://127.0.0.1:8000")
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ.get("DP_HUB_INTERNAL_PORT", "8081"))  # the hub's own API, behind the proxy
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{os.environ.get('DP_HUB_PROXY_API_PORT', '8001')}"
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
# The proxy: npm's configurable-http-proxy (pinned in package.json / package-lock.json, `npm ci` by
# `make hub-install`); without Node.js, the Python implementation from PyPI (the `hub` extra), which
# buffers the spawn page's progress stream (users then reload the page once their server is up).
NPM_PROXY = HERE / "node_modules" / ".bin" / "configurable-http-proxy"
c.ConfigurableHTTPProxy.command = [str(NPM_PROXY if NPM_PROXY.exists() else VENV / "bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")

# --- who may log in: system users (PAM: their Unix password) in one of the two groups
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.allowed_groups = {INSTRUCTORS, STUDENTS}
c.PAMAuthenticator.open_sessions = False  # no login session (systemd-logind) per server
c.LocalAuthenticator.create_system_users = False  # accounts are made with useradd (local_hub.py)

# --- each user's server: the course's environment, their home as the root folder, their role's extensions
c.Spawner.cmd = [str(VENV / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.http_timeout = 60
c.Spawner.start_timeout = 120
c.Spawner.environment = {
    "PATH": os.pathsep.join([str(VENV / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]),  # nbgrader starts alembic
    "DP_EXCHANGE_ROOT": EXCHANGE,
}


def role_of(username: str) -> str:
    """``"instructor"`` for members of the instructors' group, else ``"student"``."""
    try:
        return "instructor" if username in grp.getgrnam(INSTRUCTORS).gr_mem else "student"
    except KeyError:  # no such group: nobody is an instructor
        return "student"


def give_role(spawner) -> None:
    """Point the user's server at its role's Jupyter config (extensions on/off, nbgrader settings)."""
    role = role_of(spawner.user.name)
    spawner.environment = {**spawner.environment, "JUPYTER_CONFIG_PATH": str(HERE / "jupyter" / role), "DP_COURSE_ROLE": role}


c.Spawner.pre_spawn_hook = give_role
