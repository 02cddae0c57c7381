"""The grading sandbox on its own: what a kernel sees, its limits, and what happens without bubblewrap.

One sandboxed kernel (the real :class:`SandboxedKernelManager`, driven by nbclient as nbgrader
drives it) runs a notebook of probes; the pure parts (the command line, the feedback
scrubber, the status order) are checked without a kernel.
"""

from __future__ import annotations

import ast
import os
import shlex
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import dplib
from dpgrader import sandbox
from dpgrader.course import REPO_ROOT
from dpgrader.limits import GradingLimits
from dpgrader.outcomes import Status, TaskNotes
from dpgrader.preprocessors import scrub, secret_lines

PROBES = {
    "visible": "import os\nprint(os.path.exists({repo!r}), os.path.exists({home!r}) and os.listdir({home!r}))",
    "writes": "open('mine.txt', 'w').write('ok')\nprint(open('mine.txt').read())",
    "network": "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\nexcept OSError as e:\n"
               "    print('no network', e.errno)",
    "big_file": "try:\n    open('big.bin', 'wb').write(b'x' * (3 * 2**20))\nexcept OSError as e:\n    print('EFBIG', e.errno)",
    "processes": "import subprocess\nkids = []\ntry:\n    for _ in range(40):\n"
                 "        kids.append(subprocess.Popen(['sleep', '4245']))\nexcept OSError:\n    print('fork refused')\n"
                 "print(len(kids))",
    "environment": "import os\nprint(sorted(k for k in os.environ if k.startswith(('JPY', 'DPLIB', 'PYTEST'))))",
    # run by root, a sandbox that kept its capabilities could make the course's packages writable
    "remount": "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
               "code = libc.mount(None, {package!r}.encode(), None, 32 | 4096, None)  # MS_REMOUNT | MS_BIND, rw\n"
               "try:\n    open({package!r} + '/escaped.txt', 'w').write('x')\n    print('wrote')\n"
               "except OSError as e:\n    print('refused', code, e.errno)\n"
               "print([line.split()[1] for line in open('/proc/self/status') if line.startswith('CapEff')])",
    "fill_folder": "written = 0\ntry:\n    for n in range(400):\n        open('part%d.bin' % n, 'wb').write(b'x' * 2**20)\n"
                   "        written += 1\nexcept OSError as e:\n    print('ENOSPC', e.errno, written)",
}


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    if sandbox.bwrap_problem():
        pytest.fail(f"the grading sandbox cannot run here: {sandbox.bwrap_problem()}")
    work = tmp_path_factory.mktemp("work")
    package = str(Path(dplib.__file__).resolve().parent)
    cells = [nbformat.v4.new_code_cell(code.format(repo=str(REPO_ROOT / "source"), home=str(Path.home()),
                                                   package=package))
             for code in PROBES.values()]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notes = TaskNotes()

    class Limited(sandbox.SandboxedKernelManager):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.limits = GradingLimits(file_bytes=2**20, processes=25)

    with notes.collecting():
        NotebookClient(notebook, timeout=60, kernel_manager_class=Limited,
                       resources={"metadata": {"path": str(work)}}).execute()
    said = {name: "".join(o.get("text", "") for o in cell.outputs) for name, cell in zip(PROBES, notebook.cells)}
    return said, notes.notes, work


@pytest.mark.pipeline
def test_the_kernel_sees_only_its_folder_and_the_libraries(probed):
    said, _, work = probed
    # not source/; of $HOME at most the folders that lead to the Python installation (pyenv keeps it there)
    seen_in_home = ast.literal_eval(said["visible"].split(" ", 1)[1].strip()) or []
    assert said["visible"].startswith("False ") and set(seen_in_home) < set(os.listdir(Path.home())) | {None}
    assert all(Path(sys.base_prefix).resolve().is_relative_to(Path.home() / name) for name in seen_in_home)
    assert said["writes"].strip() == "ok" and not (work / "mine.txt").exists()  # written to its own tmpfs only
    assert "no network" in said["network"]
    assert said["environment"].strip() == "[]"


@pytest.mark.pipeline
def test_the_kernel_has_no_capabilities_and_cannot_make_the_packages_writable(probed):
    said, _, _ = probed
    refused, capabilities = said["remount"].splitlines()
    assert refused.startswith("refused ") and capabilities == "['0000000000000000']"
    assert not (Path(dplib.__file__).resolve().parent / "escaped.txt").exists()


@pytest.mark.pipeline
def test_limits_hold_and_are_noted(probed):
    said, notes, work = probed
    assert "EFBIG 27" in said["big_file"] and not (work / "big.bin").exists()
    errno, written = said["fill_folder"].split()[1:]
    assert errno == "28" and 250 <= int(written) < 256 and not list(work.iterdir())  # the tmpfs is full at 256 MB
    assert "fork refused" in said["processes"]
    probe = sandbox.KernelCgroup(2**30, 10)
    can_limit_processes = probe.pids is not None
    probe.remove()
    if can_limit_processes:  # noted where the machine lets the grader make a cgroup
        assert Status.PROCESS_LIMIT in [status for status, _ in notes]


