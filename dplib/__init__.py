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

Subpackages, by the course's map; each re-exports the public names of its modules:

- ``dplib.mechanisms``: Laplace, randomized response (binary and k-ary), exponential (and who pays for
  its noise), Gaussian, sparse vector, Laplace noise on a grid;
- ``dplib.accounting``: privacy loss, epsilon of a channel, budgets and pure composition, zCDP,
  subsampling, the accounting of DP-GD;
- ``dplib.estimation``: estimates back from binary and k-ary randomized reports, and their error;
- ``dplib.attacks``: linkage and differencing, reconstruction, the floating-point attack;
- ``dplib.auditing``: an audit of a claim of epsilon-DP, its confidence bounds, the vendor mechanisms;
- ``dplib.learning``: learning on locally privatized data, logistic regression, noisy gradient descent;
- ``dplib.synthetic``: marginals, synthetic tables sampled from them, MWEM, their evaluation.

The tools, modules of their own: ``dplib.datasets``, ``dplib.images`` and, loaded on first use so
``import dplib`` does not pay for matplotlib and ipywidgets, ``dplib.plotting`` (plot helpers),
``dplib.figures`` (the colour-blind-safe palette and the text alternative of every figure: ``describe``,
``alt_text``), ``dplib.widgets`` (the lecture explorers) and ``dplib.testing`` (the checks of autograder test cells:
``check_*``, ``testing.disabled``, ``testing.quiet``).

