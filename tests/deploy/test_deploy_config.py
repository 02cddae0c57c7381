"""The deployments in deploy/ parse and agree: one machine (jupyterhub_config.py) and Kubernetes (values.yaml).

No hub or cluster runs here (tests/deploy/test_hub_e2e.py runs the one-machine hub): these checks catch a
values file that no longer parses, names another environment, or drifts from the roles, the
extensions and the exchange of the hub that the browser test proves.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from traitlets.config import Config

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
ROLES = DEPLOY / "jupyterhub" / "jupyter"
INSTRUCTOR_ONLY = ("formgrader", "course_list")
EVERYONE = ("assignment_list", "validate_assignment")


@pytest.fixture(scope="module")
def values() -> dict:
    return yaml.safe_load((DEPLOY / "kubernetes" / "values.yaml").read_text())


@pytest.fixture(scope="module")
def hub_config() -> Config:
    """deploy/jupyterhub/jupyterhub_config.py executed as JupyterHub would, with its default settings."""
    config = Config()
    path = DEPLOY / "jupyterhub" / "jupyterhub_config.py"
    namespace = {"get_config": lambda: config, "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102 (our own config file)
    config.namespace = namespace
    return config


def server_extensions(role: str) -> dict[str, bool]:
    config = json.loads((ROLES / role / "jupyter_server_config.json").read_text())
    return {name.rsplit(".", 1)[1]: on for name, on in config["ServerApp"]["jpserver_extensions"].items()}


def lab_disabled(role: str) -> dict[str, bool]:
    return json.loads((ROLES / role / "labconfig" / "page_config.json").read_text())["disabledExtensions"]


def test_students_get_assignment_list_and_validate_only():
    students, instructors = server_extensions("student"), server_extensions("instructor")
    assert all(students[name] for name in EVERYONE) and not any(students[name] for name in INSTRUCTOR_ONLY)
    assert all(instructors[name] for name in EVERYONE + INSTRUCTOR_ONLY)
    assert lab_disabled("student") == {f"@jupyter/nbgrader:{p}": True for p in ("formgrader", "create-assignment", "course-list")}
    assert not any(lab_disabled("instructor").values())


def test_one_machine_hub_settings(hub_config):
    assert hub_config.JupyterHub.bind_url.startswith("http://127.0.0.1:")
    assert hub_config.JupyterHub.authenticator_class == "pam"
    assert hub_config.Spawner.cmd[0].endswith(".venv-hub/bin/jupyterhub-singleuser")
    assert hub_config.Spawner.environment["DP_EXCHANGE_ROOT"] == "/srv/nbgrader/exchange"
    assert hub_config.ConfigurableHTTPProxy.command[0].endswith("/configurable-http-proxy")
    lock = json.loads((DEPLOY / "jupyterhub" / "package-lock.json").read_text())
    pinned = json.loads((DEPLOY / "jupyterhub" / "package.json").read_text())["dependencies"]["configurable-http-proxy"]
    assert lock["packages"]["node_modules/configurable-http-proxy"]["version"] == pinned
    assert hub_config.namespace["role_of"]("nobody-in-a-group-that-does-not-exist") == "student"


def test_values_parse_and_name_the_course_image(values):
    image = values["singleuser"]["image"]
    assert image["name"].endswith("/dp-course-singleuser") and image["tag"]
    dockerfile = (DEPLOY / "kubernetes" / "Dockerfile").read_text()
    assert "pip install --no-cache-dir -e '.[hub]'" in dockerfile, "the image is not the course's environment"
    assert "source/" in (DEPLOY / "kubernetes" / "Dockerfile.dockerignore").read_text().splitlines()
    assert values["singleuser"]["defaultUrl"] == "/lab"
    assert values["singleuser"]["cmd"] == "jupyterhub-singleuser"


def test_values_mount_the_same_exchange(values, hub_config):
    exchange = hub_config.Spawner.environment["DP_EXCHANGE_ROOT"]
    assert values["singleuser"]["extraEnv"]["DP_EXCHANGE_ROOT"] == exchange
    mounts = {m["name"]: m["mountPath"] for m in values["singleuser"]["storage"]["extraVolumeMounts"]}
    volumes = {v["name"]: v for v in values["singleuser"]["storage"]["extraVolumes"]}
    assert mounts["nbgrader-exchange"] == exchange
    claim = volumes["nbgrader-exchange"]["persistentVolumeClaim"]["claimName"]
    pvc = yaml.safe_load((DEPLOY / "kubernetes" / "exchange-pvc.yaml").read_text())
    assert pvc["metadata"]["name"] == claim and pvc["spec"]["accessModes"] == ["ReadWriteMany"]


def test_values_give_the_same_roles(values):
    code = values["hub"]["config"] and values["hub"]["extraConfig"]["dp-course-roles"]
    config = Config()
    namespace = {"c": config}
    exec(compile(code, "values.yaml:dp-course-roles", "exec"), namespace)  # noqa: S102
    hook = config.KubeSpawner.pre_spawn_hook

    class Spawner:
        def __init__(self, name):
            self.user = type("User", (), {"name": name})()
            self.environment = {"DP_EXCHANGE_ROOT": "/srv/nbgrader/exchange"}

    for name, role in (("instructor1", "instructor"), ("student1", "student")):
        spawner = Spawner(name)
        hook(spawner)
        path = spawner.environment["JUPYTER_CONFIG_PATH"]
        assert path == f"/opt/dp-course/deploy/jupyterhub/jupyter/{role}"
        assert (ROLES / role).is_dir(), f"{path} is not in the repository (the image copies it to /opt/dp-course)"
    assert values["hub"]["config"]["Authenticator"]["admin_users"] == [], "instructors must not be hub admins"


def test_values_give_each_user_a_uid_of_their_own_and_the_collect_its_owners(values, tmp_path):
    """Check the pods' uids differ per user and stay the same, the hub records them, and only instructors see the record."""
    from dpgrader.exchange import owner_name, read_owners_file

    config = Config()
    namespace = {"c": config}
    for key in ("dp-course-roles", "dp-course-uids"):  # z2jh runs extraConfig in the order of its keys
        exec(compile(values["hub"]["extraConfig"][key], f"values.yaml:{key}", "exec"), namespace)  # noqa: S102
    namespace["OWNERS"] = str(tmp_path / "owners" / "passwd")
    hook = config.KubeSpawner.pre_spawn_hook

    class Spawner:
        def __init__(self, name, number):
            self.user = type("User", (), {"name": name, "id": number})()
            self.environment = {"DP_EXCHANGE_ROOT": "/srv/nbgrader/exchange"}
            self.image, self.volumes, self.volume_mounts = "course-image", [], []
            self.init_containers = [{"name": "block-cloud-metadata"}]  # z2jh's, kept

    spawned = {}
    for name, number in (("instructor1", 1), ("student1", 2), ("student2", 3), ("student1", 2)):
        spawned[name] = spawner = Spawner(name, number)
        hook(spawner)
        assert spawner.init_containers[0] == {"name": "block-cloud-metadata"}
        assert spawner.init_containers[1]["command"][-2:] == [name, str(spawner.uid)]  # arguments, not shell text
        assert {"name": "passwd", "mountPath": "/etc/passwd", "subPath": "passwd", "readOnly": True} in spawner.volume_mounts
    assert [spawned[n].uid for n in ("instructor1", "student1", "student2")] == [100001, 100002, 100003]
    assert spawned["instructor1"].environment["DP_EXCHANGE_OWNERS"] == "/srv/nbgrader-owners/passwd"
    assert "DP_EXCHANGE_OWNERS" not in spawned["student1"].environment
    owners = read_owners_file(tmp_path / "owners" / "passwd")
    assert {uid: owner_name(uid, owners) for uid in owners} == {100001: "instructor1", 100002: "student1", 100003: "student2"}
    with pytest.raises(RuntimeError, match="records student1:100002, not student1:100009"):
        hook(Spawner("student1", 9))  # a hub database reset would give another id: refused, not recorded twice
    with pytest.raises(RuntimeError, match="is not one the course's collect accepts"):
        hook(Spawner("eve:x:100002:100::/:/bin/sh\nmallory", 10))  # no line of its own in the owners file
    mounts = {m["name"]: m for m in values["singleuser"]["storage"]["extraVolumeMounts"]}
    assert mounts["nbgrader-exchange"]["subPath"] == "exchange", "students must not mount the owners file's folder"


