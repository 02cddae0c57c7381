"""Normalized syntax-tree tokens of a cell and their winnowed fingerprints (see :mod:`dpgrader.similarity`).

Before a cell is tokenized, the statements whose result nothing uses are dropped
(:func:`~dpgrader.similarity.unused_code.unused_statements`): padding a copy with them changes nothing. Tokens are made
without recursion (explicit stacks), so a cell nested thousands of levels deep is as
easy to fingerprint as any other.
"""

from __future__ import annotations

import ast
import hashlib
from functools import lru_cache
from typing import NamedTuple

from dpgrader.review.reading import parse_cell
from dpgrader.similarity.unused_code import statement_blocks, unused_statements

K = 10  # tokens per k-gram
WINDOW = 4  # k-grams per winnowing window
UNIT_MIN_TOKENS = 4  # statements shorter than this are not a unit of their own (see statement_units)
_SKIP = (ast.Load, ast.Store, ast.Del, ast.alias, ast.arguments, ast.keyword, ast.comprehension)


# --- tokens ------------------------------------------------------------------------------------------------


def _statement_tokens(statement: ast.AST, blocks: dict[int, list[str]]) -> list[str]:
    """Pre-order tokens of one statement; the statement lists in it are ``blocks`` (already sorted tokens)."""
    out: list[str] = []
    stack: list = [statement]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        if isinstance(item, tuple):  # (id of a statement list's first statement,): tokenized already
            out += blocks[item[0]]
            continue
        node = item
        if isinstance(node, (ast.Name, ast.arg)):
            out.append("V")
            continue
        if isinstance(node, ast.Constant) or isinstance(node, ast.JoinedStr):  # an f-string is a string, too
            out.append("S" if not isinstance(node, ast.Constant) or isinstance(node.value, (str, bytes))
                       else f"C:{node.value!r}")
            continue
        if not isinstance(node, _SKIP):
            out.append(type(node).__name__)
        if isinstance(node, ast.Attribute):
            out.append(f".{node.attr}")
        later = []
        for _, value in ast.iter_fields(node):
            if isinstance(value, list) and value and all(isinstance(v, ast.stmt) for v in value):
                later.append((id(value[0]),))
            elif isinstance(value, list):
                later += [v for v in value if isinstance(v, ast.AST)]
            elif isinstance(value, ast.AST):
                later.append(value)
        stack += reversed(later)
    return out


def _statement_token_table(tree: ast.AST, dropped: set[int]) -> dict[int, list[str]]:
    """``id -> tokens`` of ``tree`` and of every statement in it, names forgotten, every block's statements
    sorted, ``dropped`` left out of the blocks.

    Statements are tokenized innermost first (the reverse of a breadth-first walk), so each
    block's sorted tokens are ready when the statement holding it is tokenized.
    """
    order = [node for node in ast.walk(tree) if isinstance(node, ast.stmt) or node is tree]
    blocks: dict[int, list[str]] = {}
    tokens: dict[int, list[str]] = {}
    for node in reversed(order):
        for block in statement_blocks(node):
            kept = sorted((tokens[id(s)] for s in block if id(s) not in dropped), key=" ".join)
            blocks[id(block[0])] = ["{", *[t for statement in kept for t in statement], "}"]
        tokens[id(node)] = _statement_tokens(node, blocks)
    return tokens


def _tokens(tree: ast.AST, dropped: set[int] = frozenset()) -> list[str]:
    """Pre-order tokens of a syntax tree, names forgotten, every block's statements sorted, ``dropped`` left out."""
    return _statement_token_table(tree, dropped)[id(tree)]


def normalize(code, exported: frozenset[str] | None = None) -> list[str]:
    """The normalized token sequence of a cell (empty if it does not parse), unused statements dropped.

    ``code`` is source text or a parsed module; ``exported`` as in :func:`unused_statements`.
    A cell too deep for the parser raises (``RecursionError``): the caller says it could not compare it.
    """
    tree = parse_cell(code) if isinstance(code, str) else code
    if tree is None:
        return []
    return _tokens(tree, unused_statements(tree, exported))[1:]  # without the Module token


