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

Hardened against in-kernel tampering (see :class:`KernelGuard`): before every cell and after every
``disabled``/``quiet`` block it also puts back the code, defaults and keyword defaults of
dplib's functions (the test helpers' tolerances), removes trace and profile hooks
(``sys.settrace``, ``threading.settrace``), timers and their signal handlers, stops threads
the notebook started, puts back ``sys.stdout``/``stderr``/``displayhook``/``excepthook`` and
undoes class- or instance-level patches of the shell, the kernel and its session (e.g.
``InteractiveShell.showtraceback``, ``IPythonKernel.do_execute``, ``Session.send``). When a
test calls the student's function, the cells' source is first dropped from ``linecache``, so
``sys._getframe`` plus ``linecache`` cannot read the test's expected values.

What it does not do: undo mutations of data (a test should build its own data rather
than trust a notebook global), or stop code that attacks the guard itself or the
files of the course (that needs an OS-level sandbox). The classroom tool flags such
code for review (:func:`dplib.grading.review.review_flags`).
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
        self.functions: list[tuple[types.FunctionType, tuple]] = []  # dplib's: code, defaults, kwdefaults
        seen_classes: set[int] = set()
        seen_functions: set[int] = set()
        for name, module in list(sys.modules.items()):
            if not isinstance(module, types.ModuleType) or not _trusted(name):
                continue
            namespace = vars(module)
            if name.split(".")[0] == "dplib":
                for value in list(namespace.values()):
                    if isinstance(value, types.FunctionType) and id(value) not in seen_functions:
                        seen_functions.add(id(value))
                        self.functions.append((value, _function_state(value)))
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
        for function, state in self.functions:
            if not _same_state(function, state) and function.__code__.co_filename != _DISABLED_FILENAME:
                function.__code__, function.__defaults__, function.__kwdefaults__ = state[0], state[1], (
                    dict(state[2]) if state[2] is not None else None)
                restored.append(f"{function.__module__}.{function.__qualname__} (code or defaults)")
        for key, value in self.names.items():
            if self.user_ns.get(key, _MISSING) is not value:
                self.user_ns[key] = value
                restored.append(key)
        return restored


_DISABLED_FILENAME = "<disabled by dplib.testing>"  # dplib.testing.DISABLED_FILENAME (not imported: no cycle)


def _function_state(function: types.FunctionType) -> tuple:
    kwdefaults = function.__kwdefaults__
    return function.__code__, function.__defaults__, dict(kwdefaults) if kwdefaults is not None else None


def _same_state(function: types.FunctionType, state: tuple) -> bool:
    """Identity, not equality: defaults may be arrays, and a kwdefaults dict may be edited in place."""
    code, defaults, kwdefaults = state
    current = function.__kwdefaults__
    if function.__code__ is not code or function.__defaults__ is not defaults:
        return False
    if current is None or kwdefaults is None:
        return current is kwdefaults
    return current.keys() == kwdefaults.keys() and all(current[k] is v for k, v in kwdefaults.items())


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


_KERNEL_INSTANCE_METHODS = (
    "do_execute", "execute_request", "send_response", "dispatch_shell", "process_one", "dispatch_queue",
    "_publish_status", "_publish_execute_input", "send", "serialize", "sign", "deserialize", "feed_identities",
    "write", "flush", "write_output_prompt", "write_format_data", "finish_displayhook", "publish",
)
_TIMER_SIGNALS = ("SIGALRM", "SIGVTALRM", "SIGPROF")


