"""Tests for dplib.testing, the helpers autograder test cells are built from.

Each check must pass a correct sample, fail a wrong one with a message that says what
was expected, what was seen and the hint, keep its false-failure rate where it claims,
and resist a student's kernel that rebinds ``abs`` or ``numpy.allclose``.
"""

import builtins
import math
import sys
import warnings

import numpy as np
import pytest
from scipy import stats

import dplib
from dplib import laplace as laplace_module
from dplib import testing
from dplib.laplace import laplace_tail
from dplib.testing import (
    DEFAULT_FALSE_FAILURE,
    DelegationError,
    binomial_bounds,
    check_binomial,
    check_categorical,
    check_close,
    check_distribution,
    check_fraction,
    check_mean,
    disabled,
    quiet,
)


def test_default_false_failure():
    assert DEFAULT_FALSE_FAILURE == 1e-6


# --- check_close ------------------------------------------------------------------------------------


def test_check_close_passes_up_to_rounding():
    check_close(0.1 + 0.2, 0.3)
    check_close([1.0, 2.0], np.array([1.0, 2.0 + 1e-12]))
    check_close(np.float32(0.5), 0.5)
    check_close([math.nan, 1.0], [math.nan, 1.0])
    check_close(100.0, 100.0001, rtol=1e-5)


def test_check_close_fails_with_expected_got_and_hint():
    with pytest.raises(AssertionError, match=r"^counts: expected \[1\.  2\.5\], got \[1\. 2\.\]\. Did you divide by p - q\?$"):
        check_close([1.0, 2.0], [1.0, 2.5], name="counts", hint="Did you divide by p - q?")


def test_check_close_fails_on_shape():
    with pytest.raises(AssertionError, match=r"result: expected shape \(2,\), got shape \(\)"):
        check_close(1.0, [1.0, 1.0])
    with pytest.raises(AssertionError, match=r"expected shape \(3,\), got shape \(1, 3\)"):
        check_close([[1, 2, 3]], [1, 2, 3])


def test_check_close_fails_on_non_numbers():
    with pytest.raises(AssertionError, match="epsilon: expected numbers, got 'abc'"):
        check_close("abc", 1.0, name="epsilon")
    with pytest.raises(AssertionError, match="expected numbers, got"):
        check_close([1.0, "x"], [1.0, 2.0])
    with pytest.raises(AssertionError, match="result: expected 1.0, got nan"):
        check_close(None, 1.0)  # a forgotten return is rejected


# --- binomial checks ----------------------------------------------------------------------------------


def test_binomial_bounds_example_and_false_failure_rate():
    assert binomial_bounds(10_000, 0.5) == (4755, 5245)
    for trials, p in [(10_000, 0.5), (100_000, 0.75), (4_000, 0.95), (2_000, 0.01)]:
        low, high = binomial_bounds(trials, p)
        assert low <= trials * p <= high
        rejected = stats.binom.cdf(low - 1, trials, p) + stats.binom.sf(high, trials, p)
        assert rejected <= DEFAULT_FALSE_FAILURE
    wide, narrow = binomial_bounds(10_000, 0.5, 1e-9), binomial_bounds(10_000, 0.5, 1e-3)
    assert wide[0] < narrow[0] and narrow[1] < wide[1]


def test_check_binomial_passes_and_fails_with_message():
    check_binomial(5010, 10_000, 0.5, what="share of heads")
    check_binomial(4755, 10_000, 0.5, what="share of heads")
    check_binomial(5245, 10_000, 0.5, what="share of heads")
    message = (
        r"^share of truthful answers: expected about 50\.00% \(n=10000, acceptable 47\.55%\.\.52\.45%\), "
        r"got 75\.00%\. Did you swap p and q\?$"
    )
    with pytest.raises(AssertionError, match=message):
        check_binomial(7500, 10_000, 0.5, what="share of truthful answers", hint="Did you swap p and q?")
    with pytest.raises(AssertionError, match="got 47.54%"):
        check_binomial(4754, 10_000, 0.5, what="share")


