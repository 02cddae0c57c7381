r"""numpy's geometric sampler, exactly: the probabilities it really gives, and the δ of :func:`~dplib.mechanisms.discrete_laplace.grid_laplace`.

:func:`dplib.mechanisms.discrete_laplace.grid_laplace` draws its grid steps as the difference of two draws of
``numpy.random.Generator.geometric``. For success probabilities of at least 1/3 numpy finds the draw by a
search: one uniform :math:`U = j/2^{53}` compared with running sums of doubles. Replaying that arithmetic
(:func:`numpy_geometric_search`) gives every :math:`P(G = k)` exactly, as a multiple of :math:`2^{-53}`, the
largest value, and the uniforms on which the loop never ends; :func:`grid_laplace_delta` turns them into the
exact δ of ``grid_laplace`` for inputs a few grid steps apart. At :math:`g/b = 1/2`: largest value 73, a hang
for 2 of the :math:`2^{53}` uniforms, and δ = 7.9e-16, 1.5e-15, 2.6e-15 for shifts of 1, 2, 3 steps, mostly
from the rounded probabilities (the cut at 73 gives a tenth or less).

References
----------
numpy, ``numpy/random/src/distributions/distributions.c``: ``random_geometric_search``.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from typing import NamedTuple

from dplib._validation import require_epsilon, require_positive_int

__all__ = ["NumpyGeometric", "numpy_geometric_search", "GridLaplaceDelta", "grid_laplace_delta"]

#: numpy's ``random_geometric`` uses its search loop for success probabilities at least this (else inversion).
NUMPY_GEOMETRIC_SEARCH_FROM = 0.333333333333333333333333
#: ``Generator.random`` and numpy's samplers draw U = j / 2**53, j = 0, ..., 2**53 - 1.
UNIFORMS = 2**53


class NumpyGeometric(NamedTuple):
    """numpy's geometric search sampler, exactly: ``counts[k - 1]`` uniforms give k, ``never_ends`` give no answer.

    ``counts[k - 1] / 2**53`` is P(G = k) as numpy's arithmetic produces it; ``len(counts)`` is the largest
    value it ever returns; ``never_ends`` uniforms lie above every running sum, and the loop never stops.
    """

    counts: tuple[int, ...]
    never_ends: int


def numpy_geometric_search(success: float) -> NumpyGeometric:
    r"""The exact distribution of ``numpy.random.Generator.geometric(success)`` for success >= 1/3.

    Parameters
    ----------
    success : float
        The success probability p, in [1/3, 1): numpy's search branch (below 1/3 numpy inverts an
        exponential draw instead, another algorithm).

    Returns
    -------
    NumpyGeometric
        How many of the :math:`2^{53}` uniforms give each value 1, 2, ..., and how many give none.

    Notes
    -----
    numpy (``random_geometric_search`` in ``distributions.c``) draws :math:`U = j/2^{53}` and returns the
    first X with :math:`U \le S_X`, where ``S = prod = p`` and then ``prod *= 1 - p; S += prod`` in doubles.
    So :math:`P(G = k) = \#\{j : S_{k-1} < j/2^{53} \le S_k\} / 2^{53}`: a multiple of :math:`2^{-53}`, not
    :math:`p(1-p)^{k-1}`. The sums stop growing once ``prod`` is below half an ulp of S: the largest
    value is the last X whose sum grew, and a U above the final sum never stops the loop (numpy hangs).
    This function replays that arithmetic in Python floats, which are the same IEEE doubles.

    Examples
    --------
    >>> search = numpy_geometric_search(-math.expm1(-0.5))  # grid_laplace's p at g / b = 1/2
    >>> len(search.counts), search.never_ends, sum(search.counts) + search.never_ends == 2**53
    (73, 2, True)
    """
    p = require_epsilon(success, "success")
    if not NUMPY_GEOMETRIC_SEARCH_FROM <= p < 1:
        raise ValueError(f"success must be in [1/3, 1) (numpy's search branch), got {success!r}")
    q = 1.0 - p
    total = product = p
    below = [min(UNIFORMS, math.floor(total * UNIFORMS) + 1)]  # j with j / 2**53 <= S_1; S * 2**53 is exact
    while True:
        product *= q
        grown = total + product
        if grown == total:  # product only shrinks: the sum never grows again
            break
        total = grown
        below.append(min(UNIFORMS, math.floor(total * UNIFORMS) + 1))
    counts = [below[0]] + [high - low for low, high in zip(below, below[1:])]
    while counts and counts[-1] == 0:  # sums that grew without passing a new uniform
        counts.pop()
    return NumpyGeometric(tuple(counts), UNIFORMS - below[-1])


class GridLaplaceDelta(NamedTuple):
    """δ of :func:`dplib.mechanisms.discrete_laplace.grid_laplace` for one shift, and the part of it on outputs the other input cannot produce."""

    delta: float
    from_cut: float


def grid_laplace_delta(ratio: float, shift: int) -> GridLaplaceDelta:
    r"""The exact δ of :func:`dplib.mechanisms.discrete_laplace.grid_laplace` (numpy's geometric sampler) for inputs ``shift`` grid steps apart.

    Parameters
    ----------
    ratio : float
        g / b, the grid step over the scale, at least ln 1.5 (so that numpy's success probability
        :math:`1 - e^{-g/b}` is at least 1/3: its search branch, :func:`numpy_geometric_search`).
    shift : int
        How many grid steps apart the two rounded inputs are, >= 1.

    Returns
    -------
    GridLaplaceDelta
        ``delta``: :math:`\sum_j \max(0, P(K = j) - e^{\varepsilon} P(K = j - s))` at
        :math:`\varepsilon = s\,g/b`, the ε of that shift on the reals; ``from_cut``: the part of it on
        steps j the other input cannot reach at all (beyond the largest value).

    Notes
    -----
    K = G1 - G2 with G1, G2 independent draws of :func:`numpy_geometric_search`, computed exactly in
    integers (units of :math:`2^{-106}`), and the sum in 60-digit decimals: the terms are differences of
    numbers near 0.1 that agree to 15 digits. K is symmetric, so both directions give the same δ.
    At g / b = 1/2: δ = 7.9e-16, 1.5e-15, 2.6e-15 for shifts 1, 2, 3 (of which 4.4e-17, 1.1e-16, 2.4e-16
    from the cut); at g / b = 1: 1.0e-15, 2.8e-15, 7.7e-15.

    Examples
    --------
    >>> result = grid_laplace_delta(0.5, 1)
    >>> f"{result.delta:.1e}", result.from_cut < result.delta / 10
    ('7.9e-16', True)
    """
    ratio = require_epsilon(ratio, "ratio")
    if ratio < math.log(1.5):
        raise ValueError(f"ratio must be at least ln 1.5 = {math.log(1.5):.4f} (numpy's search branch), got {ratio!r}")
    shift = int(require_positive_int(shift, "shift"))
    counts = numpy_geometric_search(-math.expm1(-ratio)).counts  # grid_laplace's success probability
    differences: dict[int, int] = {}
    for first, first_count in enumerate(counts):
        for second, second_count in enumerate(counts):
            differences[first - second] = differences.get(first - second, 0) + first_count * second_count
    with localcontext() as context:
        context.prec = 60
        factor = (Decimal(ratio) * shift).exp()
        unit = Decimal(UNIFORMS) ** 2
        delta = from_cut = Decimal(0)
        for step, count in differences.items():
            other = differences.get(step - shift, 0)
            excess = (Decimal(count) - factor * other) / unit
            if excess > 0:
                delta += excess
                from_cut += excess if other == 0 else 0
        return GridLaplaceDelta(float(delta), float(from_cut))
