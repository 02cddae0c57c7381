"""dplib: the helper package of the hands-on differential privacy course.

``import dplib`` is the front door: a notebook needs nothing else from dplib.

Re-exported here, imported with the package (numpy, pandas and scipy only):

- mechanisms: ``laplace_mech``, ``noisy_average``, ``coin_rr``, ``rand_resp``,
  ``privatize_image``, ``k_rand_resp``, ``exponential_mechanism``, ``report_noisy_max_gumbel``;
- their parameters: ``laplace_scale``, ``laplace_tail``, ``laplace_interval``,
  ``clipped_sum_sensitivity``, ``proportion_sensitivity``, ``score_sensitivity_of_proportion``,
  ``get_p_q``, ``krr_probabilities``, ``alpha_beta_to_p_q``, ``rr_channel``, ``krr_channel``,
  ``exponential_probabilities``;
- epsilon of a mechanism, named ``<mechanism>_epsilon`` (``channel_epsilon``,
  ``alpha_beta_epsilon``, ``uniform_noise_epsilon``, ``COIN_RR_EPSILON``; ``get_epsilon`` is
  binary randomized response's, under the name of the 04 exercise API) and the privacy loss
  (``privacy_loss_per_output``, ``laplace_privacy_loss``, ``max_privacy_loss``, ``satisfies_dp``);
- estimators: ``estimate_proportion_coin``, ``estimate_black_fraction``, ``estimate_count``,
  ``estimate_count_std``, ``rr_confidence_interval``, ``ConfidenceInterval``,
  ``estimate_crosstab``, ``estimate_krr_counts``, ``krr_count_std``, ``project_to_simplex``;
- experiments: ``krr_error_vs_epsilon`` (alias ``error_vs_epsilon``, the 05 exercise API),
  ``theoretical_krr_errors``, ``apportion``, ``group_outcome_probabilities``;
- approximate DP (08): ``gaussian_sigma``, ``analytic_gaussian_sigma``, ``gaussian_delta``,
  ``gaussian_mech``, ``l2_sensitivity_of_histogram``, ``zcdp_rho``, ``zcdp_to_epsilon``,
  ``advanced_composition_epsilon``; learning on privatized data: ``adult_learning_data``,
  ``privatize_columns``, ``train_and_score``, ``private_accuracy``;
- composition and budgets (07): ``sequential_epsilon``, ``parallel_epsilon``, ``histogram_sensitivity``,
  ``noisy_histogram``, ``averaging_attack``, ``averaging_attack_tail``, ``PrivacyAccountant``,
  ``BudgetExceededError``, ``above_threshold``, ``above_threshold_probabilities``;
- attacks: ``uniqueness``, ``reidentify``, ``differencing_attack``;
- auditing (11): ``clopper_pearson``, ``epsilon_lower_bound``, ``event_counts``, ``audit_events``,
  ``EventAudit``, ``audit_threshold``, ``audit_vendors``, ``detection_probability``, ``miss_probability``;
  the vendor mechanisms ``vendor_mechanisms``, ``Vendor``; the floating-point attack and its fixes
  ``textbook_laplace``, ``textbook_laplace_output``, ``can_produce``, ``grid_laplace`` (its exact δ
  ``grid_laplace_delta``, ``GridLaplaceDelta``; numpy's geometric sampler ``numpy_geometric_search``, ``NumpyGeometric``),
  ``discrete_laplace_steps``, ``exact_grid_laplace``, ``on_grid``, ``opendp_laplace``, ``opendp_laplace_epsilon``; the reconstruction attack ``subset_queries``,
  ``answer_queries``, ``reconstruct``, ``reconstruction_accuracy``;
- synthetic data (10): ``marginal``, ``noisy_marginals``, ``consistent_marginals``, ``marginal_errors``,
  ``sample_independent``, ``sample_tree``, ``synthesize``, ``classifier_accuracy``, ``synthetic_utility``,
  ``adult_synthetic_data``, ``ADULT_DOMAIN``, ``ADULT_TREE``; MWEM ``marginal_queries``, ``select_worst_query``,
  ``multiplicative_weights_update``, ``mwem``;
- private learning (09): ``per_example_gradients``, ``clip_gradients``, ``gradient_sum_sensitivity``,
  ``noisy_gradient``, ``noisy_gradient_descent``, ``noisy_gradient_descent_path``, ``dp_gd_rho``, ``dp_gd_epsilon``,
  ``noise_multiplier_for``, ``central_accuracy``, ``design_matrix``, ``adult_design_matrices``, ``logistic_loss``,
  ``logistic_accuracy``, ``nonprivate_logistic_regression``; amplification by subsampling ``subsampled_epsilon``,
  ``sampled_gaussian_epsilon``;
- data: ``load_adult``, ``load_adult_with_pii``, ``load_voter_roll``, ``age_sex_categories``,
  ``demo_picture``.

Modules, each importable by its own name (``import dplib.privacy_loss``). Three are loaded
on first use, so ``import dplib`` does not pay for matplotlib and ipywidgets:

- ``dplib.plotting``: plot helpers (matplotlib);
- ``dplib.widgets``: the lecture explorers (ipywidgets);
- ``dplib.testing``: the checks of autograder test cells (``check_*``, ``testing.disabled``, ``testing.quiet``).

The others: ``datasets``, ``laplace``, ``randomized_response``, ``kary_randomized_response``,
``channels``, ``estimators``, ``kary_estimators``, ``experiments``, ``exponential``,
``fairness``, ``privacy_loss``, ``attacks``, ``images``, ``composition``, ``sparse_vector``,
``gaussian``, ``approximate_composition``, ``learning``, ``logistic_regression``, ``private_learning``,
``dp_gd_accounting``, ``subsampling``, ``auditing``, ``audit_bounds``, ``vendors``, ``floating_point``,
``discrete_laplace``, ``numpy_geometric``, ``reconstruction``, ``marginals``, ``synthetic``, ``synthetic_evaluation``,
``multiplicative_weights``, ``figures`` (the palette and the text alternative of figures: ``describe``,
``alt_text``);
the grading platform is a package of its own, `dpgrader`, which no notebook imports.
"""

