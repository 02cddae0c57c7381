"""The bubblewrap command a grading kernel runs in, and whether bubblewrap can run here at all."""

from __future__ import annotations

import atexit
import functools
import json
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


class KernelPackagesMissing(RuntimeError):
    """The kernel's Python cannot import the course's packages: no notebook could be graded."""


# What a grading kernel imports from the course's own code: the library, and the guard (not the rest
# of the grader: its review rules and thresholds stay out of the kernel's sight).
KERNEL_PACKAGES = ("dplib", "dpgrader.guard")
_FIND_PACKAGES = """
import importlib.util, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        spec = importlib.util.find_spec(name)
    except ImportError:  # its parent package is missing
        spec = None
    found[name] = None if spec is None or not spec.submodule_search_locations else [
        spec.submodule_search_locations[0], spec.origin]
print(json.dumps(found))
"""


@functools.lru_cache(maxsize=None)
def kernel_packages(python: str) -> dict[str, Path]:
    """The folders of :data:`KERNEL_PACKAGES` as the kernel's Python resolves them, plus ``dpgrader``'s ``__init__``.

    Resolved by that Python itself, with the kernel's cleared environment and from an empty
    folder, so an editable install made in another checkout is found where the kernel will
    find it, not where this grading process imported its own copy.

    Raises
    ------
    KernelPackagesMissing
        If the kernel's Python cannot import one of them (the message says which and how to fix it).
    """
    with tempfile.TemporaryDirectory(prefix="dplib-resolve-") as empty:
        env = {**KERNEL_ENV, "PATH": os.pathsep.join([str(Path(python).parent), "/usr/bin", "/bin"])}
        try:
            probe = subprocess.run([python, "-c", _FIND_PACKAGES, *KERNEL_PACKAGES], cwd=empty, env=env,
                                   capture_output=True, text=True, timeout=120)
            found = json.loads(probe.stdout)
        except (OSError, subprocess.SubprocessError, ValueError) as error:
            raise KernelPackagesMissing(f"the kernel's Python {python} could not be asked where the course's "
                                        f"packages are: {error}") from error
    missing = [name for name, where in found.items() if where is None]
    if missing:
        raise KernelPackagesMissing(
            f"the kernel's Python {python} cannot import {', '.join(missing)}: install the course into it "
            f"(`{python} -m pip install -e <course folder>`, or `make install`)")
    packages = {name: Path(where[0]).resolve() for name, where in found.items()}
    packages["dpgrader/__init__.py"] = Path(found["dpgrader.guard"][0]).resolve().parent / "__init__.py"
    return packages


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
    """A matplotlib font cache, bound read-only into every kernel; None if matplotlib cannot build one.

    Built once per user and matplotlib version (in ``~/.cache/dplib/``; building takes a second, once per
    grading process before), else once per grading process in a temporary folder.
    """
    from importlib.metadata import version

    shared = _user_cache_dir() / f"matplotlib-{version('matplotlib')}-fonts"
    if any(shared.glob("fontlist-*.json")):
        return shared
    try:
        shared.parent.mkdir(parents=True, exist_ok=True)
        built = _build_font_cache(shared.parent)
    except OSError:  # no writable cache folder: this process's own copy
        built = _build_font_cache(None)
    if built is None:
        return None
    try:  # published whole or not at all: a grading process beside this one may be building it too
        os.rename(built, shared)
        return shared
    except OSError:  # another process published it first (or the folder is not writable): this process's own
        atexit.register(shutil.rmtree, built, True)
        return built


def _user_cache_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "dplib"


def _build_font_cache(parent: Path | None) -> Path | None:
    """A new folder (in ``parent``, else the temporary folder) holding matplotlib's font list; None if it fails."""
    folder = Path(tempfile.mkdtemp(prefix="dplib-mplcache-", dir=parent))
    env = {**os.environ, "MPLCONFIGDIR": str(folder), "MPLBACKEND": "Agg"}
    try:
        subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], env=env, timeout=120,
                       capture_output=True, check=True)
    except (OSError, subprocess.SubprocessError):
        shutil.rmtree(folder, True)
        return None
    return folder


def bwrap_command(kernel_cmd: list[str], workdir: Path | str, channel_dir: Path | None,
                  work_bytes: int = 256 * MiB, keep_capabilities: tuple[str, ...] = ()) -> list[str]:
    """``bwrap <options> -- <kernel_cmd>``: the kernel sees only what it needs (see :mod:`dpgrader.sandbox`).

    Parameters
    ----------
    kernel_cmd : list of str
        The kernel's own command line (``python -m ipykernel_launcher -f <connection file>``).
    workdir : Path
        The kernel's working folder (where nbgrader runs the submission). Inside the sandbox it is
        an empty private tmpfs of ``work_bytes`` bytes, like ``/tmp``: the kernel writes nothing
        to the grader's disk, and what it writes is gone when it ends.
    channel_dir : Path or None
        The grader-created private folder of the connection file and the ``ipc`` sockets (None for
        the zygote of :mod:`dpgrader.sandbox.zygote`, which talks over an inherited socket).
    keep_capabilities : tuple of str
        Capabilities kept in the sandbox's user namespace (every other one is dropped). The zygote keeps
        ``CAP_SYS_ADMIN`` to give each kernel it forks namespaces and mounts of its own, and
        ``CAP_SETPCAP`` to empty their bounding set; the kernels themselves drop every capability.
    """
    size = ["--size", str(int(work_bytes))]
    # --cap-drop ALL: run by root, bwrap keeps every capability inside the sandbox's user namespace,
    # enough to remount a read-only bind (the course's packages) writable and change the next grade.
    args = ["bwrap", "--unshare-all", "--die-with-parent", "--cap-drop", "ALL"]
    for capability in keep_capabilities:
        args += ["--cap-add", capability]
    args += ["--proc", "/proc", "--dev", "/dev", *size, "--tmpfs", "/tmp"]
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
    python = Path(kernel_cmd[0]) if Path(kernel_cmd[0]).is_absolute() else Path(shutil.which(kernel_cmd[0]) or sys.executable)
    # the course's packages where the kernel will import them; of dpgrader, only the guard
    readable = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), python.parent.parent.resolve(),
                *kernel_packages(str(python)).values()}
    for path in sorted(readable):
        if not any(str(path).startswith(f"{other}/") for other in readable if other != path):
            args += ["--ro-bind", str(path), str(path)]
    if Path(sys.prefix) != Path(sys.prefix).resolve():
        args += ["--symlink", str(Path(sys.prefix).resolve()), str(sys.prefix)]
    if channel_dir is not None:
        args += ["--bind", str(channel_dir), str(channel_dir)]
    args += [*size, "--tmpfs", str(workdir)]
    args += ["--dir", KERNEL_ENV["HOME"], "--dir", KERNEL_ENV["MPLCONFIGDIR"]]
    cache = _font_cache()
    if cache is not None:
        for item in cache.glob("fontlist-*.json"):
            args += ["--ro-bind", str(item), f"{KERNEL_ENV['MPLCONFIGDIR']}/{item.name}"]
    # the sandbox's root (a tmpfs of bwrap's) read-only: written files go to the size-limited tmpfs only
    args += ["--remount-ro", "/", "--chdir", str(workdir), "--clearenv"]
    path = os.pathsep.join([str(Path(sys.prefix) / "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
    for key, value in {**KERNEL_ENV, "PATH": path}.items():
        args += ["--setenv", key, value]
    return args + ["--", *kernel_cmd]

