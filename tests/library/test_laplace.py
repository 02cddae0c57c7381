"""Tests for dplib.mechanisms.laplace: the Laplace mechanism and the facts the course derives from it.

Statistical checks use fixed seeds *and* acceptance regions whose false-failure
probability under a correct implementation is fixed in advance (<= 1e-6); none is
ever retried. Sensitivity 2 and epsilon 0.5 are used throughout, so a scale of
``epsilon / sensitivity`` (0.25) instead of ``sensitivity / epsilon`` (4) cannot hide.
"""

import math

import numpy as np
import pytest
from scipy import stats

import dplib
from dplib.mechanisms import laplace as laplace_module
from dplib.mechanisms.laplace import (
    clipped_sum_sensitivity,
    laplace_interval,
    laplace_mech,
    laplace_privacy_loss,
    laplace_scale,
    laplace_tail,
    noisy_average,
    proportion_sensitivity,
    uniform_noise_epsilon,
)
from dplib.testing import check_distribution, check_fraction, check_mean

FALSE_FAILURE = 1e-6
SENSITIVITY, EPSILON = 2.0, 0.5
SCALE = SENSITIVITY / EPSILON  # 4.0
N = 100_000

BAD_EPSILONS = [0, -1, math.nan, math.inf, -math.inf, True, False, "1", None, [1.0], 1j]
BAD_SENSITIVITIES = [-1, -1e-9, math.nan, math.inf, True, "2", None, [2.0]]


# --- laplace_scale ----------------------------------------------------------------------


def test_laplace_scale_is_sensitivity_over_epsilon():
    assert laplace_scale(SENSITIVITY, EPSILON) == SCALE
    assert laplace_scale(0, 1) == 0.0
    assert isinstance(laplace_scale(np.int64(3), np.float32(1.5)), float)


@pytest.mark.parametrize("epsilon", BAD_EPSILONS)
def test_laplace_scale_rejects_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        laplace_scale(1.0, epsilon)


@pytest.mark.parametrize("sensitivity", BAD_SENSITIVITIES)
def test_laplace_scale_rejects_bad_sensitivity(sensitivity):
    with pytest.raises(ValueError, match="sensitivity must be a finite number >= 0"):
        laplace_scale(sensitivity, 1.0)


# --- laplace_mech: shapes, types, validation ------------------------------------------


def test_laplace_mech_scalar_in_scalar_out():
    out = laplace_mech(10.0, SENSITIVITY, EPSILON, rng=0)
    assert np.ndim(out) == 0
    assert isinstance(out, float | np.floating)
    out_int = laplace_mech(10, SENSITIVITY, EPSILON, rng=0)
    assert np.ndim(out_int) == 0 and isinstance(out_int, np.floating)


@pytest.mark.parametrize("shape", [(0,), (1,), (5,), (3, 4), (2, 3, 2)])
def test_laplace_mech_array_in_same_shape_out(shape):
    value = np.arange(math.prod(shape), dtype=float).reshape(shape)
    out = laplace_mech(value, SENSITIVITY, EPSILON, rng=1)
    assert isinstance(out, np.ndarray)
    assert out.shape == shape
    assert out.dtype == float


def test_laplace_mech_accepts_lists_ints_and_bools():
    assert laplace_mech([1, 2, 3], 1, 1, rng=0).shape == (3,)
    assert laplace_mech([[True, False]], 1, 1, rng=0).shape == (1, 2)


def test_laplace_mech_zero_sensitivity_returns_the_value():
    value = np.array([1.5, -2.0, 7.0])
    np.testing.assert_array_equal(laplace_mech(value, 0, EPSILON, rng=0), value)


def test_laplace_mech_does_not_modify_its_input():
    value = np.zeros(10)
    laplace_mech(value, 1, 1, rng=0)
    np.testing.assert_array_equal(value, 0)


def test_laplace_mech_same_seed_same_output():
    a = laplace_mech(np.zeros(100), SENSITIVITY, EPSILON, rng=np.random.default_rng(42))
    b = laplace_mech(np.zeros(100), SENSITIVITY, EPSILON, rng=np.random.default_rng(42))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, laplace_mech(np.zeros(100), SENSITIVITY, EPSILON, rng=42))


