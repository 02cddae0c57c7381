"""Who owns an inbound folder: the user name of a uid, from the system's users or from the hub's list.

On one machine every student is a Unix user: the kernel records who made a folder (``st_uid``) and
:mod:`pwd` names that uid. On Kubernetes the users are not in the pods' ``/etc/passwd``; the
deployment (``deploy/kubernetes/values.yaml``) gives each user's pod a uid of its own and the hub
writes the pairs into a file in ``/etc/passwd`` format, which the collect reads instead
(``c.CourseCollect.owners_file``). That file decides who may hand in as whom, so it is refused
when anyone but its owner may write it, or when its owner is one of the users it names.
"""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path


class OwnersUnavailable(RuntimeError):
    """The list of owners cannot be trusted or read; the collect stops (it never guesses who handed in)."""


def read_owners_file(path: Path) -> dict[int, str | None]:
    """``uid -> name`` from a file in ``/etc/passwd`` format (``name:x:uid:...``); a uid with two names maps to None.

    Raises
    ------
    OwnersUnavailable
        If the file cannot be read, is writable by group or others, or belongs to a uid it maps
        (a user could then rewrite who owns what).
    """
    try:
        info = os.stat(path)
        text = Path(path).read_text()
    except OSError as error:
        raise OwnersUnavailable(f"c.CourseCollect.owners_file {str(path)!r} cannot be read: {error.strerror}") from None
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise OwnersUnavailable(f"c.CourseCollect.owners_file {str(path)!r} is writable by group or others "
                                f"(mode {stat.S_IMODE(info.st_mode):o}): anyone could name themselves")
    owners: dict[int, str | None] = {}
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) < 3 or not fields[2].isdigit():
            continue
        uid = int(fields[2])
        owners[uid] = fields[0] if owners.get(uid, fields[0]) == fields[0] else None
    if info.st_uid in owners:
        raise OwnersUnavailable(f"c.CourseCollect.owners_file {str(path)!r} belongs to uid {info.st_uid}, "
                                f"a user it names ({owners[info.st_uid]}): only the hub may write it")
    return owners


def owner_name(uid: int, owners: dict[int, str | None] | None = None) -> str | None:
    """The user name of ``uid``: from ``owners`` (see :func:`read_owners_file`) if given, else the system's; None if unknown."""
    if owners is not None:
        return owners.get(uid)
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return None
