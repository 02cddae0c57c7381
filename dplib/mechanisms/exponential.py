"""The exponential mechanism: choosing an item privately, in its softmax and Gumbel-max forms."""

from __future__ import annotations

import numpy as np
from scipy.special import softmax

from dplib._validation import require_epsilon, require_numeric_array, require_positive_int, require_sensitivity

__all__ = [
    "exponential_probabilities",
    "exponential_mechanism",
    "report_noisy_max_gumbel",
    "score_sensitivity_of_proportion",
]


def _require_scores(scores) -> np.ndarray:
    scores = require_numeric_array(scores, "scores")
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError(f"scores must be a non-empty 1-D array, got shape {scores.shape}")
    return scores


def _exponents(scores, epsilon, sensitivity) -> np.ndarray:
    scores = _require_scores(scores)
    epsilon = require_epsilon(epsilon)
    sensitivity = require_sensitivity(sensitivity)
    if sensitivity == 0:
        raise ValueError("sensitivity must be > 0 for the exponential mechanism, got 0")
    return epsilon * scores / (2.0 * sensitivity)


def exponential_probabilities(scores, epsilon: float, sensitivity: float) -> np.ndarray:
    r"""Selection probabilities of the exponential mechanism.

    Notes
    -----
    .. math:: P(r) = \frac{\exp(\varepsilon\,u(r) / 2\Delta u)}{\sum_{r'} \exp(\varepsilon\,u(r') / 2\Delta u)}

    The factor 2 makes it epsilon-DP: changing one person moves the numerator and the
    normaliser each by at most :math:`e^{\varepsilon/2}`. Computed as a softmax, which
    subtracts the largest exponent first, so scores of 1e4 at epsilon 10 do not overflow.

    References
    ----------
    F. McSherry, K. Talwar, "Mechanism design via differential privacy", FOCS 2007.

    Examples
    --------
    >>> exponential_probabilities([1.0, 0.0], epsilon=2.0, sensitivity=1.0).round(4)
    array([0.7311, 0.2689])
    """
    return softmax(_exponents(scores, epsilon, sensitivity))


def exponential_mechanism(scores, epsilon: float, sensitivity: float, rng=None, size=None):
    """Draw index(es) from :func:`exponential_probabilities` (a sample, never the plain argmax).

    Examples
    --------
    >>> import numpy as np
    >>> exponential_mechanism([3.0, 1.0, 0.0], 1.0, 1.0, rng=np.random.default_rng(0), size=5)
    array([1, 0, 0, 0, 1])
    """
    probabilities = exponential_probabilities(scores, epsilon, sensitivity)
    if size is not None:
        size = require_positive_int(size, "size", minimum=0) if np.ndim(size) == 0 else tuple(size)
    rng = np.random.default_rng(rng)
    return rng.choice(probabilities.size, size=size, p=probabilities)


def report_noisy_max_gumbel(scores, epsilon: float, sensitivity: float, rng=None, size=None):
    r"""The exponential mechanism in Gumbel-max form: argmax of exponents plus Gumbel noise.

    Notes
    -----
    If :math:`G_r` are i.i.d. standard Gumbel, :math:`\arg\max_r (a_r + G_r)` equals r
    with probability :math:`e^{a_r} / \sum e^{a_{r'}}` (the Gumbel-max trick), so with
    :math:`a_r = \varepsilon u(r) / 2\Delta u` it draws from the same distribution as
    :func:`exponential_mechanism`.

    Examples
    --------
    >>> import numpy as np
    >>> report_noisy_max_gumbel([3.0, 1.0, 0.0], 1.0, 1.0, rng=np.random.default_rng(0), size=5)
    array([2, 0, 0, 2, 1])
    """
    exponents = _exponents(scores, epsilon, sensitivity)
    if size is not None:
        size = require_positive_int(size, "size", minimum=0) if np.ndim(size) == 0 else tuple(size)
    rng = np.random.default_rng(rng)
    shape = () if size is None else tuple(np.atleast_1d(size))
    noisy = exponents + rng.gumbel(size=shape + exponents.shape)
    winner = np.argmax(noisy, axis=-1)
    return int(winner) if size is None else winner


def score_sensitivity_of_proportion(n: int) -> float:
    """Sensitivity ``1/n`` of a score that is a proportion over a group of ``n`` people.

    Using sensitivity 1 for such a score divides every exponent by n: even a large
    epsilon then leaves the choice close to a coin flip.

    Examples
    --------
    >>> score_sensitivity_of_proportion(30)
    0.03333333333333333
    """
    return 1.0 / require_positive_int(n, "n")
