"""The cells a student wrote: reading a notebook, telling the student's cells from the instructor's, parsing.
"""

from __future__ import annotations

import ast

from dpgrader.cells import cell_source, grade_id_of, is_instructor_cell, is_read_only, is_solution, visible_part
from dpgrader.intake import read_notebook

__all__ = ["instructor_code", "parse_cell", "read_notebook", "student_cells", "visible_part"]


def _instructor_cell_codes(instructor) -> set[str]:
    """Code of the instructor's read-only and test cells, as written and as released (stripped)."""
    codes = set()
    for cell in read_notebook(instructor).get("cells", []):
        if cell.get("cell_type") == "code" and is_instructor_cell(cell):
            codes |= {cell_source(cell).strip(), visible_part(cell_source(cell)).strip()}
    return codes


def student_cells(notebook, instructor=None) -> list[tuple[str, str, bool]]:
    """``(cell name, code, is_solution)`` of every code cell the student wrote, in order.

    Solution cells and cells without nbgrader metadata are the student's. With
    ``instructor`` (the source or release notebook), a cell's nbgrader metadata is read as
    :class:`dpgrader.preprocessors.SanitizeMetadata` rebuilds it before grading: only its
    ``grade_id`` counts, and only if the instructor's notebook has that id and the cell is
    the last with it; its flags are then the instructor's (edited ``solution``, ``locked``,
    ``grade`` or ``points`` change nothing), and any other cell has no metadata (an unknown or
    duplicated id is graded as ordinary code, named ``"cell <n>"`` here). The instructor's
    read-only and test cells are skipped (nbgrader puts their source back), and so is a
    verbatim copy of one of them pasted without metadata. Without ``instructor`` the
    metadata is trusted.
    """
    cells = [c for c in read_notebook(notebook).get("cells", []) if isinstance(c, dict)]
    instructor = read_notebook(instructor) if instructor is not None else None  # read once, for the helpers below
    ids = [grade_id_of(cell) for cell in cells]
    if instructor is None:
        last = {cell_id: index for index, cell_id in enumerate(ids)}
        counted = cells  # the cell whose nbgrader metadata counts: its own
        instructor_codes: set[str] = set()
    else:
        known = {grade_id_of(c): c for c in instructor.get("cells", []) if isinstance(c, dict) and grade_id_of(c)}
        last = {cell_id: index for index, cell_id in enumerate(ids) if isinstance(cell_id, str) and cell_id in known}
        counted = [known[cell_id] if last.get(cell_id, -1) == index else {} for index, cell_id in enumerate(ids)]
        instructor_codes = _instructor_cell_codes(instructor)
    found = []
    for index, (cell, owner) in enumerate(zip(cells, counted)):
        if cell.get("cell_type") != "code":
            continue
        cell_id = grade_id_of(owner)
        if is_instructor_cell(owner):
            continue  # the instructor's read-only or test cell
        if not is_solution(owner) and cell_source(cell).strip() in instructor_codes:
            continue
        name = cell_id if cell_id and last.get(cell_id) == index else f"cell {index}"
        found.append((name, cell_source(cell), is_solution(owner) and name == cell_id))
    return found


def instructor_code(notebook, instructor=None) -> list[str]:
    """Code of the read-only cells (their imports name ``np``, ``dplib``, ``check_close`` ...)."""
    cells = read_notebook(instructor if instructor is not None else notebook).get("cells", [])
    return [cell_source(c) for c in cells if isinstance(c, dict) and c.get("cell_type") == "code" and is_read_only(c)]


def parse_cell(code: str) -> ast.Module | None:
    """The cell's syntax tree, IPython magics (``%cmd``, ``!cmd``) turned into ``get_ipython()`` calls.

    None if the cell is not Python even after IPython's rewriting (a syntax error: the
    kernel cannot run it either). Anything else the parser raises propagates: a cell nested
    too deeply for the parser (``RecursionError``, ``MemoryError``) is not a cell without
    code, and whoever reads the tree must say it could not.
    """
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError):  # ValueError: null bytes (a SyntaxError from Python 3.12 on)
        pass
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return ast.parse(TransformerManager().transform_cell(code))
    except (SyntaxError, ValueError):
        return None


def top_level_names(tree: ast.Module) -> set[str]:
    """Names a cell binds at its top level: functions, classes, assigned names, imports."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names
