"""An honest student's own way of writing an answer: the reference solution rewritten, computation unchanged.

:func:`own_way` draws rewrites for each student (temporaries, operands and comparisons turned round,
``if``/``else`` swapped, ``and`` split, De Morgan), all of which keep the computation exactly the same, so
that honest answers of the class simulation are as unlike the reference, and each other, as independent work is.
"""

from __future__ import annotations

import ast
import keyword

import numpy as np

#: A comparison with its operands turned round.
_FLIPPED = {ast.Eq: ast.Eq, ast.NotEq: ast.NotEq, ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}
#: Names the rewritten code gives its temporaries, one style per student.
_TEMPORARY_STYLES = ("result{}", "tmp{}", "step{}", "part{}", "value{}", "out{}")


def _calls_nothing(node: ast.AST) -> bool:
    """Whether evaluating ``node`` calls nothing (so it can move before or after another operand)."""
    return not any(isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)) for n in ast.walk(node))


class _OwnWay(ast.NodeTransformer):
    """The same computation written differently, each rewrite made with probability ``p``.

    ``return f(x)`` -> ``answer = f(x); return answer``; ``y = f(g(x) + 1)`` -> ``t = g(x); u = t + 1;
    y = f(u)`` (the first parts a statement computes, named in temporaries, see :func:`_completion_order`);
    ``a * b`` -> ``b * a`` and ``x + 1`` -> ``1 + x`` (one operand calls nothing); ``a < b`` ->
    ``b > a``; ``not (a and b)`` -> ``not a or not b``; ``a if c else b`` -> ``b if not c else a``;
    ``if c: A else: B`` -> ``if not c: B else: A``; ``if a and b: A`` -> ``if a: if b: A``; ``{"a": x}`` ->
    ``dict(a=x)``.
    Every one keeps the order in which calls are made, so seeded randomness draws the same numbers.
    """

    def __init__(self, rng: np.random.Generator, p: float, taken: set[str]):
        self.rng, self.p, self.taken = rng, p, set(taken)
        self.style = _TEMPORARY_STYLES[int(rng.integers(len(_TEMPORARY_STYLES)))]

    def chance(self, p: float | None = None) -> bool:
        return bool(self.rng.random() < (self.p if p is None else p))

    def temporary(self) -> str:
        index = 1
        while self.style.format(index) in self.taken:
            index += 1
        self.taken.add(self.style.format(index))
        return self.style.format(index)

    # -- expressions --
    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        halves = {2: 0.5, 4: 0.25, 2.0: 0.5, 4.0: 0.25}
        if isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant) and type(node.right.value) in (int, float) \
                and node.right.value in halves and self.chance(0.5):  # exact: both round the same exact quotient
            return ast.BinOp(node.left, ast.Mult(), ast.Constant(halves[node.right.value]))
        numeric = any(isinstance(side, ast.Constant) and type(side.value) in (int, float) for side in (node.left, node.right))
        swappable = isinstance(node.op, ast.Mult) or (isinstance(node.op, ast.Add) and numeric)
        if swappable and (_calls_nothing(node.left) or _calls_nothing(node.right)) and self.chance():
            node.left, node.right = node.right, node.left
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) == 1 and type(node.ops[0]) in _FLIPPED and (
                _calls_nothing(node.left) or _calls_nothing(node.comparators[0])) and self.chance():
            node.left, node.comparators, node.ops = node.comparators[0], [node.left], [_FLIPPED[type(node.ops[0])]()]
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not) and isinstance(node.operand, ast.BoolOp) and self.chance():
            other = ast.Or() if isinstance(node.operand.op, ast.And) else ast.And()
            return ast.BoolOp(other, [ast.UnaryOp(ast.Not(), value) for value in node.operand.values])
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        numpy = isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and node.func.value.id in (
            "np", "numpy")
        if numpy and node.func.attr == "where" and len(node.args) == 3 and not node.keywords \
                and _calls_nothing(node.args[1]) and _calls_nothing(node.args[2]) and self.chance(0.5):
            test = ast.Call(ast.Attribute(ast.Name(node.func.value.id, ast.Load()), "logical_not", ast.Load()),
                            [node.args[0]], [])
            node.args = [test, node.args[2], node.args[1]]
        for keyword in node.keywords:
            if keyword.arg == "dtype" and isinstance(keyword.value, ast.Name) and keyword.value.id == "float" \
                    and "np" in self.taken:
                keyword.value = [ast.Name("float", ast.Load()), ast.Constant("float64"),
                                 ast.Attribute(ast.Name("np", ast.Load()), "float64", ast.Load()),
                                 ast.Attribute(ast.Name("np", ast.Load()), "double", ast.Load())][int(self.rng.integers(4))]
        return node

    def visit_Dict(self, node: ast.Dict) -> ast.AST:
        self.generic_visit(node)
        words = [key.value for key in node.keys if isinstance(key, ast.Constant) and isinstance(key.value, str)]
        if node.keys and len(words) == len(node.keys) == len(set(words)) and "dict" not in self.taken \
                and all(word.isidentifier() and not keyword.iskeyword(word) for word in words) and self.chance(0.5):
            return ast.Call(ast.Name("dict", ast.Load()), [], [ast.keyword(w, v) for w, v in zip(words, node.values)])
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        if self.chance():
            return ast.IfExp(ast.UnaryOp(ast.Not(), node.test), node.orelse, node.body)
        return node

    # -- statements --
    def visit_If(self, node: ast.If) -> ast.AST | list[ast.AST]:
        self.generic_visit(node)
        node.body, node.orelse = self.block(node.body), self.block(node.orelse)
        if node.orelse and self.chance():
            return ast.If(ast.UnaryOp(ast.Not(), node.test), node.orelse, node.body)
        if not node.orelse and isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) and self.chance():
            inner = ast.If(node.test.values[-1], node.body, [])
            outer = node.test.values[:-1]
            return ast.If(outer[0] if len(outer) == 1 else ast.BoolOp(ast.And(), outer), [inner], [])
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        node.body = self.block(node.body)
        return node

    def visit_For(self, node: ast.For) -> ast.AST:
        self.generic_visit(node)
        node.body = self.block(node.body)
        return node

    visit_While = visit_For

    def block(self, statements: list[ast.stmt]) -> list[ast.stmt]:
        """The statements with temporaries drawn: the first parts a statement computes named first, returned values named."""
        out: list[ast.stmt] = []
        for position, statement in enumerate(statements):
            rest = statements[position + 1:]
            if isinstance(statement, ast.If) and not statement.orelse and rest and statement.body \
                    and isinstance(statement.body[-1], (ast.Return, ast.Raise)) and self.chance(0.5):
                statement.orelse = self.block(rest)  # an early exit, the rest in an explicit else
                rest = None
            field = {ast.Assign: "value", ast.Return: "value", ast.Expr: "value", ast.AugAssign: "value",
                     ast.If: "test", ast.For: "iter"}.get(type(statement))
            value = getattr(statement, field, None) if field else None
            if value is not None:
                for part, owner, name, index in self.parts_to_name(_completion_order(value)):
                    temporary = self.temporary()
                    out.append(ast.Assign([ast.Name(temporary, ast.Store())], part, lineno=0))
                    if index is None:
                        setattr(owner, name, ast.Name(temporary, ast.Load()))
                    else:
                        getattr(owner, name)[index] = ast.Name(temporary, ast.Load())
            if isinstance(statement, ast.Return) and statement.value is not None \
                    and not isinstance(statement.value, ast.Name) and self.chance():
                name = self.temporary()
                out.append(ast.Assign([ast.Name(name, ast.Store())], statement.value, lineno=0))
                statement = ast.Return(ast.Name(name, ast.Load()))
            out.append(statement)
            if rest is None:
                break
        return out

    def parts_to_name(self, parts: list) -> list:
        """A random choice of ``parts`` (in completion order) to compute first: a part may go first only if every
        call Python finishes before it, outside it, goes first too (so no call changes its place in time)."""
        chosen, waiting = [], []  # waiting: calls finished earlier, not named first (nor inside a part named first)
        for entry in parts:
            inside = {id(n) for n in ast.walk(entry[0])}
            waiting = [call for call in waiting if id(call) not in inside]  # those move with this part
            if not waiting and self.chance(0.5):
                chosen.append(entry)
            elif not _calls_nothing(entry[0]):
                waiting.append(entry[0])
        return chosen


