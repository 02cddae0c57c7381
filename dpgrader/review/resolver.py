"""Names resolved, not matched as text: aliases of imports and constant string expressions.

:func:`constant_value` evaluates the constant expressions a student can spell a name with
(``"get_" + "ipython"``, ``"nohtypi_teg"[::-1]``); :class:`Resolver` follows the student's
imports and assignments so that ``import signal as _sg; _sg.setitimer`` resolves to
``signal.setitimer`` and ``getattr(sys, "_get" + "frame")`` to ``sys._getframe``.

Both work bottom-up with an explicit stack (:func:`bottom_up`), never by recursion: a cell
can nest an expression thousands of levels deep (``"g" + "e" + ... + "t"``, ``a().b().c()...``),
and a recursive evaluator would stop at Python's recursion limit, which a student can reach.
"""

from __future__ import annotations

import ast
import builtins
import re
from typing import Callable, Iterable

from dpgrader.review.rules import CONVENTIONAL_NAMES

_STR_METHODS = {"join", "replace", "lower", "upper", "strip", "lstrip", "rstrip", "format", "capitalize",
                "title", "swapcase", "removeprefix", "removesuffix", "decode", "encode"}
#: Longest string, and largest integer (in bits), a constant expression is evaluated to.
MAX_LENGTH = 10_000
MAX_BITS = 4_000
#: A format spec with a width or precision of four digits or more, or taken from an argument (``*``).
_WIDE_FORMAT = re.compile(r"%[-+ #0]*(?:\*|\d{4,})|%[-+ #0\d]*\.(?:\*|\d{4,})|\{[^}]*:[^}]*(?:\d{4,}|\{)")

_MISSING = object()


def bottom_up(node: ast.AST, inputs: Callable[[ast.AST], Iterable[ast.AST]],
              combine: Callable[[ast.AST, dict], object], memo: dict) -> object:
    """``combine(node, memo)`` once ``memo`` holds the result of every input, computed first, without recursion.

    ``inputs(n)`` lists the nodes whose results ``combine(n, memo)`` reads as ``memo[id(n)]``.
    Results are kept in ``memo`` (keyed by ``id``: the tree must stay alive while ``memo`` is used),
    so a chain of n nested nodes costs n steps, not n squared.
    """
    found = memo.get(id(node), _MISSING)
    if found is not _MISSING:
        return found
    stack = [(node, False)]
    while stack:
        current, ready = stack.pop()
        if id(current) in memo:
            continue
        if ready:
            memo[id(current)] = combine(current, memo)
        else:
            stack.append((current, True))
            stack.extend((child, False) for child in inputs(current) if id(child) not in memo)
    return memo[id(node)]


# --- constant expressions ------------------------------------------------------------------------------


def _constant_inputs(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, (ast.List, ast.Tuple)):
        return list(node.elts)
    if isinstance(node, ast.JoinedStr):
        return [v.value if isinstance(v, ast.FormattedValue) else v for v in node.values]
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.Subscript):
        parts = [node.slice.lower, node.slice.upper, node.slice.step] if isinstance(node.slice, ast.Slice) else [node.slice]
        return [node.value] + [p for p in parts if p is not None]
    if isinstance(node, ast.Call) and not node.keywords:
        owner = [node.func.value] if isinstance(node.func, ast.Attribute) and node.func.attr in _STR_METHODS else []
        return list(node.args) + owner
    return []


def _small(value):
    """``value`` if it is a string, bytes or number of a size worth keeping, else None."""
    if isinstance(value, (str, bytes)):
        return value if len(value) <= MAX_LENGTH else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if not isinstance(value, int) or value.bit_length() <= MAX_BITS else None