def test_the_command_binds_dplib_and_the_guard_but_not_the_repository_the_grader_or_home(tmp_path):
    command = sandbox.bwrap_command([sys.executable, "-m", "ipykernel_launcher", "-f", "x"], tmp_path, tmp_path)
    binds = [command[i + 1] for i, arg in enumerate(command) if arg in ("--bind", "--ro-bind")]
    assert str(REPO_ROOT / "dplib") in binds and str(REPO_ROOT / "dpgrader" / "guard") in binds
    assert str(REPO_ROOT) not in binds and str(Path.home()) not in binds
    assert not any(b.startswith(str(REPO_ROOT / "dpgrader" / "review")) or b == str(REPO_ROOT / "dpgrader") for b in binds)
    assert [command[i + 1] for i, arg in enumerate(command) if arg == "--bind"] == [str(tmp_path)]  # the channel
    tmpfs = [(command[i - 1], command[i + 1]) for i, arg in enumerate(command) if arg == "--tmpfs"]
    assert tmpfs == [(str(256 * 2**20), "/tmp"), (str(256 * 2**20), str(tmp_path))]  # size-limited, private
    assert {"--unshare-all", "--die-with-parent", "--clearenv"} <= set(command)
    assert command[command.index("--") + 1:] == [sys.executable, "-m", "ipykernel_launcher", "-f", "x"]


def test_without_bubblewrap_grading_stops_with_the_fix(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv(sandbox.OPT_OUT_VARIABLE, raising=False)
    sandbox.bwrap_problem.cache_clear()
    try:
        with pytest.raises(sandbox.SandboxUnavailable, match="apt-get install bubblewrap"):
            sandbox.require_sandbox()
        monkeypatch.setenv(sandbox.OPT_OUT_VARIABLE, "1")
        with pytest.warns(RuntimeWarning, match="UNSANDBOXED"):
            assert sandbox.require_sandbox() is False
    finally:
        sandbox.bwrap_problem.cache_clear()


def test_scrub_removes_quoted_secret_lines_verbatim_or_escaped():
    source = ("def check():\n    ### BEGIN HIDDEN TESTS\n    assert uniqueness(table, ['zip']) == 0.25\n"
              "    ### END HIDDEN TESTS\n    assert True")
    secrets = secret_lines([source])
    assert secrets == {"assert uniqueness(table, ['zip']) == 0.25"}
    text = "mine\n" + repr([source]) + "\n  assert uniqueness(table, ['zip']) == 0.25  <- here\nalso mine"
    assert scrub(text, secrets) == ("mine\nalso mine", 2)


def test_status_order_puts_the_cause_before_its_symptom():
    assert Status.worst(Status.KERNEL_DIED, Status.MEMORY_LIMIT) == Status.MEMORY_LIMIT
    assert Status.worst() == Status.OK and Status.worst("ok", "timed_out") == Status.TIMED_OUT
    assert f"{Status.TOO_LARGE}" == "too_large" and Status.KILLED == "killed"
    assert os.environ.get(sandbox.OPT_OUT_VARIABLE) is None


@pytest.mark.pipeline
def test_a_kernel_past_its_cpu_seconds_is_stopped_and_noted(tmp_path):
    class ThreeSeconds(sandbox.SandboxedKernelManager):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.limits = GradingLimits(cpu_seconds=3)

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("while True:\n    pass")])
    notes = TaskNotes()
    client = NotebookClient(notebook, timeout=60, kernel_manager_class=ThreeSeconds,
                            resources={"metadata": {"path": str(tmp_path)}})
    with notes.collecting(), pytest.raises(Exception, match="Kernel died"):
        client.execute()
    assert [status for status, _ in notes.notes] == [Status.CPU_LIMIT]


def test_kernel_packages_are_resolved_by_the_kernels_python_where_it_imports_them(tmp_path):
    """A Python whose dplib lives elsewhere (a copied course's editable install) gets that folder bound."""
    elsewhere = tmp_path / "other-checkout"
    for package in ("dplib", "dpgrader/guard"):
        (elsewhere / package).mkdir(parents=True)
        (elsewhere / package / "__init__.py").write_text("")
    (elsewhere / "dpgrader" / "__init__.py").write_text("")
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nPYTHONPATH={shlex.quote(str(elsewhere))} exec {shlex.quote(sys.executable)} \"$@\"\n")
    python.chmod(0o755)
    found = sandbox.kernel_packages(str(python))
    assert found["dplib"] == elsewhere / "dplib" and found["dpgrader.guard"] == elsewhere / "dpgrader" / "guard"


def test_a_kernel_python_without_the_course_packages_stops_grading_with_the_fix(tmp_path):
    with pytest.raises(sandbox.KernelPackagesMissing, match="cannot import dplib, dpgrader.guard: install the course"):
        sandbox.kernel_packages(sys.base_prefix + "/bin/python3")


def test_the_font_cache_is_built_once_per_user_and_published_whole(tmp_path, monkeypatch):
    from dpgrader.sandbox import command

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    command._font_cache.cache_clear()
    try:
        first = command._font_cache()
        assert first is not None and first.parent == tmp_path / "cache" / "dplib"
        assert [p.name for p in first.parent.iterdir()] == [first.name]  # no half-built folder left beside it
        assert list(first.glob("fontlist-*.json"))
        command._font_cache.cache_clear()  # the next grading process finds it and builds nothing
        monkeypatch.setattr(command, "_build_font_cache", lambda parent: pytest.fail("built again"))
        assert command._font_cache() == first
        binds = [a for a in command.bwrap_command(["python"], tmp_path, None) if "fontlist-" in a]
        assert binds and all(a.startswith(str(first)) or a.startswith("/tmp/matplotlib/") for a in binds)
    finally:
        command._font_cache.cache_clear()


def test_without_a_writable_cache_folder_each_process_builds_its_own_font_cache(tmp_path, monkeypatch):
    from dpgrader.sandbox import command

    (tmp_path / "not a folder").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not a folder"))
    command._font_cache.cache_clear()
    try:
        own = command._font_cache()
        assert own is not None and own.name.startswith("dplib-mplcache-") and list(own.glob("fontlist-*.json"))
    finally:
        command._font_cache.cache_clear()
