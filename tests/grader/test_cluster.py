"""Grading on a real Dask cluster: a `dask scheduler` and `dask worker` processes on 127.0.0.1, over TLS.

Each fault is made from outside, as it happens on a cluster: a worker killed with SIGKILL mid-task, a
worker whose sandbox cannot start, a submission that kills every worker it is tried on, the
scheduler gone mid-run. Nothing of Dask is mocked; the class is small: a few students of one tiny assignment
(``helpers.tiny_assignment``: a few cells with the grade cells of a real one, cheap to grade), since
what is tested is how the cluster runs the grading, not what an assignment asks.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from dpgrader import Course
from dpgrader.course import nbgrader_env
from dpgrader.grading.cluster import ClusterLost, connect
from dpgrader.grading.preflight import PreflightFailed
from dpgrader.grading.run import grade_class
from dpgrader.outcomes import Status, read_outcomes
from helpers.dask_cluster import CrashOnStudent, DaskProcesses, make_certificates
from helpers.tiny_assignment import TINY, tiny_notebook, tiny_repo, unanswered

pytestmark = [pytest.mark.pipeline, pytest.mark.xdist_group("dask")]

ASSIGNMENT = TINY
SOURCE = tiny_notebook()  # the reference solution
RELEASE = unanswered()  # the notebook as released, handed in untouched


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """A repository of the tiny assignment, the course's ``nbgrader_config.py`` beside it."""
    return tiny_repo(tmp_path_factory.mktemp("tiny_repo"))


def _course(folder: Path, students: dict[str, nbformat.NotebookNode | str], repo: Path) -> Course:
    """A course of the tiny assignment; each student hands in a notebook, or text (a broken notebook)."""
    course = Course.from_repo(folder, [ASSIGNMENT], repo=repo)
    for student, notebook in students.items():
        target = course.submitted(student, ASSIGNMENT)
        target.mkdir(parents=True)
        if isinstance(notebook, str):
            (target / f"{ASSIGNMENT}.ipynb").write_text(notebook)
        else:
            nbformat.write(notebook, str(target / f"{ASSIGNMENT}.ipynb"))
    return course


CLASS = {"ada": SOURCE, "bo": RELEASE, "cy": SOURCE, "dee": "{ not a notebook"}


def _graded(outcomes) -> dict[str, tuple]:
    return {o.student: (o.status, o.score, o.max_score) for o in outcomes}


def _graded_by(course: Course) -> list[str]:
    """The students of the lines of graded_by.log (one line per result accepted)."""
    return [line.split("/", 1)[0] for line in (course.grading_logs / "graded_by.log").read_text().splitlines()]


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    """A scheduler and two workers over TLS; a task may fail on one worker (allowed-failures 1), not on two."""
    folder = tmp_path_factory.mktemp("dask")
    processes = DaskProcesses(folder, make_certificates(folder / "certificates"),
                              scheduler_env={"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1"})
    processes.start_scheduler()
    for name in ("w1", "w2"):
        processes.start_worker(name)
    try:
        processes.wait_for_workers(2)
        yield processes
    finally:
        processes.stop()


@pytest.fixture(scope="module")
def local_grades(tmp_path_factory, repo):
    """The same class graded by the local pool: what the cluster must reproduce."""
    course = _course(tmp_path_factory.mktemp("local") / "course", CLASS, repo)
    return _graded(grade_class(course.root, workers=2, progress=False))


def _kill_a_worker_mid_task(processes: DaskProcesses, killed: list, stop: threading.Event) -> None:
    """SIGKILL the worker process grading a student's submission as soon as one is being graded."""
    with processes.client() as client:
        while not stop.is_set() and not killed:
            for address, keys in client.processing().items():
                if any(str(key).startswith(f"grade-{ASSIGNMENT}-") and "preflight" not in str(key) for key in keys):
                    pid = client.run(os.getpid, workers=[address])[address]
                    os.kill(pid, signal.SIGKILL)
                    killed.append(address)
                    return
            time.sleep(0.05)