def _binary(op: ast.operator, left, right):
    if isinstance(op, ast.Add):
        if isinstance(left, (str, bytes)) and isinstance(right, (str, bytes)) and len(left) + len(right) > MAX_LENGTH:
            return None
        return left + right
    if isinstance(op, ast.Mult):
        text, count = (left, right) if isinstance(left, (str, bytes)) else (right, left)
        if isinstance(text, (str, bytes)) and isinstance(count, int) and len(text) * max(count, 0) > MAX_LENGTH:
            return None
        if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_BITS:
            return None
        return left * right
    if isinstance(op, ast.Mod):
        if isinstance(left, str) and _WIDE_FORMAT.search(left):
            return None
        return left % (tuple(right) if isinstance(right, list) else right)
    return None


def _call(node: ast.Call, arguments: list, owner):
    if isinstance(node.func, ast.Name) and node.func.id in ("chr", "str") and len(arguments) == 1:
        if node.func.id == "chr":
            return chr(arguments[0])
        return str(arguments[0]) if not isinstance(arguments[0], int) or arguments[0].bit_length() <= MAX_BITS else None
    if isinstance(node.func, ast.Attribute) and isinstance(owner, (str, bytes)):
        method = node.func.attr
        if method == "format" and _WIDE_FORMAT.search(str(owner)):
            return None
        if method == "replace" and len(arguments) >= 2 and isinstance(arguments[1], (str, bytes)):
            old = arguments[0] if isinstance(arguments[0], (str, bytes)) else owner
            if not old or len(owner) // len(old) * len(arguments[1]) + len(owner) > MAX_LENGTH:
                return None
        result = getattr(owner, method)(*arguments)
        return result if isinstance(result, (str, bytes)) else None
    return None