#: Expressions that change the frame they are evaluated in: nothing at or after them is moved.
_BARRIERS = (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)
#: Expressions with parts evaluated later, sometimes or elsewhere: named as a whole, never entered.
_UNITS = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _completion_order(root: ast.expr) -> list[tuple[ast.AST, ast.AST, str, int | None]]:
    """``(part, owner, field, index)`` of the calls and operations inside ``root``, in the order Python
    finishes evaluating them, up to the first one evaluated only sometimes (an ``if`` expression's
    branches, ``and``/``or`` after the first operand, a comprehension): naming a prefix of them in
    temporaries computed first keeps every call in its place in time. ``root`` itself is not included.
    """
    found: list = []
    stopped = False

    def visit(node: ast.AST, owner: ast.AST | None, name: str | None, index: int | None) -> None:
        nonlocal stopped
        if stopped:
            return
        if isinstance(node, _BARRIERS):
            stopped = True
            return
        if isinstance(node, _UNITS):  # evaluated at its place, as a whole: it may be named, not entered
            if owner is not None:
                found.append((node, owner, name, index))
            return
        children: list[tuple[ast.AST, str, int | None]] = []
        conditional_after = None
        if isinstance(node, ast.Call):
            children = [(node.func, "func", None)] + [(a, "args", i) for i, a in enumerate(node.args)]
            children += [(k.value, "value", None) for k in node.keywords]
        elif isinstance(node, ast.BinOp):
            children = [(node.left, "left", None), (node.right, "right", None)]
        elif isinstance(node, ast.UnaryOp):
            children = [(node.operand, "operand", None)]
        elif isinstance(node, (ast.Attribute, ast.Starred)):
            children = [(node.value, "value", None)]
        elif isinstance(node, ast.Subscript):
            children = [(node.value, "value", None), (node.slice, "slice", None)]
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            children = [(e, "elts", i) for i, e in enumerate(node.elts)]
        elif isinstance(node, ast.Compare):
            children = [(node.left, "left", None)] + [(c, "comparators", i) for i, c in enumerate(node.comparators)]
            conditional_after = 2 if len(node.comparators) > 1 else None
        elif isinstance(node, ast.BoolOp):
            children, conditional_after = [(node.values[0], "values", 0)], None
        elif isinstance(node, ast.IfExp):
            children, conditional_after = [(node.test, "test", None)], None
        elif isinstance(node, ast.Dict):
            children = [(v, "values", i) for i, v in enumerate(node.values)] if all(k is not None and _calls_nothing(k)
                                                                                    for k in node.keys) else []
        elif not isinstance(node, (ast.Name, ast.Constant)):
            stopped = True  # a construct this list does not know: move nothing after it
            return
        for position, (child, field, i) in enumerate(children):
            if conditional_after is not None and position >= conditional_after:
                stopped = True
                return
            owner_of_child = node if not (isinstance(node, ast.Call) and field == "value") else next(
                k for k in node.keywords if k.value is child)
            visit(child, owner_of_child, field, i)
            if stopped:
                return
        if isinstance(node, (ast.Call, ast.BinOp, ast.BoolOp, ast.IfExp, ast.Compare, ast.Subscript, ast.Dict)) \
                and owner is not None:
            found.append((node, owner, name, index))

    visit(root, None, None, None)
    return found


def own_way(code: str, rng: np.random.Generator | None = None, p: float = 0.7) -> str:
    """A correct answer as one student would write it: the reference rewritten by rewrites drawn from ``rng``.

    The computation is the same (see :class:`_OwnWay`); what changes is how it reads, and
    so its syntax tree. Code that does not parse is returned unchanged.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    rewriter = _OwnWay(np.random.default_rng(rng), p, taken)
    tree.body = rewriter.block([rewriter.visit(statement) for statement in tree.body])
    return ast.unparse(ast.fix_missing_locations(tree))


#: Kinds of :data:`dpgrader.simulation.KINDS` whose answers are correct and the student's own.