def test_a_worker_killed_mid_task_changes_no_grade_and_doubles_nothing(tls_cluster, local_grades, tmp_path, repo):
    course = _course(tmp_path / "course", CLASS, repo)
    killed, stop = [], threading.Event()
    killer = threading.Thread(target=_kill_a_worker_mid_task, args=(tls_cluster, killed, stop))
    killer.start()
    try:
        outcomes = grade_class(course.root, progress=False, scheduler=tls_cluster.address, tls=tls_cluster.security())
    finally:
        stop.set()
        killer.join()
    assert killed, "no worker was killed: the test did not test anything"
    assert _graded(outcomes) == local_grades
    assert sorted(_graded_by(course)) == sorted(CLASS), "every submission accepted exactly once"
    with Gradebook(course.gradebook_url) as gradebook:
        assert sorted(s.student.id for s in gradebook.find_assignment(ASSIGNMENT).submissions) == sorted(CLASS)
        cells = len(gradebook.find_notebook(ASSIGNMENT, ASSIGNMENT).grade_cells)
        for student in CLASS:
            (notebook,) = gradebook.find_submission(ASSIGNMENT, student).notebooks
            assert len(notebook.grades) == cells, (student, len(notebook.grades))
    assert set(read_outcomes(course.root)) == {(s, ASSIGNMENT) for s in CLASS}


def test_a_submission_that_kills_every_worker_is_recorded_and_the_class_is_graded(tls_cluster, local_grades, tmp_path,
                                                                                   repo):
    course = _course(tmp_path / "course", {"ada": SOURCE, "crasher": SOURCE}, repo)
    with tls_cluster.client() as client:
        client.register_plugin(CrashOnStudent("crasher"))
    outcomes = {o.student: o for o in grade_class(course.root, progress=False, scheduler=tls_cluster.address,
                                                   tls=tls_cluster.security())}
    assert (outcomes["ada"].status, outcomes["ada"].score) == local_grades["ada"][:2]
    crasher = outcomes["crasher"]
    assert crasher.status == Status.WORKER_CRASHED and crasher.score is None, crasher
    assert "stopped every grading worker" in crasher.message or "grading workers" in crasher.message, crasher
    tls_cluster.wait_for_workers(2)  # the nannies restart the workers it killed


CONNECT = """
import sys
from dpgrader.grading import cluster
cluster.CONNECT_SECONDS = 10
tls = cluster.security(*sys.argv[2:5]) if len(sys.argv) > 2 else None
try:
    client = cluster.connect(sys.argv[1], tls)
except (cluster.ClusterLost, ValueError) as error:
    print(type(error).__name__, error)
    sys.exit(1)
print("connected", client.status)
client.close()
"""


def _connect(*args: str) -> subprocess.CompletedProcess:
    """``dpgrader.grading.cluster.connect`` in a process of its own, as the class grader's command makes it."""
    return subprocess.run([sys.executable, "-c", CONNECT, *args], env=nbgrader_env(), capture_output=True, text=True,
                          timeout=120)


def test_a_plain_connection_to_a_tls_scheduler_is_refused(tls_cluster):
    plain = _connect(tls_cluster.address.replace("tls://", "tcp://"))
    assert plain.returncode == 1 and plain.stdout.startswith("ClusterLost cannot reach the Dask scheduler"), plain
    bare = _connect(tls_cluster.address)  # TLS without the certificates: not even tried (no Client is made, which
    assert bare.returncode == 1 and bare.stdout.startswith("ValueError") and "needs TLS certificates" in bare.stdout
    assert bare.stderr == "", bare.stderr  # once freed waited a minute to close, then printed a TimeoutError)
    c = tls_cluster.certificates
    good = _connect(tls_cluster.address, str(c["ca"]), str(c["cert"]), str(c["key"]))
    assert good.returncode == 0 and good.stdout.strip() == "connected running", good


@pytest.mark.parametrize("address", ["tcp://10.1.2.3:8786", "192.0.2.7:8786"])
def test_a_plain_connection_off_this_machine_is_not_even_tried(address):
    with pytest.raises(ValueError, match="tls://"):
        connect(address)


def test_a_worker_whose_sandbox_cannot_start_grades_nothing(tmp_path, repo):
    """Its PATH has no bwrap, and its environment even asks for no sandbox: it answers error, with the reason."""
    processes = DaskProcesses(tmp_path / "dask")
    processes.start_scheduler()
    processes.start_worker("broken", env={"PATH": str(Path(sys.executable).parent), "DPLIB_NO_SANDBOX": "1"})
    course = _course(tmp_path / "course", {"ada": SOURCE}, repo)
    try:
        processes.wait_for_workers(1)
        with pytest.raises(PreflightFailed, match=r"the sandbox cannot start on worker tcp://127\.0\.0\.1:\d+ "
                                                  r"\(SandboxUnavailable"):
            grade_class(course.root, progress=False, scheduler=processes.address)
    finally:
        processes.stop()
    with Gradebook(course.gradebook_url) as gradebook:
        assert not gradebook.find_assignment(ASSIGNMENT).submissions, "no grade was written"


