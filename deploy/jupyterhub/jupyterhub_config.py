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

The switch ``DP_HUB_LTI=1`` replaces the Unix logins with LTI 1.3 launches from the course's LMS
(``course_lti.py``; deploy/README.md says how to register the tool): the LMS's course role decides the
role (Instructor, TeachingAssistant: instructor; Learner: student; the two names above become hub
groups), the LMS's user id is the hub user, the Unix account (made at the first launch) and the
nbgrader student id. It needs, from the tool's registration in the LMS:

- ``DP_LTI_ISSUER`` (the platform's ``iss``), ``DP_LTI_CLIENT_ID``, ``DP_LTI_DEPLOYMENT_IDS``
  (comma-separated), ``DP_LTI_AUTHORIZE_URL`` (OIDC authorization endpoint), ``DP_LTI_JWKS_URL``;
- ``DP_LTI_USERNAME_KEY`` [sub]: the claim that is the student id (``custom_<name>`` for a custom parameter);
- ``DP_LTI_SYSTEM_GROUP`` [dp-lti]: the Unix group of the accounts the launches make.

Roles: each user's server gets ``JUPYTER_CONFIG_PATH=deploy/jupyterhub/jupyter/<role>``. Students get
the Assignment List and Validate, and no formgrader, course list or Create Assignment (server
extension and JupyterLab plug-in both off); instructors get everything, with their course folder in
``~/dp-course`` (``jupyter/instructor/nbgrader_config.py``).
"""

import grp
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VENV = Path(os.environ.get("DP_HUB_VENV", REPO / ".venv-hub"))
STATE = Path(os.environ.get("DP_HUB_STATE", "/srv/dp-course-hub"))
EXCHANGE = os.environ.get("DP_HUB_EXCHANGE", "/srv/nbgrader/exchange")
INSTRUCTORS = os.environ.get("DP_HUB_INSTRUCTORS", "dp-instructors")
STUDENTS = os.environ.get("DP_HUB_STUDENTS", "dp-students")
LTI = os.environ.get("DP_HUB_LTI", "0") == "1"

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



def required(name: str) -> str:
    """The environment variable ``name``; stop with its name if it is unset or empty (no launch without it)."""
    value = os.environ.get(name, "").strip()
    if not value:
        raise SystemExit(f"DP_HUB_LTI=1 needs {name} (from the tool's registration in the LMS, see deploy/README.md)")
    return value


if LTI:
    # --- who may log in: whoever the course's LMS launches, with a signed LTI 1.3 id_token (course_lti.py)
    sys.path.insert(0, str(HERE))
    from course_lti import CourseLTIAuthenticator

    c.JupyterHub.authenticator_class = CourseLTIAuthenticator
    c.CourseLTIAuthenticator.issuer = required("DP_LTI_ISSUER")
    c.CourseLTIAuthenticator.client_id = {i.strip() for i in required("DP_LTI_CLIENT_ID").split(",") if i.strip()}
    c.CourseLTIAuthenticator.deployment_ids = {i.strip() for i in required("DP_LTI_DEPLOYMENT_IDS").split(",") if i.strip()}
    c.CourseLTIAuthenticator.authorize_url = required("DP_LTI_AUTHORIZE_URL")
    c.CourseLTIAuthenticator.jwks_endpoint = required("DP_LTI_JWKS_URL")
    c.CourseLTIAuthenticator.username_key = os.environ.get("DP_LTI_USERNAME_KEY", "sub")
    c.CourseLTIAuthenticator.instructors_group = INSTRUCTORS  # hub groups, set at every launch from the LMS role
    c.CourseLTIAuthenticator.students_group = STUDENTS
    c.CourseLTIAuthenticator.manage_groups = True
    c.CourseLTIAuthenticator.allow_all = True  # the LMS decides who is in the course; the roles check refuses the rest
    c.CourseLTIAuthenticator.create_system_users = True
    c.CourseLTIAuthenticator.system_group = os.environ.get("DP_LTI_SYSTEM_GROUP", "dp-lti")
    c.CourseLTIAuthenticator.tool_name = "DP course"
else:
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


def role_of(username: str, hub_groups: list[str] | None = None) -> str:
    """``"instructor"`` for members of the instructors' group, else ``"student"``.

    With LTI the group is the hub's (``hub_groups``, set from the LMS's role at each launch), else the Unix one.
    """
    if LTI:
        return "instructor" if INSTRUCTORS in (hub_groups or []) else "student"
    try:
        return "instructor" if username in grp.getgrnam(INSTRUCTORS).gr_mem else "student"
    except KeyError:  # no such group: nobody is an instructor
        return "student"


def give_role(spawner) -> None:
    """Point the user's server at its role's Jupyter config (extensions on/off, nbgrader settings)."""
    role = role_of(spawner.user.name, [group.name for group in spawner.user.groups])
    spawner.environment = {**spawner.environment, "JUPYTER_CONFIG_PATH": str(HERE / "jupyter" / role), "DP_COURSE_ROLE": role}


c.Spawner.pre_spawn_hook = give_role
