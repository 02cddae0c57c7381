"""Made-up copiers for the class simulation (``make demo``), to show that copy detection finds them.

:func:`copy_submissions` runs once every student of the simulated class has a submission:

- a ``copies_classmate`` student takes the submission of one honest classmate (kind
  ``correct``), who is first given answers *written their own way* (:func:`own_way`: the same
  functions with explicit temporaries and swapped operands, so they no longer match the
  reference solution every other honest student hands in), then disguises it
  (:func:`disguise`: local names changed, comments and blank lines added, layout redone);
- a ``copies_dplib`` student pastes the body of dplib's function of the same name into each
  exercise (:func:`paste_dplib`), with its local names changed.

:mod:`dpgrader.similarity` must then report exactly those students, with their sources.
"""

from __future__ import annotations

import ast
import inspect
import json
import textwrap
from datetime import timedelta
from pathlib import Path

import numpy as np

from dpgrader.course import format_timestamp

_COMMUTATIVE = (ast.Mult,)


class _OwnWay(ast.NodeTransformer):
    """The same computation written differently.

    ``return f(x)`` -> ``answer = f(x); return answer``; ``a * b`` -> ``b * a``; ``x / y`` ->
    ``1.0 / y * x``; ``a < b`` -> ``b > a``.
    """

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Div):  # x / y -> (1.0 / y) * x
            return ast.BinOp(ast.BinOp(ast.Constant(1.0), ast.Div(), node.right), ast.Mult(), node.left)
        if isinstance(node.op, _COMMUTATIVE):
            node.left, node.right = node.right, node.left
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        flipped = {ast.Eq: ast.Eq, ast.NotEq: ast.NotEq, ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}
        if len(node.ops) == 1 and type(node.ops[0]) in flipped:  # a < b -> b > a
            node.left, node.comparators, node.ops = node.comparators[0], [node.left], [flipped[type(node.ops[0])]()]
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        body = []
        for statement in node.body:
            if isinstance(statement, ast.Return) and statement.value is not None and not isinstance(statement.value, ast.Name):
                body.append(ast.Assign(targets=[ast.Name("answer", ast.Store())], value=statement.value, lineno=0))
                body.append(ast.Return(ast.Name("answer", ast.Load())))
            else:
                body.append(statement)
        node.body = body
        return node


def own_way(code: str) -> str:
    """A correct answer rewritten so that it no longer matches the reference solution's syntax tree."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    return ast.unparse(ast.fix_missing_locations(_OwnWay().visit(tree)))


def _locals(function: ast.FunctionDef) -> set[str]:
    """Names a function assigns (not its parameters: tests call them by keyword)."""
    parameters = {a.arg for a in function.args.args + function.args.kwonlyargs + function.args.posonlyargs}
    assigned = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return assigned - parameters


def _renamed(tree: ast.Module, rng: np.random.Generator) -> ast.Module:
    styles = ("{}_value", "my_{}", "{}2", "tmp_{}")
    for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        mapping = {name: styles[int(rng.integers(len(styles)))].format(name) for name in _locals(function)}
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and node.id in mapping:
                node.id = mapping[node.id]
    return tree


def disguise(code: str, rng: np.random.Generator) -> str:
    """A copied cell made to look different: local names changed, comments and blank lines added, layout redone."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    lines = ast.unparse(_renamed(tree, rng)).split("\n")
    out = ["# my solution"]
    for line in lines:
        stripped = line.strip()
        if stripped.startswith(("if ", "for ", "return ")) and rng.random() < 0.7:
            out.append(line[: len(line) - len(line.lstrip())] + "# " + stripped.split(" ")[0] + " step")
        out.append(line)
        if stripped.endswith(":") is False and rng.random() < 0.2:
            out.append("")
    return "\n".join(out)


def paste_dplib(code: str, rng: np.random.Generator) -> str:
    """Each function of the cell with dplib's own body (docstring dropped, locals renamed), as a student would paste it."""
    import dplib

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    pieces, modules = [], []
    for node in tree.body:
        function = getattr(dplib, node.name, None) if isinstance(node, ast.FunctionDef) else None
        if not inspect.isfunction(function):
            pieces.append(ast.unparse(node))
            continue
        library = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
        body = [s for s in library.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        node.body = body or node.body
        node.returns = None
        modules.append(function.__module__)
        pieces.append(ast.unparse(_renamed(ast.Module([node], []), rng)))
    header = [f"from {module} import *" for module in dict.fromkeys(modules)]
    return "\n".join(header + [""] + pieces if header else pieces)


def _solution_cells(notebook: dict) -> list[dict]:
    return [c for c in notebook.get("cells", []) if c.get("cell_type") == "code"
            and (c.get("metadata", {}).get("nbgrader") or {}).get("solution")]


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _hand_in_after(author: Path, copier: Path, delay: timedelta = timedelta(hours=2)) -> None:
    """The copier hands in ``delay`` after the author (their ``timestamp.txt``), as one who copies finished work."""
    from nbgrader.utils import parse_utc

    stamp = author / "timestamp.txt"
    if stamp.exists():
        (copier / "timestamp.txt").write_text(format_timestamp(parse_utc(stamp.read_text().strip()) + delay))


def copy_submissions(root: Path, kinds: dict, texts: dict, rng: np.random.Generator) -> dict[tuple[str, str], str]:
    """Rewrite the copiers' submissions (and their sources') in ``root/submitted``; return ``{(copier, assignment): source}``.

    ``kinds`` maps ``(student, assignment)`` to a kind of :data:`dpgrader.simulation.KINDS`;
    ``texts`` maps ``(student, assignment, notebook name)`` to the notebook text already written.
    A ``copies_classmate`` student with no honest classmate left to copy keeps the reference answers.
    """
    root = Path(root)
    sources: dict[tuple[str, str], str] = {}
    for (student, assignment, name), text in sorted(texts.items()):
        kind = kinds[student, assignment]
        if text is None or kind not in ("copies_classmate", "copies_dplib"):
            continue
        notebook = json.loads(text)
        if kind == "copies_dplib":
            for cell in _solution_cells(notebook):
                cell["source"] = paste_dplib(_source(cell), rng)
            sources[student, assignment] = "dplib"
        else:
            taken = set(sources.values())
            honest = sorted(s for (s, a), k in kinds.items() if a == assignment and k == "correct" and s not in taken
                            and texts.get((s, a, name)))
            if not honest:
                continue
            author = honest[int(rng.integers(len(honest)))]
            original = json.loads(texts[author, assignment, name])
            for cell in _solution_cells(original):
                cell["source"] = own_way(_source(cell))
            (root / "submitted" / author / assignment / name).write_text(json.dumps(original, indent=1))
            texts[author, assignment, name] = json.dumps(original)
            notebook = json.loads(json.dumps(original))
            for cell in _solution_cells(notebook):
                cell["source"] = disguise(_source(cell), rng)
            sources[student, assignment] = author
            _hand_in_after(root / "submitted" / author / assignment, root / "submitted" / student / assignment)
        (root / "submitted" / student / assignment / name).write_text(json.dumps(notebook, indent=1))
    return sources


__all__ = ["own_way", "disguise", "paste_dplib", "copy_submissions"]
