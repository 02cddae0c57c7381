"""The bubblewrap command a grading kernel runs in, and whether bubblewrap can run here at all."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path



OPT_OUT_VARIABLE = "DPLIB_NO_SANDBOX"
FIX = (
    "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`), "
    f"or grade unsandboxed at your own risk with `--no-sandbox` (class grader) or {OPT_OUT_VARIABLE}=1"
)
DPLIB_DIR = Path(__file__).resolve().parents[2] / "dplib"  # the dplib package folder only, not the repository

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
    """``bwrap <options> -- <kernel_cmd>``: the kernel sees only what it needs (see :mod:`dpgrader.sandbox`).

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

