"""LTI 1.3 launches from the course's LMS (Canvas, Moodle, ...): ltiauthenticator's ``LTI13Authenticator`` with the course's checks.

``jupyterhub_config.py`` uses :class:`CourseLTIAuthenticator` when ``DP_HUB_LTI=1`` (see deploy/README.md).
ltiauthenticator does the OIDC third-party login of LTI 1.3: the LMS asks ``/hub/lti13/oauth_login``
to start a launch, the hub sends the browser back to the LMS's authorization URL with a fresh ``state``
and ``nonce`` (both kept in encrypted cookies), and the LMS posts a signed ``id_token`` to
``/hub/lti13/oauth_callback``. ltiauthenticator checks the signature against the LMS's JWKS (RS256
only), ``iss``, ``aud`` (the client id), ``exp``, ``iat`` (at most 10 minutes old), the LTI claims,
``state`` against its cookie and ``nonce`` against its cookie. What this module adds:

- **replays**: a ``nonce`` is accepted once. ltiauthenticator's nonce is stateless (a hash of a
  cookie), so a captured launch posted again with its cookies would log in again; here each nonce is
  remembered until its token could no longer pass the time checks anyway;
- **deployments**: the ``deployment_id`` must be one of the course's (the tool's other installations
  in the LMS cannot launch this hub);
- **roles**: the course roles (context membership) decide the hub role: Instructor and
  TeachingAssistant -> instructor, Learner -> student; any other launch (no course role, or only an
  institution role such as "Faculty") is refused. The role becomes the user's hub group
  (``Authenticator.manage_groups``), read by ``jupyterhub_config.give_role``; it is set again at
  every launch;
- **the user id**: the claim ``username_key`` (``sub``, the LMS's user id, unless configured) becomes
  the hub user, the Unix account and the nbgrader student id, as it is: a value that is no student id
  (:func:`dpgrader.ids.valid_student_id`), or a missing claim, is refused with a message, never
  lower-cased (JupyterHub's default) or replaced by another claim, which could merge two students;
- **accounts** (``create_system_users``, one machine): the Unix account is made at the first launch
  (private home) in ``system_group``; an existing account outside that group (``root``, a staff
  account) is refused, so a launch can never start a server as it. An id ``useradd`` refuses
  (longer than 32 characters, such as Canvas's ``sub``) is refused with ``useradd``'s reason;
- **cookies**: over HTTPS the state and nonce cookies are ``SameSite=None; Secure``, so that
  browsers send them with the LMS's cross-site form post.
"""

from __future__ import annotations

import grp
import os
import pwd
import subprocess
import time

from ltiauthenticator.lti13.auth import LTI13Authenticator
from ltiauthenticator.lti13.error import IncorrectValueError, LoginError, TokenError
from ltiauthenticator.lti13.handlers import LTI13CallbackHandler, LTI13LoginInitHandler
from ltiauthenticator.lti13.validator import LTI13LaunchValidator
from traitlets import Bool, Unicode
from traitlets import Set as SetTrait

from dpgrader.ids import valid_student_id

ROLES_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/roles"
DEPLOYMENT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"
CUSTOM_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/custom"
MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
#: Course (context) roles that make a hub instructor; LTI 1.3 also allows the simple names.
INSTRUCTOR_ROLES = frozenset(
    {f"{MEMBERSHIP}#Instructor", f"{MEMBERSHIP}/Instructor#TeachingAssistant", "Instructor", "TeachingAssistant"}
)
#: Course (context) roles that make a hub student.
STUDENT_ROLES = frozenset({f"{MEMBERSHIP}#Learner", "Learner"})


def course_role(roles: object) -> str | None:
    """The hub role of an LTI ``roles`` claim: ``"instructor"``, ``"student"`` or ``None`` (refused).

    Instructor wins over Learner (a teaching assistant who is also enrolled). Institution and
    system roles (``.../institution/person#Instructor``) say nothing about this course and count for nothing.

    Examples
    --------
    >>> course_role(["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"])
    'student'
    >>> course_role(["http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"])
    'instructor'
    >>> print(course_role(["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"]))
    None
    """
    if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
        return None
    if INSTRUCTOR_ROLES.intersection(roles):
        return "instructor"
    if STUDENT_ROLES.intersection(roles):
        return "student"
    return None


class NonceRegister:
    """Nonces already used, each kept until ``forget_after`` (a token carrying it is refused by then anyway)."""

    def __init__(self) -> None:
        self._until: dict[str, float] = {}

    def first_use(self, nonce: str, forget_after: float) -> bool:
        """Record ``nonce``; ``False`` if it was recorded before (a replay)."""
        now = time.time()
        self._until = {n: t for n, t in self._until.items() if t > now}
        if nonce in self._until:
            return False
        self._until[nonce] = forget_after
        return True


class CourseLoginInitHandler(LTI13LoginInitHandler):
    """ltiauthenticator's login initiation, with cross-site state and nonce cookies over HTTPS."""

    def _set_oauth_cookie(self, key: str, value) -> None:
        cross_site = {"samesite": "None", "secure": True} if self.authenticator.get_uri_scheme(self.request) == "https" else {}
        self._set_cookie(key, value, expires_days=1, httponly=True, encrypted=True, **cross_site)


