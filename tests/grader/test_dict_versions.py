"""The guard's quick look at ~2,700 namespaces: CPython's dict version tags (dpgrader.guard.dict_versions).

A tag that moved makes the guard compare that namespace's entries; one that did not lets it skip them. So the
tags must move on every kind of change, a change made while the guard looks must still be seen next time, and
the snapshot must put back exactly what it puts back without them.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

import dplib
from dpgrader.guard.dict_versions import DictVersions, dict_versions
from dpgrader.guard.snapshot import Snapshot, _AllBound, _ClassBindings

THIS_PYTHON_HAS_TAGS = sys.implementation.name == "cpython" and sys.version_info[:2] in ((3, 11), (3, 12))


class Plain:
    value = 1

    def method(self):
        return 1


def test_the_tags_work_on_the_python_the_course_runs():
    # CI runs 3.11: the guard's quick path is the one graded there, not the fallback.
    assert (dict_versions([{}, vars(Plain), vars(np.ndarray)]) is not None) == THIS_PYTHON_HAS_TAGS


CHANGES = {
    "added": lambda d, cls: d.__setitem__("new", 1),
    "rebound": lambda d, cls: d.__setitem__("a", object()),
    "deleted": lambda d, cls: d.__delitem__("a"),
    "popped": lambda d, cls: d.pop("a"),
    "updated": lambda d, cls: d.update(a=2),
    "cleared": lambda d, cls: d.clear(),
    "class attribute set": lambda d, cls: setattr(cls, "method", lambda self: 0),
    "class attribute deleted": lambda d, cls: delattr(cls, "value"),
}


@pytest.mark.skipif(not THIS_PYTHON_HAS_TAGS, reason="the tags are read on CPython 3.11 and 3.12 only")
@pytest.mark.parametrize("change", list(CHANGES))
def test_a_tag_moves_on_each_kind_of_change_and_only_its_dicts(change):
    class Cls(Plain):
        value = 2

        def method(self):
            return 2

    dicts = [{"a": 1}, {"a": 1}, vars(Cls), vars(Plain)]
    versions = dict_versions(dicts)
    target = 2 if change.startswith("class") else 0
    CHANGES[change](dicts[0], Cls)
    moved, _ = versions.moved()
    assert moved == [target]


@pytest.mark.skipif(not THIS_PYTHON_HAS_TAGS, reason="the tags are read on CPython 3.11 and 3.12 only")
def test_a_change_made_after_the_tags_were_read_is_seen_the_next_time():
    namespace = {"a": 1}
    versions = DictVersions([namespace])
    namespace["a"] = 2
    moved, tags = versions.moved()  # the guard reads the tags, then compares the entries...
    namespace["a"] = 3  # ...while a student's thread changes the dict again
    versions.accept(moved, tags)
    assert versions.moved()[0] == [0]
    versions.accept(*versions.moved())
    assert versions.moved()[0] == []


@pytest.mark.parametrize("tags", [True, False], ids=["with_tags", "without_tags"])
def test_an_entry_that_hides_an_inherited_method_is_seen_on_a_class_with_nothing_else_saved(tags):
    class Base:
        def answer(self):
            return 42

    class Empty(Base):  # its own dict holds nothing the snapshot keeps
        pass

    bound = _AllBound([(vars(Empty), _ClassBindings({}, Empty))])
    if not tags:
        bound._versions = None
    assert bound()
    Empty.answer = lambda self: 0
    assert not bound()
    assert bound._saved[0].shadowing(vars(Empty)) == ["answer"]
    del Empty.answer
    assert bound()


def _tamper() -> list:
    """Rebind, delete, hide (an inherited method) and edit what tests rely on; return the undo steps."""
    saved_allclose, saved_norm, saved_sum = np.allclose, np.linalg.norm, pd.DataFrame.sum
    saved_tail, saved_code = dplib.laplace_tail, dplib.laplace_tail.__code__
    assert "__eq__" not in vars(pd.Series)  # OpsMixin's
    pd.Series.__eq__ = lambda self, other: True
    np.allclose = lambda *args, **kwargs: True
    del np.linalg.norm
    pd.DataFrame.sum = lambda self, *args, **kwargs: 0
    dplib.laplace_tail = lambda *args: 0.5
    saved_tail.__code__ = (lambda *args: 0.5).__code__
    return [lambda: vars(pd.Series).get("__eq__") and delattr(pd.Series, "__eq__"),
            lambda: setattr(np, "allclose", saved_allclose), lambda: setattr(np.linalg, "norm", saved_norm),
            lambda: setattr(pd.DataFrame, "sum", saved_sum), lambda: setattr(dplib, "laplace_tail", saved_tail),
            lambda: setattr(saved_tail, "__code__", saved_code)]


@pytest.mark.parametrize("tags", [True, False], ids=["with_tags", "without_tags"])
def test_the_snapshot_puts_back_the_same_things_with_and_without_the_tags(tags):
    snapshot = Snapshot({}, {})
    if not tags:
        snapshot._unchanged._namespaces._versions = None
    assert snapshot.restore() == []
    undo = _tamper()
    try:
        restored = snapshot.restore()
    finally:
        for step in undo:
            step()
    assert sorted(restored) == ["dplib.laplace_tail", "dplib.mechanisms.laplace.laplace_tail (code or defaults)",
                                "numpy.allclose", "numpy.linalg.norm", "pandas.DataFrame.sum",
                                "pandas.Series.__eq__ (added)"], restored
    assert (pd.Series([1]) == pd.Series([2])).tolist() == [False]
    assert snapshot.restore() == []  # nothing left, and the tags accepted: the next look is quick again


@pytest.mark.skipif(not THIS_PYTHON_HAS_TAGS, reason="the tags are read on CPython 3.11 and 3.12 only")
def test_a_restore_reads_again_only_the_namespaces_whose_tag_moved_and_holds_a_change():
    # ipykernel swaps builtins.input for every cell: each cell's restore puts it back, and must not loop over the
    # ~2,700 namespaces to do so (it took 14 to 25 ms a cell, on every cell of every notebook).
    import builtins

    snapshot = Snapshot({}, {})
    unchanged = snapshot._unchanged
    namespaces = [namespace for namespace, _ in snapshot.modules] + [vars(cls) for cls, _ in snapshot.classes]
    saved_input, saved_allclose = builtins.input, np.allclose
    builtins.__cache_of_a_library__ = 1  # moves builtins' tag, changes nothing saved
    np.allclose = lambda *args, **kwargs: True
    try:
        changed = unchanged.changed_namespaces()
        assert [namespaces[index] for index in changed] == [vars(np)]
        assert unchanged.changed_namespaces() == changed  # not accepted while it stays changed
        assert snapshot.restore() == ["numpy.allclose"]
        assert unchanged.changed_namespaces() == []
        builtins.input = lambda prompt="": "typed"
        assert snapshot.restore() == ["builtins.input"] and builtins.input is saved_input
    finally:
        del builtins.__cache_of_a_library__
        builtins.input, np.allclose = saved_input, saved_allclose
