"""What the review flags, and why: the modules, attributes and names worth a person's look.

Tables only (no code runs here): modules whose every use is flagged (:data:`MODULES`), what of
``sys`` and ``os`` is harmless, dunder attributes, methods that let an object fake a value in a test,
file writers, test helper names, and :class:`Flag`, the result of the review.
"""

from __future__ import annotations

import re

from dpgrader.outcomes import Flag  # noqa: F401 -- the value a review returns (re-exported by dpgrader.review)

# --- what is suspicious -----------------------------------------------------------------------------

#: Modules whose every use is flagged, with the reason given.
MODULES = {
    "gc": "walks live objects with gc (can find and edit the grading guard's snapshot)",
    "inspect": "inspects live code with inspect (can read the tests' source or copy dplib's)",
    "ctypes": "uses ctypes (writes raw memory: can change anything in the kernel)",
    "threading": "starts threads (code that runs between the cells, after the guard has checked)",
    "_thread": "starts threads (code that runs between the cells, after the guard has checked)",
    "concurrent": "starts threads or processes (concurrent.futures)",
    "asyncio": "schedules code on the kernel's event loop (asyncio)",
    "sched": "schedules code to run later (sched)",
    "signal": "installs signal handlers or timers (code that runs between the cells)",
    "subprocess": "runs other programs (subprocess)",
    "multiprocessing": "starts processes (multiprocessing)",
    "pty": "runs other programs (pty)",
    "IPython": "uses IPython's internals (can change what the kernel reports)",
    "ipykernel": "uses the kernel's internals (can change what the kernel reports)",
    "jupyter_client": "uses jupyter_client (can talk to or forge kernel messages)",
    "zmq": "uses zmq (can forge kernel messages)",
    "nbgrader": "uses nbgrader from inside the notebook",
    "nbclient": "uses nbclient from inside the notebook",
    "builtins": "changes or reads the builtins module (rebinding abs, sorted, ... fools the tests)",
    "linecache": "reads source lines with linecache (can read the tests' code)",
    "traceback": "reads the call stack with traceback (can read the tests' code)",
    "dis": "disassembles code (dis)",
    "importlib": "imports modules dynamically (importlib)",
    "runpy": "runs modules dynamically (runpy)",
    "code": "runs code dynamically (the code module)",
    "codeop": "compiles code dynamically (codeop)",
    "pickle": "uses pickle (loading a pickle runs arbitrary code)",
    "marshal": "uses marshal (builds code objects from bytes)",
    "dill": "uses dill (serialises code objects)",
    "cloudpickle": "uses cloudpickle (serialises code objects)",
    "atexit": "registers code to run at exit (atexit)",
    "faulthandler": "uses faulthandler (dumps the stack, registers signal handlers)",
    "pdb": "uses the debugger (pdb) inside graded code",
    "bdb": "uses the debugger framework (bdb) inside graded code",
    "trace": "traces execution (trace)",
    "tracemalloc": "traces allocations (tracemalloc)",
    "resource": "reads the process's resource usage or changes its limits (resource): can tell check_is_random's "
                "replay from the real run",
    "psutil": "reads process statistics (psutil): can tell check_is_random's replay from the real run",
    "mmap": "maps memory or files (mmap): memory shared across a fork lets check_is_random's two runs talk to each other",
    "shutil": "copies, moves or deletes files (shutil)",
    "sqlite3": "opens SQLite databases (the gradebook is one)",
    "socket": "opens network connections (socket)",
    "urllib": "uses the network (urllib)",
    "http": "uses the network (http)",
    "requests": "uses the network (requests)",
    "tempfile": "creates files (tempfile)",
    "glob": "lists the course's files (glob)",
    "site": "changes the import system (site)",
    "sysconfig": "reads the interpreter's configuration (sysconfig)",
}
#: Attributes of ``sys`` a correct answer may use (printing, number limits, versions).
SYS_ALLOWED = {
    "stdout", "stderr", "float_info", "int_info", "hash_info", "maxsize", "version", "version_info",
    "platform", "byteorder", "float_repr_style", "getrecursionlimit", "implementation",
}
SYS_REASONS = {
    "_getframe": "reads the callers' frames with sys._getframe (can read the test that calls it and its expected values)",
    "_current_frames": "reads every thread's frame (sys._current_frames)",
    "settrace": "installs a trace hook with sys.settrace (runs code on every line of the tests)",
    "setprofile": "installs a profile hook with sys.setprofile (runs code on every call of the tests)",
    "gettrace": "reads the trace hook (sys.gettrace)",
    "modules": "reaches modules through sys.modules (dplib.testing, the grading guard, ...)",
    "exit": "stops the kernel or the cell (sys.exit)",
    "displayhook": "uses the display hook (can fake an output the grader scores)",
    "excepthook": "replaces the exception hook (can hide failing tests)",
    "addaudithook": "installs an audit hook",
    "meta_path": "changes the import system (sys.meta_path)",
    "path_hooks": "changes the import system (sys.path_hooks)",
    "path": "changes where modules are imported from (sys.path)",
    "setrecursionlimit": "changes the recursion limit",
    "monitoring": "installs monitoring callbacks (sys.monitoring)",
    "exc_info": "reads the exception being handled (sys.exc_info: its traceback reaches the test)",
    "exception": "reads the exception being handled (sys.exception: its traceback reaches the test)",
    "last_traceback": "reads the last traceback (reaches the tests' frames)",
}
#: ``os`` attributes a correct answer may use.
OS_ALLOWED = {"path", "sep", "linesep", "cpu_count", "fspath", "getcwd"}
OS_REASONS = [
    (("_exit", "kill", "killpg", "abort"), "kills the kernel or another process (os.{})"),
    (("system", "popen", "fork", "forkpty", "execv", "execve", "execl", "execlp", "execvp", "execvpe",
      "spawnl", "spawnv", "posix_spawn", "posix_spawnp"), "runs other programs (os.{})"),
    (("remove", "unlink", "rmdir", "removedirs", "rename", "renames", "replace", "mkdir", "makedirs",
      "chmod", "chown", "symlink", "link", "truncate", "write", "open", "fdopen", "dup2", "utime"),
     "writes, moves or deletes files (os.{})"),
    (("environ", "putenv", "unsetenv", "getenv"), "reads or changes environment variables (os.{})"),
    (("listdir", "scandir", "walk", "fwalk", "stat", "lstat", "read"), "looks around the file system (os.{})"),
    (("getpid", "getppid", "times", "getloadavg", "sched_getaffinity", "getpriority", "getpgid", "getpgrp", "getsid",
      "pidfd_open", "wait", "waitpid", "wait3", "wait4"),
     "reads process statistics (os.{}): can tell check_is_random's replay from the real run"),
]
#: ``time`` functions that read a CPU clock: its count starts again in a forked process, so it tells
#: check_is_random's replay from the real run (wall clocks such as ``time.perf_counter`` do not).
CPU_CLOCKS = {"process_time", "process_time_ns", "thread_time", "thread_time_ns", "clock_gettime",
              "clock_gettime_ns", "pthread_getcpuclockid", "clock_getres"}
