"""Kernels forked from the zygote: each as isolated from the next as a kernel started from scratch.

Two notebooks run one after the other in one grading process, so the second kernel is forked
from the same zygote as the first. The first attacks: it writes wherever it can, leaves a
process behind, changes the libraries in its memory, looks for other processes, the
zygote's sockets and capabilities. The second reports what it finds of all that.
"""

from __future__ import annotations

import math
import os
import shlex
import subprocess
import sys

import nbformat
import psutil
import pytest
from nbclient import NotebookClient

from dpgrader import sandbox
from dpgrader.guard.forkserver import STATUS
from dpgrader.sandbox.zygote import ForkedKernel, Zygote, ZygoteUnavailable

ATTACKER = {
    "where": "import os\nprint(os.getpid(), os.getcwd(), sorted(p for p in os.listdir('/proc') if p.isdigit()))",
    "leave_files": "import os\nfor path in ('/tmp/left.txt', '/notebook/left.txt', '/dev/shm/left', '/tmp/home/left'):\n"
                   "    open(path, 'w').write('from the previous notebook')\nprint('written')",
    "write_elsewhere": "import os\nrefused = []\nfor path in ('/left.txt', '/dev/left', '/proc/sys/kernel/hostname', '/etc/left'):\n"
                       "    try:\n        open(path, 'w').write('x')\n    except OSError as e:\n"
                       "        refused.append(e.errno)\nprint(len(refused))",
    "leave_a_process": "import subprocess\nsubprocess.Popen(['sleep', '4247'], start_new_session=True)\nprint('left')",
    "change_libraries": "import numpy, dplib\nnumpy.pi = 3.0\ndplib.LEFT_BY_THE_PREVIOUS_NOTEBOOK = True\nprint('changed')",
    "read_pid_1": "try:\n    open('/proc/1/mem', 'rb').read(1)\n    print('read')\nexcept OSError as e:\n    print('refused', e.errno)",
    "capabilities": "print([l.split()[1] for l in open('/proc/self/status') if l.startswith(('CapEff', 'CapBnd', 'CapPrm'))])",
    "sockets": "import os, socket\nkinds = set()\nfor fd in os.listdir('/proc/self/fd'):\n    try:\n"
               "        s = socket.socket(fileno=os.dup(int(fd)))\n    except OSError:\n        continue\n"
               "    kinds.add((s.family, s.type))\n    s.close()\n"
               "print(sorted(str(k) for k in kinds if k[0] == socket.AF_UNIX))",
}
NEXT = {
    "where": ATTACKER["where"],
    "finds_files": "import os\nprint([p for p in ('/tmp/left.txt', '/notebook/left.txt', '/dev/shm/left', '/tmp/home/left') "
                   "if os.path.exists(p)])",
    "finds_libraries": "import numpy, dplib\nprint(numpy.pi, hasattr(dplib, 'LEFT_BY_THE_PREVIOUS_NOTEBOOK'))",
}


class Recording(sandbox.SandboxedKernelManager):
    """Remembers how each kernel was started."""

    started: list[str] = []

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        await super()._async_launch_kernel(kernel_cmd, **kw)
        Recording.started.append(type(self.provisioner.process).__name__)


def run(cells: dict[str, str], folder, manager=Recording) -> dict[str, str]:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in cells.values()])
    NotebookClient(notebook, timeout=60, kernel_manager_class=manager, allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return {name: "".join(o.get("text", "") or o.get("evalue", "") for o in cell.outputs).strip()
            for name, cell in zip(cells, notebook.cells)}


def sleepers() -> list[int]:
    return [p.pid for p in psutil.process_iter(["cmdline"]) if (p.info["cmdline"] or [])[-2:] == ["sleep", "4247"]]


@pytest.fixture(scope="module")
def two_notebooks(tmp_path_factory):
    if sandbox.bwrap_problem():
        pytest.fail(f"the grading sandbox cannot run here: {sandbox.bwrap_problem()}")
    Recording.started.clear()
    first = run(ATTACKER, tmp_path_factory.mktemp("first"))
    left_running = sleepers()
    second = run(NEXT, tmp_path_factory.mktemp("second"))
    return first, second, left_running, list(Recording.started)


@pytest.mark.pipeline
def test_both_kernels_are_forked_from_the_zygote_into_namespaces_of_their_own(two_notebooks):
    first, second, _, started = two_notebooks
    assert started == ["ForkedKernel", "ForkedKernel"]
    assert first["where"] == second["where"] == "2 /notebook ['1', '2']"  # PID 2 of its own namespace: sees no other


@pytest.mark.pipeline
def test_nothing_of_a_notebook_reaches_the_next(two_notebooks):
    first, second, left_running, _ = two_notebooks
    assert first["leave_files"] == "written" and second["finds_files"] == "[]"
    assert first["change_libraries"] == "changed" and second["finds_libraries"] == f"{math.pi} False"
    assert first["leave_a_process"] == "left" and left_running == []  # ended with its PID namespace


@pytest.mark.pipeline
def test_a_forked_kernel_writes_only_its_tmpfs_and_has_no_capabilities_or_sockets_of_the_zygote(two_notebooks):
    first, _, _, _ = two_notebooks
    assert first["write_elsewhere"] == "4"  # the root, /dev, /proc/sys and /etc are read-only
    assert first["read_pid_1"].startswith("refused ")  # PID 1 of its namespace is not dumpable
    assert first["capabilities"] == "['0000000000000000', '0000000000000000', '0000000000000000']"
    assert "SocketKind.SOCK_SEQPACKET" not in first["sockets"]  # the zygote's control socket stays with it


@pytest.mark.pipeline
def test_without_a_zygote_the_kernel_starts_from_scratch_in_the_sandbox(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise ZygoteUnavailable("no zygote in this test")

    monkeypatch.setattr(Zygote, "spawn", refuse)
    Recording.started.clear()
    said = run({"where": "import os\nprint(os.getcwd())"}, tmp_path)
    assert Recording.started == ["Popen"] and said["where"] == str(tmp_path.resolve())


@pytest.mark.pipeline
def test_a_zygote_that_does_not_get_ready_is_unavailable(tmp_path):
    python = tmp_path / "bin" / "python"  # the real Python, except that the zygote fails at once
    python.parent.mkdir()
    python.write_text(f'#!/bin/sh\ncase "$*" in *dpgrader.guard.forkserver*) exit 3;; esac\nexec {shlex.quote(sys.executable)} "$@"\n')
    python.chmod(0o755)
    broken = Zygote(str(python))
    with pytest.raises(ZygoteUnavailable, match="did not get ready"):
        broken.start()
    assert not broken.alive()


def test_a_forked_kernel_reports_how_it_ended_and_can_be_killed():
    class FakeChannel:
        def __init__(self, status: bytes):
            self.status = status

        def settimeout(self, _):
            pass

        def recv(self, _):
            return self.status

        def close(self):
            pass

    child = subprocess.Popen(["sleep", "30"])
    kernel = ForkedKernel(child.pid, os.pidfd_open(child.pid), FakeChannel(STATUS.pack(9 << 8)))
    assert kernel.poll() is None
    kernel.kill()
    child.wait()
    assert kernel.wait(timeout=5) == 9  # the status the first child wrote: exit code 9
