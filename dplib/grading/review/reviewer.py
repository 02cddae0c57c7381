"""Static review of a submission: code worth a person's look, found in its syntax tree.

Student code and the hidden tests share one kernel, so whatever the kernel guard
(:mod:`dplib.grading.guard`) cannot undo has to be seen by a person. This module reads
the cells a student wrote (nbgrader solution cells, and cells without nbgrader
metadata, i.e. cells the student added) with :mod:`ast`, never the read-only and test
cells of the instructor, and returns one :class:`Flag` per suspicious construct, with
a specific reason:

- **dynamic code**: ``exec``, ``eval``, ``compile``, ``__import__``, ``importlib``,
  ``getattr``/``setattr``/``delattr`` with a computed name, ``globals()``/``locals()``/``vars()``;
- **introspection and process control**: any use of ``gc``, ``inspect``, ``ctypes``,
  ``threading``, ``signal``, ``subprocess``, ``multiprocessing``, ``IPython``,
  ``ipykernel``, ``jupyter_client``, ``builtins``, ``linecache``, ``pickle``, ...; of
  ``sys`` and ``os`` beyond a few harmless attributes (``sys.stderr``, ``os.path.join``);
  the IPython shell (``get_ipython``, magics, ``In``/``Out``);
- **dunder access**: ``__code__``, ``__kwdefaults__``, ``__globals__``, ``__class__``, ...;
- **fake numbers**: classes that subclass a number or array type, or define
  comparisons and conversions (``__eq__``, ``__bool__``, ``__float__``, ...);
- **file writes**: ``open(..., "w")``, ``Path.write_text``, ``np.save``, ``to_csv``, ``shutil``;
- **the tests themselves**: ``dplib.testing``, ``dplib.grading``, rebinding a test helper
  (``check_close = ...``), replacing a library attribute (``np.allclose = ...``);
- **delegation**: an exercise answered with dplib's own function of the same name.

Names are resolved, not matched as text: ``import signal as _sg; _sg.setitimer``,
``from os import path as p``, ``x = sys; x._getframe``, ``getattr(sys, "_get" + "frame")``
and ``"get_" + "ipython"`` are all seen for what they are (constant string expressions
are evaluated). Honest code raises no flag: every reference solution of ``source/`` and
every honest student of ``make demo`` is reviewed in ``tests/test_review.py``.

:func:`review_flags` gives the flags of a notebook as ``"kind: reason"`` strings for
``grades.csv`` and the class summary; :func:`comment_in_gradebook` puts them in
formgrader.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
from dataclasses import dataclass
from pathlib import Path

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
    "resource": "changes process limits (resource)",
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
    (("listdir", "scandir", "walk", "fwalk", "stat", "lstat", "read", "getppid", "getpid"),
     "looks around the file system or the process (os.{})"),
]
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
#: Methods that make an object lie about its value when a test compares or converts it.
LYING_METHODS = {
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__float__", "__int__",
    "__index__", "__complex__", "__abs__", "__round__", "__hash__", "__contains__", "__len__", "__array__",
    "__array_ufunc__", "__array_function__", "__array_priority__", "__sub__", "__rsub__", "__neg__",
    "__instancecheck__", "__subclasscheck__", "__getattr__", "__getattribute__", "__del__",
}
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
TEST_HELPER = re.compile(r"^(?:check_\w+|disabled|quiet|binomial_bounds|DelegationError)$")
#: What these names mean when no import in the notebook binds them (a cell run after a kernel restart).
CONVENTIONAL_NAMES = {"dplib": "dplib", "np": "numpy", "numpy": "numpy", "pd": "pandas", "pandas": "pandas",
                      "math": "math", "sys": "sys", "os": "os", "builtins": "builtins"}
#: Strings that, found in a constant string expression, name something a solution has no business with.
SENSITIVE_STRINGS = re.compile(
    r"get_ipython|_getframe|settrace|setprofile|showtraceback|do_execute|execute_reply|dplib\.testing|"
    r"dplib\.grading|grading\.guard|linecache|__code__|__kwdefaults__|__defaults__|__globals__|__builtins__|"
    r"__subclasses__|gradebook|BEGIN HIDDEN|kernel\.session"
)


# --- the result ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Flag:
    """One construct worth a person's look.

    Attributes
    ----------
    cell : str
        The cell's nbgrader ``grade_id``, or ``"cell <n>"`` (0-based) for a cell without one.
    line : int
        Line in the cell (1-based).
    kind : str
        A short category (``"dynamic code"``, ``"introspection"``, ``"dunder access"``, ...).
    reason : str
        What the code does and why it matters, in a sentence.
    """

    cell: str
    line: int
    kind: str
    reason: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.reason} ({self.cell}, line {self.line})"


# --- constant strings ------------------------------------------------------------------------------

_STR_METHODS = {"join", "replace", "lower", "upper", "strip", "lstrip", "rstrip", "format", "capitalize",
                "title", "swapcase", "removeprefix", "removesuffix", "decode", "encode"}


def constant_value(node: ast.AST, constants: dict | None = None, depth: int = 0):
    """The value of a constant expression built from literals (``"get_" + "ipython"``), or None.

    Handles literals, names bound to constants, ``+``/``*``/``%`` of constants, f-strings of
    constants, indexing and slicing (``"nohtypi_teg"[::-1]``), ``chr``/``str`` and the
    common string methods (``"".join([...])``, ``.replace``, ``.format``, ...).
    """
    constants = constants or {}
    if depth > 40:
        return None
    again = lambda child: constant_value(child, constants, depth + 1)  # noqa: E731
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes, int, float)):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = again(node.operand)
        if isinstance(operand, (int, float)) and not isinstance(operand, bool):
            return -operand if isinstance(node.op, ast.USub) else operand
        return None
    if isinstance(node, (ast.List, ast.Tuple)):
        values = [again(element) for element in node.elts]
        return None if any(v is None for v in values) else values
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            part = again(value.value) if isinstance(value, ast.FormattedValue) else again(value)
            if part is None:
                return None
            parts.append(str(part))
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult, ast.Mod)):
        left, right = again(node.left), again(node.right)
        if left is None or right is None:
            return None
        try:
            if isinstance(node.op, ast.Mult) and (isinstance(left, (str, bytes)) or isinstance(right, (str, bytes))):
                if max(abs(left) if isinstance(left, int) else 0, abs(right) if isinstance(right, int) else 0) > 1000:
                    return None
            result = {ast.Add: lambda a, b: a + b, ast.Mult: lambda a, b: a * b, ast.Mod: lambda a, b: a % b}[
                type(node.op)](left, tuple(right) if isinstance(right, list) else right)
        except Exception:
            return None
        return result if isinstance(result, (str, bytes, int, float)) and len(str(result)) < 10_000 else None
    if isinstance(node, ast.Subscript):
        value = again(node.value)
        if not isinstance(value, (str, bytes, list)):
            return None
        index = node.slice
        try:
            if isinstance(index, ast.Slice):
                parts = [again(p) if p is not None else None for p in (index.lower, index.upper, index.step)]
                return value[slice(*parts)]
            position = again(index)
            return value[position] if isinstance(position, int) else None
        except Exception:
            return None
    if isinstance(node, ast.Call) and not node.keywords:
        arguments = [again(a) for a in node.args]
        if any(a is None for a in arguments):
            return None
        try:
            if isinstance(node.func, ast.Name) and node.func.id in ("chr", "str") and len(arguments) == 1:
                return {"chr": chr, "str": str}[node.func.id](arguments[0])
            if isinstance(node.func, ast.Attribute) and node.func.attr in _STR_METHODS:
                owner = again(node.func.value)
                if isinstance(owner, (str, bytes)):
                    result = getattr(owner, node.func.attr)(*arguments)
                    return result if isinstance(result, (str, bytes)) else None
        except Exception:
            return None
    return None


# --- cells -----------------------------------------------------------------------------------------


def _read(notebook) -> dict:
    """A notebook as a plain dict (from an nbformat node, a dict or a path)."""
    if isinstance(notebook, (str, Path)):
        return json.loads(Path(notebook).read_text(errors="replace"))
    return notebook


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _nbgrader(cell: dict) -> dict:
    meta = (cell.get("metadata") or {}).get("nbgrader")
    return meta if isinstance(meta, dict) else {}


def student_cells(notebook, instructor=None) -> list[tuple[str, str, bool]]:
    """``(cell name, code, is_solution)`` of every code cell the student wrote, in order.

    Solution cells and cells without nbgrader metadata are the student's. A cell that
    claims to be a read-only or test cell is skipped only when ``instructor`` (the
    source or release notebook) has a read-only or test cell of that ``grade_id`` and it
    is the last cell with that id (earlier duplicates run as ordinary code, see
    :class:`dplib.grading.preprocessors.SanitizeMetadata`); without ``instructor`` its
    metadata is trusted.
    """
    cells = [c for c in _read(notebook).get("cells", []) if isinstance(c, dict)]
    instructor_ids = None
    if instructor is not None:
        instructor_ids = {
            _nbgrader(c).get("grade_id") for c in _read(instructor).get("cells", [])
            if isinstance(c, dict) and _nbgrader(c).get("locked") and not _nbgrader(c).get("solution")
        }
    last = {}
    for index, cell in enumerate(cells):
        last[_nbgrader(cell).get("grade_id")] = index
    found = []
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        meta = _nbgrader(cell)
        grade_id = meta.get("grade_id")
        instructors = meta.get("locked") and not meta.get("solution")
        if instructor_ids is not None:
            instructors = grade_id in instructor_ids and last.get(grade_id) == index
        if instructors:
            continue
        name = grade_id if grade_id and last.get(grade_id) == index else f"cell {index}"
        found.append((name, _source(cell), bool(meta.get("solution")) and name == grade_id))
    return found


def _instructor_code(notebook, instructor=None) -> list[str]:
    """Code of the read-only cells (their imports name ``np``, ``dplib``, ``check_close`` ...)."""
    cells = _read(instructor if instructor is not None else notebook).get("cells", [])
    return [
        _source(c) for c in cells
        if isinstance(c, dict) and c.get("cell_type") == "code" and _nbgrader(c).get("locked")
        and not _nbgrader(c).get("solution") and not _nbgrader(c).get("grade")
    ]


def _parse(code: str) -> ast.Module | None:
    """The cell's syntax tree, IPython magics (``%cmd``, ``!cmd``) turned into ``get_ipython()`` calls."""
    try:
        return ast.parse(code)
    except SyntaxError:
        pass
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return ast.parse(TransformerManager().transform_cell(code))
    except Exception:  # a cell that does not parse cannot run either
        return None