#: Dunder attributes a correct answer may use.
DUNDER_ALLOWED = {"__name__", "__qualname__", "__doc__", "__init__", "__version__", "__len__", "__file__"}
DUNDER_REASONS = {
    "__code__": "reads or replaces a function's code object (__code__): can undo the test's switch-off of dplib or rewrite a test helper",
    "__kwdefaults__": "changes a function's keyword defaults (__kwdefaults__): e.g. a test helper's tolerance",
    "__defaults__": "changes a function's defaults (__defaults__): e.g. a test helper's tolerance",
    "__globals__": "reaches a function's module namespace (__globals__)",
    "__closure__": "reads a closure's cells (__closure__)",
    "__builtins__": "reaches the builtins (__builtins__)",
    "__dict__": "reads or writes an object's namespace directly (__dict__)",
    "__class__": "walks the class hierarchy (__class__), a way around the guard",
    "__subclasses__": "lists every subclass (__subclasses__), a way to reach any loaded class",
    "__mro__": "walks the class hierarchy (__mro__)",
    "__bases__": "walks or changes the class hierarchy (__bases__)",
    "__base__": "walks the class hierarchy (__base__)",
    "__wrapped__": "unwraps a decorated function (__wrapped__), e.g. the guard's wrapper of a test helper",
    "__self__": "reaches a bound method's object (__self__)",
    "__func__": "reaches a method's function (__func__)",
    "__import__": "imports modules dynamically (__import__)",
    "__getattribute__": "overrides or calls attribute lookup (__getattribute__)",
    "__setattr__": "sets attributes behind the usual lookup (__setattr__)",
    "__reduce__": "customises pickling (__reduce__)",
    "__loader__": "reaches a module's loader (__loader__)",
    "__spec__": "reaches a module's import spec (__spec__)",
}
#: Special methods through which an object can fake a value: the ways a test asks an object what it is.
#:
#: Every check of :mod:`dplib.testing` first copies a value by its *exact* type into a plain float, bool,
#: array or DataFrame (:mod:`dplib.testing.values`), so an instance of a student's class never reaches a
#: comparison inside a check; the tests' own assertions compare only such plain copies with ``<`` or
#: ``len`` (``low, high = check_array(...)`` then ``assert low < high``). What a test still asks an
#: object directly, before or beside a check, is whether it *equals* something (``one in (0, 1)``,
#: ``set(noisy) == set(wanted)``: ``__eq__``, ``__ne__``, ``__hash__``), whether it is *true*
#: (``assert x``: ``__bool__``), what *number or array* it is (``float(table.sum())``,
#: ``np.asarray(private["id"])``, ``range(5)``: the conversions and numpy's array protocols), what *type*
#: it is (``__instancecheck__``, ``__subclasscheck__``, a ``__class__`` property) and what its *attributes* are (``possible.dtype``:
#: ``__getattr__``, ``__getattribute__`` answer any). A class defining one of these is flagged.
FAKE_VALUE_METHODS = frozenset({
    "__eq__", "__ne__", "__hash__", "__bool__",
    "__float__", "__int__", "__index__", "__complex__", "__round__", "__trunc__", "__floor__", "__ceil__",
    "__array__", "__array_ufunc__", "__array_function__", "__array_priority__", "__array_interface__",
    "__array_struct__", "__array_wrap__", "__array_namespace__", "__dlpack__",
    "__instancecheck__", "__subclasscheck__", "__class__", "__getattr__", "__getattribute__",
})
#: Special methods an honest helper class defines, never flagged: sizes, membership, iteration, ordering
#: for sorting, arithmetic and text (``__len__``, ``__contains__``, ``__iter__``, ``__lt__``, ``__repr__``).
#: A check never calls them on a student's object (see :data:`FAKE_VALUE_METHODS`).
HONEST_METHODS = frozenset({
    "__len__", "__contains__", "__iter__", "__next__", "__getitem__", "__lt__", "__le__", "__gt__", "__ge__",
    "__abs__", "__neg__", "__pos__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
    "__truediv__", "__rtruediv__", "__repr__", "__str__", "__format__", "__enter__", "__exit__",
})
#: Special methods that run code out of the cell's order: when an object is collected, between the cells.
DEFERRED_METHODS = {"__del__": "runs code when an object is collected (__del__): after the guard has checked"}
#: Modules that build fake values: a mock compares equal to, converts to and answers whatever it is told.
FAKE_VALUE_MODULES = {
    "unittest.mock": "uses unittest.mock (Mock, MagicMock, patch): a mock can be told to compare equal to, "
                     "or convert to, whatever a test expects",
    "mock": "uses the mock package: a mock can be told to compare equal to, or convert to, whatever a test expects",
}
#: Abstract base classes whose ``register`` makes ``isinstance`` accept any class (``numbers.Real.register(Fake)``).
ABSTRACT_PACKAGES = ("numbers", "collections.abc", "abc")
#: Base classes of values a test compares: a subclass can redefine what equal means.
VALUE_TYPES = {
    "builtins.int", "builtins.float", "builtins.complex", "builtins.bool", "builtins.str", "builtins.tuple",
    "builtins.list", "builtins.dict", "builtins.set", "builtins.frozenset", "builtins.type",
    "decimal.Decimal", "fractions.Fraction",
}
VALUE_PACKAGES = ("numpy", "pandas", "numbers", "scipy")
#: Builtins that run or build code.
DYNAMIC_BUILTINS = {
    "exec": "runs code built at run time (exec)",
    "eval": "evaluates code built at run time (eval)",
    "compile": "compiles code at run time (compile)",
    "__import__": "imports modules dynamically (__import__)",
    "breakpoint": "starts the debugger (breakpoint)",
    "globals": "uses the notebook's namespace as a dictionary (globals())",
    "locals": "uses a namespace as a dictionary (locals())",
    "vars": "uses an object's namespace as a dictionary (vars())",
    "exit": "stops the kernel (exit)",
    "quit": "stops the kernel (quit)",
    "get_ipython": "uses the IPython shell (get_ipython): can change how cells run and what they report",
    "open": None,  # decided by the mode, see _open_flag
}
#: Interactive-shell names that hold every cell's code, the hidden tests' included.
SHELL_NAMES = {"In", "Out", "_ih", "_oh", "_ii", "_iii", "_dh", "__IPYTHON__"}
#: Method names that write to files, on whatever object (Path, DataFrame, ndarray, Figure).
WRITE_METHODS = {
    "write_text": "writes a file (write_text)", "write_bytes": "writes a file (write_bytes)",
    "unlink": "deletes a file (unlink)", "rmdir": "deletes a folder (rmdir)", "touch": "creates a file (touch)",
    "symlink_to": "creates a link (symlink_to)", "hardlink_to": "creates a link (hardlink_to)",
    "tofile": "writes an array to a file (tofile)", "savefig": "writes a figure to a file (savefig)",
}
PATH_WRITE_METHODS = {"to_csv", "to_pickle", "to_parquet", "to_excel", "to_json", "to_hdf", "to_feather",
                      "to_stata", "to_html", "to_latex", "to_markdown", "to_sql", "to_xml", "to_orc"}
NUMPY_WRITERS = {"save", "savez", "savez_compressed", "savetxt", "tofile", "memmap"}
#: Test helper names a solution must not rebind (the guard restores them; rebinding is still a flag).
TEST_HELPER = re.compile(r"^(?:check_\w+|disabled|substituted|quiet|delegation_closure|binomial_bounds|DelegationError)$")
#: What these names mean when no import in the notebook binds them (a cell run after a kernel restart).
CONVENTIONAL_NAMES = {"dplib": "dplib", "np": "numpy", "numpy": "numpy", "pd": "pandas", "pandas": "pandas",
                      "math": "math", "sys": "sys", "os": "os", "builtins": "builtins"}
#: Strings that, found in a constant string expression, name something a solution has no business with.
SENSITIVE_STRINGS = re.compile(
    r"get_ipython|_getframe|settrace|setprofile|showtraceback|do_execute|execute_reply|dplib\.testing|"
    r"dpgrader|linecache|__code__|__kwdefaults__|__defaults__|__globals__|__builtins__|"
    r"__subclasses__|gradebook|BEGIN HIDDEN|kernel\.session|/proc/|/sys/fs/cgroup"
)