import importlib

from dplib import datasets
from dplib.approximate_composition import advanced_composition_epsilon, zcdp_rho, zcdp_to_epsilon
from dplib.attacks import differencing_attack, reidentify, uniqueness
from dplib.audit_bounds import clopper_pearson, detection_probability, epsilon_lower_bound, miss_probability
from dplib.auditing import EventAudit, audit_events, audit_threshold, audit_vendors, event_counts
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
from dplib.datasets import age_sex_categories, load_adult, load_adult_with_pii, load_voter_roll
from dplib.discrete_laplace import (
    discrete_laplace_steps,
    exact_grid_laplace,
    grid_laplace,
    on_grid,
    opendp_laplace,
    opendp_laplace_epsilon,
)
from dplib.dp_gd_accounting import dp_gd_epsilon, dp_gd_rho, gradient_sum_sensitivity, noise_multiplier_for
from dplib.estimators import (
    ConfidenceInterval,
    estimate_black_fraction,
    estimate_count,
    estimate_count_std,
    estimate_crosstab,
    estimate_proportion_coin,
    rr_confidence_interval,
)
from dplib.experiments import apportion, error_vs_epsilon, krr_error_vs_epsilon, theoretical_krr_errors
from dplib.exponential import (
    exponential_mechanism,
    exponential_probabilities,
    report_noisy_max_gumbel,
    score_sensitivity_of_proportion,
)
from dplib.fairness import group_outcome_probabilities
from dplib.figures import alt_text, describe, show_alt_text
from dplib.floating_point import can_produce, textbook_laplace, textbook_laplace_output
from dplib.gaussian import (
    analytic_gaussian_sigma,
    gaussian_delta,
    gaussian_mech,
    gaussian_sigma,
    l2_sensitivity_of_histogram,
)
from dplib.images import demo_picture
from dplib.kary_estimators import estimate_krr_counts, krr_count_std, project_to_simplex
from dplib.kary_randomized_response import k_rand_resp
from dplib.laplace import (
    clipped_sum_sensitivity,
    laplace_interval,
    laplace_mech,
    laplace_privacy_loss,
    laplace_scale,
    laplace_tail,
    noisy_average,
    proportion_sensitivity,
    uniform_noise_epsilon,
)
from dplib.learning import adult_learning_data, private_accuracy, privatize_columns, train_and_score
from dplib.logistic_regression import (
    adult_design_matrices,
    design_matrix,
    logistic_accuracy,
    logistic_loss,
    nonprivate_logistic_regression,
    per_example_gradients,
)
from dplib.marginals import consistent_marginals, marginal, marginal_errors, noisy_marginals
from dplib.multiplicative_weights import marginal_queries, multiplicative_weights_update, mwem, select_worst_query
from dplib.numpy_geometric import GridLaplaceDelta, NumpyGeometric, grid_laplace_delta, numpy_geometric_search
from dplib.privacy_loss import max_privacy_loss, privacy_loss_per_output, satisfies_dp
from dplib.private_learning import (
    central_accuracy,
    clip_gradients,
    noisy_gradient,
    noisy_gradient_descent,
    noisy_gradient_descent_path,
)
from dplib.randomized_response import coin_rr, privatize_image, rand_resp
from dplib.reconstruction import answer_queries, reconstruct, reconstruction_accuracy, subset_queries
from dplib.subsampling import sampled_gaussian_epsilon, subsampled_epsilon
from dplib.synthetic import (
    ADULT_DOMAIN,
    ADULT_TREE,
    adult_synthetic_data,
    sample_independent,
    sample_tree,
    synthesize,
)
from dplib.synthetic_evaluation import classifier_accuracy, synthetic_utility
from dplib.vendors import Vendor, vendor_mechanisms

__version__ = "0.1.0"

show_alt_text()  # in a kernel: every matplotlib figure shown carries its text alternative (dplib.figures)

#: Submodules loaded on first attribute access (``dplib.widgets``), to keep ``import dplib`` fast.
_LAZY_MODULES = ("plotting", "widgets", "testing")


def __getattr__(name: str):
    if name in _LAZY_MODULES:
        return importlib.import_module(f"dplib.{name}")  # also binds dplib.<name>
    raise AttributeError(f"module 'dplib' has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_LAZY_MODULES})
