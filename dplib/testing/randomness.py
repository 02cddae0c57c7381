"""The check that a randomized mechanism draws new randomness: :func:`check_is_random`.

A distribution test cannot tell a mechanism from a fixed table of well-chosen values; this check
fails one that returns the same value on every call, or that draws from a generator seeded once.
Each call is *given* its randomness (:mod:`dplib.testing.entropy`: a key from which every fresh
generator draws), and the calls run a second time from the same state in a forked copy of the
process (:mod:`dplib.testing.replay`): given the same keys again for a few calls chosen at random,
other keys for the rest. A function whose only randomness is a fresh generator repeats exactly
the calls given the same keys and no others; a generator seeded once repeats them all; and a
function that behaves otherwise in the copy (it reads a CPU clock, its process id, ``/proc``)
fails on the calls it cannot know were given the same keys. Like the other checks
(:mod:`dplib.testing.checks`) it compares plain copies of the student's values
(:mod:`dplib.testing.values`), runs them under :func:`dplib.testing.quiet` (looked up when called)
and keeps its defaults out of a student cell's reach (:func:`dplib.testing.checks.keeping_defaults`).
"""


from __future__ import annotations

import builtins
import time

import numpy as np
import pandas as pd

import dplib.testing as _testing
from dplib.testing.checks import fail, keeping_defaults
from dplib.testing.replay import CAN_REPLAY as _CAN_REPLAY
from dplib.testing.replay import ReplayError as _ReplayError
from dplib.testing.replay import digest as _digest
from dplib.testing.replay import seeded_generators as _seeded_generators
from dplib.testing.replay import start as _start_replay
from dplib.testing.entropy import KEY_BYTES as _KEY_BYTES
from dplib.testing.entropy import KeyStream as _KeyStream
from dplib.testing.entropy import new_key as _new_key
from dplib.testing.entropy import pinned_entropy as _pinned_entropy
from dplib.testing.values import fingerprint

__all__ = ["check_is_random", "REPLAY_GRACE_SECONDS", "REPRODUCED_CALLS"]

# References taken at import time, out of reach of later monkeypatching.
_len, _type, _range, _all, _zip = builtins.len, builtins.type, builtins.range, builtins.all, builtins.zip
_array_equal, _array2string = np.array_equal, np.array2string
_DataFrame = pd.DataFrame
_monotonic = time.monotonic
_argsort, _frombuffer, _uint64 = np.argsort, np.frombuffer, np.uint64

#: check_is_random waits this long for its replay, plus 4 times what its own calls took.
REPLAY_GRACE_SECONDS = 20.0
#: Calls, among ``calls + REPRODUCED_CALLS``, whose keys the replay is given again (chosen at random): a function that
#: behaves otherwise when it is replayed guesses which with probability 1 / C(calls + 4, 4), 1/15 for two calls.
REPRODUCED_CALLS = 4


def _same(first: tuple, second: tuple) -> bool:
    return _len(first) == _len(second) and _all(
        a.shape == b.shape and a.dtype.kind == b.dtype.kind and _array_equal(a, b, equal_nan=a.dtype.kind == "f")
        for a, b in _zip(first, second))


def _fingerprints_of_calls(function, args: tuple, kwargs: dict, keys: list, pinned: dict, what: str,
                           hint: str) -> tuple[list, list]:
    """One result of ``function(*args, **kwargs)`` per key, each drawn from that key (run under :func:`quiet`), and
    their fingerprints."""
    results = []
    with _testing.quiet():
        for key in keys:
            with _pinned_entropy(key, **pinned):
                results.append(function(*args, **kwargs))
    with _testing.quiet():
        return results, [fingerprint(result, what, hint) for result in results]


def _digests(fingerprints: list) -> list[bytes]:
    return [_digest(fingerprint) for fingerprint in fingerprints]


def _replayed_digests(function, args: tuple, kwargs: dict, pinned: dict, what: str, hint: str):
    """What the replay computes from the keys it is given: the digest of each call's result, one after another."""
    def compute(given: bytes) -> bytes:
        keys = [given[i:i + _KEY_BYTES] for i in _range(0, _len(given), _KEY_BYTES)]
        return b"".join(_digests(_fingerprints_of_calls(function, args, kwargs, keys, pinned, what, hint)[1]))
    return compute


