"""Which dplib functions a test switches off: the function asked for and every dplib helper behind its answer.

A test that switches off only ``dplib.max_privacy_loss`` still credits an answer written on top
of ``dplib.privacy_loss_per_output``, which computes all but the last line of it. So the set is
derived from the code: :func:`delegation_closure` follows the names a function's bytecode uses
(``co_names``, nested code included) to the dplib functions they stand for, directly or as an
attribute of a dplib module, and from those on, transitively. It leaves out

- validators, which check arguments and compute nothing of an answer: the functions of
  ``dplib._validation`` and ``dplib._arrays`` and any dplib function named ``require_*``,
  ``_require_*`` or ``_check_*``;
- tools a notebook hands to every exercise: the data loaders (``dplib.datasets``, ``dplib.images``,
  :func:`dplib.learning.local_model.adult_learning_data`), the plots and explorers (``dplib.plotting``,
  ``dplib.widgets``) and ``dplib.testing`` itself;
- whatever the test allows (``allow=``: a tool the notebook imports for the exercise, such as
  ``k_rand_resp`` in 08, or a function the test binds with :func:`dplib.testing.substituted`),
  together with the helpers *those* call.

The functions asked for are always switched off. :func:`raiser_code` is the code a switched-off
function runs: it raises :class:`dplib.testing.DelegationError` naming the function and, for a
helper, the function whose answer it computes. Its file name is :data:`DISABLED_FILENAME`, which
the grading guard (``dpgrader.guard``) reads as "switched off by a test: leave its code alone".
"""

from __future__ import annotations

import builtins
import types

DISABLED_FILENAME = "<disabled by dplib.testing>"

#: Modules whose functions are tools, never part of an answer.
TOOL_MODULES = ("dplib.datasets", "dplib.images", "dplib.plotting", "dplib.widgets", "dplib.testing")
#: Modules of validators and array helpers: they compute nothing of an answer.
HELPER_MODULES = ("dplib._validation", "dplib._arrays")
#: Prefixes of validators' names.
VALIDATOR_PREFIXES = ("require_", "_require_", "_check_")
#: Single functions that are tools: the data of 08's learning exercises.
TOOL_FUNCTIONS = ("dplib.learning.local_model.adult_learning_data", "dplib.learning.local_model._learning_splits", "dplib.learning.local_model._categorical")

_isinstance, _getattr, _sorted, _type = builtins.isinstance, builtins.getattr, builtins.sorted, builtins.type
_FunctionType, _ModuleType, _CodeType = types.FunctionType, types.ModuleType, types.CodeType


def module_of(function) -> str:
    """The name of the module whose namespace a function runs in (its ``__globals__``, which code cannot rebind)."""
    name = function.__globals__.get("__name__")
    return name if _type(name) is str else ""


def is_dplib_function(value) -> bool:
    """True for a plain Python function defined in a dplib module."""
    return _isinstance(value, _FunctionType) and module_of(value).split(".")[0] == "dplib"


def qualified_name(function) -> str:
    """``dplib.<name>`` when the package exports the function under its name, else ``<module>.<qualname>``."""
    import dplib

    if _getattr(dplib, function.__name__, None) is function:
        return f"dplib.{function.__name__}"
    return f"{module_of(function)}.{function.__qualname__}"


def computes_nothing_of_an_answer(function) -> bool:
    """Validators, array helpers and tools (see the module docstring): never switched off as helpers."""
    module = module_of(function)
    return (
        module.startswith(TOOL_MODULES + HELPER_MODULES)
        or function.__name__.startswith(VALIDATOR_PREFIXES)
        or f"{module}.{function.__qualname__}" in TOOL_FUNCTIONS
    )


def _codes(code: types.CodeType):
    """A code object and the code of the functions, lambdas and comprehensions nested in it."""
    yield code
    for constant in code.co_consts:
        if _isinstance(constant, _CodeType):
            yield from _codes(constant)


def referenced_functions(function) -> list:
    """The dplib functions a function's code names: its globals, and attributes of dplib modules it names.

    Examples
    --------
    >>> import dplib
    >>> [f.__name__ for f in referenced_functions(dplib.max_privacy_loss)]
    ['privacy_loss_per_output']
    """
    names = _sorted({name for code in _codes(function.__code__) for name in code.co_names})
    namespace = function.__globals__
    found = []
    for name in names:
        value = namespace.get(name)
        if _isinstance(value, _ModuleType) and value.__name__.split(".")[0] == "dplib":
            module_namespace = vars(value)  # not getattr: dplib's lazy submodules stay unloaded
            found += [module_namespace.get(attribute) for attribute in names]
        else:
            found.append(value)
    unique = []
    for value in found:
        if is_dplib_function(value) and value is not function and all(value is not seen for seen in unique):
            unique.append(value)
    return unique


def _reachable(functions) -> list:
    """``functions`` and, transitively, the dplib functions they reference that compute part of an answer."""
    reached: list = []
    pending = list(functions)
    while pending:
        function = pending.pop(0)
        if any(function is seen for seen in reached):
            continue
        reached.append(function)
        pending += [f for f in referenced_functions(function) if not computes_nothing_of_an_answer(f)]
    return reached


def delegation_closure(*functions, allow=()) -> tuple:
    """The functions :func:`dplib.testing.disabled` switches off: ``functions`` and the dplib helpers behind them.

    Parameters
    ----------
    *functions : function
        The functions a test checks the student's version of (plain Python functions).
    allow : iterable of function
        dplib functions the exercise may use (a tool the notebook imports, a function the test
        binds with ``substituted``): they, and the helpers they call, stay on.

    Examples
    --------
    >>> import dplib
    >>> [f.__name__ for f in delegation_closure(dplib.max_privacy_loss)]
    ['max_privacy_loss', 'privacy_loss_per_output']
    >>> [f.__name__ for f in delegation_closure(dplib.satisfies_dp, allow=[dplib.max_privacy_loss])]
    ['satisfies_dp']
    """
    for function in (*functions, *allow):
        if not _isinstance(function, _FunctionType):
            raise TypeError(f"functions must be plain Python functions, got {function!r}")
    allowed = _reachable(allow)
    clash = [f.__name__ for f in functions if any(f is a for a in allowed)]
    if clash:
        raise ValueError(f"cannot both switch off and allow {clash}: the allowed functions call them")
    closure = [f for f in _reachable(functions) if not any(f is a for a in allowed)]
    return tuple(closure)


_raisers: dict = {}


def raiser_code(function, root) -> types.CodeType:
    """Code that raises DelegationError for ``function`` (switched off to check ``root``); it runs with the function's globals."""
    name = function.__name__
    reason = "" if root is function else f" (it computes part of the answer of {qualified_name(root)})"
    message = (
        f"{qualified_name(function)} is switched off while your function is checked{reason}: write the code yourself "
        "instead of calling dplib's implementation."
    )
    key = (name, message)
    if key not in _raisers:
        source = f"def {name}(*args, **kwargs):\n    raise __import__('dplib.testing').testing.DelegationError({message!r})"
        namespace: dict = {}
        exec(compile(source, DISABLED_FILENAME, "exec"), {}, namespace)
        _raisers[key] = namespace[name].__code__
    return _raisers[key]


def roots(functions, closure) -> list:
    """For each function of ``closure``, the function of ``functions`` it was reached from (itself for those)."""
    found = []
    for member in closure:
        root = next((f for f in functions if f is member), None)
        if root is None:
            root = next(f for f in functions if any(member is r for r in _reachable([f])))
        found.append(root)
    return found
