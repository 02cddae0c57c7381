"""dplib: the helper package of the hands-on differential privacy course.

Mechanisms, estimators, parameter conversions, datasets, plots, widgets and
autograder helpers. Everything a notebook needs is re-exported here.
"""

from dplib import datasets
from dplib.attacks import differencing_attack, reidentify, uniqueness
from dplib.channels import (
    COIN_RR_EPSILON,
    alpha_beta_epsilon,
    alpha_beta_to_p_q,
    channel_epsilon,
    get_epsilon,
    get_p_q,
    krr_channel,
    krr_probabilities,
    rr_channel,
)
from dplib.composition import (
    BudgetExceededError,
    PrivacyAccountant,
    above_threshold,
    above_threshold_probabilities,
    averaging_attack,
    averaging_attack_tail,
    histogram_sensitivity,
    noisy_histogram,
    parallel_epsilon,
    sequential_epsilon,
)
from dplib.estimators import (
    ConfidenceInterval,
    estimate_black_fraction,
    estimate_count,
    estimate_count_std,
    estimate_crosstab,
    estimate_krr_counts,
    estimate_proportion_coin,
    krr_count_std,
    project_to_simplex,
    rr_confidence_interval,
)
from dplib.experiments import error_vs_epsilon, theoretical_krr_errors
from dplib.exponential import (
    exponential_mechanism,
    exponential_probabilities,
    report_noisy_max_gumbel,
    score_sensitivity_of_proportion,
)
from dplib.fairness import group_outcome_probabilities
from dplib.kary_randomized_response import k_rand_resp
from dplib.laplace import (
    clipped_sum_sensitivity,
    laplace_interval,
    laplace_mech,
    laplace_scale,
    laplace_tail,
    noisy_average,
    proportion_sensitivity,
    uniform_noise_epsilon,
)
from dplib.privacy_loss import max_privacy_loss, privacy_loss, satisfies_dp
from dplib.randomized_response import coin_rr, privatize_image, rand_resp

__version__ = "0.1.0"