def test_laplace_mech_different_seeds_differ():
    a = laplace_mech(np.zeros(100), SENSITIVITY, EPSILON, rng=1)
    b = laplace_mech(np.zeros(100), SENSITIVITY, EPSILON, rng=2)
    assert not np.array_equal(a, b)


def test_laplace_mech_advances_a_shared_generator():
    rng = np.random.default_rng(0)
    assert laplace_mech(0.0, 1, 1, rng=rng) != laplace_mech(0.0, 1, 1, rng=rng)


def test_laplace_mech_without_rng_is_random():
    assert not np.array_equal(laplace_mech(np.zeros(10), 1, 1), laplace_mech(np.zeros(10), 1, 1))


@pytest.mark.parametrize("epsilon", BAD_EPSILONS)
def test_laplace_mech_rejects_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        laplace_mech(1.0, 1.0, epsilon)


def test_laplace_mech_rejects_an_array_epsilon():
    with pytest.raises(ValueError, match=r"epsilon must be a single number \(a finite number > 0\), got an array of shape \(2,\)"):
        laplace_mech(1.0, 1.0, np.array([0.5, 1.0]))


@pytest.mark.parametrize("sensitivity", BAD_SENSITIVITIES)
def test_laplace_mech_rejects_bad_sensitivity(sensitivity):
    with pytest.raises(ValueError, match="sensitivity must be a finite number >= 0"):
        laplace_mech(1.0, sensitivity, 1.0)


def test_laplace_mech_message_shows_the_value_received():
    with pytest.raises(ValueError, match=r"epsilon must be a finite number > 0, got -1$"):
        laplace_mech(1.0, 1.0, -1)


@pytest.mark.parametrize("value", [math.nan, [1.0, math.inf], [[-math.inf]]])
def test_laplace_mech_rejects_non_finite_values(value):
    with pytest.raises(ValueError, match=r"value must hold finite numbers \(no NaN or inf\)"):
        laplace_mech(value, 1.0, 1.0)


@pytest.mark.parametrize("value", ["10", ["a", "b"], [None, 1.0], {"a": 1}])
def test_laplace_mech_rejects_non_numbers(value):
    with pytest.raises(ValueError, match="value must hold numbers"):
        laplace_mech(value, 1.0, 1.0)


# --- laplace_mech: the distribution -----------------------------------------------------


@pytest.fixture(scope="module")
def noise():
    """N draws of the noise alone, added per element to an array of zeros."""
    return laplace_mech(np.zeros(N), SENSITIVITY, EPSILON, rng=np.random.default_rng(20240601))


def test_laplace_noise_follows_laplace_of_scale_sensitivity_over_epsilon(noise):
    # Kolmogorov-Smirnov against Lap(4): false failure 1e-6.
    check_distribution(noise, stats.laplace(scale=SCALE).cdf, what="Laplace noise", false_failure=FALSE_FAILURE)


def test_the_ks_check_would_catch_a_swapped_scale(noise):
    """The same test rejects the classic mistake of scale epsilon / sensitivity."""
    wrong = np.random.default_rng(7).laplace(0, EPSILON / SENSITIVITY, N)
    assert stats.kstest(wrong, stats.laplace(scale=SCALE).cdf).pvalue < FALSE_FAILURE
    gaussian = np.random.default_rng(7).normal(0, math.sqrt(2) * SCALE, N)  # same variance, wrong shape
    assert stats.kstest(gaussian, stats.laplace(scale=SCALE).cdf).pvalue < FALSE_FAILURE


def test_laplace_noise_has_mean_zero(noise):
    check_mean(noise, 0.0, math.sqrt(2) * SCALE, what="mean of the noise", false_failure=FALSE_FAILURE)


def test_laplace_noise_has_variance_two_b_squared(noise):
    # E[Z^2] = 2 b^2 and sd(Z^2) = sqrt(E Z^4 - (E Z^2)^2) = sqrt(24 b^4 - 4 b^4) = sqrt(20) b^2.
    check_mean(noise**2, 2 * SCALE**2, math.sqrt(20) * SCALE**2, what="squared noise", false_failure=FALSE_FAILURE)


