"""Which of many dicts changed since a given moment, read from CPython's version tag of each dict (PEP 509).

CPython gives every dict a 64-bit ``ma_version_tag`` and sets it to a new, never reused number on every change
(an entry added, rebound to another object, or deleted; ``clear``, ``update``, ``pop``...). Reading one tag per
dict says whether anything in it changed; comparing every saved entry costs one lookup per entry (the guard's
~50,000 entries in ~2,700 namespaces: 5 ms, against 0.2 ms for the tags). The guard reads them before every
cell and after every check a test makes.

The tag is not part of Python's API: :func:`dict_versions` returns ``None`` unless a probe at start-up shows
it works here (CPython, 64-bit, the object layout of 3.11 and 3.12, the tag moving on each kind of change and
``ma_used`` matching ``len`` for every dict); the caller then compares every entry, as before. A tag that
moved is a reason to look, never a verdict: the caller compares that namespace's entries (a library may
legitimately add ``__warningregistry__`` to a module or cache a submodule).
"""

from __future__ import annotations

import ctypes
import gc
import platform
import sys
from itertools import compress
from operator import attrgetter, ne

_USED_OFFSET = 2 * ctypes.sizeof(ctypes.c_void_p)  # after ob_refcnt and ob_type: Py_ssize_t ma_used
_TAG_OFFSET = _USED_OFFSET + ctypes.sizeof(ctypes.c_ssize_t)  # then uint64_t ma_version_tag
_VALUE = attrgetter("value")


def underlying_dict(namespace) -> dict:
    """The dict behind ``namespace``: itself, or the one a class's ``mappingproxy`` shows."""
    if isinstance(namespace, dict):
        return namespace
    (inner,) = [referent for referent in gc.get_referents(namespace) if isinstance(referent, dict)]  # ctypes: a subclass
    return inner


class DictVersions:
    """The version tags of ``dicts``, kept alive by the caller; :meth:`moved` says which changed since saved."""

    def __init__(self, dicts: list[dict]):
        self._dicts = tuple(dicts)  # the tags are read at these objects' addresses: keep them alive
        self._tags = tuple(ctypes.c_uint64.from_address(id(d) + _TAG_OFFSET) for d in self._dicts)
        self._saved = self.now()

    def now(self) -> tuple[int, ...]:
        return tuple(map(_VALUE, self._tags))

    def moved(self) -> tuple[list[int], tuple[int, ...]]:
        """The indices of the dicts whose tag is not the saved one, and the tags read (to :meth:`accept` later)."""
        now = self.now()
        if now == self._saved:
            return [], now
        return list(compress(range(len(now)), map(ne, now, self._saved))), now

    def accept(self, indices: list[int], tags: tuple[int, ...]) -> None:
        """Save ``tags[i]`` for each of ``indices``: tags read *before* their dicts were found as they should be,
        so a change made after that check still moves the tag."""
        if indices:
            saved = list(self._saved)
            for index in indices:
                saved[index] = tags[index]
            self._saved = tuple(saved)


def _layout_holds(dicts: list[dict]) -> bool:
    """Whether the tag moves on each kind of change of a probe dict, and ``ma_used`` is ``len`` for all dicts."""
    if platform.python_implementation() != "CPython" or sys.maxsize != 2**63 - 1 or sys.version_info[:2] not in ((3, 11), (3, 12)):
        return False
    used = [ctypes.c_ssize_t.from_address(id(d) + _USED_OFFSET).value for d in dicts]
    if used != [len(d) for d in dicts]:
        return False
    probe: dict = {}
    versions = DictVersions([probe])
    for change in (lambda: probe.__setitem__("a", 1), lambda: probe.__setitem__("a", 2),
                   lambda: probe.__delitem__("a"), lambda: probe.update(b=3), lambda: probe.clear()):
        before = versions.now()
        change()
        if versions.now() == before:
            return False
    return True


def dict_versions(namespaces: list) -> DictVersions | None:
    """The version tags of ``namespaces`` (dicts or class ``mappingproxy`` views), or ``None`` where they do not work."""
    try:
        dicts = [underlying_dict(namespace) for namespace in namespaces]
    except ValueError:  # a mappingproxy over something else than one dict
        return None
    return DictVersions(dicts) if _layout_holds(dicts) else None