def check_is_random(function, *args, what: str, calls: int = 2, hint: str = "", **kwargs) -> None:
    """Assert that ``function(*args, **kwargs)`` draws new randomness: from no fixed seed, not the same every call.

    A distribution test cannot tell a mechanism from a fixed table of well-chosen values (the
    quantiles of the right distribution pass every test of the distribution): each distribution
    test of a randomized exercise therefore also checks that the mechanism draws new randomness on
    every call, for an array and for a single value. Two things fail:

    - **The same value on every call**: ``calls`` calls all return the same value.
    - **A fixed seed**: ``calls`` calls run a second time from the same starting state, in a
      forked copy of the process (:mod:`dplib.testing.replay`), given other randomness than the
      first time, return the same values as the first time. That is what a generator created
      once does, whatever its seed: a generator
      seeded at module level (``_RNG = np.random.default_rng(0)``, ``rng if rng is not None else
      _RNG``), one created in another cell (the notebook's own seeded ``rng``), or a module-level
      ``np.random.default_rng()`` without a seed, which is one fixed table per run of the notebook
      too. The course's ``rng=None`` means a fresh ``np.random.default_rng()`` on every call
      (``rng = np.random.default_rng(rng)``, ``if rng is None: rng = np.random.default_rng()``):
      it draws from the randomness each call is given, and passes. numpy's
      global generator (``np.random.laplace``, scipy's ``rvs``) and the ``random`` module are
      reseeded in the copy, as a fresh run of the notebook would, unless code seeded them after
      ``dplib.testing`` was imported (``np.random.seed(0)``, ``random.seed(0)``): then they fail.
      A ``function`` called with an explicit generator in ``kwargs`` fails the same way (the same
      generator state replays the same draws). Where the platform cannot fork (not Linux) only
      the first check runs; where it can, the check fails closed when the replay cannot run (a
      limit on processes), raises, or does not finish within :data:`REPLAY_GRACE_SECONDS` plus 4
      times what the calls took.
    - **Something besides randomness**: :data:`REPRODUCED_CALLS` more calls are made, and that
      many of all the calls, chosen at random, are given the same randomness in the copy as in
      this process: each must return the same values there. A function whose result depends on
      anything but its random generator fails, e.g. one that draws from a fresh generator only
      where it finds it runs in a copy (a CPU clock near zero, another process id, ``/proc``)
      and from a seeded one here: it would have to guess which calls are repeated (1 chance in
      C(calls + 4, 4), 1/15 for two calls). So does a generator seeded from the clock. The
      review flags code that reads a CPU clock or process statistics, and the ways two runs
      could talk to each other (files, shared memory) that would let a function learn which
      calls are repeated.

    The calls run under :func:`quiet`; each result must be numbers (or a DataFrame) and is
    compared as a plain copy, bit for bit in the replay.

    Choose the arguments and ``calls`` so that a correct mechanism repeats itself with probability
    at most 1e-9: two calls on 100 values, or on one continuous value, never agree; for one coin
    answering 1 with probability 3/4, 73 calls all agree with probability (3/4)^73 + (1/4)^73 < 1e-9.
    The replay is then safe too: two runs of ``calls`` independent calls, each with outcome
    probabilities p_i, agree with probability (sum_i p_i^2)^calls <= (max_i p_i)^calls, at most
    the probability that the ``calls`` calls of one run all agree.

    Examples
    --------
    >>> import numpy as np
    >>> check_is_random(lambda values: values + np.random.default_rng().laplace(size=np.shape(values)),
    ...                 np.zeros(100), what="laplace noise")
    >>> check_is_random(lambda values: values + 1.0, np.zeros(100), what="f(np.zeros(100))",
    ...                 hint="Draw the noise with rng.laplace.")
    Traceback (most recent call last):
    ...
    AssertionError: f(np.zeros(100)): 6 calls all returned the same [1. 1. 1. ... 1. 1. 1.]: a randomized mechanism must draw new randomness on every call (with rng=None a fresh np.random.default_rng(), not a fixed seed, a fixed pattern of noise or no noise). Draw the noise with rng.laplace.

    A generator seeded once differs from call to call, but not from one run to the next:

    >>> seeded = np.random.default_rng(0)
    >>> check_is_random(lambda values: values + seeded.laplace(size=np.shape(values)),
    ...                 np.zeros(100), what="f(np.zeros(100))")
    Traceback (most recent call last):
    ...
    AssertionError: f(np.zeros(100)): run twice from the same state, its 2 calls returned the same values both times: the noise comes from a generator seeded or created once, outside the call (np.random.default_rng(0) at module level, np.random.seed, the notebook's rng). With rng=None, create a fresh np.random.default_rng() in every call.
    """
    if not 2 <= calls:
        raise ValueError(f"calls must be an integer >= 2, got {calls!r}")
    numpy_seeded, random_seeded = _seeded_generators()
    pinned = {"reseed_numpy": not numpy_seeded, "reseed_random": not random_seeded}
    replay, replay_error = None, None
    if _CAN_REPLAY:
        try:
            replay = _start_replay(_replayed_digests(function, args, kwargs, pinned, what, hint))
        except _ReplayError as error:
            replay_error = error
    try:
        # Keys made after the fork: the replay never holds them, only the ones it is sent.
        count = calls + REPRODUCED_CALLS
        keys = [_new_key() for _ in _range(count)]
        reproduced = _chosen(count, REPRODUCED_CALLS)
        if replay is not None:
            try:
                replay.send(b"".join(keys[i] if i in reproduced else _new_key() for i in _range(count)))
            except _ReplayError as error:
                replay_error = error
        started = _monotonic()
        results, fingerprints = _fingerprints_of_calls(function, args, kwargs, keys, pinned, what, hint)
        took = _monotonic() - started
        with _testing.quiet():
            if _all(_same(fingerprints[0], other) for other in fingerprints[1:]):
                shown = _array2string(fingerprints[0][0], threshold=10, edgeitems=3) if _type(results[0]) is not _DataFrame else "DataFrame"
                fail(
                    f"{what}: {count} calls all returned the same {shown}: a randomized mechanism must draw new randomness on "
                    "every call (with rng=None a fresh np.random.default_rng(), not a fixed seed, a fixed pattern of noise "
                    "or no noise).",
                    hint,
                )
        if replay_error is None and replay is not None:
            try:
                replayed = replay.collect(timeout=REPLAY_GRACE_SECONDS + 4 * took)
            except _ReplayError as error:
                replay_error = error
            else:
                _compare_with_replay(_digests(fingerprints), replayed, reproduced, what, hint)
        if replay_error is not None:
            fail(f"{what}: could not run the {count} calls a second time from the same state to check for a fixed seed "
                  f"({replay_error}).", hint)
    finally:
        if replay is not None:
            replay.close()


