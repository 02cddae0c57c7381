"""The course's randomness contract, checked: :func:`check_uses_rng`.

The contract (``docs/authoring.md``, "Randomness"; every assignment that draws randomness states it
before its first randomized exercise): *every function with an ``rng`` argument draws all its random
numbers from one generator, made at its top with ``rng = np.random.default_rng(rng)``.* Noise that
repeats can be subtracted, so with ``rng=None`` every call draws anew (:func:`check_is_random`
checks that); and a function that ignores ``rng`` cannot be tested or reproduced, which this check
catches: given generators of the same seed it must return the same values, given generators of
different seeds other values. numpy's global generator (``np.random.laplace``, scipy's ``rvs``
without ``random_state``) and the ``random`` module ignore ``rng`` and fail it.

Like the other checks it compares plain copies of the student's values (:mod:`dplib.testing.values`),
bit for bit (:func:`dplib.testing.replay.digest`), runs the calls under :func:`dplib.testing.quiet`
(looked up when called) and keeps its defaults out of a student cell's reach
(:func:`dplib.testing.checks.keeping_defaults`).
"""

from __future__ import annotations

import builtins
import copy

import numpy as np

import dplib.testing as _testing
from dplib.testing.checks import fail, keeping_defaults
from dplib.testing.replay import digest as _digest
from dplib.testing.values import fingerprint

__all__ = ["check_uses_rng", "RNG_CONTRACT", "CONTRACT_SEEDS"]

# References taken at import time, out of reach of later monkeypatching.
_type, _range, _int = builtins.type, builtins.range, builtins.int
_deepcopy, _default_rng = copy.deepcopy, np.random.default_rng

#: The contract, as every failure message quotes it.
RNG_CONTRACT = ("Every function with an rng argument draws all its random numbers from one generator, made at its top "
                "with rng = np.random.default_rng(rng): not numpy's global generator (np.random.laplace, scipy's rvs "
                "without random_state), not the random module, not a generator of its own.")

#: The seeds of the generators the check hands to the function: the first twice, the second once.
CONTRACT_SEEDS = (2024, 7)


def _run(function, args: tuple, kwargs: dict, seed: int, calls: int, what: str, hint: str) -> list[bytes]:
    """The fingerprints of ``calls`` calls, each on fresh copies of the arguments, all given one generator of ``seed``."""
    generator = _default_rng(seed)
    results = []
    with _testing.quiet():
        for _ in _range(calls):
            results.append(function(*_deepcopy(args), rng=generator, **_deepcopy(kwargs)))
        return [_digest(fingerprint(result, what, hint)) for result in results]


def check_uses_rng(function, *args, what: str, calls: int = 1, hint: str = "", **kwargs) -> None:
    """Assert that ``function(*args, rng=..., **kwargs)`` draws all its random numbers from the ``rng`` it is given.

    ``function`` is called ``calls`` times in a row with ``rng=np.random.default_rng(2024)``, again
    with a new ``np.random.default_rng(2024)``, and with ``np.random.default_rng(7)``
    (:data:`CONTRACT_SEEDS`), on fresh copies of ``args`` and ``kwargs`` each time. The first two runs
    must return the same values, bit for bit: a function that also draws from numpy's global
    generator, the ``random`` module or a generator of its own fails. The third must return other
    values: a function that ignores ``rng`` fails. A generator created once at module level, used when
    ``rng`` is None, passes this check and fails :func:`check_is_random`; test a function with both.

    Choose the arguments and ``calls`` so that a correct function returns the same values for two
    different seeds with probability at most 1e-9, as for :func:`check_is_random`: one call on 100
    values or on one continuous value; for a coin answering 1 with probability 3/4, 73 calls.

    The calls run under :func:`quiet`; each result must be numbers (or a DataFrame: wrap a function
    returning anything else in a lambda that picks numbers out of it).

    Examples
    --------
    >>> import numpy as np
    >>> def noisy(values, rng=None):
    ...     rng = np.random.default_rng(rng)
    ...     return values + rng.laplace(size=np.shape(values))
    >>> check_uses_rng(noisy, np.zeros(100), what="noisy(np.zeros(100))")

    numpy's global generator ignores ``rng``:

    >>> check_uses_rng(lambda values, rng=None: values + np.random.laplace(size=np.shape(values)), np.zeros(100),
    ...                what="noisy(np.zeros(100))")
    Traceback (most recent call last):
    ...
    AssertionError: noisy(np.zeros(100)): run twice, each time with a new rng=np.random.default_rng(2024), it returned different values: some of its randomness does not come from rng. Every function with an rng argument draws all its random numbers from one generator, made at its top with rng = np.random.default_rng(rng): not numpy's global generator (np.random.laplace, scipy's rvs without random_state), not the random module, not a generator of its own.
    """
    if _type(calls) is not _int or calls < 1:
        raise ValueError(f"calls must be an integer >= 1, got {calls!r}")
    if "rng" in kwargs:
        raise TypeError("check_uses_rng passes rng itself: leave it out of the arguments")
    seed, other = CONTRACT_SEEDS
    first = _run(function, args, kwargs, seed, calls, what, hint)
    again = _run(function, args, kwargs, seed, calls, what, hint)
    with _testing.quiet():
        if first != again:
            fail(f"{what}: run twice, each time with a new rng=np.random.default_rng({seed}), it returned different "
                 f"values: some of its randomness does not come from rng. {RNG_CONTRACT}", hint)
    elsewhere = _run(function, args, kwargs, other, calls, what, hint)
    with _testing.quiet():
        if first == elsewhere:
            fail(f"{what}: called with rng=np.random.default_rng({seed}) and with rng=np.random.default_rng({other}), it "
                 f"returned the same values: it ignores rng (or draws nothing). {RNG_CONTRACT}", hint)


check_uses_rng = keeping_defaults(check_uses_rng)
