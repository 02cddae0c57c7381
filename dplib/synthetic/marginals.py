r"""Marginals of a table over a public domain: true counts, noisy counts, consistent counts, errors.

A **domain** maps every column to the tuple of its possible values, fixed in advance (from the
form people filled in, never from the data): reading it off the table would publish which
values occur, whatever noise follows. A **marginal** on some columns counts the rows of every
combination of their values, zeros included, as an array with one axis per column.

Neighbours are **add/remove one person** throughout. A person falls in exactly one cell of a
marginal, so a marginal has L1 sensitivity 1; measuring :math:`m` marginals with Laplace noise
of scale :math:`m/\varepsilon` on every cell spends :math:`\varepsilon/m` on each, and
:math:`\varepsilon` in all (sequential composition). Making the noisy counts valid (no negative
count, one total shared by every marginal) uses nothing but the noisy counts: it is
post-processing, free in privacy.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from dplib._validation import require_epsilon, require_numeric_array
from dplib.estimation.kary_rr import project_to_simplex

__all__ = ["marginal", "noisy_marginals", "consistent_marginals", "marginal_errors"]


def require_domain(domain) -> dict:
    """``domain`` as a dict of column -> tuple of distinct values (at least one per column)."""
    if not isinstance(domain, dict) or not domain:
        raise ValueError(f"domain must be a non-empty dict of column -> possible values, got {domain!r}")
    checked = {}
    for column, values in domain.items():
        values = tuple(values)
        if not values or len(set(values)) != len(values):
            raise ValueError(f"domain[{column!r}] must list distinct possible values, got {values!r}")
        checked[column] = values
    return checked


def require_marginal_columns(columns, domain: dict) -> tuple:
    """``columns`` as a tuple of distinct columns of ``domain`` (a single name is a 1-way marginal)."""
    columns = (columns,) if isinstance(columns, str) else tuple(columns)
    if not columns or len(set(columns)) != len(columns):
        raise ValueError(f"columns must name one or more distinct columns, got {columns!r}")
    unknown = [c for c in columns if c not in domain]
    if unknown:
        raise ValueError(f"columns must be columns of the domain {list(domain)}, got {unknown!r}")
    return columns


def _codes(data: pd.DataFrame, column, values: tuple) -> np.ndarray:
    """The position of every row's value of ``column`` in the domain's ``values``."""
    if column not in data.columns:
        raise ValueError(f"data has no column {column!r}")
    series = data[column]
    if isinstance(series.dtype, pd.CategoricalDtype):  # look up each category once, not each row
        positions = np.append(pd.Index(values).get_indexer(series.cat.categories), -1)  # code -1 (missing) -> -1
        codes = positions[series.cat.codes.to_numpy()].astype(np.int64)
    else:
        codes = pd.Index(values).get_indexer(np.asarray(series, dtype=object)).astype(np.int64)
    if (codes < 0).any():
        outside = data[column].to_numpy()[codes < 0][0]
        raise ValueError(f"data[{column!r}] holds {outside!r}, which is not in the domain {list(values)}")
    return codes


def marginal(data: pd.DataFrame, columns, domain: dict) -> np.ndarray:
    r"""The counts of every combination of values of ``columns``, over the public domain.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per person.
    columns : str or sequence of str
        The columns of the marginal, in the order of its axes.
    domain : dict
        Column -> tuple of its possible values, fixed in advance.

    Returns
    -------
    numpy.ndarray
        Integer counts of shape ``tuple(len(domain[c]) for c in columns)``; entry
        ``[i, j, ...]`` counts the rows holding the i-th value of the first column, the j-th of
        the second, and so on. Values nobody holds count 0.

    Raises
    ------
    ValueError
        When a column is not in the domain or the data, or a value is outside the domain.

    Notes
    -----
    Adding or removing one person changes exactly one cell by 1: the L1 sensitivity is 1.

    Examples
    --------
    >>> people = pd.DataFrame({"sex": ["F", "M", "M"], "income": ["low", "low", "high"]})
    >>> domain = {"sex": ("F", "M"), "income": ("low", "high"), "race": ("A", "B")}
    >>> marginal(people, ("sex", "income"), domain)
    array([[1, 0],
           [1, 1]])
    """
    domain = require_domain(domain)
    columns = require_marginal_columns(columns, domain)
    shape = tuple(len(domain[c]) for c in columns)
    codes = [_codes(data, c, domain[c]) for c in columns]
    cells = np.ravel_multi_index(codes, shape) if len(data) else np.zeros(0, dtype=np.int64)
    return np.bincount(cells, minlength=math.prod(shape)).reshape(shape)


def noisy_marginals(data: pd.DataFrame, marginals, epsilon: float, domain: dict, rng=None) -> dict:
    r"""Measure several marginals with Laplace noise, ``epsilon`` in all (add/remove neighbours).

    Parameters
    ----------
    data : pandas.DataFrame
        The private table.
    marginals : sequence of tuple of str
        The marginals to measure, each a tuple of columns (``("age",)``, ``("income", "age")``).
    epsilon : float
        Total budget, finite and > 0, split evenly: each marginal gets ``epsilon / len(marginals)``.
    domain : dict
        Column -> tuple of its possible values, fixed in advance.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    dict
        Marginal (tuple of columns) -> float array of noisy counts (:func:`marginal` plus
        independent noise on every cell; counts may be negative).

    Notes
    -----
    One person is in one cell of each marginal, so the :math:`m` marginals together have L1
    sensitivity :math:`m` and

    .. math:: \tilde c = c + \mathrm{Lap}(m / \varepsilon) \text{ on every cell}

    is :math:`\varepsilon`-DP: :math:`\varepsilon/m` per marginal, added up by sequential
    composition. Under substitution neighbours a marginal's sensitivity would be 2.

    References
    ----------
    C. Dwork, F. McSherry, K. Nissim, A. Smith, "Calibrating noise to sensitivity in private
    data analysis", TCC 2006.

    Examples
    --------
    >>> people = pd.DataFrame({"sex": ["F", "M", "M"]})
    >>> noisy = noisy_marginals(people, [("sex",)], 100.0, {"sex": ("F", "M")}, rng=np.random.default_rng(0))
    >>> noisy[("sex",)].round(2)
    array([1.  , 1.99])
    """
    epsilon = require_epsilon(epsilon)
    domain = require_domain(domain)
    keys = [require_marginal_columns(m, domain) for m in marginals]
    if not keys or len(set(keys)) != len(keys):
        raise ValueError(f"marginals must list one or more distinct marginals, got {keys!r}")
    rng = np.random.default_rng(rng)
    scale = len(keys) / epsilon  # epsilon / m per marginal, sensitivity 1 each
    noisy = {}
    for key in keys:
        counts = marginal(data, key, domain)
        noisy[key] = counts + rng.laplace(0.0, scale, size=counts.shape)
    return noisy


def consistent_marginals(noisy: dict) -> dict:
    r"""Noisy marginals made valid: no negative count, and one total shared by all (post-processing).

    Parameters
    ----------
    noisy : dict
        Marginal -> array of noisy counts, all measured with the same noise scale
        (as :func:`noisy_marginals` returns them).

    Returns
    -------
    dict
        The same keys; each array the Euclidean projection of the noisy counts onto
        ``{x >= 0, sum(x) = total}``, with one ``total`` for all.

    Notes
    -----
    Each marginal's sum :math:`S_i` estimates the number of people :math:`n`; with :math:`k_i`
    cells of noise of variance :math:`2b^2` each, its variance is :math:`2 k_i b^2`. The
    inverse-variance weighted mean

    .. math:: \hat n = \frac{\sum_i S_i / k_i}{\sum_i 1 / k_i}

    (0 if negative) is the shared total, and :func:`dplib.project_to_simplex` moves each
    marginal to the closest valid histogram of that total. The true :math:`n` is private under
    add/remove neighbours and is never used. Only the noisy counts are read, so the result is as
    private as they are (post-processing).

    Examples
    --------
    >>> noisy = {("a",): np.array([6.0, -2.0]), ("b",): np.array([3.0, 1.0, 1.0])}
    >>> {key: value.round(2) for key, value in consistent_marginals(noisy).items()}
    {('a',): array([4.4, 0. ]), ('b',): array([2.8, 0.8, 0.8])}
    """
    if not isinstance(noisy, dict) or not noisy:
        raise ValueError(f"noisy must be a non-empty dict of marginal -> noisy counts, got {noisy!r}")
    tables = {key: require_numeric_array(value, f"noisy[{key!r}]") for key, value in noisy.items()}
    weights = {key: 1.0 / table.size for key, table in tables.items()}
    total = sum(tables[key].sum() * weights[key] for key in tables) / sum(weights.values())
    total = max(float(total), 0.0)
    return {key: project_to_simplex(table.ravel(), total).reshape(table.shape) for key, table in tables.items()}


def marginal_errors(real: pd.DataFrame, synthetic: pd.DataFrame, domain: dict) -> pd.DataFrame:
    r"""Total variation distance between the real and the synthetic table, for every 2-way marginal.

    Parameters
    ----------
    real, synthetic : pandas.DataFrame
        Tables over the same ``domain`` (their sizes may differ).
    domain : dict
        Column -> tuple of its possible values.

    Returns
    -------
    pandas.DataFrame
        One row per pair of columns, in the order of ``itertools.combinations(domain, 2)``;
        columns ``first``, ``second`` and ``tv_distance``.

    Notes
    -----
    With :math:`p` and :math:`q` the two tables' marginals divided by their own sizes,

    .. math:: \mathrm{TV}(p, q) = \tfrac12 \sum_{\text{cells}} |p - q| \in [0, 1],

    the largest difference between the shares of any set of cells.

    Examples
    --------
    >>> real = pd.DataFrame({"a": ["x", "y"], "b": ["u", "u"]})
    >>> synthetic = pd.DataFrame({"a": ["x", "x", "x", "y"], "b": ["u", "u", "v", "u"]})
    >>> marginal_errors(real, synthetic, {"a": ("x", "y"), "b": ("u", "v")})
      first second  tv_distance
    0     a      b         0.25
    """
    domain = require_domain(domain)
    if len(real) == 0 or len(synthetic) == 0:
        raise ValueError(f"real and synthetic must hold rows, got {len(real)} and {len(synthetic)}")
    rows = []
    for first, second in itertools.combinations(domain, 2):
        p = marginal(real, (first, second), domain) / len(real)
        q = marginal(synthetic, (first, second), domain) / len(synthetic)
        rows.append((first, second, 0.5 * float(np.abs(p - q).sum())))
    return pd.DataFrame(rows, columns=["first", "second", "tv_distance"])
