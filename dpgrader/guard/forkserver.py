"""The kernel side of a pre-imported grading kernel: a zygote that forks one isolated kernel per notebook.

Starting a kernel and importing numpy, pandas, scipy.stats, matplotlib and dplib costs about as
much CPU as the cells of a notebook. The zygote pays it once per grading process: it runs inside
the grading sandbox (``bwrap``, see :mod:`dpgrader.sandbox`), imports all that, runs no student
code, and for every notebook forks a child that becomes a kernel on its own:

1. **Report, and be put in the kernel's cgroup.** The child takes its own descriptors (stdin and
   stdout ``/dev/null``, stderr the write end of a pipe of its own sent with the request, whose
   last lines the grader keeps; every other inherited descriptor closed), writes one byte to the
   kernel's socket (the grader reads its PID through ``SO_PASSCRED``), and waits for the grader to
   move it into the kernel's cgroup (memory, processes, CPU cap and accounting).
2. **Limits.** The kernel's rlimits (file size, CPU seconds, core files; address space where no
   memory cgroup could be made).
3. **Namespaces.** New mount, PID, network, IPC and UTS namespaces. Every mount it inherited
   becomes read-only; fresh, size-limited tmpfs are mounted at ``/tmp``, at the work folder and
   at ``/dev/shm``. Nothing written by one notebook is seen by the next. What bubblewrap bound
   read-only below ``/tmp`` (an environment, the course's packages or the font cache of a course
   that lives under ``/tmp``: every mount below ``/tmp`` in the zygote's view) is bound back,
   read-only, on the fresh ``/tmp``: the kernel's lazy imports find their files.
4. **The kernel.** A second fork, PID 1 of the new PID namespace, mounts a procfs of that
   namespace (its system parts read-only, as bubblewrap has them: no other process can be
   seen), drops every capability (the zygote keeps ``CAP_SYS_ADMIN`` for the mounts and
   ``CAP_SETPCAP`` to empty the bounding set) and forks
   the kernel, which sends its PID to the grader, waits for the grader to take it, closes
   the socket and runs ``ipykernel`` on its connection file, with IPython's history database
   disabled (:data:`KERNEL_ARGUMENTS`: no ``history.sqlite`` records the cells, hidden tests
   included), after the kernel arguments the grader forwards. When the kernel ends, PID 1 exits
   as it did and everything the kernel started ends with the namespace.

The first child waits for PID 1 and writes its wait status to the socket. The zygote and
that child are not dumpable (no process may read or write their memory through ``/proc``), and
both die with their parent (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import ctypes
import errno
import importlib
import json
import os
import resource
import signal
import socket
import struct
import sys
import threading
import traceback

# What every notebook's kernel would import: loaded once, shared copy-on-write by the forks.
PRELOADED = (
    "ipykernel.kernelapp", "ipykernel.ipkernel", "IPython", "numpy", "pandas", "scipy.stats", "matplotlib",
    "matplotlib.figure", "matplotlib.backends.backend_agg", "dplib", "dplib.testing", "dpgrader.guard",
    # what IPKernelApp.initialize imports besides: debugpy's ~140 modules were 0.1 of each kernel's 0.17 CPU s
    "ipykernel.debugger", "IPython.core.completerlib", "IPython.extensions.storemagic",
)
KERNEL_FOLDER = "/tmp/kernel"  # the kernel's connection file and ipc sockets, in its own /tmp
WORK_FOLDER = "/notebook"  # the kernel's working folder, an empty tmpfs of its own (no host path is bound there)
STATUS = struct.Struct("=i")  # the kernel's wait status, written by the first child
# Last on every grading kernel's command line (forked or started from scratch): no record of the cells on disk.
# IPython would write each cell, hidden tests included, to ~/.ipython/profile_default/history.sqlite as it
# starts; In / _ih stay (in memory). ipykernel's other file of cells, /tmp/ipykernel_<pid>/<hash>.py, is written
# only on the debugger's dumpCell request, with the code that request carries: never a test cell's.
KERNEL_ARGUMENTS = ("--HistoryManager.enabled=False",)

_CLONE = {"mount": 0x00020000, "pid": 0x20000000, "net": 0x40000000, "ipc": 0x08000000,
          "uts": 0x04000000}
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = (
    1, 2, 4, 8, 32, 4096, 0x4000, 1 << 18)
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_CAPBSET_DROP = 1, 4, 24
_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str | None = None) -> None:
    encode = (lambda text: None if text is None else text.encode())
    _check(_libc.mount(encode(source), encode(target), encode(kind), flags, encode(data)), f"mount {target}")


def _die_with_parent() -> None:
    _check(_libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")


def _not_dumpable() -> None:
    _check(_libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0), "PR_SET_DUMPABLE")


# --- the child: limits and namespaces ---------------------------------------------------------------


def _set_limits(limits: dict[str, list[int]]) -> None:
    """The rlimits the grader chose, by ``resource`` name (``SandboxedKernelManager._rlimits``)."""
    for name, (soft, hard) in limits.items():
        resource.setrlimit(getattr(resource, name), (soft, hard))


def _enter_namespaces() -> None:
    """New mount, PID, network, IPC and UTS namespaces (in the sandbox's own user namespace).

    Not a new user namespace: in one, every inherited mount would be locked, and no fresh procfs
    could be mounted below bubblewrap's (whose ``/proc/sys`` is covered).
    """
    _check(_libc.unshare(sum(_CLONE.values())), "unshare")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)


def _mount_points() -> list[str]:
    with open("/proc/self/mountinfo") as file:
        return [line.split()[4].replace("\\040", " ") for line in file]


def _make_read_only(points: list[str]) -> None:
    """Remount ``points`` read-only, keeping their nosuid, nodev and noexec (locked: they cannot be dropped)."""
    for point in points:
        try:
            flags = os.statvfs(point).f_flag
        except OSError:
            continue
        if flags & os.ST_RDONLY:
            continue
        kept = sum(bit for bit, st in ((_MS_NOSUID, os.ST_NOSUID), (_MS_NODEV, os.ST_NODEV),
                                       (_MS_NOEXEC, os.ST_NOEXEC)) if flags & st)
        _mount(None, point, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | kept)


def _make_everything_read_only() -> None:
    _make_read_only(_mount_points())


def _outermost(points: list[str]) -> list[str]:
    """``points`` without those inside another one (a bind of ``/tmp/a`` takes ``/tmp/a/b`` with it)."""
    return [p for p in points if not any(p.startswith(f"{q}/") for q in points if q != p)]


def _open_binds_under_tmp() -> list[tuple[str, int]]:
    """The mounts below ``/tmp`` (what bubblewrap bound there: a course or environment under ``/tmp``), opened.

    An ``O_PATH`` descriptor of each, taken before a fresh tmpfs covers ``/tmp``, is the source
    that binds it back (``/proc/self/fd/<n>``).
    """
    points = _outermost(sorted({p for p in _mount_points() if p.startswith("/tmp/")}))
    return [(point, os.open(point, os.O_PATH | os.O_CLOEXEC)) for point in points]


def _bind_back(opened: list[tuple[str, int]]) -> None:
    """Bind each opened mount back at its path on the fresh ``/tmp``, read-only."""
    for point, fd in opened:
        source = f"/proc/self/fd/{fd}"
        if os.path.isdir(source):
            os.makedirs(point, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(point), exist_ok=True)
            open(point, "a").close()
        _mount(source, point, None, _MS_BIND | _MS_REC)
        os.close(fd)
        _make_read_only([p for p in _mount_points() if p == point or p.startswith(f"{point}/")])


def _private_folders(work_bytes: int, connection: dict) -> None:
    """Fresh tmpfs where the kernel may write (what was bound below ``/tmp`` bound back), and its connection file."""
    size = f"size={int(work_bytes)},mode=0755"
    under_tmp = _open_binds_under_tmp()
    for target in ("/tmp", WORK_FOLDER):
        _mount("tmpfs", target, "tmpfs", _MS_NOSUID | _MS_NODEV, size)
    _bind_back(under_tmp)
    if os.path.isdir("/dev/shm"):
        _mount("tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "size=1m,mode=1777")
    for folder in (os.environ.get("HOME", "/tmp/home"), os.environ.get("MPLCONFIGDIR", "/tmp/matplotlib"),
                   KERNEL_FOLDER):
        os.makedirs(folder, exist_ok=True)
    with open(f"{KERNEL_FOLDER}/connection.json", "w") as file:
        json.dump(connection, file)


def _mount_proc() -> None:
    """A procfs of the new PID namespace (called by its PID 1), its system parts read-only as bubblewrap has them."""
    _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    for part in ("sys", "sysrq-trigger", "irq", "bus"):
        path = f"/proc/{part}"
        if os.path.exists(path):
            _mount(path, path, None, _MS_BIND | _MS_REC)
            _mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)


def _drop_capabilities() -> None:
    """Empty the bounding set and the permitted, effective and inheritable sets (``capset``, version 3)."""
    for capability in range(64):
        if _libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            if ctypes.get_errno() == errno.EINVAL:
                break  # past the last capability this kernel knows
            _check(-1, f"dropping capability {capability} from the bounding set")
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    _check(_libc.capset(header, data), "capset")


def _handshake(kernel: socket.socket, say: bytes, expect: bytes) -> None:
    """Say who is here (the grader reads the PID through ``SO_PASSCRED``) and wait for the grader's answer."""
    kernel.sendall(say)
    if kernel.recv(1) != expect:
        os._exit(0)  # the grader gave up on this kernel


def _run_kernel(arguments: list[str]) -> None:
    from ipykernel.kernelapp import IPKernelApp

    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]  # as ipykernel_launcher: the working folder is not a place to import from
    IPKernelApp.launch_instance(argv=["-f", f"{KERNEL_FOLDER}/connection.json", *arguments, *KERNEL_ARGUMENTS])


