r"""Synthetic data from noisy marginals: sample records, release a whole private table, measure its use.

A generator draws new records from measured marginals only: with independent columns from the
1-way marginals (:func:`sample_independent`), or along a tree of 2-way marginals, each column
drawn given its parent (:func:`sample_tree`). :func:`synthesize` measures the tree's 2-way
marginals (:func:`dplib.noisy_marginals`), makes them consistent, and samples from them: the
synthetic table is :math:`\varepsilon`-DP under add/remove neighbours, and so is anything
computed from it later (post-processing). How useful it is: :mod:`dplib.synthetic.evaluation`.

The Adult table of the lectures has five columns over a public domain, :data:`ADULT_DOMAIN`.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from dplib._validation import require_epsilon, require_numeric_array, require_positive_int
from dplib.datasets import load_adult
from dplib.synthetic.marginals import consistent_marginals, noisy_marginals, require_domain

__all__ = [
    "ADULT_DOMAIN",
    "ADULT_TREE",
    "adult_synthetic_data",
    "sample_independent",
    "sample_tree",
    "synthesize",
]

#: Left edges of the public age bins; the last is open. 17 is fixed by how Adult was made: its extraction
#: from the 1994 census kept only people older than 16 (the filter AAGE > 16 in adult.names), not read off the data.
AGE_EDGES = (17, 25, 35, 45, 55, 65)

#: The public domain of the five columns, fixed in advance from UCI's adult.names (education by level).
ADULT_DOMAIN = {
    "age": ("17-24", "25-34", "35-44", "45-54", "55-64", "65+"),
    "sex": ("Female", "Male"),
    "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
    "education": ("Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad",
                  "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school", "Doctorate"),
    "income": ("<=50K", ">50K"),
}

#: A tree over the five columns, fixed in advance: (parent, child) edges, income at the root.
ADULT_TREE = (("income", "education"), ("income", "age"), ("income", "sex"), ("education", "race"))


@functools.lru_cache(maxsize=1)
def cached_adult_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tables of :func:`adult_synthetic_data`, read once and shared: callers must not modify them."""
    tables = []
    for split in ("train", "test"):
        adult = load_adult(split=split)
        ages = pd.cut(adult["age"], [*AGE_EDGES, np.inf], right=False, labels=list(ADULT_DOMAIN["age"]))
        table = pd.DataFrame({"age": ages.astype(str), **{c: adult[c] for c in list(ADULT_DOMAIN)[1:]}})
        tables.append(table.astype({c: pd.CategoricalDtype(list(v)) for c, v in ADULT_DOMAIN.items()}))
    return tables[0], tables[1]


