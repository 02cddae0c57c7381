"""The walk: every statement and expression of the student's cells, in order, checked and bound.

:class:`Reviewer` visits a cell's syntax tree; names are resolved by
:class:`~dpgrader.review.resolver.Resolver` and judged by
:class:`~dpgrader.review.checks.Checker`; what a call is checked for is in :mod:`dpgrader.review.calls`.

The walk keeps its own stack (:meth:`Reviewer.walk`) instead of recursing: a ``visit_*``
method *yields* the children to visit, in order, and the walk visits each one completely
before it resumes the method. The order is the recursive one, and the depth of a tree
(``1+1+...+1`` with 3,000 terms is 3,000 levels) is a length of a list, not a recursion
a student can push past Python's limit.
"""

from __future__ import annotations

import ast
from typing import Iterator

from dpgrader.review.calls import CallChecks
from dpgrader.review.reading import top_level_names
from dpgrader.review.rules import (
    DEFERRED_METHODS,
    DUNDER_REASONS,
    DYNAMIC_BUILTINS,
    FAKE_VALUE_METHODS,
    MODULES,
    SENSITIVE_STRINGS,
    SHELL_NAMES,
    VALUE_PACKAGES,
    VALUE_TYPES,
    WRITE_METHODS,
)

Children = Iterator[ast.AST] | None


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _target_leaves(target: ast.AST) -> list[ast.AST]:
    """The names, attributes and subscripts a (possibly nested) assignment target writes, left to right."""
    leaves, pending = [], [target]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Tuple, ast.List)):
            pending.extend(reversed(node.elts))
        elif isinstance(node, ast.Starred):
            pending.append(node.value)
        else:
            leaves.append(node)
    return leaves


