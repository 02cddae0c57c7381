"""Who pays for the noise: per-group outcomes of the exponential mechanism.

Each group of ``n`` people holds a binary trait; ``m`` of them (the minority,
``m <= n / 2``) have the rarer value. For every group separately the exponential
mechanism reports one of the two values, scored by how many people hold it. These
pure, vectorized functions give the probability that it reports the group's true
majority value or its minority value, for many groups and epsilons at once; the
assignment ``06_exponential_fairness`` and the fairness lecture widget draw them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.special import expit

from dplib._validation import require_numeric_array, require_sensitivity

__all__ = ["group_outcome_probabilities"]

SCORES = ("count", "proportion")


def _groups(group_sizes, minority_counts) -> tuple[pd.Index, np.ndarray, np.ndarray]:
    """Group names, sizes and minority counts, validated (names from a mapping or Series, else 0..g-1)."""
    if isinstance(group_sizes, Mapping | pd.Series):
        names = pd.Index(list(group_sizes.keys()), name="group")
        sizes = [group_sizes[name] for name in names]
        if isinstance(minority_counts, Mapping | pd.Series):
            if set(minority_counts.keys()) != set(names):
                raise ValueError(
                    f"minority_counts must name the same groups as group_sizes ({list(names)}), "
                    f"got {list(minority_counts.keys())}"
                )
            minority_counts = [minority_counts[name] for name in names]
    else:
        sizes = group_sizes
        names = None
    sizes = np.atleast_1d(require_numeric_array(sizes, "group_sizes"))
    minority = np.atleast_1d(require_numeric_array(minority_counts, "minority_counts"))
    if sizes.ndim != 1 or sizes.size == 0:
        raise ValueError(f"group_sizes must be a non-empty 1-D array, got shape {sizes.shape}")
    if minority.shape != sizes.shape:
        raise ValueError(f"minority_counts must have one entry per group ({sizes.size}), got shape {minority.shape}")
    if not ((sizes == np.round(sizes)) & (sizes >= 1)).all():
        raise ValueError(f"group_sizes must be integers >= 1, got {sizes.tolist()}")
    if not ((minority == np.round(minority)) & (minority >= 0) & (2 * minority <= sizes)).all():
        raise ValueError(
            f"minority_counts must be integers between 0 and half the group size, got {minority.tolist()} "
            f"for group sizes {sizes.tolist()}"
        )
    if names is None:
        names = pd.RangeIndex(sizes.size, name="group")
    return names, sizes, minority


def _epsilons(epsilons) -> np.ndarray:
    values = np.atleast_1d(require_numeric_array(epsilons, "epsilons"))
    if values.ndim != 1 or values.size == 0 or not (values > 0).all():
        raise ValueError(f"epsilons must be a non-empty 1-D array of finite numbers > 0, got {np.asarray(epsilons)!r}")
    return values


def group_outcome_probabilities(
    group_sizes, minority_counts, epsilons, *, score: str = "count", sensitivity: float | None = None
) -> pd.DataFrame:
    r"""Per group and epsilon, the chance the exponential mechanism reports the group's majority or minority value.

    Parameters
    ----------
    group_sizes : mapping, Series or array-like of int
        Number of people ``n`` in each group (integers >= 1). A mapping (``{"Blue": 30}``)
        or Series names the groups; otherwise they are numbered from 0.
    minority_counts : mapping, Series or array-like of int
        Number ``m`` of people holding the rarer value in each group, ``0 <= m <= n / 2``;
        same keys (or order) as ``group_sizes``.
    epsilons : float or array-like of float
        Privacy parameters, finite and > 0.
    score : {"count", "proportion"}, default "count"
        Score of a value: how many people hold it, or which fraction of the group does.
    sensitivity : float, optional
        Sensitivity of the score, finite and > 0. Default: the right one, 1 for counts and
        ``1 / n`` for proportions (then both scores give the same probabilities). Passing
        ``sensitivity=1`` with proportion scores shows the mistake of ignoring ``n``.

    Returns
    -------
    pandas.DataFrame
        Index ``epsilon``; columns a MultiIndex ``(outcome, group)`` with outcome
        ``"majority"`` and ``"minority"``, so ``table["majority"]`` is an epsilon x group
        table (each row of a group sums to 1 over the two outcomes).

    Raises
    ------
    ValueError
        If a parameter is outside the range above; the message names it.

    Notes
    -----
    With scores :math:`u_{maj} = n - m` and :math:`u_{min} = m` and sensitivity
    :math:`\Delta`, the exponential mechanism reports the majority value with probability

    .. math:: P(\text{majority}) = \frac{e^{\varepsilon (n - m) / 2\Delta}}
              {e^{\varepsilon (n - m) / 2\Delta} + e^{\varepsilon m / 2\Delta}}
              = \frac{1}{1 + e^{-\varepsilon (n - 2m) / 2\Delta}},

    i.e. :math:`1 / (1 + e^{-\varepsilon (n - 2m) / 2})` for counts. It depends on the
    group only through the *count margin* :math:`n - 2m = n (1 - 2p)`, so a small group
    (small ``n``) is misreported more often than a large one with a higher base rate ``p``.
    Proportion scores with sensitivity ``1 / n`` give the same margin; with sensitivity 1
    the margin shrinks to :math:`1 - 2p`: group size drops out and the mechanism is far
    noisier (in truth :math:`\varepsilon / n`-DP) than the epsilon it claims.
    Computed with the logistic function (``scipy.special.expit``), which does not overflow.

    References
    ----------
    F. McSherry, K. Talwar, "Mechanism design via differential privacy", FOCS 2007.

    Examples
    --------
    >>> table = group_outcome_probabilities({"Blue": 30, "Red": 70}, {"Blue": 1, "Red": 9}, [0.05, 0.2])
    >>> table["majority"].round(3)  # doctest: +NORMALIZE_WHITESPACE
    group     Blue    Red
    epsilon
    0.05     0.668  0.786
    0.20     0.943  0.995
    >>> wrong = group_outcome_probabilities([30, 70], [1, 9], 1.0, score="proportion", sensitivity=1.0)
    >>> wrong["majority"].round(3)  # doctest: +NORMALIZE_WHITESPACE
    group        0      1
    epsilon
    1.0      0.615  0.592
    """
    names, sizes, minority = _groups(group_sizes, minority_counts)
    epsilons = _epsilons(epsilons)
    if score not in SCORES:
        raise ValueError(f"score must be one of {SCORES}, got {score!r}")
    if sensitivity is None:
        delta = np.ones_like(sizes) if score == "count" else 1.0 / sizes
    else:
        delta = require_sensitivity(sensitivity)
        if delta == 0:
            raise ValueError("sensitivity must be > 0 for the exponential mechanism, got 0")
    margin = sizes - 2 * minority  # u(majority) - u(minority) for count scores
    if score == "proportion":
        margin = margin / sizes
    # Softmax over two outcomes = logistic function of the exponent difference (no overflow).
    exponent_gap = epsilons[:, None] * margin[None, :] / (2.0 * delta)
    values = np.concatenate([expit(exponent_gap), expit(-exponent_gap)], axis=1)
    columns = pd.MultiIndex.from_product([["majority", "minority"], names], names=["outcome", "group"])
    return pd.DataFrame(values, index=pd.Index(epsilons, name="epsilon"), columns=columns)
