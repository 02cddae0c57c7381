"""The kernel manager nbgrader starts every grading kernel with: sandboxed, limited, cleaned up."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Bool, DottedObjectName, default
from traitlets.utils.importstring import import_item

from dpgrader.limits import GradingLimits
from dpgrader.outcomes import Status, measure_kernel_cpu, note
from dpgrader.sandbox.cgroup import KernelCgroup
from dpgrader.guard.forkserver import KERNEL_ARGUMENTS
from dpgrader.sandbox.command import GiB, MiB, bwrap_command, require_sandbox
from dpgrader.sandbox.stderr import StderrTail
from dpgrader.sandbox.zygote import KERNEL_IP, WORK_FOLDER, ForkedKernel, Zygote, ZygoteUnavailable

_reported_missing: set[str] = set()  # limits already reported missing by this grading process


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager whose kernels run in :func:`bwrap_command`'s sandbox, with limits.

    Select it for nbgrader with ``c.Execute.kernel_manager_class =
    "dpgrader.sandbox.SandboxedKernelManager"``. Where the instructor opted out
    (``DPLIB_NO_SANDBOX=1``) it starts plain kernels (still with the rlimits).

    A sandboxed kernel inherits no file of the grader's: stdin and stdout ``/dev/null``, stderr a
    pipe whose last lines the grader keeps (:meth:`last_error`, why a kernel died before it
    answered). It runs with IPython's history database disabled
    (:data:`~dpgrader.guard.forkserver.KERNEL_ARGUMENTS`, last on its command line). A limit whose cgroup
    could not be made is logged once per grading process (memory falls back to ``RLIMIT_AS``; CPU
    and processes have no fallback).
    """

    @property
    def limits(self) -> GradingLimits:
        """Memory, processes, CPU, files and disk of the kernel: ``c.GradingLimits`` (:mod:`dpgrader.limits`)."""
        if self._limits is None:
            self._limits = GradingLimits.from_config(self.config)
        return self._limits

    @limits.setter
    def limits(self, limits: GradingLimits) -> None:
        self._limits = limits

    _limits: GradingLimits | None = None
    preforked = Bool(True, help="Fork each kernel from a sandboxed zygote that imported the course's libraries "
                                "once (dpgrader.sandbox.zygote); False: start every kernel from scratch.").tag(config=True)

    # jupyter_client's client, ready without its 0.2 s wait for IOPub to fall silent (dpgrader.sandbox.client)
    client_class = DottedObjectName("dpgrader.sandbox.client.PromptKernelClient")

    @default("client_factory")
    def _client_factory_default(self):  # AsyncKernelManager fixes its own class here instead of reading client_class
        return import_item(self.client_class)

    _channel_dir: Path | None = None
    _workdir: Path | None = None
    _cgroup: KernelCgroup | None = None
    _stderr: StderrTail | None = None
    sandboxed: bool = False

    async def _async_pre_start_kernel(self, **kw):
        self.sandboxed = require_sandbox()
        if self.sandboxed:
            self._channel_dir = Path(tempfile.mkdtemp(prefix="dplib-kernel-"))  # 0700, unguessable
            self.transport = "ipc"
            self.ip = str(self._channel_dir / "zmq")
            self.connection_file = str(self._channel_dir / "connection.json")
        kernel_cmd, kw = await super()._async_pre_start_kernel(**kw)
        self._cgroup = KernelCgroup(self.limits.memory_bytes, self.limits.processes, self.limits.cpu_cores) if self.sandboxed else None
        if self.sandboxed:
            self._report_missing_limits()
            kernel_cmd = [*kernel_cmd, *KERNEL_ARGUMENTS]
            self._workdir = Path(kw.get("cwd") or os.getcwd()).resolve()
            kw["env"] = {}  # bwrap --clearenv sets the kernel's environment
            kw["stdout"] = subprocess.DEVNULL  # ipykernel's banner, and whatever student code writes to fd 1
            kw["stdin"] = subprocess.DEVNULL  # no pipe of the grader's in the kernel's hands
            self._stderr = StderrTail()  # not the worker's log file: a kernel could reopen and forge it
            kw["stderr"] = self._stderr.write_fd
        else:
            env = dict(kw.get("env") or os.environ)
            env.pop("MPLBACKEND", None)  # the kernel's own inline backend: figures reach the feedback
            kw["env"] = env
        kw["preexec_fn"] = self._limit_child
        return kernel_cmd, kw

    def _report_missing_limits(self) -> None:
        missing = [what for what in self._cgroup.missing() if what not in _reported_missing]
        if missing:
            _reported_missing.update(missing)
            self.log.warning("No cgroup limits %s for the grading kernels on this machine (memory falls back to "
                             "RLIMIT_AS; without a CPU cap one notebook can slow a classmate graded beside it)",
                             ", ".join(missing))

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
        try:
            if self.sandboxed:
                if self.preforked:
                    try:
                        self._launch_forked(kernel_cmd)
                        return
                    except ZygoteUnavailable as error:
                        self.log.warning("Starting the kernel from scratch: %s", error)
                kernel_cmd = bwrap_command(kernel_cmd, self._workdir, self._channel_dir, self.limits.work_bytes)
            await super()._async_launch_kernel(kernel_cmd, **kw)
        finally:
            if self._stderr is not None:
                self._stderr.close_writer()  # the kernel holds its own copy

    def _launch_forked(self, kernel_cmd: list[str]) -> None:
        """A kernel forked by the zygote: its sockets in its own ``/tmp``, reached through ``/proc/<pid>/root``."""
        connection = dict(self.get_connection_info())
        connection.update(key=connection["key"].decode(), ip=KERNEL_IP)
        zygote = Zygote.for_python(kernel_cmd[0], self.log)
        process = zygote.spawn(connection, self._rlimits(), self.limits.work_bytes, self._cgroup, self._stderr.write_fd,
                               _kernel_arguments(kernel_cmd))
        measure_kernel_cpu(zygote.take_cpu_seconds())  # the imports (first kernel), then a fork
        provisioner = self.provisioner
        provisioner.process, provisioner.pid, provisioner.pgid = process, process.pid, None
        self._reconcile_connection_info(provisioner.connection_info)
        self.ip = f"/proc/{process.pid}/root{KERNEL_IP}"
        self._workdir = Path(WORK_FOLDER)

    def _rlimits(self) -> dict[str, tuple[int, int]]:
        """The kernel's rlimits (soft, hard) by ``resource`` name; address space only without a memory cgroup."""
        file_bytes, cpu_seconds = self.limits.file_bytes, self.limits.cpu_seconds
        limits = {"RLIMIT_CORE": (0, 0), "RLIMIT_FSIZE": (file_bytes, file_bytes),
                  "RLIMIT_CPU": (cpu_seconds, cpu_seconds + 5)}
        if self._cgroup is None or self._cgroup.memory is None:
            address_space = self.limits.memory_bytes + 2 * GiB  # virtual, not resident: leave room for mappings
            limits["RLIMIT_AS"] = (address_space, address_space)
        return limits

    def _limit_child(self) -> None:
        """In the kernel's process, before ``exec``: rlimits, and into the kernel's cgroup."""
        for name, values in self._rlimits().items():
            resource.setrlimit(getattr(resource, name), values)
        if self._cgroup is not None:
            self._cgroup.enter()

    async def _async_interrupt_kernel(self) -> None:
        # A signal to the process group would reach bwrap, not the kernel: interrupt by message.
        if self.sandboxed and self.has_kernel:
            msg = self.session.msg("interrupt_request", content={})
            self._connect_control_socket()
            self.session.send(self._control_socket, msg)
            return
        await super()._async_interrupt_kernel()

    interrupt_kernel = _async_interrupt_kernel

    async def _async_wait(self, pollinterval: float = 0.1) -> None:
        """Wait until the kernel has ended, looking every 10 ms at most.

        jupyter_client looks every 0.1 s, and a kernel takes a few milliseconds to end after its shutdown
        reply: every graded notebook waited a whole 0.1 s. A look is one ``poll`` (a ``select`` on the
        forked kernel's pidfd, or ``waitpid`` on a kernel started from scratch).
        """
        await super()._async_wait(pollinterval=min(pollinterval, 0.01))

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        self.note_breaches()
        if self._cgroup is not None:
            used = self._cgroup.cpu_seconds()
            if used is not None:
                measure_kernel_cpu(used)
            self._cgroup.remove()
            self._cgroup = None
        if self._channel_dir is not None and not restart:
            shutil.rmtree(self._channel_dir, ignore_errors=True)
            self._channel_dir = None

    cleanup_resources = _async_cleanup_resources

    def work_folder_breach(self) -> str | None:
        """What the kernel overfilled (its work folder's or ``/tmp``'s tmpfs: bytes or files), or None.

        Read from outside, through ``/proc/<pid>/root`` of a process in the sandbox: ``statvfs``
        of each tmpfs counts its used blocks and inodes exactly, at no cost.
        """
        if not self.sandboxed or self._workdir is None or not self.has_kernel:
            return None
        root = self._sandbox_root()
        if root is None:
            return None
        files = 0
        for folder in (str(self._workdir), "/tmp"):
            try:
                usage = os.statvfs(f"{root}{folder}")
            except OSError:
                continue
            used = (usage.f_blocks - usage.f_bfree) * usage.f_frsize
            files += usage.f_files - usage.f_ffree
            if used >= self.limits.work_bytes - MiB:
                where = "its work folder" if folder != "/tmp" else "/tmp"
                return f"the notebook filled {where} ({used >> 20} MB of {self.limits.work_bytes >> 20} MB)"
        if files > self.limits.work_files:
            return f"the notebook created {files} files (at most {self.limits.work_files})"
        return None

    def _sandbox_root(self) -> str | None:
        """``/proc/<pid>/root`` of the kernel inside the sandbox (its mount namespace), or None."""
        import psutil

        process = getattr(self.provisioner, "process", None) if self.provisioner else None
        if isinstance(process, ForkedKernel):
            return f"/proc/{process.pid}/root"
        try:
            inside = psutil.Process(process.pid).children(recursive=True) if process else []
        except psutil.NoSuchProcess:
            return None
        return f"/proc/{inside[-1].pid}/root" if inside else None

    def last_error(self, wait: float = 2.0) -> str:
        """The last error line the kernel wrote to its stderr (why it died before answering), or ``""``."""
        return self._stderr.last_error(wait) if self._stderr is not None else ""

    def cpu_seconds(self) -> float | None:
        """CPU seconds the kernel's cgroup (the kernel and all it started) used so far, or None where unknown."""
        return self._cgroup.cpu_seconds() if self._cgroup is not None else None

    def cpu_periods(self) -> tuple[int, int] | None:
        """CFS periods the kernel's cgroup ran in so far, and those its CPU cap throttled it in (None without a cap)."""
        return self._cgroup.cpu_periods() if self._cgroup is not None else None

    def waited_seconds(self) -> float | None:
        """Seconds the kernel's threads spent ready to run but waiting for a CPU so far (None where unknown).

        The sum of ``run_delay`` in ``/proc/<pid>/task/<tid>/schedstat`` of the kernel process (the
        kernel, not the processes it starts). :class:`~dpgrader.preprocessors.GuardedExecute`
        gives this time back to a notebook's limits.
        """
        process = getattr(self.provisioner, "process", None) if self.provisioner else None
        if process is None:
            return None
        pid = process.pid
        if not isinstance(process, ForkedKernel):  # bwrap, then the kernel: the innermost process
            root = self._sandbox_root()
            if root is None:
                return None
            pid = int(root.split("/")[2])
        total = 0
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/schedstat") as stats:
                    total += int(stats.read().split()[1])
        except (OSError, ValueError, IndexError):
            return None
        return total / 1e9

    def note_breaches(self) -> None:
        """Note the limits this kernel hit (once)."""
        if self._cgroup is not None:
            for status, message in self._cgroup.breaches():
                note(status, message)
        code = self.provisioner.process.returncode if self.provisioner and getattr(self.provisioner, "process", None) else None
        if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            note(Status.CPU_LIMIT, f"the kernel used up its {self.limits.cpu_seconds} CPU seconds and was stopped")


def _kernel_arguments(kernel_cmd: list[str]) -> list[str]:
    """ipykernel's arguments in ``kernel_cmd`` (``python -m ipykernel_launcher -f <file> <arguments>``), ``-f`` left out."""
    arguments = list(kernel_cmd[1:])
    if arguments[:1] == ["-m"]:
        arguments = arguments[2:]
    while "-f" in arguments:
        at = arguments.index("-f")
        del arguments[at:at + 2]
    return [a for a in arguments if not a.startswith("--f=") and a not in KERNEL_ARGUMENTS]  # the fork adds those
