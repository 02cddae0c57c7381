"""A trial JupyterHub for the course on this machine: one instructor, two made-up students (``make hub``).

Run as root (it creates system users and starts servers as them)::

    .venv/bin/python deploy/jupyterhub/local_hub.py up     # set up, print the URL and logins, run (Ctrl-C stops)
    .venv/bin/python deploy/jupyterhub/local_hub.py down   # remove the made-up users and the hub's state

What ``up`` prepares, as an instructor would for a real class:

- Unix groups ``dp-instructors`` and ``dp-students`` and one user per login, each with a private
  home (mode 700) and a fresh random password;
- nbgrader's exchange (mode 1777: everyone writes, nobody deletes another's files);
- the instructor's course folder ``~/dp-course`` (mode 700): ``nbgrader_config.py`` and ``source/``
  copied from this repository, the students added to the gradebook and every assignment registered
  with ``nbgrader generate_assignment`` (formgrader lists them with their points, as "draft" until
  released);
- ``source/`` of this checkout closed to other users (it holds the solutions and hidden tests, and
  every user's server runs from this checkout's ``.venv``).

The test ``tests/deploy/test_hub_e2e.py`` uses the same functions with its own users, ports and folders.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CONFIG = HERE / "jupyterhub_config.py"
COURSE_FOLDER = "dp-course"


@dataclass
class Hub:
    """Where a hub keeps things and who uses it."""

    url: str = "http://127.0.0.1:8000"
    internal_port: int = 8081
    proxy_api_port: int = 8001
    state: Path = Path("/srv/dp-course-hub")
    exchange: Path = Path("/srv/nbgrader/exchange")
    instructors: list[str] = field(default_factory=lambda: ["dp-instructor"])
    students: list[str] = field(default_factory=lambda: ["dp-alice", "dp-bob"])
    instructors_group: str = "dp-instructors"
    students_group: str = "dp-students"
    assignments: list[str] | None = None  # None: every assignment in source/
    venv: Path = REPO / ".venv-hub"
    passwords: dict[str, str] = field(default_factory=dict)
    extra_env: dict[str, str] = field(default_factory=dict)  # e.g. the LTI switch and its settings (DP_HUB_LTI=1)

    @property
    def users(self) -> list[str]:
        return [*self.instructors, *self.students]

    def env(self) -> dict[str, str]:
        """The environment ``jupyterhub -f jupyterhub_config.py`` reads its settings from."""
        return {
            **os.environ,
            "DP_HUB_URL": self.url,
            "DP_HUB_INTERNAL_PORT": str(self.internal_port),
            "DP_HUB_PROXY_API_PORT": str(self.proxy_api_port),
            "DP_HUB_STATE": str(self.state),
            "DP_HUB_EXCHANGE": str(self.exchange),
            "DP_HUB_VENV": str(self.venv),
            "DP_HUB_INSTRUCTORS": self.instructors_group,
            "DP_HUB_STUDENTS": self.students_group,
            "PATH": os.pathsep.join([str(self.venv / "bin"), os.environ.get("PATH", "/usr/bin:/bin")]),
            **self.extra_env,
        }


def home(user: str) -> Path:
    import pwd

    return Path(pwd.getpwnam(user).pw_dir)


def run(*command: str, **kwargs) -> subprocess.CompletedProcess:
    """Run a command; raise with its output if it fails."""
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"`{' '.join(command)}` exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def as_user(hub: Hub, user: str, *command: str, cwd: Path | None = None, role: str = "student") -> subprocess.CompletedProcess:
    """Run a command as ``user`` with the environment the hub gives that user's server."""
    env = [
        f"HOME={home(user)}",
        f"USER={user}",
        f"PATH={hub.venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        f"JUPYTER_CONFIG_PATH={HERE / 'jupyter' / role}",
        f"DP_EXCHANGE_ROOT={hub.exchange}",
        "PYTHONWARNINGS=ignore",
    ]
    return run("runuser", "-u", user, "--", "env", *env, *command, cwd=str(cwd or home(user)))


def instructor_nbgrader(hub: Hub, instructor: str, *args: str) -> subprocess.CompletedProcess:
    """``nbgrader <args>`` as the instructor, in their course folder."""
    return as_user(hub, instructor, str(hub.venv / "bin" / "nbgrader"), *args, cwd=home(instructor) / COURSE_FOLDER, role="instructor")


def create_user(user: str, group: str, password: str) -> None:
    """A system user with a private home, in ``group``, with ``password``."""
    if subprocess.run(["id", user], capture_output=True).returncode != 0:
        run("useradd", "--create-home", "--shell", "/bin/bash", "--groups", group, user)
    else:
        run("usermod", "--append", "--groups", group, user)
    os.chmod(home(user), 0o700)
    run("chpasswd", input=f"{user}:{password}\n")


