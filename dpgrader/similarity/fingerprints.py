"""Normalized syntax-tree tokens of a cell and their winnowed fingerprints (see :mod:`dpgrader.similarity`)."""

from __future__ import annotations

import ast
import hashlib

from dpgrader.review.cells import _parse

K = 10  # tokens per k-gram
WINDOW = 4  # k-grams per winnowing window
_SKIP = (ast.Load, ast.Store, ast.Del, ast.alias, ast.arguments, ast.keyword, ast.comprehension)


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _tokens(node: ast.AST) -> list[str]:
    """Pre-order tokens of a syntax tree, names forgotten, every block's statements sorted."""
    if isinstance(node, (ast.Name, ast.arg)):
        return ["V"]
    if isinstance(node, ast.Constant):
        value = node.value
        return ["S"] if isinstance(value, (str, bytes)) else [f"C:{value!r}"]
    out = [] if isinstance(node, _SKIP) else [type(node).__name__]
    if isinstance(node, ast.Attribute):
        out.append(f".{node.attr}")
    for field, value in ast.iter_fields(node):
        if isinstance(value, list) and value and all(isinstance(v, ast.stmt) for v in value):
            statements = sorted((_tokens(v) for v in value if not _is_docstring(v)), key=" ".join)
            out.append("{")
            for statement in statements:
                out += statement
            out.append("}")
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    out += _tokens(item)
        elif isinstance(value, ast.AST):
            out += _tokens(value)
        elif field == "op":
            out.append(type(value).__name__)
    return out


def normalize(code: str) -> list[str]:
    """The normalized token sequence of a cell (empty if it does not parse)."""
    tree = _parse(code) if isinstance(code, str) else code
    if tree is None:
        return []
    return _tokens(tree)[1:]  # without the Module token


def fingerprints(tokens: list[str], k: int = K, window: int = WINDOW) -> frozenset[int]:
    """Winnowed hashes of the token k-grams (all of them for a sequence shorter than one window)."""
    if not tokens:
        return frozenset()
    grams = [" ".join(tokens[i: i + k]) for i in range(max(1, len(tokens) - k + 1))]
    hashes = [int.from_bytes(hashlib.blake2b(g.encode(), digest_size=8).digest(), "big") for g in grams]
    if len(hashes) <= window:
        return frozenset(hashes)
    return frozenset(min(hashes[i: i + window]) for i in range(len(hashes) - window + 1))


def jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def containment(a: frozenset, b: frozenset) -> float:
    """Share of ``a``'s fingerprints found in ``b``."""
    return len(a & b) / len(a) if a else 0.0
