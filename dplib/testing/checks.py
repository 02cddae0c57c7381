"""The checks of :mod:`dplib.testing`: closeness, binomial and categorical counts, distributions, means, randomness.

Each check first turns the student's values into plain numpy arrays after checking their exact
types (:mod:`dplib.testing.values`: a MagicMock or a float subclass never reaches a comparison),
runs under :func:`dplib.testing.quiet` (looked up when called, so the grading guard's wrapper of it
applies) and keeps its tolerances out of a student cell's reach.
"""

from __future__ import annotations

import builtins
import functools
import math
import time

import numpy as np
import pandas as pd
from scipy import stats

import dplib.testing as _testing
from dplib.testing.replay import CAN_REPLAY as _CAN_REPLAY
from dplib.testing.replay import ReplayError as _ReplayError
from dplib.testing.replay import digest as _digest
from dplib.testing.replay import start as _start_replay
from dplib.testing.values import check_frame, plain_array

DEFAULT_FALSE_FAILURE = 1e-6

# References taken at import time, out of reach of later monkeypatching.
_abs, _len, _isinstance, _float, _bool = builtins.abs, builtins.len, builtins.isinstance, builtins.float, builtins.bool
_asarray, _isfinite, _isnan, _shape = np.asarray, np.isfinite, np.isnan, np.shape
_absolute, _less_equal = np.absolute, np.less_equal
_errstate, _count_nonzero, _bincount, _array_equal = np.errstate, np.count_nonzero, np.bincount, np.array_equal
_sqrt, _monotonic = math.sqrt, time.monotonic
_binom_ppf, _binom_isf = stats.binom.ppf, stats.binom.isf
_chisquare, _kstest, _norm_isf = stats.chisquare, stats.kstest, stats.norm.isf
_DataFrame, _hash_pandas_object, _array2string = pd.DataFrame, pd.util.hash_pandas_object, np.array2string
_type, _range, _all, _zip = builtins.type, builtins.range, builtins.all, builtins.zip

#: check_is_random waits this long for its replay, plus 4 times what its own calls took.
REPLAY_GRACE_SECONDS = 20.0

#: The Kolmogorov-Smirnov check refuses fewer samples: with them a wrong distribution passes too easily.
MIN_DISTRIBUTION_SAMPLES = 100


def _allclose(got: np.ndarray, want: np.ndarray, *, rtol: float, atol: float) -> bool:
    """``numpy.allclose(..., equal_nan=True)`` from saved ufuncs: numpy's own looks up the builtin ``abs``."""
    with _errstate(invalid="ignore"):
        close = _less_equal(_absolute(got - want), atol + rtol * _absolute(want)) & _isfinite(want)
        close = close | (got == want) | (_isnan(got) & _isnan(want))
    return _bool(close.all())


def _fail(message: str, hint: str):
    raise AssertionError(f"{message}{' ' + hint if hint else ''}")


def check_close(actual, expected, *, name: str = "result", rtol: float = 1e-6, atol: float = 1e-9, hint: str = "") -> None:
    """Assert ``actual`` equals ``expected`` up to rounding, with the same shape.

    Examples
    --------
    >>> check_close(0.1 + 0.2, 0.3)
    >>> check_close([1.0, 2.0], [1.0, 2.5], name="counts", hint="Did you divide by p - q?")
    Traceback (most recent call last):
    ...
    AssertionError: counts: expected [1.  2.5], got [1. 2.]. Did you divide by p - q?

    ``actual`` must be numbers (int, float, bool, numpy scalars, or lists, tuples, arrays, Series
    of them): anything else fails, whatever it claims to equal.

    >>> from unittest import mock
    >>> check_close(mock.MagicMock(), 1.0, name="max_privacy_loss(...)")
    Traceback (most recent call last):
    ...
    AssertionError: max_privacy_loss(...): expected numbers, got MagicMock.
    """
    with _testing.quiet():
        got = plain_array(actual, name, hint).astype(float)
        want = _asarray(expected, dtype=float)
        if _shape(got) != _shape(want):
            _fail(f"{name}: expected shape {_shape(want)}, got shape {_shape(got)} ({got}).", hint)
        if not _allclose(got, want, rtol=rtol, atol=atol):
            _fail(f"{name}: expected {want}, got {got}.", hint)


