"""The checks of :mod:`dplib.testing`: closeness, binomial and categorical counts, distributions, means.

Each check first turns the student's values into plain numpy arrays after checking their exact
types (:mod:`dplib.testing.values`: a MagicMock or a float subclass never reaches a comparison),
runs under :func:`dplib.testing.quiet` (looked up when called, so the grading guard's wrapper of it
applies) and keeps its tolerances out of a student cell's reach (:func:`keeping_defaults`). The
check that a mechanism draws new randomness is :mod:`dplib.testing.randomness`.
"""

from __future__ import annotations

import builtins
import functools
import math

import numpy as np
from scipy import stats

import dplib.testing as _testing
from dplib.testing.values import plain_array

DEFAULT_FALSE_FAILURE = 1e-6

# References taken at import time, out of reach of later monkeypatching.
_abs, _float, _bool = builtins.abs, builtins.float, builtins.bool
_asarray, _isfinite, _isnan, _shape = np.asarray, np.isfinite, np.isnan, np.shape
_absolute, _less_equal = np.absolute, np.less_equal
_errstate, _count_nonzero, _bincount = np.errstate, np.count_nonzero, np.bincount
_sqrt = math.sqrt
_binom_ppf, _binom_isf = stats.binom.ppf, stats.binom.isf
_chisquare, _kstest, _norm_isf = stats.chisquare, stats.kstest, stats.norm.isf

#: The Kolmogorov-Smirnov check refuses fewer samples: with them a wrong distribution passes too easily.
MIN_DISTRIBUTION_SAMPLES = 100


def _allclose(got: np.ndarray, want: np.ndarray, *, rtol: float, atol: float) -> bool:
    """``numpy.allclose(..., equal_nan=True)`` from saved ufuncs: numpy's own looks up the builtin ``abs``."""
    with _errstate(invalid="ignore"):
        close = _less_equal(_absolute(got - want), atol + rtol * _absolute(want)) & _isfinite(want)
        close = close | (got == want) | (_isnan(got) & _isnan(want))
    return _bool(close.all())


def fail(message: str, hint: str):
    """Raise the ``AssertionError`` a student sees: ``message``, then ``hint`` if there is one."""
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
            fail(f"{name}: expected shape {_shape(want)}, got shape {_shape(got)} ({got}).", hint)
        if not _allclose(got, want, rtol=rtol, atol=atol):
            fail(f"{name}: expected {want}, got {got}.", hint)


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
        fail(f"{what}: {trials} samples are too few to test (any share of them would pass).", hint)
    if not low <= successes <= high:
        fail(
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
            fail(f"{what}: got no samples.", hint)
        if not np.issubdtype(values.dtype, np.number) or (values != np.round(values)).any():
            fail(f"{what}: expected integers in 0..{k - 1}, got {values[:5]}...", hint)
        values = values.astype(np.int64)
        if values.min() < 0 or values.max() >= k:
            fail(f"{what}: expected integers in 0..{k - 1}, got a {values.min() if values.min() < 0 else values.max()}.", hint)
        observed = _bincount(values, minlength=k)
        n = values.size
        impossible = expected_p == 0
        if (observed[impossible] > 0).any():
            fail(f"{what}: got values {np.nonzero(impossible & (observed > 0))[0].tolist()} that should never occur.", hint)
        expected = expected_p[~impossible] * n
        if (expected < 20).any():
            raise ValueError("check_categorical needs >= 20 expected samples in every category: use more samples")
        statistic, p_value = _chisquare(observed[~impossible], expected)
        if p_value < false_failure ** 1.5:
            fail(
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
            fail(f"{what}: expected finite numbers, got {values[:5]}...", hint)
        if values.size < MIN_DISTRIBUTION_SAMPLES:
            fail(f"{what}: expected at least {MIN_DISTRIBUTION_SAMPLES} samples, got {values.size}.", hint)
        result = _kstest(values, cdf)
        if result.pvalue < false_failure:
            fail(
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
            fail(f"{what}: expected finite numbers, got {values[:5]}...", hint)
        z = _norm_isf(false_failure**1.5 / 2)
        margin = z * expected_std / _sqrt(n)
        mean = _float(values.mean())
        if _abs(mean - expected_mean) > margin:
            fail(
                f"{what}: expected a mean of about {expected_mean:.4g} (n={n}, acceptable +/- {margin:.3g}), "
                f"got {mean:.4g}.",
                hint,
            )


# --- tolerances out of reach (issue 12) ------------------------------------------------------------------
# A check's tolerances and false-failure rate are its keyword defaults. A student cell could change
# them by attribute assignment (``check_close.__kwdefaults__["atol"] = 1e9``) or swap a check's code.
# Each public check is therefore a thin wrapper that, on every call, first puts back the code and the
# defaults captured in its closure at import; the kernel guard (dpgrader.guard) in turn restores
# the wrappers' own code before every cell and after every ``disabled``/``quiet`` block.


def keeping_defaults(function):
    """A wrapper of the check ``function`` that puts back its code and defaults, as they are now, before every call."""
    code, defaults, kwdefaults = function.__code__, function.__defaults__, dict(function.__kwdefaults__ or {})

    @functools.wraps(function)
    def check(*args, **kwargs):
        function.__code__, function.__defaults__, function.__kwdefaults__ = code, defaults, dict(kwdefaults)
        return function(*args, **kwargs)

    return check


binomial_bounds = keeping_defaults(binomial_bounds)
check_close = keeping_defaults(check_close)
check_binomial = keeping_defaults(check_binomial)
check_fraction = keeping_defaults(check_fraction)
check_categorical = keeping_defaults(check_categorical)
check_distribution = keeping_defaults(check_distribution)
check_mean = keeping_defaults(check_mean)
