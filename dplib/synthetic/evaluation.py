"""How useful a synthetic table is: its 2-way marginal errors and train-on-synthetic-test-on-real accuracy.

A synthetic table is judged against the real one by the total variation distance of every 2-way
marginal (:func:`dplib.marginal_errors`) and by a model trained on it and tested on real people it
never saw (:func:`classifier_accuracy`), over several synthetic tables per epsilon, since one table
is one random draw (:func:`synthetic_utility`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dplib._validation import require_positive_int
from dplib.synthetic.marginals import marginal_errors, require_domain
from dplib.synthetic.sampling import ADULT_DOMAIN, ADULT_TREE, synthesize

__all__ = ["classifier_accuracy", "synthetic_utility"]


def _codes(frame: pd.DataFrame, features: list, domain: dict) -> list:
    """Each row's position in each feature's domain (-1 for a value outside it)."""
    return [np.asarray(pd.Categorical(frame[c], categories=list(domain[c])).codes, dtype=np.int64) for c in features]


def _one_hot(codes: list, features: list, domain: dict) -> np.ndarray:
    """0/1 columns, one per value of each feature's domain (the same columns for any frame; none set for -1)."""
    return np.hstack([code[:, None] == np.arange(len(domain[c])) for code, c in zip(codes, features)]).astype(float)


def _distinct_rows(codes: list, labels: np.ndarray, features: list, domain: dict):
    """The distinct (features, label) rows of a table, as codes, and how often each occurs."""
    shape = tuple(len(domain[c]) + 1 for c in features) + (2,)  # + 1: the code -1 of a value outside the domain
    cells, counts = np.unique(np.ravel_multi_index([code + 1 for code in codes] + [labels.astype(np.int64)], shape),
                              return_counts=True)
    distinct = np.unravel_index(cells, shape)
    return [code - 1 for code in distinct[:-1]], distinct[-1] == 1, counts


def classifier_accuracy(train_frame: pd.DataFrame, test_frame: pd.DataFrame, *, label: str = "income",
                        positive: str = ">50K", domain: dict = ADULT_DOMAIN) -> float:
    """Accuracy on ``test_frame`` of a logistic regression predicting ``label`` from the other columns.

    Trained on ``train_frame`` (e.g. a synthetic table), tested on ``test_frame`` (real people):
    "train on synthetic, test on real". Features are one-hot over ``domain``; the model is
    scikit-learn's ``LogisticRegression`` (liblinear, deterministic). A training table holding a
    single class predicts that class for everybody.

    Examples
    --------
    >>> from dplib.synthetic.sampling import adult_synthetic_data
    >>> private, test = adult_synthetic_data()
    >>> round(classifier_accuracy(private, test), 3)
    0.797
    """
    from sklearn.linear_model import LogisticRegression  # imported here: `import dplib` stays fast

    domain = require_domain(domain)
    features = [c for c in domain if c != label]
    y_train = np.asarray(train_frame[label].astype(str) == positive)
    y_test = np.asarray(test_frame[label].astype(str) == positive)
    if y_train.all() or not y_train.any():
        return float(np.mean(y_test == y_train[0])) if len(y_train) else float("nan")
    # The features are one-hot over a small domain, so the 30,000 rows hold a few hundred distinct (features, label)
    # rows: fitting those, each weighted by how often it occurs, is the same objective (liblinear multiplies each
    # row's loss by its weight; the penalty is unchanged), at a fraction of the cost.
    codes, labels, counts = _distinct_rows(_codes(train_frame, features, domain), y_train, features, domain)
    model = LogisticRegression(solver="liblinear").fit(_one_hot(codes, features, domain), labels, sample_weight=counts)
    return float(model.score(_one_hot(_codes(test_frame, features, domain), features, domain), y_test))


def synthetic_utility(epsilons, trials: int, rng=None, *, train: pd.DataFrame, test: pd.DataFrame,
                      tree=ADULT_TREE, domain: dict = ADULT_DOMAIN) -> pd.DataFrame:
    """2-way marginal error and train-on-synthetic-test-on-real accuracy, over ``trials`` tables per epsilon.

    Parameters
    ----------
    epsilons : sequence of float
        Budgets of the whole synthetic table.
    trials : int
        Independent synthetic tables per epsilon (>= 2, for a spread).
    rng : numpy.random.Generator, int or None
        Source of randomness.
    train, test : pandas.DataFrame
        The private table (synthesized) and real people the models are tested on (never touched).
    tree, domain
        As in :func:`synthesize`.

    Returns
    -------
    pandas.DataFrame
        Index ``epsilon`` (the epsilons, then ``inf``: the real table itself), columns ``tv_mean``
        and ``tv_std`` (the mean TV distance over all 2-way marginals, :func:`dplib.marginal_errors`,
        of each synthetic table against ``train``: its mean and spread over trials) and
        ``accuracy_mean``, ``accuracy_std`` (:func:`classifier_accuracy` of a model trained on
        each synthetic table). Spreads use ``ddof=1``; the ``inf`` row is exact (0 spread).
    """
    trials = require_positive_int(trials, "trials", minimum=2)
    rng = np.random.default_rng(rng)
    rows = {}
    for epsilon in epsilons:
        tv, accuracy = [], []
        for _ in range(trials):
            table = synthesize(train, epsilon, tree, domain, rng=rng)
            tv.append(marginal_errors(train, table, domain)["tv_distance"].mean())
            accuracy.append(classifier_accuracy(table, test, domain=domain))
        rows[float(epsilon)] = (np.mean(tv), np.std(tv, ddof=1), np.mean(accuracy), np.std(accuracy, ddof=1))
    rows[np.inf] = (0.0, 0.0, classifier_accuracy(train, test, domain=domain), 0.0)
    table = pd.DataFrame.from_dict(rows, orient="index", columns=["tv_mean", "tv_std", "accuracy_mean", "accuracy_std"])
    table.index.name = "epsilon"
    return table
