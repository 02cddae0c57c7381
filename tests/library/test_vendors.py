"""dplib.auditing.vendors: the correct vendors are exactly as private as they claim, the broken ones provably are not.

Each mechanism is run on both datasets of its pair with the *same* seed, so both runs use the same noise:
the difference of the outputs is the shift the pair causes, and the noise itself can be compared with the
distribution it should come from. Shift and scale give the exact epsilon of a Laplace mechanism, |shift| / scale.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dplib import (audit_threshold, audit_vendors, can_produce, discrete_laplace_steps, exact_grid_laplace,
                   laplace_privacy_loss, on_grid, vendor_mechanisms)
from dplib.auditing.vendors import DEFECTS, GRID, TRUE_EPSILON, ReusedNoiseCount, clamped_sum

VENDORS = {v.name: v for v in vendor_mechanisms(rng=0)}
RUNS = 5_000


def paired_runs(name: str, seed: int = 1):
    """Outputs on d and on d_prime drawn with the same seed (the same noise), and the true answers."""
    vendor = VENDORS[name]
    on_d = vendor.mechanism(vendor.d, size=RUNS, rng=seed)
    on_d_prime = vendor.mechanism(vendor.d_prime, size=RUNS, rng=seed)
    return vendor, on_d, on_d_prime


def laplace_scale_of(noise: np.ndarray, seed: int = 1) -> float:
    """The scale b with noise == b * (the standard Laplace draws of the same seed), checked draw by draw."""
    standard = np.random.default_rng(seed).laplace(0.0, 1.0, noise.size)
    scale = float(np.median(noise / standard))
    assert noise == pytest.approx(scale * standard, rel=1e-9, abs=1e-9)
    return scale


# (name, true answer on d, shift d -> d_prime, Laplace scale)
LAPLACE_VENDORS = [("B", 30.0, 2.0, 1.0), ("F", 15.0, 5.0, 2.0)]
GRID_VENDORS = [("A", 40.0, 1.0, 1.0), ("E", 15.0, 1.0, 2.0)]


@pytest.mark.parametrize("name, answer, shift, scale", LAPLACE_VENDORS)
def test_laplace_vendors_have_the_shift_and_scale_that_fix_their_epsilon(name, answer, shift, scale):
    vendor, on_d, on_d_prime = paired_runs(name)
    assert on_d_prime - on_d == pytest.approx(np.full(RUNS, shift), abs=1e-9)
    assert laplace_scale_of(on_d - answer) == pytest.approx(scale)
    outputs = np.linspace(answer - 30, answer + 30, 2_001)
    exact = float(np.max(np.abs(laplace_privacy_loss(outputs, answer, answer + shift, scale))))
    assert exact == pytest.approx(shift / scale) == pytest.approx(TRUE_EPSILON[name])
    assert (exact <= vendor.claimed_epsilon + 1e-12) == (DEFECTS[name] is None)


@pytest.mark.parametrize("name, answer, shift, scale", GRID_VENDORS)
def test_grid_vendors_add_exact_grid_laplace_to_an_answer_on_the_grid(name, answer, shift, scale):
    """A and E: the answer (on the grid 2**-20) plus exactly sampled grid steps; the pair shifts it by exactly 1."""
    vendor, on_d, on_d_prime = paired_runs(name)
    on_grid_answer = float(np.round(answer / GRID) * GRID)  # E's sum of 30 values rounded to the grid
    assert abs(on_grid_answer - answer) <= 30 * GRID
    assert np.array_equal(on_d_prime - on_d, np.full(RUNS, shift))  # exact: same steps, grid answers
    assert np.array_equal(on_d, exact_grid_laplace(np.full(RUNS, on_grid_answer), scale, GRID, rng=1))
    outputs = np.linspace(answer - 30, answer + 30, 2_001)
    exact = float(np.max(np.abs(laplace_privacy_loss(outputs, answer, answer + shift, scale))))
    assert exact == pytest.approx(shift / scale) == pytest.approx(TRUE_EPSILON[name])
    assert (exact <= vendor.claimed_epsilon + 1e-12) == (DEFECTS[name] is None)


def test_geometric_vendor_is_exactly_its_claim():
    """Exact integer noise P(k) proportional to e^(-0.5 |k|): P(k) / P(k + 1) = e^0.5 for k >= 0."""
    vendor, on_d, on_d_prime = paired_runs("C")
    assert np.array_equal(on_d_prime - on_d, np.ones(RUNS))
    assert np.array_equal(on_d - 40.0, discrete_laplace_steps(2.0, RUNS, rng=1))
    k = np.arange(-30, 31)
    pmf = (1 - math.exp(-0.5)) / (1 + math.exp(-0.5)) * np.exp(-0.5 * np.abs(k))  # the law of G1 - G2
    loss = np.log(pmf[:-1] / pmf[1:])  # output 40 + k on d against output 40 + k on d_prime (noise k - 1)
    assert np.max(np.abs(loss)) == pytest.approx(0.5) == pytest.approx(TRUE_EPSILON["C"]) == vendor.claimed_epsilon


def test_reused_noise_gives_two_certain_answers():
    vendor, on_d, on_d_prime = paired_runs("D")
    assert np.unique(on_d).size == 1 and np.unique(on_d_prime).size == 1  # every release is the same
    assert on_d_prime[0] - on_d[0] == pytest.approx(1.0)  # disjoint outputs: an infinite log-ratio
    assert vendor.mechanism(vendor.d, rng=7) == vendor.mechanism(vendor.d, rng=8)
    assert TRUE_EPSILON["D"] == math.inf
    assert ReusedNoiseCount(1.0, rng=3).noise != ReusedNoiseCount(1.0, rng=4).noise


def test_noise_scaled_to_the_data_has_unbounded_privacy_loss():
    vendor, on_d, on_d_prime = paired_runs("G")
    small = float(np.clip(vendor.d, 0, 1).max())
    assert laplace_scale_of(on_d - vendor.d.sum()) == pytest.approx(small)  # 0.3
    assert laplace_scale_of(on_d_prime - vendor.d_prime.sum()) == pytest.approx(1.0)
    # ln(p_d'(y) / p_d(y)) = ln(0.3) + |y - 4.2| / 0.3 - |y - 5.2|: it grows without bound with y.
    losses = [math.log(small) + abs(y - 4.2) / small - abs(y - 5.2) for y in (10.0, 20.0, 40.0)]
    assert losses[0] > vendor.claimed_epsilon and losses[2] > losses[1] > losses[0] > 10
    assert TRUE_EPSILON["G"] == math.inf


def test_textbook_float_vendor_has_outputs_its_neighbour_cannot_produce():
    vendor, on_d, _ = paired_runs("H")
    assert vendor.d.sum() == 0 and vendor.d_prime.sum() == 1
    assert stats.kstest(on_d, stats.laplace(scale=1.0).cdf).pvalue > 1e-3  # the distribution looks right...
    revealing = can_produce(on_d, 0.0, 1.0) & ~can_produce(on_d, 1.0, 1.0)
    assert revealing.mean() > 0.7  # ...but most outputs have probability 0 on d_prime: epsilon is infinite
    assert TRUE_EPSILON["H"] == math.inf


def test_clamped_sum_moves_by_upper_on_the_grid_and_refuses_an_upper_off_it():
    """upper on the grid: a record at upper moves the sum by exactly upper (its claimed sensitivity). Off the grid,
    upper = 3 * 2**-21 would round up to 2**-19 (4/3 of upper: epsilon 0.5 really 2/3), so it is refused."""
    values = np.linspace(0.0, 0.75, 40)
    for upper in (1.0, 0.75, 3 * GRID):
        without = clamped_sum(values, size=50, rng=3, epsilon=0.5, upper=upper)
        with_record = clamped_sum(np.append(values, 9.0), size=50, rng=3, epsilon=0.5, upper=upper)
        assert np.all(with_record - without == upper), upper
    off_grid = 3 * 2.0**-21
    assert np.round(off_grid / GRID) * GRID == 4 / 3 * off_grid  # what the sum would move by
    for upper in (off_grid, 0.1, 1.0 + 2.0**-30):
        with pytest.raises(ValueError, match=r"upper must be a multiple of the grid 2\*\*-20"):
            clamped_sum(values, rng=0, epsilon=0.5, upper=upper)
    with pytest.raises(ValueError, match="upper must be a finite number > 0"):
        clamped_sum(values, rng=0, epsilon=0.5, upper=0.0)


def test_each_mechanism_returns_a_number_or_size_releases():
    for vendor in VENDORS.values():
        single = vendor.mechanism(vendor.d, rng=0)
        assert isinstance(single, float), vendor.name
        assert np.shape(vendor.mechanism(vendor.d_prime, size=7, rng=0)) == (7,), vendor.name
        assert vendor.d_prime.size == vendor.d.size + 1  # add/remove neighbours
        assert np.all(np.diff(vendor.thresholds) > 0), vendor.name


def test_a_seeded_audit_refutes_exactly_the_vendors_a_threshold_can_catch():
    verdicts = audit_vendors(vendor_mechanisms(rng=0), 0.05, 20_000, rng=0)
    assert verdicts.index[verdicts["broken"]].tolist() == ["B", "D", "F", "G"]
    correct = [name for name, defect in DEFECTS.items() if defect is None]
    assert (verdicts.loc[correct, "epsilon_lower"] <= [TRUE_EPSILON[name] for name in correct]).all()


# --- The float attack against every vendor the course calls correct (issue 32) ---------------------------------------


def numpy_laplace_output(k, value: float, scale: float):
    """What ``value + Generator.laplace(0, scale)`` returns when its uniform is k / 2**53 (numpy's random_laplace).

    numpy: U >= 1/2 gives -scale * log(2 - U - U), 0 < U < 1/2 gives scale * log(U + U) (U = 0 is redrawn).
    Non-decreasing in k, like the textbook sampler, so a binary search decides membership exactly.
    """
    u = np.asarray(k, dtype=np.int64).astype(np.float64) * 2.0**-53
    with np.errstate(divide="ignore"):
        noise = np.where(u >= 0.5, 0.0 - scale * np.log(2.0 - u - u), 0.0 + scale * np.log(u + u))
    return value + noise


def numpy_laplace_can_produce(outputs: np.ndarray, value: float, scale: float) -> np.ndarray:
    low = np.ones(outputs.shape, dtype=np.int64)
    high = np.full(outputs.shape, 2**53 - 1, dtype=np.int64)
    for _ in range(54):
        middle = (low + high) // 2
        reaches = numpy_laplace_output(middle, value, scale) >= outputs
        high = np.where(reaches, middle, high)
        low = np.where(reaches, low, np.minimum(middle + 1, high))
    return numpy_laplace_output(low, value, scale) == outputs


def test_the_replay_of_numpys_laplace_is_numpys_laplace():
    rng = np.random.default_rng(12)
    state = rng.bit_generator.state
    draws = 40.0 + rng.laplace(0.0, 1.0, 2_000)
    rng.bit_generator.state = state
    k = (rng.random(2_000) * 2.0**53).astype(np.int64)  # the same 53-bit uniforms
    assert np.array_equal(numpy_laplace_output(k, 40.0, 1.0), draws)
    assert numpy_laplace_can_produce(draws, 40.0, 1.0).all()


def test_numpys_laplace_has_the_textbook_gaps_the_old_vendors_a_and_e_had():
    """The vendors A and E once added Generator.laplace: outputs of d that d_prime cannot produce (epsilon infinite)."""
    on_d = 40.0 + np.random.default_rng(13).laplace(0.0, 1.0, 2_000)  # old vendor A on d (40 people say yes)
    revealing = ~numpy_laplace_can_produce(on_d, 41.0, 1.0)
    assert revealing.sum() > 10  # about 2%: a revealing output has probability 0 on d_prime


CORRECT = [name for name, defect in DEFECTS.items() if defect is None]


def test_the_correct_vendors_are_exactly_the_grid_vendors():
    assert CORRECT == ["A", "C", "E"]


@pytest.mark.parametrize("name", CORRECT)
def test_no_output_of_a_correct_vendor_reveals_its_input(name):
    """Exact membership: every output on d can come from d_prime and back, with probabilities within e^claim exactly.

    Outputs of grid Laplace from the answer c are the points c + j g, each with probability proportional to
    exp(-|y - c| / b) (no cut-off: :func:`dplib.discrete_laplace_steps`). So y is possible from both answers
    exactly when both lie on its grid, and the log-ratio is (|y - c'| - |y - c|) / b <= |c - c'| / b.
    """
    vendor = VENDORS[name]
    granularity, scale = (1.0, 2.0) if name == "C" else (GRID, 1.0 / vendor.claimed_epsilon)
    answer_d = float(np.round(np.clip(vendor.d, 0, 1) / GRID).sum() * GRID)
    answer_d_prime = float(np.round(np.clip(vendor.d_prime, 0, 1) / GRID).sum() * GRID)
    outputs = np.concatenate([vendor.mechanism(vendor.d, size=20_000, rng=14),
                              vendor.mechanism(vendor.d_prime, size=20_000, rng=15)])
    assert on_grid(outputs, answer_d, granularity).all() and on_grid(outputs, answer_d_prime, granularity).all()
    log_ratio = (np.abs(outputs - answer_d_prime) - np.abs(outputs - answer_d)) / scale
    assert np.max(np.abs(log_ratio)) <= vendor.claimed_epsilon  # exact: the grid and the shift are exact doubles
    assert np.max(np.abs(log_ratio)) == TRUE_EPSILON[name]  # outputs beyond both answers reach the bound
    # The unit's own attack: the revealing event "possible from d, impossible from d_prime" never happens.
    revealing = on_grid(outputs, answer_d, granularity) & ~on_grid(outputs, answer_d_prime, granularity)
    assert not revealing.any()


@pytest.mark.parametrize("name", CORRECT)
def test_the_units_threshold_audit_finds_no_gap_in_a_correct_vendor(name):
    """The threshold audit of the unit, with 50,000 runs per stage at alpha = 1e-6: never above the claim."""
    vendor = VENDORS[name]
    bound = audit_threshold(vendor.mechanism, vendor.d, vendor.d_prime, vendor.thresholds, 50_000, 1e-6, rng=16)
    assert 0 <= bound <= vendor.claimed_epsilon
