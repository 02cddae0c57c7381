"""dplib's implementation of an exercise, as a copy of it would be compared: the function of the same name with
every dplib helper it calls, transitively (a student who pastes it pastes those too), fingerprinted once.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from functools import lru_cache

from dpgrader.review.reading import parse_cell
from dpgrader.similarity.winnowing import cell_fingerprints, statement_fingerprints


def defined_functions(code: str) -> list[str]:
    """Names of the functions a cell defines at its top level."""
    tree = parse_cell(code)
    return [n.name for n in (tree.body if tree else []) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def dplib_source(code: str) -> tuple[str, str] | None:
    """``(name, source)`` of the dplib function a solution cell implements, or None."""
    import dplib

    for name in defined_functions(code):
        function = getattr(dplib, name, None)
        if inspect.isfunction(function):
            return f"dplib.{name}", inspect.getsource(function)
    return None


def dplib_functions(name: str) -> dict[str, str]:
    """``qualified name -> source`` of ``dplib.<name>`` and of every dplib function it calls, transitively.

    A student who pastes dplib's implementation pastes its helpers too (``require_epsilon``,
    ``laplace_noise``, ...), under any name, as functions of their own or inlined: the copy
    is compared with all of them. Empty if dplib has no function ``name``.

    Raises
    ------
    OSError
        If the source of a dplib function cannot be read (the comparison cannot be made).
    """
    return dict(_dplib_functions(name))


@lru_cache(maxsize=None)
def _dplib_functions(name: str) -> tuple[tuple[str, str], ...]:
    """:func:`dplib_functions` as pairs, read once per process (dplib's source does not change under it)."""
    import dplib

    first = getattr(dplib, name, None)
    if not inspect.isfunction(first):
        return ()
    found: dict[str, str] = {}
    pending = [first]
    while pending:
        function = inspect.unwrap(pending.pop())
        key = f"{function.__module__}.{function.__qualname__}"
        if key in found:
            continue
        found[key] = textwrap.dedent(inspect.getsource(function))
        for node in ast.walk(ast.parse(found[key])):
            candidate = None
            if isinstance(node, ast.Name):
                candidate = function.__globals__.get(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                owner = function.__globals__.get(node.value.id)
                if inspect.ismodule(owner) and owner.__name__.split(".")[0] == "dplib":
                    candidate = getattr(owner, node.attr, None)
            if inspect.isfunction(candidate) and candidate.__module__.split(".")[0] == "dplib" \
                    and not candidate.__module__.startswith("dplib.testing"):
                pending.append(candidate)
    return tuple(found.items())


def library_for(code: str, reference: str) -> tuple[str, str, frozenset, frozenset] | None:
    """``(dplib.<name>, sources, fingerprints, statement fingerprints)`` of dplib's implementation of the
    functions ``code`` (or ``reference``) defines, with every dplib function they call; None if dplib has none."""
    for name in defined_functions(code) + defined_functions(reference):
        found = library_of(name)
        if found is not None:
            return found
    return None


@lru_cache(maxsize=None)
def library_of(name: str) -> tuple[str, str, frozenset, frozenset] | None:
    """``(dplib.<name>, sources, fingerprints, statement fingerprints)`` of ``dplib.<name>`` and its helpers."""
    functions = dplib_functions(name)
    if not functions:
        return None
    prints = frozenset().union(*[cell_fingerprints(text) for text in functions.values()])
    units = frozenset().union(*[statement_fingerprints(text) for text in functions.values()])
    return f"dplib.{name}", "\n\n".join(functions.values()), prints, units
