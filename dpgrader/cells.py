"""nbgrader's cell metadata and the hidden-test region: the one place dpgrader reads them.

A cell is a notebook cell as :mod:`nbformat` gives it (a ``NotebookNode``) or as plain JSON
(a ``dict``): both are read the same way. nbgrader keeps what it knows of a cell in
``cell["metadata"]["nbgrader"]``; :func:`nbgrader_metadata` reads that dict (empty when it is
missing or is not a dict, as a hand-edited submission may have it), and the predicates below
answer as :mod:`nbgrader.utils` does (``is_grade``, ``is_solution``, ``is_task``, ``is_locked``)
without importing nbgrader (about two seconds: the review and the copy check do not need it)
and without failing on malformed metadata.

A test cell may hold a hidden-test region, ``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN
TESTS``, which nbgrader's ``ClearHiddenTests`` drops from the release. :func:`mark_lines` is the
one parser of such regions (and of solution and mark-scheme regions); :func:`visible_part`,
:func:`visible_lines` and the feedback's ``HideHiddenTests`` and ``secret_lines`` all read its
answer. It matches markers as nbgrader does (a line *containing* the marker, case and all,
lines cut at ``"\\n"``) and fails closed where nbgrader refuses to release: an unterminated
region hides everything to the end of the cell, and a nested region closes only at its own end
marker.

Nothing here imports beyond the standard library: :mod:`dpgrader.guard` (the grading kernel's
side) does not import this module, and the review may import it without nbgrader's weight.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import NamedTuple

HIDDEN_TESTS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
SOLUTION = ("BEGIN SOLUTION", "END SOLUTION")
MARK_SCHEME = ("BEGIN MARK SCHEME", "END MARK SCHEME")
SECRET_REGIONS = (HIDDEN_TESTS, SOLUTION, MARK_SCHEME)


# --- a cell's source and its nbgrader metadata ------------------------------------------------------------


def cell_source(cell: Mapping) -> str:
    """A cell's source as one string (nbformat JSON may store it as a list of lines)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def nbgrader_metadata(cell: Mapping) -> dict:
    """``cell["metadata"]["nbgrader"]`` itself (so a change to it changes the cell), or a new empty dict if the
    cell has none or it is not a dict (nbgrader's ``CheckCellMetadata`` would refuse it; dpgrader's
    ``SanitizeMetadata`` removes it: the cell is graded as ordinary code).

    Raises
    ------
    TypeError
        If the cell's ``metadata`` itself is not a dict: not a notebook cell, and whoever reads it must
        say it could not (the review and the copy check flag such a notebook for a person).
    """
    metadata = cell.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise TypeError(f"a cell's metadata is a {type(metadata).__name__}, not a dict")
    meta = metadata.get("nbgrader")
    return meta if isinstance(meta, dict) else {}


def grade_id_of(cell: Mapping) -> str | None:
    """The cell's nbgrader ``grade_id``, or None."""
    return nbgrader_metadata(cell).get("grade_id")


def cell_name(cell: Mapping, index: int) -> str:
    """The cell's ``grade_id``, or ``"cell <index>"`` for a cell without one."""
    return grade_id_of(cell) or f"cell {index}"


def points(cell: Mapping) -> float | None:
    """The points nbgrader's metadata gives the cell (None if it gives none)."""
    value = nbgrader_metadata(cell).get("points")
    return None if value is None else float(value)


def is_grade(cell: Mapping) -> bool:
    """A graded cell (``nbgrader.utils.is_grade``): a test cell, or a written or coded answer with points."""
    return bool(nbgrader_metadata(cell).get("grade"))


def is_solution(cell: Mapping) -> bool:
    """A cell the student writes (``nbgrader.utils.is_solution``)."""
    return bool(nbgrader_metadata(cell).get("solution"))


def is_task(cell: Mapping) -> bool:
    """A task cell (``nbgrader.utils.is_task``)."""
    return bool(nbgrader_metadata(cell).get("task"))


def is_locked(cell: Mapping) -> bool:
    """A cell whose source nbgrader writes back before grading (``nbgrader.utils.is_locked``): never a
    solution, always a graded non-solution cell, otherwise as its ``locked`` flag says."""
    meta = nbgrader_metadata(cell)
    if meta.get("solution"):
        return False
    return bool(meta.get("grade") or meta.get("locked"))


def is_instructor_cell(cell: Mapping) -> bool:
    """Marked ``locked`` and not a solution: the instructor's read-only or test cell, as the review reads it."""
    meta = nbgrader_metadata(cell)
    return bool(meta.get("locked")) and not meta.get("solution")


