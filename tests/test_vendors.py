"""dplib.vendors: the correct vendors are exactly as private as they claim, the broken ones provably are not.

Each mechanism is run on both datasets of its pair with the *same* seed, so both runs use the same noise:
the difference of the outputs is the shift the pair causes, and the noise itself can be compared with the
distribution it should come from. Shift and scale give the exact epsilon of a Laplace mechanism, |shift| / scale.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dplib import audit_vendors, can_produce, laplace_privacy_loss, vendor_mechanisms
from dplib.vendors import DEFECTS, TRUE_EPSILON, ReusedNoiseCount

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
LAPLACE_VENDORS = [("A", 40.0, 1.0, 1.0), ("B", 30.0, 2.0, 1.0), ("E", 15.0, 1.0, 2.0), ("F", 15.0, 5.0, 2.0)]


@pytest.mark.parametrize("name, answer, shift, scale", LAPLACE_VENDORS)
def test_laplace_vendors_have_the_shift_and_scale_that_fix_their_epsilon(name, answer, shift, scale):
    vendor, on_d, on_d_prime = paired_runs(name)
    assert on_d_prime - on_d == pytest.approx(np.full(RUNS, shift), abs=1e-9)
    assert laplace_scale_of(on_d - answer) == pytest.approx(scale)
    outputs = np.linspace(answer - 30, answer + 30, 2_001)
    exact = float(np.max(np.abs(laplace_privacy_loss(outputs, answer, answer + shift, scale))))
    assert exact == pytest.approx(shift / scale) == pytest.approx(TRUE_EPSILON[name])
    assert (exact <= vendor.claimed_epsilon + 1e-12) == (DEFECTS[name] is None)


def test_geometric_vendor_is_exactly_its_claim():
    """Integer noise G1 - G2 with success probability 1 - e^-0.5: P(k) / P(k + 1) = e^0.5 for k >= 0."""
    vendor, on_d, on_d_prime = paired_runs("C")
    assert np.array_equal(on_d_prime - on_d, np.ones(RUNS))
    generator = np.random.default_rng(1)
    success = 1 - math.exp(-0.5)
    expected = generator.geometric(success, RUNS) - generator.geometric(success, RUNS)
    assert np.array_equal(on_d - 40.0, expected)
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
