"""The cells a student wrote: reading a notebook, telling the student's cells from the instructor's, parsing.
"""

from __future__ import annotations

import ast

from dpgrader.intake import read_notebook


def _read(notebook) -> dict:
    """The notebook as nbgrader grades it (:func:`dpgrader.intake.read_notebook`), from a path, a dict or a node.

    Raises :class:`~dpgrader.intake.UnreadableNotebook` (a ``ValueError``) if nbformat cannot read it.
    """
    return read_notebook(notebook)


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _nbgrader(cell: dict) -> dict:
    meta = (cell.get("metadata") or {}).get("nbgrader")
    return meta if isinstance(meta, dict) else {}


def visible_part(source: str) -> str:
    r"""A test cell as students see it: every line from ``BEGIN HIDDEN TESTS`` to ``END HIDDEN TESTS`` dropped.

    Lines are cut at ``"\n"`` and the marker lines matched as nbgrader's ``ClearHiddenTests``
    does, so this is the cell of the release. An unterminated hidden region is dropped to the
    end of the cell (fail closed; nbgrader refuses to release it).

    Examples
    --------
    >>> visible_part("check(f(1))\n### BEGIN HIDDEN TESTS\ncheck(f(2))\n### END HIDDEN TESTS\nprint('done')")
    "check(f(1))\nprint('done')"
    """
    kept, hidden = [], False
    for line in source.split("\n"):
        if "BEGIN HIDDEN TESTS" in line:
            hidden = True
        elif "END HIDDEN TESTS" in line:
            hidden = False
        elif not hidden:
            kept.append(line)
    return "\n".join(kept)


def _instructor_cell_codes(instructor) -> set[str]:
    """Code of the instructor's read-only and test cells, as written and as released (stripped)."""
    codes = set()
    for cell in _read(instructor).get("cells", []):
        meta = _nbgrader(cell) if isinstance(cell, dict) else {}
        if cell.get("cell_type") == "code" and meta.get("locked") and not meta.get("solution"):
            codes |= {_source(cell).strip(), visible_part(_source(cell)).strip()}
    return codes


def student_cells(notebook, instructor=None) -> list[tuple[str, str, bool]]:
    """``(cell name, code, is_solution)`` of every code cell the student wrote, in order.

    Solution cells and cells without nbgrader metadata are the student's. A cell that
    claims to be a read-only or test cell is skipped only when ``instructor`` (the
    source or release notebook) has a read-only or test cell of that ``grade_id`` and it
    is the last cell with that id (earlier duplicates run as ordinary code, see
    :class:`dpgrader.preprocessors.SanitizeMetadata`); without ``instructor`` its
    metadata is trusted. With ``instructor``, a cell that is a verbatim copy of one of its
    read-only or test cells (pasted without metadata) is the instructor's code, not the student's.
    """
    cells = [c for c in _read(notebook).get("cells", []) if isinstance(c, dict)]
    instructor_ids, instructor_codes = None, set()
    if instructor is not None:
        instructor_codes = _instructor_cell_codes(instructor)
        instructor_ids = {
            _nbgrader(c).get("grade_id") for c in _read(instructor).get("cells", [])
            if isinstance(c, dict) and _nbgrader(c).get("locked") and not _nbgrader(c).get("solution")
        }
    last = {}
    for index, cell in enumerate(cells):
        last[_nbgrader(cell).get("grade_id")] = index
    found = []
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        meta = _nbgrader(cell)
        grade_id = meta.get("grade_id")
        instructors = meta.get("locked") and not meta.get("solution")
        if instructor_ids is not None:
            instructors = grade_id in instructor_ids and last.get(grade_id) == index
        if instructors or (not meta.get("solution") and _source(cell).strip() in instructor_codes):
            continue
        name = grade_id if grade_id and last.get(grade_id) == index else f"cell {index}"
        found.append((name, _source(cell), bool(meta.get("solution")) and name == grade_id))
    return found


def _instructor_code(notebook, instructor=None) -> list[str]:
    """Code of the read-only cells (their imports name ``np``, ``dplib``, ``check_close`` ...)."""
    cells = _read(instructor if instructor is not None else notebook).get("cells", [])
    return [
        _source(c) for c in cells
        if isinstance(c, dict) and c.get("cell_type") == "code" and _nbgrader(c).get("locked")
        and not _nbgrader(c).get("solution") and not _nbgrader(c).get("grade")
    ]


def _parse(code: str) -> ast.Module | None:
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
