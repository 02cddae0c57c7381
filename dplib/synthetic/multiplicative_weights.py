r"""MWEM: answer many counting queries with a synthetic histogram (Hardt, Ligett & McSherry 2012).

MWEM keeps a synthetic histogram :math:`A` over a small domain, starting uniform. Each of its
:math:`T` rounds **chooses** the query :math:`A` answers worst, privately (the exponential
mechanism, :func:`select_worst_query`), **measures** that query on the real data (the Laplace
mechanism) and **updates** :math:`A` towards the measurement (multiplicative weights,
:func:`multiplicative_weights_update`). Each round spends :math:`\varepsilon/T`, half on the
choice and half on the measurement, so the run is :math:`\varepsilon`-DP by sequential
composition, under add/remove neighbours (one person changes every counting query by at most 1).
"""

from __future__ import annotations

import numpy as np

from dplib._validation import require_epsilon, require_nonnegative, require_numeric_array, require_positive_int
from dplib.mechanisms.exponential import exponential_mechanism
from dplib.mechanisms.laplace import laplace_mech
from dplib.synthetic.marginals import require_domain, require_marginal_columns

__all__ = ["marginal_queries", "select_worst_query", "multiplicative_weights_update", "mwem"]


def marginal_queries(domain: dict, marginals) -> np.ndarray:
    """The counting queries of the cells of some marginals, as 0/1 rows over the flattened domain.

    Parameters
    ----------
    domain : dict
        Column -> tuple of its possible values; the histogram's cells are the combinations of all
        columns, flattened in C order (``numpy.ravel_multi_index`` over the domain's columns).
    marginals : sequence of tuple of str
        Marginals whose every cell becomes one query (a workload).

    Returns
    -------
    numpy.ndarray
        Shape ``(number of cells of all marginals, number of cells of the domain)``; row ``q`` is
        1 on the domain's cells that fall in that marginal cell, so ``queries @ histogram`` answers
        them all.

    Examples
    --------
    >>> marginal_queries({"a": ("x", "y"), "b": ("u", "v")}, [("a",)])
    array([[1., 1., 0., 0.],
           [0., 0., 1., 1.]])
    """
    domain = require_domain(domain)
    columns = list(domain)
    shape = tuple(len(domain[c]) for c in columns)
    grid = np.indices(shape).reshape(len(shape), -1)  # the value of every column, for every cell
    rows = []
    for key in marginals:
        key = require_marginal_columns(key, domain)
        sub_shape = tuple(len(domain[c]) for c in key)
        cell_of = np.ravel_multi_index([grid[columns.index(c)] for c in key], sub_shape)
        rows.append(cell_of[None, :] == np.arange(np.prod(sub_shape))[:, None])
    return np.vstack(rows).astype(float)


def select_worst_query(errors, epsilon: float, rng=None) -> int:
    r"""Choose a query, likelier the worse the synthetic data answers it: the exponential mechanism.

    Parameters
    ----------
    errors : array-like
        Score of each query: :math:`|q(A) - q(D)|`, the synthetic answer's absolute error.
    epsilon : float
        Budget of this choice, finite and > 0.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    int
        The index of the chosen query.

    Notes
    -----
    .. math:: P(q) \propto \exp\Big(\frac{\varepsilon\, |q(A) - q(D)|}{2 \cdot 1}\Big)

    Adding or removing one person moves every :math:`q(D)` by at most 1, so every score moves by at
    most 1 (sensitivity 1), but **not all in the same direction**: the error of a query whose
    synthetic answer was too high shrinks while another's grows. The score is not monotone in
    :math:`D`, so the factor 2 is needed (it may be dropped only when every score moves the same
    way, e.g. plain counts under add/remove). :func:`dplib.exponential_mechanism` with
    sensitivity 1.

    Examples
    --------
    >>> select_worst_query([0.0, 250.0, 3.0], epsilon=0.1, rng=np.random.default_rng(0))
    1
    """
    return int(exponential_mechanism(errors, epsilon, 1.0, rng=rng))


