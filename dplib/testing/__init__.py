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
- **No trusting the student's values.** Every check looks at the exact type of what the
  student's function returned before it compares anything, and compares a plain copy
  (:mod:`.values`): an object that claims to equal everything (a ``MagicMock``, a float
  subclass) fails with a message naming its type. :func:`check_number`, :func:`check_array`,
  :func:`check_bool` and :func:`check_frame` return such a copy for a test to work with.
- **No credit for delegation.** :func:`disabled` makes a dplib function raise while a
  student's function is checked, and with it every dplib helper that computes part of its
  answer (derived from the code, :mod:`.delegation`), so an answer that calls dplib's
  reference implementation, or the helper behind it, earns nothing.
- **No credit for a fixed table.** :func:`check_is_random` fails a randomized mechanism whose
  calls all return the same value, however well those values follow the distribution, and
  one that draws from a fixed seed: run again from the same state in a forked copy of the
  process (:mod:`.replay`) and given other randomness (:mod:`.entropy`), it returns the same
  values again; and one whose values depend on anything but its random generator (a function
  that draws afresh only where it finds it runs in the copy): given the same randomness for
  calls chosen at random, it does not repeat them.
- **One randomness rule.** Every function with an ``rng`` argument draws all its random numbers
  from one generator, made at its top with ``rng = np.random.default_rng(rng)``:
  :func:`check_uses_rng` (:mod:`.rng_contract`) fails one that ignores ``rng`` (numpy's global
  generator, the ``random`` module), and :func:`check_is_random` one that falls back on a generator
  created once.

The package holds the harness (:func:`quiet`, :func:`disabled`, :func:`substituted`) here,
the derivation of what :func:`disabled` switches off in :mod:`.delegation`, the type checks of
the student's values in :mod:`.values`, the statistical checks in :mod:`.checks` and the check
that a mechanism draws new randomness in :mod:`.randomness`; every name below is importable from
``dplib.testing``. The checks look up :func:`quiet` here when called, so the grading guard's
wrapper of it (:mod:`dpgrader.guard`) applies to them too.
"""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np

from dplib.testing import delegation as _delegation
from dplib.testing.delegation import DISABLED_FILENAME, delegation_closure

__all__ = [
    "DelegationError",
    "quiet",
    "disabled",
    "delegation_closure",
    "check_array",
    "check_bool",
    "check_equal",
    "check_frame",
    "check_is_random",
    "check_uses_rng",
    "check_number",
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
_errstate = np.errstate


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


@contextlib.contextmanager
def disabled(*functions, allow=()):
    """Make the given dplib functions, and the dplib helpers behind their answers, raise :class:`DelegationError`.

    What is switched off is :func:`delegation_closure` of ``functions``: each function and every
    dplib function its code calls, transitively, that computes part of its answer (validators
    and data loaders stay on). ``allow`` names dplib functions the exercise may use, e.g. a tool
    the notebook imports or the functions a :func:`substituted` block binds; they and the helpers
    they call stay on. A function some enclosing block already switched off is left as it is.

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
    >>> with disabled(dplib.max_privacy_loss):  # the helper that computes the losses is off too
    ...     dplib.privacy_loss_per_output([0.5, 0.5], [0.25, 0.75])
    Traceback (most recent call last):
    ...
    dplib.testing.DelegationError: dplib.privacy_loss_per_output is switched off while your function is checked (it computes part of the answer of dplib.max_privacy_loss): write the code yourself instead of calling dplib's implementation.
    >>> with substituted({}, max_privacy_loss=dplib.max_privacy_loss) as provided, disabled(dplib.satisfies_dp, allow=provided):
    ...     dplib.max_privacy_loss([0.75, 0.25], [0.25, 0.75]) > 1.09
    True
    """
    closure = _delegation.delegation_closure(*functions, allow=allow)
    for function in closure:
        if function.__code__.co_freevars:
            raise TypeError(f"cannot disable closure {function.__name__}")
    switched = [(function, root) for function, root in zip(closure, _delegation.roots(functions, closure))
                if function.__code__.co_filename != DISABLED_FILENAME]  # already off in an enclosing block
    originals = []
    try:
        for function, root in switched:
            originals.append((function, function.__code__))
            function.__code__ = _delegation.raiser_code(function, root)
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

    The block's value is the tuple of bound values, for :func:`disabled`'s ``allow``: while
    ``satisfies_dp`` is checked, ``dplib.max_privacy_loss`` is handed to the student and stays on.

    >>> import dplib
    >>> with substituted(namespace, max_privacy_loss=dplib.max_privacy_loss) as provided:
    ...     provided == (dplib.max_privacy_loss,)
    True
    """
    missing = object()
    saved = {name: namespace.get(name, missing) for name in names}
    namespace.update(names)
    try:
        yield tuple(names.values())
    finally:
        for name, value in saved.items():
            if value is missing:
                namespace.pop(name, None)
            else:
                namespace[name] = value


# The checks, after the harness they use (dplib.testing.checks, .randomness and .values import this package).
from dplib.testing.checks import (  # noqa: E402
    DEFAULT_FALSE_FAILURE,
    MIN_DISTRIBUTION_SAMPLES,
    binomial_bounds,
    check_binomial,
    check_categorical,
    check_close,
    check_distribution,
    check_fraction,
    check_mean,
)
from dplib.testing.randomness import check_is_random  # noqa: E402
from dplib.testing.rng_contract import check_uses_rng  # noqa: E402
from dplib.testing.values import check_array, check_bool, check_equal, check_frame, check_number  # noqa: E402
