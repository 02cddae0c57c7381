"""The walk: every statement and expression of the student's cells, in order, checked and bound.

:class:`_Reviewer` visits a cell's syntax tree; names are resolved by
:class:`~dpgrader.review.resolver._Resolver` and judged by
:class:`~dpgrader.review.checks._Checker`.
"""

from __future__ import annotations

import ast

from dpgrader.review.checks import _Checker
from dpgrader.review.resolver import constant_value
from dpgrader.review.rules import (
    DUNDER_REASONS,
    DYNAMIC_BUILTINS,
    LYING_METHODS,
    MODULES,
    PATH_WRITE_METHODS,
    SENSITIVE_STRINGS,
    SHELL_NAMES,
    VALUE_PACKAGES,
    VALUE_TYPES,
    WRITE_METHODS,
)


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


class _Reviewer(_Checker):
    """Walks the student's cells in order, resolving names to dotted paths (``_sg`` -> ``signal``)."""

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
                elif node.module.startswith(("dplib.testing", "dpgrader")) or (
                        node.module == "dplib" and alias.name == "testing"):
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
                if top in MODULES or top in ("sys", "os") or owner.startswith(("dplib.testing", "dpgrader")):
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

