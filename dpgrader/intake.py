"""What a submission is: regular files only, read without following a link.

A submission folder comes from a student. Anything in it that is not a plain file or folder
(a symbolic link, a hard link to a file elsewhere, a device, a FIFO, a socket) could make the
grader, which reads with its own rights, read something the student cannot: ``data/environ ->
/proc/self/environ`` copied by ``shutil.copytree`` hands the grader's environment to the kernel.
:func:`irregular_entry` walks the whole tree with ``lstat`` (no link is ever followed) and names
the first such entry; the class grader refuses the submission. :func:`copy_for_grading` copies
what nbgrader needs (the notebooks and nbgrader's ``timestamp.txt``) and nothing else, again
without following links, so even a link made after the check never reaches the kernel.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

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


def copy_for_grading(submission: Path, target: Path) -> list[str]:
    """Copy the regular files nbgrader grades (:data:`GRADED_FILES`) from ``submission`` to ``target``; return their names.

    Only top-level plain files are copied, byte for byte (``follow_symlinks=False``): no folder,
    no link, no other file (a ``dplib/`` or ``numpy.py`` beside the notebook never reaches the
    kernel's import path).
    """
    target.mkdir(parents=True, exist_ok=True)
    copied = []
    for entry in sorted(os.scandir(submission), key=lambda e: e.name):
        if not entry.is_file(follow_symlinks=False) or not any(Path(entry.name).match(p) for p in GRADED_FILES):
            continue
        if entry.stat(follow_symlinks=False).st_nlink > 1:
            continue
        shutil.copy2(entry.path, target / entry.name, follow_symlinks=False)
        copied.append(entry.name)
    return copied