class Reviewer(CallChecks):
    """Walks the student's cells in order, resolving names to dotted paths (``_sg`` -> ``signal``)."""

    # -- the walk --
    def review(self, cell: str, tree: ast.Module, solution: bool) -> None:
        self.cell, self.solution = cell, solution
        self.defined = top_level_names(tree)
        self.magic_depth = 0
        self.forget()  # node ids of an earlier cell's tree may be reused by this one's
        self.walk(tree.body)

    def walk(self, statements: list[ast.AST]) -> None:
        """Visit ``statements`` and everything in them, in order, with an explicit stack."""
        stack: list[Iterator[ast.AST]] = [iter(statements)]
        while stack:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
            else:
                stack.append(iter(self.visit(node) or ()))

    def visit(self, node: ast.AST) -> Children:
        """Check ``node``; return the children to visit next (the walk visits them, then resumes here)."""
        if _is_docstring(node):
            return None
        method = getattr(self, f"visit_{type(node).__name__}", None)
        return method(node) if method is not None else ast.iter_child_nodes(node)

    def visit_Import(self, node: ast.Import) -> Children:
        for alias in node.names:
            self.check_path(node, alias.name)
            self.check_binding(node, alias.asname or alias.name.split(".")[0])
        self.bind_imports(node)
        return None

    def visit_ImportFrom(self, node: ast.ImportFrom) -> Children:
        if node.module and not node.level:
            for alias in node.names:
                if node.module.split(".")[0] in MODULES or node.module in ("sys", "os") and alias.name != "*":
                    self.check_path(node, f"{node.module}.{alias.name}" if alias.name != "*" else node.module)
                elif node.module.startswith(("dplib.testing", "dpgrader")) or (
                        node.module == "dplib" and alias.name == "testing"):
                    self.flag(node, "tampering", f"imports {alias.name} from {node.module}: the test helpers and the "
                                                 "grading guard are not part of an answer")
                else:
                    self.check_path(node, f"{node.module}.{alias.name}" if alias.name != "*" else node.module)
                if alias.name == "*":
                    if node.module.split(".")[0] == "dplib":
                        self.flag(node, "delegates to dplib", f"imports every function of {node.module} (import *): "
                                                              "the exercises may be answered by dplib's own")
                    continue
                self.check_binding(node, alias.asname or alias.name)
                self.check_delegation(node, alias.asname or alias.name, f"{node.module}.{alias.name}")
        self.bind_imports(node)
        return None

    def visit_Assign(self, node: ast.Assign) -> Children:
        yield node.value
        for target in node.targets:
            yield from self.visit_target(target, node.value)
            self.bind(target, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Children:
        yield node.annotation  # evaluated when the cell runs
        if node.value is not None:
            yield node.value
        yield from self.visit_target(node.target, node.value)
        self.bind(node.target, node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> Children:
        yield node.value
        yield from self.visit_target(node.target, None)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> Children:
        yield node.value
        yield from self.visit_target(node.target, node.value)
        self.bind(node.target, node.value)

    def visit_Delete(self, node: ast.Delete) -> Children:
        for target in node.targets:
            yield from self.visit_target(target, None)

    def visit_For(self, node: ast.For) -> Children:
        yield node.iter
        yield from self.visit_target(node.target, None)
        self.bind(node.target, None)
        yield from node.body + node.orelse

    def visit_With(self, node: ast.With) -> Children:
        for item in node.items:
            yield item.context_expr
            if item.optional_vars is not None:
                yield from self.visit_target(item.optional_vars, None)
                self.bind(item.optional_vars, None)
        yield from node.body

    visit_AsyncWith = visit_With
    visit_AsyncFor = visit_For

    def visit_target(self, target: ast.AST, value: ast.AST | None) -> Iterator[ast.AST]:
        """Flags for what an assignment writes to (a test helper's name, a library attribute, globals());
        yields the expressions inside the target to visit."""
        top = target
        for leaf in _target_leaves(target):
            if isinstance(leaf, ast.Name):
                self.check_binding(leaf, leaf.id)
                if value is not None and leaf is top:
                    self.check_delegation(leaf, leaf.id, self.resolve(value))
            elif isinstance(leaf, ast.Attribute):
                self.check_dunder(leaf, leaf.attr)
                if leaf.attr in FAKE_VALUE_METHODS:
                    self.flag(leaf, "fake value", f"sets the special method {leaf.attr} of an existing object or "
                                                  "class: it can compare equal to, or convert to, whatever a test expects")
                owner = self.resolve(leaf.value)
                if owner:
                    first = owner.split(".")[0]
                    if first in MODULES or first in ("sys", "os") or owner.startswith(("dplib.testing", "dpgrader")):
                        self.check_path(leaf, f"{owner}.{leaf.attr}", store=True)
                    else:
                        self.flag(leaf, "tampering", f"replaces {owner}.{leaf.attr}, a library attribute the tests use")
                else:
                    yield leaf.value
            elif isinstance(leaf, ast.Subscript):
                owner = self.resolve(leaf.value)
                if owner in ("sys.modules",) or (owner and owner.endswith(".__dict__")):
                    self.check_path(leaf, owner, store=True)
                yield leaf.value
                yield leaf.slice
            else:
                yield leaf

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Children:
        self.check_binding(node, node.name)
        yield from node.decorator_list
        yield node.args
        if node.returns is not None:
            yield node.returns
        self.aliases.pop(node.name, None)
        self.local.add(node.name)
        yield from node.body
        if node.name in self.defined:
            for inner in ast.walk(node):
                if isinstance(inner, ast.Return) and isinstance(inner.value, ast.Call):
                    self.check_delegation(inner, node.name, self.resolve(inner.value.func))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> Children:
        self.check_binding(node, node.name)
        for base in node.bases:
            path = self.resolve(base)
            if path and (path in VALUE_TYPES or path.split(".")[0] in VALUE_PACKAGES):
                self.flag(node, "fake value", f"class {node.name} subclasses {path}: its comparisons and "
                                              "conversions can lie to the tests")
            yield base
        for keyword in node.keywords:
            self.flag(node, "dynamic code", f"class {node.name} sets {keyword.arg}= (a metaclass can rewrite the class)")
            yield keyword.value
        for statement in node.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name in FAKE_VALUE_METHODS:
                self.flag(statement, "fake value", f"class {node.name} defines {statement.name}: an object can "
                                                   "compare equal to, or convert to, whatever a test expects")
            elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name in DEFERRED_METHODS:
                self.flag(statement, "dynamic code", f"class {node.name} {DEFERRED_METHODS[statement.name]}")
            elif isinstance(statement, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id in FAKE_VALUE_METHODS for t in statement.targets):
                names = ", ".join(t.id for t in statement.targets if isinstance(t, ast.Name) and t.id in FAKE_VALUE_METHODS)
                self.flag(statement, "fake value", f"class {node.name} sets a special method by assignment ({names}): "
                                                   "an object can compare equal to, or convert to, whatever a test expects")
        self.aliases.pop(node.name, None)
        yield from node.decorator_list
        yield from node.body

    def visit_Lambda(self, node: ast.Lambda) -> Children:
        yield node.args
        yield node.body

    def visit_Global(self, node: ast.Global) -> Children:
        for name in node.names:
            self.check_binding(node, name)
        return None

    def visit_Name(self, node: ast.Name) -> Children:
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
        return None

    def visit_Attribute(self, node: ast.Attribute) -> Children:
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
                yield owner  # e.g. the __import__("os") of __import__("os").system
            return  # the rest of the chain is part of the same path: one flag, not one per prefix
        yield node.value

    def visit_Subscript(self, node: ast.Subscript) -> Children:
        path = self.resolve(node)
        if path:
            self.check_path(node, path)
        return ast.iter_child_nodes(node)

    def visit_Constant(self, node: ast.Constant) -> Children:
        if isinstance(node.value, str) and SENSITIVE_STRINGS.search(node.value):
            self.flag(node, "introspection", f"names {SENSITIVE_STRINGS.search(node.value).group()!r} in a string")
        return None

    def visit_BinOp(self, node: ast.BinOp) -> Children:
        value = self.constant(node)
        if isinstance(value, str) and SENSITIVE_STRINGS.search(value):
            self.flag(node, "introspection",
                      f"spells {SENSITIVE_STRINGS.search(value).group()!r} in pieces, out of sight of a text search")
            return None
        return ast.iter_child_nodes(node)

    visit_JoinedStr = visit_BinOp
