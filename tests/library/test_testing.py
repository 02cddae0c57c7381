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
import pandas as pd
import pytest
from scipy import stats

import dplib
from dplib.mechanisms import laplace as laplace_module
from dplib import testing
from dplib.mechanisms.laplace import laplace_tail
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
    with pytest.raises(AssertionError, match=r"^epsilon: expected numbers, got str\.$"):
        check_close("abc", 1.0, name="epsilon")
    with pytest.raises(AssertionError, match="expected numbers, got str"):
        check_close([1.0, "x"], [1.0, 2.0])
    with pytest.raises(AssertionError, match=r"^result: expected numbers, got NoneType\.$"):
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
    import dplib.mechanisms.laplace  # noqa: F401  (the module, not a function of that name)

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
        "DelegationError", "quiet", "disabled", "delegation_closure", "check_close", "check_binomial", "check_fraction",
        "check_categorical", "check_distribution", "check_mean", "binomial_bounds", "substituted",
        "check_array", "check_bool", "check_equal", "check_frame", "check_is_random", "check_number", "check_uses_rng",
    }
    assert all(hasattr(testing, name) for name in testing.__all__)


def test_substituted_binds_names_and_restores_them_even_when_the_block_raises():
    namespace = {"max_privacy_loss": "student's"}
    with pytest.raises(AssertionError):
        with testing.substituted(namespace, max_privacy_loss="dplib's", helper="new"):
            assert namespace == {"max_privacy_loss": "dplib's", "helper": "new"}
            raise AssertionError("a failing check inside the block")
    assert namespace == {"max_privacy_loss": "student's"}


def test_substituted_gives_the_bound_values_for_allow():
    namespace = {}
    with testing.substituted(namespace, max_privacy_loss=dplib.max_privacy_loss, helper=len) as provided:
        assert provided == (dplib.max_privacy_loss, len)


# --- the student's values: exact types first, then a plain copy -------------------------------------------


class LyingFloat(float):
    """A float that claims to equal everything (the review flags such classes; the checks must not need it to)."""

    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


class LyingList(list):
    """A list whose iteration and indexing lie about its items."""

    def __iter__(self):
        return iter([0.5, 0.5])

    def __getitem__(self, index):
        return 0.5

    def __len__(self):
        return 2


def mock_equal_to_everything():
    from unittest import mock

    return mock.MagicMock(**{"__eq__.return_value": True, "__float__.return_value": 1.0, "__bool__.return_value": True})


FAKES = [mock_equal_to_everything(), LyingFloat(1.0), "1.0", None, {"value": 1.0}, object(), 1 + 0j]


@pytest.mark.parametrize("fake", FAKES, ids=lambda fake: type(fake).__name__)
def test_every_check_rejects_what_is_not_a_number_by_its_type(fake):
    name = type(fake).__name__
    for check in (lambda: check_close(fake, 1.0, name="x"), lambda: testing.check_number(fake, name="x"),
                  lambda: testing.check_array(fake, name="x"), lambda: testing.check_bool(fake, name="x")):
        with pytest.raises(AssertionError, match=rf"^x: expected .*, got {name}\."):
            check()
    with pytest.raises(AssertionError, match=r"^x: expected "):  # strings and None are labels there, and not 1.0
        testing.check_equal(fake, 1.0, name="x")
    for check in (lambda: check_close([1.0, fake], [1.0, 1.0], name="x"),
                  lambda: check_fraction([fake] * 100, 0.5, what="x"),
                  lambda: check_mean([fake] * 100, 1.0, 1.0, what="x"),
                  lambda: check_distribution([fake] * 200, stats.norm.cdf, what="x"),
                  lambda: check_categorical([fake] * 100, [0.5, 0.5], what="x")):
        with pytest.raises(AssertionError, match=rf"^x: expected .*, got {name}\."):
            check()


def test_a_magicmock_satisfies_no_check():
    """The submission that scored: satisfies_dp returning a MagicMock whose __eq__ says True."""
    at_boundary = mock_equal_to_everything()
    assert at_boundary == True  # noqa: E712  (what the old test asked)
    with pytest.raises(AssertionError, match=r"^satisfies_dp\(\.\.\.\): expected a bool \(True or False\), got MagicMock\.$"):
        testing.check_bool(at_boundary, True, name="satisfies_dp(...)")


def test_sequences_are_read_with_the_base_class_methods():
    from collections import namedtuple

    interval = namedtuple("Interval", "low high")(1.0, 3.0)
    np.testing.assert_array_equal(testing.check_array(interval, shape=(2,)), [1.0, 3.0])
    np.testing.assert_array_equal(testing.check_array(LyingList([7.0, 9.0])), [7.0, 9.0])  # not the 0.5s it claims
    testing.check_equal(interval, (1, 3))
    with pytest.raises(AssertionError, match=r"^result: expected \[0\.5 0\.5\], got \[7\. 9\.\]\.$"):
        check_close(LyingList([7.0, 9.0]), [0.5, 0.5])


