"""The operating-system sandbox every grading kernel runs in (bubblewrap), and its limits.

nbgrader runs a student's notebook in a Jupyter kernel on the grader's machine, as the
grader's user. ``nbgrader_config.py`` selects :class:`SandboxedKernelManager`
(``c.Execute.kernel_manager_class``), so every kernel nbgrader starts, for the class
grader and for plain ``nbgrader autograde`` alike, runs as::

    bwrap --unshare-all --die-with-parent ... -- python -m ipykernel_launcher -f <connection>

What the kernel sees (mount namespace): read-only, the system's ``/usr`` (and ``/lib*``,
``/bin``, a few files of ``/etc``), the Python installation and environment, and the
``dplib`` package folder (not the repository around it); writable, only its working
folder (the copy of the one submission being graded) and a private ``/tmp``. Not the
course (``source/``, gradebooks, other submissions, feedback, ``nbgrader_config.py``),
not ``$HOME``, not the grader's processes (PID namespace) or their file descriptors.
No network (network namespace): the kernel talks to nbgrader over ZeroMQ ``ipc``
sockets in a private folder the grader creates with :func:`tempfile.mkdtemp`.

Limits (:class:`SandboxedKernelManager` traits, set in ``nbgrader_config.py``): memory and
processes by a cgroup per kernel where the machine lets the grader create one (cgroup v1
or v2), else memory by ``RLIMIT_AS``; file size and CPU seconds by rlimits (they bind
root too). The PID namespace kills everything the kernel started when it ends, including
``setsid`` daemons. Output bytes, notebook size and cell count are limited by the
nbgrader plug-ins (:mod:`dplib.grading.preprocessors`). Each breach is noted with its
:class:`~dplib.grading.outcomes.Status`.

Where bubblewrap cannot run, grading stops with :class:`SandboxUnavailable`, whose
message names the fix. ``DPLIB_NO_SANDBOX=1`` (or ``--no-sandbox`` on the class
grader) grades unsandboxed anyway, with a warning.
"""

from __future__ import annotations

import atexit
import functools
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Int

from dplib.grading.outcomes import Status, note

OPT_OUT_VARIABLE = "DPLIB_NO_SANDBOX"
FIX = (
    "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`), "
    f"or grade unsandboxed at your own risk with `--no-sandbox` (class grader) or {OPT_OUT_VARIABLE}=1"
)
DPLIB_DIR = Path(__file__).resolve().parents[1]  # the dplib package folder only, not the repository

GiB, MiB = 1 << 30, 1 << 20
# Environment of the kernel: nothing of the grader's is passed on (no JPY_PARENT_PID: with it
# set, the kernel exits when it cannot see that process).
KERNEL_ENV = {
    "HOME": "/tmp/home",
    "MPLBACKEND": "module://matplotlib_inline.backend_inline",  # figures appear in feedback
    "MPLCONFIGDIR": "/tmp/matplotlib",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "LANG": "C.UTF-8",
}
ETC_FILES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "passwd", "group",
    "nsswitch.conf", "fonts", "mime.types", "matplotlibrc",
)


class SandboxUnavailable(RuntimeError):
    """No sandbox can run here: grading stops, unless the instructor opts out explicitly."""


