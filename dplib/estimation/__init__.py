"""Estimation: statistics you can trust, estimated back from randomized reports (binary and k-ary
randomized response), and how their error behaves.

Modules (their names of earlier terms, still importable as ``dplib.<name>``, in brackets):

- ``binary_rr`` (``estimators``): estimators that turn binary randomized reports back into statistics you can trust.
- ``kary_rr`` (``kary_estimators``): estimators for k-ary randomized response: unbiased counts, their spread, and a valid histogram.
- ``experiments``: simulations: how the error of k-RR count estimates behaves over many trials, and populations to run them on.
"""

from dplib.estimation.binary_rr import (
    ConfidenceInterval,
    estimate_black_fraction,
    estimate_count,
    estimate_count_std,
    estimate_crosstab,
    estimate_proportion_coin,
    rr_confidence_interval,
    unbias_black_fraction,
)
from dplib.estimation.kary_rr import (
    estimate_krr_counts,
    krr_count_std,
    krr_count_std_unchecked,
    project_to_simplex,
    unbias_krr_counts,
)
from dplib.estimation.experiments import (
    apportion,
    error_vs_epsilon,
    krr_error_vs_epsilon,
    theoretical_krr_errors,
)
