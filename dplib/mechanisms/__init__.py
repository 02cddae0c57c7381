"""Mechanisms: the noise that makes a release private (Laplace, randomized response, k-RR, exponential,
Gaussian, sparse vector, noise on a grid) and who pays for it.

Modules (their names of earlier terms, still importable as ``dplib.<name>``, in brackets):

- ``laplace``: the Laplace mechanism and the facts about it that the course uses.
- ``randomized_response``: randomized response for one bit: Warner's coins, the (p, q) form and the image form.
- ``kary_randomized_response``: k-ary (generalized) randomized response for a value in ``0..k-1``.
- ``exponential``: the exponential mechanism: choosing an item privately, in its softmax and Gumbel-max forms.
- ``gaussian``: approximate (epsilon, delta)-DP: the Gaussian mechanism, classic and analytic, and its exact delta.
- ``sparse_vector``: the sparse vector technique: AboveThreshold, and the exact distribution of its output.
- ``discrete_laplace``: laplace noise on a grid: the fixes of the floating-point attack, with no gaps to attack.
- ``numpy_geometric``: numpy's geometric sampler, exactly: the probabilities it really gives, and the δ of :func:`~dplib.mechanisms.discrete_laplace.grid_laplace`.
- ``fairness``: who pays for the noise: per-group outcomes of the exponential mechanism.
"""

from dplib.mechanisms.laplace import (
    clipped_sum_sensitivity,
    laplace_interval,
    laplace_mech,
    laplace_noise,
    laplace_privacy_loss,
    laplace_scale,
    laplace_tail,
    noisy_average,
    proportion_sensitivity,
    uniform_noise_epsilon,
)
from dplib.mechanisms.randomized_response import (
    coin_rr,
    privatize_image,
    privatize_image_unchecked,
    rand_resp,
)
from dplib.mechanisms.kary_randomized_response import (
    k_rand_resp,
    k_rand_resp_unchecked,
)
from dplib.mechanisms.exponential import (
    exponential_mechanism,
    exponential_probabilities,
    report_noisy_max_gumbel,
    score_sensitivity_of_proportion,
)
from dplib.mechanisms.gaussian import (
    analytic_gaussian_sigma,
    gaussian_delta,
    gaussian_mech,
    gaussian_sigma,
    l2_sensitivity_of_histogram,
    NEIGHBOURS,
)
from dplib.mechanisms.sparse_vector import (
    above_threshold,
    above_threshold_probabilities,
)
from dplib.mechanisms.discrete_laplace import (
    bernoulli_exp,
    discrete_laplace_steps,
    exact_grid_laplace,
    grid_laplace,
    on_grid,
    opendp_laplace,
    opendp_laplace_epsilon,
)
from dplib.mechanisms.numpy_geometric import (
    grid_laplace_delta,
    GridLaplaceDelta,
    numpy_geometric_search,
    NUMPY_GEOMETRIC_SEARCH_FROM,
    NumpyGeometric,
    UNIFORMS,
)
from dplib.mechanisms.fairness import (
    group_outcome_probabilities,
    SCORES,
)
