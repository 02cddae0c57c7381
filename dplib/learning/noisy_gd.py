r"""Private learning in the central model: noisy gradient descent (DP-GD) for logistic regression.

A trusted curator holds everybody's record, trains a model and publishes only the model.
Each step of full-batch DP-GD (Abadi et al. 2016, without their minibatch sampling) is

1. the gradient of each person's loss, :math:`g_i = (\mathrm{sigmoid}(\theta \cdot x_i) - y_i)\, x_i`;
2. each clipped to L2 norm at most C, :math:`\bar g_i = g_i \min(1, C / \|g_i\|_2)`;
3. noise added **once** to their sum, :math:`S = \sum_i \bar g_i + \mathcal N(0, \sigma^2 C^2 I)`,
   with σ the *noise multiplier*;
4. a step :math:`\theta \leftarrow \theta - \eta\, S / n`.

Its privacy (the sensitivity of the clipped sum, ρ over T steps, the noise multiplier for a
target epsilon) is :mod:`dplib.accounting.dp_gd`; DP-SGD's amplification by subsampling is
:mod:`dplib.accounting.subsampling`; the model, its loss and its gradients are :mod:`dplib.learning.logistic_model`,
whose tools unit 09's notebooks import from here too (``adult_design_matrices``, ``logistic_accuracy``, ...).

References
----------
M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar, L. Zhang, "Deep learning
with differential privacy", CCS 2016.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from dplib._validation import require_epsilon, require_numeric_array, require_positive_int, require_sensitivity
from dplib.accounting.dp_gd import noise_multiplier_for, require_clip_norm
from dplib.learning.logistic_model import (
    adult_design_matrices,
    logistic_accuracy,
    nonprivate_logistic_regression,
    per_example_gradients,
    require_design,
    require_theta,
)

__all__ = [
    "clip_gradients",
    "noisy_gradient",
    "noisy_gradient_descent",
    "noisy_gradient_descent_path",
    "central_accuracy",
]

#: Hyperparameters of the course's DP-GD on Adult, chosen on rows 20,000 and up of Adult's train split
#: (never trained on in unit 09), not on the people the model is trained and scored on.
CLIP_NORM = 1.0
STEPS = 100
LEARNING_RATE = 2.0
#: delta of every (epsilon, delta) in unit 09: far below 1 / n for n = 10,000 people.
DELTA = 1e-6


# --------------------------------------------------------------------------- clipping


def _clip_factors(norms: np.ndarray, clip_norm: float) -> np.ndarray:
    """``min(1, clip_norm / norm)`` for each norm; 1 for norms at most ``clip_norm`` (0 included: no division by 0)."""
    factors = np.ones_like(norms)
    too_long = norms > clip_norm
    factors[too_long] = clip_norm / norms[too_long]
    return factors


def clip_gradients(gradients, clip_norm: float) -> np.ndarray:
    r"""Scale each row (one person's gradient) down to L2 norm at most ``clip_norm``; shorter rows stay as they are.

    Parameters
    ----------
    gradients : array_like of shape (n, d)
        One gradient per row.
    clip_norm : float
        C, finite and > 0.

    Returns
    -------
    numpy.ndarray of shape (n, d)
        Row i is :math:`g_i \min(1, C / \|g_i\|_2)`: the same direction, norm
        :math:`\min(\|g_i\|_2, C)`. The norm is at most C exactly, in floating point too: a row
        that rounding leaves a few units in the last place above C is shrunk until it is not.

    Notes
    -----
    Each row is clipped on its own. Clipping the sum (or the mean) instead bounds the batch, not
    each person: one person could still move the sum by far more than C.

    Examples
    --------
    >>> clip_gradients([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]], 1.0)
    array([[0.6, 0.8],
           [0.3, 0.4],
           [0. , 0. ]])
    """
    gradients = require_numeric_array(gradients, "gradients")
    if gradients.ndim != 2:
        raise ValueError(f"gradients must be a 2-D array (one row per person), got shape {gradients.shape}")
    clip_norm = require_clip_norm(clip_norm)
    clipped = gradients * _clip_factors(np.linalg.norm(gradients, axis=1), clip_norm)[:, None]
    too_long = np.linalg.norm(clipped, axis=1) > clip_norm
    while too_long.any():  # a few ulps of rounding at most: one or two passes
        clipped[too_long] *= np.nextafter(1.0, 0.0)
        too_long = np.linalg.norm(clipped, axis=1) > clip_norm
    return clipped


# --------------------------------------------------------------------------- the noisy step and DP-GD


def _require_noise_multiplier(noise_multiplier) -> float:
    return require_sensitivity(noise_multiplier, "noise_multiplier")  # finite and >= 0


def noisy_gradient(theta, X, y, clip_norm: float, noise_multiplier: float, rng=None) -> np.ndarray:
    r"""One noisy gradient of DP-GD: the sum of clipped per-example gradients plus Gaussian noise, over n.

    Parameters
    ----------
    theta : array_like of shape (d,)
        The current weights.
    X, y : array_like
        The data, shapes (n, d) and (n,). The result is divided by n = ``len(X)``, which is public
        under substitution neighbours only: under add/remove only the noisy sum is private (see
        :mod:`dplib.accounting.dp_gd`).
    clip_norm : float
        C, finite and > 0.
    noise_multiplier : float
        σ, finite and >= 0: the noise on the sum has standard deviation σC in every coordinate
        (0: no noise, no privacy).
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    numpy.ndarray of shape (d,)
        :math:`\frac1n\big(\sum_i \bar g_i + Z\big)`, :math:`Z \sim \mathcal N(0, \sigma^2 C^2 I_d)`.

    Notes
    -----
    The noise is drawn once, for the sum, and scaled to the sum's sensitivity (C, or 2C under
    substitution: see :func:`dplib.accounting.dp_gd.dp_gd_rho`), not to 1; dividing by n afterwards divides the
    noise too, so the average carries noise of standard deviation σC/n. Noise of standard deviation σC added
    to every example instead would be :math:`\sqrt n` times larger on the sum: under substitution the sum
    would be n times more private (ρ/n), bought with :math:`\sqrt n` times the error. Under add/remove it
    would not even be that: one more person adds one more noise term, so the sum's variance changes with
    n (at n = 10 and σ = 2 the Rényi divergence of order 2 is 0.0328, above (ρ/n)·2 = 0.025, and it is
    infinite from order n + 1).

    Examples
    --------
    >>> import numpy as np
    >>> noisy_gradient([0.0, 0.0], [[1.0, 2.0], [1.0, -1.0]], [1, 0], 1.0, 0.0).round(4)  # no noise: the clipped mean
    array([ 0.0264, -0.6972])
    """
    X, y = require_design(X, y)
    theta = require_theta(theta, X.shape[1])
    clip_norm = require_clip_norm(clip_norm)
    noise_multiplier = _require_noise_multiplier(noise_multiplier)
    rng = np.random.default_rng(rng)
    clipped_sum = clip_gradients(per_example_gradients(theta, X, y), clip_norm).sum(axis=0)
    noise = rng.normal(0.0, noise_multiplier * clip_norm, size=clipped_sum.shape)
    return (clipped_sum + noise) / len(X)


def noisy_gradient_descent_path(X, y, clip_norm: float, noise_multiplier: float, steps: int, learning_rate: float,
                                rng=None) -> np.ndarray:
    r"""Every iterate of full-batch DP-GD from :math:`\theta_0 = 0`: an array of shape (steps + 1, d).

    Row t is :math:`\theta_t`, with :math:`\theta_{t+1} = \theta_t - \eta\, \mathrm{noisy\_gradient}(\theta_t)`;
    every step draws fresh noise. Parameters as in :func:`noisy_gradient_descent`. The path to
    ``steps`` is the beginning of the path to more steps drawn from the same ``rng`` state.

    Notes
    -----
    For logistic regression each :math:`g_i = r_i x_i` with :math:`r_i = \mathrm{sigmoid}(\theta \cdot x_i) - y_i`,
    so :math:`\|g_i\| = |r_i|\,\|x_i\|` and the clipped sum is :math:`X^\top (c \odot r)`, with
    :math:`c_i = \min(1, C / \|g_i\|)`: the same sum as :func:`noisy_gradient`'s (up to rounding, and
    with the same noise draws), without building the n x d matrix of gradients.

    Examples
    --------
    >>> import numpy as np
    >>> X, y = np.array([[1.0, 2.0], [1.0, -1.0]]), np.array([1, 0])
    >>> path = noisy_gradient_descent_path(X, y, 1.0, 0.0, 3, 0.5)
    >>> path.shape, bool(np.all(path[0] == 0))
    ((4, 2), True)
    """
    X, y = require_design(X, y)
    clip_norm = require_clip_norm(clip_norm)
    noise_multiplier = _require_noise_multiplier(noise_multiplier)
    steps = require_positive_int(steps, "steps", minimum=0)
    learning_rate = require_epsilon(learning_rate, "learning_rate")
    rng = np.random.default_rng(rng)
    n, d = X.shape
    row_norms = np.linalg.norm(X, axis=1)
    X_columns = np.ascontiguousarray(X.T)  # X^T w is fastest on a contiguous transpose
    thetas = np.zeros((steps + 1, d))
    for t in range(steps):
        residuals = special.expit(X @ thetas[t]) - y
        clipped_sum = X_columns @ (_clip_factors(np.abs(residuals) * row_norms, clip_norm) * residuals)
        noise = rng.normal(0.0, noise_multiplier * clip_norm, size=d)
        thetas[t + 1] = thetas[t] - learning_rate * (clipped_sum + noise) / n
    return thetas


def noisy_gradient_descent(X, y, clip_norm: float, noise_multiplier: float, steps: int, learning_rate: float,
                           rng=None) -> np.ndarray:
    r"""Full-batch DP-GD for logistic regression: ``steps`` noisy gradient steps from :math:`\theta_0 = 0`.

    Parameters
    ----------
    X, y : array_like
        The data, shapes (n, d) and (n,), labels 0 or 1.
    clip_norm : float
        C, finite and > 0.
    noise_multiplier : float
        σ, finite and >= 0 (0: plain clipped gradient descent).
    steps : int
        T >= 0, the number of steps; each one looks at the data and draws fresh noise.
    learning_rate : float
        η, finite and > 0.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    numpy.ndarray of shape (d,)
        :math:`\theta_T`. Its privacy: :func:`dplib.accounting.dp_gd.dp_gd_epsilon` of ``noise_multiplier``
        and ``steps``.

    Notes
    -----
    .. math:: \theta_{t+1} = \theta_t - \frac{\eta}{n}\Big(\sum_i \bar g_i(\theta_t) + Z_t\Big),
              \quad Z_t \sim \mathcal N(0, \sigma^2 C^2 I) \text{ independent}

    (Abadi et al. 2016, Algorithm 1, with every person in every step).

    Examples
    --------
    >>> import numpy as np
    >>> X_train, y_train, X_test, y_test = adult_design_matrices(2_000)
    >>> theta = noisy_gradient_descent(X_train, y_train, 1.0, 20.0, 100, 2.0, rng=np.random.default_rng(0))
    >>> logistic_accuracy(theta, X_test, y_test) > 0.78
    True
    """
    return noisy_gradient_descent_path(X, y, clip_norm, noise_multiplier, steps, learning_rate, rng=rng)[-1]


# --------------------------------------------------------------------------- accuracy


def central_accuracy(epsilons, trials: int, rng=None, *, data=None, clip_norm: float = CLIP_NORM, steps: int = STEPS,
                     learning_rate: float = LEARNING_RATE, delta: float = DELTA,
                     neighbours: str = "substitute") -> pd.DataFrame:
    """Test accuracy of DP-GD trained at each epsilon, over ``trials`` runs, beside the non-private model.

    Parameters
    ----------
    epsilons : sequence of float
        Budgets of the whole training (all ``steps``), at ``delta``.
    trials : int
        Independent trainings per epsilon (>= 2, for a spread).
    rng : numpy.random.Generator, int or None
        Source of randomness.
    data : tuple of arrays, optional
        ``(X_train, y_train, X_test, y_test)``; default :func:`adult_design_matrices`.
    clip_norm, steps, learning_rate : float, int, float
        DP-GD's hyperparameters (the course's :data:`CLIP_NORM`, :data:`STEPS`, :data:`LEARNING_RATE`).
    delta : float
        delta of every epsilon.
    neighbours : {"substitute", "add_remove"}
        Default ``"substitute"``: the notion under which unit 08's locally private records are
        epsilon-DP, so the two accuracies are compared at the same privacy.

    Returns
    -------
    pandas.DataFrame
        Index ``epsilon`` (the given epsilons, then ``inf`` for :func:`nonprivate_logistic_regression`),
        columns ``accuracy_mean`` and ``accuracy_std`` (``ddof=1``; 0 for the deterministic baseline),
        always on the test split; the noise multiplier of each epsilon is :func:`noise_multiplier_for`.

    Examples
    --------
    >>> table = central_accuracy([1.0], 2, rng=0, data=adult_design_matrices(2_000))
    >>> list(table.index), bool(table.loc[1.0, "accuracy_mean"] > 0.75)
    ([1.0, inf], True)
    """
    trials = require_positive_int(trials, "trials", minimum=2)
    X_train, y_train, X_test, y_test = adult_design_matrices() if data is None else data
    rng = np.random.default_rng(rng)
    rows = {}
    for epsilon in epsilons:
        sigma = noise_multiplier_for(epsilon, delta, steps, neighbours)
        scores = [logistic_accuracy(noisy_gradient_descent(X_train, y_train, clip_norm, sigma, steps, learning_rate,
                                                           rng=rng), X_test, y_test)
                  for _ in range(trials)]
        rows[float(epsilon)] = (np.mean(scores), np.std(scores, ddof=1))
    rows[np.inf] = (logistic_accuracy(nonprivate_logistic_regression(X_train, y_train), X_test, y_test), 0.0)
    table = pd.DataFrame.from_dict(rows, orient="index", columns=["accuracy_mean", "accuracy_std"])
    table.index.name = "epsilon"
    return table
