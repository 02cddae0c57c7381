"""Issue 36 (items 1, 2, 6): the real ``nbgrader submit`` / ``nbgrader collect``, each actor a Unix user of their own.

Alice, Mallory and the teacher get distinct uids in a private mount namespace (a temporary
``/etc/passwd`` and ``/etc/group`` bound over the host's; ``/root`` hidden under a tmpfs so the
environment's Python, which lives below it, is reachable), and every command runs as its actor
through ``setpriv``. Nothing of it reaches the host's user database.

1. Mallory forges ``alice+01_definition+<a year ahead>+x`` (her blank notebook); Alice then submits.
   The teacher's plain ``nbgrader collect`` keeps Alice's notebook and refuses the forgery, a made-up
   student, an id with markup and one with a space, each reported in ``collect_refused.csv``.
2. Mallory's own folders: a symbolic link to the teacher's ``source/`` notebook (mode 700), a hard
   link: refused before anything is copied; no ``submitted/mallory`` file holds a source-only line.
3. A hand-made folder claiming 2020 (name and ``timestamp.txt``) is recorded at the time the exchange
   saw it, and wins only because it is truly the newest; a newer one holding a link is refused and
   never replaces it; a re-collect keeps the copy (nothing older replaces it).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from dpgrader import Course
from dpgrader.course import REPO_ROOT, nbgrader_env

ASSIGNMENT = "01_definition"
COURSE_ID = "dp-course"
USERS = {"alice": 61001, "mallory": 61002, "teacher": 61003}
SOURCE_ONLY = "### BEGIN SOLUTION"  # in every source notebook's solution cells, never in a release

class Classroom:
    """A temporary course, exchange and homes, and a way to run a command as one of :data:`USERS`."""

    def __init__(self, base: Path):
        self.base = base
        self.exchange = base / "exchange"
        self.exchange.mkdir()
        os.chmod(self.exchange, 0o1777)
        self.course = Course.from_repo(base / "course", [ASSIGNMENT])
        with open(self.course.config_file, "a") as config:
            config.write(f"\nc.Exchange.root = {str(self.exchange)!r}\n")
        (base / "hold").mkdir()
        passwd = Path("/etc/passwd").read_text() + "".join(
            f"{name}:x:{uid}:{uid}::{base / name}:/bin/sh\n" for name, uid in USERS.items())
        group = Path("/etc/group").read_text() + "".join(f"{name}:x:{uid}:\n" for name, uid in USERS.items())
        (base / "passwd").write_text(passwd)
        (base / "group").write_text(group)
        for name, uid in USERS.items():
            home = base / name if name != "teacher" else base / "teacher"
            home.mkdir(exist_ok=True)
            os.chown(home, uid, uid)
            os.chmod(home, 0o700)
        for path in [self.course.root, *self.course.root.rglob("*")]:
            os.chown(path, USERS["teacher"], USERS["teacher"])
        os.chmod(self.course.root, 0o755)
        os.chmod(self.course.source(ASSIGNMENT), 0o700)  # the solutions: the teacher's only

    def run(self, user: str, *command: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
        """``command`` run as ``user`` (its uid, gid, no other group) in a private namespace with the users above."""
        script = textwrap.dedent("""\
            set -e
            mount --bind "$DP_PASSWD" /etc/passwd
            mount --bind "$DP_GROUP" /etc/group
            mount --bind /root/.pyenv "$DP_HOLD"
            mount -t tmpfs -o mode=755 tmpfs /root
            mkdir /root/.pyenv
            mount --bind "$DP_HOLD" /root/.pyenv
            cd "$DP_CWD"
            exec setpriv --reuid="$DP_UID" --regid="$DP_UID" --clear-groups "$@"
            """)
        home = self.base / user
        env = {**nbgrader_env(), "HOME": str(home), "USER": user, "LOGNAME": user, "DP_PASSWD": str(self.base / "passwd"),
               "DP_GROUP": str(self.base / "group"), "DP_HOLD": str(self.base / "hold"), "DP_UID": str(USERS[user]),
               "DP_CWD": str(cwd or home), "JUPYTER_DATA_DIR": str(home / ".jupyter-data")}
        env.pop("JUPYTER_CONFIG_DIR", None)
        result = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *command],
                                env=env, capture_output=True, text=True, timeout=300)
        if check:
            assert result.returncode == 0, f"{user}: {command} exited {result.returncode}\n{result.stdout}\n{result.stderr}"
        return result

    def python(self, user: str, code: str, check: bool = True) -> subprocess.CompletedProcess:
        return self.run(user, sys.executable, "-c", textwrap.dedent(code), check=check)

    def nbgrader(self, user: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        if user == "teacher":
            return self.run(user, sys.executable, "-m", "nbgrader", *args, cwd=self.course.root, check=check)
        return self.run(user, sys.executable, "-m", "nbgrader", *args, f"--course={COURSE_ID}",
                        f"--Exchange.root={self.exchange}", check=check)

    def refused(self) -> list[dict[str, str]]:
        path = self.course.root / "collect_refused.csv"
        with open(path, newline="") as handle:
            return list(csv.DictReader(handle))


@pytest.fixture
def classroom():
    base = Path(tempfile.mkdtemp(prefix="dp-collect-", dir="/tmp"))
    os.chmod(base, 0o755)
    try:
        yield Classroom(base)
    finally:
        shutil.rmtree(base)


def stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S.%f") + " UTC"


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def make_folder(classroom: Classroom, user: str, folder: str, files: dict[str, str], links: dict[str, str] = (),
                hard_links: dict[str, str] = ()) -> None:
    """``user`` makes ``inbound/<folder>`` by hand: ``files`` (name: text), symbolic and hard ``links`` (name: target)."""
    inbound = classroom.exchange / COURSE_ID / "inbound"
    classroom.python(user, f"""
        import os
        folder = os.path.join({str(inbound)!r}, {folder!r})
        os.mkdir(folder)
        for name, text in {dict(files)!r}.items():
            with open(os.path.join(folder, name), "w") as handle:
                handle.write(text)
        for name, target in {dict(links)!r}.items():
            os.symlink(target, os.path.join(folder, name))
        for name, target in {dict(hard_links)!r}.items():
            os.link(target, os.path.join(folder, name))
        """)


def notebook_with(marker: str) -> str:
    release = json.loads((REPO_ROOT / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    release["cells"].append({"cell_type": "markdown", "metadata": {}, "source": [marker], "id": "marker"})
    return json.dumps(release)


@pytest.mark.pipeline
def test_forged_linked_and_backdated_submissions_are_refused_or_recorded_at_the_true_time(classroom):
    course = classroom.course
    submitted = course.submitted("alice", ASSIGNMENT)
    classroom.nbgrader("teacher", "generate_assignment", ASSIGNMENT, "--force")
    classroom.nbgrader("teacher", "release_assignment", ASSIGNMENT)
    classroom.python("teacher", f"""
        from nbgrader.api import Gradebook
        with Gradebook({course.gradebook_url!r}, {COURSE_ID!r}) as gradebook:
            for student in ("alice", "mallory"):
                gradebook.add_student(student)
        """)
    source = course.source(ASSIGNMENT) / f"{ASSIGNMENT}.ipynb"
    assert SOURCE_ONLY in source.read_text()

    # 1. Mallory forges Alice's folder a year ahead, and folders for made-up students
    ahead = stamp(utcnow() + timedelta(days=365))
    blank = notebook_with("MALLORY-BLANK")
    make_folder(classroom, "mallory", f"alice+{ASSIGNMENT}+{ahead}+x", {f"{ASSIGNMENT}.ipynb": blank, "timestamp.txt": ahead})
    now = stamp(utcnow())
    make_folder(classroom, "mallory", f"alice+{ASSIGNMENT}+{now}+y", {f"{ASSIGNMENT}.ipynb": blank})
    for made_up in ("zed", "<img src=x onerror=alert(1)>", "alice smith"):
        make_folder(classroom, "mallory", f"{made_up}+{ASSIGNMENT}+{now}+m", {f"{ASSIGNMENT}.ipynb": blank})
    # 2. Mallory's own folders: a link to the teacher's solutions, a hard link to a file of hers
    make_folder(classroom, "mallory", f"mallory+{ASSIGNMENT}+{now}+link", {}, links={f"{ASSIGNMENT}.ipynb": str(source)})
    classroom.python("mallory", f"open({str(classroom.base / 'mallory' / 'mine.ipynb')!r}, 'w').write({blank!r})")
    make_folder(classroom, "mallory", f"mallory+{ASSIGNMENT}+{now}+hard", {},
                hard_links={f"{ASSIGNMENT}.ipynb": str(classroom.base / "mallory" / "mine.ipynb")})
    # Alice submits honestly, after all of that
    classroom.nbgrader("alice", "fetch_assignment", ASSIGNMENT)
    classroom.python("alice", f"open({str(classroom.base / 'alice' / ASSIGNMENT / f'{ASSIGNMENT}.ipynb')!r}, 'w')"
                              f".write({notebook_with('ALICE-HONEST')!r})")
    before_submit = utcnow()
    classroom.nbgrader("alice", "submit", ASSIGNMENT)

    collect = classroom.nbgrader("teacher", "collect", ASSIGNMENT, check=False)  # plain nbgrader: the course's collect
    said = collect.stdout + collect.stderr
    assert collect.returncode == 1, said
    notebook = (submitted / f"{ASSIGNMENT}.ipynb").read_text()
    assert "ALICE-HONEST" in notebook and "MALLORY-BLANK" not in notebook
    recorded = datetime.fromisoformat(json.loads((submitted / ".collected.json").read_text())["trusted_time"])
    assert before_submit - timedelta(seconds=2) <= recorded <= utcnow(), recorded
    assert (submitted / "timestamp.txt").read_text() == stamp(recorded)
    refused = {row["inbound_folder"]: row for row in classroom.refused()}
    forged = refused[f"alice+{ASSIGNMENT}+{ahead}+x"]
    assert forged["owner"] == "mallory" and "later than now" in forged["reason"], forged
    assert "named for 'alice' but belongs to 'mallory'" in refused[f"alice+{ASSIGNMENT}+{now}+y"]["reason"]
    assert "not a student of the gradebook" in refused[f"zed+{ASSIGNMENT}+{now}+m"]["reason"]
    for bad_id in ("<img src=x onerror=alert(1)>", "alice smith"):
        assert "is not 1 to 128 of letters, digits" in refused[f"{bad_id}+{ASSIGNMENT}+{now}+m"]["reason"]
    assert "is a symbolic link" in refused[f"mallory+{ASSIGNMENT}+{now}+link"]["reason"]
    assert "is a hard link" in refused[f"mallory+{ASSIGNMENT}+{now}+hard"]["reason"]
    assert len(refused) == 7, sorted(refused)
    assert "Refused" in said and "alert(1)" in said
    leaked = [p for p in course.submitted().rglob("*") if p.is_file() and SOURCE_ONLY in p.read_text(errors="replace")]
    assert not leaked and not course.submitted("mallory").exists(), leaked
    assert not course.submitted("zed").exists()

    # 3. a hand-made folder claiming 2020 in its name and timestamp.txt, then a newer one holding a link
    past = stamp(datetime(2020, 1, 1))
    time.sleep(1.1)
    before_backdated = utcnow()
    make_folder(classroom, "alice", f"alice+{ASSIGNMENT}+{past}+old", {f"{ASSIGNMENT}.ipynb": notebook_with("ALICE-BACKDATED"),
                                                                         "timestamp.txt": past})
    make_folder(classroom, "alice", f"alice+{ASSIGNMENT}+{stamp(utcnow())}+lnk", {"timestamp.txt": past},
                links={f"{ASSIGNMENT}.ipynb": str(classroom.base / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")})
    update = classroom.run("teacher", sys.executable, "-m", "dpgrader.classroom", "collect", ASSIGNMENT, "--update",
                           cwd=course.root, check=False)
    assert update.returncode == 1, update.stdout + update.stderr
    ledger = json.loads((submitted / ".collected.json").read_text())
    assert "ALICE-BACKDATED" in (submitted / f"{ASSIGNMENT}.ipynb").read_text()
    assert ledger["claimed_timestamp_txt"] == past and ledger["claimed_time_in_name"].startswith("2020-01-01")
    backdated = datetime.fromisoformat(ledger["trusted_time"])
    assert before_backdated - timedelta(seconds=1) <= backdated <= utcnow() and backdated > recorded, (backdated, recorded)
    assert (submitted / "timestamp.txt").read_text() == stamp(backdated)
    assert "is a symbolic link" in update.stderr and f"collected alice: handed in {backdated:%Y-%m-%d %H:%M:%S}" in update.stdout
    # item 6: the time the copy detection orders by, and the one nbgrader's autograde writes into the gradebook
    # (and computes the late penalty from), are this one
    from nbgrader.coursedir import CourseDirectory

    from dpgrader.similarity import submission_times

    assert submission_times(course.root, ASSIGNMENT)["alice"] == backdated
    assert CourseDirectory().get_existing_timestamp(str(submitted)) == backdated

    # nothing older or refused replaces it on a re-collect
    again = classroom.run("teacher", sys.executable, "-m", "dpgrader.classroom", "collect", ASSIGNMENT, "--update",
                          cwd=course.root, check=False)
    assert "kept alice: no newer submission" in again.stdout, again.stdout
    assert json.loads((submitted / ".collected.json").read_text()) == ledger
    print(f"\nrecorded times: honest submit {recorded}; backdated folder claiming {past} recorded {backdated}")
