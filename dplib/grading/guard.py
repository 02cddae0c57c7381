"""Kernel-side guard: every cell of an autograded notebook starts from untouched libraries.

Student code and hidden tests share one kernel, so a solution cell can rebind what a
test relies on: ``builtins.abs = lambda x: 0`` silently turns ``numpy.allclose`` into
"always true", ``check_close = lambda *a, **k: None`` turns a test into a no-op,
``math.inf = 7.0`` or ``pd.Series.__eq__ = ...`` change what a test expects.
:class:`dplib.grading.preprocessors.GuardedExecute` installs this guard in every kernel
nbgrader starts for autograding, before the notebook's first cell runs, i.e. before
any student code. The guard then

- takes a snapshot of ``builtins`` and of every module of the trusted packages
  (numpy, scipy, pandas, math, dplib, ...), including the classes they define;
- binds the names the notebook's read-only cells import (``np``, ``check_close``, ...);
- before every cell, puts back whatever student code rebound or deleted among those
  (new names are left alone, and nothing is restored inside a cell);
- when a ``dplib.testing.disabled(...)`` or ``quiet()`` block ends, i.e. right after
  a test called the student's function, does the same, so a function that patches
  ``sorted`` when called cannot fool the asserts that follow it;
- after every cell, removes IPython hooks a student could use to hide a failing test:
  custom exception handlers, input and AST transformers and event callbacks defined in
  the notebook, and instance-level replacements of the shell's run/traceback methods.

What it does not do: undo mutations of data (a test should build its own data rather
than trust a notebook global), or stop code that attacks the guard itself or the
files of the course (that needs an OS-level sandbox). The classroom tool flags such
code for review (:func:`dplib.grading.classroom.review_flags`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import sys
import types

TRUSTED_PACKAGES = (
    "builtins", "math", "cmath", "operator", "functools", "itertools", "collections", "random",
    "statistics", "types", "contextlib", "io", "numbers", "decimal", "fractions",
    "numpy", "scipy", "pandas", "dplib",
)
# Imported at install time so that they are snapshotted before any student code runs.
PRELOADED = ("math", "random", "statistics", "numpy", "scipy.stats", "pandas", "dplib", "dplib.testing")

_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), tuple, frozenset)
_SHELL_METHODS = (
    "run_cell", "run_cell_async", "_run_cell", "run_ast_nodes", "run_code", "transform_cell",
    "should_run_async", "showtraceback", "_showtraceback", "showsyntaxerror", "CustomTB",
)
_MISSING = object()


def _trusted(module_name: str) -> bool:
    return module_name.split(".", 1)[0] in TRUSTED_PACKAGES


def _worth_restoring(name: str, value) -> bool:
    """Functions, classes, modules, descriptors and public constants; not mutable state."""
    if isinstance(value, (type, types.ModuleType)) or callable(value) or hasattr(type(value), "__get__"):
        return True
    return not name.startswith("_") and isinstance(value, _IMMUTABLE)


class Snapshot:
    """Library state as it was when taken, and the notebook names bound to it.

    Parameters
    ----------
    user_ns : dict
        The kernel's user namespace.
    names : dict
        Names the read-only cells import, mapped to the objects they must stay bound to.
    """

    def __init__(self, user_ns: dict, names: dict):
        self.user_ns = user_ns
        self.names = dict(names)
        self.modules: list[tuple[dict, dict]] = []
        self.classes: list[tuple[type, dict]] = []
        seen_classes: set[int] = set()
        for name, module in list(sys.modules.items()):
            if not isinstance(module, types.ModuleType) or not _trusted(name):
                continue
            namespace = vars(module)
            self.modules.append((namespace, {k: v for k, v in list(namespace.items()) if _worth_restoring(k, v)}))
            for value in list(namespace.values()):
                if (
                    isinstance(value, type)
                    and id(value) not in seen_classes
                    and _trusted(getattr(value, "__module__", None) or "")
                    and value.__module__ != "builtins"
                ):
                    seen_classes.add(id(value))
                    attributes = {k: v for k, v in list(vars(value).items()) if _worth_restoring(k, v)}
                    self.classes.append((value, attributes))

    def restore(self) -> list[str]:
        """Put back every rebound or deleted entry; return their names (``module.name``)."""
        restored = []
        for namespace, saved in self.modules:
            for key, value in saved.items():
                if namespace.get(key, _MISSING) is not value:
                    namespace[key] = value
                    restored.append(f"{namespace.get('__name__', '?')}.{key}")
        for cls, saved in self.classes:
            current = vars(cls)
            for key, value in saved.items():
                if current.get(key, _MISSING) is not value:
                    try:
                        setattr(cls, key, value)
                    except (AttributeError, TypeError):
                        continue
                    restored.append(f"{cls.__module__}.{cls.__qualname__}.{key}")
        for key, value in self.names.items():
            if self.user_ns.get(key, _MISSING) is not value:
                self.user_ns[key] = value
                restored.append(key)
        return restored


def _from_user_code(obj) -> bool:
    """True for functions and objects defined in the notebook itself (module ``__main__``)."""
    module = getattr(obj, "__module__", None)
    if module is None and not isinstance(obj, types.FunctionType):
        module = getattr(type(obj), "__module__", None)
    return module in (None, "__main__")


class ShellGuard:
    """The IPython shell's hooks, kept free of anything student code added.

    After every cell: no custom exception handler; no input or AST transformer and no
    event callback that the notebook's own code added (library ones stay, e.g. the
    inline plotting backend's); no instance-level replacement of the run/traceback methods.
    """

    def __init__(self, shell):
        self.shell = shell
        self.custom_exceptions = shell.custom_exceptions
        self.lists = [
            shell.input_transformers_cleanup,
            shell.input_transformer_manager.line_transforms,
            shell.input_transformers_post,
            shell.ast_transformers,
        ]
        self.methods = {name: vars(shell).get(name, _MISSING) for name in _SHELL_METHODS}

    def restore(self) -> None:
        shell = self.shell
        if shell.custom_exceptions != self.custom_exceptions:
            shell.custom_exceptions = self.custom_exceptions
        for hooks in self.lists + list(shell.events.callbacks.values()):
            if any(_from_user_code(hook) for hook in hooks):
                hooks[:] = [hook for hook in hooks if not _from_user_code(hook)]
        for name, saved in self.methods.items():
            current = vars(shell).get(name, _MISSING)
            if current is not saved:
                if saved is _MISSING:
                    del vars(shell)[name]
                else:
                    vars(shell)[name] = saved


_snapshot: Snapshot | None = None
_shell_guard: ShellGuard | None = None


def restore() -> list[str]:
    """Undo student monkeypatching now (no-op before :func:`install`); return what was restored."""
    return _snapshot.restore() if _snapshot is not None else []


def _restoring(context_manager_factory):
    """Wrap a dplib.testing context manager so that leaving it runs :func:`restore`."""

    @contextlib.contextmanager
    @functools.wraps(context_manager_factory)
    def wrapper(*args, **kwargs):
        try:
            with context_manager_factory(*args, **kwargs):
                yield
        finally:
            restore()

    wrapper.__wrapped_by_guard__ = True
    return wrapper


def _before_cell(info=None) -> None:
    restore()
    if _shell_guard is not None:
        _shell_guard.restore()


def _after_cell(result=None) -> None:
    if _shell_guard is not None:
        _shell_guard.restore()


def install(import_lines: list[str] = (), keep_out: list[str] = (), shell=None) -> Snapshot:
    """Take the snapshot and register the guard's hooks (call before any student code runs).

    Parameters
    ----------
    import_lines : list of str
        The import statements of the notebook's read-only cells: the names they bind in
        the user namespace are re-bound to the same objects before every cell.
    keep_out : list of str
        Names never re-bound: those the reference solution defines (an exercise may
        share its name with a dplib function a read-only cell imports).
    shell : InteractiveShell, optional
        The running IPython shell (default: the current one).
    """
    global _snapshot, _shell_guard
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    for name in PRELOADED:
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
        _shell_guard = ShellGuard(shell)
        shell.events.register("pre_run_cell", _before_cell)
        shell.events.register("post_run_cell", _after_cell)
    return _snapshot


def setup_code(import_lines: list[str], keep_out: list[str] = ()) -> str:
    """The code the autograder runs (silently) in a fresh kernel to install the guard."""
    return (
        f"__import__('dplib.grading.guard').grading.guard.install({list(import_lines)!r}, {sorted(keep_out)!r})"
    )


__all__ = ["TRUSTED_PACKAGES", "Snapshot", "install", "restore", "setup_code"]
