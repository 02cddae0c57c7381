"""Snapshot and restore of the trusted libraries: module namespaces, classes, and dplib's functions.

:class:`Snapshot` records, when the guard is installed, every module of the trusted
packages (:data:`TRUSTED_PACKAGES`), the classes they define, the code and defaults of
dplib's functions and the names the read-only cells import; :meth:`Snapshot.restore`
puts back whatever student code rebound or deleted.
"""

from __future__ import annotations

import sys
import types
from itertools import chain, compress
from operator import attrgetter, call, is_not, itemgetter

from dpgrader.guard.dict_versions import dict_versions

TRUSTED_PACKAGES = (
    "builtins", "math", "cmath", "operator", "functools", "itertools", "collections", "random",
    "statistics", "types", "contextlib", "io", "numbers", "decimal", "fractions",
    "numpy", "scipy", "pandas", "dplib",
)

_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), tuple, frozenset)
MISSING = object()  # "no such binding" (None may be a value)


def _trusted(module_name: str) -> bool:
    return module_name.split(".", 1)[0] in TRUSTED_PACKAGES


def worth_restoring(name: str, value) -> bool:
    """Functions, classes, modules, descriptors and public constants; not mutable state."""
    if isinstance(value, (type, types.ModuleType)) or callable(value) or hasattr(type(value), "__get__"):
        return True
    return not name.startswith("_") and isinstance(value, _IMMUTABLE)


class Snapshot:
    """Library state as it was when taken, and the notebook names bound to it.

    Parameters
    ----------
    user_ns : dict
        The kernel's user namespace.
    names : dict
        Names the read-only cells import, mapped to the objects they must stay bound to.
    """

    def __init__(self, user_ns: dict, names: dict):
        self.user_ns = user_ns
        self.names = dict(names)
        self.modules: list[tuple[dict, _Bindings]] = []
        self.classes: list[tuple[type, _ClassBindings]] = []
        self.functions: list[tuple[types.FunctionType, tuple]] = []  # dplib's: code, defaults, kwdefaults
        seen_classes: set[int] = set()
        seen_functions: set[int] = set()
        for name, module in list(sys.modules.items()):
            if not isinstance(module, types.ModuleType) or not _trusted(name):
                continue
            namespace = vars(module)
            if name.split(".")[0] == "dplib":
                for value in list(namespace.values()):
                    if isinstance(value, types.FunctionType) and id(value) not in seen_functions:
                        seen_functions.add(id(value))
                        self.functions.append((value, _function_state(value)))
            self.modules.append((namespace, _Bindings({k: v for k, v in list(namespace.items()) if worth_restoring(k, v)})))
            for value in list(namespace.values()):
                if (
                    isinstance(value, type)
                    and id(value) not in seen_classes
                    and _trusted(getattr(value, "__module__", None) or "")
                    and value.__module__ != "builtins"
                ):
                    seen_classes.add(id(value))
                    attributes = {k: v for k, v in list(vars(value).items()) if worth_restoring(k, v)}
                    self.classes.append((value, _ClassBindings(attributes, value)))
        self._unchanged = _Unchanged(
            [*((namespace, saved) for namespace, saved in self.modules), *((vars(cls), saved) for cls, saved in self.classes)],
            [function for function, _ in self.functions], [state for _, state in self.functions])

    def restore(self) -> list[str]:
        """Put back every rebound or deleted entry; return their names (``module.name``)."""
        restored = self._restore_namespaces(self._unchanged.changed_namespaces())
        restored += self._restore_functions(self._unchanged.changed_functions())
        for key, value in self.names.items():
            if self.user_ns.get(key, MISSING) is not value:
                self.user_ns[key] = value
                restored.append(key)
        return restored

    def _restore_namespaces(self, changed: list[int]) -> list[str]:
        """Put back the entries of the namespaces at ``changed`` (indices into :attr:`modules`, then :attr:`classes`),
        each found with an entry rebound, deleted or hidden."""
        restored = []
        modules = len(self.modules)
        for namespace, saved in (self.modules[index] for index in changed if index < modules):
            for key, value in saved.items():
                if namespace.get(key, MISSING) is not value:
                    namespace[key] = value
                    restored.append(f"{namespace.get('__name__', '?')}.{key}")
        for cls, saved in (self.classes[index - modules] for index in changed if index >= modules):
            current = vars(cls)
            for key in saved.shadowing(current):  # pd.Series.__eq__ = ...: the inherited one shows again
                try:
                    delattr(cls, key)
                except (AttributeError, TypeError):
                    continue
                restored.append(f"{cls.__module__}.{cls.__qualname__}.{key} (added)")
            for key, value in saved.items():
                if current.get(key, MISSING) is not value:
                    try:
                        setattr(cls, key, value)
                    except (AttributeError, TypeError):
                        continue
                    restored.append(f"{cls.__module__}.{cls.__qualname__}.{key}")
        return restored

    def _restore_functions(self, candidates: list[int]) -> list[str]:
        """Put back the code and defaults of the functions at ``candidates`` (indices into :attr:`functions`) that
        changed, except those a ``disabled`` block switched off (it puts them back itself)."""
        restored = []
        for function, state in map(self.functions.__getitem__, candidates):
            if not _same_state(function, state) and function.__code__.co_filename != _DISABLED_FILENAME:
                function.__code__, function.__defaults__ = state[0], state[1]
                if state[2] is not None:  # the same dict, its entries put back: the quick check looks at both
                    state[2].clear()
                    state[2].update(state[3])
                function.__kwdefaults__ = state[2]
                restored.append(f"{function.__module__}.{function.__qualname__} (code or defaults)")
        return restored


