"""The cells a student wrote: reading a notebook, telling the student's cells from the instructor's, parsing.
"""

from __future__ import annotations

import ast

from dpgrader.grading.intake import read_notebook


def _read(notebook) -> dict:
    """The notebook as nbgrader grades it (:func:`dpgrader.grading.intake.read_notebook`), from a path, a dict or a node.

    Raises :class:`~dpgrader.grading.intake.UnreadableNotebook` (a ``ValueError``) if nbformat cannot read it.
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
    cells = [c for c in _read(notebook).get("cells", []) if isinstance(c, dict)]
    instructor = _read(instructor) if instructor is not None else None  # read once, for the helpers below
    ids = [_nbgrader(cell).get("grade_id") for cell in cells]
    if instructor is None:
        last = {grade_id: index for index, grade_id in enumerate(ids)}
        metadata = [_nbgrader(cell) for cell in cells]
        instructor_codes: set[str] = set()
    else:
        known = {_nbgrader(c).get("grade_id"): _nbgrader(c) for c in _read(instructor).get("cells", [])
                 if isinstance(c, dict) and _nbgrader(c).get("grade_id")}
        last = {grade_id: index for index, grade_id in enumerate(ids) if isinstance(grade_id, str) and grade_id in known}
        metadata = [known[grade_id] if last.get(grade_id, -1) == index else {} for index, grade_id in enumerate(ids)]
        instructor_codes = _instructor_cell_codes(instructor)
    found = []
    for index, (cell, meta) in enumerate(zip(cells, metadata)):
        if cell.get("cell_type") != "code":
            continue
        grade_id = meta.get("grade_id")
        if meta.get("locked") and not meta.get("solution"):
            continue  # the instructor's read-only or test cell
        if not meta.get("solution") and _source(cell).strip() in instructor_codes:
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
