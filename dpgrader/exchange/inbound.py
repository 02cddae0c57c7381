"""What an inbound submission is, judged before anything is copied: its name, its time, its tree.

A folder in the exchange's ``inbound/`` is made by whoever can write there, which is every student:
its name (``<student>+<assignment>+<time>+<random>``), the time in it and the ``timestamp.txt``
inside it are the student's to choose. Nothing here trusts them:

- :func:`parse_inbound_name` reads the name strictly (a student id of :func:`dpgrader.ids.valid_student_id` only, no
  markup, no space, no ``+``), and :func:`require_not_future` refuses a time ahead of the clock;
- :func:`snapshot` walks the whole tree with ``lstat`` (no link followed) and refuses anything that
  is not a plain folder or a plain file with one link, or owned by someone else than the folder;
  it records what the student cannot set: the owner (``st_uid``) and the newest ``st_ctime``
  (the kernel sets it on every change; no call sets it back);
- :func:`copy_snapshot` copies exactly the snapshot, each folder and file opened relative to its
  parent with ``O_NOFOLLOW`` and each file checked by ``fstat`` to be the very inode the walk saw,
  so a link or a swapped file made between the walk and the copy is refused, never followed.

Every refusal is a :class:`Refused` whose message says why, in one line.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from dpgrader.ids import valid_student_id


#: What an inbound submission may hold at most (entries of its tree), whatever its size.
MAX_ENTRIES = 1000


class Refused(ValueError):
    """An inbound submission the course does not collect; the message says why, in one line."""


@dataclass(frozen=True)
class InboundName:
    """The parts of an inbound folder's name: ``<student>+<assignment>+<claimed time>[+<random>]``."""

    student: str
    assignment: str
    claimed: datetime  # naive UTC, as nbgrader's parse_utc gives it; the student's word only


@dataclass(frozen=True)
class Entry:
    """One entry of a submission's tree, as ``lstat`` saw it."""

    path: str  # relative, "/"-separated
    is_dir: bool
    device: int
    inode: int
    size: int


@dataclass(frozen=True)
class Snapshot:
    """A submission's tree as the walk saw it: its entries, its owner, and its newest change (UTC)."""

    entries: tuple[Entry, ...]
    owner: int
    changed: datetime  # naive UTC: the newest st_ctime of the folder and everything in it


def require_student_id(student: str) -> str:
    """``student`` if it is a student id the course accepts (:func:`dpgrader.ids.valid_student_id`), else :class:`Refused`.

    >>> require_student_id("alice.b@uni-x")
    'alice.b@uni-x'
    >>> require_student_id("<img src=x onerror=alert(1)>")
    Traceback (most recent call last):
    ...
    dpgrader.exchange.inbound.Refused: the student id '<img src=x onerror=alert(1)>' is not 1 to 128 of letters, digits, '.', '_', '@', '-' (not starting with '.' or '-')
    """
    if not valid_student_id(student):
        raise Refused(f"the student id {student!r} is not 1 to 128 of letters, digits, '.', '_', '@', '-' "
                      "(not starting with '.' or '-')")
    return student


def parse_inbound_name(name: str) -> InboundName:
    """The parts of an inbound folder's name, read strictly; :class:`Refused` if any part is malformed.

    >>> parse_inbound_name("alice+01_definition+2026-11-27 04:00:00.000001 UTC+AbC-_x").student
    'alice'
    """
    from nbgrader.utils import parse_utc

    parts = name.split("+")
    if len(parts) not in (3, 4):
        raise Refused(f"the folder name {name!r} is not <student>+<assignment>+<time>+<random>")
    student, assignment, claimed = parts[:3]
    require_student_id(student)
    try:
        when = parse_utc(claimed)
    except (ValueError, TypeError, OverflowError):
        raise Refused(f"the time {claimed!r} in the folder name is not a time") from None
    if when is None:
        raise Refused(f"the time {claimed!r} in the folder name is not a time")
    return InboundName(student, assignment, when)


def require_not_future(claimed: datetime, now: datetime, tolerance: timedelta) -> None:
    """:class:`Refused` if ``claimed`` (naive UTC) is later than ``now`` (naive UTC) by more than ``tolerance``.

    >>> now = datetime(2026, 11, 27, 4, 0)
    >>> require_not_future(now + timedelta(seconds=30), now, timedelta(minutes=2))
    >>> require_not_future(now + timedelta(days=365), now, timedelta(minutes=2))
    Traceback (most recent call last):
    ...
    dpgrader.exchange.inbound.Refused: the folder name claims 2027-11-27 04:00:00, later than now (2026-11-27 04:00:00 UTC)
    """
    if claimed > now + tolerance:
        raise Refused(f"the folder name claims {claimed:%Y-%m-%d %H:%M:%S}, later than now ({now:%Y-%m-%d %H:%M:%S} UTC)")