def is_read_only(cell: Mapping) -> bool:
    """The instructor's read-only cell (imports, data loading): marked ``locked``, neither a solution nor graded."""
    return is_instructor_cell(cell) and not is_grade(cell)


def is_test_cell(cell: Mapping) -> bool:
    """An autograded test cell: a graded code cell that is not a student's answer."""
    return cell.get("cell_type") == "code" and is_grade(cell) and not is_solution(cell)


# --- the hidden-test region -------------------------------------------------------------------------------


class LineKind(enum.Enum):
    """What a line of a cell is, read against its regions."""

    VISIBLE = "visible"  # outside every region: students see it
    HIDDEN = "hidden"  # inside a region
    OPEN = "open"  # a begin marker opening a region from visible text
    MARKER = "marker"  # any other marker line: a nested begin, an inner or stray end, the closing end


class MarkedLine(NamedTuple):
    text: str
    kind: LineKind


def mark_lines(source: str, regions: tuple[tuple[str, str], ...] = (HIDDEN_TESTS,)) -> list[MarkedLine]:
    r"""Every line of ``source`` (cut at ``"\n"``, as nbgrader cuts it) with its :class:`LineKind`.

    A line holding a begin marker of ``regions`` opens a region (a begin marker wins over an end
    marker on the same line); a line holding the end marker of the innermost open region closes
    it. Marker lines are never visible, and fail-closed where nbgrader's ``ClearHiddenTests``
    would refuse the cell:

    - an unterminated region hides every line to the end of the cell;
    - regions nest: ``BEGIN``, ``BEGIN``, ``END`` leaves the region open until a second ``END``;
    - an end marker of a region that is not the innermost open one closes nothing.

    Parameters
    ----------
    source : str
        A cell's source.
    regions : tuple of (begin, end) marker pairs
        Default: the hidden tests alone (:data:`HIDDEN_TESTS`); :data:`SECRET_REGIONS` adds the
        solution and mark-scheme regions.

    Examples
    --------
    >>> [m.kind.value for m in mark_lines("a\n### BEGIN HIDDEN TESTS\nb\n### END HIDDEN TESTS\nc")]
    ['visible', 'open', 'hidden', 'marker', 'visible']
    """
    marked, open_ends = [], []  # the end markers of the open regions, innermost last
    for line in source.split("\n"):
        begin = next((end for start, end in regions if start in line), None)
        if begin is not None:
            marked.append(MarkedLine(line, LineKind.MARKER if open_ends else LineKind.OPEN))
            open_ends.append(begin)
        elif open_ends and open_ends[-1] in line:
            open_ends.pop()
            marked.append(MarkedLine(line, LineKind.MARKER))
        elif any(end in line for _, end in regions):
            marked.append(MarkedLine(line, LineKind.MARKER))
        else:
            marked.append(MarkedLine(line, LineKind.HIDDEN if open_ends else LineKind.VISIBLE))
    return marked


def visible_part(source: str) -> str:
    r"""A test cell as students see it: its hidden-test regions and their marker lines dropped.

    This is the cell of the release (nbgrader's ``ClearHiddenTests``); a cell nbgrader would
    refuse to release (an unterminated or nested region) loses every line it might hide.

    Examples
    --------
    >>> visible_part("check(f(1))\n### BEGIN HIDDEN TESTS\ncheck(f(2))\n### END HIDDEN TESTS\nprint('done')")
    "check(f(1))\nprint('done')"
    """
    return "\n".join(line for line, kind in mark_lines(source) if kind is LineKind.VISIBLE)


def visible_lines(source: str, drop_hidden: bool = False) -> list[str]:
    """The non-blank lines of a cell, right-stripped, without its hidden-test regions if ``drop_hidden``.

    Two cells with the same visible lines differ only in blank lines and trailing spaces.
    """
    lines = visible_part(source).split("\n") if drop_hidden else source.split("\n")
    return [line.rstrip() for line in lines if line.strip()]


def hidden_test_region(source: str) -> str:
    r"""The lines of ``source`` students never see (inside hidden-test regions, markers left out), joined.

    Examples
    --------
    >>> hidden_test_region("check(f(1))\n### BEGIN HIDDEN TESTS\ncheck(f(2))\n### END HIDDEN TESTS")
    'check(f(2))'
    """
    return "\n".join(line for line, kind in mark_lines(source) if kind is LineKind.HIDDEN)
