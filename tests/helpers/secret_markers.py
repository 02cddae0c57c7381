"""The test suite's one reading of nbgrader's secret markers: which lines of a source notebook students never see.

It is written apart from :mod:`dpgrader.cells` on purpose: a test of the grader's scrubbing must not read the
secrets with the code it tests.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

#: The regions of a source notebook that ``nbgrader generate_assignment`` takes out, by their begin and end markers.
REGIONS = {"solution": ("BEGIN SOLUTION", "END SOLUTION"), "hidden tests": ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS"),
           "mark scheme": ("BEGIN MARK SCHEME", "END MARK SCHEME")}
MARKERS = tuple(marker for pair in REGIONS.values() for marker in pair)
MIN_LENGTH = 12  # shorter lines (``return x``, ``)``) are too common to show anything


def _notebook(notebook) -> nbformat.NotebookNode:
    return notebook if isinstance(notebook, nbformat.NotebookNode) else nbformat.read(str(Path(notebook)), as_version=4)


def marked_lines(notebook) -> list[tuple[str, str | None]]:
    """``(line, region)`` of every line of a notebook (a path or a read notebook), stripped: the region it is in
    (a key of :data:`REGIONS`) or None where students see it. Marker lines are left out; a Markdown solution cell
    without markers is a solution as a whole."""
    found = []
    for cell in _notebook(notebook).cells:
        meta = cell.metadata.get("nbgrader", {})
        whole = "solution" if cell.cell_type == "markdown" and meta.get("solution") and REGIONS["solution"][0] not in cell.source else None
        region = None
        for line in cell.source.splitlines():
            begins = [name for name, (begin, _) in REGIONS.items() if begin in line]
            if begins:
                region = begins[0]
            elif any(end in line for _, end in REGIONS.values()):
                region = None
            else:
                found.append((line.strip(), region or whole))
    return found


def distinctive(lines, min_length: int = MIN_LENGTH) -> set[str]:
    """The lines long enough to mean something, comments left out."""
    return {line for line in lines if len(line) >= min_length and not line.startswith("#")}


def secret_lines(notebooks, regions=tuple(REGIONS), min_length: int = MIN_LENGTH) -> set[str]:
    """Distinctive lines of ``regions`` (every region by default) of one or more notebooks that none of them shows
    students anywhere else."""
    if isinstance(notebooks, (str, Path, nbformat.NotebookNode)):
        notebooks = [notebooks]
    secret, visible = set(), set()
    for notebook in notebooks:
        for line, region in marked_lines(notebook):
            if region in regions:
                secret.add(line)
            elif region is None:
                visible.add(line)
    return distinctive(secret - visible, min_length)


def hidden_test_lines(notebook, min_length: int = MIN_LENGTH) -> list[str]:
    """Every line of a notebook's hidden tests at least ``min_length`` long, comments too, in order."""
    return [line for line, region in marked_lines(notebook) if region == "hidden tests" and len(line) >= min_length]


def unseen_hidden_test_lines(notebook) -> set[str]:
    """Distinctive lines of the hidden tests that no visible line of the same notebook shows, even as a part of it
    (a hidden line may repeat a visible one)."""
    lines = marked_lines(notebook)
    shown = "\n".join(line for line, region in lines if region is None)
    return {line for line in distinctive(l for l, region in lines if region == "hidden tests") if line not in shown}


def not_shown(lines, notebook) -> set[str]:
    """The ``lines`` that no cell of ``notebook`` (a released notebook: what students see) shows, even as part of a
    longer line."""
    shown = "\n".join(cell.source for cell in _notebook(notebook).cells)
    return {line for line in lines if line not in shown}
