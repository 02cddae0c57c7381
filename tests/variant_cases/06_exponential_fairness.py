"""06_exponential_fairness: correct answers written differently keep full marks; classic mistakes and delegation lose them.

Every classic mistake listed for 06 in COURSE_SPEC gets a variant that scores 0 on the test aimed
at it: the factor 2 dropped, the L2 norm used to normalise, ``np.exp`` overflow, sensitivity 1 for
a proportion, the argmax returned instead of a sample.
"""

from helpers.rng_styles import rng_style_variants
from helpers.variants import Variant, autograded_tests, mocks_that_equal_everything

ASSIGNMENT = "06_exponential_fairness"
PROBABILITIES = "test_exponential_probabilities_factor_two"
OVERFLOW = "test_exponential_probabilities_no_overflow"
MECHANISM = "test_exponential_mechanism_samples"
GUMBEL = "test_report_noisy_max_gumbel_distribution"
PROPORTION = "test_score_sensitivity_of_proportion"
SOCKS = "test_majority_probability_socks"
ALL_TESTS = autograded_tests(ASSIGNMENT)

# The tests that check the randomness contract on the functions a variant below draws with the random module or
# numpy's global generator, which ignore rng: those variants lose them (check_uses_rng) and keep everything else.
IGNORES_RNG_LOSES = ("test_exponential_mechanism_samples", "test_report_noisy_max_gumbel_distribution")