def binomial_bounds(trials: int, p: float, false_failure: float = DEFAULT_FALSE_FAILURE) -> tuple[int, int]:
    """Acceptance region ``[low, high]`` holding Binomial(trials, p) with probability >= 1 - false_failure.

    Examples
    --------
    >>> binomial_bounds(10_000, 0.5)
    (4755, 5245)
    """
    low = int(_binom_ppf(false_failure / 2, trials, p))
    high = int(_binom_isf(false_failure / 2, trials, p))
    return low, high


def check_binomial(
    successes: int, trials: int, p: float, *, what: str, hint: str = "", false_failure: float = DEFAULT_FALSE_FAILURE
) -> None:
    """Assert ``successes`` out of ``trials`` is consistent with probability ``p`` (exact two-sided test).

    Examples
    --------
    >>> check_binomial(5010, 10_000, 0.5, what="share of heads")
    >>> check_binomial(7500, 10_000, 0.5, what="share of truthful answers", hint="Did you swap p and q?")
    Traceback (most recent call last):
    ...
    AssertionError: share of truthful answers: expected about 50.00% (n=10000, acceptable 47.55%..52.45%), got 75.00%. Did you swap p and q?
    """
    low, high = binomial_bounds(trials, p, false_failure)
    if low <= 0 and high >= trials:
        _fail(f"{what}: {trials} samples are too few to test (any share of them would pass).", hint)
    if not low <= successes <= high:
        _fail(
            f"{what}: expected about {p:.2%} (n={trials}, acceptable {low / trials:.2%}..{high / trials:.2%}), "
            f"got {successes / trials:.2%}.",
            hint,
        )


def check_fraction(flags, p: float, *, what: str, hint: str = "", false_failure: float = DEFAULT_FALSE_FAILURE) -> None:
    """Assert the share of true entries in ``flags`` is consistent with probability ``p``.

    Examples
    --------
    >>> import numpy as np
    >>> check_fraction(np.random.default_rng(0).random(10_000) < 0.25, 0.25, what="share of 1s")
    """
    with _testing.quiet():
        flags = plain_array(flags, what, hint).ravel()
        check_binomial(int(_count_nonzero(flags)), int(flags.size), p, what=what, hint=hint, false_failure=false_failure)


def check_categorical(
    samples, probabilities, *, what: str, hint: str = "", false_failure: float = DEFAULT_FALSE_FAILURE
) -> None:
    """Assert integer ``samples`` follow ``probabilities`` over ``0..k-1`` (chi-square test).

    Values outside ``0..k-1``, or a value seen that should have probability 0, fail
    outright.

    Examples
    --------
    >>> import numpy as np
    >>> check_categorical(np.random.default_rng(0).integers(0, 3, 30_000), [1/3, 1/3, 1/3], what="reports")
    """
    with _testing.quiet():
        expected_p = _asarray(probabilities, dtype=float)
        k = expected_p.size
        values = plain_array(samples, what, hint, expected=f"integers in 0..{k - 1}").ravel()
        if values.size == 0:
            _fail(f"{what}: got no samples.", hint)
        if not np.issubdtype(values.dtype, np.number) or (values != np.round(values)).any():
            _fail(f"{what}: expected integers in 0..{k - 1}, got {values[:5]}...", hint)
        values = values.astype(np.int64)
        if values.min() < 0 or values.max() >= k:
            _fail(f"{what}: expected integers in 0..{k - 1}, got a {values.min() if values.min() < 0 else values.max()}.", hint)
        observed = _bincount(values, minlength=k)
        n = values.size
        impossible = expected_p == 0
        if (observed[impossible] > 0).any():
            _fail(f"{what}: got values {np.nonzero(impossible & (observed > 0))[0].tolist()} that should never occur.", hint)
        expected = expected_p[~impossible] * n
        if (expected < 20).any():
            raise ValueError("check_categorical needs >= 20 expected samples in every category: use more samples")
        statistic, p_value = _chisquare(observed[~impossible], expected)
        if p_value < false_failure ** 1.5:
            _fail(
                f"{what}: the shares {np.round(observed / n, 4).tolist()} (n={n}) are too far from the expected "
                f"{np.round(expected_p, 4).tolist()} (chi-square {statistic:.1f}, p-value {p_value:.1e}).",
                hint,
            )