def adult_synthetic_data() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Adult's train split (the private table, 30,162 people) and test split (15,060), five columns.

    Returns
    -------
    (private, test) : tuple of pandas.DataFrame
        Columns ``age`` (binned), ``sex``, ``race``, ``education``, ``income``, each a
        ``Categorical`` over :data:`ADULT_DOMAIN`; clean rows only; copies on every call.

    Examples
    --------
    >>> private, test = adult_synthetic_data()
    >>> private.shape, test.shape
    ((30162, 5), (15060, 5))
    """
    private, test = cached_adult_tables()
    return private.copy(), test.copy()


def _probabilities(counts, name: str) -> np.ndarray:
    """Counts (>= 0, positive sum) divided by their sum."""
    counts = require_numeric_array(counts, name)
    if (counts < 0).any() or counts.sum() <= 0:
        raise ValueError(f"{name} must hold counts >= 0 with a positive sum: make the marginals consistent first")
    return counts / counts.sum()


def _frame(codes: dict, domain: dict) -> pd.DataFrame:
    """The sampled codes as a table of the domain's values, in the domain's column order."""
    return pd.DataFrame({c: pd.Categorical.from_codes(codes[c], categories=list(domain[c])) for c in domain})


def sample_independent(marginals: dict, domain: dict, n: int, rng=None) -> pd.DataFrame:
    r"""``n`` synthetic records whose columns are drawn independently from their 1-way marginals.

    Parameters
    ----------
    marginals : dict
        ``(column,)`` -> consistent counts over ``domain[column]`` (>= 0), for every column.
    domain : dict
        Column -> tuple of its possible values.
    n : int
        Number of records.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    pandas.DataFrame
        ``n`` rows, the domain's columns, values from the domain (``Categorical``).

    Notes
    -----
    :math:`P(x) = \prod_j P_j(x_j)`: every 1-way marginal is right, every correlation is lost.

    Examples
    --------
    >>> domain = {"sex": ("F", "M"), "income": ("low", "high")}
    >>> counts = {("sex",): np.array([1.0, 0.0]), ("income",): np.array([0.0, 3.0])}
    >>> sample_independent(counts, domain, 2, rng=np.random.default_rng(0)).values.tolist()
    [['F', 'high'], ['F', 'high']]
    """
    domain = require_domain(domain)
    n = require_positive_int(n, "n", minimum=0)
    rng = np.random.default_rng(rng)
    codes = {}
    for column, values in domain.items():
        if (column,) not in marginals:
            raise ValueError(f"marginals has no 1-way marginal ({column!r},)")
        p = _probabilities(marginals[(column,)], f"marginals[({column!r},)]")
        if p.shape != (len(values),):
            raise ValueError(f"marginals[({column!r},)] must have shape ({len(values)},), got {p.shape}")
        codes[column] = rng.choice(len(values), size=n, p=p)
    return _frame(codes, domain)


def _require_tree(tree, domain: dict) -> list:
    """``tree`` as a list of (parent, child) edges, each parent drawn before, covering the domain."""
    edges = [tuple(edge) for edge in tree]
    if not edges or any(len(edge) != 2 for edge in edges):
        raise ValueError(f"tree must list (parent, child) edges, got {tree!r}")
    drawn = {edges[0][0]}
    for parent, child in edges:
        if parent not in drawn or child in drawn:
            raise ValueError(f"tree must list each edge after its parent's and draw each column once; "
                             f"edge ({parent!r}, {child!r}) does not")
        drawn.add(child)
    if drawn != set(domain):
        raise ValueError(f"tree must cover the domain's columns {list(domain)}, covers {sorted(drawn)}")
    return edges


def sample_tree(marginals: dict, tree, domain: dict, n: int, rng=None) -> pd.DataFrame:
    r"""``n`` synthetic records drawn along a tree of 2-way marginals: each column given its parent.

    Parameters
    ----------
    marginals : dict
        ``(parent, child)`` -> consistent 2-way counts (>= 0) for every edge of ``tree``, axes in
        that order.
    tree : sequence of (parent, child)
        The edges, each listed after the edge that draws its parent; the first edge's parent is
        the root. Every column of ``domain`` is drawn once.
    domain : dict
        Column -> tuple of its possible values.
    n : int
        Number of records.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    pandas.DataFrame
        ``n`` rows, the domain's columns in its order, values from the domain.

    Notes
    -----
    The root :math:`r` is drawn from the first edge's table summed over the child; then, edge by
    edge, the child :math:`c` given its parent :math:`p`:

    .. math:: P(x) = P(x_r) \prod_{(p, c)} P(x_c \mid x_p), \qquad
              P(x_c = j \mid x_p = i) = \frac{M_{pc}[i, j]}{\sum_{j'} M_{pc}[i, j']} .

    A parent value whose row of the table is all zeros (the tables need not agree on the
    parent's margin) takes the child's margin in that table instead. Every 2-way marginal along
    an edge is kept; other pairs are right only as far as they depend through the tree
    (Chow & Liu 1968; PrivBayes, Zhang et al. 2017, chooses such a network privately).

    Examples
    --------
    >>> domain = {"sex": ("F", "M"), "income": ("low", "high")}
    >>> table = np.array([[2.0, 0.0], [0.0, 1.0]])  # F earn low, M earn high
    >>> rows = sample_tree({("sex", "income"): table}, [("sex", "income")], domain, 4, rng=np.random.default_rng(1))
    >>> rows.values.tolist()
    [['F', 'low'], ['M', 'high'], ['F', 'low'], ['M', 'high']]
    """
    domain = require_domain(domain)
    edges = _require_tree(tree, domain)
    n = require_positive_int(n, "n", minimum=0)
    rng = np.random.default_rng(rng)
    tables = {}
    for parent, child in edges:
        if (parent, child) not in marginals:
            raise ValueError(f"marginals has no 2-way marginal ({parent!r}, {child!r})")
        table = require_numeric_array(marginals[(parent, child)], f"marginals[({parent!r}, {child!r})]")
        if table.shape != (len(domain[parent]), len(domain[child])):
            raise ValueError(f"marginals[({parent!r}, {child!r})] must have shape "
                             f"{(len(domain[parent]), len(domain[child]))}, got {table.shape}")
        tables[(parent, child)] = table
    root = edges[0][0]
    codes = {root: rng.choice(len(domain[root]), size=n, p=_probabilities(tables[edges[0]].sum(axis=1), "the root"))}
    for parent, child in edges:
        table = tables[(parent, child)]
        margin = _probabilities(table.sum(axis=0), f"marginals[({parent!r}, {child!r})]")
        drawn = np.empty(n, dtype=np.int64)
        for value in range(len(domain[parent])):
            rows = np.flatnonzero(codes[parent] == value)
            row = table[value]
            p = row / row.sum() if row.sum() > 0 else margin
            drawn[rows] = rng.choice(len(domain[child]), size=rows.size, p=p)
        codes[child] = drawn
    return _frame(codes, domain)


def synthesize(data: pd.DataFrame, epsilon: float, tree, domain: dict, rng=None) -> pd.DataFrame:
    r"""A synthetic table, :math:`\varepsilon`-DP under add/remove neighbours: measure, make consistent, sample.

    Parameters
    ----------
    data : pandas.DataFrame
        The private table; only the noisy marginals are computed from it.
    epsilon : float
        Total budget, finite and > 0, split over the tree's edges.
    tree : sequence of (parent, child)
        As in :func:`sample_tree`.
    domain : dict
        Column -> tuple of its possible values, fixed in advance.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    pandas.DataFrame
        About :math:`\hat n` rows (the consistent marginals' shared total, rounded), the domain's
        columns.

    Notes
    -----
    1. :func:`dplib.noisy_marginals` measures the 2-way marginal of every edge, with
       :math:`\varepsilon / |\text{edges}|` each: :math:`\varepsilon`-DP.
    2. :func:`dplib.consistent_marginals` and 3. :func:`sample_tree` (with :math:`\hat n` rows,
       never the true :math:`n`, which is private under add/remove) read only those noisy
       counts: post-processing, so the table, and every later use of it, stays
       :math:`\varepsilon`-DP.

    Examples
    --------
    >>> people = pd.DataFrame({"sex": ["F", "M"] * 500, "income": ["low", "high"] * 500})
    >>> domain = {"sex": ("F", "M"), "income": ("low", "high")}
    >>> table = synthesize(people, 5.0, [("sex", "income")], domain, rng=np.random.default_rng(0))
    >>> len(table), round(float((table["sex"] == "F").mean()), 2)
    (999, 0.47)
    """
    epsilon = require_epsilon(epsilon)
    domain = require_domain(domain)
    edges = _require_tree(tree, domain)
    rng = np.random.default_rng(rng)
    consistent = consistent_marginals(noisy_marginals(data, edges, epsilon, domain, rng=rng))
    n_hat = int(round(float(consistent[edges[0]].sum())))
    return sample_tree(consistent, edges, domain, n_hat, rng=rng)