def test_check_fraction():
    flags = np.random.default_rng(0).random(10_000) < 0.25
    check_fraction(flags, 0.25, what="share of 1s")
    check_fraction(flags.astype(int).tolist(), 0.25, what="share of 1s")
    check_fraction(flags.reshape(100, 100), 0.25, what="share of 1s")
    with pytest.raises(AssertionError, match=r"share of 1s: expected about 50\.00% \(n=10000.*got 2[45]\.\d\d%\. hint!"):
        check_fraction(flags, 0.5, what="share of 1s", hint="hint!")


def test_check_fraction_with_a_custom_false_failure():
    flags = np.r_[np.ones(5_100), np.zeros(4_900)]
    check_fraction(flags, 0.5, what="share")  # 2 sd: fine at 1e-6
    with pytest.raises(AssertionError):
        check_fraction(flags, 0.5, what="share", false_failure=0.1)


# --- check_categorical ------------------------------------------------------------------------------------


def test_check_categorical_passes_uniform_and_skewed_samples():
    rng = np.random.default_rng(0)
    check_categorical(rng.integers(0, 3, 30_000), [1 / 3] * 3, what="reports")
    check_categorical(rng.choice(4, size=50_000, p=[0.1, 0.2, 0.3, 0.4]), [0.1, 0.2, 0.3, 0.4], what="reports")
    check_categorical(rng.choice(4, size=50_000, p=[0.5, 0, 0.25, 0.25]).tolist(), [0.5, 0, 0.25, 0.25], what="x")
    check_categorical(rng.integers(0, 2, 10_000).astype(float), [0.5, 0.5], what="floats holding integers")


def test_check_categorical_fails_on_wrong_shares_with_details():
    samples = np.random.default_rng(1).choice(3, size=30_000, p=[0.5, 0.25, 0.25])
    with pytest.raises(AssertionError) as info:
        check_categorical(samples, [1 / 3] * 3, what="lies", hint="Is a lie ever the truth?")
    message = str(info.value)
    assert message.startswith("lies: the shares [0.5")
    assert "(n=30000) are too far from the expected [0.3333, 0.3333, 0.3333]" in message
    assert "chi-square" in message and "p-value" in message
    assert message.endswith("Is a lie ever the truth?")


def test_check_categorical_fails_on_values_out_of_range():
    with pytest.raises(AssertionError, match=r"reports: expected integers in 0\.\.2, got a 3\."):
        check_categorical([0, 1, 2, 3] * 100, [1 / 3] * 3, what="reports")
    with pytest.raises(AssertionError, match=r"reports: expected integers in 0\.\.2, got a -1\."):
        check_categorical([0, 1, -1] * 100, [1 / 3] * 3, what="reports")
    with pytest.raises(AssertionError, match=r"expected integers in 0\.\.1"):
        check_categorical([0.5, 1.0] * 100, [0.5, 0.5], what="reports")
    with pytest.raises(AssertionError, match=r"expected integers in 0\.\.1"):
        check_categorical(["a", "b"] * 100, [0.5, 0.5], what="reports")


def test_check_categorical_fails_on_impossible_values_outright():
    samples = np.r_[np.zeros(5_000, int), np.full(5_000, 2), [1]]
    with pytest.raises(AssertionError, match=r"lies: got values \[1\] that should never occur\. The truth is never a lie\."):
        check_categorical(samples, [0.5, 0.0, 0.5], what="lies", hint="The truth is never a lie.")


def test_check_categorical_fails_on_no_samples():
    with pytest.raises(AssertionError, match="reports: got no samples"):
        check_categorical([], [0.5, 0.5], what="reports")


def test_check_categorical_refuses_too_few_samples_to_test():
    with pytest.raises(ValueError, match="check_categorical needs >= 20 expected samples in every category"):
        check_categorical([0, 1] * 10, [0.5, 0.5], what="reports")


# --- check_distribution -----------------------------------------------------------------------------------


