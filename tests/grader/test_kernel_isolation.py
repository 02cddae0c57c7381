"""What a grading kernel can see and take: no record of the cells, no file of the grader's, a fair CPU share.

The attacks of issue 29, run against real sandboxed kernels:

- a student function, called from a "hidden test" cell, searches every place a kernel can read
  for that cell's code (IPython's history database, ipykernel's cell files, every file its
  tmpfs hold): it finds nothing;
- a kernel lists and reopens its file descriptors: it holds no file of the grader's, and the
  worker's log in ``autograded/grading_logs/`` stays as the grader wrote it;
- a starving attacker (fifty busy processes, each in a session of its own) is graded beside an
  honest classmate on two workers: her grade and outcome are those of grading her alone;
- a course and its environment under ``/tmp`` grade (the fork binds back what its fresh ``/tmp``
  hides), and a kernel that dies at start-up makes the pre-flight say why, in its own words (both
  on the tiny assignment of ``helpers.tiny_assignment``: what they test is where and whether a
  kernel starts, not what it computes).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from dpgrader import Course, notebooks_of, sandbox
from dpgrader.classroom import grade_class, read_outcomes
from dpgrader.grading.preflight import PreflightFailed
from dpgrader.course import REPO_ROOT, nbgrader_env
from dpgrader.outcomes import Status
from helpers.checks import autograded_points
from helpers.tiny_assignment import POINTS as TINY_POINTS, TINY, tiny_notebook, tiny_repo
from dpgrader.sandbox.stderr import StderrTail, last_error_line
from dpgrader.sandbox.zygote import Zygote, ZygoteUnavailable

SECRET = "hidden_test_marker_4117"  # stands for a hidden test's code

# Defined by the student; called from the test cell while it runs.
SNOOP = '''
def snoop():
    """Every readable place a cell could be recorded in, searched for the running test cell's code."""
    import glob, os
    found = []
    for pattern in ("/tmp/**", "/notebook/**", "/dev/shm/**", os.path.expanduser("~") + "/**"):
        for path in glob.glob(pattern, recursive=True):
            try:
                if os.path.isfile(path) and b"''' + SECRET[:8] + '''" + b"''' + SECRET[8:] + '''" in open(path, "rb").read():
                    found.append(path)
            except OSError:
                pass
    history = glob.glob(os.path.expanduser("~/.ipython/**/history.sqlite"), recursive=True)
    return sorted(set(found)), history
'''
TEST_CELL = f"# {SECRET}\nfound, history = snoop()\nprint(found, history, len(In) > 2)"
CONTROL = "open('/tmp/home/copy.txt', 'w').write(In[3])\nprint(snoop()[0])"  # the search finds a copy that is there

# Every open descriptor of the kernel, what it is, and whether one can be reopened for writing.
DESCRIPTORS = '''
import os, stat
seen, written = {}, []
for fd in sorted(os.listdir("/proc/self/fd"), key=int):
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        continue
    seen[int(fd)] = target
    if target.startswith("/") and not target.startswith(("/proc/", "/dev/null")):
        try:
            with open(f"/proc/self/fd/{fd}", "a") as handle:
                handle.write("FORGED by the kernel\\n")
            written.append(target)
        except OSError:
            pass
