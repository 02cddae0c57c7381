"""Simulations: how the error of k-RR count estimates behaves over many trials, and populations to run them on.

Names say which mechanism they simulate: :func:`krr_error_vs_epsilon` and
:func:`theoretical_krr_errors` are about k-ary randomized response only.
``error_vs_epsilon`` is the same function under the name the 05 exercise API uses.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from dplib._validation import require_epsilon, require_numeric_array, require_positive_int
from dplib.accounting.channels import krr_channel
from dplib.estimation.kary_rr import estimate_krr_counts, krr_count_std

__all__ = ["krr_error_vs_epsilon", "error_vs_epsilon", "theoretical_krr_errors", "apportion"]


def krr_error_vs_epsilon(true_counts, epsilons, trials: int, rng=None, progress: bool = False) -> pd.DataFrame:
    r"""L1 and L2 error of k-RR count estimates, mean and spread over ``trials`` trials per epsilon.

    Parameters
    ----------
    true_counts : array_like of int
        How many people hold each of the k categories.
    epsilons : array_like of float
        Privacy parameters to try, each finite and > 0.
    trials : int
        Independent repetitions per epsilon (>= 2: one trial per epsilon misleads).
    rng : numpy.random.Generator, int or None
        Source of randomness.
    progress : bool
        Show a progress bar over epsilons.

    Returns
    -------
    pandas.DataFrame
        Index ``epsilon``; columns ``l1_mean``, ``l1_std``, ``l2_mean``, ``l2_std``.

    Notes
    -----
    The reports of the :math:`n_j` people holding value j are jointly
    :math:`\mathrm{Multinomial}(n_j, M_{j\cdot})` for the k-RR channel M, so a trial
    draws the k report counts directly: the same distribution as randomizing every
    person with :func:`dplib.k_rand_resp`, at a cost independent of n. Each trial's
    counts are estimated with :func:`dplib.estimate_krr_counts`.

    Examples
    --------
    >>> table = krr_error_vs_epsilon([8196, 14831, 6499, 15696], [0.5, 2.0], trials=20, rng=0)
    >>> list(table.columns)
    ['l1_mean', 'l1_std', 'l2_mean', 'l2_std']
    >>> bool(table.loc[0.5, "l1_mean"] > table.loc[2.0, "l1_mean"])
    True
    """
    truth = require_numeric_array(true_counts, "true_counts")
    if truth.ndim != 1 or truth.size < 2 or (truth < 0).any() or (truth != np.round(truth)).any():
        raise ValueError("true_counts must be a 1-D array of at least 2 non-negative integer counts")
    truth = truth.astype(np.int64)
    trials = require_positive_int(trials, "trials", minimum=2)
    epsilons = [require_epsilon(e, "epsilons") for e in np.atleast_1d(epsilons)]
    rng = np.random.default_rng(rng)
    k = truth.size
    rows = []
    for epsilon in tqdm(epsilons, desc="epsilons", disable=not progress):
        channel = krr_channel(k, epsilon)
        observed = sum(rng.multinomial(n_j, channel[j], size=trials) for j, n_j in enumerate(truth))
        errors = np.empty((trials, 2))
        for t, counts in enumerate(observed):
            reports = np.repeat(np.arange(k), counts)
            residual = estimate_krr_counts(reports, k, epsilon) - truth
            errors[t] = np.abs(residual).sum(), np.sqrt((residual**2).sum())
        rows.append((epsilon, *errors.mean(axis=0), *errors.std(axis=0, ddof=1)))
    table = pd.DataFrame(rows, columns=["epsilon", "l1_mean", "l2_mean", "l1_std", "l2_std"])
    return table.set_index("epsilon")[["l1_mean", "l1_std", "l2_mean", "l2_std"]]


#: The 05 exercise API's name for :func:`krr_error_vs_epsilon` (the same function object,
#: so ``dplib.testing.disabled(dplib.error_vs_epsilon)`` switches both off).
error_vs_epsilon = krr_error_vs_epsilon


def theoretical_krr_errors(true_counts, epsilons) -> pd.DataFrame:
    r"""Approximate expected L1 and L2 errors of k-RR count estimates.

    Notes
    -----
    Each estimate is approximately normal with standard deviation :math:`\sigma_j`
    (:func:`dplib.krr_count_std`), so :math:`E\,\mathrm{L1} \approx \sqrt{2/\pi}\sum_j \sigma_j`
    and :math:`E\,\mathrm{L2} \approx \sqrt{\sum_j \sigma_j^2}`. Both fall like
    :math:`1/\varepsilon` for small epsilon.

    Examples
    --------
    >>> theoretical_krr_errors([100, 100], [1.0]).round(2).to_dict("index")
    {1.0: {'l1_mean': 21.65, 'l2_mean': 19.19}}
    """
    rows = []
    for epsilon in np.atleast_1d(epsilons):
        sigma = krr_count_std(true_counts, float(epsilon))
        rows.append((float(epsilon), np.sqrt(2 / np.pi) * sigma.sum(), np.sqrt((sigma**2).sum())))
    return pd.DataFrame(rows, columns=["epsilon", "l1_mean", "l2_mean"]).set_index("epsilon")


def apportion(weights, n: int) -> np.ndarray:
    """Split ``n`` people into integer counts proportional to ``weights`` (largest remainders).

    Examples
    --------
    >>> apportion([8196, 14831, 6499, 15696], 100).tolist()
    [18, 33, 14, 35]
    """
    weights = require_numeric_array(weights, "weights")
    n = require_positive_int(n, "n")
    exact = weights / weights.sum() * n
    counts = np.floor(exact).astype(np.int64)
    remainders = exact - counts
    counts[np.argsort(-remainders, kind="stable")[: n - counts.sum()]] += 1
    return counts