def check_reachable(hub: Hub, user: str) -> None:
    """Fail early, and say why, if ``user`` cannot run the course's environment or read the role configs."""
    needed = [("-x", hub.venv / "bin" / "python"), ("-r", HERE / "jupyter" / "student" / "nbgrader_config.py"), ("-r", REPO / "dplib" / "__init__.py")]
    for flag, path in needed:
        if subprocess.run(["runuser", "-u", user, "--", "test", flag, str(path)], capture_output=True).returncode != 0:
            raise RuntimeError(
                f"user {user} cannot {'run' if flag == '-x' else 'read'} {path}: every user's server runs from this "
                f"checkout, so it and its parent folders must be readable by all (chmod o+rx), and {hub.venv} must be "
                "built from a Python every user may execute (make hub-install HUB_PYTHON=/usr/bin/python3)"
            )


def set_up(hub: Hub) -> Hub:
    """Users, groups, exchange, hub state and the instructor's course folder (see the module docstring)."""
    if os.geteuid() != 0:
        raise SystemExit("the hub creates system users and starts servers as them: run this as root (sudo make hub)")
    for group in (hub.instructors_group, hub.students_group):
        if subprocess.run(["getent", "group", group], capture_output=True).returncode != 0:
            run("groupadd", group)
    for user in hub.users:
        hub.passwords.setdefault(user, secrets.token_urlsafe(9))
        create_user(user, hub.instructors_group if user in hub.instructors else hub.students_group, hub.passwords[user])
    check_reachable(hub, hub.students[0] if hub.students else hub.users[0])
    hub.exchange.mkdir(parents=True, exist_ok=True)
    os.chmod(hub.exchange, 0o1777)
    hub.state.mkdir(parents=True, exist_ok=True)
    os.chmod(hub.state, 0o700)
    # this checkout's solutions and hidden tests: for root (the instructor's copy is below) only
    os.chmod(REPO / "source", 0o700)
    assignments = hub.assignments or sorted(p.name for p in (REPO / "source").iterdir() if any(p.glob("*.ipynb")))
    for instructor in hub.instructors:
        course = home(instructor) / COURSE_FOLDER
        (course / "source").mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / "nbgrader_config.py", course / "nbgrader_config.py")
        for name in assignments:
            shutil.copytree(REPO / "source" / name, course / "source" / name, dirs_exist_ok=True)
        run("chown", "-R", f"{instructor}:{instructor}", str(course))
        os.chmod(course, 0o700)
        roster = course / "students.csv"
        roster.write_text("id,first_name,last_name,email\n" + "".join(f"{s},{s},Student,\n" for s in hub.students))
        run("chown", f"{instructor}:{instructor}", str(roster))
        instructor_nbgrader(hub, instructor, "db", "student", "import", roster.name)
        for name in assignments:  # registers each assignment in the gradebook (points, hidden tests)
            instructor_nbgrader(hub, instructor, "generate_assignment", name, "--force")
    return hub


def tear_down(hub: Hub) -> None:
    """Remove the users (and homes), groups and the hub's state; the exchange's contents too."""
    import psutil

    for user in hub.users:
        for process in psutil.process_iter(["pid", "username"]):  # this user's leftover processes, by id
            if process.info["username"] == user:
                try:
                    process.kill()
                except psutil.Error:
                    pass
        subprocess.run(["userdel", "--remove", user], capture_output=True)
    for group in (hub.instructors_group, hub.students_group):
        subprocess.run(["groupdel", group], capture_output=True)
    shutil.rmtree(hub.state, ignore_errors=True)
    if hub.exchange.exists():
        for child in hub.exchange.iterdir():
            shutil.rmtree(child, ignore_errors=True)


def start(hub: Hub, log=None) -> subprocess.Popen:
    """Start JupyterHub in the background (its own process group); the caller stops it."""
    command = [str(hub.venv / "bin" / "jupyterhub"), "-f", str(CONFIG)]
    return subprocess.Popen(command, cwd=hub.state, env=hub.env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def logins(hub: Hub) -> str:
    lines = [f"JupyterHub: {hub.url}", "logins (user / password / role):"]
    lines += [f"  {u:16} {hub.passwords[u]:14} {'instructor' if u in hub.instructors else 'student'}" for u in hub.users]
    lines.append("instructor: formgrader at /user/<instructor>/formgrader (or Nbgrader > Formgrader in JupyterLab)")
    lines.append("students: Nbgrader > Assignment List (fetch, validate, submit, fetch feedback)")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["up", "down"])
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    hub = Hub(url=f"http://127.0.0.1:{args.port}")
    if args.action == "down":
        tear_down(hub)
        print("removed the trial hub's users, groups and state")
        return
    print("setting up users, exchange and the instructor's course (registering every assignment)...")
    set_up(hub)
    print(logins(hub), flush=True)
    print("Ctrl-C stops the hub; `make hub-down` removes the made-up users.", flush=True)
    hubproc = start(hub)
    try:
        hubproc.wait()
    except KeyboardInterrupt:
        hubproc.terminate()
        hubproc.wait(timeout=30)


if __name__ == "__main__":
    main(sys.argv[1:])