def test_check_array_returns_a_new_plain_array():
    student = np.array([1, 2, 3])
    copy = testing.check_array(student, name="x")
    assert type(copy) is np.ndarray and copy.dtype == float and copy is not student
    copy[0] = 99
    assert student[0] == 1
    assert testing.check_array([True, False], dtype=None).dtype == bool
    np.testing.assert_array_equal(testing.check_array([np.array([1, 2]), [3, 4]]), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(testing.check_array(np.array([1.5, 2], dtype=object)), [1.5, 2.0])
    np.testing.assert_array_equal(testing.check_array(pd.Series([1.0, 2.0])), [1.0, 2.0])
    with pytest.raises(AssertionError, match=r"^noise: expected shape \(20000,\), got shape \(\)\. Add noise\.$"):
        testing.check_array(0.0, shape=(20_000,), name="noise", hint="Add noise.")
    with pytest.raises(AssertionError, match="expected numbers, got an array of <U1"):
        testing.check_array(np.array(["a"]), name="x")
    with pytest.raises(AssertionError, match="ragged"):
        testing.check_array([[1.0], [1.0, 2.0]], name="x")


def test_check_number_and_check_bool_accept_numpy_scalars_and_zero_d_arrays():
    assert testing.check_number(np.float32(0.5)) == 0.5 and type(testing.check_number(np.int64(3))) is float
    assert testing.check_number(np.array(2.5)) == 2.5 and testing.check_number(True) == 1.0
    assert testing.check_bool(np.bool_(False)) is False and testing.check_bool(np.array(True)) is True
    with pytest.raises(AssertionError, match=r"^x: expected a single number, got shape \(1,\)\.$"):
        testing.check_number([0.5], name="x")
    with pytest.raises(AssertionError, match=r"^x: expected a finite number, got nan\.$"):
        testing.check_number(math.nan, name="x", finite=True)
    for not_a_bool in (1, 1.0, np.int64(1), np.array([True]), "True"):
        with pytest.raises(AssertionError, match="expected a bool"):
            testing.check_bool(not_a_bool, name="x")
    with pytest.raises(AssertionError, match=r"^x: expected False, got True\. hint$"):
        testing.check_bool(True, False, name="x", hint="hint")


def test_check_equal_compares_plain_values():
    testing.check_equal(np.int64(2), 2)
    testing.check_equal(2.0, 2)
    testing.check_equal([("P2", "c"), ("P5", "e")], [("P2", "c"), ("P5", "e")])
    testing.check_equal(np.array([1, 2]), [1, 2])
    with pytest.raises(AssertionError, match=r"^pairs: expected \(\('P2', 'c'\),\), got \(\('P1', 'a'\),\)\. hint$"):
        testing.check_equal([("P1", "a")], [("P2", "c")], name="pairs", hint="hint")


def test_check_frame_returns_a_checked_copy():
    student = pd.DataFrame({"Name": ["Ann", "Bo"], "grade": pd.Categorical(["a", "b"], categories=["a", "b", "c"]),
                            "score": [1.5, 2.0]}, index=pd.Index([0.5, np.inf], name="epsilon"))
    frame = testing.check_frame(student, columns=["Name", "score"])
    assert frame is not student and type(frame) is pd.DataFrame
    assert frame.index.name == "epsilon" and frame.loc[np.inf, "score"] == 2.0
    assert list(frame["grade"].cat.categories) == ["a", "b", "c"]
    pd.testing.assert_frame_equal(frame, student, check_index_type=False, check_column_type=False)
    frame.loc[0.5, "score"] = 99.0
    assert student.loc[0.5, "score"] == 1.5
    with pytest.raises(AssertionError, match=r"^x: columns missing: \['income'\]\.$"):
        testing.check_frame(student, name="x", columns=["income"])
    with pytest.raises(AssertionError, match=r"^x: expected numbers or strings in column 'cell', got MagicMock\.$"):
        testing.check_frame(pd.DataFrame({"cell": [mock_equal_to_everything()]}), name="x")

    class LyingFrame(pd.DataFrame):
        pass

    with pytest.raises(AssertionError, match=r"^x: expected a DataFrame, got LyingFrame\.$"):
        testing.check_frame(LyingFrame({"a": [1]}), name="x")


def test_statistical_checks_refuse_samples_too_few_to_test():
    with pytest.raises(AssertionError, match=r"^share: 1 samples are too few to test \(any share of them would pass\)\.$"):
        check_fraction(np.array(True), 0.5, what="share")
    with pytest.raises(AssertionError, match=r"^noise: expected at least 100 samples, got 1\.$"):
        check_distribution(0.0, stats.laplace(scale=4.0).cdf, what="noise")
    assert testing.MIN_DISTRIBUTION_SAMPLES == 100


# --- check_is_random ---------------------------------------------------------------------------------------------


def test_check_is_random_passes_correct_mechanisms_however_they_draw():
    import random

    check_is_random = testing.check_is_random
    check_is_random(lambda x, rng=None: dplib.laplace_mech(x, 1.0, 1.0, rng=rng), np.zeros(100), what="default_rng")
    check_is_random(lambda x: x + np.random.laplace(size=np.shape(x)), 10.0, what="np.random")
    check_is_random(lambda x: [v + random.gauss(0, 1) for v in x], [0.0] * 100, what="random module, a list")
    check_is_random(lambda x: dplib.coin_rr(x), 1, calls=73, what="one coin")
    check_is_random(lambda: pd.DataFrame({"a": np.random.default_rng().integers(0, 2, 100)}), what="frames")


def test_check_is_random_fails_a_fixed_table_of_the_right_distribution():
    quantiles = stats.laplace(scale=4.0).ppf((np.arange(20_000) + 0.5) / 20_000)
    check_distribution(quantiles, stats.laplace(scale=4.0).cdf, what="noise")  # a perfect "sample" ...
    with pytest.raises(AssertionError) as info:  # ... from no randomness at all
        testing.check_is_random(lambda value: value + quantiles[: np.size(value)], np.zeros(100), what="laplace_mech(zeros)",
                                hint="Draw with rng.laplace.")
    assert str(info.value).startswith("laplace_mech(zeros): 6 calls all returned the same [")
    assert str(info.value).endswith("not a fixed seed, a fixed pattern of noise or no noise). Draw with rng.laplace.")
    with pytest.raises(AssertionError, match=r"^seeded: 6 calls all returned the same"):
        testing.check_is_random(lambda x: dplib.laplace_mech(x, 1.0, 1.0, rng=0), np.zeros(100), what="seeded")
    with pytest.raises(AssertionError, match=r"^scalar: 9 calls all returned the same 10\.: "):
        testing.check_is_random(lambda x: x, 10.0, calls=5, what="scalar")
    with pytest.raises(AssertionError, match=r"^frame: 6 calls all returned the same DataFrame"):
        testing.check_is_random(lambda: pd.DataFrame({"a": [1, 2]}), what="frame")
    with pytest.raises(AssertionError, match=r"^mock: expected numbers, got MagicMock\.$"):
        testing.check_is_random(mock_equal_to_everything, what="mock")
    with pytest.raises(ValueError, match="calls must be an integer >= 2"):
        testing.check_is_random(np.random.random, calls=1, what="x")


def test_check_is_random_runs_the_calls_quietly(capfd):
    def noisy(x):
        print("student's warning", file=sys.stderr)
        warnings.warn("deprecated", DeprecationWarning)
        return x + np.random.random(np.shape(x))

    testing.check_is_random(noisy, np.zeros(100), what="x")
    assert capfd.readouterr().err == ""



# --- check_is_random: a fixed seed fails (issue 29) ---------------------------------------------------------------

REPLAYED = r"run twice from the same state, its \d+ calls returned the same values both times"


def notebook_namespace(*cells: str) -> dict:
    """A namespace like a kernel's after running ``cells`` in order (``np`` and ``pd`` imported, as in a notebook)."""
    namespace = {"np": np, "pd": pd, "dplib": dplib}
    for cell in cells:
        exec(cell, namespace)
    return namespace


def outcome(function, *args, **kwargs) -> str:
    """'passes', or which of check_is_random's two failures it is."""
    try:
        testing.check_is_random(function, *args, what="f", **kwargs)
    except AssertionError as error:
        if "calls all returned the same" in str(error):
            return "the same every call"
        if "with the same random numbers" in str(error):
            return "depends on something else"
        if "run twice from the same state" in str(error):
            return "a fixed seed"
        raise
    return "passes"


SEEDED_AT_MODULE_LEVEL = """
_RNG = np.random.default_rng(0)

def laplace_mech(value, sensitivity, epsilon, rng=None):
    rng = rng if rng is not None else _RNG
    value = np.asarray(value, dtype=float)
    return value + rng.laplace(0.0, sensitivity / epsilon, size=value.shape)
"""

ABOVE_THRESHOLD = """
def above_threshold(queries, threshold, epsilon, rng=None):
    noisy_threshold = threshold + rng.laplace(0.0, 2.0 / epsilon)
    noisy_queries = np.asarray(queries, dtype=float) + rng.laplace(0.0, 4.0 / epsilon, size=len(queries))
    above = np.flatnonzero(noisy_queries >= noisy_threshold)
    return int(above[0]) if above.size else -1
"""


def test_a_generator_seeded_once_at_module_level_fails_though_its_calls_differ():
    laplace_mech = notebook_namespace(SEEDED_AT_MODULE_LEVEL)["laplace_mech"]
    assert laplace_mech(10.0, 2.0, 0.5) != laplace_mech(10.0, 2.0, 0.5)  # what the check compared before
    with pytest.raises(AssertionError, match=rf"^laplace_mech\(np.zeros\(100\), 2, 0.5\): {REPLAYED}: the noise comes from "
                       r"a generator seeded or created once, .* With rng=None, create a fresh np.random.default_rng\(\) "
                       r"in every call\. Use rng\.laplace\.$"):
        testing.check_is_random(laplace_mech, np.zeros(100), 2.0, 0.5, what="laplace_mech(np.zeros(100), 2, 0.5)",
                                hint="Use rng.laplace.")
    assert outcome(laplace_mech, 10.0, 2.0, 0.5) == "a fixed seed"  # a single number too


def test_a_generator_seeded_in_another_cell_fails():
    namespace = notebook_namespace(
        "rng = np.random.default_rng(2)  # the notebook's own, for its figures",
        "def laplace_mech(value, sensitivity, epsilon, rng=None):\n"
        "    generator = rng if rng is not None else globals()['rng']\n"
        "    return value + generator.laplace(0.0, sensitivity / epsilon, size=np.shape(value))",
    )
    assert outcome(namespace["laplace_mech"], np.zeros(100), 1.0, 1.0) == "a fixed seed"
    elsewhere = notebook_namespace("SEEDED = np.random.default_rng(7)")["SEEDED"]  # another module's namespace
    other = notebook_namespace("def noisy(value):\n    return value + SEEDED.normal(size=np.shape(value))")
    other["SEEDED"] = elsewhere
    assert outcome(other["noisy"], np.zeros(100)) == "a fixed seed"


def test_a_module_level_generator_without_a_seed_fails_too():
    # One table of noise per run of the notebook: the replay cannot tell it from a seed, and rng=None means a fresh one.
    namespace = notebook_namespace(SEEDED_AT_MODULE_LEVEL.replace("default_rng(0)", "default_rng()"))
    assert outcome(namespace["laplace_mech"], np.zeros(100), 1.0, 1.0) == "a fixed seed"


def test_a_generator_passed_explicitly_fails():
    assert outcome(dplib.laplace_mech, np.zeros(100), 1.0, 1.0, rng=np.random.default_rng(3)) == "a fixed seed"


HONEST_PATTERNS = {
    "default_rng(rng)": "rng = np.random.default_rng(rng)",
    "if rng is None": "if rng is None:\n        rng = np.random.default_rng()",
    "default_rng() when None": "rng = np.random.default_rng() if rng is None else rng",
}


@pytest.mark.parametrize("make_rng", HONEST_PATTERNS.values(), ids=HONEST_PATTERNS.keys())
def test_the_courses_rng_patterns_pass(make_rng):
    source = SEEDED_AT_MODULE_LEVEL.replace("_RNG = np.random.default_rng(0)", "").replace(
        "rng = rng if rng is not None else _RNG", make_rng)
    laplace_mech = notebook_namespace(source)["laplace_mech"]
    assert outcome(laplace_mech, np.zeros(100), 2.0, 0.5) == "passes"
    assert outcome(laplace_mech, 10.0, 2.0, 0.5) == "passes"
    assert outcome(lambda: laplace_mech(np.zeros(3), 2.0, 0.5)) == "passes"  # a lambda wrapper, as test cells write
    assert outcome(dplib.laplace_mech, np.zeros(100), 2.0, 0.5) == "passes"  # dplib's own, rng=None


def test_lambda_wrappers_and_data_frames_are_replayed():
    seeded = np.random.default_rng(5)
    assert outcome(lambda: [dplib.coin_rr(1) for _ in range(100)]) == "passes"
    assert outcome(lambda: [dplib.coin_rr(1, rng=seeded) for _ in range(100)]) == "a fixed seed"
    assert outcome(lambda: pd.DataFrame({"a": np.random.default_rng().integers(0, 2, 100)})) == "passes"
    assert outcome(lambda: pd.DataFrame({"a": seeded.integers(0, 2, 100)})) == "a fixed seed"


def test_ninety_calls_of_above_threshold_pass_fresh_and_fail_seeded():
    # One query 8 below the threshold at epsilon 0.5 is reported above with probability about 0.22: few outcomes,
    # hence 90 calls (07 and 08 check it so); the replay compares all 90 answers of both runs.
    fresh = notebook_namespace(ABOVE_THRESHOLD.replace("    noisy_threshold", "    rng = np.random.default_rng(rng)\n"
                                                       "    noisy_threshold"))["above_threshold"]
    seeded = notebook_namespace("_RNG = np.random.default_rng(0)\n" + ABOVE_THRESHOLD.replace(
        "    noisy_threshold", "    rng = _RNG if rng is None else rng\n    noisy_threshold"))["above_threshold"]
    assert outcome(fresh, [0.0], 8.0, 0.5, calls=90) == "passes"
    assert len({seeded([0.0], 8.0, 0.5) for _ in range(90)}) == 2  # its calls differ
    assert outcome(seeded, [0.0], 8.0, 0.5, calls=90) == "a fixed seed"


# --- check_is_random: a function that can tell the replay from the real run (issue 36) ------------------------------

# Each switches from a generator seeded once (the real run: full marks on every distribution test) to a fresh
# generator (the replay, where the check used to look) on what a forked copy of the process reads differently.
SWITCHING = {
    # the red team's: the replay is a new process, whose CPU clock starts again at zero
    "a CPU clock": "import time\nin_replay = lambda: time.process_time() < 0.05",
    # a new process id
    "the process id": "import os\n_PID = os.getpid()\nin_replay = lambda: os.getpid() != _PID",
    # the process's own statistics, read from /proc: its start time (field 22 of /proc/self/stat)
    "/proc/self/stat": "_START = open('/proc/self/stat').read().rsplit(')', 1)[1].split()[19]\n"
                       "in_replay = lambda: open('/proc/self/stat').read().rsplit(')', 1)[1].split()[19] != _START",
    # its resource usage: the page faults of a new process start again too
    "resource usage": "import resource\nin_replay = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_minflt < 20000",
}

SWITCHING_MECHANISM = """
_SEEDED = np.random.default_rng(1)

def laplace_mech(value, sensitivity, epsilon, rng=None):
    rng = np.random.default_rng() if in_replay() else _SEEDED
    return np.asarray(value, dtype=float) + rng.laplace(0.0, sensitivity / epsilon, size=np.shape(value))
"""


@pytest.mark.parametrize("switch", SWITCHING.values(), ids=SWITCHING.keys())
def test_a_seeded_mechanism_that_draws_afresh_only_in_the_replay_fails(switch):
    laplace_mech = notebook_namespace(switch, SWITCHING_MECHANISM)["laplace_mech"]
    assert not notebook_namespace(switch)["in_replay"]()  # here, the real run: the seeded generator
    with pytest.raises(AssertionError, match=r"^laplace_mech\(np.zeros\(100\), 2, 0.5\): run twice from the same state "
                       r"with the same random numbers, call \d+ returned other values the second time: the result depends "
                       r"on something besides the random generator"):
        testing.check_is_random(laplace_mech, np.zeros(100), 2.0, 0.5, what="laplace_mech(np.zeros(100), 2, 0.5)")


def test_a_mechanism_that_guesses_which_calls_are_replayed_passes_at_most_by_chance():
    """Seeded here; in the replay, seeded for its first four calls (the replay repeats four calls of six, chosen at
    random), fresh for the last two: it passes only when the check happened to choose the first four, 1 time in 15."""
    source = """
import time
_SEEDED = np.random.default_rng(1)
_CALLS = [0]

def noise(value):
    _CALLS[0] += 1
    replayed = time.process_time() < 0.05
    rng = np.random.default_rng() if replayed and _CALLS[0] % 6 in (5, 0) else _SEEDED
    return np.asarray(value, dtype=float) + rng.laplace(size=np.shape(value))
"""
    runs = 30  # a mechanism that could tell the replay apart would pass all 30
    passed = sum(outcome(notebook_namespace(source)["noise"], np.zeros(10)) == "passes" for _ in range(runs))
    # P(passed > 11) under Binomial(30, 1/15), mean 2: below 1e-6
    assert stats.binom.sf(11, runs, 1 / 15) < 1e-6
    assert passed <= 11, f"{passed} of {runs} guesses passed, against 2 expected"


def test_honest_mechanisms_that_read_clocks_and_threads_still_pass():
    """What a fresh generator does besides drawing (timing itself, a thread of its own) changes nothing."""
    source = """
import time
def noise(value, rng=None):
    started = time.process_time()
    rng = np.random.default_rng(rng)
    out = np.asarray(value, dtype=float) + rng.laplace(size=np.shape(value))
    _ = time.process_time() - started
    return out
"""
    assert outcome(notebook_namespace(source)["noise"], np.zeros(100)) == "passes"
    assert outcome(lambda x: x + np.random.Generator(np.random.PCG64()).normal(size=np.shape(x)), np.zeros(100)) == "passes"
    assert outcome(lambda x: x + np.random.RandomState().normal(size=np.shape(x)), np.zeros(100)) == "passes"
    import random
    import secrets

    assert outcome(lambda x: [v + random.Random().gauss(0, 1) for v in x], [0.0] * 50) == "passes"
    assert outcome(lambda x: [v + random.SystemRandom().gauss(0, 1) for v in x], [0.0] * 50) == "passes"
    assert outcome(lambda x: [v + secrets.randbelow(1000) for v in x], [0.0] * 50) == "passes"


def test_a_generator_seeded_from_the_clock_fails():
    """Not one fresh generator a call: a seed from the clock differs between runs, even given the same randomness."""
    import time

    assert outcome(lambda x: x + np.random.default_rng(time.time_ns()).laplace(size=np.shape(x)), np.zeros(100)) \
        == "depends on something else"


def global_generators_scenario() -> list[str]:
    """check_is_random on numpy's global generator and the random module, unseeded, then seeded."""
    import random

    def outcome_of(function):
        return outcome(function, np.zeros(100))

    plain_numpy = lambda x: x + np.random.laplace(size=x.shape)  # noqa: E731
    scipy_rvs = lambda x: x + stats.laplace.rvs(size=x.shape)  # noqa: E731 - numpy's global generator too
    random_module = lambda x: x + np.array([random.gauss(0, 1) for _ in x])  # noqa: E731
    lines = [";".join(map(outcome_of, (plain_numpy, scipy_rvs, random_module)))]
    _ = np.random.laplace(size=1_000_000)  # draws since the last check are followed, not mistaken for a seed
    lines.append(outcome_of(plain_numpy))
    np.random.seed(0)
    _ = np.random.laplace(size=1000)
    lines.append(";".join(map(outcome_of, (plain_numpy, scipy_rvs, random_module))))
    random.seed(0)
    lines.append(outcome_of(random_module))
    return lines


def test_global_generators_pass_unless_seeded():
    """numpy's global generator and the random module: fresh in the replay unless seeded since the start.

    Run in a process forked from this one, as a grading kernel is forked from the zygote: it starts
    following the global generators afresh (and seeding them there leaves this process's alone).
    """
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(1) as pool:
        lines = pool.apply(global_generators_scenario)
    assert lines == ["passes;passes;passes", "passes", "a fixed seed;a fixed seed;passes", "a fixed seed"]


def first_global_draws() -> list[float]:
    import random

    return [float(np.random.random()), random.random()]


def test_a_forked_process_draws_anew_from_the_global_generators():
    """As in a freshly started kernel, not the stream of the zygote every other kernel is forked from."""
    import multiprocessing

    import dplib.testing.replay  # noqa: F401 - registers the reseed at fork

    forks = []
    for _ in range(2):
        with multiprocessing.get_context("fork").Pool(1) as pool:  # a new process forked from this one's state
            forks.append(pool.apply(first_global_draws))
    (first, second), here = forks, first_global_draws()
    assert first[0] != second[0] and here[0] not in (first[0], second[0])  # numpy's: reseeded by dplib.testing
    assert first[1] != second[1] and here[1] not in (first[1], second[1])  # random's: reseeded by Python

@pytest.fixture
def replay_children(monkeypatch):
    """The PIDs of the children the replay forks (a test process may have other children of its own)."""
    from dplib.testing import replay

    forked, fork = [], replay._fork

    def recording_fork():
        pid = fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(replay, "_fork", recording_fork)
    return forked


def reaped(pid: int) -> bool:
    """Whether ``pid`` is no child of this process any more (it ended and was waited for)."""
    import os

    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_the_replay_writes_nothing_and_leaves_no_process(capfd, replay_children):
    import os

    def chatty(x):
        print("student's print")
        os.write(2, b"straight to fd 2\n")
        return x + np.random.default_rng().random(np.shape(x))

    testing.check_is_random(chatty, np.zeros(100), what="x")
    captured = capfd.readouterr()
    assert captured.out == "student's print\n" * 6  # the parent's six calls; the replay's are silenced
    assert captured.err == "straight to fd 2\n" * 6
    assert len(replay_children) == 1 and reaped(replay_children[0])  # the replay was reaped


def test_the_replay_touches_no_lock_another_thread_holds(monkeypatch):
    """A kernel runs threads (ipykernel's output thread): the forked replay must not wait for a lock one held at the fork."""
    import io
    import threading
    import time

    from dplib.testing import randomness

    class SlowSink(io.RawIOBase):
        def writable(self):
            return True

        def write(self, data):
            time.sleep(0.001)  # inside the BufferedWriter's lock
            return len(data)

    stdout = io.TextIOWrapper(io.BufferedWriter(SlowSink(), buffer_size=1), write_through=True)
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(randomness, "REPLAY_GRACE_SECONDS", 3.0)
    stop = threading.Event()
    chatter = threading.Thread(target=lambda: [stdout.write("output thread\n") for _ in iter(stop.is_set, True)])
    chatter.start()
    try:
        for _ in range(5):
            testing.check_is_random(lambda x: print("student") or x + np.random.default_rng().random(np.shape(x)),
                                    np.zeros(100), what="x")
    finally:
        stop.set()
        chatter.join()

def test_the_replay_fails_closed(monkeypatch, replay_children):
    import errno
    import os
    import time

    from dplib.testing import randomness, replay

    def no_fork():
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    parent = os.getpid()
    fresh = lambda x: x + np.random.default_rng().random(np.shape(x))  # noqa: E731
    raises_in_the_replay = lambda x: fresh(x) if os.getpid() == parent else 1 / 0  # noqa: E731
    with pytest.raises(AssertionError, match=r"^x: could not run the 6 calls a second time from the same state to check "
                                             r"for a fixed seed \(ZeroDivisionError: division by zero\)\.$"):
        testing.check_is_random(raises_in_the_replay, np.zeros(100), what="x")
    monkeypatch.setattr(randomness, "REPLAY_GRACE_SECONDS", 0.5)
    hangs_in_the_replay = lambda x: fresh(x) if os.getpid() == parent else time.sleep(60)  # noqa: E731
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"\(the replay did not finish within \d+ s\)"):
        testing.check_is_random(hangs_in_the_replay, np.zeros(100), what="x")
    assert time.monotonic() - started < 10
    assert replay_children and reaped(replay_children[-1])  # killed and reaped
    monkeypatch.setattr(replay, "_fork", no_fork)  # a limit on processes
    with pytest.raises(AssertionError, match=r"\(could not fork \(\[Errno 11\] Resource temporarily unavailable\)\)"):
        testing.check_is_random(fresh, np.zeros(100), what="x")