def test_check_distribution_passes_and_fails():
    noise = np.random.default_rng(0).laplace(0, 2, 20_000)
    check_distribution(noise, stats.laplace(scale=2).cdf, what="noise")
    with pytest.raises(AssertionError) as info:
        check_distribution(noise, stats.laplace(scale=0.5).cdf, what="noise", hint="Is the scale sensitivity / epsilon?")
    message = str(info.value)
    assert message.startswith("noise: the 20000 samples do not follow the expected distribution")
    assert "largest gap between the CDFs" in message and "sample std" in message
    assert message.endswith("Is the scale sensitivity / epsilon?")


def test_check_distribution_rejects_non_finite_or_empty_samples():
    with pytest.raises(AssertionError, match="noise: expected finite numbers"):
        check_distribution([0.0, math.nan], stats.norm.cdf, what="noise")
    with pytest.raises(AssertionError, match="noise: expected finite numbers"):
        check_distribution([], stats.norm.cdf, what="noise")


# --- check_mean --------------------------------------------------------------------------------------------


def test_check_mean_passes_and_fails():
    samples = np.random.default_rng(0).normal(5, 2, 10_000)
    check_mean(samples, 5, 2, what="noisy answers")
    with pytest.raises(AssertionError, match=r"^noisy answers: expected a mean of about 4\.8 \(n=10000, acceptable \+/- 0\.12[0-9]*\), got 5\.0?[0-9]*\. Biased\?$"):
        check_mean(samples, 4.8, 2, what="noisy answers", hint="Biased?")


def test_check_mean_margin_is_about_six_standard_errors():
    z = stats.norm.isf(DEFAULT_FALSE_FAILURE**1.5 / 2)
    assert 6.0 < z < 6.2
    n, sd = 10_000, 1.0
    inside = np.full(n, z * sd / math.sqrt(n) * 0.99)
    outside = np.full(n, z * sd / math.sqrt(n) * 1.01)
    check_mean(inside, 0.0, sd, what="x")
    with pytest.raises(AssertionError):
        check_mean(outside, 0.0, sd, what="x")


def test_check_mean_rejects_non_finite_samples():
    with pytest.raises(AssertionError, match="x: expected finite numbers"):
        check_mean([1.0, math.inf], 0.0, 1.0, what="x")


# --- references out of the student's reach ------------------------------------------------------------------


def test_saved_references_survive_monkeypatching(monkeypatch):
    """A student cell may rebind abs and numpy.allclose in the shared kernel; the checks do not care."""
    failures = []
    with monkeypatch.context() as patch:
        patch.setattr(builtins, "abs", lambda value: 0)
        patch.setattr(np, "allclose", lambda *args, **kwargs: True)
        assert abs(-5) == 0 and np.allclose(1, 2)  # the rebinding is in effect ...
        for check in (lambda: check_close(1.0, 2.0), lambda: check_mean(np.zeros(100), 10.0, 1.0, what="x")):
            try:
                check()  # ... and still the wrong value is rejected
            except AssertionError as error:
                failures.append(str(error))
    assert abs(-5) == 5
    assert len(failures) == 2
    assert failures[0] == "result: expected 2.0, got 1.0."
    assert failures[1].startswith("x: expected a mean of about 10")


def test_saved_references_survive_monkeypatching_scipy(monkeypatch):
    monkeypatch.setattr(stats, "chisquare", lambda *args, **kwargs: (0.0, 1.0))
    monkeypatch.setattr(stats, "kstest", lambda *args, **kwargs: None)
    with pytest.raises(AssertionError, match="too far from the expected"):
        check_categorical(np.zeros(1_000, int).tolist() + [1] * 100, [0.5, 0.5], what="x")
    with pytest.raises(AssertionError, match="do not follow"):
        check_distribution(np.zeros(1_000) + 5, stats.norm.cdf, what="x")


# --- disabled ------------------------------------------------------------------------------------------------


def test_disabled_switches_off_every_alias_and_restores_them():
    import dplib.laplace  # noqa: F401  (the module, not a function of that name)

    aliases = [dplib.laplace_tail, laplace_tail, laplace_module.laplace_tail]
    with disabled(dplib.laplace_tail):
        for alias in aliases:
            with pytest.raises(DelegationError, match="dplib.laplace_tail is switched off while your function is checked"):
                alias(1.0, 1.0, 1.0)
        with pytest.raises(DelegationError):
            dplib.laplace_tail(t=1.0, sensitivity=1.0, epsilon=1.0)
    for alias in aliases:
        assert alias(4.0, 2.0, 0.5) == pytest.approx(math.exp(-1))


