"""Assertions for autograder test cells: fair to correct answers, clear about wrong ones.

Rules these helpers enforce for every test that uses them:

- **Fixed false-failure probability.** Each statistical check rejects a correct
  implementation with probability at most ``false_failure`` (default 1e-6), decided
  in advance and never retried. Exact tests (binomial) use it as it is; tests that
  rest on a normal approximation use ``false_failure ** 1.5`` to leave room for the
  approximation, i.e. about six standard deviations at the default.
- **Helpful messages.** A failure says what was observed, what was expected, the
  sample size and a hint about the likely mistake.
- **Silence.** nbgrader scores 0 for any test cell that writes to stderr, so checks run
  the student's code with warnings and numpy floating-point errors silenced and stderr
  captured (:func:`quiet`).
- **No trusting rebindable names.** Student code runs in the same kernel and may
  rebind ``abs``, ``numpy.allclose`` and friends; this module keeps its own
  references, taken when it is imported (the notebook's first, read-only cell).
- **No credit for delegation.** :func:`disabled` makes a dplib function raise while a
  student's function is checked, so an answer that only calls dplib's reference
  implementation earns nothing.

The package holds the harness (:func:`quiet`, :func:`disabled`, :func:`substituted`) here and
the checks in :mod:`.checks`; every name below is importable from ``dplib.testing``. The
checks look up :func:`quiet` here when called, so the grading guard's wrapper of it
(:mod:`dpgrader.guard`) applies to them too.
"""

from __future__ import annotations

import contextlib
import io
import types
import warnings

import numpy as np

__all__ = [
    "DelegationError",
    "quiet",
    "disabled",
    "check_close",
    "check_binomial",
    "check_fraction",
    "check_categorical",
    "check_distribution",
    "check_mean",
    "binomial_bounds",
    "substituted",
]

# References taken at import time, out of reach of later monkeypatching.
_isinstance, _errstate = isinstance, np.errstate


class DelegationError(RuntimeError):
    """Raised by a dplib function that a test has disabled (see :func:`disabled`)."""


@contextlib.contextmanager
def quiet():
    """Silence warnings, numpy floating-point errors and stderr inside the block.

    Examples
    --------
    >>> import numpy as np
    >>> with quiet():
    ...     _ = np.log(0.0)
    """
    with warnings.catch_warnings(), _errstate(all="ignore"), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


DISABLED_FILENAME = "<disabled by dplib.testing>"  # the guard leaves a switched-off function's code alone


def _raiser(name: str) -> types.CodeType:
    """Code of a function that raises DelegationError; it runs with the disabled function's globals."""
    message = (
        f"dplib.{name} is switched off while your function is checked: write the code yourself "
        "instead of calling dplib's implementation."
    )
    source = f"def {name}(*args, **kwargs):\n    raise __import__('dplib.testing').testing.DelegationError({message!r})"
    namespace: dict = {}
    exec(compile(source, DISABLED_FILENAME, "exec"), {}, namespace)
    return namespace[name].__code__


@contextlib.contextmanager
def disabled(*functions):
    """Make the given dplib functions raise :class:`DelegationError` inside the block.

    The function's code object is swapped, so every alias of it (``dplib.f``,
    ``from dplib import f``, a module attribute) is disabled at once, and restored
    afterwards even if the block raises.

    Examples
    --------
    >>> import dplib
    >>> with disabled(dplib.laplace_tail):
    ...     try:
    ...         dplib.laplace_tail(1.0, 1.0, 1.0)
    ...     except DelegationError:
    ...         print("disabled")
    disabled
    >>> round(dplib.laplace_tail(1.0, 1.0, 1.0), 4)
    0.3679
    """
    originals = []
    try:
        for function in functions:
            if not _isinstance(function, types.FunctionType):
                raise TypeError(f"functions must be plain Python functions, got {function!r}")
            if function.__code__.co_freevars:
                raise TypeError(f"cannot disable closure {function.__name__}")
            originals.append((function, function.__code__))
            function.__code__ = _raiser(function.__name__)
        yield
    finally:
        for function, code in originals:
            function.__code__ = code


@contextlib.contextmanager
def substituted(namespace: dict, **names):
    """Bind ``names`` in ``namespace`` (a notebook's ``globals()``) inside the block; restore them afterwards.

    A test of a later exercise uses it to grade that exercise on its own: while
    ``satisfies_dp`` is checked, the student's ``max_privacy_loss`` is replaced by
    dplib's, so a mistake in one exercise costs that exercise's points only.

    Examples
    --------
    >>> namespace = {"f": len}
    >>> with substituted(namespace, f=abs, g=min):
    ...     namespace["f"](-2), namespace["g"](3, 1)
    (2, 1)
    >>> namespace["f"] is len, "g" in namespace
    (True, False)
    """
    missing = object()
    saved = {name: namespace.get(name, missing) for name in names}
    namespace.update(names)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is missing:
                namespace.pop(name, None)
            else:
                namespace[name] = value


# The checks, after the harness they use (dplib.testing.checks imports this package).
from dplib.testing.checks import (  # noqa: E402
    DEFAULT_FALSE_FAILURE,
    binomial_bounds,
    check_binomial,
    check_categorical,
    check_close,
    check_distribution,
    check_fraction,
    check_mean,
)
