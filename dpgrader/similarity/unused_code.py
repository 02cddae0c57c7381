"""Statements whose result nothing uses: what a copy may be padded with, dropped before it is fingerprinted.

:func:`unused_statements` finds them (bare expressions, and bindings no kept statement reads, repeated until
nothing changes); :func:`statement_blocks` lists the statement lists a node holds, for the tokens too.
"""

from __future__ import annotations

import ast

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


def statement_blocks(node: ast.AST) -> list[list[ast.stmt]]:
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
    nested = {id(s) for block in statement_blocks(statement) for s in block}
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
        for block in statement_blocks(node):
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
