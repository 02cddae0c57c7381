"""Learning on locally privatized data: k-RR on the columns of a table, a classifier, its accuracy.

Every person randomizes each listed column of their own record with k-ary randomized
response, spending ``epsilon / len(columns)`` on each (sequential composition), so the
whole record is epsilon-DP. A scikit-learn classifier is trained on the privatized train
split and evaluated on the untouched test split, which stands for the people the model
will meet later.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from dplib._validation import require_epsilon, require_positive_int
from dplib.datasets import load_adult
from dplib.mechanisms.kary_randomized_response import k_rand_resp

__all__ = [
    "adult_learning_data",
    "privatize_columns",
    "train_and_score",
    "private_accuracy",
]

#: Categorical features of Adult used by the classifier (age and hours are binned).
FEATURES = ("age", "education", "marital-status", "occupation", "sex", "hours-per-week")
#: The label: ``">50K"`` or ``"<=50K"``.
LABEL = "income"
#: Everything the model is trained on is privatized: the features and the label.
PRIVATE_COLUMNS = FEATURES + (LABEL,)

_AGE_BINS = [0, 25, 35, 45, 55, 65, 200]
_HOURS_BINS = [0, 35, 41, 51, 200]


def _categorical(frame: pd.DataFrame) -> pd.DataFrame:
    """The learning columns of an Adult frame as categoricals (age and hours binned)."""
    out = pd.DataFrame(index=frame.index)
    for column in PRIVATE_COLUMNS:
        if column == "age":
            values = pd.cut(frame[column], _AGE_BINS, right=False).astype(str)
        elif column == "hours-per-week":
            values = pd.cut(frame[column], _HOURS_BINS, right=False).astype(str)
        else:
            values = frame[column]
        out[column] = values
    return out


def adult_learning_data(train_size: int | None = 10_000) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Adult's train and test splits (clean rows), as categorical columns ready for learning.

    Parameters
    ----------
    train_size : int or None
        Keep the first ``train_size`` rows of the train split (``None``: all 30,162).

    Returns
    -------
    (train, test) : tuple of pandas.DataFrame
        Columns :data:`PRIVATE_COLUMNS`, each a ``Categorical`` whose categories are the
        column's whole domain (read from both splits, as documented in UCI's adult.names),
        so a category absent from a sample is still part of it. The test split has 15,060 rows.

    Examples
    --------
    >>> train, test = adult_learning_data(1_000)
    >>> train.shape, test.shape
    ((1000, 7), (15060, 7))
    >>> list(train["sex"].cat.categories)
    ['Female', 'Male']
    """
    train, test = _learning_splits()
    if train_size is not None:
        train = train.iloc[: require_positive_int(train_size, "train_size")]
    return train.copy(), test.copy()