def test_without_fork_only_the_calls_are_compared(monkeypatch):
    from dplib.testing import randomness

    monkeypatch.setattr(randomness, "_CAN_REPLAY", False)  # as on macOS or Windows: today's check, stated in the docstring
    laplace_mech = notebook_namespace(SEEDED_AT_MODULE_LEVEL)["laplace_mech"]
    assert outcome(laplace_mech, np.zeros(100), 1.0, 1.0) == "passes"
    assert outcome(lambda x: x, np.zeros(100)) == "the same every call"


def test_the_replay_survives_rebound_names(monkeypatch):
    import hashlib
    import os
    import select

    # Student code may rebind what the replay uses: it keeps the references it took at import.
    monkeypatch.setattr(os, "fork", lambda: 0)
    monkeypatch.setattr(os, "_exit", lambda code: None)
    monkeypatch.setattr(select, "poll", lambda: None)
    monkeypatch.setattr(hashlib, "sha256", lambda *args: hashlib.md5())
    monkeypatch.setattr(np, "array_equal", lambda *args, **kwargs: False)
    laplace_mech = notebook_namespace(SEEDED_AT_MODULE_LEVEL)["laplace_mech"]
    assert outcome(laplace_mech, np.zeros(100), 1.0, 1.0) == "a fixed seed"
    assert outcome(dplib.laplace_mech, np.zeros(100), 1.0, 1.0) == "passes"