def test_the_scheduler_gone_stops_grading_keeps_the_grades_and_a_rerun_grades_only_the_rest(tmp_path, repo):
    course = _course(tmp_path / "course", CLASS, repo)
    processes = DaskProcesses(tmp_path / "dask")
    command = [sys.executable, "-m", "dpgrader.classroom", "--course", str(course.root), "grade", "--no-feedback"]
    try:
        processes.start_scheduler()
        for name in ("w1", "w2"):
            processes.start_worker(name)
        processes.wait_for_workers(2)
        run = subprocess.Popen([*command, "--scheduler", processes.address], env=nbgrader_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        log = course.grading_logs / "graded_by.log"
        deadline = time.monotonic() + 600
        while not (log.exists() and log.read_text().strip()):
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.05)
        processes.kill_scheduler()
        out, err = run.communicate(timeout=300)
        assert run.returncode == 3, (out, err)
        assert "stopped answering" in err and "--resume" in err, err
        kept = read_outcomes(course.root)
        assert 1 <= len(kept) < len(CLASS), kept
        first = _graded_by(course)
        processes.stop()

        processes = DaskProcesses(tmp_path / "dask-again")
        processes.start_scheduler()
        for name in ("w1", "w2"):
            processes.start_worker(name)
        processes.wait_for_workers(2)
        again = subprocess.run([*command, "--scheduler", processes.address, "--resume"], env=nbgrader_env(),
                               capture_output=True, text=True, timeout=900)
        assert again.returncode == 0, (again.stdout, again.stderr)
    finally:
        processes.stop()
    second = _graded_by(course)[len(first):]
    assert sorted(first + second) == sorted(CLASS), "each submission graded once over the two runs"
    assert not set(first) & set(second), "the rerun graded only what was missing"
    assert set(read_outcomes(course.root)) == {(s, ASSIGNMENT) for s in CLASS}


def test_a_worker_that_forges_results_grades_nobody_and_the_class_goes_on(tls_cluster, local_grades, tmp_path, repo):
    """Each forged answer (another task's token, a file outside its folder, a field of the wrong type) makes its
    task an ``error`` with no grade; the honest classmate keeps her grade, and nothing lands outside the course."""
    from helpers.forging_worker import ForgeResults

    forged = ("mallory_replay", "mallory_paths", "mallory_fields")
    course = _course(tmp_path / "course", {"ada": SOURCE, **dict.fromkeys(forged, SOURCE)}, repo)
    with tls_cluster.client() as client:
        client.register_plugin(ForgeResults())
    try:
        outcomes = {o.student: o for o in grade_class(course.root, progress=False, feedback=False,
                                                       scheduler=tls_cluster.address, tls=tls_cluster.security())}
    finally:
        with tls_cluster.client() as client:
            client.unregister_worker_plugin(ForgeResults.name)
    assert (outcomes["ada"].status, outcomes["ada"].score) == local_grades["ada"][:2]
    said = {student: outcomes[student].message for student in forged}
    assert "another task's token" in said["mallory_replay"], said
    assert "not a grading result (ValueError" in said["mallory_paths"], said
    assert "not a grading result (TypeError" in said["mallory_fields"], said
    for student in forged:
        assert (outcomes[student].status, outcomes[student].score) == (Status.ERROR, None), outcomes[student]
    assert sorted(_graded_by(course)) == sorted(["ada", *forged]), "every task answered exactly once"
    with Gradebook(course.gradebook_url) as gradebook:
        for student in forged:
            (notebook,) = gradebook.find_submission(ASSIGNMENT, student).notebooks
            assert all(g.auto_score is None and g.needs_manual_grade for g in notebook.grades), student
    assert not list(tmp_path.rglob("escaped*")), "nothing written outside the result's folder"
    assert not any((course.autograded(student, ASSIGNMENT)).exists() for student in forged)
