"""Honest and copied answers for the class simulation (``make demo``), to show what copy detection finds.

Honest students write their own code: :func:`own_way` rewrites the reference solution
with rewrites drawn for each student (temporaries, operands and comparisons turned round,
``if``/``else`` swapped, ``and`` split, De Morgan), all of which keep the computation
exactly the same, so that honest answers are as unlike the reference, and each other, as
independent work is. :func:`copy_submissions` then makes the copiers, once every student
of the simulated class has a submission:

- a ``copies_classmate`` student takes the submission of one honest classmate (kind
  ``correct``) and disguises it (:func:`disguise`: local names changed, comments and blank
  lines added, layout redone, statements whose result nothing uses added, :func:`pad`);
- a ``copies_dplib`` student pastes dplib's own function of the same name into each exercise
  with every dplib helper it calls (``require_epsilon``, ``laplace_noise``, ...), all
  renamed (:func:`paste_dplib`): no ``import`` of dplib is left for the review to see;
- a ``leaked_key`` student hands in the instructor's reference solution, disguised the same way.

:mod:`dpgrader.similarity` must then report exactly those students, with their sources.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import json
import keyword
import re
from datetime import timedelta
from pathlib import Path

import numpy as np

from dpgrader.cells import cell_source, grade_id_of, is_solution
from dpgrader.course import Course, format_timestamp

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
OWN_WORK = ("correct", "partial", "warnings", "messy", "infinite_loop", "kernel_dies")
#: What the ``infinite_loop`` and ``kernel_dies`` kinds append to one of their answers.
ENDINGS = {"infinite_loop": "\nwhile True:\n    pass\n", "kernel_dies": "\nimport os\nos._exit(1)\n"}


def with_warnings(code: str, rng: np.random.Generator) -> str:
    """Code whose function bodies first warn, divide by zero in numpy and print to stderr.

    Each student's debugging lines carry numbers of their own, as real ones would.
    """
    out = []
    for line in code.split("\n"):
        out.append(line)
        match = re.match(r"(\s*)def \w+\(.*\):\s*$", line)
        if match:
            indent = match.group(1) + "    "
            n = int(rng.integers(2, 10**6))
            out.append(
                f"{indent}import sys, warnings, numpy; warnings.warn('checking my work', UserWarning, stacklevel={n % 3 + 1}); "
                f"numpy.log(numpy.zeros({n % 97 + 1})); print('debug', {n}, file=sys.stderr)"
            )
    return "\n".join(out)


def honest_answer(kind: str, answer: str, rng: np.random.Generator, rewrite: bool = True) -> str:
    """An honest student's answer of the given kind: the reference written their own way (``rewrite``, else as it
    is), with debugging lines for ``warnings``."""
    code = own_way(answer, rng) if rewrite else answer
    return with_warnings(code, rng) if kind == "warnings" else code


def _locals(function: ast.FunctionDef) -> set[str]:
    """Names a function assigns (not its parameters: tests call them by keyword)."""
    parameters = {a.arg for a in function.args.args + function.args.kwonlyargs + function.args.posonlyargs}
    assigned = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return assigned - parameters


def _renamed(tree: ast.Module, rng: np.random.Generator) -> ast.Module:
    styles = ("{}_value", "my_{}", "{}2", "tmp_{}")
    for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        mapping = {name: styles[int(rng.integers(len(styles)))].format(name) for name in sorted(_locals(function))}
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and node.id in mapping:
                node.id = mapping[node.id]
    return tree


def pad(tree: ast.Module, rng: np.random.Generator) -> ast.Module:
    """``tree`` with statements whose result nothing uses added to every function: the same program, more code.

    A bare ``x is None``, ``pass``, a string, ``note = type(x).__name__`` with ``note``
    never read, ``seen = []; seen.append(x)`` with ``seen`` never read.
    """
    counter = iter(range(1, 10**6))
    for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        parameters = [a.arg for a in function.args.args] or ["None"]
        chosen = parameters[int(rng.integers(len(parameters)))]
        k = next(counter)
        menu = [
            f"{chosen} is None",
            "pass",
            '"""The inputs are checked below."""',
            f"note_{k} = type({chosen}).__name__",
            f"seen_{k} = []\nseen_{k}.append({chosen} is None)",
        ]
        picks = rng.choice(len(menu), size=int(rng.integers(2, len(menu) + 1)), replace=False)
        first = 1 if function.body and isinstance(function.body[0], ast.Expr) and isinstance(
            function.body[0].value, ast.Constant) else 0
        for pick in sorted(picks.tolist(), reverse=True):
            position = int(rng.integers(first, len(function.body) + 1))
            function.body[position:position] = ast.parse(menu[pick]).body
    return tree


def disguise(code: str, rng: np.random.Generator) -> str:
    """A copied cell made to look different: local names changed, padding added (:func:`pad`), comments
    and blank lines added, layout redone."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    lines = ast.unparse(pad(_renamed(tree, rng), rng)).split("\n")
    out = ["# my solution"]
    for line in lines:
        stripped = line.strip()
        if stripped.startswith(("if ", "for ", "return ")) and rng.random() < 0.7:
            out.append(line[: len(line) - len(line.lstrip())] + "# " + stripped.split(" ")[0] + " step")
        out.append(line)
        if stripped.endswith(":") is False and rng.random() < 0.2:
            out.append("")
    return "\n".join(out)


