"""Accounting: how private a release is (privacy loss, epsilon of a channel), and what composing,
subsampling and training spend of a budget (pure composition, zCDP, DP-GD).

Modules (their names of earlier terms, still importable as ``dplib.<name>``, in brackets):

- ``privacy_loss``: the privacy loss between two output distributions, and the epsilon-DP check.
- ``channels``: privacy parameters of randomized-response channels, and conversions between them.
- ``budgets`` (``composition``): composition, budgets and the sparse vector technique: the properties that make DP usable.
- ``zcdp`` (``approximate_composition``): composing approximate DP: zero-concentrated DP (zCDP) and advanced composition.
- ``subsampling``: amplification by subsampling: the privacy of a mechanism run on a Poisson sample, and of DP-SGD.
- ``dp_gd`` (``dp_gd_accounting``): privacy accounting of full-batch DP-GD: the sensitivity of a clipped sum, zCDP over T steps, epsilon, sigma.
"""

from dplib.accounting.privacy_loss import (
    DP_TOLERANCE,
    max_privacy_loss,
    privacy_loss_per_output,
    satisfies_dp,
)
from dplib.accounting.channels import (
    alpha_beta_epsilon,
    alpha_beta_to_p_q,
    channel_epsilon,
    COIN_RR_EPSILON,
    get_epsilon,
    get_p_q,
    krr_channel,
    krr_probabilities,
    rr_channel,
)
from dplib.accounting.budgets import (
    averaging_attack,
    averaging_attack_tail,
    BudgetExceededError,
    HISTOGRAM_SENSITIVITY,
    histogram_sensitivity,
    noisy_histogram,
    parallel_epsilon,
    PrivacyAccountant,
    sequential_epsilon,
)
from dplib.accounting.zcdp import (
    advanced_composition_epsilon,
    zcdp_rho,
    zcdp_to_epsilon,
)
from dplib.accounting.subsampling import (
    sampled_gaussian_epsilon,
    sampled_gaussian_rdp,
    subsampled_epsilon,
)
from dplib.accounting.dp_gd import (
    dp_gd_epsilon,
    dp_gd_rho,
    gradient_sum_sensitivity,
    noise_multiplier_for,
    require_clip_norm,
    require_neighbours,
    require_positive_noise_multiplier,
    SENSITIVITY_IN_CLIP_NORMS,
)
