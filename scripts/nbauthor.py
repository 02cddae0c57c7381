"""Write nbgrader notebooks as plain text, and read them back.

An authoring aid: ``source/<assignment>/<name>.ipynb`` stays the source of truth
(edit it in JupyterLab with nbgrader's "Create Assignment" toolbar, or round-trip it
through this text form). The text form is a list of cells, each opened by a line::

    %% markdown                          plain markdown
    %% code                              plain code (student may edit)
    %% readonly id=setup                 locked code cell (imports, data)
    %% solution id=laplace_mech          code cell with ### BEGIN/END SOLUTION
    %% tests id=test_laplace_mech points=2   autograder test cell
    %% answer id=written_sensitivity points=2   manually graded markdown answer
    %% task id=who_pays points=3         manually graded task (may hold a MARK SCHEME)

Usage::

    python scripts/nbauthor.py build notebook.txt source/02_laplace/02_laplace.ipynb
    python scripts/nbauthor.py dump source/02_laplace/02_laplace.ipynb > notebook.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

KINDS = {
    "markdown": ("markdown", None),
    "code": ("code", None),
    "readonly": ("code", {"grade": False, "locked": True, "solution": False, "task": False}),
    "solution": ("code", {"grade": False, "locked": False, "solution": True, "task": False}),
    "tests": ("code", {"grade": True, "locked": True, "solution": False, "task": False}),
    "answer": ("markdown", {"grade": True, "locked": False, "solution": True, "task": False}),
    "task": ("markdown", {"grade": False, "locked": True, "solution": False, "task": True}),
}

NOTEBOOK_METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def _header(line: str) -> tuple[str, dict]:
    words = line[2:].split()
    kind, options = words[0], dict(word.split("=", 1) for word in words[1:])
    if kind not in KINDS:
        raise ValueError(f"unknown cell kind {kind!r} in {line!r}")
    return kind, options


def text_to_notebook(text: str) -> nbformat.NotebookNode:
    """Build a notebook (nbformat 4.5, deterministic cell ids) from the text form."""
    cells, header, body = [], None, []

    def flush():
        if header is None:
            return
        kind, options = header
        cell_type, nbgrader = KINDS[kind]
        source = "\n".join(body).strip("\n")
        if cell_type == "markdown":
            cell = nbformat.v4.new_markdown_cell(source)
        else:
            cell = nbformat.v4.new_code_cell(source)
        if nbgrader is not None:
            meta = dict(nbgrader, grade_id=options["id"], schema_version=3)
            if nbgrader["grade"] or nbgrader["task"]:
                meta["points"] = float(options["points"]) if "." in options["points"] else int(options["points"])
            cell.metadata["nbgrader"] = dict(sorted(meta.items()))
        cell["id"] = options.get("id", f"cell-{len(cells):03d}")
        cells.append(cell)

    for line in text.splitlines():
        if line.startswith("%% "):
            flush()
            header, body = _header(line), []
        else:
            body.append(line)
    flush()
    notebook = nbformat.v4.new_notebook(cells=cells, metadata=NOTEBOOK_METADATA)
    notebook.nbformat_minor = 5
    nbformat.validate(notebook)
    return notebook


def notebook_to_text(notebook: nbformat.NotebookNode) -> str:
    """The text form of a notebook (inverse of :func:`text_to_notebook`)."""
    parts = []
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader")
        if not meta:
            header = f"%% {cell.cell_type}"
        else:
            kind = next(k for k, (t, m) in KINDS.items() if m and t == cell.cell_type
                        and all(meta.get(f) == v for f, v in m.items()))
            header = f"%% {kind} id={meta['grade_id']}"
            if "points" in meta:
                header += f" points={meta['points']}"
        parts.append(f"{header}\n{cell.source}\n")
    return "\n".join(parts)


def write_notebook(notebook: nbformat.NotebookNode, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, str(path))


def main(argv: list[str]) -> None:
    command, source = argv[0], Path(argv[1])
    if command == "build":
        write_notebook(text_to_notebook(source.read_text()), Path(argv[2]))
    elif command == "dump":
        sys.stdout.write(notebook_to_text(nbformat.read(str(source), as_version=4)))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
