"""The grader side of pre-imported kernels: one sandboxed zygote per grading process, a fork per notebook.

:mod:`dpgrader.guard.forkserver` runs inside the sandbox and forks each kernel into namespaces, files
and limits of its own; this module starts it (:class:`Zygote`), asks it for kernels
(:meth:`Zygote.spawn`), puts each kernel in its cgroup, and hands jupyter_client a process object
(:class:`ForkedKernel`) to poll, signal and wait for. The zygote talks to the grader only over a
socket pair made here; no file of the grader's is shared with it: its stdin and stdout are
``/dev/null``, its stderr, and each kernel's, a pipe of its own whose last lines the grader
keeps (:class:`~dpgrader.sandbox.stderr.StderrTail`).

Where the zygote cannot start or fork (nested user namespaces disabled, say), :class:`ZygoteUnavailable`
is raised and the kernel manager starts a plain sandboxed kernel instead: slower, equally isolated.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import struct
import subprocess
import threading
import time

from dpgrader.guard.forkserver import KERNEL_FOLDER, STATUS, WORK_FOLDER
from dpgrader.sandbox.cgroup import KernelCgroup
from dpgrader.sandbox.command import GiB, MiB, bwrap_command
from dpgrader.sandbox.stderr import StderrTail

KERNEL_IP = f"{KERNEL_FOLDER}/zmq"  # the kernel's ipc sockets, inside its sandbox
START_SECONDS = 120.0  # importing numpy, pandas, scipy.stats, matplotlib and dplib, on a loaded machine
FORK_SECONDS = 30.0
_CREDENTIALS = struct.Struct("=iII")  # struct ucred: pid, uid, gid


class ZygoteUnavailable(RuntimeError):
    """The zygote could not start or fork a kernel: start a plain sandboxed kernel instead."""


class ForkedKernel:
    """The process of a kernel forked by the zygote, as jupyter_client's provisioner uses a ``Popen``.

    ``pid`` is the kernel's PID as the grader sees it. It is not the grader's child: it is polled
    and signalled through a pidfd (no PID reuse can redirect a signal), and its exit status comes
    from the zygote's first child over the kernel's socket.
    """

    stdin = stdout = stderr = None

    def __init__(self, pid: int, pidfd: int, channel: socket.socket):
        self.pid, self._pidfd, self._channel = pid, pidfd, channel
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._pidfd], [], [], 0)[0]:
            self._collect()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("kernel", timeout)
            select.select([self._pidfd], [], [], 0.1)
        return self.returncode

    def _collect(self) -> None:
        """The kernel ended: read its wait status (``128 + signal`` if a signal ended it)."""
        self._channel.settimeout(5)
        try:
            data = self._channel.recv(STATUS.size)
            status = STATUS.unpack(data)[0] if len(data) == STATUS.size else None
        except OSError:
            status = None
        self.returncode = os.waitstatus_to_exitcode(status) if status is not None else -signal.SIGKILL
        self._channel.close()
        os.close(self._pidfd)

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            try:
                signal.pidfd_send_signal(self._pidfd, signum)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


class Zygote:
    """A sandboxed, pre-imported Python that forks kernels: one per grading process and kernel Python."""

    _running: dict[str, "Zygote"] = {}
    _lock = threading.Lock()

    def __init__(self, python: str):
        self.python = python
        self.process: subprocess.Popen | None = None
        self.cgroup: KernelCgroup | None = None
        self._control: socket.socket | None = None
        self._cpu_taken = 0.0
        self.stderr: StderrTail | None = None

    @classmethod
    def for_python(cls, python: str, log=None) -> "Zygote":
        """The running zygote for ``python``, started now if there is none (or it died; ``log`` says so)."""
        with cls._lock:
            zygote = cls._running.get(python)
            if zygote is None or not zygote.alive():
                if zygote is not None:
                    zygote.stop()
                zygote = cls._running[python] = cls(python)
                zygote.start()
                if log is not None:
                    log.info("Started the grading zygote (pid %d): kernels are forked from it", zygote.process.pid)
            return zygote

    @classmethod
    def stop_all(cls) -> None:
        for zygote in cls._running.values():
            zygote.stop()
        cls._running.clear()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None and self._control is not None

    def start(self) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.cgroup = KernelCgroup(2 * GiB, 256)  # CPU accounting of the imports; the forks move on at once
        command = bwrap_command([self.python, "-m", "dpgrader.guard.forkserver", str(theirs.fileno())],
                                workdir=WORK_FOLDER, channel_dir=None, work_bytes=MiB,
                                keep_capabilities=("CAP_SYS_ADMIN", "CAP_SETPCAP"))
        self.stderr = StderrTail()
        try:
            self.process = subprocess.Popen(command, pass_fds=[theirs.fileno()], env={}, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=self.stderr.write_fd,
                                            preexec_fn=self.cgroup.enter)
        except OSError as error:
            mine.close()
            raise ZygoteUnavailable(f"the zygote could not start: {error}") from error
        finally:
            theirs.close()
            self.stderr.close_writer()
        ready = select.select([mine], [], [], START_SECONDS)[0] and mine.recv(16)
        if ready != b"ready":
            mine.close()
            self.stop()
            said = self.stderr.last_error(wait=5)
            raise ZygoteUnavailable("the zygote did not get ready (it could not import the course's packages?)"
                                    + (f": {said}" if said else ""))
        self._control = mine

    def take_cpu_seconds(self) -> float:
        """CPU seconds the zygote used since the last call: its imports, then its forks.

        The kernels' own CPU is counted in their cgroups, not here. 0 without CPU accounting.
        """
        used = (self.cgroup.cpu_seconds() if self.cgroup is not None else None) or 0.0
        taken, self._cpu_taken = used - self._cpu_taken, used
        return taken

    def stop(self) -> None:
        if self._control is not None:
            self._control.close()  # the zygote ends when its control socket does
            self._control = None
        if self.process is not None:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None

    def spawn(self, connection: dict, limits: dict, work_bytes: int, cgroup: KernelCgroup | None,
              stderr: int, arguments: list[str] = ()) -> ForkedKernel:
        """Fork a kernel for ``connection`` (its connection information, ``ip`` inside the sandbox).

        ``limits`` are its rlimits by ``resource`` name, ``work_bytes`` the size of each of its tmpfs,
        ``cgroup`` the cgroup it is moved into before it takes its namespaces, ``stderr`` the write
        end of its stderr pipe (a copy is sent), ``arguments`` ipykernel's command-line arguments.

        Raises
        ------
        ZygoteUnavailable
            If the zygote does not answer, or its child could not take its namespaces.
        """
        channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        channel.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        channel.settimeout(FORK_SECONDS)
        request = {"connection": connection, "limits": limits, "work_bytes": work_bytes, "arguments": list(arguments)}
        try:
            with self._lock:
                socket.send_fds(self._control, [json.dumps(request).encode()], [theirs.fileno(), stderr])
            theirs.close()
            first = _sender(channel, b"A")
            if cgroup is not None:
                cgroup.enter(first)
            channel.sendall(b"G")
            kernel = _sender(channel, b"K")  # the kernel waits until the grader holds a pidfd of it
            pidfd = os.pidfd_open(kernel)
            channel.sendall(b"K")
        except (OSError, TypeError, ValueError) as error:
            channel.close()
            raise ZygoteUnavailable(f"the zygote could not fork a kernel: {error}") from error
        return ForkedKernel(kernel, pidfd, channel)


def _sender(channel: socket.socket, expected: bytes) -> int:
    """The PID (as the grader sees it) of the process that wrote ``expected`` on ``channel``."""
    message, ancillary, _, _ = channel.recvmsg(1, socket.CMSG_SPACE(_CREDENTIALS.size))
    if message != expected:
        raise ValueError(f"expected {expected!r} from the zygote, got {message!r} (did the fork fail?)")
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            return _CREDENTIALS.unpack(data[:_CREDENTIALS.size])[0]
    raise ValueError("the zygote's child sent no credentials")


atexit.register(Zygote.stop_all)

__all__ = ["ForkedKernel", "KERNEL_IP", "WORK_FOLDER", "Zygote", "ZygoteUnavailable"]