class KernelGuard:
    """What the kernel reports and when code runs, kept as it was before any student code.

    ``restore`` puts back: every attribute of the classes of the shell, the kernel, its
    session, the output streams and display hooks (class-level patches such as
    ``InteractiveShell.showtraceback = ...``, ``IPythonKernel.do_execute = ...``,
    ``Session.send = ...``), and removes attributes the notebook added to them; instance-level
    replacements of their methods, and the kernel's message handlers; ``sys.stdout``,
    ``sys.stderr``, ``sys.displayhook``, ``sys.excepthook``; the trace and profile hooks
    (``sys`` and ``threading``); handlers of the timer signals, and any interval timer; and it
    stops threads whose code the notebook defined (an asynchronous ``SystemExit``).
    """

    def __init__(self, shell):
        import threading

        self.shell = shell
        kernel = getattr(shell, "kernel", None)
        session = getattr(kernel, "session", None)
        self.instances = [obj for obj in (shell, kernel, session, getattr(shell, "displayhook", None),
                                          getattr(shell, "display_pub", None), sys.stdout, sys.stderr)
                          if obj is not None]
        self.instance_methods = [(obj, {name: vars(obj).get(name, _MISSING) for name in _KERNEL_INSTANCE_METHODS})
                                 for obj in self.instances if hasattr(obj, "__dict__")]
        self.handlers = [(table, dict(table)) for table in (getattr(kernel, "shell_handlers", None),
                                                            getattr(kernel, "control_handlers", None))
                         if isinstance(table, dict)]
        seen: set[int] = set()
        self.classes: list[tuple[type, dict]] = []
        for obj in self.instances:
            for cls in type(obj).__mro__:
                if cls is object or id(cls) in seen or cls.__module__ == "builtins":
                    continue
                seen.add(id(cls))
                self.classes.append((cls, dict(vars(cls))))
        self.sys_hooks = {name: getattr(sys, name) for name in ("stdout", "stderr", "displayhook", "excepthook")}
        self.trace, self.profile = sys.gettrace(), sys.getprofile()
        self.thread_trace = getattr(threading, "_trace_hook", None)
        self.thread_profile = getattr(threading, "_profile_hook", None)
        self.threads = {thread.ident for thread in threading.enumerate()}
        self.signals = {}
        try:
            import signal

            for name in _TIMER_SIGNALS:
                if hasattr(signal, name):
                    self.signals[name] = signal.getsignal(getattr(signal, name))
        except Exception:
            pass

    def restore(self, between_cells: bool = True) -> list[str]:
        """Put everything back; ``sys.stdout``/``stderr`` only ``between_cells`` (a test's ``quiet()`` may be open)."""
        import threading

        restored = []
        for cls, saved in self.classes:
            current = vars(cls)
            for key in [k for k, v in list(current.items()) if k not in saved and _from_user_code(v)]:
                try:
                    delattr(cls, key)
                    restored.append(f"{cls.__qualname__}.{key} (added)")
                except (AttributeError, TypeError):
                    pass
            for key, value in saved.items():
                if current.get(key, _MISSING) is not value and _worth_restoring("", value):
                    try:
                        setattr(cls, key, value)
                        restored.append(f"{cls.__qualname__}.{key}")
                    except (AttributeError, TypeError):
                        pass
        for obj, saved in self.instance_methods:
            namespace = vars(obj)
            for name, value in saved.items():
                if namespace.get(name, _MISSING) is not value:
                    if value is _MISSING:
                        namespace.pop(name, None)
                    else:
                        namespace[name] = value
                    restored.append(f"{type(obj).__name__}().{name}")
        for table, saved in self.handlers:
            if table != saved or any(table[k] is not v for k, v in saved.items()):
                table.clear()
                table.update(saved)
                restored.append("kernel message handlers")
        for name, value in self.sys_hooks.items():
            if (between_cells or name not in ("stdout", "stderr")) and getattr(sys, name) is not value:
                setattr(sys, name, value)
                restored.append(f"sys.{name}")
        if sys.gettrace() is not self.trace:
            sys.settrace(self.trace)
            restored.append("sys.settrace")
        if sys.getprofile() is not self.profile:
            sys.setprofile(self.profile)
            restored.append("sys.setprofile")
        if getattr(threading, "_trace_hook", None) is not self.thread_trace:
            threading.settrace(self.thread_trace)
            restored.append("threading.settrace")
        if getattr(threading, "_profile_hook", None) is not self.thread_profile:
            threading.setprofile(self.thread_profile)
            restored.append("threading.setprofile")
        restored += self._restore_timers()
        restored += self._stop_threads(threading)
        return restored

    def _restore_timers(self) -> list[str]:
        import signal

        restored = []
        for timer in ("ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF"):  # first the timers, then their handlers
            which = getattr(signal, timer, None)
            if which is not None and signal.getitimer(which) != (0.0, 0.0):
                signal.setitimer(which, 0)
                restored.append(f"interval timer {timer}")
        for name, handler in self.signals.items():
            if signal.getsignal(getattr(signal, name)) is not handler:
                try:
                    signal.signal(getattr(signal, name), handler if handler is not None else signal.SIG_DFL)
                    restored.append(f"signal handler of {name}")
                except (ValueError, OSError, TypeError):  # not in the main thread
                    pass
        return restored

    def _stop_threads(self, threading) -> list[str]:
        """Raise SystemExit in every new thread running notebook code (at its next Python instruction)."""
        import ctypes

        stopped = []
        for thread in threading.enumerate():
            if thread.ident in self.threads or thread is threading.current_thread():
                continue
            code = getattr(thread, "_target", None) or getattr(thread, "function", None) or getattr(type(thread), "run", None)
            if _from_user_code(code) or _from_user_code(type(thread)):
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(SystemExit))
                if hasattr(thread, "cancel"):  # a threading.Timer that has not fired yet
                    thread.cancel()
                stopped.append(f"thread {thread.name}")
        return stopped


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
    global _snapshot, _shell_guard, _kernel_guard
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
        _kernel_guard = KernelGuard(shell)
        _shell_guard = ShellGuard(shell)
        shell.events.register("pre_run_cell", _before_cell)
        shell.events.register("post_run_cell", _after_cell)
    return _snapshot


def setup_code(import_lines: list[str], keep_out: list[str] = ()) -> str:
    """The code the autograder runs (silently) in a fresh kernel to install the guard."""
    return (
        f"__import__('dplib.grading.guard').grading.guard.install({list(import_lines)!r}, {sorted(keep_out)!r})"
    )


__all__ = ["TRUSTED_PACKAGES", "Snapshot", "KernelGuard", "install", "restore", "setup_code"]