def test_disabled_reaches_internal_callers():
    """laplace_mech computes its scale with laplace_scale: switching that off stops both."""
    with disabled(dplib.laplace_scale):
        with pytest.raises(DelegationError):
            dplib.laplace_mech(1.0, 1.0, 1.0)
    assert np.isfinite(dplib.laplace_mech(1.0, 1.0, 1.0, rng=0))


def test_disabled_several_functions_at_once():
    with disabled(dplib.coin_rr, dplib.rand_resp, dplib.k_rand_resp):
        for call in (lambda: dplib.coin_rr([1]), lambda: dplib.rand_resp([1], 0.5, 0.5),
                     lambda: dplib.k_rand_resp([1], 3, 1.0)):
            with pytest.raises(DelegationError):
                call()
    assert dplib.coin_rr([1], rng=0).shape == (1,)
    assert dplib.rand_resp([1], 1.0, 1.0, rng=0).tolist() == [1]
    assert dplib.k_rand_resp([1], 3, 50.0, rng=0).tolist() == [1]


def test_disabled_restores_even_when_the_block_raises():
    with pytest.raises(ZeroDivisionError):
        with disabled(dplib.laplace_tail):
            1 / 0
    assert dplib.laplace_tail(0.0, 1.0, 1.0) == 1.0


def test_disabled_restores_when_a_later_argument_is_refused():
    def closure_maker():
        captured = 1

        def inner():
            return captured

        return inner

    with pytest.raises(TypeError, match="cannot disable closure inner"):
        with disabled(dplib.laplace_tail, closure_maker()):
            pass  # pragma: no cover
    assert dplib.laplace_tail(0.0, 1.0, 1.0) == 1.0
    with pytest.raises(TypeError, match="functions must be plain Python functions"):
        with disabled(len):
            pass  # pragma: no cover


def test_delegation_error_is_a_runtime_error():
    assert issubclass(DelegationError, RuntimeError)


# --- quiet ----------------------------------------------------------------------------------------------------


def test_quiet_swallows_warnings_and_floating_point_errors():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with quiet():
            warnings.warn("a student's warning", UserWarning)
            np.log(0.0)
            np.array([1.0]) / 0.0
        assert caught == []
        warnings.warn("outside", UserWarning)  # the filters come back afterwards
        assert len(caught) == 1


def test_quiet_swallows_stderr(capsys):
    with quiet():
        print("to stderr", file=sys.stderr)
        sys.stderr.write("more\n")
        print("to stdout")
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out == "to stdout\n"


def test_quiet_restores_stderr_and_lets_exceptions_through(capfd):
    original = sys.stderr
    with pytest.raises(KeyError):
        with quiet():
            raise KeyError("x")
    assert sys.stderr is original
    print("visible", file=sys.stderr)
    assert "visible" in capfd.readouterr().err


def test_checks_themselves_write_nothing_to_stderr(capfd):
    check_close(np.log(np.array([1.0])), [0.0])
    check_fraction([1, 0] * 50, 0.5, what="x")
    check_mean([0.0] * 10, 0.0, 1.0, what="x")
    captured = capfd.readouterr()
    assert captured.err == ""


def test_public_names():
    assert set(testing.__all__) == {
        "DelegationError", "quiet", "disabled", "check_close", "check_binomial", "check_fraction",
        "check_categorical", "check_distribution", "check_mean", "binomial_bounds", "substituted",
    }


def test_substituted_binds_names_and_restores_them_even_when_the_block_raises():
    namespace = {"max_privacy_loss": "student's"}
    with pytest.raises(AssertionError):
        with testing.substituted(namespace, max_privacy_loss="dplib's", helper="new"):
            assert namespace == {"max_privacy_loss": "dplib's", "helper": "new"}
            raise AssertionError("a failing check inside the block")
    assert namespace == {"max_privacy_loss": "student's"}
