r"""Logistic regression, the model unit 09 trains privately: Adult as a design matrix, the loss, per-person gradients.

Nothing here is private. :func:`design_matrix` encodes people over domains fixed in advance (so
encoding spends no privacy), :func:`per_example_gradients` is the gradient that
:mod:`dplib.learning.noisy_gd` clips and noises, and :func:`nonprivate_logistic_regression` is the
baseline a private model is compared with. The validators :func:`require_design` and
:func:`require_theta` are shared with :mod:`dplib.learning.noisy_gd`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from dplib._validation import require_binary, require_numeric_array
from dplib.learning.local_model import FEATURES, LABEL, adult_learning_data

__all__ = [
    "design_matrix",
    "adult_design_matrices",
    "logistic_loss",
    "logistic_accuracy",
    "per_example_gradients",
    "nonprivate_logistic_regression",
]


# --------------------------------------------------------------------------- validation


def require_design(X, y) -> tuple[np.ndarray, np.ndarray]:
    """``X`` as an (n, d) float array and ``y`` as n labels 0.0/1.0."""
    X = require_numeric_array(X, "X")
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a 2-D array with at least one row (one row per person), got shape {X.shape}")
    y = require_binary(y, "y").astype(float)
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must hold one label per row of X ({X.shape[0]}), got shape {y.shape}")
    return X, y


def require_theta(theta, d: int) -> np.ndarray:
    """``theta`` as a float array with one weight per column of X (``d``)."""
    theta = require_numeric_array(theta, "theta")
    if theta.shape != (d,):
        raise ValueError(f"theta must have one entry per column of X ({d}), got shape {theta.shape}")
    return theta


# --------------------------------------------------------------------------- data


def design_matrix(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    r"""Features and labels of an :func:`dplib.learning.local_model.adult_learning_data` frame, ready for logistic regression.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns :data:`dplib.learning.local_model.FEATURES` and ``income``, each a ``Categorical``.

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
    (15,060 people), as :func:`dplib.learning.local_model.adult_learning_data` gives them.

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
    X, y = require_design(X, y)
    z = X @ require_theta(theta, X.shape[1])
    return float(np.mean(np.logaddexp(0.0, z) - y * z))


def logistic_accuracy(theta, X, y) -> float:
    r"""Share of rows whose label the linear classifier :math:`\theta \cdot x > 0` predicts right.

    Examples
    --------
    >>> logistic_accuracy([1.0, -1.0], [[2.0, 1.0], [1.0, 2.0], [0.0, 1.0]], [1, 0, 1])
    0.6666666666666666
    """
    X, y = require_design(X, y)
    predicted = X @ require_theta(theta, X.shape[1]) > 0
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
    X, y = require_design(X, y)
    residuals = special.expit(X @ require_theta(theta, X.shape[1])) - y
    return residuals[:, None] * X


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

    X, y = require_design(X, y)
    model = LogisticRegression(fit_intercept=False, max_iter=1_000).fit(X, y)
    return model.coef_[0].copy()
