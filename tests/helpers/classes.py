"""A made-up class handed in through :meth:`dpgrader.course.Course.submit`, the way nbgrader expects submissions.

Fixtures that grade a class describe it as ``{student: what they hand in}`` and build it with :func:`submit_class`,
instead of writing ``submitted/<student>/<assignment>/`` by hand.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import nbformat

from dpgrader.course import Course


def submit_class(course: Course, assignment: str, submissions: dict, name: str) -> dict[str, Path]:
    """Hand in one notebook file, called ``name``, per student: a notebook (``NotebookNode``), raw text (a file that
    may not even be JSON) or bytes. Returns each student's submission folder."""
    folders = {}
    with tempfile.TemporaryDirectory(prefix="handed-in-") as staging:
        for student, notebook in submissions.items():
            path = Path(staging) / student / name
            path.parent.mkdir()
            if isinstance(notebook, nbformat.NotebookNode):
                nbformat.write(notebook, str(path))
            elif isinstance(notebook, bytes):
                path.write_bytes(notebook)
            else:
                path.write_text(notebook)
            folders[student] = course.submit(assignment, student, [path])
    return folders
