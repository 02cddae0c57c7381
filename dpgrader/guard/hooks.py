"""The IPython shell's and the kernel's hooks, kept as they were before any student code.

:class:`ShellGuard` removes exception handlers, transformers and event callbacks the
notebook added; :class:`KernelGuard` puts back the classes and instances of the shell,
the kernel and its session, ``sys`` hooks, trace and profile hooks, timers, and stops
threads the notebook started.
"""

from __future__ import annotations

import sys
import types

from dpgrader.guard.snapshot import MISSING, worth_restoring

_SHELL_METHODS = (
    "run_cell", "run_cell_async", "_run_cell", "run_ast_nodes", "run_code", "transform_cell",
    "should_run_async", "showtraceback", "_showtraceback", "showsyntaxerror", "CustomTB",
)


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
        self.methods = {name: vars(shell).get(name, MISSING) for name in _SHELL_METHODS}

    def restore(self) -> None:
        shell = self.shell
        if shell.custom_exceptions != self.custom_exceptions:
            shell.custom_exceptions = self.custom_exceptions
        for hooks in self.lists + list(shell.events.callbacks.values()):
            if any(_from_user_code(hook) for hook in hooks):
                hooks[:] = [hook for hook in hooks if not _from_user_code(hook)]
        for name, saved in self.methods.items():
            current = vars(shell).get(name, MISSING)
            if current is not saved:
                if saved is MISSING:
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
        self.instance_methods = [(obj, {name: vars(obj).get(name, MISSING) for name in _KERNEL_INSTANCE_METHODS})
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
                if current.get(key, MISSING) is not value and worth_restoring("", value):
                    try:
                        setattr(cls, key, value)
                        restored.append(f"{cls.__qualname__}.{key}")
                    except (AttributeError, TypeError):
                        pass
        for obj, saved in self.instance_methods:
            namespace = vars(obj)
            for name, value in saved.items():
                if namespace.get(name, MISSING) is not value:
                    if value is MISSING:
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
