"""Which frames of a failed test's traceback feedback may show: the student's own cells, and whether the tests raised it.

:func:`student_frames` keeps the frames that run a student's cell (never the hidden test's lines);
:func:`raised_by_the_tests` tells a failure the course's checks raised (its message is the test's) from one
raised in the student's code.
"""

from __future__ import annotations

import re

from nbformat.notebooknode import NotebookNode

from dpgrader.cells import grade_id_of, is_test_cell

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CELL_FRAME = re.compile(r"^Cell In\[(?P<count>\d+)\], line (?P<line>\d+)(?:, in (?P<function>[\w.<>]+))?")
STUDENT_FRAMES_HEADING = "Where it failed in your code (the hidden test's own lines are not shown):"


def student_frames(traceback: list[str], cells: dict[int, NotebookNode]) -> list[str]:
    """The frames of an IPython traceback that run the student's own cells: ``cell <name>, line <n>, in <f>`` and
    that line, read from the cell's source (never from the traceback, which the kernel wrote).

    ``cells`` maps an execution count (IPython's ``In[n]``) to the code cell that ran with it; a frame
    of a test cell, of a file (a library) or of a count that names no cell is left out.
    """
    frames = []
    for entry in traceback:
        match = _CELL_FRAME.match(_ANSI.sub("", str(entry)).strip())
        cell = cells.get(int(match.group("count"))) if match else None
        if cell is None or is_test_cell(cell):
            continue
        lines, number = cell.source.split("\n"), int(match.group("line"))
        if not 1 <= number <= len(lines):
            continue
        name = grade_id_of(cell) or f"In [{match.group('count')}]"
        where = f", in {match.group('function')}" if match.group("function") else ""
        frames += [f"  cell {name}, line {number}{where}:", f"    {lines[number - 1].strip()}"]
    return [STUDENT_FRAMES_HEADING, *frames] if frames else []


_FILE_FRAME = re.compile(r"^File (?P<path>.+?):\d+(?:, in |$)")
CHECK_FILES = re.compile(r"(?:^|[/\\])dplib[/\\]testing[/\\][A-Za-z_]\w*\.py$")  # dplib.testing: the course's checks


def raised_by_the_tests(traceback: list[str], cells: dict[int, NotebookNode]) -> bool:
    """Whether an error was raised by the course's own test code: an ``assert ..., message`` of a test cell or a
    :mod:`dplib.testing` check's ``fail``. Every frame of the IPython ``traceback`` is then a test cell's
    (``cells`` maps execution counts to code cells, as for :func:`student_frames`) or a ``dplib/testing/`` file's;
    a frame in the student's code, in another library, or that names no cell makes it not the tests' own.
    A traceback with no frame (none recorded) is not the tests' either.
    """
    frames = 0
    for entry in traceback:
        head = _ANSI.sub("", str(entry)).strip().split("\n", 1)[0]
        if head.startswith("Cell In["):
            match = _CELL_FRAME.match(head)
            cell = cells.get(int(match.group("count"))) if match else None
            if cell is None or not is_test_cell(cell):
                return False
        elif head.startswith("File "):
            match = _FILE_FRAME.match(head)
            if not (match and CHECK_FILES.search(match.group("path"))):
                return False
        elif head.startswith(("Input In", "<ipython-input")):  # older IPython frames: never trusted
            return False
        else:
            continue
        frames += 1
    return frames > 0