def check_distribution(samples, cdf, *, what: str, hint: str = "", false_failure: float = DEFAULT_FALSE_FAILURE) -> None:
    """Assert continuous ``samples`` follow the distribution with the given ``cdf`` (Kolmogorov-Smirnov).

    At least :data:`MIN_DISTRIBUTION_SAMPLES` finite samples are needed.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> noise = np.random.default_rng(0).laplace(0, 2, 20_000)
    >>> check_distribution(noise, stats.laplace(scale=2).cdf, what="noise")
    """
    with _testing.quiet():
        values = plain_array(samples, what, hint).astype(float).ravel()
        if values.size == 0 or not _isfinite(values).all():
            _fail(f"{what}: expected finite numbers, got {values[:5]}...", hint)
        if values.size < MIN_DISTRIBUTION_SAMPLES:
            _fail(f"{what}: expected at least {MIN_DISTRIBUTION_SAMPLES} samples, got {values.size}.", hint)
        result = _kstest(values, cdf)
        if result.pvalue < false_failure:
            _fail(
                f"{what}: the {values.size} samples do not follow the expected distribution "
                f"(largest gap between the CDFs {result.statistic:.3f}, p-value {result.pvalue:.1e}); "
                f"sample mean {values.mean():.4g}, sample std {values.std():.4g}.",
                hint,
            )


def check_mean(
    samples, expected_mean: float, expected_std: float, *, what: str, hint: str = "",
    false_failure: float = DEFAULT_FALSE_FAILURE,
) -> None:
    """Assert the mean of ``samples`` is within z standard errors of ``expected_mean``.

    ``expected_std`` is the standard deviation of one sample under a correct
    implementation; z is chosen so the normal approximation fails a correct answer
    with probability ``false_failure ** 1.5`` (about 6.1 standard errors at 1e-6).

    Examples
    --------
    >>> import numpy as np
    >>> check_mean(np.random.default_rng(0).normal(5, 2, 10_000), 5, 2, what="noisy answers")
    """
    with _testing.quiet():
        values = plain_array(samples, what, hint).astype(float).ravel()
        n = values.size
        if n == 0 or not _isfinite(values).all():
            _fail(f"{what}: expected finite numbers, got {values[:5]}...", hint)
        z = _norm_isf(false_failure**1.5 / 2)
        margin = z * expected_std / _sqrt(n)
        mean = _float(values.mean())
        if _abs(mean - expected_mean) > margin:
            _fail(
                f"{what}: expected a mean of about {expected_mean:.4g} (n={n}, acceptable +/- {margin:.3g}), "
                f"got {mean:.4g}.",
                hint,
            )


def _fingerprint(value, what: str, hint: str):
    """What two results of a mechanism are compared by: a plain array, or the hashes of a checked DataFrame."""
    if _type(value) is _DataFrame:
        frame = check_frame(value, name=what, hint=hint)
        return _asarray(_hash_pandas_object(frame, index=True).to_numpy()), _asarray(frame.columns.astype(str).to_numpy())
    return (plain_array(value, what, hint),)


def _same(first: tuple, second: tuple) -> bool:
    return _len(first) == _len(second) and _all(
        a.shape == b.shape and a.dtype.kind == b.dtype.kind and _array_equal(a, b, equal_nan=a.dtype.kind == "f")
        for a, b in _zip(first, second))


def _fingerprints_of_calls(function, args: tuple, kwargs: dict, calls: int, what: str, hint: str) -> tuple[list, list]:
    """``calls`` results of ``function(*args, **kwargs)`` (run under :func:`quiet`) and their fingerprints."""
    with _testing.quiet():
        results = [function(*args, **kwargs) for _ in _range(calls)]
    with _testing.quiet():
        return results, [_fingerprint(result, what, hint) for result in results]


def _digest_of_calls(function, args: tuple, kwargs: dict, calls: int, what: str, hint: str) -> bytes:
    return _digest([array for fingerprint in _fingerprints_of_calls(function, args, kwargs, calls, what, hint)[1]
                    for array in fingerprint])