def _chosen(count: int, how_many: int) -> frozenset:
    """``how_many`` of ``range(count)``, chosen uniformly with the operating system's entropy."""
    order = _argsort(_frombuffer(_KeyStream(_new_key()).read(8 * count), dtype=_uint64), kind="stable")
    return frozenset(int(i) for i in order[:how_many])


def _compare_with_replay(here: list[bytes], replayed: bytes, reproduced: frozenset, what: str, hint: str) -> None:
    """Fail unless the replay repeated every call given the same key, and not every call given another key."""
    with _testing.quiet():
        there = [replayed[i:i + 32] for i in _range(0, _len(replayed), 32)]
        if _len(there) != _len(here):
            fail(f"{what}: the second run from the same state made {_len(there)} calls, not {_len(here)}.", hint)
        for i in sorted(reproduced):
            if there[i] != here[i]:
                fail(
                    f"{what}: run twice from the same state with the same random numbers, call {i + 1} returned other "
                    "values the second time: the result depends on something besides the random generator (a clock, "
                    "the process it runs in, a counter of runs). Draw all randomness from rng (with rng=None a fresh "
                    "np.random.default_rng()) and nothing else.",
                    hint,
                )
        if _all(there[i] == here[i] for i in _range(_len(here)) if i not in reproduced):
            fail(
                f"{what}: run twice from the same state, its {_len(here) - _len(reproduced)} calls returned the same values "
                "both times: the noise comes from a generator seeded or created once, outside the call "
                "(np.random.default_rng(0) at module level, np.random.seed, the notebook's rng). With rng=None, create a "
                "fresh np.random.default_rng() in every call.",
                hint,
            )


check_is_random = keeping_defaults(check_is_random)