def _constant_of(node: ast.AST, memo: dict, constants: dict):
    """The value of ``node`` from the values of its inputs (already in ``memo``), or None."""
    value = lambda child: memo.get(id(child))  # noqa: E731
    if isinstance(node, ast.Constant):
        return _small(node.value)
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = value(node.operand)
        if isinstance(operand, (int, float)) and not isinstance(operand, bool):
            return -operand if isinstance(node.op, ast.USub) else operand
        return None
    if isinstance(node, (ast.List, ast.Tuple)):
        values = [value(element) for element in node.elts]
        return None if any(v is None for v in values) else values
    if isinstance(node, ast.JoinedStr):
        parts = [value(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values]
        if any(p is None or isinstance(p, list) for p in parts):
            return None
        return _small("".join(str(p) for p in parts))
    inputs = [value(child) for child in _constant_inputs(node)]
    if any(v is None for v in inputs):
        return None
    try:
        if isinstance(node, ast.BinOp):
            return _small(_binary(node.op, inputs[0], inputs[1]))
        if isinstance(node, ast.Subscript):
            owner = inputs[0]
            if not isinstance(owner, (str, bytes, list)):
                return None
            if isinstance(node.slice, ast.Slice):
                parts = [value(p) if p is not None else None for p in (node.slice.lower, node.slice.upper, node.slice.step)]
                result = owner[slice(*parts)]
            else:
                result = owner[inputs[1]] if isinstance(inputs[1], int) else None
            return result if isinstance(result, list) else _small(result)
        if isinstance(node, ast.Call) and not node.keywords:
            owner = inputs[-1] if isinstance(node.func, ast.Attribute) and node.func.attr in _STR_METHODS else None
            return _small(_call(node, inputs[: len(node.args)], owner))
    except (ValueError, TypeError, IndexError, KeyError, OverflowError, UnicodeError, AttributeError):
        return None  # not a value (e.g. '%d' % 'a'): the kernel would raise too
    return None


def constant_value(node: ast.AST, constants: dict | None = None, memo: dict | None = None):
    """The value of a constant expression built from literals (``"get_" + "ipython"``), or None.

    Handles literals, names bound to constants, ``+``/``*``/``%`` of constants, f-strings of
    constants, indexing and slicing (``"nohtypi_teg"[::-1]``), ``chr``/``str`` and the
    common string methods (``"".join([...])``, ``.replace``, ``.format``, ...). Strings longer
    than :data:`MAX_LENGTH` and integers of more than :data:`MAX_BITS` bits are not built
    (None). ``memo`` keeps the values of subexpressions between calls on the same tree.
    """
    constants = constants or {}
    return bottom_up(node, _constant_inputs, lambda n, m: _constant_of(n, m, constants), {} if memo is None else memo)


# --- aliases -----------------------------------------------------------------------------------------


class Resolver:
    """Resolves names to dotted paths (``_sg`` -> ``signal``), from the imports and assignments seen so far."""

    def __init__(self):
        self.aliases: dict[str, str] = {}  # local name -> dotted path of what it is bound to
        self.local: set[str] = set()  # names the student bound to something else
        self.constants: dict[str, object] = {}  # local name -> constant value
        self.forget()

    def forget(self) -> None:
        """Drop the values and paths kept for the nodes of a tree (call before reading another tree)."""
        self.values: dict[int, object] = {}  # id(node) -> constant value (see constant_value)
        self.paths: dict[int, str | None] = {}  # id(node) -> dotted path (see resolve)

    def constant(self, node: ast.AST):
        """:func:`constant_value` of ``node`` with the names bound so far."""
        return constant_value(node, self.constants, self.values)

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
        pending = [(target, value)]
        while pending:
            target, value = pending.pop()
            if isinstance(target, ast.Name):
                path = self.resolve(value) if value is not None else None
                constant = self.constant(value) if value is not None else None
                self.aliases.pop(target.id, None)
                self.constants.pop(target.id, None)
                self.local.add(target.id)
                if path:
                    self.aliases[target.id] = path
                elif constant is not None:
                    self.constants[target.id] = constant
            elif isinstance(target, (ast.Tuple, ast.List)):
                values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
                pending.extend((element, values[i] if values else None) for i, element in enumerate(target.elts))
            elif isinstance(target, ast.Starred):
                pending.append((target.value, None))

    # -- resolution --
    def resolve(self, node: ast.AST | None) -> str | None:
        """The dotted path an expression refers to (``sys._getframe``), or None if it is not a known object."""
        if node is None:
            return None
        return bottom_up(node, _path_inputs, self._path_of, self.paths)

    def _path_of(self, node: ast.AST, memo: dict) -> str | None:
        """The dotted path of ``node`` from the paths of its inputs (already in ``memo``)."""
        if isinstance(node, ast.Name):
            if node.id in self.aliases:
                return self.aliases[node.id]
            if hasattr(builtins, node.id) or node.id in ("get_ipython", "__builtins__"):
                return f"builtins.{node.id}"
            if node.id in CONVENTIONAL_NAMES and node.id not in self.local:
                return CONVENTIONAL_NAMES[node.id]
            return None
        if isinstance(node, ast.Attribute):
            owner = memo.get(id(node.value))
            return f"{owner}.{node.attr}" if owner else None
        if isinstance(node, ast.Call):
            function = memo.get(id(node.func))
            arguments = [self.constant(a) for a in node.args[:2]]
            if function in ("builtins.__import__", "importlib.import_module") and arguments and isinstance(arguments[0], str):
                return arguments[0] if function == "importlib.import_module" else arguments[0].split(".")[0]
            if function == "builtins.getattr" and len(node.args) >= 2 and isinstance(arguments[1], str):
                owner = memo.get(id(node.args[0]))
                return f"{owner}.{arguments[1]}" if owner else None
            if function == "builtins.get_ipython":
                return "IPython.shell"
            return None
        if isinstance(node, ast.Subscript):
            owner = memo.get(id(node.value))
            key = self.constant(node.slice)
            if owner == "sys.modules" and isinstance(key, str):
                return key
            if owner and owner.endswith(".__dict__") and isinstance(key, str):
                return f"{owner[: -len('.__dict__')]}.{key}"
            return None
        return None


def _path_inputs(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, (ast.Attribute, ast.Subscript)):
        return [node.value]
    if isinstance(node, ast.Call):
        return [node.func] + node.args[:1]
    return []
