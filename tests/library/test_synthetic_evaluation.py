"""Tests for dplib.synthetic.evaluation: train on synthetic, test on real, and the utility table over epsilons."""

import numpy as np
import pytest

from dplib.synthetic.marginals import consistent_marginals, marginal_errors, noisy_marginals
from dplib.synthetic.sampling import ADULT_DOMAIN, ADULT_TREE, adult_synthetic_data, sample_independent, synthesize
from dplib.synthetic.evaluation import classifier_accuracy, synthetic_utility


def test_classifier_accuracy_of_the_real_table_and_of_a_single_class():
    private, test = adult_synthetic_data()
    assert classifier_accuracy(private, test) == pytest.approx(0.797, abs=5e-4)
    poor = private[private["income"] == "<=50K"]
    assert classifier_accuracy(poor, test) == pytest.approx(float((test["income"] == "<=50K").mean()))


def test_synthetic_utility_reports_error_and_accuracy_per_epsilon():
    private, test = adult_synthetic_data()
    utility = synthetic_utility([0.01, 3.0], 2, rng=np.random.default_rng(9), train=private.iloc[:8_000], test=test)
    assert utility.index.name == "epsilon" and utility.index.tolist() == [0.01, 3.0, np.inf]
    assert list(utility.columns) == ["tv_mean", "tv_std", "accuracy_mean", "accuracy_std"]
    assert utility.loc[np.inf, "tv_mean"] == 0 and utility.loc[np.inf, "accuracy_std"] == 0
    assert utility.loc[np.inf, "accuracy_mean"] == pytest.approx(classifier_accuracy(private.iloc[:8_000], test))
    assert utility.loc[3.0, "tv_mean"] < utility.loc[0.01, "tv_mean"]
    assert (utility["tv_std"] >= 0).all()


def test_synthetic_utility_needs_two_trials():
    private, test = adult_synthetic_data()
    with pytest.raises(ValueError, match="trials must be an integer >= 2"):
        synthetic_utility([1.0], 1, train=private, test=test)


def test_independent_columns_lose_what_the_tree_keeps():
    private, test = adult_synthetic_data()
    rng = np.random.default_rng(10)
    one_way = consistent_marginals(noisy_marginals(private, [(c,) for c in ADULT_DOMAIN], 1.0, ADULT_DOMAIN, rng=rng))
    independent = sample_independent(one_way, ADULT_DOMAIN, len(private), rng=rng)
    tree = synthesize(private, 1.0, ADULT_TREE, ADULT_DOMAIN, rng=rng)
    errors = {name: marginal_errors(private, table, ADULT_DOMAIN).set_index(["first", "second"])["tv_distance"]
              for name, table in (("independent", independent), ("tree", tree))}
    assert errors["tree"][("education", "income")] < 0.01 < errors["independent"][("education", "income")]
    assert classifier_accuracy(independent, test) < 0.76 < 0.79 < classifier_accuracy(tree, test)


def test_classifier_accuracy_fits_the_distinct_rows_weighted_as_the_whole_table():
    """Fitting each distinct (features, label) row once, weighted by its count, is the fit on every row."""
    from sklearn.linear_model import LogisticRegression

    features = [c for c in ADULT_DOMAIN if c != "income"]

    def one_hot(frame):
        return np.hstack([frame[c].astype(str).to_numpy()[:, None] == np.array(ADULT_DOMAIN[c]) for c in features]) * 1.0

    private, test = adult_synthetic_data()
    table = synthesize(private, 0.3, ADULT_TREE, ADULT_DOMAIN, rng=np.random.default_rng(40))
    for train in (private, table):
        whole = LogisticRegression(solver="liblinear").fit(one_hot(train), train["income"].astype(str) == ">50K")
        assert classifier_accuracy(train, test) == whole.score(one_hot(test), test["income"].astype(str) == ">50K")
