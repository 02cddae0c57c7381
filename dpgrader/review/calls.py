"""What a call is checked for: ``getattr``/``setattr`` by name, ``open``, classes built at run time, special
methods passed by keyword, files written, and the magics and shell commands of a cell.

:class:`CallChecks` is the part of :class:`~dpgrader.review.reviewer.Reviewer` that visits an
:class:`ast.Call`; like every ``visit_*`` method of the walk, :meth:`~CallChecks.visit_Call` yields the
children to visit.
"""

from __future__ import annotations

import ast
from typing import Iterator

from dpgrader.review import magics
from dpgrader.review.checks import Checker
from dpgrader.review.rules import ABSTRACT_PACKAGES, FAKE_VALUE_METHODS, MODULES, PATH_WRITE_METHODS, SENSITIVE_STRINGS
from dpgrader.review.reading import parse_cell, top_level_names

Children = Iterator[ast.AST] | None


class CallChecks(Checker):
    """The checks of a call (the walk's state, ``defined`` and ``magic_depth``, is the reviewer's)."""

    def visit_Call(self, node: ast.Call) -> Children:
        if isinstance(node.func, ast.Attribute):
            call = magics.shell_call(node, self.resolve(node.func.value))
            if call is not None:
                yield from self.visit_shell_call(node, call)
                return
        function = self.resolve(node.func)
        arguments = [self.constant(a) for a in node.args]
        self.check_fake_keywords(node, function)
        if function in ("builtins.getattr", "builtins.setattr", "builtins.delattr", "builtins.hasattr"):
            name = function.split(".")[1]
            if len(node.args) >= 2 and isinstance(arguments[1], str):
                attribute = arguments[1]
                self.check_dunder(node, attribute)
                if name == "setattr" and attribute in FAKE_VALUE_METHODS:
                    self.flag(node, "fake value", f"sets the special method {attribute} with setattr: an object can "
                                                  "compare equal to, or convert to, whatever a test expects")
                owner = self.resolve(node.args[0])
                if owner:
                    self.check_path(node, f"{owner}.{attribute}", store=name != "getattr" and name != "hasattr")
                    if name in ("setattr", "delattr") and owner.split(".")[0] not in {*MODULES, "sys", "os"}:
                        self.flag(node, "tampering", f"replaces {owner}.{attribute} with {name}")
                if SENSITIVE_STRINGS.search(attribute):
                    self.flag(node, "introspection", f"{name} of {attribute!r}")
            elif name != "hasattr":
                self.flag(node, "dynamic code", f"{name} with a computed attribute name")
            yield from node.args
            for keyword in node.keywords:
                yield keyword.value
            return
        if function == "builtins.open" or (function or "").endswith((".open",)) or (
                isinstance(node.func, ast.Attribute) and node.func.attr == "open" and function is None):
            self.check_open(node, function)
        if function in ("builtins.type", "types.new_class") and (len(node.args) == 3 or function == "types.new_class"):
            self.flag(node, "dynamic code", "builds a class at run time with type(name, bases, namespace)"
                      if function == "builtins.type" else "builds a class at run time (types.new_class)")
            namespace = node.args[2] if len(node.args) == 3 else None
            if isinstance(namespace, ast.Dict) and self.lying_keys(namespace):
                self.flag(node, "fake value", f"builds a class whose {', '.join(self.lying_keys(namespace))} can "
                                              "compare equal to, or convert to, whatever a test expects")
        if isinstance(node.func, ast.Attribute) and node.func.attr == "configure_mock":
            self.flag(node, "fake value", "configures a mock (configure_mock): it answers whatever it is told")
        if function and function.endswith(".register") and function.startswith(ABSTRACT_PACKAGES):
            self.flag(node, "fake value", f"registers a class with {function[: -len('.register')]}: isinstance "
                                          "then takes any object of it for a number")
        if isinstance(node.func, ast.Attribute) and node.func.attr in PATH_WRITE_METHODS and (
                node.args or any(k.arg in ("path_or_buf", "path", "excel_writer", "buf", "name") for k in node.keywords)):
            self.flag(node, "writes files", f"writes a file ({node.func.attr})")
        yield from ast.iter_child_nodes(node)

    def lying_keys(self, mapping: ast.Dict) -> list[str]:
        """The special methods (``__eq__``, ``__bool__``, ...) a dict literal names as keys."""
        keys = [self.constant(key) for key in mapping.keys if key is not None]
        return [key for key in keys if isinstance(key, str) and key in FAKE_VALUE_METHODS]

    def check_fake_keywords(self, node: ast.Call, function: str | None) -> None:
        """``SimpleNamespace(__eq__=...)``, ``Mock(**{"__bool__": ...})``: special methods passed by keyword."""
        callee = function or (node.func.attr if isinstance(node.func, ast.Attribute) else "a call")
        for keyword in node.keywords:
            names = [keyword.arg] if keyword.arg else (
                self.lying_keys(keyword.value) if isinstance(keyword.value, ast.Dict) else [])
            for name in names:
                if name in FAKE_VALUE_METHODS:
                    self.flag(node, "fake value", f"passes {name} as a keyword argument of {callee}: the object made "
                                                  "can compare equal to, or convert to, whatever a test expects")

    def visit_shell_call(self, node: ast.Call, call: magics.ShellCall) -> Iterator[ast.AST]:
        """A magic or shell command: flagged unless harmless; the code of ``%time``/``%timeit`` is reviewed."""
        verdict = magics.judge(call, getattr(node, "lineno", 1))
        if verdict.kind:
            self.flag(node, verdict.kind, verdict.reason)
        for name in verdict.binds:
            self.check_binding(node, name)
        for code, first_line in verdict.code:
            if self.magic_depth:
                self.flag(node, "review", f"a magic inside the code of another ({call}) is not followed: a person must "
                                          "read this cell")
                return
            tree = parse_cell(code)
            if tree is None:
                continue  # IPython cannot compile it either: nothing runs
            ast.increment_lineno(tree, first_line - 1)
            self.defined |= top_level_names(tree)
            self.magic_depth += 1
            yield from tree.body
            self.magic_depth -= 1
