"""dplib.mechanisms.numpy_geometric: numpy's geometric sampler replayed exactly, checked against numpy at every boundary; grid_laplace's δ."""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from dplib.mechanisms.numpy_geometric import grid_laplace_delta, numpy_geometric_search


# --------------------------------------------------------------------------- numpy's geometric sampler, exactly

PCG64_MULTIPLIER = 0x2360ED051FC65DA44385DF649FCCF645  # numpy's PCG64 steps its 128-bit state by this, then outputs


def generator_whose_next_uint64_is(value: int) -> np.random.Generator:
    """A numpy Generator (PCG64) whose next 64-bit output is ``value``: the next ``random()`` is ``(value >> 11) / 2**53``.

    PCG64 steps its state (state * multiplier + increment mod 2**128) and outputs the XSL-RR of the new state: the
    high and low 64 bits XORed, rotated by the top 6 bits. The new state (high 0, low ``value``) outputs ``value``;
    the state before it is found by inverting the step.
    """
    generator = np.random.Generator(np.random.PCG64(0))
    state = generator.bit_generator.state
    increment = state["state"]["inc"]
    state["state"]["state"] = ((value - increment) * pow(PCG64_MULTIPLIER, -1, 2**128)) % 2**128
    state["has_uint32"], state["uinteger"] = 0, 0
    generator.bit_generator.state = state
    return generator


def generator_whose_next_uniform_is(j: int) -> np.random.Generator:
    """A Generator whose next uniform draw (``random()``, and the U of numpy's samplers) is exactly j / 2**53."""
    return generator_whose_next_uint64_is(j << 11)


def test_generator_whose_next_uniform_is_gives_that_uniform():
    for j in (0, 1, 12_345, 2**52, 2**53 - 1):
        assert generator_whose_next_uniform_is(j).random() == j / 2**53


@pytest.mark.parametrize("ratio", [0.5, 1.0])
def test_numpy_geometric_search_is_numpys_sampler_at_every_boundary(ratio):
    """On both sides of every boundary S_k the uniform gives numpy exactly the value the replayed arithmetic says."""
    success = -math.expm1(-ratio)  # grid_laplace's success probability
    search = numpy_geometric_search(success)
    assert sum(search.counts) + search.never_ends == 2**53 and min(search.counts) > 0
    last_of = np.cumsum(search.counts)  # uniforms j < last_of[k - 1] give at most k
    for k, end in enumerate(last_of, start=1):
        assert generator_whose_next_uniform_is(int(end) - 1).geometric(success) == k
        if k < len(last_of):
            assert generator_whose_next_uniform_is(int(end)).geometric(success) == k + 1
    draws = np.random.default_rng(5).geometric(success, 100_000)  # and on ordinary draws of the same stream
    uniforms = np.round(np.random.default_rng(5).random(100_000) * 2**53).astype(np.int64)
    assert np.array_equal(draws, np.searchsorted(last_of, uniforms, side="right") + 1)


def test_numpy_geometric_search_largest_value_and_hang():
    """At g / b = 1/2 numpy never returns more than 73, and the two largest uniforms (2.2e-16) never stop its loop."""
    half = numpy_geometric_search(-math.expm1(-0.5))
    assert len(half.counts) == 73 and half.never_ends == 2
    assert half.never_ends / 2**53 == pytest.approx(2.2e-16, rel=0.01)
    assert numpy_geometric_search(-math.expm1(-1.0)).never_ends == 0  # its sum reaches 1 - 2**-53
    with pytest.raises(ValueError, match=r"success must be in \[1/3, 1\)"):
        numpy_geometric_search(0.3)  # numpy inverts an exponential there


def test_numpys_geometric_sampler_hangs_on_the_largest_uniform():
    """numpy's own loop, fed U = 1 - 2 * 2**-53 at g / b = 1/2, is still running 1 s later (killed then; a draw takes microseconds)."""
    script = (
        "import math, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from test_numpy_geometric import generator_whose_next_uniform_is\n"
        "generator = generator_whose_next_uniform_is(2**53 - 2)\n"
        "print('drawing', flush=True)\n"
        "print(generator.geometric(-math.expm1(-0.5)), flush=True)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "drawing"
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=1.0)
    finally:
        child.kill()
        child.wait()


def test_grid_laplace_delta_recomputed_exactly():
    """δ of grid_laplace at g / b = 1/2 for shifts of 1, 2, 3 grid steps (and 3 at g / b = 1), as the notebooks state.

    The numbers come from numpy's arithmetic, replayed exactly: most of δ is the rounding of every P(G = k) to a
    multiple of 2**-53, a tenth or less the cut at the largest value.
    """
    stated = {(0.5, 1): 7.9e-16, (0.5, 2): 1.5e-15, (0.5, 3): 2.6e-15, (1.0, 3): 7.7e-15}
    for (ratio, shift), delta in stated.items():
        result = grid_laplace_delta(ratio, shift)
        assert result.delta == pytest.approx(delta, rel=0.04), (ratio, shift, result)
        assert 0 < result.from_cut < result.delta / 6
    assert grid_laplace_delta(1.0, 1).delta < grid_laplace_delta(1.0, 3).delta
    with pytest.raises(ValueError, match="ratio must be at least ln 1.5"):
        grid_laplace_delta(0.25, 1)
    with pytest.raises(ValueError, match="shift must be an integer >= 1"):
        grid_laplace_delta(0.5, 0)


def test_grid_laplace_delta_matches_a_direct_float_recount():
    """An independent recount: numpy's loop run in floats, the probabilities as exact fractions of 2**-53."""
    success = -math.expm1(-0.5)
    total = product = success
    sums = [total]
    for _ in range(200):  # the sum stops growing after 72 more terms
        product *= 1 - success
        total += product
        sums.append(total)
    below = [math.floor(Fraction(s) * 2**53) + 1 for s in sums]
    pmf = {k + 1: Fraction(high - low, 2**53) for k, (low, high) in enumerate(zip([0] + below, below)) if high > low}
    k_law = {}
    for a, pa in pmf.items():
        for b, pb in pmf.items():
            k_law[a - b] = k_law.get(a - b, 0) + pa * pb
    factor = Fraction("1.6487212707001281468486507878141635716537761007101")  # e^(1/2), to 50 digits
    delta = sum(max(Fraction(0), p - factor * k_law.get(j - 1, 0)) for j, p in k_law.items())
    assert float(delta) == pytest.approx(grid_laplace_delta(0.5, 1).delta, rel=1e-9)