def test_the_instructors_nbgrader_config_runs_the_courses_collect(monkeypatch):
    from traitlets.config.loader import PyFileConfigLoader

    monkeypatch.setenv("DP_COURSE_ROOT", str(DEPLOY.parent))
    monkeypatch.setenv("DP_EXCHANGE_OWNERS", "/srv/nbgrader-owners/passwd")
    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROLES / "instructor")).load_config()
    assert config.ExchangeFactory.collect == "dpgrader.exchange.CourseCollect"
    assert config.CourseCollect.owners_file == "/srv/nbgrader-owners/passwd"
    course = PyFileConfigLoader("nbgrader_config.py", path=str(DEPLOY.parent)).load_config()
    assert course.ExchangeFactory.collect == "dpgrader.exchange.CourseCollect" and course.CourseCollect.require_roster is True


LTI_SETTINGS = {
    "DP_HUB_LTI": "1",
    "DP_LTI_ISSUER": "https://canvas.instructure.com",
    "DP_LTI_CLIENT_ID": "10000000000042",
    "DP_LTI_DEPLOYMENT_IDS": "7:abc, 8:def",
    "DP_LTI_AUTHORIZE_URL": "https://sso.canvaslms.com/api/lti/authorize_redirect",
    "DP_LTI_JWKS_URL": "https://sso.canvaslms.com/api/lti/security/jwks",
}