VARIANTS = [
    Variant(
        "scipy_and_random_module",
        {
            "exponential_probabilities_solution": '''from scipy.special import softmax

def exponential_probabilities(scores, epsilon, sensitivity):
    return softmax([epsilon * s / (2 * sensitivity) for s in scores])''',
            # Inverse-CDF sampling with the `random` module, ignoring rng, one draw at a time.
            "exponential_mechanism_solution": '''import bisect

def exponential_mechanism(scores, epsilon, sensitivity, rng=None, size=None):
    cumulative, total = [], 0.0
    for p in exponential_probabilities(scores, epsilon, sensitivity):
        total += p
        cumulative.append(total)
    def draw():
        return min(bisect.bisect_right(cumulative, random.random() * total), len(cumulative) - 1)
    if size is None:
        return draw()
    return [draw() for _ in range(size)]''',
            "report_noisy_max_gumbel_solution": '''def report_noisy_max_gumbel(scores, epsilon, sensitivity, rng=None):
    best, best_value = None, -math.inf
    for index, score in enumerate(scores):
        value = epsilon * score / (2 * sensitivity) - math.log(-math.log(1.0 - random.random()))
        if value > best_value:
            best, best_value = index, value
    return best''',
            "score_sensitivity_of_proportion_solution": '''def score_sensitivity_of_proportion(n):
    return 1 / n''',
            # Proportion scores with the right sensitivity are the same mechanism as counts.
            "majority_probability_solution": '''def majority_probability(group_size, minority_count, epsilon):
    shares = [(group_size - minority_count) / group_size, minority_count / group_size]
    return exponential_probabilities(shares, epsilon, score_sensitivity_of_proportion(group_size))[0]''',
        },
        # It ignores rng (the random module, numpy's global generator): the contract's tests (check_uses_rng) score 0.
        zero=IGNORES_RNG_LOSES,
        full=tuple(t for t in ALL_TESTS if t not in IGNORES_RNG_LOSES),
    ),
    Variant(
        "legacy_numpy_and_closed_form",
        {
            "exponential_probabilities_solution": '''from scipy.special import logsumexp

def exponential_probabilities(scores, epsilon, sensitivity):
    exponents = epsilon * np.array(scores, dtype=float) / (2 * sensitivity)
    return np.exp(exponents - logsumexp(exponents))''',
            "exponential_mechanism_solution": '''def exponential_mechanism(scores, epsilon, sensitivity, rng=None, size=None):
    p = exponential_probabilities(scores, epsilon, sensitivity)
    return np.random.choice(len(p), size=size, p=p)''',
            "report_noisy_max_gumbel_solution": '''def report_noisy_max_gumbel(scores, epsilon, sensitivity, rng=None):
    noisy = np.asarray(scores) + np.random.gumbel(scale=2 * sensitivity / epsilon, size=len(scores))
    return noisy.argmax()''',
            "majority_probability_solution": '''def majority_probability(group_size, minority_count, epsilon):
    return 1 / (1 + math.exp(-epsilon * (group_size - 2 * minority_count) / 2))''',
        },
        # It ignores rng (the random module, numpy's global generator): the contract's tests (check_uses_rng) score 0.
        zero=IGNORES_RNG_LOSES,
        full=tuple(t for t in ALL_TESTS if t not in IGNORES_RNG_LOSES),
    ),
    Variant(
        "factor_two_dropped",
        {
            "exponential_probabilities_solution": '''def exponential_probabilities(scores, epsilon, sensitivity):
    exponents = epsilon * np.asarray(scores, dtype=float) / sensitivity
    weights = np.exp(exponents - exponents.max())
    return weights / weights.sum()''',
            "report_noisy_max_gumbel_solution": '''def report_noisy_max_gumbel(scores, epsilon, sensitivity, rng=None):
    rng = np.random.default_rng(rng)
    exponents = epsilon * np.asarray(scores, dtype=float) / sensitivity
    return int(np.argmax(exponents + rng.gumbel(size=exponents.shape)))''',
            "majority_probability_solution": '''def majority_probability(group_size, minority_count, epsilon):
    return 1 / (1 + math.exp(-epsilon * (group_size - 2 * minority_count)))''',
        },
        zero=(PROBABILITIES, GUMBEL, SOCKS),
        full=(OVERFLOW, PROPORTION),
    ),
    Variant(
        "l2_normalised",
        {
            "exponential_probabilities_solution": '''def exponential_probabilities(scores, epsilon, sensitivity):
    exponents = epsilon * np.asarray(scores, dtype=float) / (2 * sensitivity)
    weights = np.exp(exponents - exponents.max())
    return weights / np.linalg.norm(weights)''',
        },
        zero=(PROBABILITIES,),
        full=(OVERFLOW, GUMBEL, PROPORTION),
    ),
    Variant(
        "overflow",
        {
            "exponential_probabilities_solution": '''def exponential_probabilities(scores, epsilon, sensitivity):
    weights = np.exp(epsilon * np.asarray(scores, dtype=float) / (2 * sensitivity))
    return weights / weights.sum()''',
            "majority_probability_solution": '''def majority_probability(group_size, minority_count, epsilon):
    weights = np.exp(epsilon * np.array([group_size - minority_count, minority_count]) / 2)
    return weights[0] / weights.sum()''',
        },
        zero=(OVERFLOW, MECHANISM, SOCKS),
        full=(PROBABILITIES, GUMBEL, PROPORTION),
    ),
    Variant(
        "proportion_with_sensitivity_one",
        {
            "score_sensitivity_of_proportion_solution": '''def score_sensitivity_of_proportion(n):
    return 1.0''',
            "majority_probability_solution": '''def majority_probability(group_size, minority_count, epsilon):
    shares = [(group_size - minority_count) / group_size, minority_count / group_size]
    return exponential_probabilities(shares, epsilon, 1.0)[0]''',
        },
        zero=(PROPORTION, SOCKS),
        full=(PROBABILITIES, OVERFLOW, MECHANISM, GUMBEL),
    ),
    Variant(
        "argmax_instead_of_sample",
        {
            "exponential_mechanism_solution": '''def exponential_mechanism(scores, epsilon, sensitivity, rng=None, size=None):
    best = int(np.argmax(scores))
    return best if size is None else np.full(size, best)''',
            "report_noisy_max_gumbel_solution": '''def report_noisy_max_gumbel(scores, epsilon, sensitivity, rng=None):
    return int(np.argmax(scores))''',
        },
        zero=(MECHANISM, GUMBEL),
        full=(PROBABILITIES, OVERFLOW, PROPORTION, SOCKS),
    ),
    Variant(
        "fixed_seed_draws_and_argmax_for_a_single_draw",
        {
            # Right distribution for size=N, but the same draws on every call, and the argmax for size=None.
            "exponential_mechanism_solution": '''def exponential_mechanism(scores, epsilon, sensitivity, rng=None, size=None):
    if size is None:
        return int(np.argmax(scores))
    probabilities = exponential_probabilities(scores, epsilon, sensitivity)
    return np.random.default_rng(0 if rng is None else rng).choice(len(probabilities), size=size, p=probabilities)''',
        },
        zero=(MECHANISM,),
        full=(PROBABILITIES, OVERFLOW, GUMBEL, PROPORTION, SOCKS),
    ),
    Variant(
        "minority_instead_of_majority",
        {
            "majority_probability_solution": '''def majority_probability(group_size, minority_count, epsilon):
    return 1 / (1 + math.exp(epsilon * (group_size - 2 * minority_count) / 2))''',
        },
        zero=(SOCKS,),
        full=(PROBABILITIES, OVERFLOW, MECHANISM, GUMBEL, PROPORTION),
    ),
    Variant(
        "numpy_integers_floats_and_lists",
        {
            "exponential_probabilities_solution": '''def exponential_probabilities(scores, epsilon, sensitivity):
    exponents = [epsilon * s / (2 * sensitivity) for s in scores]
    weights = [math.exp(e - max(exponents)) for e in exponents]
    return [w / sum(weights) for w in weights]''',
            "report_noisy_max_gumbel_solution": '''def report_noisy_max_gumbel(scores, epsilon, sensitivity, rng=None):
    exponents = epsilon * np.asarray(scores, dtype=float) / (2 * sensitivity)
    return np.argmax(exponents + np.random.default_rng(rng).gumbel(size=exponents.shape))''',
            "score_sensitivity_of_proportion_solution": "def score_sensitivity_of_proportion(n):\n    return np.float64(1) / n",
            "majority_probability_solution": '''def majority_probability(group_size, minority_count, epsilon):
    return exponential_probabilities([group_size - minority_count, minority_count], epsilon, 1.0)[0]''',
        },
        full=ALL_TESTS,
    ),
    mocks_that_equal_everything(
        ["exponential_probabilities", "exponential_mechanism", "report_noisy_max_gumbel",
         "score_sensitivity_of_proportion", "majority_probability"],
        {"__ne__": True},
        zero=ALL_TESTS,
    ),
    Variant(
        "delegates_through_a_helper",
        {
            # dplib's private helper computes the exponents; the student's sampler and socks answer use this function
            "exponential_probabilities_solution": '''def exponential_probabilities(scores, epsilon, sensitivity):
    exponents = dplib.mechanisms.exponential._exponents(scores, epsilon, sensitivity)
    weights = np.exp(exponents - exponents.max())
    return weights / weights.sum()''',
        },
        zero=(PROBABILITIES, OVERFLOW, MECHANISM, SOCKS),
        full=(GUMBEL, PROPORTION),
    ),
    Variant(
        "delegates_to_dplib",
        {
            "exponential_probabilities_solution": "exponential_probabilities = dplib.exponential_probabilities",
            "exponential_mechanism_solution": "from dplib import exponential_mechanism",
            "report_noisy_max_gumbel_solution": '''def report_noisy_max_gumbel(scores, epsilon, sensitivity, rng=None):
    return dplib.report_noisy_max_gumbel(scores, epsilon, sensitivity, rng=rng)''',
            "score_sensitivity_of_proportion_solution": "score_sensitivity_of_proportion = dplib.score_sensitivity_of_proportion",
            "majority_probability_solution": '''def majority_probability(group_size, minority_count, epsilon):
    table = dplib.group_outcome_probabilities([group_size], [minority_count], [epsilon])
    return table["majority"].iloc[0, 0]''',
        },
        zero=ALL_TESTS,
    ),
    Variant(
        "delegates_to_other_dplib_functions",
        {
            # The sampler and the socks answer lean on dplib's probabilities instead of the student's own.
            "exponential_mechanism_solution": '''def exponential_mechanism(scores, epsilon, sensitivity, rng=None, size=None):
    p = dplib.exponential_probabilities(scores, epsilon, sensitivity)
    return np.random.default_rng(rng).choice(len(p), size=size, p=p)''',
            "report_noisy_max_gumbel_solution": '''def report_noisy_max_gumbel(scores, epsilon, sensitivity, rng=None):
    return int(dplib.exponential_mechanism(scores, epsilon, sensitivity, rng=rng))''',
            "majority_probability_solution": '''def majority_probability(group_size, minority_count, epsilon):
    return dplib.exponential_probabilities([group_size - minority_count, minority_count], epsilon, 1.0)[0]''',
        },
        zero=(MECHANISM, GUMBEL, SOCKS),
        full=(PROBABILITIES, OVERFLOW, PROPORTION),
    ),
]


# The randomness contract, one variant per style (tests/helpers/rng_styles.py): the honest styles keep full marks;
# a generator created once at module level fails the tests that call check_is_random, a function that ignores rng
# (numpy's global generator, the random module) those that call check_uses_rng.
VARIANTS += rng_style_variants(
    ASSIGNMENT,
    is_random=("test_exponential_mechanism_samples", "test_report_noisy_max_gumbel_distribution"),
    uses_rng=("test_exponential_mechanism_samples", "test_report_noisy_max_gumbel_distribution"),
)
