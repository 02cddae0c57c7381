"""What a submission is: regular files only, read without following a link.

A submission folder comes from a student. Anything in it that is not a plain file or folder
(a symbolic link, a hard link to a file elsewhere, a device, a FIFO, a socket) could make the
grader, which reads with its own rights, read something the student cannot: ``data/environ ->
/proc/self/environ`` copied by ``shutil.copytree`` hands the grader's environment to the kernel.
:func:`irregular_entry` walks the whole tree with ``lstat`` (no link is ever followed) and names
the first such entry; the class grader refuses the submission. :func:`graded_files` reads
what nbgrader needs (the notebooks and nbgrader's ``timestamp.txt``) and nothing else, again
without following links, so even a link made after the check never reaches the kernel: the
worker gets these bytes, never the folder.

:func:`read_notebook` is the one way a submitted notebook is read, by the grader's intake, the
review and the copy detection alike: as nbgrader reads it for grading (``nbformat.read(...,
as_version=4)``), so what they judge is what is graded.
"""

from __future__ import annotations

import json
import os
import stat
import warnings
from pathlib import Path

class UnreadableNotebook(ValueError):
    """A file (or object) that is not a notebook nbformat can read; the message says why, in one line."""


def read_notebook(notebook):
    """A submitted notebook as nbgrader grades it: nbformat's own reading, upgraded to format 4.

    Parameters
    ----------
    notebook : str, Path, dict or nbformat.NotebookNode
        A notebook file, or a notebook already parsed from JSON (of any nbformat version). A
        format-4 ``NotebookNode`` is taken as read (nbformat made it) and returned as it is.

    Returns
    -------
    nbformat.NotebookNode
        The notebook in format 4: ``nbformat.read(path, as_version=4)``, the call nbgrader's
        converters make (through nbconvert's ``Exporter.from_filename``) before grading.

    Raises
    ------
    UnreadableNotebook
        If nbformat cannot read it (not JSON, not UTF-8, an unknown format, a conversion that
        fails): the grader scores such a notebook 0 as ``unreadable``.

    Notes
    -----
    Why upgrade older formats instead of refusing them: nbgrader grades a notebook of format 3
    (or 1, 2) after this very upgrade, which merges its worksheets into one list of cells and
    keeps each cell's nbgrader metadata. Reading it the same way here means the review and the
    copy detection judge exactly the cells that are graded, whatever the file's format says,
    including a decoy top-level ``cells`` list that a format-3 file carries beside its
    worksheets (the upgrade ignores it, as grading does), and an honest student whose tool saved
    an old format is graded, not refused. Cell ids are nbformat's business too: missing ones
    are added and duplicated ones renamed, as when nbgrader reads the file (nbformat warns about
    them; those warnings are not the student's to see and are silenced here). A notebook that
    fails nbformat's schema is returned as read (nbformat only logs the error), because that is
    what nbgrader grades.
    """
    import nbformat

    if isinstance(notebook, nbformat.NotebookNode) and notebook.get("nbformat") == 4 and "cells" in notebook:
        return notebook  # read already (the review passes what it read on to its helpers)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if isinstance(notebook, (str, os.PathLike)):
                return nbformat.read(os.fspath(notebook), as_version=4)
            return nbformat.reads(json.dumps(notebook), as_version=4)
    except OSError:
        raise
    except Exception as error:  # NotJSONError, NBFormatError, UnicodeDecodeError, a failed conversion ...
        detail = str(error).splitlines()[0][:160] if str(error) else ""
        raise UnreadableNotebook(f"{type(error).__name__}: {detail}" if detail else type(error).__name__) from error


# The files of a submission that grading reads; the rest stays in submitted/ (nothing is lost).
GRADED_FILES = ("*.ipynb", "timestamp.txt")


def _kind(mode: int, links: int) -> str | None:
    """What is wrong with an entry of this ``lstat`` mode and link count, or None for a plain file or folder."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISREG(mode):
        return "a hard link to another file" if links > 1 else None
    if stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device file"


def irregular_entry(folder: Path) -> str | None:
    """``"<relative path> is <what>"`` for the first entry under ``folder`` that is not a plain file or folder, or None.

    The folder itself counts too (a submission folder that is a link is refused). Walks with
    ``os.scandir`` and ``follow_symlinks=False`` throughout.
    """
    folder = Path(folder)
    top = os.lstat(folder)
    problem = _kind(top.st_mode, 1)
    if problem:
        return f"the submission folder is {problem}"
    stack = [folder]
    while stack:
        current = stack.pop()
        with os.scandir(current) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                info = entry.stat(follow_symlinks=False)
                problem = _kind(info.st_mode, info.st_nlink)
                if problem:
                    return f"{Path(entry.path).relative_to(folder)} is {problem}"
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
    return None


def graded_files(submission: Path, hard_links: bool = False) -> dict[str, bytes]:
    """The regular files nbgrader grades (:data:`GRADED_FILES`) of ``submission``, by name, as bytes.

    Only top-level plain files are read (``O_NOFOLLOW``: a link made after the check is not followed
    either), and only those with one link unless ``hard_links`` (the instructor's own ``source/``, to
    which a student's hard link may point): no folder, no link, no other file (a ``dplib/`` or
    ``numpy.py`` beside the notebook never reaches the kernel's import path).
    """
    found = {}
    for entry in sorted(os.scandir(submission), key=lambda e: e.name):
        if not entry.is_file(follow_symlinks=False) or not any(Path(entry.name).match(p) for p in GRADED_FILES):
            continue
        if entry.stat(follow_symlinks=False).st_nlink > 1 and not hard_links:
            continue
        descriptor = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(descriptor, "rb") as handle:
            found[entry.name] = handle.read()
    return found