@functools.lru_cache(maxsize=1)
def _learning_splits() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both splits, read and encoded once per process (callers get copies)."""
    train = _categorical(load_adult(split="train"))
    test = _categorical(load_adult(split="test"))
    for column in PRIVATE_COLUMNS:
        domain = sorted(set(train[column]) | set(test[column]))
        train[column] = pd.Categorical(train[column], categories=domain)
        test[column] = pd.Categorical(test[column], categories=domain)
    return train, test


def privatize_columns(df: pd.DataFrame, columns, epsilon: float, rng=None, *, domains=None) -> pd.DataFrame:
    r"""k-ary randomized response on each listed column over its public domain, epsilon split evenly.

    Parameters
    ----------
    df : pandas.DataFrame
        The data; it is not modified.
    columns : list of str
        Columns to privatize (at least one).
    epsilon : float
        Budget of the whole record, finite and > 0; each column gets ``epsilon / len(columns)``.
    rng : numpy.random.Generator, int or None
        Source of randomness.
    domains : mapping of str to sequence, optional
        The public domain of each listed column that is not a ``Categorical``: the values it
        can take, fixed in advance (their order does not matter). A ``Categorical`` column's
        domain is its categories; an entry for it must list the same values.

    Returns
    -------
    pandas.DataFrame
        A copy of ``df`` with the listed columns privatized, every other column untouched. A
        ``Categorical`` column keeps its dtype; another column holds values of its domain.

    Raises
    ------
    ValueError
        If a listed column is neither ``Categorical`` nor in ``domains`` (its domain is never
        read from the data), holds a value outside its domain or a missing value, or for a bad
        ``epsilon`` or ``columns``.

    Notes
    -----
    Each column is randomized over **its public domain**, fixed before any data is seen: the
    categories of a ``Categorical`` column (all of them, also those absent from ``df``),
    otherwise ``domains[column]``. With :math:`k` values, each is kept with probability
    :math:`e^{\varepsilon/m} / (e^{\varepsilon/m} + k - 1)` for :math:`m` columns, so the
    record is :math:`m \cdot \varepsilon/m = \varepsilon`-DP (sequential composition).
    A domain read from the data would leak which values occur, and in the local model no
    person could compute it: each sees only their own record.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> frame = pd.DataFrame({"sex": pd.Categorical(["F", "M", "M"]), "band": [1, 2, 2], "n": [1, 2, 3]})
    >>> private = privatize_columns(frame, ["sex", "band"], 50.0, rng=np.random.default_rng(0),
    ...                             domains={"band": [0, 1, 2, 3]})
    >>> private["sex"].tolist(), private["band"].tolist()
    (['F', 'M', 'M'], [1, 2, 2])
    """
    epsilon = require_epsilon(epsilon)
    columns = [columns] if isinstance(columns, str) else list(columns)
    if not columns:
        raise ValueError("columns must list at least one column, got []")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"columns must be columns of df, got {missing!r}")
    domains = {} if domains is None else dict(domains)
    rng = np.random.default_rng(rng)
    per_column = epsilon / len(columns)
    out = df.copy()
    for column in columns:
        values = df[column]
        # the public domain, fixed in advance: a Categorical's categories, or domains[column]; never the data
        if isinstance(values.dtype, pd.CategoricalDtype):
            domain = list(values.cat.categories)
            if column in domains and set(domains[column]) != set(domain):
                raise ValueError(f"domains[{column!r}] must list the categories of the Categorical column "
                                 f"{column!r}, {domain!r}, got {list(domains[column])!r}")
            codes = values.cat.codes.to_numpy()
        elif column in domains:
            domain = list(domains[column])
            if len(set(domain)) != len(domain):
                raise ValueError(f"domains[{column!r}] must list distinct values, got {domain!r}")
            codes = pd.Index(domain).get_indexer(values)
        else:
            raise ValueError(f"column {column!r} is not Categorical, so its public domain must be given in domains "
                             f"(domains={{{column!r}: [...]}}); it is never read from the data, which would leak it")
        if (codes < 0).any():
            raise ValueError(f"column {column!r} of df holds {values[codes < 0].iloc[0]!r}, a missing value or one "
                             "outside its domain: privatize complete columns over their whole domain")
        if len(domain) < 2:
            continue  # a single possible value reveals nothing
        reports = np.asarray(k_rand_resp(codes, len(domain), per_column, rng=rng))
        if isinstance(values.dtype, pd.CategoricalDtype):
            out[column] = pd.Categorical.from_codes(reports, dtype=values.dtype)
        else:
            out[column] = [domain[report] for report in reports]
    return out


def train_and_score(train_frame: pd.DataFrame, test_frame: pd.DataFrame) -> float:
    """Test accuracy of a logistic regression trained on ``train_frame``.

    The features :data:`FEATURES` are one-hot encoded (``pandas.get_dummies``; the
    test's columns are aligned on the train's, so plain string columns work too), the label is
    ``income == ">50K"``; the model is scikit-learn's ``LogisticRegression``
    (liblinear solver, deterministic).

    Examples
    --------
    >>> train, test = adult_learning_data(2_000)
    >>> round(train_and_score(train, test), 3)
    0.831
    """
    from sklearn.linear_model import LogisticRegression  # imported here: `import dplib` stays fast

    features = list(FEATURES)
    one_hot = pd.get_dummies(train_frame[features])
    x_train = one_hot.to_numpy(dtype=float)
    # the test's columns in the train's order (a category never seen in training is dropped)
    x_test = pd.get_dummies(test_frame[features]).reindex(columns=one_hot.columns, fill_value=0).to_numpy(dtype=float)
    model = LogisticRegression(solver="liblinear").fit(x_train, train_frame[LABEL] == ">50K")
    return float(model.score(x_test, test_frame[LABEL] == ">50K"))


def private_accuracy(epsilons, trials: int, rng=None, *, train=None, test=None) -> pd.DataFrame:
    """Accuracy of the classifier trained on privatized data, over ``trials`` privatizations per epsilon.

    Parameters
    ----------
    epsilons : sequence of float
        Budgets of a whole record (features and label).
    trials : int
        Independent privatizations of the train split per epsilon (>= 2, for a spread).
    rng : numpy.random.Generator, int or None
        Source of randomness.
    train, test : pandas.DataFrame, optional
        Default: :func:`adult_learning_data`.

    Returns
    -------
    pandas.DataFrame
        Index ``epsilon`` (the given epsilons, then ``inf`` for the model trained on the
        real train split), columns ``accuracy_mean`` and ``accuracy_std`` (over trials,
        ``ddof=1``; 0 for the deterministic baseline). The test split is never privatized.
    """
    trials = require_positive_int(trials, "trials", minimum=2)
    if train is None or test is None:
        train, test = adult_learning_data()
    rng = np.random.default_rng(rng)
    rows = {}
    for epsilon in epsilons:
        scores = [train_and_score(privatize_columns(train, PRIVATE_COLUMNS, epsilon, rng=rng), test)
                  for _ in range(trials)]
        rows[float(epsilon)] = (np.mean(scores), np.std(scores, ddof=1))
    rows[np.inf] = (train_and_score(train, test), 0.0)
    table = pd.DataFrame.from_dict(rows, orient="index", columns=["accuracy_mean", "accuracy_std"])
    table.index.name = "epsilon"
    return table