files = sorted({t for t in seen.values() if t.startswith("/") and t != "/dev/null" and not t.startswith("/proc/")})
print(files, written, seen.get(2, "")[:5])
'''


def run(cells: list[str], folder, manager=sandbox.SandboxedKernelManager) -> list[str]:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in cells])
    NotebookClient(notebook, timeout=60, kernel_manager_class=manager, allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return ["".join(o.get("text", "") or o.get("evalue", "") for o in cell.outputs).strip() for cell in notebook.cells]


@pytest.fixture(autouse=True)
def _sandbox_runs():
    if sandbox.bwrap_problem():
        pytest.fail(f"the grading sandbox cannot run here: {sandbox.bwrap_problem()}")


class _FromScratch(sandbox.SandboxedKernelManager):
    preforked = False


@pytest.mark.pipeline
@pytest.mark.parametrize("manager", [sandbox.SandboxedKernelManager, _FromScratch], ids=["forked", "from-scratch"])
def test_a_student_function_finds_no_record_of_the_running_test_cell(tmp_path, manager):
    said = run([SNOOP, "print(1 + 1)", TEST_CELL, CONTROL], tmp_path, manager)
    assert said[2] == "[] [] True"  # no file holds the test cell, no history database; In still works
    assert said[3] == "['/tmp/home/copy.txt']"


@pytest.mark.pipeline
@pytest.mark.parametrize("manager", [sandbox.SandboxedKernelManager, _FromScratch], ids=["forked", "from-scratch"])
def test_a_kernel_holds_no_file_of_the_grader(tmp_path, manager):
    log = tmp_path / "worker-0.log"
    log.write_text("the grader's log\n")
    with open(log, "a") as stderr:  # as a worker's stderr is its log file
        saved = os.dup(2)
        try:
            os.dup2(stderr.fileno(), 2)
            said = run([DESCRIPTORS], tmp_path, manager)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    assert said[0] == "[] [] pipe:"  # no file open but its own; stderr a pipe
    assert log.read_text() == "the grader's log\n"


def test_the_stderr_tail_keeps_the_last_error_line_and_at_most_its_size():
    tail = StderrTail(kept_bytes=64)
    os.write(tail.write_fd, b"x" * 100_000 + b"\nTraceback (most recent call last):\n  File \"a.py\"\n"
                            b"ModuleNotFoundError: No module named 'IPython.core.debugger'\n")
    tail.close_writer()
    assert tail.last_error(wait=5) == "ModuleNotFoundError: No module named 'IPython.core.debugger'"
    assert len(tail.text().encode()) <= 64
    assert last_error_line("") == "" and last_error_line("just a line\n") == "just a line"


def test_a_cgroup_limit_that_cannot_be_installed_is_reported(monkeypatch, caplog):
    from dpgrader.sandbox import cgroup, manager

    monkeypatch.setattr(cgroup.KernelCgroup, "_bases", staticmethod(lambda controller: []))
    monkeypatch.setattr(manager, "_reported_missing", set())
    nowhere = cgroup.KernelCgroup(1 << 30, 64)
    assert nowhere.missing() == ["memory", "processes", "CPU"]
    kernel_manager = sandbox.SandboxedKernelManager()
    kernel_manager._cgroup = nowhere
    with caplog.at_level("WARNING"):
        kernel_manager._report_missing_limits()
        kernel_manager._report_missing_limits()  # once per grading process
    assert [r.getMessage() for r in caplog.records if "No cgroup limits" in r.getMessage()] == [
        "No cgroup limits memory, processes, CPU for the grading kernels on this machine (memory falls back to "
        "RLIMIT_AS; without a CPU cap one notebook can slow a classmate graded beside it)"]


def test_a_kernel_cgroup_caps_its_cpu_at_one_core():
    from dpgrader.sandbox.cgroup import CPU_PERIOD_US, KernelCgroup

    capped = KernelCgroup(1 << 30, 64, cpu_cores=1.0)
    try:
        assert capped.cpu_cap is not None, "the grader could make no cpu cgroup here"
        if (capped.cpu_cap / "cpu.max").exists():  # v2
            assert (capped.cpu_cap / "cpu.max").read_text().split() == [str(CPU_PERIOD_US)] * 2
        else:  # v1
            assert int((capped.cpu_cap / "cpu.cfs_quota_us").read_text()) == CPU_PERIOD_US
            assert int((capped.cpu_cap / "cpu.cfs_period_us").read_text()) == CPU_PERIOD_US
    finally:
        capped.remove()
    assert not capped.cpu_cap.exists()


# Fifty busy processes, each in a session of its own, busy together for five seconds (forked first, so the
# forking is not starved by them); then the CPU they got, per second of wall-clock.
HOGS = """
import os, time
spin, stop = time.monotonic() + 2, time.monotonic() + 7
hogs = []
for _ in range(50):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        time.sleep(max(0, spin - time.monotonic()))
        while time.monotonic() < stop:
            pass
        os._exit(0)
    hogs.append(pid)
for pid in hogs:
    os.waitpid(pid, 0)
used, ended = os.times(), time.monotonic()  # a throttled process may end after stop: divide by the time it took
print(round((used.children_user + used.children_system) / (ended - spin), 2))
"""


@pytest.mark.pipeline
def test_fifty_sessions_of_busy_processes_get_one_core_together(tmp_path):
    cores = float(run([HOGS], tmp_path)[0])  # on two idle cores, without the cap: about 2
    assert 0.3 < cores <= 1.1, cores


# --- graded through the class grader -----------------------------------------------------------------

ASSIGNMENT = "01_definition"
SOURCE = notebooks_of(REPO_ROOT / "source" / ASSIGNMENT)[0]
FULL_MARKS = sum(autograded_points(SOURCE).values())  # what the reference earns alone (the pre-flight checks it)

# Every descriptor the kernel holds reopened for writing, to forge the grader's log; then fifty busy
# processes, each in a session (and scheduler autogroup) of its own, busy once all are forked, for as long as
# the kernel lives; the kernel holds on just under its cell limit (60 s) and ends.
STARVE = """
import os, time
for fd in os.listdir('/proc/self/fd'):
    try:
        with open(f'/proc/self/fd/{fd}', 'w') as handle:
            handle.write('FORGED by the attacker\\n')
    except OSError:
        pass
spin = time.monotonic() + 1
for _ in range(50):
    if os.fork() == 0:
        os.setsid()
        time.sleep(max(0, spin - time.monotonic()))
        while True:
            pass
"""
HOLD = "import os, time\ntime.sleep(40)\nos._exit(0)"


def _course(root, submissions: dict[str, nbformat.NotebookNode], config_line: str = "",
            assignment: str = ASSIGNMENT, repo: Path = REPO_ROOT) -> Course:
    course = Course.from_repo(root, [assignment], repo=repo)
    if config_line:
        with open(course.root / "nbgrader_config.py", "a") as config:
            config.write("\n" + config_line + "\n")
    course.generate_assignment(assignment)
    for student, notebook in submissions.items():
        folder = course.root / "submitted" / student / assignment
        folder.mkdir(parents=True)
        nbformat.write(notebook, str(folder / f"{assignment}.ipynb"))
    return course


def _tiny_course(root: Path, config_line: str = "") -> Course:
    """A course of the tiny assignment where ada hands in its reference."""
    return _course(root / "course", {"ada": tiny_notebook()}, config_line, TINY, tiny_repo(root / "repo"))


def _reference() -> nbformat.NotebookNode:
    return nbformat.read(str(SOURCE), as_version=4)


def _attacker() -> nbformat.NotebookNode:
    notebook = _reference()
    # the largest notebook is graded first (by the worker whose zygote the pre-flight started): her fifty
    # run before, and while, the classmate's kernel is forked and graded
    notebook.cells = [nbformat.v4.new_code_cell(STARVE), nbformat.v4.new_code_cell(HOLD),
                      nbformat.v4.new_markdown_cell("Graded first. " * 40_000)]
    return notebook


@pytest.mark.pipeline
def test_a_starving_attacker_changes_nothing_of_a_classmate_graded_beside_her_nor_the_grader_logs(tmp_path):
    """The classmate's notebook is the reference: alone, it earns full marks with outcome ok (the pre-flight of
    this very run grades it so, alone). A tight budget (twice the reference's time, at least 30 s) makes the
    starvation count: without the CPU cap, her cells got a few percent of the machine."""
    course = _course(tmp_path / "course", {"attacker": _attacker(), "classmate": _reference()})
    outcomes = {o.student: o for o in grade_class(course.root, workers=2, feedback=False, progress=False,
                                                  limits={"time_budget_factor": 2})}
    classmate = outcomes["classmate"]
    assert (classmate.status, classmate.score, classmate.message) == (Status.OK, FULL_MARKS, ""), classmate
    logs = sorted((course.root / "autograded" / "grading_logs").glob("worker-*.log"))
    assert logs and not any("FORGED" in log.read_text(errors="replace") for log in logs)
    assert outcomes["attacker"].kernel_cpu is not None


def _in_tmp_namespace(command: list[str], where: str) -> list[str]:
    """``command`` run in a private mount namespace where the repository (and its .venv) is bound at ``where``."""
    script = f'mkdir -p "{where}" && mount --bind "{REPO_ROOT}" "{where}" && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *command]


@pytest.mark.pipeline
def test_a_course_and_environment_under_tmp_grade(tmp_path):
    course = _tiny_course(tmp_path)
    where = tempfile.mkdtemp(prefix="dplib-anywhere-", dir="/tmp")
    try:
        python = f"{where}/.venv/bin/python"
        run = subprocess.run(_in_tmp_namespace([python, "-m", "dpgrader.classroom", "--course", str(course.root),
                                                "grade", "--workers", "1", "--no-feedback"], where),
                             capture_output=True, text=True, env=nbgrader_env(), timeout=900)
    finally:
        os.rmdir(where)
    assert run.returncode == 0, run.stderr[-3000:]
    outcome = read_outcomes(course.root)["ada", TINY]
    assert (outcome.status, outcome.score) == (Status.OK, sum(TINY_POINTS.values())), outcome


@pytest.mark.pipeline
def test_a_kernel_dying_at_start_up_makes_the_preflight_say_why_in_its_own_words(tmp_path):
    course = _tiny_course(tmp_path, config_line=(
        'c.Execute.extra_arguments = ["--IPKernelApp.displayhook_class=no_such_kernel_module.DisplayHook"]'))
    with pytest.raises(PreflightFailed) as stopped:
        grade_class(course.root, workers=1, feedback=False, progress=False)
    said = str(stopped.value)
    assert "Kernel died before replying to kernel_info" in said
    assert "the kernel's last error: ModuleNotFoundError: No module named 'no_such_kernel_module'" in said, said