def test_laplace_noise_is_independent_per_element(noise):
    """Noise added once to a whole array would make every entry equal."""
    assert np.unique(noise).size == N
    # Lag-1 correlation of independent draws is ~ N(0, 1/N): 6.1 standard errors.
    correlation = np.corrcoef(noise[:-1], noise[1:])[0, 1]
    assert abs(correlation) < stats.norm.isf(FALSE_FAILURE**1.5 / 2) / math.sqrt(N)


def test_laplace_mech_is_value_plus_noise():
    """The value shifts the distribution: check it on an array of distinct values."""
    values = np.linspace(-100, 100, N)
    noisy = laplace_mech(values, SENSITIVITY, EPSILON, rng=np.random.default_rng(3))
    check_distribution(noisy - values, stats.laplace(scale=SCALE).cdf, what="noisy - value", false_failure=FALSE_FAILURE)


def test_laplace_privacy_loss_is_bounded_by_epsilon():
    """Density ratio on neighbours (answers differing by the sensitivity) never exceeds e^epsilon."""
    outputs = np.linspace(-50, 50, 2001)
    log_ratio = stats.laplace(0, SCALE).logpdf(outputs) - stats.laplace(SENSITIVITY, SCALE).logpdf(outputs)
    assert np.abs(log_ratio).max() == pytest.approx(EPSILON)
    assert np.abs(log_ratio).max() <= EPSILON + 1e-12


# --- laplace_tail and laplace_interval -------------------------------------------------


def test_laplace_tail_formula():
    assert laplace_tail(4.0, SENSITIVITY, EPSILON) == pytest.approx(math.exp(-1))
    assert laplace_tail(0.0, SENSITIVITY, EPSILON) == 1.0
    assert laplace_tail(10.0, 1.0, 0.3) == pytest.approx(math.exp(-3))
    assert isinstance(laplace_tail(1, 1, 1), float)


def test_laplace_tail_with_zero_sensitivity_is_a_point_mass():
    assert laplace_tail(0.0, 0.0, 1.0) == 1.0
    assert laplace_tail(1e-9, 0.0, 1.0) == 0.0


def test_laplace_tail_matches_simulation(noise):
    t = 6.0
    check_fraction(np.abs(noise) >= t, laplace_tail(t, SENSITIVITY, EPSILON), what="P(|noise| >= 6)",
                   false_failure=FALSE_FAILURE)


@pytest.mark.parametrize("t", [-1, -1e-12, math.nan, math.inf, True, "1", [1.0]])
def test_laplace_tail_rejects_bad_t(t):
    with pytest.raises(ValueError, match="t must be a finite number >= 0"):
        laplace_tail(t, 1.0, 1.0)


def test_laplace_tail_rejects_bad_privacy_parameters():
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        laplace_tail(1.0, 1.0, 0)
    with pytest.raises(ValueError, match="sensitivity must be a finite number >= 0"):
        laplace_tail(1.0, -1.0, 1.0)


def test_laplace_interval_formula_and_consistency_with_the_tail():
    w = laplace_interval(SENSITIVITY, EPSILON, 0.05)
    assert w == pytest.approx(SCALE * math.log(20))
    assert laplace_tail(w, SENSITIVITY, EPSILON) == pytest.approx(0.05)
    assert laplace_interval(1.0, 0.5, 0.05) == pytest.approx(5.991464547107979)


def test_laplace_interval_coverage_matches_simulation(noise):
    w = laplace_interval(SENSITIVITY, EPSILON, 0.1)
    check_fraction(np.abs(noise) <= w, 0.9, what="coverage of the 90% interval", false_failure=FALSE_FAILURE)


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5, math.nan, True, "0.05", None])
def test_laplace_interval_rejects_bad_alpha(alpha):
    with pytest.raises(ValueError, match="alpha must be a number strictly between 0 and 1"):
        laplace_interval(1.0, 1.0, alpha)


def test_laplace_interval_rejects_bad_privacy_parameters():
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        laplace_interval(1.0, math.inf, 0.05)
    with pytest.raises(ValueError, match="sensitivity must be a finite number >= 0"):
        laplace_interval(math.nan, 1.0, 0.05)


# --- sensitivities --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lower", "upper", "expected"),
    [(-5, 3, 5.0), (2, 7, 7.0), (-9, -1, 9.0), (0, 0, 0.0), (-2.5, 2.5, 2.5), (0, 100, 100.0)],
)
def test_clipped_sum_sensitivity(lower, upper, expected):
    assert clipped_sum_sensitivity(lower, upper) == expected