# --- what disabled switches off: derived from the code ----------------------------------------------------------


def closure_names(*functions, allow=()):
    return [f.__name__ for f in testing.delegation_closure(*functions, allow=allow)]


def test_the_closure_of_max_privacy_loss_holds_the_helper_that_computes_it():
    assert closure_names(dplib.max_privacy_loss) == ["max_privacy_loss", "privacy_loss_per_output"]
    assert closure_names(dplib.satisfies_dp) == ["satisfies_dp", "max_privacy_loss", "privacy_loss_per_output"]


def test_closures_of_the_mechanisms_reach_private_helpers_and_skip_validators():
    assert closure_names(dplib.laplace_mech) == ["laplace_mech", "laplace_noise", "laplace_scale"]
    assert set(closure_names(dplib.noisy_average)) == {
        "noisy_average", "clipped_sum_sensitivity", "laplace_mech", "laplace_noise", "laplace_scale"}
    assert closure_names(dplib.k_rand_resp) == ["k_rand_resp", "k_rand_resp_unchecked", "krr_probabilities"]
    assert closure_names(dplib.privatize_image) == ["privatize_image", "privatize_image_unchecked"]
    for function in (dplib.laplace_mech, dplib.satisfies_dp, dplib.sequential_epsilon, dplib.above_threshold):
        names = closure_names(function)
        assert not any(name.startswith(("require_", "_require_", "_check_")) for name in names), names