@functools.lru_cache(maxsize=None)
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot sandbox a kernel on this machine, or None if it can."""
    binary = shutil.which("bwrap")
    if binary is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        probe = subprocess.run(
            [binary, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true"],
            capture_output=True, text=True, timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bwrap could not start: {error}"
    if probe.returncode != 0:
        return f"bwrap cannot create namespaces here: {probe.stderr.strip()[:300]}"
    return None


def opted_out() -> bool:
    """True when the instructor asked for unsandboxed grading (``DPLIB_NO_SANDBOX=1``)."""
    return os.environ.get(OPT_OUT_VARIABLE, "").strip().lower() in ("1", "true", "yes")


def require_sandbox() -> bool:
    """True if kernels will be sandboxed; False (with a warning) if the instructor opted out.

    Raises
    ------
    SandboxUnavailable
        If bubblewrap cannot run here and the instructor did not opt out.
    """
    if opted_out():
        warnings.warn(
            f"{OPT_OUT_VARIABLE} is set: student code runs UNSANDBOXED, with the grader's rights "
            "over every file of the course", RuntimeWarning, stacklevel=2,
        )
        return False
    problem = bwrap_problem()
    if problem:
        raise SandboxUnavailable(f"cannot sandbox the grading kernels: {problem}. Fix: {FIX}")
    return True


# --- cgroups ---------------------------------------------------------------------------------------


class KernelCgroup:
    """A cgroup of one kernel (and all it starts): memory and process-count limits, and their breaches.

    cgroup v1 (a ``memory`` and a ``pids`` hierarchy) or v2 (one unified hierarchy), created
    below the grader's own cgroup with an unguessable name. ``memory`` / ``pids`` are None
    where the controller is not available or not writable: the caller falls back.
    """

    def __init__(self, memory_bytes: int, processes: int):
        self.name = f"dplib-kernel-{secrets.token_hex(8)}"
        self.memory = self._make("memory", {  # v1 and v2 names; memory + swap capped alike: no swapping past it
            "memory.limit_in_bytes": memory_bytes, "memory.memsw.limit_in_bytes": memory_bytes,
            "memory.max": memory_bytes, "memory.swap.max": 0,
        })
        self.pids = self._make("pids", {"pids.max": processes})

    def _make(self, controller: str, values: dict) -> Path | None:
        for base in self._bases(controller):
            folder = base / self.name
            try:
                folder.mkdir()
            except OSError:
                continue
            try:
                written = 0
                for key, value in values.items():
                    if (folder / key).exists():
                        (folder / key).write_text(str(value))
                        written += 1
                if written:
                    return folder
            except OSError:
                pass
            self._remove(folder)
        return None

    @staticmethod
    def _bases(controller: str) -> list[Path]:
        """Candidate parent folders for a new cgroup of ``controller``: under the grader's own first."""
        bases = []
        try:
            lines = Path("/proc/self/cgroup").read_text().splitlines()
        except OSError:
            return bases
        for line in lines:
            _, names, path = line.split(":", 2)
            path = path.lstrip("/")
            if controller in names.split(","):
                bases += [Path("/sys/fs/cgroup") / controller / path, Path("/sys/fs/cgroup") / controller]
            elif names == "" and (Path("/sys/fs/cgroup") / "cgroup.controllers").exists():  # v2 only
                v2 = Path("/sys/fs/cgroup") / path
                try:
                    if controller in (v2 / "cgroup.subtree_control").read_text().split():
                        bases.append(v2)
                except OSError:
                    pass
        return bases

    def enter(self) -> None:
        """Move the calling process into the cgroup (called in the child, before ``exec``)."""
        for folder in (self.memory, self.pids):
            if folder is not None:
                (folder / "cgroup.procs").write_text(str(os.getpid()))

    def breaches(self) -> list[tuple[Status, str]]:
        """The limits that were hit, as notes."""
        found = []
        if self.memory is not None and _counter(self.memory, ("memory.oom_control", "memory.events"), "oom_kill") > 0:
            found.append((Status.MEMORY_LIMIT, "the kernel ran out of its memory limit and was killed"))
        if self.pids is not None and _counter(self.pids, ("pids.events",), "max") > 0:
            found.append((Status.PROCESS_LIMIT, "the notebook tried to start more processes than allowed"))
        return found

    def remove(self) -> None:
        for folder in (self.memory, self.pids):
            if folder is not None:
                self._remove(folder)

    @staticmethod
    def _remove(folder: Path) -> None:
        try:
            for pid in (folder / "cgroup.procs").read_text().split():  # nothing should be left: the PID namespace ended
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
        except OSError:
            pass
        for _ in range(50):
            try:
                folder.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                import time

                time.sleep(0.05)


def _counter(folder: Path, files: tuple[str, ...], key: str) -> int:
    for name in files:
        try:
            for line in (folder / name).read_text().splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[0] == key:
                    return int(parts[1])
        except (OSError, ValueError):
            continue
    return 0


# --- the command -----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _font_cache() -> Path | None:
    """A matplotlib font cache built once per grading process, bound read-only into every kernel."""
    folder = Path(tempfile.mkdtemp(prefix="dplib-mplcache-"))
    atexit.register(shutil.rmtree, folder, True)
    env = {**os.environ, "MPLCONFIGDIR": str(folder), "MPLBACKEND": "Agg"}
    try:
        subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], env=env, timeout=120,
                       capture_output=True, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return folder


