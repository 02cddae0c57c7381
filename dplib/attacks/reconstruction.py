r"""The reconstruction attack of Dinur and Nissim (2003): many noisy subset counts give away almost every secret bit.

A dataset holds one secret bit per person, :math:`x \in \{0, 1\}^n`. Each query picks a random subset of
the people and asks how many of them have a 1: :math:`a = Ax + e`, with :math:`A` an :math:`m \times n`
0/1 matrix. Least squares, :math:`\hat x = \arg\min_z \|Az - a\|_2`, then rounding each entry to the
nearer of 0 and 1, recovers the bits. With :math:`m = c\,n` random queries, each entry of
:math:`\hat x - x` has standard deviation about :math:`2\sigma/\sqrt{m - n}` for noise of standard deviation
σ (the mean of an inverse Wishart matrix: :math:`E[(A_c^T A_c)^{-1}] = 4 I / (m - n - 1)` for the centred
±1/2 entries, not :math:`4 I / m`): noise well below :math:`\sqrt n` leaves almost nothing secret, noise of order :math:`\sqrt n` keeps a
constant fraction of the bits uncertain. "A little noise" is not privacy.

References
----------
I. Dinur, K. Nissim, "Revealing information while preserving privacy", PODS 2003.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dplib._validation import require_binary, require_nonnegative, require_numeric_array, require_positive_int

__all__ = ["subset_queries", "answer_queries", "reconstruct", "reconstruction_accuracy"]


def subset_queries(n: int, m: int, rng=None) -> np.ndarray:
    """``m`` random subsets of ``n`` people as an ``(m, n)`` 0/1 matrix: each person is in each subset with probability 1/2.

    Examples
    --------
    >>> subset_queries(4, 3, rng=0).shape
    (3, 4)
    """
    n, m = require_positive_int(n, "n"), require_positive_int(m, "m")
    return np.random.default_rng(rng).integers(0, 2, size=(m, n), dtype=np.int8)


def answer_queries(queries, secret, sigma: float, rng=None) -> np.ndarray:
    """The subset counts ``queries @ secret``, each plus independent Gaussian noise of standard deviation ``sigma``.

    Examples
    --------
    >>> answer_queries([[1, 1, 0], [0, 1, 1]], [1, 0, 1], 0.0)
    array([1., 1.])
    """
    queries = require_binary(queries, "queries")
    secret = require_binary(secret, "secret")
    if queries.ndim != 2 or queries.shape[1] != secret.size:
        raise ValueError(f"queries must be an (m, n) matrix with n = len(secret) = {secret.size}, got shape {queries.shape}")
    sigma = require_nonnegative(sigma, "sigma")
    counts = queries.astype(float) @ secret
    return counts + np.random.default_rng(rng).normal(0.0, sigma, counts.shape)


def reconstruct(queries, answers) -> np.ndarray:
    r"""The secret bits that best explain the noisy subset counts: least squares, rounded to 0 or 1.

    Notes
    -----
    :math:`\hat x = \arg\min_z \|Az - a\|_2` (``numpy.linalg.lstsq``), then :math:`x_i = 1` where
    :math:`\hat x_i \ge 1/2`. Least squares alone returns fractions; the bits are the answer.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> secret = rng.integers(0, 2, 50)
    >>> queries = subset_queries(50, 200, rng=rng)
    >>> bool((reconstruct(queries, answer_queries(queries, secret, 1.0, rng=rng)) == secret).all())
    True
    """
    queries = require_numeric_array(queries, "queries")
    answers = require_numeric_array(answers, "answers").ravel()
    if queries.ndim != 2 or queries.shape[0] != answers.size:
        raise ValueError(f"queries must be an (m, n) matrix with m = len(answers) = {answers.size}, got shape {queries.shape}")
    estimate, *_ = np.linalg.lstsq(queries, answers, rcond=None)
    return (estimate >= 0.5).astype(np.int64)


def reconstruction_accuracy(n: int, m: int, sigmas, trials: int, rng=None) -> pd.DataFrame:
    """Share of secret bits the attack recovers, for each noise level, over ``trials`` random datasets and query sets.

    Returns
    -------
    pandas.DataFrame
        Index ``sigma``; columns ``accuracy_mean`` and ``accuracy_std`` (over the trials) and
        ``sigma_over_sqrt_n``.

    Examples
    --------
    >>> table = reconstruction_accuracy(100, 400, [0.0, 100.0], trials=3, rng=0)
    >>> float(table.loc[0.0, "accuracy_mean"]), bool(table.loc[100.0, "accuracy_mean"] < 0.7)
    (1.0, True)
    """
    n, m, trials = require_positive_int(n, "n"), require_positive_int(m, "m"), require_positive_int(trials, "trials")
    rng = np.random.default_rng(rng)
    rows = []
    for sigma in require_numeric_array(sigmas, "sigmas").ravel():
        accuracies = []
        for _ in range(trials):
            secret = rng.integers(0, 2, n)
            queries = subset_queries(n, m, rng=rng)
            accuracies.append(float(np.mean(reconstruct(queries, answer_queries(queries, secret, sigma, rng=rng)) == secret)))
        rows.append((float(sigma), float(np.mean(accuracies)), float(np.std(accuracies)), float(sigma) / np.sqrt(n)))
    return pd.DataFrame(rows, columns=["sigma", "accuracy_mean", "accuracy_std", "sigma_over_sqrt_n"]).set_index("sigma")