class _Unchanged:
    """Finds, in C loops, which of many namespaces hold a saved binding changed since the snapshot
    (:meth:`changed_namespaces`) and which functions' code or defaults changed (:meth:`changed_functions`):
    :meth:`Snapshot.restore` loops in Python only over what they find.

    The namespaces (module dicts, class ``mappingproxy`` views, functions' keyword-default dicts, all live) are
    first told apart by CPython's version tag of each dict (:mod:`.dict_versions`, 0.2 ms for ~2,700 namespaces);
    those whose tag moved, or all where the tags cannot be read, are read with one ``itemgetter`` each through
    ``map``, their values chained and compared by identity with the saved ones (5 ms for all ~50,000 entries); a
    deleted key (``KeyError``) or a grown keyword-default dict counts as a change. The two are apart because a ``disabled``
    block swaps the code of the functions it switches off: a check inside it (every ``dplib.testing`` check
    ends in a restore) finds those functions changed, and must still skip the loops over the namespaces and over
    dplib's other functions.
    """

    def __init__(self, namespaces: list[tuple], functions: list, states: list[tuple]):
        self._namespaces = _AllBound(namespaces)
        self._functions = tuple(functions)
        self._saved = tuple((attrgetter(attribute), tuple(state[index] for state in states))
                            for index, attribute in enumerate(("__code__", "__defaults__", "__kwdefaults__")))
        self._with_kwdefaults = tuple(index for index, state in enumerate(states) if state[2] is not None)
        self._kwdefaults = tuple(states[index][2] for index in self._with_kwdefaults)
        self._kwdefault_values = _AllBound([(kwdefaults, _Bindings(kwdefaults)) for kwdefaults in self._kwdefaults])
        self._sizes = tuple(map(len, self._kwdefaults))

    def changed_namespaces(self) -> list[int]:
        """The indices (modules first, then classes) of the namespaces to restore: an entry rebound, deleted or hidden."""
        return self._namespaces.changed()

    def changed_functions(self) -> list[int]:
        """The indices of the functions whose code, defaults or keyword defaults (the dict, or an entry of it) are
        not the saved ones; an entry edited in place names every function that has keyword defaults."""
        indices = range(len(self._functions))
        changed = set()
        for read, saved in self._saved:
            changed.update(compress(indices, map(is_not, map(read, self._functions), saved)))
        if not (self._kwdefault_values() and tuple(map(len, self._kwdefaults)) == self._sizes):
            changed.update(self._with_kwdefaults)
        return sorted(changed)