def test_clipped_sum_sensitivity_rejects_reversed_bounds():
    with pytest.raises(ValueError, match="lower must be <= upper, got lower=3.0, upper=-5.0"):
        clipped_sum_sensitivity(3, -5)


@pytest.mark.parametrize("bad", [math.nan, math.inf, True, "1", None])
def test_clipped_sum_sensitivity_rejects_non_finite_bounds(bad):
    with pytest.raises(ValueError, match="lower must be a finite number"):
        clipped_sum_sensitivity(bad, 1.0)
    with pytest.raises(ValueError, match="upper must be a finite number"):
        clipped_sum_sensitivity(0.0, bad)


def test_proportion_sensitivity():
    assert proportion_sensitivity(200) == 0.005
    assert proportion_sensitivity(1) == 1.0
    assert proportion_sensitivity(4.0) == 0.25


@pytest.mark.parametrize("n", [0, -3, 2.5, True, math.nan, math.inf, "10", None])
def test_proportion_sensitivity_rejects_bad_n(n):
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        proportion_sensitivity(n)


# --- noisy_average ----------------------------------------------------------------------


def test_noisy_average_returns_a_float_close_to_the_clipped_mean():
    values = np.random.default_rng(1).integers(18, 90, size=10_000)
    result = noisy_average(values, 0, 100, epsilon=1.0, rng=np.random.default_rng(2))
    assert isinstance(result, float)
    # Noise on the sum has scale 200, on the count 2: the error is far below 1.
    assert abs(result - values.mean()) < 1.0


def test_noisy_average_clips_before_summing():
    values = np.full(10_000, 1000.0)
    assert abs(noisy_average(values, 0, 100, epsilon=1.0, rng=0) - 100.0) < 1.0
    assert abs(noisy_average(-values, -10, 10, epsilon=1.0, rng=0) + 10.0) < 1.0


def test_noisy_average_splits_epsilon_in_half(monkeypatch):
    """Sum and count each get epsilon / 2 and their own sensitivity (sequential composition)."""
    calls = []
    original = laplace_module.laplace_mech

    def spy(value, sensitivity, epsilon, rng=None):
        calls.append((float(value), float(sensitivity), float(epsilon)))
        return original(value, sensitivity, epsilon, rng=rng)

    monkeypatch.setattr(laplace_module, "laplace_mech", spy)
    noisy_average([1.0, 5.0, 20.0], -4, 10, epsilon=0.8, rng=0)
    assert calls == [(16.0, 10.0, 0.4), (3.0, 1.0, 0.4)]


def test_noisy_average_spread_matches_half_epsilon_each():
    """With n = 10^4 values at 50 in [0, 100] and epsilon 1 the estimate's sd is about
    sqrt((sqrt2*200/n)^2 + (50*sqrt2*2/n)^2) = 0.0316; spending all of epsilon on each half
    would halve it. The sample sd of 2,000 runs is within a few percent of the truth."""
    n, trials = 10_000, 2_000
    rng = np.random.default_rng(11)
    values = np.full(n, 50.0)
    results = np.array([noisy_average(values, 0, 100, epsilon=1.0, rng=rng) for _ in range(trials)])
    expected_sd = math.hypot(math.sqrt(2) * 200 / n, 50 * math.sqrt(2) * 2 / n)
    check_mean(results, 50.0, expected_sd, what="noisy averages", false_failure=FALSE_FAILURE)
    assert 0.8 < results.std(ddof=1) / expected_sd < 1.2


def test_noisy_average_same_seed_same_output():
    values = np.arange(100.0)
    assert noisy_average(values, 0, 100, 1.0, rng=5) == noisy_average(values, 0, 100, 1.0, rng=5)
    assert noisy_average(values, 0, 100, 1.0, rng=5) != noisy_average(values, 0, 100, 1.0, rng=6)


def test_noisy_average_validation():
    with pytest.raises(ValueError, match="lower must be <= upper"):
        noisy_average([1.0], 5, 1, 1.0)
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        noisy_average([1.0], 0, 1, 0.0)
    with pytest.raises(ValueError, match="values must hold finite numbers"):
        noisy_average([1.0, math.nan], 0, 1, 1.0)
    with pytest.raises(ValueError, match="values must hold numbers"):
        noisy_average(["a"], 0, 1, 1.0)


