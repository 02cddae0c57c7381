"""Synthetic data: noisy marginals, records sampled from them, MWEM, and how useful the result is.

Modules (their names of earlier terms, still importable as ``dplib.<name>``, in brackets):

- ``marginals``: marginals of a table over a public domain: true counts, noisy counts, consistent counts, errors.
- ``sampling`` (``synthetic``): synthetic data from noisy marginals: sample records, release a whole private table, measure its use.
- ``evaluation`` (``synthetic_evaluation``): how useful a synthetic table is: its 2-way marginal errors and train-on-synthetic-test-on-real accuracy.
- ``multiplicative_weights``: mWEM: answer many counting queries with a synthetic histogram (Hardt, Ligett & McSherry 2012).
"""

from dplib.synthetic.marginals import (
    consistent_marginals,
    marginal,
    marginal_errors,
    noisy_marginals,
    require_domain,
    require_marginal_columns,
)
from dplib.synthetic.sampling import (
    ADULT_DOMAIN,
    adult_synthetic_data,
    ADULT_TREE,
    AGE_EDGES,
    cached_adult_tables,
    sample_independent,
    sample_tree,
    synthesize,
)
from dplib.synthetic.evaluation import (
    classifier_accuracy,
    synthetic_utility,
)
from dplib.synthetic.multiplicative_weights import (
    marginal_queries,
    multiplicative_weights_update,
    mwem,
    select_worst_query,
)