def units(code, exported: frozenset[str] | None = None) -> list[list[str]]:
    """The normalized tokens of a cell cut in units: each top-level function or class, then the other statements.

    Fingerprinting each unit apart (:func:`cell_fingerprints`) makes a cell that pastes three
    library functions match the three functions as the library holds them, whatever order and
    names they are pasted in.
    """
    tree = parse_cell(code) if isinstance(code, str) else code
    if tree is None:
        return []
    dropped = unused_statements(tree, exported)
    return _units(tree, dropped, _statement_token_table(tree, dropped))


def _units(tree: ast.Module, dropped: set[int], table: dict[int, list[str]]) -> list[list[str]]:
    """:func:`units` of a parsed cell, given its dropped statements and token table."""
    kept = [s for s in tree.body if id(s) not in dropped]
    definitions = [s for s in kept if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    rest = sorted((table[id(s)] for s in kept if s not in definitions), key=" ".join)
    found = [table[id(s)] for s in definitions]
    if rest:
        found.append(["{", *[t for statement in rest for t in statement], "}"])
    return found


def cell_fingerprints(code, exported: frozenset[str] | None = None) -> frozenset[int]:
    """The union of the :func:`fingerprints` of a cell's :func:`units`."""
    if isinstance(code, str) and (exported is None or isinstance(exported, frozenset)):
        return cell_prints(code, exported).fingerprints
    return _fingerprint_union(units(code, exported))


def statement_units(code, exported: frozenset[str] | None = None, minimum: int = UNIT_MIN_TOKENS) -> list[list[str]]:
    """The tokens of every kept statement on its own, the blocks nested in it left out.

    ``return f(x)``, ``y = f(x)`` and ``f(x)`` all give the tokens of ``f(x)``; ``if c:``
    gives ``If`` and the tokens of ``c``; a ``def`` or ``class`` line gives nothing (the
    release gives every student the signature). Units shorter than ``minimum`` tokens
    (``x = y``) say nothing. A cell that inlines the helpers of a library function, or
    spreads its body over functions of its own, keeps its statements: their units match.
    """
    tree = parse_cell(code) if isinstance(code, str) else code
    if tree is None:
        return []
    return _statement_units(tree, unused_statements(tree, exported), minimum)


def _statement_units(tree: ast.Module, dropped: set[int], minimum: int = UNIT_MIN_TOKENS) -> list[list[str]]:
    """:func:`statement_units` of a parsed cell, given its dropped statements."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or id(node) in dropped or isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        tokens = [t for t in _statement_tokens(node, {id(b[0]): [] for b in statement_blocks(node)}) if t not in ("{", "}")]
        if tokens[0] in ("Return", "Expr"):
            tokens = tokens[1:]
        elif tokens[0] in ("Assign", "AnnAssign") and tokens[1:2] == ["V"]:
            tokens = tokens[2:]
        if len(tokens) >= minimum:
            found.append(tokens)
    return found


def statement_fingerprints(code, exported: frozenset[str] | None = None) -> frozenset[int]:
    """The union of the :func:`fingerprints` of a cell's :func:`statement_units`."""
    if isinstance(code, str) and (exported is None or isinstance(exported, frozenset)):
        return cell_prints(code, exported).statement_fingerprints
    return _fingerprint_union(statement_units(code, exported))


def _fingerprint_union(units: list[list[str]]) -> frozenset[int]:
    """The union of the :func:`fingerprints` of each unit (each unit is fingerprinted on its own)."""
    return frozenset().union(*[fingerprints(unit) for unit in units])


class CellPrints(NamedTuple):
    """What copy detection reads of one cell, from one parse: the length of :func:`normalize`,
    :func:`cell_fingerprints` and :func:`statement_fingerprints`."""

    tokens: int
    fingerprints: frozenset[int]
    statement_fingerprints: frozenset[int]


@lru_cache(maxsize=4096)
def cell_prints(code: str, exported: frozenset[str] | None = None) -> CellPrints:
    """:class:`CellPrints` of a cell's source; remembered, since a class hands in many identical cells.

    A cell the parser cannot take (``RecursionError``) raises, as :func:`normalize` does (and is not remembered).
    """
    tree = parse_cell(code)
    if tree is None:
        return CellPrints(0, frozenset(), frozenset())
    dropped = unused_statements(tree, exported)
    table = _statement_token_table(tree, dropped)
    return CellPrints(
        tokens=len(table[id(tree)]) - 1,  # without the Module token
        fingerprints=_fingerprint_union(_units(tree, dropped, table)),
        statement_fingerprints=_fingerprint_union(_statement_units(tree, dropped)),
    )


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