def _without_docstring(function: ast.FunctionDef) -> ast.FunctionDef:
    if function.body and isinstance(function.body[0], ast.Expr) and isinstance(function.body[0].value, ast.Constant):
        function.body = function.body[1:] or [ast.Pass()]
    function.returns = None
    for argument in ast.walk(function.args):
        if isinstance(argument, ast.arg):
            argument.annotation = None
    return function


def paste_dplib(code: str, rng: np.random.Generator) -> str:
    """Each function of the cell replaced by dplib's own, pasted with every dplib helper it calls, all renamed.

    The helpers (``require_epsilon``, ``laplace_noise``, ...) become functions of the cell
    with made-up names; the modules they use are imported; nothing is imported from dplib.
    """
    from dpgrader.similarity import dplib_functions

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    pieces, imports = [], {}
    for node in tree.body:
        functions = dplib_functions(node.name) if isinstance(node, ast.FunctionDef) else {}
        if not functions:
            pieces.append(node)
            continue
        helpers = {key.rsplit(".", 1)[1]: f"helper_{int(rng.integers(10**4))}_{i}" for i, key in enumerate(functions)}
        helpers[node.name] = node.name
        for key, text in functions.items():
            module, name = key.rsplit(".", 1)
            function = _without_docstring(ast.parse(text).body[0])
            namespace = vars(importlib.import_module(module))
            for used in sorted({n.id for n in ast.walk(function) if isinstance(n, ast.Name)} - set(helpers)):
                value = namespace.get(used, builtins.__dict__.get(used))
                if inspect.ismodule(value):
                    imports[used] = f"import {value.__name__}" + (f" as {used}" if used != value.__name__ else "")
                elif used in namespace and not inspect.isfunction(value):
                    imports[used] = f"{used} = {value!r}" if _is_literal(value) else f"from {module} import {used}"
            for inner in ast.walk(function):
                if isinstance(inner, ast.Name) and inner.id in helpers:
                    inner.id = helpers[inner.id]
            function.name = helpers[name]
            if name == node.name:
                function.args = node.args  # the exercise's signature, as released
            pieces.append(function)
    header = [line for _, line in sorted(imports.items())]
    return "\n".join(header + [""] + [ast.unparse(_renamed(ast.Module([p], []), rng)) for p in pieces])


def _is_literal(value) -> bool:
    try:
        return ast.literal_eval(repr(value)) == value
    except (ValueError, SyntaxError, TypeError):
        return False


def _solution_cells(notebook: dict) -> list[dict]:
    return [c for c in notebook.get("cells", []) if c.get("cell_type") == "code" and is_solution(c)]


def _hand_in_after(author: Path, copier: Path, delay: timedelta = timedelta(hours=2)) -> None:
    """The copier hands in ``delay`` after the author (their ``timestamp.txt``), as one who copies finished work."""
    from nbgrader.utils import parse_utc

    stamp = author / "timestamp.txt"
    if stamp.exists():
        (copier / "timestamp.txt").write_text(format_timestamp(parse_utc(stamp.read_text().strip()) + delay))


COPIERS = ("copies_classmate", "copies_dplib", "leaked_key")
#: How far below the detection thresholds an honest student's answer is drawn (see :func:`independent_answers`).
MARGIN = 0.1
#: How many times an answer is drawn again at most.
ATTEMPTS = 40


