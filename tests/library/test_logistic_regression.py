"""Tests for dplib.learning.logistic_model: Adult's design matrix, the logistic loss and accuracy, per-example gradients."""

import numpy as np
import pytest

from dplib.learning.local_model import FEATURES, adult_learning_data
from dplib.learning.logistic_model import (
    adult_design_matrices,
    design_matrix,
    logistic_accuracy,
    logistic_loss,
    per_example_gradients,
)


@pytest.fixture(scope="module")
def small():
    """300 people of Adult (50 columns) and a weight vector that gives gradients of many norms."""
    X, y, _, _ = adult_design_matrices(300)
    theta = np.random.default_rng(1).normal(0.0, 0.7, X.shape[1])
    return X, y, theta



# --------------------------------------------------------------------------- data


def test_design_matrix_one_hot_over_the_whole_domain():
    train, test = adult_learning_data(500)
    X, y = design_matrix(train)
    width = 1 + sum(len(train[c].cat.categories) for c in FEATURES)
    assert X.shape == (500, width) == (500, 50)
    assert (X[:, 0] == 1).all() and set(np.unique(X)) == {0.0, 1.0}
    assert (X.sum(axis=1) == 1 + len(FEATURES)).all()  # one category per feature, plus the intercept
    assert np.array_equal(y, (train["income"] == ">50K").to_numpy(dtype=float))
    # the columns come from the domain, not from who is in the frame: one person gives the same layout
    one, _ = design_matrix(train.iloc[:1])
    assert np.array_equal(one, X[:1])
    assert design_matrix(test)[0].shape[1] == width


def test_design_matrix_refuses_frames_without_a_fixed_domain():
    train, _ = adult_learning_data(50)
    with pytest.raises(ValueError, match="missing"):
        design_matrix(train.drop(columns=["sex"]))
    with pytest.raises(ValueError, match="'sex' must be a Categorical"):
        design_matrix(train.assign(sex=train["sex"].astype(str)))


# --------------------------------------------------------------------------- the model


def test_per_example_gradients_are_the_derivatives_of_each_loss(small):
    X, y, theta = small
    gradients = per_example_gradients(theta, X, y)
    assert gradients.shape == X.shape
    # central finite differences of person i's own loss, coordinate by coordinate
    h = 1e-6
    for i in (0, 7, 123):
        numerical = [(logistic_loss(theta + h * e, X[i:i + 1], y[i:i + 1])
                      - logistic_loss(theta - h * e, X[i:i + 1], y[i:i + 1])) / (2 * h) for e in np.eye(X.shape[1])]
        assert np.allclose(gradients[i], numerical, atol=1e-7)
    # their mean is the gradient of the mean loss (no sign error, no 1/n inside)
    assert np.allclose(gradients.mean(axis=0), per_example_gradients(theta, X, y).sum(axis=0) / len(X))


def test_per_example_gradients_and_loss_do_not_overflow():
    X, y = np.array([[1.0, 800.0], [1.0, -800.0]]), np.array([0, 1])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        gradients = per_example_gradients([0.0, 1.0], X, y)
        loss = logistic_loss([0.0, 1.0], X, y)
    assert np.allclose(gradients, [[1.0, 800.0], [-1.0, 800.0]])
    assert loss == pytest.approx(800.0)


def test_logistic_accuracy_counts_right_predictions():
    X, y = np.array([[1.0, 2.0], [1.0, -2.0], [1.0, 0.5]]), np.array([1, 0, 0])
    assert logistic_accuracy([0.0, 1.0], X, y) == pytest.approx(2 / 3)
    assert logistic_accuracy([0.0, -1.0], X, y) == pytest.approx(1 / 3)

