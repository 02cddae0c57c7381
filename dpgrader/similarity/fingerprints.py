"""Normalized syntax-tree tokens of a cell and their winnowed fingerprints (see :mod:`dpgrader.similarity`).

Before a cell is tokenized, the statements whose result nothing uses are dropped
(:func:`unused_statements`): padding a copy with them changes nothing. Tokens are made
without recursion (explicit stacks), so a cell nested thousands of levels deep is as
easy to fingerprint as any other.
"""

from __future__ import annotations

import ast
import hashlib

from dpgrader.review.student_cells import parse_cell

K = 10  # tokens per k-gram
WINDOW = 4  # k-grams per winnowing window
UNIT_MIN_TOKENS = 4  # statements shorter than this are not a unit of their own (see statement_units)
_SKIP = (ast.Load, ast.Store, ast.Del, ast.alias, ast.arguments, ast.keyword, ast.comprehension)
#: Calls through which a name's value can be read without the name appearing as a ``Name`` node.
_NAMESPACE_READERS = {"locals", "globals", "vars", "eval", "exec", "dir"}
#: Methods that change the object they are called on (``values.append(x)``: a statement with an effect).
RECEIVER_MUTATORS = {
    "append", "extend", "insert", "remove", "pop", "popitem", "clear", "sort", "reverse", "add", "discard",
    "update", "setdefault", "difference_update", "intersection_update", "symmetric_difference_update",
    "fill", "resize", "put", "itemset", "partition", "setflags", "appendleft", "extendleft", "rotate",
}
#: Functions that change their first argument (``rng.shuffle(x)``, ``np.copyto(a, b)``, ``np.add.at(a, i, 1)``).
ARGUMENT_MUTATORS = {"shuffle", "copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis", "at"}


# --- statements whose result is unused ---------------------------------------------------------------------


def _statement_blocks(node: ast.AST) -> list[list[ast.stmt]]:
    """The lists of statements directly inside ``node`` (a body, an orelse, the handlers' bodies, ...)."""
    blocks = []
    for _, value in ast.iter_fields(node):
        if isinstance(value, list) and value and all(isinstance(v, ast.stmt) for v in value):
            blocks.append(value)
        elif isinstance(value, list):
            blocks += [h.body for h in value if isinstance(h, (ast.excepthandler, ast.match_case))]
    return blocks


def _own_nodes(statement: ast.stmt) -> list[ast.AST]:
    """The nodes of ``statement`` that belong to no statement nested in it (its test, value, targets ...)."""
    nested = {id(s) for block in _statement_blocks(statement) for s in block}
    own, pending = [], [child for child in ast.iter_child_nodes(statement) if id(child) not in nested]
    while pending:
        node = pending.pop()
        own.append(node)
        if isinstance(node, (ast.excepthandler, ast.match_case)):
            pending += [c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.stmt)]
        elif not isinstance(node, ast.stmt):
            pending += list(ast.iter_child_nodes(node))
    return own


def _mutated(statement: ast.stmt) -> ast.AST | None:
    """What a bare call statement changes: the ``Name`` node of the object (``values`` of
    ``values.append(x)``, ``x`` of ``rng.shuffle(x)`` or ``np.log(x, out=x)``), another
    expression when it changes something reached otherwise (``self.items.append(x)``), or None
    when it changes nothing the cell keeps (its value is simply thrown away)."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not isinstance(call, ast.Call):
        return None
    for keyword in call.keywords:
        if keyword.arg == "out":
            return keyword.value
        if keyword.arg == "inplace" and isinstance(call.func, ast.Attribute):
            return call.func.value
    if isinstance(call.func, ast.Attribute):
        if call.func.attr in RECEIVER_MUTATORS:
            return call.func.value
        if call.func.attr in ARGUMENT_MUTATORS and call.args:
            return call.args[0]
    return None


def _bound_names(statement: ast.stmt) -> set[str] | None:
    """Names a statement only binds (assignment to names, def, class, import), or None if it does more."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None if statement.decorator_list else {statement.name}
    if isinstance(statement, ast.Expr):
        changed = _mutated(statement)
        return {changed.id} if isinstance(changed, ast.Name) else None
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        names = {(a.asname or a.name).split(".")[0] for a in statement.names}
        return None if "*" in names else names
    targets = (statement.targets if isinstance(statement, ast.Assign) else
               [statement.target] if isinstance(statement, (ast.AnnAssign, ast.AugAssign)) else None)
    if targets is None:
        return None
    names, pending = set(), list(targets)
    while pending:
        target = pending.pop()
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            pending += target.elts
        elif isinstance(target, ast.Starred):
            pending.append(target.value)
        else:
            return None  # writes an attribute or an item: a side effect
    return names