def _own_descriptors(stderr: int, kernel: socket.socket) -> None:
    """stdin and stdout ``/dev/null``, stderr the kernel's own pipe, and no other inherited descriptor but ``kernel``."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.dup2(stderr, 2)
    keep = kernel.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, os.sysconf("SC_OPEN_MAX"))


def _child(kernel: socket.socket, stderr: int, request: dict) -> None:
    """The first child: report, take the limits and namespaces, fork the namespace's init, write its status."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _die_with_parent()
    _own_descriptors(stderr, kernel)
    _handshake(kernel, b"A", b"G")
    _set_limits(request["limits"])
    _enter_namespaces()
    _make_everything_read_only()
    _private_folders(request["work_bytes"], request["connection"])
    init = os.fork()
    if init == 0:
        _init(kernel, request)
    _, status = os.waitpid(init, 0)
    kernel.sendall(STATUS.pack(status))
    os._exit(0)


def _init(kernel: socket.socket, request: dict) -> None:
    """PID 1 of the new PID namespace, without capabilities: fork the kernel, wait, exit as it did.

    Its exit code is the kernel's, or ``128 + signal`` if a signal ended it (as a shell reports it).
    When it exits, every process left in the namespace is killed.
    """
    try:
        _die_with_parent()
        _mount_proc()
        _drop_capabilities()
        pid = os.fork()
        if pid == 0:
            _kernel(kernel, request.get("arguments") or [])
        kernel.close()
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        os._exit(code if code >= 0 else 128 - code)
    except BaseException:
        traceback.print_exc()
        os._exit(70)