Every module keeps the flat name it had in earlier terms (:data:`FORMER_NAMES`): a notebook that writes
``import dplib.privacy_loss`` or ``dplib.vendors.TRUE_EPSILON`` gets ``dplib.accounting.privacy_loss``
and ``dplib.auditing.vendors``; ``dplib.learning``, ``dplib.synthetic``, ``dplib.attacks`` and
``dplib.auditing`` are the subpackages, which re-export every public name of the module once called so.
The grading platform is a package of its own, `dpgrader`, which no notebook imports.
"""

import importlib
import sys

from dplib import datasets
from dplib.accounting.zcdp import advanced_composition_epsilon, zcdp_rho, zcdp_to_epsilon
from dplib.attacks.linkage import differencing_attack, reidentify, uniqueness
from dplib.auditing.confidence_bounds import clopper_pearson, detection_probability, epsilon_lower_bound, miss_probability
from dplib.auditing.event_audit import EventAudit, audit_events, audit_threshold, audit_vendors, event_counts
from dplib.accounting.channels import (
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
from dplib.accounting.budgets import (
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
from dplib.mechanisms.discrete_laplace import (
    discrete_laplace_steps,
    exact_grid_laplace,
    grid_laplace,
    on_grid,
    opendp_laplace,
    opendp_laplace_epsilon,
)
from dplib.accounting.dp_gd import dp_gd_epsilon, dp_gd_rho, gradient_sum_sensitivity, noise_multiplier_for
from dplib.estimation.binary_rr import (
    ConfidenceInterval,
    estimate_black_fraction,
    estimate_count,
    estimate_count_std,
    estimate_crosstab,
    estimate_proportion_coin,
    rr_confidence_interval,
)
from dplib.estimation.experiments import apportion, error_vs_epsilon, krr_error_vs_epsilon, theoretical_krr_errors
from dplib.mechanisms.exponential import (
    exponential_mechanism,
    exponential_probabilities,
    report_noisy_max_gumbel,
    score_sensitivity_of_proportion,
)
from dplib.mechanisms.fairness import group_outcome_probabilities
from dplib.figures import MARKERS, PALETTE, alt_text, describe, show_alt_text
from dplib.attacks.floating_point import can_produce, textbook_laplace, textbook_laplace_output
from dplib.mechanisms.gaussian import (
    analytic_gaussian_sigma,
    gaussian_delta,
    gaussian_mech,
    gaussian_sigma,
    l2_sensitivity_of_histogram,
)
from dplib.images import demo_picture
from dplib.estimation.kary_rr import estimate_krr_counts, krr_count_std, project_to_simplex
from dplib.mechanisms.kary_randomized_response import k_rand_resp
from dplib.mechanisms.laplace import (
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
from dplib.learning.local_model import adult_learning_data, private_accuracy, privatize_columns, train_and_score
from dplib.learning.logistic_model import (
    adult_design_matrices,
    design_matrix,
    logistic_accuracy,
    logistic_loss,
    nonprivate_logistic_regression,
    per_example_gradients,
)
from dplib.synthetic.marginals import consistent_marginals, marginal, marginal_errors, noisy_marginals
from dplib.synthetic.multiplicative_weights import marginal_queries, multiplicative_weights_update, mwem, select_worst_query
from dplib.mechanisms.numpy_geometric import GridLaplaceDelta, NumpyGeometric, grid_laplace_delta, numpy_geometric_search
from dplib.accounting.privacy_loss import max_privacy_loss, privacy_loss_per_output, satisfies_dp
from dplib.learning.noisy_gd import (
    central_accuracy,
    clip_gradients,
    noisy_gradient,
    noisy_gradient_descent,
    noisy_gradient_descent_path,
)
from dplib.mechanisms.randomized_response import coin_rr, privatize_image, rand_resp
from dplib.attacks.reconstruction import answer_queries, reconstruct, reconstruction_accuracy, subset_queries
from dplib.accounting.subsampling import sampled_gaussian_epsilon, subsampled_epsilon
from dplib.synthetic.sampling import (
    ADULT_DOMAIN,
    ADULT_TREE,
    adult_synthetic_data,
    sample_independent,
    sample_tree,
    synthesize,
)
from dplib.synthetic.evaluation import classifier_accuracy, synthetic_utility
from dplib.auditing.vendors import Vendor, vendor_mechanisms

#: The flat module names of earlier terms, kept so that notebooks written against them still run:
#: ``import dplib.laplace`` and ``dplib.laplace.laplace_mech`` reach ``dplib.mechanisms.laplace``.
FORMER_NAMES = {
    "laplace": "dplib.mechanisms.laplace",
    "randomized_response": "dplib.mechanisms.randomized_response",
    "kary_randomized_response": "dplib.mechanisms.kary_randomized_response",
    "exponential": "dplib.mechanisms.exponential",
    "gaussian": "dplib.mechanisms.gaussian",
    "sparse_vector": "dplib.mechanisms.sparse_vector",
    "discrete_laplace": "dplib.mechanisms.discrete_laplace",
    "numpy_geometric": "dplib.mechanisms.numpy_geometric",
    "fairness": "dplib.mechanisms.fairness",
    "privacy_loss": "dplib.accounting.privacy_loss",
    "channels": "dplib.accounting.channels",
    "composition": "dplib.accounting.budgets",
    "approximate_composition": "dplib.accounting.zcdp",
    "subsampling": "dplib.accounting.subsampling",
    "dp_gd_accounting": "dplib.accounting.dp_gd",
    "estimators": "dplib.estimation.binary_rr",
    "kary_estimators": "dplib.estimation.kary_rr",
    "experiments": "dplib.estimation.experiments",
    "reconstruction": "dplib.attacks.reconstruction",
    "floating_point": "dplib.attacks.floating_point",
    "audit_bounds": "dplib.auditing.confidence_bounds",
    "vendors": "dplib.auditing.vendors",
    "logistic_regression": "dplib.learning.logistic_model",
    "private_learning": "dplib.learning.noisy_gd",
    "marginals": "dplib.synthetic.marginals",
    "synthetic_evaluation": "dplib.synthetic.evaluation",
    "multiplicative_weights": "dplib.synthetic.multiplicative_weights",
}
for _former, _module in FORMER_NAMES.items():
    # Registered before any ``import dplib.<former>`` looks: the import system finds it in sys.modules
    # once the package is imported, and the attribute makes ``dplib.<former>`` work without an import.
    sys.modules.setdefault(f"dplib.{_former}", sys.modules[_module])
    globals()[_former] = sys.modules[_module]
del _former, _module

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