def independent_answers(root: Path, kinds: dict, texts: dict, rng: np.random.Generator,
                        references: dict | None = None) -> dict[tuple[str, str, str], int]:
    """Draw again the answers of honest students that came out like the reference or an earlier classmate's.

    :func:`own_way` draws from a handful of rewrites: on a short exercise two students can
    draw the same ones, which independent students, each with their own style and API
    choices, do not do on exercises long enough to compare (the right-but-different answers
    of ``tests/variant_cases`` share at most 8% of their fingerprints with one another, and at
    most 44% of the reference's). So an answer of an ``OWN_WORK`` student that copy detection
    (:mod:`dpgrader.similarity`, with thresholds :data:`MARGIN` lower) would report against the
    reference or an earlier classmate is drawn again, at most :data:`ATTEMPTS` times. An
    exercise too short for that many ways of writing it (below
    :data:`~dpgrader.similarity.REFERENCE_MIN_TOKENS`) is then answered with the reference, the
    answer independent students converge on there. Writes the notebooks back; returns
    ``{(student, assignment, grade_id): draws}`` of the answers drawn again (``-1``: the reference).
    """
    from dpgrader import similarity
    from dpgrader.similarity.matches import explained_by_common_source

    redrawn: dict[tuple[str, str, str], int] = {}
    groups: dict[tuple[str, str], list[str]] = {}
    for (student, assignment, name), text in sorted(texts.items()):
        if text is not None and kinds[student, assignment] in OWN_WORK:
            groups.setdefault((assignment, name), []).append(student)
    for (assignment, name), students in sorted(groups.items()):
        source = Path((references or {}).get((assignment, name), Course(root).source(assignment) / name))
        key = similarity.solution_cells(source)
        sizes = similarity.minimum_sizes(source)
        exported = {g: frozenset(_top_names(code)) for g, code in key.items()}
        reference = {g: similarity.cell_fingerprints(code, exported[g]) for g, code in key.items()}
        earlier: dict[str, list[frozenset]] = {}

        def alike(grade_id: str, prints: frozenset) -> bool:
            ref = reference[grade_id]
            if sizes[grade_id] >= similarity.REFERENCE_MIN_TOKENS and similarity.containment(
                    ref, prints) >= similarity.REFERENCE_THRESHOLD - MARGIN:
                return True
            threshold = similarity.THRESHOLD - MARGIN
            return any(similarity.jaccard(prints, other) >= threshold and not explained_by_common_source(
                prints, other, ref, frozenset(), similarity.jaccard(prints, other), threshold) for other in earlier.get(grade_id, []))

        for student in students:
            kind, notebook = kinds[student, assignment], json.loads(texts[student, assignment, name])
            last = {grade_id_of(c): c for c in _solution_cells(notebook)}
            changed = False
            for grade_id, cell in sorted(last.items()):
                if grade_id not in key or sizes.get(grade_id, 0) < similarity.MIN_TOKENS or "NotImplementedError" in cell_source(cell):
                    continue
                ending = next((e for e in ENDINGS.values() if cell_source(cell).endswith(e)), "")
                draws = 0
                while alike(grade_id, similarity.cell_fingerprints(cell_source(cell), exported[grade_id])):
                    if draws == ATTEMPTS:
                        if sizes[grade_id] < similarity.REFERENCE_MIN_TOKENS:
                            cell["source"], draws = honest_answer(kind, key[grade_id], rng, rewrite=False) + ending, -1
                        break
                    draws += 1
                    cell["source"] = honest_answer(kind, key[grade_id], rng) + ending
                if draws:
                    redrawn[student, assignment, grade_id], changed = draws, True
                earlier.setdefault(grade_id, []).append(similarity.cell_fingerprints(cell_source(cell), exported[grade_id]))
            if changed:
                texts[student, assignment, name] = json.dumps(notebook)
                (Course(root).submitted(student, assignment) / name).write_text(json.dumps(notebook, indent=1))
    return redrawn


def _top_names(code: str) -> set[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))} | {
        t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}


def copy_submissions(root: Path, kinds: dict, texts: dict, rng: np.random.Generator,
                     references: dict | None = None) -> dict[tuple[str, str], str]:
    """Rewrite the copiers' submissions in ``root/submitted``; return ``{(copier, assignment): source}``.

    First, honest answers that came out alike are drawn again (:func:`independent_answers`).

    ``kinds`` maps ``(student, assignment)`` to a kind of :data:`dpgrader.simulation.KINDS`;
    ``texts`` maps ``(student, assignment, notebook name)`` to the notebook text already written.
    The source is a classmate's id, ``"dplib"`` or ``"reference"``. ``references`` maps
    ``(assignment, notebook name)`` to the source notebook (default: ``root/source/...``).
    A ``copies_classmate`` student with no honest classmate left to copy keeps their own answers.
    """
    from dpgrader.similarity.matches import without_solution_markers

    course = Course(root)
    independent_answers(course.root, kinds, texts, rng, references)
    sources: dict[tuple[str, str], str] = {}
    for (student, assignment, name), text in sorted(texts.items()):
        kind = kinds[student, assignment]
        if text is None or kind not in COPIERS:
            continue
        notebook = json.loads(text)
        if kind == "copies_dplib":
            for cell in _solution_cells(notebook):
                cell["source"] = paste_dplib(cell_source(cell), rng)
            sources[student, assignment] = "dplib"
        elif kind == "leaked_key":
            source = (references or {}).get((assignment, name), course.source(assignment) / name)
            key = {grade_id_of(c): cell_source(c) for c in _solution_cells(json.loads(Path(source).read_text()))}
            for cell in _solution_cells(notebook):
                answer = key.get(grade_id_of(cell))
                if answer is not None:
                    cell["source"] = disguise(without_solution_markers(answer), rng)
            sources[student, assignment] = "reference"
        else:
            taken = set(sources.values())
            honest = sorted(s for (s, a), k in kinds.items() if a == assignment and k == "correct" and s not in taken
                            and texts.get((s, a, name)))
            if not honest:
                continue
            author = honest[int(rng.integers(len(honest)))]
            notebook = json.loads(texts[author, assignment, name])
            for cell in _solution_cells(notebook):
                cell["source"] = disguise(cell_source(cell), rng)
            sources[student, assignment] = author
            _hand_in_after(course.submitted(author, assignment), course.submitted(student, assignment))
        (course.submitted(student, assignment) / name).write_text(json.dumps(notebook, indent=1))
    return sources


__all__ = ["own_way", "honest_answer", "with_warnings", "independent_answers", "disguise", "pad", "paste_dplib",
           "copy_submissions", "COPIERS", "OWN_WORK", "ENDINGS"]
