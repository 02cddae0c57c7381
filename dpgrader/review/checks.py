"""The checks: what a use of a resolved name, an assignment target or an ``open`` call is flagged for.

:class:`Checker` turns a dotted path (``sys._getframe``, ``numpy.save``, ``dplib.testing``)
into flags (:class:`~dpgrader.review.rules.Flag`), using the tables of
:mod:`dpgrader.review.rules`; the walk over the syntax tree is in
:mod:`dpgrader.review.reviewer`.
"""

from __future__ import annotations

import ast

from dpgrader.review.resolver import Resolver
from dpgrader.review.rules import (
    CPU_CLOCKS,
    DUNDER_ALLOWED,
    DUNDER_REASONS,
    DYNAMIC_BUILTINS,
    FAKE_VALUE_MODULES,
    MODULES,
    NUMPY_WRITERS,
    OS_ALLOWED,
    OS_REASONS,
    SHELL_NAMES,
    SYS_ALLOWED,
    SYS_REASONS,
    TEST_HELPER,
    Flag,
)


class Checker(Resolver):
    """Flags for the uses of resolved names, in the cell being reviewed."""

    def __init__(self):
        super().__init__()
        self.flags: list[Flag] = []
        self.cell, self.solution, self.defined = "", False, set()

    # -- flags --
    def flag(self, node: ast.AST, kind: str, reason: str) -> None:
        self.flags.append(Flag(kind, reason, self.cell, max(1, getattr(node, "lineno", 1))))

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
        for module, reason in FAKE_VALUE_MODULES.items():
            if path == module or path.startswith(module + "."):
                self.flag(node, "fake value", f"{reason}: {path}")
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
                    kind = ("process control" if "kills" in reason or "programs" in reason
                            else "introspection" if "statistics" in reason else "files")
                    self.flag(node, kind, reason.format(attribute))
                    return
            self.flag(node, "process control", f"uses os.{attribute}")
            return
        if top == "time" and len(parts) == 2 and parts[1] in CPU_CLOCKS:
            self.flag(node, "introspection", f"reads a CPU clock (time.{parts[1]}): its count starts again in a forked "
                                             "process, which tells check_is_random's replay from the real run")
            return
        if top == "dpgrader":
            self.flag(node, "tampering", f"reaches the grader (dpgrader): {path}")
            return
        if top == "dplib" and len(parts) >= 2 and parts[1] == "testing":
            if not (len(parts) == 3 and TEST_HELPER.match(parts[2]) and not store):
                self.flag(node, "tampering", f"reaches the test helpers (dplib.testing): {path}")
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

    def check_open(self, node: ast.Call, function: str | None) -> None:
        """``open`` is flagged by mode: any write, append or create mode; reading any file too (the course's files)."""
        positional = 1 if function in ("builtins.open", "io.open", "codecs.open", "os.open") else 0
        mode_node = node.args[positional] if len(node.args) > positional else next(
            (k.value for k in node.keywords if k.arg == "mode"), None)
        mode = "r" if mode_node is None else self.constant(mode_node)
        if function == "os.open":
            return  # flagged as os.open
        if not isinstance(mode, str):
            self.flag(node, "writes files", "opens a file with a mode computed at run time")
        elif set(mode) & set("wax+"):
            self.flag(node, "writes files", f"opens a file for writing (mode {mode!r})")
        else:
            self.flag(node, "files", "opens a file for reading (the course's files, tests and gradebook are readable)")
