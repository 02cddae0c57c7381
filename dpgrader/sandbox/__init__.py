"""The operating-system sandbox every grading kernel runs in (bubblewrap), and its limits.

nbgrader runs a student's notebook in a Jupyter kernel on the grader's machine, as the
grader's user. ``nbgrader_config.py`` selects :class:`SandboxedKernelManager`
(``c.Execute.kernel_manager_class``), so every kernel nbgrader starts, for the class
grader and for plain ``nbgrader autograde`` alike, runs as::

    bwrap --unshare-all --die-with-parent ... -- python -m ipykernel_launcher -f <connection>

What the kernel sees (mount namespace): read-only, the system's ``/usr`` (and ``/lib*``,
``/bin``, a few files of ``/etc``), the Python installation and environment, the
``dplib`` package folder and the guard of ``dpgrader`` (:func:`kernel_packages`: where the kernel's
Python imports them from; not the repository around them, not the rest of the grader); writable, only two private,
size-limited tmpfs, one at its working folder (empty: the notebook reaches the kernel as messages,
not as a file) and one at ``/tmp``; what it writes never reaches the grader's disk. Not the
course (``source/``, gradebooks, other submissions, feedback, ``nbgrader_config.py``),
not ``$HOME``, not the grader's processes (PID namespace) or their file descriptors.
No capabilities (``--cap-drop ALL``: run by root, bwrap would otherwise keep them, and a kernel could remount
its read-only binds writable). No network (network namespace): the kernel talks to nbgrader over ZeroMQ ``ipc``
sockets in a private folder the grader creates with :func:`tempfile.mkdtemp`.

Limits (:class:`SandboxedKernelManager` traits, set in ``nbgrader_config.py``): bytes and files
written (the tmpfs sizes; checked after every cell, a breach stops the notebook), memory,
processes and CPU share by a cgroup per kernel where the machine lets the grader create one
(cgroup v1 or v2), else memory by ``RLIMIT_AS`` (a limit without its cgroup is logged); file size and CPU
seconds by rlimits (they bind root too). The CPU cap (``cpu_cores``, one core by default) holds every
process of the kernel together, whatever sessions they start: a notebook cannot starve a classmate
graded beside it, and the notebook's time limits count the time its kernel got
(:class:`~dpgrader.preprocessors.GuardedExecute`).

Nothing of the grader's: the kernel's (and the zygote's) stdin and stdout are ``/dev/null``, its
stderr a pipe whose last 8 KiB the grader keeps (:mod:`.stderr`: why a kernel died before it answered,
shown by the pre-flight); no other descriptor is inherited. No record of the cells: IPython's
history database is disabled (``--HistoryManager.enabled=False``, last on every kernel's command line). The PID namespace kills everything the kernel started when it ends, including
``setsid`` daemons. Output bytes, notebook size and cell count are limited by the
nbgrader plug-ins (:mod:`dpgrader.preprocessors`). Each breach is noted with its
:class:`~dpgrader.outcomes.Status`.

Every kernel but the first is cheap: :mod:`.zygote` starts, once per grading process, a
sandboxed Python (same command, same view) that imports ipykernel, numpy, pandas, scipy.stats,
matplotlib and dplib and then only forks. Each fork takes new mount, PID, network, IPC and UTS
namespaces, makes every inherited mount read-only, mounts fresh tmpfs at ``/tmp`` (binding back,
read-only, what bwrap bound below ``/tmp``: a course or environment that lives there), its work
folder (``/notebook``) and ``/dev/shm`` and a procfs of its own, joins its cgroup, drops every
capability and runs the kernel (see :mod:`dpgrader.guard.forkserver`). Nothing of one notebook
reaches the next; where the zygote cannot run, the kernel starts from scratch as above.

Where bubblewrap cannot run, grading stops with :class:`SandboxUnavailable`, whose
message names the fix. ``DPLIB_NO_SANDBOX=1`` (or ``--no-sandbox`` on the class
grader) grades unsandboxed anyway, with a warning.
The package holds :mod:`.command` (the ``bwrap`` command, and whether it can run),
:mod:`.cgroup` (the cgroup limits), :mod:`.stderr` (a kernel's stderr pipe), :mod:`.zygote` (the forking of kernels) and :mod:`.manager` (the kernel manager); the names
below are re-exported here, under the dotted names ``nbgrader_config.py`` uses.
"""

from dpgrader.sandbox.cgroup import KernelCgroup
from dpgrader.sandbox.command import (  # noqa: F401 (re-exported)
    GiB,
    MiB,
    KERNEL_PACKAGES,
    KernelPackagesMissing,
    ETC_FILES,
    FIX,
    KERNEL_ENV,
    OPT_OUT_VARIABLE,
    SandboxUnavailable,
    bwrap_command,
    bwrap_problem,
    kernel_packages,
    opted_out,
    require_sandbox,
)
from dpgrader.sandbox.manager import SandboxedKernelManager

__all__ = [
    "SandboxedKernelManager", "SandboxUnavailable", "KernelCgroup", "bwrap_command", "bwrap_problem",
    "opted_out", "require_sandbox", "KERNEL_PACKAGES", "KernelPackagesMissing", "kernel_packages", "ETC_FILES", "FIX", "KERNEL_ENV", "OPT_OUT_VARIABLE", "GiB", "MiB",
]
