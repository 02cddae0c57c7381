"""What the preprocessors share: the source notebook as the gradebook knows it, and cell helpers.

A cell's nbgrader metadata and its hidden-test region are read by :mod:`dpgrader.cells`.
"""

from __future__ import annotations

import ast

from nbformat.notebooknode import NotebookNode
from nbgrader.api import Gradebook

from dpgrader.cells import is_test_cell

SCHEMA_VERSION = 3


def error_output(ename: str, evalue: str) -> NotebookNode:
    """An ``error`` output showing ``ename: evalue`` alone (no traceback lines beyond it)."""
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def bound_names(source: str) -> set[str]:
    """Names a cell binds at top level (defs, classes, assignments, imports); empty if it does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def import_lines(source: str) -> list[str]:
    """The top-level import statements of a cell, one per line."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]


class SourceNotebook:
    """What the gradebook knows about one notebook of an assignment, as plain data."""

    def __init__(self, resources: dict):
        meta = resources["nbgrader"]
        with Gradebook(meta["db_url"]) as gradebook:
            notebook = gradebook.find_notebook(meta["notebook"], meta["assignment"])
            self.cells = [
                {"name": c.name, "cell_type": c.cell_type, "locked": c.locked, "source": c.source, "checksum": c.checksum}
                for c in notebook.source_cells
            ]
            self.points = {c.name: c.max_score for c in notebook.grade_cells}
            self.solutions = {c.name for c in notebook.solution_cells}
            self.tasks = {c.name: c.max_score for c in notebook.task_cells}
        self.by_name = {c["name"]: c for c in self.cells}

    def is_read_only(self, name: str) -> bool:
        cell = self.by_name[name]
        return cell["locked"] and name not in self.points and name not in self.solutions and name not in self.tasks

    def metadata(self, name: str) -> dict:
        """The nbgrader metadata generate_assignment gives this cell."""
        cell = self.by_name[name]
        meta = {
            "grade": name in self.points,
            "grade_id": name,
            "locked": bool(cell["locked"]),
            "schema_version": SCHEMA_VERSION,
            "solution": name in self.solutions,
            "task": name in self.tasks,
            "cell_type": cell["cell_type"],
            "checksum": cell["checksum"],
        }
        if name in self.points or name in self.tasks:
            meta["points"] = self.points.get(name, self.tasks.get(name))
        return meta
