r"""Private learning in the central model: noisy gradient descent (DP-GD) for logistic regression.

A trusted curator holds everybody's record, trains a model and publishes only the model.
Each step of full-batch DP-GD (Abadi et al. 2016, without their minibatch sampling) is

1. the gradient of each person's loss, :math:`g_i = (\mathrm{sigmoid}(\theta \cdot x_i) - y_i)\, x_i`;
2. each clipped to L2 norm at most C, :math:`\bar g_i = g_i \min(1, C / \|g_i\|_2)`;
3. noise added **once** to their sum, :math:`S = \sum_i \bar g_i + \mathcal N(0, \sigma^2 C^2 I)`,
   with σ the *noise multiplier*;
4. a step :math:`\theta \leftarrow \theta - \eta\, S / n`.

**Privacy, and under which neighbours.** Step 3 is the Gaussian mechanism on the clipped sum. Its
L2 sensitivity is C under **add/remove** neighbours (one person's clipped gradient is in the sum or
not) and 2C under **substitution** (one clipped gradient replaced by another, both of norm at most C).
So each step is :math:`\rho = \Delta_2^2 / (2\sigma^2 C^2)`-zCDP: :math:`1/(2\sigma^2)` or
:math:`2/\sigma^2` (Bun & Steinke 2016, Prop. 1.6); C cancels. Every step looks at the data
again: T steps are :math:`T\rho`-zCDP (Lemma 2.3), and
:math:`\varepsilon = T\rho + 2\sqrt{T\rho \ln(1/\delta)}` (Prop. 1.3).

**Dividing by n.** Step 4 is post-processing of the noisy sum only when n is public. Under
substitution it is (both neighbours hold n people), so :func:`noisy_gradient`, which divides by
``len(X)``, is exactly as private as the noisy sum. Under add/remove it is not: the averages on the
two neighbours are :math:`\mathcal N(S/n, \sigma^2C^2/n^2)` and
:math:`\mathcal N((S + \bar g)/(n+1), \sigma^2C^2/(n+1)^2)`, Gaussians of different variances,
whose Rényi divergence (of the wider from the narrower) is infinite for every order
:math:`\alpha \ge (n+1)^2/(2n+1) \approx (n+1)/2` (it is finite only while
:math:`\alpha\sigma_Q^2 + (1-\alpha)\sigma_P^2 > 0`; Gil, Alajaji & Linder 2013): no ρ bounds it, so the
step divided by ``len(X)`` is not zCDP under add/remove. The add/remove ρ of :func:`dp_gd_rho` is the
ρ of the T noisy sums, and of steps that divide by a size fixed and published in advance, as Abadi
et al. (2016) divide by their fixed lot size L.

**Amplification by subsampling.** DP-SGD draws each step's batch by including every person
independently with probability q. A step on such a sample is far more private than on everybody:
an (ε, δ)-DP step becomes :math:`(\ln(1 + q(e^\varepsilon - 1)),\ q\delta)`-DP under add/remove
neighbours (Balle, Barthe & Gaboardi 2018), and the T steps of DP-SGD are accounted for with the
Rényi DP of the sampled Gaussian mechanism (Mironov, Talwar & Zhang 2019):
:func:`subsampled_epsilon`, :func:`sampled_gaussian_epsilon`. That account is an upper bound, not
the tight one: the conversion from Rényi DP to (ε, δ) loses some ε, and accountants of the privacy
loss distribution (Koskela, Jälkö & Honkela 2020; Gopi, Lee & Wutschitz 2021) get closer to the
true curve.

References
----------
M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar, L. Zhang, "Deep learning
with differential privacy", CCS 2016.
M. Bun, T. Steinke, "Concentrated differential privacy: simplifications, extensions, and lower
bounds", TCC 2016.
M. Gil, F. Alajaji, T. Linder, "Rényi divergence measures for commonly used univariate continuous
distributions", Information Sciences 249, 2013.
B. Balle, G. Barthe, M. Gaboardi, "Privacy amplification by subsampling: tight analyses via
couplings and divergences", NeurIPS 2018.
I. Mironov, K. Talwar, L. Zhang, "Rényi differential privacy of the sampled Gaussian mechanism",
arXiv:1908.10530, 2019.
A. Koskela, J. Jälkö, A. Honkela, "Computing tight differential privacy guarantees using FFT",
AISTATS 2020.
S. Gopi, Y. T. Lee, L. Wutschitz, "Numerical composition of differential privacy", NeurIPS 2021.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import optimize, special

from dplib._validation import (
    _require_binary,
    _require_epsilon,
    _require_numeric_array,
    _require_open_probability,
    _require_positive_int,
    _require_probability,
    _require_sensitivity,
)
from dplib.gaussian import zcdp_rho, zcdp_to_epsilon
from dplib.learning import FEATURES, LABEL, adult_learning_data

__all__ = [
    "design_matrix",
    "adult_design_matrices",
    "logistic_loss",
    "logistic_accuracy",
    "per_example_gradients",
    "clip_gradients",
    "gradient_sum_sensitivity",
    "noisy_gradient",
    "noisy_gradient_descent",
    "noisy_gradient_descent_path",
    "dp_gd_rho",
    "dp_gd_epsilon",
    "noise_multiplier_for",
    "nonprivate_logistic_regression",
    "central_accuracy",
    "subsampled_epsilon",
    "sampled_gaussian_epsilon",
]

#: The two notions of neighbouring datasets, and the L2 sensitivity of a sum of clipped gradients in clip norms.
SENSITIVITY_IN_CLIP_NORMS = {"add_remove": 1.0, "substitute": 2.0}
#: Hyperparameters of the course's DP-GD on Adult, chosen on rows 20,000 and up of Adult's train split
#: (never trained on in unit 09), not on the people the model is trained and scored on.
CLIP_NORM = 1.0
STEPS = 100
LEARNING_RATE = 2.0
#: delta of every (epsilon, delta) in unit 09: far below 1 / n for n = 10,000 people.
DELTA = 1e-6


# --------------------------------------------------------------------------- validation


def _require_design(X, y) -> tuple[np.ndarray, np.ndarray]:
    """``X`` as an (n, d) float array and ``y`` as n labels 0.0/1.0."""
    X = _require_numeric_array(X, "X")
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a 2-D array with at least one row (one row per person), got shape {X.shape}")
    y = _require_binary(y, "y").astype(float)
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must hold one label per row of X ({X.shape[0]}), got shape {y.shape}")
    return X, y


def _require_theta(theta, d: int) -> np.ndarray:
    theta = _require_numeric_array(theta, "theta")
    if theta.shape != (d,):
        raise ValueError(f"theta must have one entry per column of X ({d}), got shape {theta.shape}")
    return theta


def _require_neighbours(neighbours) -> str:
    if neighbours not in SENSITIVITY_IN_CLIP_NORMS:
        raise ValueError(f"neighbours must be one of {sorted(SENSITIVITY_IN_CLIP_NORMS)}, got {neighbours!r}")
    return neighbours


def _require_clip_norm(clip_norm) -> float:
    return _require_epsilon(clip_norm, "clip_norm")  # finite and > 0, as epsilon


# --------------------------------------------------------------------------- data


def design_matrix(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    r"""Features and labels of an :func:`dplib.learning.adult_learning_data` frame, ready for logistic regression.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns :data:`dplib.learning.FEATURES` and ``income``, each a ``Categorical``.

    Returns
    -------
    X : numpy.ndarray of shape (n, d)
        An intercept column of ones, then one 0/1 column per category of each feature, over the
        feature's whole domain (its ``.cat.categories``): the columns do not depend on who is in
        ``frame``, and every row has norm :math:`\sqrt 7`.
    y : numpy.ndarray of shape (n,)
        1.0 for ``income == ">50K"``, else 0.0.

    Notes
    -----
    Nothing here is learnt from the data: the domains are fixed in advance (UCI's adult.names), so
    encoding spends no privacy. Standardizing with the data's own mean and spread would be a query
    on the private data.

    Examples
    --------
    >>> train, _ = adult_learning_data(1_000)
    >>> X, y = design_matrix(train)
    >>> X.shape, float(X[0].sum()), float(y.mean()) < 0.5
    ((1000, 50), 7.0, True)
    """
    missing = [c for c in (*FEATURES, LABEL) if c not in frame.columns]
    if missing:
        raise ValueError(f"frame must have the columns {list(FEATURES) + [LABEL]}, missing {missing}")
    blocks = [np.ones((len(frame), 1))]
    for column in FEATURES:
        values = frame[column]
        if not isinstance(values.dtype, pd.CategoricalDtype):
            raise ValueError(f"column {column!r} must be a Categorical (its domain fixed in advance), got {values.dtype}")
        codes = values.cat.codes.to_numpy()
        if (codes < 0).any():
            raise ValueError(f"column {column!r} has missing values")
        blocks.append(np.eye(len(values.cat.categories))[codes])
    X = np.hstack(blocks)
    y = (np.asarray(frame[LABEL]).astype(str) == ">50K").astype(float)
    return X, y


def adult_design_matrices(train_size: int | None = 10_000) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(X_train, y_train, X_test, y_test)``: the people of unit 08's learning exercise, as :func:`design_matrix`.

    The train split's first ``train_size`` people (``None``: all 30,162) and the whole test split
    (15,060 people), as :func:`dplib.learning.adult_learning_data` gives them.

    Examples
    --------
    >>> X_train, y_train, X_test, y_test = adult_design_matrices(2_000)
    >>> X_train.shape, X_test.shape
    ((2000, 50), (15060, 50))
    """
    train, test = adult_learning_data(train_size)
    return (*design_matrix(train), *design_matrix(test))


# --------------------------------------------------------------------------- the model


def logistic_loss(theta, X, y) -> float:
    r"""Mean logistic loss :math:`\frac1n \sum_i \ln(1 + e^{z_i}) - y_i z_i` with :math:`z_i = \theta \cdot x_i`.

    Computed as ``logaddexp(0, z) - y z``: no overflow for large :math:`|z|`.

    Examples
    --------
    >>> round(logistic_loss([0.0, 0.0], [[1.0, 2.0], [1.0, -1.0]], [1, 0]), 4)
    0.6931
    """
    X, y = _require_design(X, y)
    z = X @ _require_theta(theta, X.shape[1])
    return float(np.mean(np.logaddexp(0.0, z) - y * z))


def logistic_accuracy(theta, X, y) -> float:
    r"""Share of rows whose label the linear classifier :math:`\theta \cdot x > 0` predicts right.

    Examples
    --------
    >>> logistic_accuracy([1.0, -1.0], [[2.0, 1.0], [1.0, 2.0], [0.0, 1.0]], [1, 0, 1])
    0.6666666666666666
    """
    X, y = _require_design(X, y)
    predicted = X @ _require_theta(theta, X.shape[1]) > 0
    return float(np.mean(predicted == (y == 1.0)))


def per_example_gradients(theta, X, y) -> np.ndarray:
    r"""Gradient of each person's logistic loss at ``theta``: one row per person.

    Parameters
    ----------
    theta : array_like of shape (d,)
        The model's weights.
    X : array_like of shape (n, d)
        One row of features per person.
    y : array_like of shape (n,)
        Labels, 0 or 1.

    Returns
    -------
    numpy.ndarray of shape (n, d)
        Row i is :math:`g_i = (\mathrm{sigmoid}(\theta \cdot x_i) - y_i)\, x_i`.

    Notes
    -----
    The loss of person i is :math:`\ell_i(\theta) = \ln(1 + e^{z_i}) - y_i z_i` with
    :math:`z_i = \theta \cdot x_i`; its derivative in :math:`z_i` is
    :math:`\mathrm{sigmoid}(z_i) - y_i`, and the chain rule multiplies by :math:`x_i`.
    ``scipy.special.expit`` computes the sigmoid without overflow.

    Examples
    --------
    >>> per_example_gradients([0.0, 0.0], [[1.0, 2.0], [1.0, -1.0]], [1, 0])
    array([[-0.5, -1. ],
           [ 0.5, -0.5]])
    """
    X, y = _require_design(X, y)
    residuals = special.expit(X @ _require_theta(theta, X.shape[1])) - y
    return residuals[:, None] * X


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
    gradients = _require_numeric_array(gradients, "gradients")
    if gradients.ndim != 2:
        raise ValueError(f"gradients must be a 2-D array (one row per person), got shape {gradients.shape}")
    clip_norm = _require_clip_norm(clip_norm)
    clipped = gradients * _clip_factors(np.linalg.norm(gradients, axis=1), clip_norm)[:, None]
    too_long = np.linalg.norm(clipped, axis=1) > clip_norm
    while too_long.any():  # a few ulps of rounding at most: one or two passes
        clipped[too_long] *= np.nextafter(1.0, 0.0)
        too_long = np.linalg.norm(clipped, axis=1) > clip_norm
    return clipped


def gradient_sum_sensitivity(clip_norm: float, neighbours: str = "add_remove") -> float:
    r"""L2 sensitivity of a sum of gradients each clipped to norm ``clip_norm``: C (add/remove) or 2C (substitute).

    Notes
    -----
    Add or remove one person: the sum gains or loses one vector of norm at most C. Substitute one
    person: one vector :math:`\bar g` is replaced by another :math:`\bar g'`, and
    :math:`\|\bar g - \bar g'\|_2 \le 2C`, reached by two opposite gradients.

    Examples
    --------
    >>> gradient_sum_sensitivity(0.5, "add_remove"), gradient_sum_sensitivity(0.5, "substitute")
    (0.5, 1.0)
    """
    return SENSITIVITY_IN_CLIP_NORMS[_require_neighbours(neighbours)] * _require_clip_norm(clip_norm)


def _require_noise_multiplier(noise_multiplier) -> float:
    return _require_sensitivity(noise_multiplier, "noise_multiplier")  # finite and >= 0


def noisy_gradient(theta, X, y, clip_norm: float, noise_multiplier: float, rng=None) -> np.ndarray:
    r"""One noisy gradient of DP-GD: the sum of clipped per-example gradients plus Gaussian noise, over n.

    Parameters
    ----------
    theta : array_like of shape (d,)
        The current weights.
    X, y : array_like
        The data, shapes (n, d) and (n,). The result is divided by n = ``len(X)``, which is public
        under substitution neighbours only: under add/remove only the noisy sum is private (see
        the module's notes).
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
    substitution: see :func:`dp_gd_rho`), not to 1; dividing by n afterwards divides the noise too,
    so the average carries noise of standard deviation σC/n. Noise of standard deviation σC added
    to every example instead would be :math:`\sqrt n` times larger on the sum: the sum would be
    n times more private (ρ/n), bought with :math:`\sqrt n` times the error.

    Examples
    --------
    >>> import numpy as np
    >>> noisy_gradient([0.0, 0.0], [[1.0, 2.0], [1.0, -1.0]], [1, 0], 1.0, 0.0).round(4)  # no noise: the clipped mean
    array([ 0.0264, -0.6972])
    """
    X, y = _require_design(X, y)
    theta = _require_theta(theta, X.shape[1])
    clip_norm = _require_clip_norm(clip_norm)
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
    X, y = _require_design(X, y)
    clip_norm = _require_clip_norm(clip_norm)
    noise_multiplier = _require_noise_multiplier(noise_multiplier)
    steps = _require_positive_int(steps, "steps", minimum=0)
    learning_rate = _require_epsilon(learning_rate, "learning_rate")
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
        :math:`\theta_T`. Its privacy: :func:`dp_gd_epsilon` of ``noise_multiplier`` and ``steps``.

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


# --------------------------------------------------------------------------- privacy accounting


def _require_positive_noise_multiplier(noise_multiplier) -> float:
    return _require_epsilon(noise_multiplier, "noise_multiplier")  # finite and > 0: sigma = 0 is no privacy


def dp_gd_rho(noise_multiplier: float, steps: int, neighbours: str = "add_remove") -> float:
    r"""zCDP of ``steps`` steps of DP-GD with noise multiplier σ: :math:`T \Delta^2 / (2\sigma^2 C^2)`.

    Parameters
    ----------
    noise_multiplier : float
        σ, finite and > 0.
    steps : int
        T >= 1.
    neighbours : {"add_remove", "substitute"}
        Neighbouring datasets differ by one person added or removed (:math:`\Delta = C`), or by one
        person's record replaced (:math:`\Delta = 2C`).

    Returns
    -------
    float
        ρ: :math:`T/(2\sigma^2)` under add/remove, :math:`2T/\sigma^2` under substitution.

    Notes
    -----
    Each step releases the clipped sum through the Gaussian mechanism with standard deviation σC:
    :math:`\rho_1 = \Delta^2/(2\sigma^2C^2)` (Bun & Steinke 2016, Prop. 1.6), where C cancels. The
    T releases compose to :math:`T\rho_1` (Lemma 2.3): every step is charged, even though only the
    last model is published, because each step's input depends on the data afresh.

    Under add/remove this is the ρ of the T noisy *sums* (and of steps that divide them by a size
    published in advance); :func:`noisy_gradient` divides by ``len(X)``, which keeps it only under
    substitution (see the module's notes).

    Examples
    --------
    >>> dp_gd_rho(10.0, 100), dp_gd_rho(10.0, 100, "substitute")
    (0.5, 2.0)
    """
    noise_multiplier = _require_positive_noise_multiplier(noise_multiplier)
    steps = _require_positive_int(steps, "steps")
    per_step = zcdp_rho(gradient_sum_sensitivity(1.0, neighbours), noise_multiplier)  # C = 1: the noise is sigma
    return steps * per_step


def dp_gd_epsilon(noise_multiplier: float, steps: int, delta: float, neighbours: str = "add_remove") -> float:
    r"""epsilon of ``steps`` steps of DP-GD at ``delta``: :math:`\rho + 2\sqrt{\rho\ln(1/\delta)}`, :math:`\rho` = :func:`dp_gd_rho`.

    Examples
    --------
    >>> round(dp_gd_epsilon(10.0, 100, 1e-6), 4)
    5.7565
    """
    return zcdp_to_epsilon(dp_gd_rho(noise_multiplier, steps, neighbours), delta)


def noise_multiplier_for(epsilon: float, delta: float, steps: int, neighbours: str = "add_remove") -> float:
    r"""The noise multiplier σ for which ``steps`` steps of DP-GD are exactly (epsilon, delta)-DP (by zCDP).

    Parameters
    ----------
    epsilon : float
        Target epsilon of the whole training, finite and > 0.
    delta : float
        Target delta, strictly between 0 and 1.
    steps : int
        T >= 1.
    neighbours : {"add_remove", "substitute"}

    Returns
    -------
    float
        σ with ``dp_gd_epsilon(σ, steps, delta, neighbours) == epsilon`` (to about 1e-12 relative).

    Notes
    -----
    :func:`dp_gd_epsilon` falls continuously and strictly from :math:`+\infty` (σ → 0) to 0
    (σ → ∞), so the equation has exactly one root; ``scipy.optimize.brentq`` finds it in
    :math:`\log\sigma`, on a bracket widened until it changes sign. (Solving
    :math:`\rho + 2\sqrt{\rho L} = \varepsilon` for :math:`\sqrt\rho` gives the same answer in
    closed form, :math:`\rho = (\sqrt{L + \varepsilon} - \sqrt L)^2` with :math:`L = \ln(1/\delta)`.)

    Examples
    --------
    >>> sigma = noise_multiplier_for(1.0, 1e-6, 100, "substitute")
    >>> round(sigma, 2), round(dp_gd_epsilon(sigma, 100, 1e-6, "substitute"), 9)
    (107.0, 1.0)
    """
    epsilon = _require_epsilon(epsilon)
    delta = _require_open_probability(delta, "delta")
    steps = _require_positive_int(steps, "steps")
    neighbours = _require_neighbours(neighbours)

    def excess(log_sigma: float) -> float:
        return dp_gd_epsilon(math.exp(log_sigma), steps, delta, neighbours) - epsilon

    low, high = 0.0, 1.0
    while excess(low) < 0:  # epsilon -> inf as sigma -> 0
        low -= 1.0
    while excess(high) > 0:  # epsilon -> 0 as sigma -> inf
        high += 1.0
    return math.exp(optimize.brentq(excess, low, high, xtol=1e-14, rtol=1e-14))


# --------------------------------------------------------------------------- accuracy


def nonprivate_logistic_regression(X, y) -> np.ndarray:
    """Weights of scikit-learn's ``LogisticRegression`` on ``X`` (which holds its own intercept column): no privacy.

    The non-private baseline: lbfgs, the default L2 penalty (``C=1.0``), no extra intercept.

    Examples
    --------
    >>> X_train, y_train, X_test, y_test = adult_design_matrices(2_000)
    >>> round(logistic_accuracy(nonprivate_logistic_regression(X_train, y_train), X_test, y_test), 3)
    0.831
    """
    from sklearn.linear_model import LogisticRegression  # imported here: `import dplib` stays fast

    X, y = _require_design(X, y)
    model = LogisticRegression(fit_intercept=False, max_iter=1_000).fit(X, y)
    return model.coef_[0].copy()


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
    trials = _require_positive_int(trials, "trials", minimum=2)
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


# --------------------------------------------------------------------------- amplification by subsampling


def subsampled_epsilon(epsilon: float, delta: float, sampling_rate: float) -> tuple[float, float]:
    r"""(epsilon, delta) of an (epsilon, delta)-DP mechanism run on a Poisson sample of rate q.

    Notes
    -----
    Each person is in the sample independently with probability q. Under add/remove neighbours
    the mechanism on the sample is

    .. math:: \big(\ln(1 + q(e^{\varepsilon} - 1)),\ q\delta\big)\text{-DP},

    about :math:`(q\varepsilon, q\delta)` for small ε (Balle, Barthe & Gaboardi 2018, Poisson
    subsampling under the add/remove relation; tight).

    Examples
    --------
    >>> epsilon, delta = subsampled_epsilon(1.0, 1e-6, 0.01)
    >>> round(epsilon, 5), delta
    (0.01704, 1e-08)
    """
    epsilon = _require_epsilon(epsilon)
    delta = _require_probability(delta, "delta")
    q = _require_probability(sampling_rate, "sampling_rate")
    return math.log1p(q * math.expm1(epsilon)), q * delta


def _sampled_gaussian_rdp(noise_multiplier: float, q: float, order: int) -> float:
    r"""Rényi DP of one step of the sampled Gaussian mechanism at an integer order α >= 2.

    :math:`\frac{1}{\alpha-1}\ln \sum_{k=0}^{\alpha} \binom{\alpha}{k} (1-q)^{\alpha-k} q^k
    e^{(k^2-k)/(2\sigma^2)}` (Mironov, Talwar & Zhang 2019, Sec. 3.3), in log space.
    """
    if q == 1.0:
        return order / (2 * noise_multiplier**2)  # the Gaussian mechanism itself
    k = np.arange(order + 1)
    log_terms = (special.gammaln(order + 1) - special.gammaln(k + 1) - special.gammaln(order - k + 1)
                 + (order - k) * math.log1p(-q) + k * math.log(q) + (k * k - k) / (2 * noise_multiplier**2))
    return float(special.logsumexp(log_terms)) / (order - 1)


def sampled_gaussian_epsilon(noise_multiplier: float, sampling_rate: float, steps: int, delta: float,
                             orders=range(2, 257)) -> float:
    r"""epsilon of DP-SGD: ``steps`` Gaussian steps (noise multiplier σ), each on a Poisson sample of rate q.

    Parameters
    ----------
    noise_multiplier : float
        σ, finite and > 0 (the noise on a step's clipped sum is σC; add/remove sensitivity C).
    sampling_rate : float
        q in (0, 1]: each person joins each step's batch independently with probability q.
    steps : int
        T >= 1.
    delta : float
        Strictly between 0 and 1.
    orders : iterable of int
        Integer Rényi orders α >= 2 to optimise over.

    Returns
    -------
    float
        :math:`\min_\alpha\ T\,\varepsilon_{\mathrm{RDP}}(\alpha) + \ln(1/\delta)/(\alpha - 1)`: an
        upper bound on epsilon under add/remove neighbours (Mironov 2017, Prop. 3, for the conversion).

    Notes
    -----
    The sampled Gaussian mechanism's Rényi DP (Mironov, Talwar & Zhang 2019) is the accountant of
    DP-SGD (Abadi et al. 2016's moments accountant). It is an upper bound: converting Rényi DP to
    (ε, δ) is lossy, and privacy-loss-distribution accountants (Koskela, Jälkö & Honkela 2020;
    Gopi, Lee & Wutschitz 2021) give a smaller ε for the same steps. With ``sampling_rate = 1`` it is full-batch
    DP-GD, :math:`\alpha/(2\sigma^2)` per step: the same Gaussian noise as :func:`dp_gd_rho`'s,
    converted with another (slightly looser) formula.

    Examples
    --------
    >>> round(sampled_gaussian_epsilon(1.0, 0.01, 10_000, 1e-5), 2)
    7.47
    """
    noise_multiplier = _require_positive_noise_multiplier(noise_multiplier)
    q = _require_probability(sampling_rate, "sampling_rate")
    if q == 0:
        raise ValueError("sampling_rate must be a probability in (0, 1], got 0")
    steps = _require_positive_int(steps, "steps")
    delta = _require_open_probability(delta, "delta")
    orders = [_require_positive_int(order, "orders", minimum=2) for order in orders]
    if not orders:
        raise ValueError("orders must list at least one integer >= 2, got none")
    return min(steps * _sampled_gaussian_rdp(noise_multiplier, q, order) + math.log(1 / delta) / (order - 1)
               for order in orders)
