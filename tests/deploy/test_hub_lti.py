"""LTI 1.3 launches through the real hub and ltiauthenticator, from a small LMS of the test's own.

The test plays the LMS (the "platform"): it has an RSA key, serves its public half as a JWKS on a
loopback port, starts each launch at the hub's OIDC login initiation (``/hub/lti13/oauth_login``),
follows the hub's redirect to its authorization URL, signs an ``id_token`` with the ``nonce`` and
``state`` the hub chose, and posts it to the hub's callback, as Canvas or Moodle does. The hub is
deploy/jupyterhub/jupyterhub_config.py with ``DP_HUB_LTI=1`` (deploy/jupyterhub/course_lti.py).

- a Learner lands in a student server, an Instructor in an instructor server (the Unix account is
  made at the first launch; the role comes from the launch, not from any Unix group);
- refused: a token signed by another key under the LMS's key id, for another client id, expired,
  from another deployment, a launch posted a second time with its cookies (a replayed nonce), a
  user id that is no student id or no Unix account name, an existing account no launch made
  (``root``), a launch with no course role.

Needs root (it creates system users; CI runs as root) and ``.venv-hub`` (``make hub-install``);
outside CI a missing piece skips it, in CI it fails. One hub for the module; about a minute on a loaded
2-core machine: the hub starting (~17 s), the two servers starting (~16 s each), the hub stopping (~9 s).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import jwt  # PyJWT, with ltiauthenticator (the test extra)
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa

from helpers.hub import hub_venv, local_hub, new_hub, running_hub, skip_or_fail

pytestmark = pytest.mark.browser  # starts a hub: with the other hub and browser tests, not in make test-fast

ISSUER = "https://lms.example.test"
CLIENT_ID = "10000000000042"
DEPLOYMENT_ID = "7:dp-course-2026"
KID = "lms-key-1"
LEARNER, INSTRUCTOR = "dpltiAda.L", "dplti-Teach"  # mixed case: kept as the LMS sent it
SYSTEM_GROUP = "dplti-test"
SPAWN_TIMEOUT = 180
LTI = "https://purl.imsglobal.org/spec/lti/claim"
ROLE_LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
ROLE_INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"


class Platform:
    """The test's LMS: a signing key, a forger's key, a JWKS served on loopback, and the launch it performs."""

    def __init__(self):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.forged_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        jwks = json.dumps({"keys": [{**jwk, "kid": KID, "alg": "RS256", "use": "sig"}]}).encode()
        self.jwks_requests = 0
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path != "/jwks":
                    self.send_error(404)
                    return
                platform.jwks_requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(jwks)))
                self.end_headers()
                self.wfile.write(jwks)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def settings(self) -> dict[str, str]:
        """What an LMS shows the admin after registering the tool, as the hub's environment."""
        return {
            "DP_HUB_LTI": "1",
            "DP_LTI_ISSUER": ISSUER,
            "DP_LTI_CLIENT_ID": CLIENT_ID,
            "DP_LTI_DEPLOYMENT_IDS": DEPLOYMENT_ID,
            "DP_LTI_AUTHORIZE_URL": f"{self.url}/authorize",
            "DP_LTI_JWKS_URL": f"{self.url}/jwks",
            "DP_LTI_SYSTEM_GROUP": SYSTEM_GROUP,
        }

    def claims(self, hub_url: str, sub: str, roles: list[str], nonce: str, **changes) -> dict:
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "aud": CLIENT_ID,
            "sub": sub,
            "nonce": nonce,
            "iat": now,
            "exp": now + 300,
            "name": "Someone",
            f"{LTI}/message_type": "LtiResourceLinkRequest",
            f"{LTI}/version": "1.3.0",
            f"{LTI}/deployment_id": DEPLOYMENT_ID,
            f"{LTI}/target_link_uri": f"{hub_url}/",
            f"{LTI}/resource_link": {"id": "dp-course-jupyterhub-link"},
            f"{LTI}/roles": roles,
            f"{LTI}/context": {"id": "dp-course-2026", "label": "DP", "title": "Differential privacy"},
        }
        claims.update(changes)
        return {k: v for k, v in claims.items() if v is not None}

    def start(self, hub_url: str, sub: str) -> tuple[requests.Session, dict]:
        """A launch's first half: the LMS's login initiation, and the authentication request the hub redirects to."""
        session = requests.Session()
        started = session.post(
            f"{hub_url}/hub/lti13/oauth_login",
            data={"iss": ISSUER, "login_hint": sub, "target_link_uri": f"{hub_url}/", "client_id": CLIENT_ID,
                  "lti_deployment_id": DEPLOYMENT_ID, "lti_message_hint": "resource-link-1"},
            allow_redirects=False,
        )
        assert started.status_code == 302, (started.status_code, started.text[:500])
        location = urlparse(started.headers["Location"])
        assert f"{location.scheme}://{location.netloc}{location.path}" == f"{self.url}/authorize"
        request = {k: v[0] for k, v in parse_qs(location.query).items()}
        assert request["client_id"] == CLIENT_ID and request["login_hint"] == sub
        assert request["response_type"] == "id_token" and request["response_mode"] == "form_post"
        assert request["scope"] == "openid" and request["prompt"] == "none"
        assert request["redirect_uri"] == f"{hub_url}/hub/lti13/oauth_callback"
        return session, request

    def launch(self, hub_url: str, sub: str, roles: list[str], key=None, **changes):
        """One LTI 1.3 launch: (the callback's response, the session, what was posted to the callback, its cookies)."""
        session, request = self.start(hub_url, sub)
        token = jwt.encode(self.claims(hub_url, sub, roles, request["nonce"], **changes), key or self.key,
                           algorithm="RS256", headers={"kid": KID})
        posted = {"id_token": token, "state": request["state"]}
        cookies = session.cookies.get_dict()
        response = session.post(request["redirect_uri"], data=posted, allow_redirects=False)
        return response, session, posted, cookies

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def platform():
    platform = Platform()
    yield platform
    platform.close()