def check_is_random(function, *args, what: str, calls: int = 2, hint: str = "", **kwargs) -> None:
    """Assert that ``function(*args, **kwargs)`` draws new randomness: from no fixed seed, not the same every call.

    A distribution test cannot tell a mechanism from a fixed table of well-chosen values (the
    quantiles of the right distribution pass every test of the distribution): each distribution
    test of a randomized exercise therefore also checks that the mechanism draws new randomness on
    every call, for an array and for a single value. Two things fail:

    - **The same value on every call**: ``calls`` calls all return the same value.
    - **A fixed seed**: the ``calls`` calls run a second time from the same starting state, in a
      forked copy of the process (:mod:`dplib.testing.replay`), return the same values as the
      first time. That is what a generator created once does, whatever its seed: a generator
      seeded at module level (``_RNG = np.random.default_rng(0)``, ``rng if rng is not None else
      _RNG``), one created in another cell (the notebook's own seeded ``rng``), or a module-level
      ``np.random.default_rng()`` without a seed, which is one fixed table per run of the notebook
      too. The course's ``rng=None`` means a fresh ``np.random.default_rng()`` on every call
      (``rng = np.random.default_rng(rng)``, ``if rng is None: rng = np.random.default_rng()``):
      it takes new entropy from the operating system in the copy as well, and passes. numpy's
      global generator (``np.random.laplace``, scipy's ``rvs``) and the ``random`` module are
      reseeded in the copy, as a fresh run of the notebook would, unless code seeded them after
      ``dplib.testing`` was imported (``np.random.seed(0)``, ``random.seed(0)``): then they fail.
      A ``function`` called with an explicit generator in ``kwargs`` fails the same way (the same
      generator state replays the same draws). Where the platform cannot fork (not Linux) only
      the first check runs; where it can, the check fails closed when the replay cannot run (a
      limit on processes), raises, or does not finish within :data:`REPLAY_GRACE_SECONDS` plus 4
      times what the calls took. Code that asks whether it runs in a copy (``os.getpid()``) can
      tell the runs apart: the review flags it.

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
    AssertionError: f(np.zeros(100)): 2 calls all returned the same [1. 1. 1. ... 1. 1. 1.]: a randomized mechanism must draw new randomness on every call (with rng=None a fresh np.random.default_rng(), not a fixed seed, a fixed pattern of noise or no noise). Draw the noise with rng.laplace.

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
    replay, replay_error = None, None
    if _CAN_REPLAY:
        try:
            replay = _start_replay(lambda: _digest_of_calls(function, args, kwargs, calls, what, hint))
        except _ReplayError as error:
            replay_error = error
    try:
        started = _monotonic()
        results, fingerprints = _fingerprints_of_calls(function, args, kwargs, calls, what, hint)
        took = _monotonic() - started
        with _testing.quiet():
            if _all(_same(fingerprints[0], other) for other in fingerprints[1:]):
                shown = _array2string(fingerprints[0][0], threshold=10, edgeitems=3) if _type(results[0]) is not _DataFrame else "DataFrame"
                _fail(
                    f"{what}: {calls} calls all returned the same {shown}: a randomized mechanism must draw new randomness on "
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
                if replayed == _digest([array for fingerprint in fingerprints for array in fingerprint]):
                    _fail(
                        f"{what}: run twice from the same state, its {calls} calls returned the same values both times: the "
                        "noise comes from a generator seeded or created once, outside the call (np.random.default_rng(0) at "
                        "module level, np.random.seed, the notebook's rng). With rng=None, create a fresh "
                        "np.random.default_rng() in every call.",
                        hint,
                    )
        if replay_error is not None:
            _fail(f"{what}: could not run the {calls} calls a second time from the same state to check for a fixed seed "
                  f"({replay_error}).", hint)
    finally:
        if replay is not None:
            replay.close()


# --- tolerances out of reach (issue 12) ------------------------------------------------------------------
# A check's tolerances and false-failure rate are its keyword defaults. A student cell could change
# them by attribute assignment (``check_close.__kwdefaults__["atol"] = 1e9``) or swap a check's code.
# Each public check is therefore a thin wrapper that, on every call, first puts back the code and the
# defaults captured in its closure at import; the kernel guard (dpgrader.guard) in turn restores
# the wrappers' own code before every cell and after every ``disabled``/``quiet`` block.


def _keeping_defaults(function):
    code, defaults, kwdefaults = function.__code__, function.__defaults__, dict(function.__kwdefaults__ or {})

    @functools.wraps(function)
    def check(*args, **kwargs):
        function.__code__, function.__defaults__, function.__kwdefaults__ = code, defaults, dict(kwdefaults)
        return function(*args, **kwargs)

    return check


binomial_bounds = _keeping_defaults(binomial_bounds)
check_close = _keeping_defaults(check_close)
check_binomial = _keeping_defaults(check_binomial)
check_fraction = _keeping_defaults(check_fraction)
check_categorical = _keeping_defaults(check_categorical)
check_distribution = _keeping_defaults(check_distribution)
check_mean = _keeping_defaults(check_mean)
check_is_random = _keeping_defaults(check_is_random)