# --- uniform noise ----------------------------------------------------------------------


def test_uniform_noise_epsilon_is_infinite():
    assert uniform_noise_epsilon() == math.inf


def test_bounded_noise_has_an_output_impossible_on_a_neighbour():
    """Uniform noise on [-3, 3] around f(D) = 0 and f(D') = 1: the outputs in [-3, -2) happen
    with probability 1/6 under D and never under D', so the privacy loss is infinite."""
    bound = 3.0
    on_d = stats.uniform(loc=0 - bound, scale=2 * bound)
    on_d_prime = stats.uniform(loc=1 - bound, scale=2 * bound)
    p_d = on_d.cdf(-2.0) - on_d.cdf(-3.0)
    p_d_prime = on_d_prime.cdf(-2.0) - on_d_prime.cdf(-3.0)
    assert p_d == pytest.approx(1 / 6) and p_d_prime == 0
    assert dplib.max_privacy_loss([p_d, 1 - p_d], [p_d_prime, 1 - p_d_prime]) == uniform_noise_epsilon()


def test_reexported_from_the_package():
    for name in laplace_module.__all__:
        assert getattr(dplib, name) is getattr(laplace_module, name)


# --- the vectorized sampler behind laplace_mech --------------------------------------------


@pytest.mark.parametrize("shape", [(), (0,), (1,), (1000,), (30, 40)])
@pytest.mark.parametrize("scale", [1e-3, 1.0, SCALE])
def test_noise_is_numpys_laplace_from_the_same_uniforms(shape, scale):
    """Same draws as rng.laplace (to 2 ulp: numpy's vectorized log), same use of the generator."""
    ours, numpys = np.random.default_rng(8), np.random.default_rng(8)
    noise = laplace_module.laplace_noise(ours, scale, shape)
    expected = numpys.laplace(0.0, scale, shape)
    assert noise.shape == expected.shape
    np.testing.assert_array_max_ulp(noise, expected, maxulp=2)
    assert ours.random() == numpys.random()


def test_noise_with_zero_scale_is_exactly_zero():
    ours, numpys = np.random.default_rng(3), np.random.default_rng(3)
    noise = laplace_module.laplace_noise(ours, 0.0, (100,))
    np.testing.assert_array_equal(noise, numpys.laplace(0.0, 0.0, 100))
    assert not np.signbit(noise).any()
    assert ours.random() == numpys.random()


class FirstUniformIsZero:
    """A generator whose first uniform is exactly 0.0 (probability 2**-53 in real life)."""

    def __init__(self, seed):
        self.generator = np.random.default_rng(seed)
        self.bit_generator = self.generator.bit_generator
        self.laplace = self.generator.laplace

    def random(self, shape):
        draws = self.generator.random(shape)
        draws.flat[0] = 0.0
        return draws


def test_noise_falls_back_to_numpy_when_a_uniform_is_zero():
    """numpy rejects U = 0 and draws again; the fast path hands such a call back to numpy."""
    noise = laplace_module.laplace_noise(FirstUniformIsZero(4), 2.0, (50,))
    np.testing.assert_array_equal(noise, np.random.default_rng(4).laplace(0.0, 2.0, 50))
    assert np.isfinite(noise).all()


def test_laplace_privacy_loss_formula():
    """Check the privacy loss against the log-ratio of the Laplace densities."""
    outputs = np.linspace(-10, 10, 41)
    scale = 2.0 / 0.8
    expected = (-np.abs(outputs - 1.0) / scale) - (-np.abs(outputs - 3.0) / scale)
    assert np.allclose(laplace_privacy_loss(outputs, 1.0, 3.0, scale=2.0 / 0.8), expected)
    loss = laplace_privacy_loss(outputs, 1.0, 3.0, scale=dplib.laplace_scale(2.0, 0.8))
    assert np.abs(loss).max() == pytest.approx(0.8)  # reaches epsilon outside [f(D), f(D')], never more
    with pytest.raises(ValueError, match="scale"):
        laplace_privacy_loss(outputs, 0.0, 1.0, scale=0.0)