@pytest.fixture(scope="module")
def hub(platform):
    """The course's hub with the LTI switch on, trusting ``platform``; its users and state removed afterwards."""
    venv = hub_venv("needs root: the hub makes a Unix account at each user's first launch")
    if subprocess.run([str(venv / "bin" / "python"), "-c", "import ltiauthenticator"], capture_output=True).returncode:
        skip_or_fail(f"{venv} has no ltiauthenticator: run `make hub-install` again")
    base, hub = new_hub("dp-hub-lti-", instructors=[INSTRUCTOR], students=[LEARNER],
                        # hub groups here; tear_down's groupdel finds no such Unix group
                        instructors_group="dplti-instructors", students_group="dplti-students",
                        venv=venv, extra_env=platform.settings)
    hub.state.mkdir(mode=0o700)
    hub.exchange.mkdir()
    hub.exchange.chmod(0o1777)
    try:
        with running_hub(hub, base / "jupyterhub.log"):
            yield hub
    finally:
        local_hub.tear_down(hub)
        subprocess.run(["groupdel", SYSTEM_GROUP], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def account(name: str):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def open_server(hub, session, name: str) -> requests.Response:
    """Start ``name``'s server from their hub session and return its JupyterLab page."""
    session.get(f"{hub.url}/hub/spawn", allow_redirects=True)
    deadline = time.monotonic() + SPAWN_TIMEOUT
    while True:
        page = session.get(f"{hub.url}/user/{name}/lab", allow_redirects=True)
        if page.status_code == 200 and page.url.startswith(f"{hub.url}/user/{name}/lab") and "jupyter-config-data" in page.text:
            return page
        if time.monotonic() > deadline:
            pytest.fail(f"{name}'s server did not start: {page.status_code} {page.url}\n{hub.log_path.read_text()[-3000:]}")
        time.sleep(1)


def server_environment(name: str) -> dict[str, str]:
    """The environment of ``name``'s single-user server (root reads /proc)."""
    uid = pwd.getpwnam(name).pw_uid
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if proc.stat().st_uid != uid or b"jupyterhub-singleuser" not in (proc / "cmdline").read_bytes():
                continue
            pairs = (item.split(b"=", 1) for item in (proc / "environ").read_bytes().split(b"\0") if b"=" in item)
            return {k.decode(): v.decode() for k, v in pairs}
        except OSError:
            continue
    pytest.fail(f"no server process of {name}")


def lab_disabled_extensions(page: requests.Response) -> list[str]:
    start = page.text.index('id="jupyter-config-data"')
    body = page.text[page.text.index(">", start) + 1 : page.text.index("</script>", start)]
    return list(json.loads(body).get("disabledExtensions", []))


def test_a_learner_lands_in_a_student_server(hub, platform):
    assert account(LEARNER) is None
    response, session, _, _ = platform.launch(hub.url, LEARNER, [ROLE_LEARNER, "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"])
    assert response.status_code == 302, (response.status_code, response.text[-1500:])
    assert account(LEARNER) is not None, "the first launch made no Unix account"
    assert account(LEARNER).pw_dir and (os.stat(account(LEARNER).pw_dir).st_mode & 0o777) == 0o700
    page = open_server(hub, session, LEARNER)
    environment = server_environment(LEARNER)
    assert environment["DP_COURSE_ROLE"] == "student"
    assert environment["JUPYTER_CONFIG_PATH"].endswith("deploy/jupyterhub/jupyter/student")
    assert environment["USER"] == LEARNER  # nbgrader's student id: the LMS's user id, case kept
    assert "@jupyter/nbgrader:formgrader" in lab_disabled_extensions(page)
    assert session.get(f"{hub.url}/user/{LEARNER}/formgrader").status_code == 404
    # another user's server is not theirs to open
    other = session.get(f"{hub.url}/user/{INSTRUCTOR}/lab", allow_redirects=False)
    assert other.status_code in (302, 403, 404, 424) and "jupyter-config-data" not in other.text


def test_an_instructor_lands_in_an_instructor_server(hub, platform):
    response, session, _, _ = platform.launch(hub.url, INSTRUCTOR, [ROLE_INSTRUCTOR])
    assert response.status_code == 302, (response.status_code, response.text[-1500:])
    page = open_server(hub, session, INSTRUCTOR)
    environment = server_environment(INSTRUCTOR)
    assert environment["DP_COURSE_ROLE"] == "instructor"
    assert environment["JUPYTER_CONFIG_PATH"].endswith("deploy/jupyterhub/jupyter/instructor")
    assert not [name for name in lab_disabled_extensions(page) if "nbgrader" in name]
    assert session.get(f"{hub.url}/user/{INSTRUCTOR}/formgrader", allow_redirects=False).status_code != 404


def refused(response, status: int, *words: str) -> str:
    assert response.status_code == status, (response.status_code, response.text[-1500:])
    for word in words:
        assert word in response.text, (word, response.text[-1500:])
    assert "jupyterhub-session-id" not in response.cookies and not any(c.startswith("jupyterhub-hub-login") for c in response.cookies.keys())
    return response.text


@pytest.mark.parametrize(
    "case, status, words",
    [
        ("signed by another key under the LMS's key id", 400, ["Signature verification failed"]),
        ("for another tool (audience)", 401, ["Audience"]),
        ("expired", 400, ["expired"]),
        ("issued 20 minutes ago", 400, ["too long ago"]),
        ("from another deployment", 400, ["deployment_id", "not one of this hub"]),
    ],
)
def test_forged_or_expired_launches_are_refused(hub, platform, case, status, words):
    now = int(time.time())
    changes = {
        "signed by another key under the LMS's key id": {"key": platform.forged_key},
        "for another tool (audience)": {"aud": "another-tool"},
        "expired": {"iat": now - 400, "exp": now - 100},
        "issued 20 minutes ago": {"iat": now - 1200},
        "from another deployment": {f"{LTI}/deployment_id": "8:another-course"},
    }[case]
    response, *_ = platform.launch(hub.url, "dplti-mallory", [ROLE_INSTRUCTOR], **changes)
    refused(response, status, *words)
    assert account("dplti-mallory") is None


def test_a_replayed_launch_is_refused(hub, platform):
    """A captured launch (form and cookies) posted again: ltiauthenticator's own nonce check alone would accept it."""
    response, session, posted, cookies = platform.launch(hub.url, LEARNER, [ROLE_LEARNER])
    assert response.status_code == 302, response.text[-1500:]
    replay = requests.post(f"{hub.url}/hub/lti13/oauth_callback", data=posted, cookies=cookies, allow_redirects=False)
    refused(replay, 400, "used before")
    # nor can the token of one launch serve another: posted with a new launch's state and cookies (ltiauthenticator's check)
    session, request = platform.start(hub.url, LEARNER)
    mixed = session.post(request["redirect_uri"], data={**posted, "state": request["state"]}, allow_redirects=False)
    refused(mixed, 400, "nonce mismatch")


def test_over_https_the_launch_cookies_are_sent_cross_site(hub):
    """Behind TLS the LMS's form post is cross-site: the state and nonce cookies must be SameSite=None; Secure."""
    started = requests.post(
        f"{hub.url}/hub/lti13/oauth_login",
        data={"iss": ISSUER, "login_hint": LEARNER, "target_link_uri": f"{hub.url}/", "client_id": CLIENT_ID},
        headers={"X-Forwarded-Proto": "https"},  # as nginx or Caddy terminating TLS in front of the hub sends it
        allow_redirects=False,
    )
    assert started.status_code == 302
    assert parse_qs(urlparse(started.headers["Location"]).query)["redirect_uri"][0].startswith("https://")
    cookies = [c for c in started.raw.headers.getlist("Set-Cookie") if c.startswith("lti13authenticator-")]
    assert len(cookies) == 2, cookies
    for cookie in cookies:
        attributes = {a.strip().lower() for a in cookie.split(";")[1:]}
        assert {"samesite=none", "secure", "httponly"} <= attributes, cookie


@pytest.mark.parametrize(
    "sub, roles, words",
    [
        ("<img src=x onerror=alert(1)>", [ROLE_LEARNER], ["is no student id"]),
        ("a6d5c443-1f51-4783-ba1a-7686ffe3b54a", [ROLE_LEARNER], ["cannot be a Unix account"]),  # Canvas's sub: 36 characters
        ("root", [ROLE_INSTRUCTOR], ["existing account", "no launch made"]),
        ("dplti-guest", ["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"], ["no role in this course"]),
    ],
)
def test_launches_of_unusable_users_are_refused(hub, platform, sub, roles, words):
    response, *_ = platform.launch(hub.url, sub, roles)
    text = refused(response, 400, *[w for w in words if "<" not in w])
    assert "<img src=x" not in text, "the refused id is echoed as markup"
    if sub != "root":
        assert account(sub) is None