def unused_statements(tree: ast.Module, exported: frozenset[str] | None = None) -> set[int]:
    """``id`` of every statement of ``tree`` whose result nothing uses.

    - ``pass``, docstrings and every other bare expression statement whose value is thrown
      away (``len(x)``, ``x + 1``, ``print(x)``, ``values.copy()``), but for calls that change an
      object (``values.append(x)``, ``rng.shuffle(x)``, :func:`_mutated`);
    - assignments, ``def``, ``class``, imports and such changes of names no other kept
      statement reads, repeated until nothing changes (``a = 1; b = a`` with ``b`` unread drops
      both; ``log = []; log.append(x)`` with ``log`` unread drops both).

    At the top level of the cell, names in ``exported`` (those the tests and the student's
    other cells read) are always read; with ``exported=None`` every top-level name is. Names
    in a class body are read as attributes, never dropped; a cell that reads its namespace
    by name (``locals()``, ``eval``, ...) keeps every binding. What is dropped is dropped from
    the fingerprints only.
    """
    scope: dict[int, ast.stmt | None] = {}  # the innermost def or class around a statement (None: the cell)
    children: dict[int, list[ast.stmt]] = {}
    statements: list[ast.stmt] = []
    pending: list[tuple[ast.AST, ast.stmt | None]] = [(tree, None)]
    while pending:
        node, around = pending.pop()
        children[id(node)] = []
        inner = node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else around
        for block in _statement_blocks(node):
            for statement in block:
                scope[id(statement)] = inner
                children[id(node)].append(statement)
                statements.append(statement)
                pending.append((statement, inner))
    reads: dict[int, set[str]] = {}
    readers: dict[str, set[int]] = {}
    for statement in statements:
        changed = _mutated(statement)
        own = [n for n in _own_nodes(statement) if n is not changed]  # values.append(x) reads x, changes values
        reads[id(statement)] = {n.id for n in own if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)} | {
            name for n in own if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
        for name in reads[id(statement)]:
            readers.setdefault(name, set()).add(id(statement))
    thrown_away = [s for s in statements if isinstance(s, ast.Pass) or isinstance(s, ast.Expr) and _mutated(s) is None]
    if readers.keys() & _NAMESPACE_READERS:
        return {id(s) for s in thrown_away}
    binders: dict[int, set[str]] = {}
    for statement in statements:
        names = _bound_names(statement)
        top, in_class = scope[id(statement)] is None, isinstance(scope[id(statement)], ast.ClassDef)
        if names and not in_class and not (top and (exported is None or names & exported)):
            binders[id(statement)] = names
    by_name: dict[str, set[int]] = {}
    for key, names in binders.items():
        for name in names:
            by_name.setdefault(name, set()).add(key)
    by_id = {id(s): s for s in statements}
    dropped: set[int] = set()

    def drop(statement: ast.stmt) -> set[str]:
        """Drop a statement and everything in it; the names they read (whose binders may now be unread)."""
        names, stack = set(), [statement]
        while stack:
            node = stack.pop()
            if id(node) in dropped:
                continue
            dropped.add(id(node))
            for name in reads[id(node)]:
                readers[name].discard(id(node))
                names.add(name)
            stack += children[id(node)]
        return names

    worklist = set(binders)
    for statement in thrown_away:
        drop(statement)
    while worklist:
        key = worklist.pop()
        if key in dropped:
            continue
        inside = _descendants(by_id[key], children)
        if not any(readers.get(name, set()) - inside for name in binders[key]):
            for name in drop(by_id[key]):
                worklist |= by_name.get(name, set()) - dropped
    return dropped


def _descendants(statement: ast.stmt, children: dict[int, list[ast.stmt]]) -> set[int]:
    """``id`` of the statement and of every statement nested in it."""
    found, pending = set(), [statement]
    while pending:
        node = pending.pop()
        found.add(id(node))
        pending += children[id(node)]
    return found


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
        for block in _statement_blocks(node):
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
    table = _statement_token_table(tree, dropped)
    kept = [s for s in tree.body if id(s) not in dropped]
    definitions = [s for s in kept if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    rest = sorted((table[id(s)] for s in kept if s not in definitions), key=" ".join)
    found = [table[id(s)] for s in definitions]
    if rest:
        found.append(["{", *[t for statement in rest for t in statement], "}"])
    return found


def cell_fingerprints(code, exported: frozenset[str] | None = None) -> frozenset[int]:
    """The union of the :func:`fingerprints` of a cell's :func:`units`."""
    return frozenset().union(*[fingerprints(unit) for unit in units(code, exported)])


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
    dropped = unused_statements(tree, exported)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or id(node) in dropped or isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        tokens = [t for t in _statement_tokens(node, {id(b[0]): [] for b in _statement_blocks(node)}) if t not in ("{", "}")]
        if tokens[0] in ("Return", "Expr"):
            tokens = tokens[1:]
        elif tokens[0] in ("Assign", "AnnAssign") and tokens[1:2] == ["V"]:
            tokens = tokens[2:]
        if len(tokens) >= minimum:
            found.append(tokens)
    return found


def statement_fingerprints(code, exported: frozenset[str] | None = None) -> frozenset[int]:
    """The union of the :func:`fingerprints` of a cell's :func:`statement_units`."""
    return frozenset().union(*[fingerprints(unit) for unit in statement_units(code, exported)])


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