def test_closures_leave_the_notebooks_tools_on():
    """Data loaders are never switched off; a tool a notebook imports stays on when the test allows it."""
    from dplib.testing.delegation import computes_nothing_of_an_answer

    for tool in (dplib.load_adult, dplib.load_adult_with_pii, dplib.demo_picture, dplib.adult_learning_data):
        assert computes_nothing_of_an_answer(tool)
    assert closure_names(dplib.private_accuracy) == [
        "private_accuracy", "privatize_columns", "train_and_score", "k_rand_resp", "k_rand_resp_unchecked",
        "krr_probabilities"]
    assert closure_names(dplib.private_accuracy, dplib.privatize_columns,
                         allow=[dplib.train_and_score, dplib.k_rand_resp]) == ["private_accuracy", "privatize_columns"]
    assert closure_names(dplib.estimate_krr_counts, allow=[dplib.krr_probabilities]) == [
        "estimate_krr_counts", "unbias_krr_counts"]
    with pytest.raises(ValueError, match=r"cannot both switch off and allow \['krr_probabilities'\]"):
        testing.delegation_closure(dplib.krr_probabilities, allow=[dplib.k_rand_resp])


def test_delegation_through_a_helper_raises():
    """The submission that scored 3/14: max_privacy_loss written on top of privacy_loss_per_output."""

    def max_privacy_loss(p_d, p_d_prime):
        losses = dplib.privacy_loss_per_output(p_d, p_d_prime)
        return float(np.abs(losses[~np.isnan(losses)]).max(initial=0.0))

    assert max_privacy_loss([0.75, 0.25], [0.25, 0.75]) == pytest.approx(math.log(3))
    message = (r"^dplib\.privacy_loss_per_output is switched off while your function is checked \(it computes part of the "
               r"answer of dplib\.max_privacy_loss\): write the code yourself instead of calling dplib's implementation\.$")
    with disabled(dplib.max_privacy_loss):
        with pytest.raises(DelegationError, match=message):
            max_privacy_loss([0.75, 0.25], [0.25, 0.75])
        with pytest.raises(DelegationError, match="dplib.mechanisms.laplace.laplace_noise is switched off"):
            with disabled(dplib.laplace_mech):
                dplib.mechanisms.laplace.laplace_noise(np.random.default_rng(), 1.0, (3,))
    assert max_privacy_loss([0.75, 0.25], [0.25, 0.75]) == pytest.approx(math.log(3))