def _kernel(kernel: socket.socket, arguments: list[str]) -> None:
    """The kernel: say who it is, wait until the grader holds it, then run ipykernel.

    If ipykernel cannot start (an import fails), its traceback goes to the kernel's stderr pipe (a
    copy of it: ipykernel soon redirects fd 2 to the notebook), where the grader finds why it died.
    """
    stderr = os.dup(2)  # not inherited by what the kernel starts (os.dup is close-on-exec)
    try:
        _die_with_parent()
        _handshake(kernel, b"K", b"K")
        kernel.close()
        os.chdir(WORK_FOLDER)
        _run_kernel(arguments)
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 0
    except BaseException:
        os.write(stderr, traceback.format_exc().encode(errors="replace")[-8192:])
        code = 70
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


# --- the zygote ------------------------------------------------------------------------------------


def serve(control: socket.socket) -> None:
    """Fork a kernel for every request on ``control`` until the grader closes it.

    A request is a JSON object (``connection``: the kernel's connection information; ``limits``;
    ``work_bytes``; ``arguments``: the kernel's own command-line arguments) sent with two file
    descriptors: the kernel's own socket to the grader, and the write end of its stderr pipe.
    """
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the first children are reaped by the system
    while True:
        message, fds, _, _ = socket.recv_fds(control, 1 << 16, 2)
        if not message:
            return
        if len(fds) != 2:
            for fd in fds:
                os.close(fd)
            continue
        request = json.loads(message)
        kernel, stderr = socket.socket(fileno=fds[0]), fds[1]
        if os.fork() == 0:
            try:
                control.close()
                _child(kernel, stderr, request)
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(70)
        kernel.close()
        os.close(stderr)


def main(fd: int) -> None:
    _die_with_parent()
    _not_dumpable()
    control = socket.socket(fileno=fd)
    for name in PRELOADED:
        importlib.import_module(name)
    if threading.active_count() != 1:  # a fork keeps only the thread that forks: the others' state would be lost
        raise RuntimeError(f"the zygote's imports started threads: {threading.enumerate()}")
    control.sendall(b"ready")
    serve(control)


if __name__ == "__main__":
    main(int(sys.argv[1]))