def _problem(mode: int, links: int) -> str | None:
    """What is wrong with an entry of this ``lstat`` mode and link count, or None for a plain file or folder."""
    if stat.S_ISDIR(mode):
        return None
    if stat.S_ISREG(mode):
        return "a hard link (a file with another name elsewhere)" if links > 1 else None
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device file"


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).replace(tzinfo=None)


def snapshot(folder: Path) -> Snapshot:
    """The tree of an inbound submission, walked with ``lstat``; :class:`Refused` at its first irregular entry.

    Refused: the folder itself not a folder; anything in it that is a link, a hard link (more than one
    name), a device, a FIFO or a socket; an entry owned by another user than the folder; more than
    :data:`MAX_ENTRIES` entries. Nothing is opened but folders (listed without following links).
    """
    folder = Path(folder)
    top = os.lstat(folder)
    if not stat.S_ISDIR(top.st_mode):
        raise Refused(f"the submission folder is {_problem(top.st_mode, 1) or 'not a folder'}")
    entries: list[Entry] = []
    newest = top.st_ctime
    stack = [""]
    while stack:
        relative = stack.pop()
        with os.scandir(folder / relative if relative else folder) as listing:
            for item in sorted(listing, key=lambda e: e.name):
                info = item.stat(follow_symlinks=False)
                path = f"{relative}/{item.name}" if relative else item.name
                problem = _problem(info.st_mode, info.st_nlink)
                if problem:
                    raise Refused(f"{path!r} is {problem}")
                if info.st_uid != top.st_uid:
                    raise Refused(f"{path!r} belongs to uid {info.st_uid}, the folder to uid {top.st_uid}")
                is_dir = stat.S_ISDIR(info.st_mode)
                entries.append(Entry(path, is_dir, info.st_dev, info.st_ino, 0 if is_dir else info.st_size))
                if len(entries) > MAX_ENTRIES:
                    raise Refused(f"the submission holds more than {MAX_ENTRIES} files and folders")
                newest = max(newest, info.st_ctime)
                if is_dir:
                    stack.append(path)
    return Snapshot(tuple(sorted(entries, key=lambda e: e.path)), top.st_uid, _utc(newest))


def ignored(path: str, patterns: list[str]) -> bool:
    """Whether any part of the relative ``path`` matches one of ``patterns`` (nbgrader's ``CourseDirectory.ignore``).

    >>> ignored("sub/.ipynb_checkpoints/x.ipynb", [".ipynb_checkpoints"]), ignored("a.ipynb", ["*.txt"])
    (True, False)
    """
    return any(fnmatch.fnmatch(part, pattern) for part in path.split("/") for pattern in patterns)


def _open_folder(root_fd: int, parts: list[str]) -> int:
    """A descriptor of the folder ``parts`` below ``root_fd``, each step opened with ``O_NOFOLLOW``."""
    current = os.dup(root_fd)
    try:
        for part in parts:
            following = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=current)
            os.close(current)
            current = following
    except BaseException:
        os.close(current)
        raise
    return current


def copy_snapshot(folder: Path, taken: Snapshot, destination: Path, ignore: list[str] = ()) -> list[str]:
    """Copy the files of ``taken`` from ``folder`` into the new folder ``destination``; return the paths copied.

    Entries whose path matches ``ignore`` are left out. Every folder on the way and every file is opened
    with ``O_NOFOLLOW`` relative to its parent (no link is followed anywhere on the path), and each file,
    once open, must still be a plain file with one link and the same inode the walk saw: a file swapped
    or linked in after :func:`snapshot` raises :class:`Refused` (the caller removes ``destination``).
    """
    destination = Path(destination)
    destination.mkdir(mode=0o755)
    copied = []
    root_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for entry in taken.entries:
            if ignored(entry.path, list(ignore)):
                continue
            target = destination / entry.path
            if entry.is_dir:
                target.mkdir(mode=0o755)
                continue
            *parents, name = entry.path.split("/")
            try:
                parent_fd = _open_folder(root_fd, parents)
                try:
                    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent_fd)
                finally:
                    os.close(parent_fd)
            except OSError as error:  # ELOOP, ENOTDIR: a link where the walk saw a file or folder
                raise Refused(f"{entry.path!r} changed while it was collected ({error.strerror})") from None
            with os.fdopen(fd, "rb") as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or (info.st_dev, info.st_ino) != (entry.device, entry.inode):
                    raise Refused(f"{entry.path!r} changed while it was collected")
                data = handle.read()
            out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with os.fdopen(out, "wb") as written:
                written.write(data)
            copied.append(entry.path)
    finally:
        os.close(root_fd)
    return copied