def test_a_substituted_function_stays_on_with_its_helpers():
    namespace = {}
    with testing.substituted(namespace, max_privacy_loss=dplib.max_privacy_loss) as provided, \
            disabled(dplib.satisfies_dp, allow=provided):
        assert namespace["max_privacy_loss"]([0.75, 0.25], [0.25, 0.75]) == pytest.approx(math.log(3))
        assert dplib.privacy_loss_per_output([0.5], [0.5]).tolist() == [0.0]
        with pytest.raises(DelegationError, match="dplib.satisfies_dp is switched off"):
            dplib.satisfies_dp([0.5], [0.5], 1.0)
    assert dplib.satisfies_dp([0.5], [0.5], 1.0)


def test_switched_off_helpers_keep_the_guards_contract():
    """The guard leaves alone every function whose code has DISABLED_FILENAME, helpers included, and restores after."""
    helpers = testing.delegation_closure(dplib.noisy_average)
    codes = [f.__code__ for f in helpers]
    with disabled(dplib.noisy_average):
        assert all(f.__code__.co_filename == testing.DISABLED_FILENAME for f in helpers)
        with disabled(dplib.laplace_mech):  # already off: left as it is, and still off after the inner block
            pass
        assert all(f.__code__.co_filename == testing.DISABLED_FILENAME for f in helpers)
    assert [f.__code__ for f in helpers] == codes


def test_check_is_random_keeps_its_defaults(monkeypatch):
    testing.check_is_random.__wrapped__.__kwdefaults__["calls"] = 1  # a student cell's attempt
    with pytest.raises(AssertionError, match="6 calls all returned the same"):
        testing.check_is_random(lambda: 1.0, what="x")