def bwrap_command(kernel_cmd: list[str], workdir: Path, channel_dir: Path) -> list[str]:
    """``bwrap <options> -- <kernel_cmd>``: the kernel sees only what it needs (see the module docstring).

    Parameters
    ----------
    kernel_cmd : list of str
        The kernel's own command line (``python -m ipykernel_launcher -f <connection file>``).
    workdir : Path
        The only writable folder: the copy of the submission being graded (the kernel's cwd).
    channel_dir : Path
        The grader-created private folder of the connection file and the ``ipc`` sockets.
    """
    args = ["bwrap", "--unshare-all", "--die-with-parent", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for top in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    args += ["--dir", "/etc"]
    for name in ETC_FILES:
        if (Path("/etc") / name).exists():
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    readable = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), DPLIB_DIR}
    python = Path(kernel_cmd[0])
    if python.is_absolute():
        readable.add(python.resolve().parent.parent)  # the kernel's own Python installation
    for path in sorted(readable):
        if not any(str(path).startswith(f"{other}/") for other in readable if other != path):
            args += ["--ro-bind", str(path), str(path)]
    if Path(sys.prefix) != Path(sys.prefix).resolve():
        args += ["--symlink", str(Path(sys.prefix).resolve()), str(sys.prefix)]
    args += ["--bind", str(channel_dir), str(channel_dir), "--bind", str(workdir), str(workdir)]
    args += ["--dir", KERNEL_ENV["HOME"], "--dir", KERNEL_ENV["MPLCONFIGDIR"]]
    cache = _font_cache()
    if cache is not None:
        for item in cache.glob("fontlist-*.json"):
            args += ["--ro-bind", str(item), f"{KERNEL_ENV['MPLCONFIGDIR']}/{item.name}"]
    args += ["--chdir", str(workdir), "--clearenv"]
    path = os.pathsep.join([str(Path(sys.prefix) / "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
    for key, value in {**KERNEL_ENV, "PATH": path}.items():
        args += ["--setenv", key, value]
    return args + ["--", *kernel_cmd]


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager whose kernels run in :func:`bwrap_command`'s sandbox, with limits.

    Select it for nbgrader with ``c.Execute.kernel_manager_class =
    "dplib.grading.sandbox.SandboxedKernelManager"``. Where the instructor opted out
    (``DPLIB_NO_SANDBOX=1``) it starts plain kernels (still with the rlimits).
    """

    memory_limit = Int(2 * GiB, help="Bytes of memory for the kernel and all it starts.").tag(config=True)
    process_limit = Int(64, help="Processes (and threads) the kernel may have at once.").tag(config=True)
    file_size_limit = Int(256 * MiB, help="Largest file the kernel may write, in bytes.").tag(config=True)
    cpu_limit = Int(600, help="CPU seconds of the kernel process (per notebook).").tag(config=True)

    _channel_dir: Path | None = None
    _cgroup: KernelCgroup | None = None
    sandboxed: bool = False

    async def _async_pre_start_kernel(self, **kw):
        self.sandboxed = require_sandbox()
        if self.sandboxed:
            self._channel_dir = Path(tempfile.mkdtemp(prefix="dplib-kernel-"))  # 0700, unguessable
            self.transport = "ipc"
            self.ip = str(self._channel_dir / "zmq")
            self.connection_file = str(self._channel_dir / "connection.json")
        kernel_cmd, kw = await super()._async_pre_start_kernel(**kw)
        self._cgroup = KernelCgroup(self.memory_limit, self.process_limit) if self.sandboxed else None
        if self.sandboxed:
            workdir = Path(kw.get("cwd") or os.getcwd()).resolve()
            kernel_cmd = bwrap_command(kernel_cmd, workdir, self._channel_dir)
            kw["env"] = {}  # bwrap --clearenv sets the kernel's environment
            kw["stdout"] = subprocess.DEVNULL  # ipykernel's banner, and whatever student code writes to fd 1
            kw["stdin"] = subprocess.DEVNULL  # no pipe of the grader's in the kernel's hands
        else:
            env = dict(kw.get("env") or os.environ)
            env.pop("MPLBACKEND", None)  # the kernel's own inline backend: figures reach the feedback
            kw["env"] = env
        kw["preexec_fn"] = self._limit_child
        return kernel_cmd, kw

    def _limit_child(self) -> None:
        """In the kernel's process, before ``exec``: rlimits, and into the kernel's cgroup."""
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.file_size_limit, self.file_size_limit))
        resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_limit, self.cpu_limit + 5))
        if self._cgroup is None or self._cgroup.memory is None:
            address_space = self.memory_limit + 2 * GiB  # virtual, not resident: leave room for mappings
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
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

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        self.note_breaches()
        if self._cgroup is not None:
            self._cgroup.remove()
            self._cgroup = None
        if self._channel_dir is not None and not restart:
            shutil.rmtree(self._channel_dir, ignore_errors=True)
            self._channel_dir = None

    cleanup_resources = _async_cleanup_resources

    def note_breaches(self) -> None:
        """Note the limits this kernel hit (once)."""
        if self._cgroup is not None:
            for status, message in self._cgroup.breaches():
                note(status, message)
        code = self.provisioner.process.returncode if self.provisioner and getattr(self.provisioner, "process", None) else None
        if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            note(Status.CPU_LIMIT, f"the kernel used up its {self.cpu_limit} CPU seconds and was stopped")