class _AllBound:
    """Whether every saved entry of many live namespaces is still bound to the same object (identity).

    Where CPython's dict version tags work (:mod:`.dict_versions`), only the namespaces whose tag moved are
    compared entry by entry; elsewhere, all of them.
    """

    def __init__(self, namespaces: list[tuple]):
        # Every namespace, even one with nothing saved: a class may still be given an entry that hides an inherited one.
        self._views = tuple(view for view, _ in namespaces)
        self._saved = tuple(saved for _, saved in namespaces)
        self._getters = tuple(saved.read for saved in self._saved)
        self._values = tuple(chain.from_iterable(saved.values_read for saved in self._saved))
        self._versions = dict_versions(list(self._views))
        self._sizes = tuple(map(len, self._views))

    def __call__(self) -> bool:
        return not self.changed()

    def changed(self) -> list[int]:
        """The indices of the namespaces not as saved. With the tags, only the namespaces whose tag moved are
        compared, and those found as saved have their tags accepted; without them, all are compared at once in C,
        and one by one only when that finds a change."""
        if self._versions is None:
            if self._all_bound() and self._no_growth():
                return []
            return [index for index, (view, saved) in enumerate(zip(self._views, self._saved)) if not saved.still_bound(view)]
        moved, tags = self._versions.moved()
        changed = [index for index in moved if not self._saved[index].still_bound(self._views[index])]
        unchanged = set(moved).difference(changed) if changed else moved
        self._versions.accept(sorted(unchanged), tags)
        return changed

    def _no_growth(self) -> bool:
        """Without the tags: a namespace with more entries than last time is compared whole (a class may have been
        given an attribute that hides one it inherits); none found, its size is the new normal."""
        sizes = tuple(map(len, self._views))
        grown = [index for index, (now, before) in enumerate(zip(sizes, self._sizes)) if now != before]
        if not all(self._saved[index].still_bound(self._views[index]) for index in grown):
            return False
        self._sizes = sizes
        return True

    def _all_bound(self) -> bool:
        try:
            current = chain.from_iterable(map(call, self._getters, self._views))
            return not any(map(is_not, current, self._values))
        except KeyError:
            return False


def _read_nothing(namespace) -> tuple:
    return ()


class _Bindings(dict):
    """A namespace's entries as they were, and a fast check whether any was rebound or deleted.

    :class:`_Unchanged` checks all namespaces at once; this per-namespace check runs only when that one
    found a change, to find which namespace to restore. Its loops run in C (``itemgetter``, ``map``,
    ``any``). Identity, never ``==``: a student's object may claim to equal anything.
    """

    def __init__(self, saved: dict):
        super().__init__(saved)
        keys = list(saved) * (2 if len(saved) == 1 else 1)  # itemgetter of one key returns the value, of two a tuple
        self.read = itemgetter(*keys) if keys else _read_nothing  # the saved keys' current values, in C
        self.values_read = tuple(saved[key] for key in keys)  # what ``read`` returned at the snapshot

    def any_rebound(self, current) -> bool:
        try:
            now = self.read(current)
        except KeyError:
            return True
        return any(map(is_not, now, self.values_read))

    def still_bound(self, current) -> bool:
        return not self.any_rebound(current)


class _ClassBindings(_Bindings):
    """A trusted class's entries as they were, and which added entry hides an attribute the class inherits.

    Setting ``pd.Series.__eq__`` adds an entry to ``Series`` (the method is ``OpsMixin``'s): no saved entry is
    rebound, yet every Series now compares as the student likes. An entry added since the snapshot whose name a
    base class (``object`` included) defines is such a mask, and :meth:`Snapshot.restore` deletes it; other
    added names (a cache a library sets on its class) are left alone.
    """

    def __init__(self, saved: dict, cls: type):
        super().__init__(saved)
        self._known = frozenset(vars(cls))
        self._inherited = frozenset(chain.from_iterable(vars(base) for base in cls.__mro__[1:]))

    def shadowing(self, current) -> list[str]:
        return sorted(key for key in current.keys() - self._known if key in self._inherited)

    def still_bound(self, current) -> bool:
        return super().still_bound(current) and not self.shadowing(current)


_DISABLED_FILENAME = "<disabled by dplib.testing>"  # dplib.testing.DISABLED_FILENAME (not imported: no cycle)


def _function_state(function: types.FunctionType) -> tuple:
    """``(code, defaults, kwdefaults, a copy of kwdefaults' entries)``: the dict itself is kept and put back."""
    kwdefaults = function.__kwdefaults__
    return function.__code__, function.__defaults__, kwdefaults, dict(kwdefaults) if kwdefaults is not None else None


def _same_state(function: types.FunctionType, state: tuple) -> bool:
    """Identity, not equality: defaults may be arrays, and a kwdefaults dict may be edited in place."""
    code, defaults, _, kwdefaults = state
    current = function.__kwdefaults__
    if function.__code__ is not code or function.__defaults__ is not defaults:
        return False
    if current is None or kwdefaults is None:
        return current is kwdefaults
    return current.keys() == kwdefaults.keys() and all(current[k] is v for k, v in kwdefaults.items())
