"""Names resolved, not matched as text: aliases of imports and constant string expressions.

:func:`constant_value` evaluates the constant expressions a student can spell a name with
(``"get_" + "ipython"``, ``"nohtypi_teg"[::-1]``); :class:`_Resolver` follows the student's
imports and assignments so that ``import signal as _sg; _sg.setitimer`` resolves to
``signal.setitimer`` and ``getattr(sys, "_get" + "frame")`` to ``sys._getframe``.
"""

from __future__ import annotations

import ast
import builtins

from dpgrader.review.rules import CONVENTIONAL_NAMES


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



# --- aliases -----------------------------------------------------------------------------------------


class _Resolver:
    """Resolves names to dotted paths (``_sg`` -> ``signal``), from the imports and assignments seen so far."""

    def __init__(self):
        self.aliases: dict[str, str] = {}  # local name -> dotted path of what it is bound to
        self.local: set[str] = set()  # names the student bound to something else
        self.constants: dict[str, object] = {}  # local name -> constant value


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