class CourseCallbackHandler(LTI13CallbackHandler):
    """ltiauthenticator's launch check, then: the course's deployments, one use per nonce."""

    def decode_and_validate_launch_request(self) -> dict:
        id_token = super().decode_and_validate_launch_request()
        deployments = self.authenticator.deployment_ids
        if id_token.get(DEPLOYMENT_CLAIM) not in deployments:
            raise IncorrectValueError(
                f"deployment_id {id_token.get(DEPLOYMENT_CLAIM)!r} is not one of this hub's ({', '.join(sorted(deployments))})"
            )
        times = LTI13LaunchValidator(parent=self.app)  # its max_age and time_leeway, as configured
        forget_after = max(float(id_token["exp"]), float(id_token["iat"]) + times.max_age) + times.time_leeway + 60
        if not self.authenticator.used_nonces.first_use(str(id_token["nonce"]), forget_after):
            raise TokenError("this launch was used before (its nonce is spent): a replayed launch is refused")
        return id_token


class CourseLTIAuthenticator(LTI13Authenticator):
    """LTI 1.3 launches with the course's roles, ids and accounts (see the module's docstring)."""

    login_handler = CourseLoginInitHandler
    callback_handler = CourseCallbackHandler

    username_key = Unicode(
        "sub",
        config=True,
        help="The id_token claim that is the student id (``custom_<name>``: a custom parameter). Never falls back to another.",
    )
    deployment_ids = SetTrait(Unicode(), config=True, help="The LMS's deployment ids of this tool that may launch the hub.")
    instructors_group = Unicode("dp-instructors", config=True, help="The hub group of instructors.")
    students_group = Unicode("dp-students", config=True, help="The hub group of students.")
    create_system_users = Bool(False, config=True, help="Make a Unix account at a user's first launch (one machine).")
    system_group = Unicode("dp-lti", config=True, help="The Unix group of the accounts the launches made; no other account is used.")

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.used_nonces = NonceRegister()

    def normalize_username(self, username: str) -> str:
        """The id as the LMS sent it: ``Ada`` and ``ada`` are two students, never merged by lower-casing."""
        return username

    def get_username(self, token: dict) -> str:
        """The student id from the claim ``username_key``; :class:`LoginError` if it is missing or no student id."""
        key = self.username_key
        if key.startswith("custom_"):  # a custom parameter of the tool's LMS registration
            claims, claim = token.get(CUSTOM_CLAIM), key[len("custom_") :]
        else:
            claims, claim = token, key
        name = claims.get(claim) if isinstance(claims, dict) else None
        if name is None:
            raise LoginError(f"the launch has no {key!r} claim, the student id of this hub (username_key)")
        if not valid_student_id(name):
            raise LoginError(
                f"the LMS user id {name!r} (claim {key!r}) is no student id of this course: 1 to 128 of "
                "A-Z a-z 0-9 . _ @ -, not starting with . or -; ask the course's staff"
            )
        return name

    async def authenticate(self, handler, data: dict | None = None) -> dict:
        """The hub user of a checked launch: its student id and its role's group; :class:`LoginError` for any refusal."""
        data = data or {}
        name = self.get_username(data)
        role = course_role(data.get(ROLES_CLAIM))
        if role is None:
            raise LoginError(
                f"{name!r} has no role in this course the hub knows (Instructor, TeachingAssistant or Learner); "
                f"the LMS sent {data.get(ROLES_CLAIM)!r}"
            )
        if self.create_system_users:
            self.ensure_system_user(name)
        group = self.instructors_group if role == "instructor" else self.students_group
        self.log.info("LTI 1.3 launch: %s as %s", name, role)
        return {"name": name, "groups": [group]}

    def ensure_system_user(self, name: str) -> None:
        """The Unix account ``name`` in ``system_group``, made with a private home if missing; :class:`LoginError` if it cannot be.

        The account gets a group of its own (``useradd``'s default), as the accounts of ``local_hub.py`` do:
        students share no group that could read each other's files.
        """
        if subprocess.run(["getent", "group", self.system_group], capture_output=True).returncode != 0:
            subprocess.run(["groupadd", self.system_group], capture_output=True, check=True)
        try:
            pwd.getpwnam(name)
        except KeyError:
            made = subprocess.run(
                ["useradd", "--create-home", "--shell", "/bin/bash", "--groups", self.system_group, "--", name],
                capture_output=True,
                text=True,
            )
            if made.returncode == 0:
                os.chmod(pwd.getpwnam(name).pw_dir, 0o700)
                return
            try:  # made meanwhile by a launch of the same user at the same moment: checked below
                pwd.getpwnam(name)
            except KeyError:
                raise LoginError(
                    f"the LMS user id {name!r} cannot be a Unix account on this machine ({made.stderr.strip()}); "
                    "choose a shorter id claim (username_key, deploy/README.md) or run the hub on Kubernetes"
                ) from None
        if name not in grp.getgrnam(self.system_group).gr_mem:
            raise LoginError(
                f"the LMS user id {name!r} is an existing account of this machine that no launch made: refused"
            )