def load_hub_config(monkeypatch, settings: dict[str, str]) -> Config:
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    config = Config()
    path = DEPLOY / "jupyterhub" / "jupyterhub_config.py"
    namespace = {"get_config": lambda: config, "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102 (our own config file)
    config.namespace = namespace
    return config


def test_the_lti_switch_configures_ltiauthenticator(monkeypatch):
    config = load_hub_config(monkeypatch, LTI_SETTINGS)
    authenticator = config.JupyterHub.authenticator_class
    assert authenticator.__name__ == "CourseLTIAuthenticator" and authenticator.__mro__[1].__name__ == "LTI13Authenticator"
    lti = config.CourseLTIAuthenticator
    assert lti.issuer == "https://canvas.instructure.com" and lti.client_id == {"10000000000042"}
    assert lti.deployment_ids == {"7:abc", "8:def"}
    assert lti.jwks_endpoint.endswith("/jwks") and lti.authorize_url.endswith("/authorize_redirect")
    assert lti.username_key == "sub" and lti.manage_groups is True and lti.create_system_users is True
    assert "PAMAuthenticator" not in config
    role_of = config.namespace["role_of"]
    assert role_of("anyone", ["dp-instructors"]) == "instructor" and role_of("anyone", ["dp-students"]) == "student"
    assert role_of("anyone", []) == "student"


@pytest.mark.parametrize("missing", [name for name in LTI_SETTINGS if name != "DP_HUB_LTI"])
def test_the_lti_switch_stops_without_a_setting(monkeypatch, missing):
    with pytest.raises(SystemExit, match=f"DP_HUB_LTI=1 needs {missing}"):
        load_hub_config(monkeypatch, {**LTI_SETTINGS, missing: " "})


@pytest.fixture(scope="module")
def course_lti():
    import sys

    sys.path.insert(0, str(DEPLOY / "jupyterhub"))
    try:
        import course_lti
    finally:
        sys.path.remove(str(DEPLOY / "jupyterhub"))
    return course_lti


MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"


@pytest.mark.parametrize(
    "roles, role",
    [
        ([f"{MEMBERSHIP}#Learner"], "student"),
        (["Learner"], "student"),
        ([f"{MEMBERSHIP}#Instructor"], "instructor"),
        ([f"{MEMBERSHIP}/Instructor#TeachingAssistant"], "instructor"),
        ([f"{MEMBERSHIP}#Learner", f"{MEMBERSHIP}/Instructor#TeachingAssistant"], "instructor"),
        (["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"], None),  # not a role in this course
        (["http://purl.imsglobal.org/vocab/lis/v2/system/person#Administrator"], None),
        ([f"{MEMBERSHIP}#Mentor"], None),
        ([], None),
        (f"{MEMBERSHIP}#Instructor", None),  # a string, not the claim's list
        (None, None),
    ],
)
def test_lms_roles_map_to_the_hubs(course_lti, roles, role):
    assert course_lti.course_role(roles) == role


def test_the_lms_user_id_is_the_student_id_as_sent_or_refused(course_lti):
    from ltiauthenticator.lti13.error import LoginError

    authenticator = course_lti.CourseLTIAuthenticator()
    assert authenticator.get_username({"sub": "Ada.Lovelace@uni.example"}) == "Ada.Lovelace@uni.example"
    assert authenticator.normalize_username("Ada") == "Ada" != authenticator.normalize_username("ada")
    for hostile in ("<img src=x onerror=alert(1)>", "../bob", "-rf", "a b", "x" * 129, "", 42):
        with pytest.raises(LoginError, match="is no student id of this course"):
            authenticator.get_username({"sub": hostile})
    authenticator.username_key = "custom_dp_user"
    custom = "https://purl.imsglobal.org/spec/lti/claim/custom"
    assert authenticator.get_username({"sub": "a6d5c443-1f51", custom: {"dp_user": "alovelace"}}) == "alovelace"
    with pytest.raises(LoginError, match="has no 'custom_dp_user' claim"):  # never falls back to sub
        authenticator.get_username({"sub": "a6d5c443-1f51"})


def test_a_nonce_is_accepted_once_until_it_is_forgotten(course_lti, monkeypatch):
    register = course_lti.NonceRegister()
    now = [1000.0]
    monkeypatch.setattr(course_lti.time, "time", lambda: now[0])
    assert register.first_use("n1", forget_after=1700.0) and register.first_use("n2", forget_after=1100.0)
    assert not register.first_use("n1", forget_after=1700.0)
    now[0] = 1200.0  # n2's token has expired (refused by the time checks): forgotten, the register does not grow
    assert not register.first_use("n1", forget_after=1700.0) and register.first_use("n2", forget_after=1900.0)