def multiplicative_weights_update(synthetic, query, measurement: float) -> np.ndarray:
    r"""Move a synthetic histogram towards one measured query, keeping its total.

    Parameters
    ----------
    synthetic : array-like
        The histogram :math:`A` (counts >= 0, total :math:`n = \sum A`).
    query : array-like
        The query's 0/1 (or [0, 1]) weight on every cell, same shape.
    measurement : float
        The noisy answer :math:`m` of the query on the real data.

    Returns
    -------
    numpy.ndarray
        :math:`A'` with the same total:

        .. math:: A'(x) \propto A(x) \exp\Big(q(x) \frac{m - q(A)}{2n}\Big), \qquad \sum_x A'(x) = n .

    Notes
    -----
    Cells the query counts grow when the synthetic answer :math:`q(A)` is below the measurement,
    and shrink when above. The exponents are shifted by their largest before ``exp`` (the
    normalization absorbs the shift), so a wild measurement cannot overflow.

    Examples
    --------
    >>> multiplicative_weights_update([5.0, 5.0], [1.0, 0.0], 10.0).round(3)
    array([5.622, 4.378])
    """
    synthetic = require_numeric_array(synthetic, "synthetic")
    query = require_numeric_array(query, "query")
    measurement = float(measurement)
    if query.shape != synthetic.shape:
        raise ValueError(f"query must have the shape of synthetic {synthetic.shape}, got {query.shape}")
    total = synthetic.sum()
    exponents = query * (measurement - float((query * synthetic).sum())) / (2 * total)
    weights = synthetic * np.exp(exponents - exponents.max())
    return total * weights / weights.sum()


def mwem(histogram, queries, total: float, epsilon: float, rounds: int, rng=None) -> np.ndarray:
    r"""MWEM: a synthetic histogram that answers ``queries`` well, :math:`\varepsilon`-DP (add/remove).

    Parameters
    ----------
    histogram : array-like
        The real data as counts over the domain's cells (1-D).
    queries : array-like
        Counting queries, one 0/1 row per query over the same cells (:func:`marginal_queries`).
    total : float
        The synthetic histogram's total, > 0: public, or measured beforehand with its own budget
        (the true size is private under add/remove neighbours).
    epsilon : float
        Budget of the whole run, finite and > 0.
    rounds : int
        The number :math:`T` of rounds (>= 1).
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        The synthetic histogram after the last round, total ``total``.

    Notes
    -----
    :math:`A_0 = ` ``total`` times the uniform distribution. Round :math:`t = 1..T`:

    1. choose :math:`q_t` with :func:`select_worst_query` on the errors :math:`|q(A_{t-1}) - q(D)|`,
       at :math:`\varepsilon / 2T`;
    2. measure :math:`m_t = q_t(D) + \mathrm{Lap}(2T/\varepsilon)` (sensitivity 1, :math:`\varepsilon / 2T`);
    3. update: for :math:`s = 1, \dots, t` in order, :math:`A \leftarrow`
       :func:`multiplicative_weights_update` :math:`(A, q_s, m_s)`; the result is :math:`A_t`.

    Each round is :math:`\varepsilon/T`-DP, and the :math:`T` rounds add up to :math:`\varepsilon`
    (sequential composition, which holds for rounds chosen adaptively). Charging the rounds as one
    would make the run :math:`T\varepsilon`-DP. Step 3 replays every measurement made so far, the
    improvement Hardt et al. suggest: it reads only noisy answers already released, so it is
    post-processing and costs nothing. (Their accuracy theorem is stated for the average of
    :math:`A_1, \dots, A_T` with one update per round; the last histogram, with replays, is what
    practice uses.)

    References
    ----------
    M. Hardt, K. Ligett, F. McSherry, "A simple and practical algorithm for differentially private
    data release", NeurIPS 2012.

    Examples
    --------
    >>> queries = marginal_queries({"a": ("x", "y"), "b": ("u", "v")}, [("a",), ("b",)])
    >>> synthetic = mwem([30.0, 10.0, 0.0, 0.0], queries, 40.0, 50.0, 10, rng=np.random.default_rng(0))
    >>> synthetic.round(1), round(float(synthetic.sum()), 6)
    (array([27.7,  9.7,  2. ,  0.7]), 40.0)
    """
    histogram = require_numeric_array(histogram, "histogram")
    queries = require_numeric_array(queries, "queries")
    if histogram.ndim != 1 or queries.ndim != 2 or queries.shape[1] != histogram.size:
        raise ValueError(f"queries must have shape (number of queries, {histogram.size}) for a 1-D histogram, "
                         f"got {queries.shape} and {histogram.shape}")
    total = require_nonnegative(total, "total")
    epsilon = require_epsilon(epsilon)
    rounds = require_positive_int(rounds, "rounds")
    rng = np.random.default_rng(rng)
    answers = queries @ histogram
    synthetic = np.full(histogram.size, total / histogram.size)
    epsilon_half_round = epsilon / (2 * rounds)  # T rounds, each split between choosing and measuring
    measured = []
    for _ in range(rounds):
        chosen = select_worst_query(np.abs(queries @ synthetic - answers), epsilon_half_round, rng=rng)
        measured.append((chosen, laplace_mech(answers[chosen], 1.0, epsilon_half_round, rng=rng)))
        for query, measurement in measured:  # replaying released answers: post-processing
            synthetic = multiplicative_weights_update(synthetic, queries[query], measurement)
    return synthetic
