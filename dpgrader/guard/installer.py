"""Installing the guard in a kernel: the snapshot taken, the hooks registered, ``disabled``/``quiet`` wrapped.

:func:`setup_code` is what :class:`dpgrader.preprocessors.GuardedExecute` runs in a
fresh kernel; it calls :func:`install`. :func:`restore` runs before every cell and when a
``dplib.testing.disabled(...)`` or ``quiet()`` block ends.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import sys

from dpgrader.guard.hooks import KernelGuard, ShellGuard
from dpgrader.guard.snapshot import Snapshot

# Imported at install time so that they are snapshotted before any student code runs.
PRELOADED = ("math", "random", "statistics", "numpy", "scipy.stats", "pandas", "dplib", "dplib.testing")


def forget_cell_sources() -> None:
    """Drop the notebook cells' source from ``linecache`` (a frame's file name then leads to no code)."""
    import linecache

    for key in [k for k in list(linecache.cache) if str(k).startswith("<ipython-input") or "ipykernel_" in str(k)]:
        linecache.cache.pop(key, None)


_snapshot: Snapshot | None = None
_shell_guard: ShellGuard | None = None
_kernel_guard: KernelGuard | None = None


def restore(between_cells: bool = False) -> list[str]:
    """Undo student monkeypatching now (no-op before :func:`install`); return what was restored."""
    restored = _snapshot.restore() if _snapshot is not None else []
    if _kernel_guard is not None:
        restored += _kernel_guard.restore(between_cells)
    return restored


def _restoring(context_manager_factory):
    """Wrap a dplib.testing context manager so that leaving it runs :func:`restore`."""

    @contextlib.contextmanager
    @functools.wraps(context_manager_factory)
    def wrapper(*args, **kwargs):
        forget_cell_sources()  # the test's code is out of reach of the function it is about to call
        try:
            with context_manager_factory(*args, **kwargs):
                yield
        finally:
            restore()

    wrapper.__wrapped_by_guard__ = True
    return wrapper


def _before_cell(info=None) -> None:
    restore(between_cells=True)
    if _shell_guard is not None:
        _shell_guard.restore()


def _after_cell(result=None) -> None:
    if _shell_guard is not None:
        _shell_guard.restore()
    if _kernel_guard is not None:  # before the kernel sends this cell's reply, and reads the next request
        _kernel_guard.restore(between_cells=True)


def install(import_lines: list[str] = (), keep_out: list[str] = (), preload: list[str] = (), shell=None) -> Snapshot:
    """Take the snapshot and register the guard's hooks (call before any student code runs).

    Parameters
    ----------
    import_lines : list of str
        The import statements of the notebook's read-only cells: the names they bind in
        the user namespace are re-bound to the same objects before every cell.
    keep_out : list of str
        Names never re-bound: those the reference solution defines (an exercise may
        share its name with a dplib function a read-only cell imports).
    preload : list of str
        Modules to import (and so snapshot) besides :data:`PRELOADED`. One that cannot be
        imported makes the install fail: the grader then grades nothing of the notebook.
    shell : InteractiveShell, optional
        The running IPython shell (default: the current one).
    """
    global _snapshot, _shell_guard, _kernel_guard
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    for name in (*PRELOADED, *preload):
        importlib.import_module(name)
    testing = sys.modules["dplib.testing"]
    for name in ("disabled", "quiet"):
        helper = getattr(testing, name)
        if not getattr(helper, "__wrapped_by_guard__", False):
            setattr(testing, name, _restoring(helper))
    names: dict = {}
    for line in import_lines:
        namespace: dict = {}
        try:
            exec(compile(line, "<read-only cell imports>", "exec"), namespace)
        except Exception:  # the cell itself will report the error when it runs
            continue
        names.update({k: v for k, v in namespace.items() if k != "__builtins__" and k not in keep_out})
    _snapshot = Snapshot(shell.user_ns if shell is not None else {}, names)
    if shell is not None:
        # dplib was imported before this shell existed (the zygote preloads it): figures' alt text now (issue 39)
        sys.modules["dplib.figures"].show_alt_text(shell)
        _kernel_guard = KernelGuard(shell)
        _shell_guard = ShellGuard(shell)
        shell.events.register("pre_run_cell", _before_cell)
        shell.events.register("post_run_cell", _after_cell)
    return _snapshot


def setup_code(import_lines: list[str], keep_out: list[str] = (), preload: list[str] = ()) -> str:
    """The code the autograder runs (silently) in a fresh kernel to install the guard."""
    return (
        f"__import__('dpgrader.guard').guard.install({list(import_lines)!r}, {sorted(keep_out)!r}, {list(preload)!r})"
    )