# --- the reviewer ------------------------------------------------------------------------------------


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


class _Reviewer:
    """Walks the student's cells in order, resolving names to dotted paths (``_sg`` -> ``signal``)."""

    def __init__(self):
        self.aliases: dict[str, str] = {}  # local name -> dotted path of what it is bound to
        self.local: set[str] = set()  # names the student bound to something else
        self.constants: dict[str, object] = {}  # local name -> constant value
        self.flags: list[Flag] = []
        self.cell, self.solution, self.defined = "", False, set()

    # -- bindings --
    def bind_imports(self, tree: ast.AST) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.aliases[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def bind(self, target: ast.AST, value: ast.AST | None) -> None:
        """Record what an assignment binds: an alias of a module path, a constant, or neither."""
        if isinstance(target, ast.Name):
            path = self.resolve(value) if value is not None else None
            constant = constant_value(value, self.constants) if value is not None else None
            self.aliases.pop(target.id, None)
            self.constants.pop(target.id, None)
            self.local.add(target.id)
            if path:
                self.aliases[target.id] = path
            elif constant is not None:
                self.constants[target.id] = constant
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
            for i, element in enumerate(target.elts):
                self.bind(element, values[i] if values else None)

    # -- resolution --
    def resolve(self, node: ast.AST | None) -> str | None:
        """The dotted path an expression refers to (``sys._getframe``), or None if it is not a known object."""
        if isinstance(node, ast.Name):
            if node.id in self.aliases:
                return self.aliases[node.id]
            if hasattr(builtins, node.id) or node.id in ("get_ipython", "__builtins__"):
                return f"builtins.{node.id}"
            if node.id in CONVENTIONAL_NAMES and node.id not in self.local:
                return CONVENTIONAL_NAMES[node.id]
            return None
        if isinstance(node, ast.Attribute):
            owner = self.resolve(node.value)
            return f"{owner}.{node.attr}" if owner else None
        if isinstance(node, ast.Call):
            function = self.resolve(node.func)
            arguments = [constant_value(a, self.constants) for a in node.args]
            if function in ("builtins.__import__", "importlib.import_module") and arguments and isinstance(arguments[0], str):
                return arguments[0] if function == "importlib.import_module" else arguments[0].split(".")[0]
            if function == "builtins.getattr" and len(node.args) >= 2 and isinstance(arguments[1], str):
                owner = self.resolve(node.args[0])
                return f"{owner}.{arguments[1]}" if owner else None
            if function == "builtins.get_ipython":
                return "IPython.shell"
            return None
        if isinstance(node, ast.Subscript):
            owner = self.resolve(node.value)
            key = constant_value(node.slice, self.constants)
            if owner == "sys.modules" and isinstance(key, str):
                return key
            if owner and owner.endswith(".__dict__") and isinstance(key, str):
                return f"{owner[: -len('.__dict__')]}.{key}"
            return None
        return None

    # -- flags --
    def flag(self, node: ast.AST, kind: str, reason: str) -> None:
        self.flags.append(Flag(self.cell, getattr(node, "lineno", 0), kind, reason))

    def check_path(self, node: ast.AST, path: str, store: bool = False) -> None:
        """Flags for a use of the object at ``path`` (``sys._getframe``, ``numpy.save``, ``dplib.testing``)."""
        parts = path.split(".")
        top = parts[0]
        if top == "builtins" and len(parts) == 2:
            name = parts[1]
            if name in ("exit", "quit"):
                self.flag(node, "process control", DYNAMIC_BUILTINS[name])
            elif name == "get_ipython":
                self.flag(node, "introspection", DYNAMIC_BUILTINS[name])
            elif name == "__builtins__":
                self.flag(node, "dunder access", DUNDER_REASONS["__builtins__"])
            elif name in DYNAMIC_BUILTINS and DYNAMIC_BUILTINS[name] and name not in ("globals", "locals", "vars"):
                self.flag(node, "dynamic code", DYNAMIC_BUILTINS[name])
            return
        if top == "IPython" and len(parts) >= 2 and parts[1] == "shell":
            self.flag(node, "introspection", DYNAMIC_BUILTINS["get_ipython"] + f": {path.replace('IPython.shell', 'get_ipython()')}")
            return
        if top in MODULES:
            self.flag(node, "introspection" if top not in ("shutil", "tempfile", "sqlite3") else "writes files",
                      f"{MODULES[top]}: {path}")
            return
        if top == "sys":
            attribute = parts[1] if len(parts) > 1 else None
            if attribute is None:
                return
            if store:
                self.flag(node, "process control", f"replaces {'.'.join(parts[:2])} for the whole kernel")
            elif attribute not in SYS_ALLOWED:
                self.flag(node, "introspection", SYS_REASONS.get(attribute, f"uses sys.{attribute}"))
            return
        if top == "os":
            attribute = parts[1] if len(parts) > 1 else None
            if attribute is None or (attribute in OS_ALLOWED and not store):
                return
            for names, reason in OS_REASONS:
                if attribute in names:
                    self.flag(node, "process control" if "kills" in reason or "programs" in reason else "files",
                              reason.format(attribute))
                    return
            self.flag(node, "process control", f"uses os.{attribute}")
            return
        if top == "dplib" and len(parts) >= 2 and parts[1] in ("testing", "grading"):
            what = "the test helpers (dplib.testing)" if parts[1] == "testing" else "the grading guard (dplib.grading)"
            if not (parts[1] == "testing" and len(parts) == 3 and TEST_HELPER.match(parts[2]) and not store):
                self.flag(node, "tampering", f"reaches {what}: {path}")
            return
        if top in ("numpy", "pandas") and parts[-1] in NUMPY_WRITERS | {"to_pickle", "read_pickle"}:
            if parts[-1] == "read_pickle":
                self.flag(node, "files", f"loads a pickle ({path}): loading a pickle runs arbitrary code")
            else:
                self.flag(node, "writes files", f"writes a file ({path})")
        if path in ("types.FunctionType", "types.CodeType", "types.LambdaType", "types.FrameType"):
            self.flag(node, "dynamic code", f"builds functions or code objects ({path})")
        if path == "weakref.finalize":
            self.flag(node, "dynamic code", "registers code to run when an object is collected (weakref.finalize)")

    def check_dunder(self, node: ast.AST, name: str) -> None:
        if name.startswith("__") and name.endswith("__") and name not in DUNDER_ALLOWED:
            self.flag(node, "dunder access", DUNDER_REASONS.get(name, f"uses the special attribute {name}"))

    # -- the walk --
    def review(self, cell: str, tree: ast.Module, solution: bool) -> None:
        self.cell, self.solution = cell, solution
        self.defined = {
            node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        } | {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)} | {
            (a.asname or a.name).split(".")[0] for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
            for a in node.names
        }
        self.visit_block(tree.body)

    def visit_block(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            self.visit(statement)

    def visit(self, node: ast.AST) -> None:
        if _is_docstring(node):
            return
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is not None:
            method(node)
        else:
            self.generic(node)

    def generic(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            self.visit(child)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.check_path(node, alias.name)
            self.check_binding(node, alias.asname or alias.name.split(".")[0])
        self.bind_imports(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and not node.level:
            for alias in node.names:
                if node.module.split(".")[0] in MODULES or node.module in ("sys", "os") and alias.name != "*":
                    self.check_path(node, f"{node.module}.{alias.name}" if alias.name != "*" else node.module)
                elif node.module.startswith(("dplib.testing", "dplib.grading")) or (
                        node.module == "dplib" and alias.name in ("testing", "grading")):
                    self.flag(node, "tampering", f"imports {alias.name} from {node.module}: the test helpers and the "
                                                 "grading guard are not part of an answer")
                else:
                    self.check_path(node, f"{node.module}.{alias.name}")
                if alias.name == "*":
                    if node.module.split(".")[0] == "dplib":
                        self.flag(node, "delegates to dplib", f"imports every function of {node.module} (import *): "
                                                              "the exercises may be answered by dplib's own")
                    continue
                self.check_binding(node, alias.asname or alias.name)
                self.check_delegation(node, alias.asname or alias.name, f"{node.module}.{alias.name}")
        self.bind_imports(node)

    def check_binding(self, node: ast.AST, name: str) -> None:
        """Flag rebinding a test helper (``check_close = ...``) or a module the read-only cells imported."""
        if TEST_HELPER.match(name):
            self.flag(node, "tampering", f"rebinds the test helper {name}")
        elif name in SHELL_NAMES:
            self.flag(node, "tampering", f"rebinds the shell's {name}")

    def check_delegation(self, node: ast.AST, name: str, path: str | None) -> None:
        """An exercise's function bound to, or returning, dplib's function of the same name."""
        if path and path.split(".")[0] == "dplib" and path.split(".")[-1] == name:
            self.flag(node, "delegates to dplib", f"{name} is dplib's own {path}")

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self.visit_target(target, node.value)
            self.bind(target, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self.visit_target(node.target, node.value)
        self.bind(node.target, node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        self.visit_target(node.target, None)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.visit_target(node.target, node.value)
        self.bind(node.target, node.value)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self.visit_target(target, None)

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self.visit_target(node.target, None)
        self.bind(node.target, None)
        self.visit_block(node.body + node.orelse)

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.visit_target(item.optional_vars, None)
                self.bind(item.optional_vars, None)
        self.visit_block(node.body)

    visit_AsyncWith = visit_With
    visit_AsyncFor = visit_For

    def visit_target(self, target: ast.AST, value: ast.AST | None) -> None:
        """Flags for what an assignment writes to: a test helper's name, a library attribute, globals()."""
        if isinstance(target, ast.Name):
            self.check_binding(target, target.id)
            if value is not None:
                self.check_delegation(target, target.id, self.resolve(value))
        elif isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            for element in (target.elts if not isinstance(target, ast.Starred) else [target.value]):
                self.visit_target(element, None)
        elif isinstance(target, ast.Attribute):
            self.check_dunder(target, target.attr)
            owner = self.resolve(target.value)
            if owner:
                top = owner.split(".")[0]
                if top in MODULES or top in ("sys", "os") or owner.startswith(("dplib.testing", "dplib.grading")):
                    self.check_path(target, f"{owner}.{target.attr}", store=True)
                else:
                    self.flag(target, "tampering", f"replaces {owner}.{target.attr}, a library attribute the tests use")
            else:
                self.visit(target.value)
        elif isinstance(target, ast.Subscript):
            owner = self.resolve(target.value)
            if owner in ("sys.modules",) or (owner and owner.endswith(".__dict__")):
                self.check_path(target, owner, store=True)
            self.visit(target.value)
            self.visit(target.slice)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.check_binding(node, node.name)
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.visit(node.args)
        self.aliases.pop(node.name, None)
        self.local.add(node.name)
        self.visit_block(node.body)
        if node.name in self.defined:
            for inner in ast.walk(node):
                if isinstance(inner, ast.Return) and isinstance(inner.value, ast.Call):
                    self.check_delegation(inner, node.name, self.resolve(inner.value.func))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.check_binding(node, node.name)
        for base in node.bases:
            path = self.resolve(base)
            if path and (path in VALUE_TYPES or path.split(".")[0] in VALUE_PACKAGES):
                self.flag(node, "fake value", f"class {node.name} subclasses {path}: its comparisons and "
                                              "conversions can lie to the tests")
            self.visit(base)
        for keyword in node.keywords:
            self.flag(node, "dynamic code", f"class {node.name} sets {keyword.arg}= (a metaclass can rewrite the class)")
        for statement in node.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name in LYING_METHODS:
                self.flag(statement, "fake value", f"class {node.name} defines {statement.name}: an object can "
                                                   "compare equal to, or convert to, whatever a test expects")
            elif isinstance(statement, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id in LYING_METHODS for t in statement.targets):
                self.flag(statement, "fake value", f"class {node.name} sets a special method by assignment")
        self.aliases.pop(node.name, None)
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.visit_block(node.body)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.args)
        self.visit(node.body)

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            self.check_binding(node, name)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in SHELL_NAMES:
            self.flag(node, "introspection", f"reads the shell's {node.id} (it holds every cell's code, the hidden "
                                             "tests' included)")
        elif node.id == "__builtins__":
            self.flag(node, "dunder access", DUNDER_REASONS["__builtins__"])
        elif isinstance(node.ctx, ast.Load) and node.id in self.aliases:
            self.check_path(node, self.aliases[node.id])
        elif isinstance(node.ctx, ast.Load) and node.id in ("exec", "eval", "compile", "__import__", "breakpoint",
                                                            "exit", "quit", "get_ipython", "globals", "locals", "vars",
                                                            "getattr", "setattr", "delattr"):
            if node.id in ("globals", "locals", "vars"):
                self.flag(node, "dynamic code", DYNAMIC_BUILTINS[node.id])
            elif node.id not in ("getattr", "setattr", "delattr"):
                self.check_path(node, f"builtins.{node.id}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.check_dunder(node, node.attr)
        if node.attr in WRITE_METHODS:
            self.flag(node, "writes files", WRITE_METHODS[node.attr])
        path = self.resolve(node)
        if path:
            self.check_path(node, path)
            owner = node.value
            while isinstance(owner, ast.Attribute):
                self.check_dunder(owner, owner.attr)  # a.__kwdefaults__.update: every link is checked
                owner = owner.value
            if isinstance(owner, (ast.Call, ast.Subscript)):
                self.visit(owner)  # e.g. the __import__("os") of __import__("os").system
            return  # the rest of the chain is part of the same path: one flag, not one per prefix
        self.visit(node.value)

    def visit_Call(self, node: ast.Call) -> None:
        function = self.resolve(node.func)
        arguments = [constant_value(a, self.constants) for a in node.args]
        if function in ("builtins.getattr", "builtins.setattr", "builtins.delattr", "builtins.hasattr"):
            name = function.split(".")[1]
            if len(node.args) >= 2 and isinstance(arguments[1], str):
                attribute = arguments[1]
                self.check_dunder(node, attribute)
                owner = self.resolve(node.args[0])
                if owner:
                    self.check_path(node, f"{owner}.{attribute}", store=name != "getattr" and name != "hasattr")
                    if name in ("setattr", "delattr") and owner.split(".")[0] not in {*MODULES, "sys", "os"}:
                        self.flag(node, "tampering", f"replaces {owner}.{attribute} with {name}")
                if SENSITIVE_STRINGS.search(attribute):
                    self.flag(node, "introspection", f"{name} of {attribute!r}")
            elif name != "hasattr":
                self.flag(node, "dynamic code", f"{name} with a computed attribute name")
            for argument in node.args:
                self.visit(argument)
            for keyword in node.keywords:
                self.visit(keyword.value)
            return
        if function == "builtins.open" or (function or "").endswith((".open",)) or (
                isinstance(node.func, ast.Attribute) and node.func.attr == "open" and function is None):
            self.check_open(node, function)
        if function == "builtins.type" and len(node.args) == 3:
            self.flag(node, "dynamic code", "builds a class at run time with type(name, bases, namespace)")
        if isinstance(node.func, ast.Attribute) and node.func.attr in PATH_WRITE_METHODS and (
                node.args or any(k.arg in ("path_or_buf", "path", "excel_writer", "buf", "name") for k in node.keywords)):
            self.flag(node, "writes files", f"writes a file ({node.func.attr})")
        self.generic(node)

    def check_open(self, node: ast.Call, function: str | None) -> None:
        """``open`` is flagged by mode: any write, append or create mode; reading any file too (the course's files)."""
        positional = 1 if function in ("builtins.open", "io.open", "codecs.open", "os.open") else 0
        mode_node = node.args[positional] if len(node.args) > positional else next(
            (k.value for k in node.keywords if k.arg == "mode"), None)
        mode = "r" if mode_node is None else constant_value(mode_node, self.constants)
        if function == "os.open":
            return  # flagged as os.open
        if not isinstance(mode, str):
            self.flag(node, "writes files", "opens a file with a mode computed at run time")
        elif set(mode) & set("wax+"):
            self.flag(node, "writes files", f"opens a file for writing (mode {mode!r})")
        else:
            self.flag(node, "files", "opens a file for reading (the course's files, tests and gradebook are readable)")

    def visit_Subscript(self, node: ast.Subscript) -> None:
        path = self.resolve(node)
        if path:
            self.check_path(node, path)
        self.generic(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and SENSITIVE_STRINGS.search(node.value):
            self.flag(node, "introspection", f"names {SENSITIVE_STRINGS.search(node.value).group()!r} in a string")

    def visit_BinOp(self, node: ast.BinOp) -> None:
        value = constant_value(node, self.constants)
        if isinstance(value, str) and SENSITIVE_STRINGS.search(value):
            self.flag(node, "introspection",
                      f"spells {SENSITIVE_STRINGS.search(value).group()!r} in pieces, out of sight of a text search")
            return
        self.generic(node)

    visit_JoinedStr = visit_BinOp


def review_notebook(notebook, instructor=None) -> tuple[Flag, ...]:
    """Every :class:`Flag` of the cells the student wrote, in notebook order.

    Parameters
    ----------
    notebook : nbformat.NotebookNode, dict, str or Path
        The submitted notebook.
    instructor : same types, optional
        The assignment's source (or release) notebook: its read-only cells' imports tell
        what ``np``, ``dplib``, ``check_close`` ... are, and only cells it has as
        read-only or test cells are left out of the review (a student cannot hide code
        by giving a cell fake ``locked`` metadata).
    """
    notebook = _read(notebook)
    reviewer = _Reviewer()
    for code in _instructor_code(notebook, instructor):
        tree = _parse(code)
        if tree is not None:
            reviewer.bind_imports(tree)
    for name, code, solution in student_cells(notebook, instructor):
        tree = _parse(code)
        if tree is not None:
            reviewer.review(name, tree, solution)
    unique = dict.fromkeys(reviewer.flags)
    return tuple(unique)


def review_flags(notebook_path, instructor=None) -> tuple[str, ...]:
    """The review flags of a notebook as ``"kind: reason (cell, line n)"`` strings (``()`` if it is unreadable).

    The drop-in replacement of the regular-expression review the class grader used:
    the strings go to ``grades.csv`` and the class summary.
    """
    try:
        flags = review_notebook(notebook_path, instructor)
    except Exception:  # an unreadable notebook is reported by the grader, not here
        return ()
    return tuple(dict.fromkeys(str(flag).replace(";", ",") for flag in flags))


REVIEW_HEADING = "**Automatic review** (for the instructor to check; not a grade):"


def comment_in_gradebook(gradebook, student: str, assignment: str, flags_by_notebook: dict[str, list[str]]) -> int:
    """Show review flags in formgrader: flag the submitted notebook and comment on its first solution cell.

    Each notebook with flags gets nbgrader's ``flagged`` mark (formgrader lists it) and an
    automatic comment on its first solution cell, starting with :data:`REVIEW_HEADING`
    (formgrader shows it in that cell's comment box). A comment a grader wrote by hand
    is never touched. Returns the number of notebooks commented on.
    """
    from nbgrader.api import MissingEntry

    done = 0
    for notebook_name, flags in flags_by_notebook.items():
        if not flags:
            continue
        try:
            notebook = gradebook.find_submission_notebook(notebook_name, assignment, student)
        except MissingEntry:
            continue
        notebook.flagged = True
        order = {cell.name: i for i, cell in enumerate(notebook.notebook.source_cells)}
        comments = sorted(notebook.comments, key=lambda c: order.get(c.name, 1 << 30))
        if comments:
            comment = comments[0]
            previous, _, listed = (comment.auto_comment or "").partition(REVIEW_HEADING)
            previous = previous.rstrip()
            known = [line[2:] for line in listed.split("\n") if line.startswith("- ")]
            text = REVIEW_HEADING + "\n" + "\n".join(f"- {flag}" for flag in dict.fromkeys(known + list(flags)))
            comment.auto_comment = f"{previous}\n\n{text}".strip() if previous and previous != "No response." else text
        done += 1
    gradebook.db.commit()
    return done


__all__ = ["Flag", "review_notebook", "review_flags", "student_cells", "constant_value", "comment_in_gradebook"]
