"""07_composition: correct answers written differently keep full marks; classic mistakes and delegation lose them.

Every classic mistake listed for 07 in issue 13 gets a variant that scores 0 on the test aimed at it
and keeps the points of unrelated tests: max for sequential, sum for parallel, an empty list that
raises instead of costing 0 (issue 21); a histogram noise of scale k/epsilon, noise only on non-empty
bins, one draw shared by all bins; one noisy answer reused k times; refusing the third spend of 0.1
from 0.3, charging a refused query; fresh threshold noise per query, no query noise, wrong (or swapped)
scales. AboveThreshold's noise structure shows only over several queries compared with one threshold,
so a fresh threshold per query and swapped scales lose both of its distribution tests.
"""

from helpers.rng_styles import rng_style_variants
from helpers.variants import Variant, autograded_tests, mocks_that_equal_everything

ASSIGNMENT = "07_composition"
SEQUENTIAL = "test_sequential_epsilon_adds_up"
PARALLEL = "test_parallel_epsilon_takes_the_largest"
HISTOGRAM_SENSITIVITY = "test_histogram_sensitivity_neighbour_notions"
HISTOGRAM_SCALE = "test_noisy_histogram_scale"
HISTOGRAM_BINS = "test_noisy_histogram_every_bin"
HISTOGRAM_VALIDATION = "test_noisy_histogram_validation"
ONE_QUERY = "test_averaging_attack_one_query"
CLOSES_IN = "test_averaging_attack_closes_in"
SPENDS = "test_privacy_accountant_spends_and_refuses"
ROUNDING = "test_privacy_accountant_rounding"
REFUSAL_FREE = "test_privacy_accountant_refusal_is_free"
FIRST_INDEX = "test_above_threshold_first_index"
SCALES = "test_above_threshold_noise_scales"
DRAWN_ONCE = "test_above_threshold_threshold_drawn_once"
ALL_TESTS = autograded_tests(ASSIGNMENT)

VALIDATION = '''    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if not (isinstance(k, (int, np.integer)) and k >= 2):
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
'''


def noisy_histogram_with(noise: str) -> str:
    """The reference noisy_histogram with its noise line replaced."""
    return (
        "def noisy_histogram(categories, k, epsilon, rng=None):\n" + VALIDATION
        + "    rng = np.random.default_rng(rng)\n"
        + "    counts = np.bincount(np.asarray(categories, dtype=int), minlength=k)\n"
        + f"    return counts + {noise}"
    )


def above_threshold_with(threshold_noise: str, query_noise: str, fresh_threshold: bool = False) -> str:
    """The reference above_threshold (a loop) with other noises; optionally a new threshold noise per query."""
    per_query = f"        noisy_threshold = threshold + {threshold_noise}\n" if fresh_threshold else ""
    return (
        "def above_threshold(queries, threshold, epsilon, rng=None):\n"
        "    rng = np.random.default_rng(rng)\n"
        f"    noisy_threshold = threshold + {threshold_noise}\n"
        "    for index, answer in enumerate(queries):\n"
        + per_query
        + f"        if answer + {query_noise} >= noisy_threshold:\n"
        "            return index\n"
        "    return -1"
    )


def accountant_with(spend_body: str) -> str:
    """A PrivacyAccountant that keeps a running total, with the given body for spend."""
    return f'''class PrivacyAccountant:
    def __init__(self, budget):
        if not (math.isfinite(budget) and budget > 0):
            raise ValueError(f"budget must be a finite number > 0, got {{budget!r}}")
        self.budget = budget
        self.spent = 0.0

    @property
    def remaining(self):
        return max(0.0, self.budget - self.spent)

    def spend(self, epsilon):
        if not (math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {{epsilon!r}}")
{spend_body}'''


# The tests that check the randomness contract on the functions a variant below draws with the random module or
# numpy's global generator, which ignore rng: those variants lose them (check_uses_rng) and keep everything else.
IGNORES_RNG_LOSES = (
    "test_noisy_histogram_scale",
    "test_averaging_attack_one_query",
    "test_averaging_attack_closes_in",
    "test_above_threshold_noise_scales",
    "test_above_threshold_threshold_drawn_once",
)

VARIANTS = [
    Variant(
        "loops_and_random_module",
        {
            "sequential_epsilon_solution": '''def sequential_epsilon(epsilons):
    total = 0.0
    for epsilon in epsilons:
        total += epsilon
    return total''',
            "parallel_epsilon_solution": '''def parallel_epsilon(epsilons):
    largest = 0.0
    for epsilon in epsilons:
        if epsilon > largest:
            largest = epsilon
    return largest''',
            "histogram_sensitivity_solution": '''def histogram_sensitivity(neighbours):
    table = {"add_remove": 1, "substitute": 2}
    if neighbours not in table:
        raise ValueError("unknown neighbours: " + repr(neighbours))
    return table[neighbours]''',
            # Laplace noise from the random module (an exponential with a random sign), one bin at a time.
            "noisy_histogram_solution": '''def laplace_noise(scale):
    return random.expovariate(1 / scale) * random.choice([-1, 1])

def noisy_histogram(categories, k, epsilon, rng=None):
    if not epsilon > 0 or epsilon == float("inf") or epsilon != epsilon:
        raise ValueError("epsilon must be positive and finite")
    if int(k) != k or k < 2:
        raise ValueError("k must be at least 2")
    counts = [0] * k
    for value in categories:
        counts[int(value)] += 1
    return [count + laplace_noise(1 / epsilon) for count in counts]''',
            "averaging_attack_solution": '''def averaging_attack(true_value, sensitivity, epsilon, k, rng=None):
    total = 0.0
    for _ in range(k):
        total += true_value + laplace_noise(sensitivity / epsilon)
    return total / k''',
            # A running float total and an absolute tolerance of 1e-12 instead of the stated relative 1e-9.
            "privacy_accountant_solution": accountant_with('''        if self.spent + epsilon > self.budget + 1e-12:
            raise BudgetExceededError("over budget")
        self.spent += epsilon'''),
            "above_threshold_solution": '''def above_threshold(queries, threshold, epsilon, rng=None):
    noisy_threshold = threshold + laplace_noise(2 / epsilon)
    for index in range(len(queries)):
        if queries[index] + laplace_noise(4 / epsilon) >= noisy_threshold:
            return index
    return -1''',
        },
        # It ignores rng (the random module, numpy's global generator): the contract's tests (check_uses_rng) score 0.
        zero=IGNORES_RNG_LOSES,
        full=tuple(t for t in ALL_TESTS if t not in IGNORES_RNG_LOSES),
    ),
    Variant(
        "numpy_global_vectorized_and_isclose",
        {
            "sequential_epsilon_solution": "def sequential_epsilon(epsilons):\n    return float(np.sum(epsilons))",
            "parallel_epsilon_solution": "def parallel_epsilon(epsilons):\n    return np.max(epsilons, initial=0.0)",
            "noisy_histogram_solution": '''def noisy_histogram(categories, k, epsilon, rng=None):
    if not np.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"bad epsilon {epsilon}")
    if k < 2:
        raise ValueError(f"bad k {k}")
    counts, _ = np.histogram(categories, bins=np.arange(k + 1))
    return dplib.laplace_mech(counts.astype(float), 1, epsilon)''',
            "averaging_attack_solution": '''def averaging_attack(true_value, sensitivity, epsilon, k, rng=None):
    return np.mean(true_value + np.random.laplace(0, sensitivity / epsilon, size=k))''',
            # math.isclose with a relative tolerance of 1e-6, and a list of spends.
            "privacy_accountant_solution": '''class PrivacyAccountant:
    def __init__(self, budget):
        if not (0 < budget < math.inf):
            raise ValueError("budget must be > 0 and finite")
        self.budget, self.spends = budget, []

    @property
    def spent(self):
        return sum(self.spends)

    @property
    def remaining(self):
        return max(self.budget - self.spent, 0)

    def spend(self, epsilon):
        if not (0 < epsilon < math.inf):
            raise ValueError("epsilon must be > 0 and finite")
        total = self.spent + epsilon
        if total > self.budget and not math.isclose(total, self.budget, rel_tol=1e-6):
            raise BudgetExceededError(f"{total} > {self.budget}")
        self.spends.append(epsilon)''',
            # All the query noise drawn at once; the first index above via argmax.
            "above_threshold_solution": '''def above_threshold(queries, threshold, epsilon, rng=None):
    queries = np.asarray(queries, dtype=float)
    noisy_threshold = threshold + np.random.laplace(0, 2 / epsilon)
    above = queries + np.random.laplace(0, 4 / epsilon, size=queries.shape) >= noisy_threshold
    return int(np.argmax(above)) if above.any() else -1''',
        },
        # It ignores rng (the random module, numpy's global generator): the contract's tests (check_uses_rng) score 0.
        zero=IGNORES_RNG_LOSES,
        full=tuple(t for t in ALL_TESTS if t not in IGNORES_RNG_LOSES),
    ),
    Variant(
        "max_for_sequential_sum_for_parallel_substitute_is_one",
        {
            "sequential_epsilon_solution": "def sequential_epsilon(epsilons):\n    return float(max(epsilons))",
            "parallel_epsilon_solution": "def parallel_epsilon(epsilons):\n    return float(sum(epsilons))",
            "histogram_sensitivity_solution": '''def histogram_sensitivity(neighbours):
    if neighbours in ("add_remove", "substitute"):
        return 1
    raise ValueError(f"neighbours must be 'add_remove' or 'substitute', got {neighbours!r}")''',
        },
        zero=(SEQUENTIAL, PARALLEL, HISTOGRAM_SENSITIVITY),
        full=(HISTOGRAM_SCALE, HISTOGRAM_BINS, ONE_QUERY, SPENDS, SCALES),
    ),
    Variant(
        "parallel_max_of_an_empty_list_raises",
        {"parallel_epsilon_solution": "def parallel_epsilon(epsilons):\n    return float(max(epsilons))"},
        zero=(PARALLEL,),
        full=(SEQUENTIAL, HISTOGRAM_SENSITIVITY),
    ),
    Variant(
        "histogram_scale_k_over_epsilon",
        {"noisy_histogram_solution": noisy_histogram_with("rng.laplace(0.0, k / epsilon, size=k)")},
        zero=(HISTOGRAM_SCALE,),
        full=(HISTOGRAM_BINS, HISTOGRAM_VALIDATION, HISTOGRAM_SENSITIVITY, ONE_QUERY),
    ),
    Variant(
        "histogram_noise_only_on_non_empty_bins",
        {"noisy_histogram_solution": noisy_histogram_with("np.where(counts > 0, rng.laplace(0.0, 1.0 / epsilon, size=k), 0.0)")},
        zero=(HISTOGRAM_BINS,),
        full=(HISTOGRAM_SCALE, HISTOGRAM_VALIDATION),
    ),
    Variant(
        "histogram_one_draw_shared_by_all_bins_no_validation",
        {
            "noisy_histogram_solution": '''def noisy_histogram(categories, k, epsilon, rng=None):
    rng = np.random.default_rng(rng)
    return np.bincount(np.asarray(categories, dtype=int), minlength=k) + rng.laplace(0.0, 1.0 / epsilon)''',
        },
        zero=(HISTOGRAM_BINS, HISTOGRAM_VALIDATION),
        full=(HISTOGRAM_SCALE,),
    ),
    Variant(
        "one_noisy_answer_reused_k_times",
        {
            "averaging_attack_solution": '''def averaging_attack(true_value, sensitivity, epsilon, k, rng=None):
    answer = dplib.laplace_mech(true_value, sensitivity, epsilon, rng=rng)
    return float(np.mean([answer] * k))''',
        },
        zero=(CLOSES_IN,),
        full=(ONE_QUERY, HISTOGRAM_SCALE, SPENDS),
    ),
    Variant(
        "accountant_without_tolerance",
        {
            "privacy_accountant_solution": accountant_with('''        if self.spent + epsilon > self.budget:
            raise BudgetExceededError("over budget")
        self.spent += epsilon'''),
        },
        zero=(ROUNDING,),
        full=(SPENDS, REFUSAL_FREE, ONE_QUERY),
    ),
    Variant(
        "accountant_charges_a_refused_query",
        {
            "privacy_accountant_solution": accountant_with('''        self.spent += epsilon
        if self.spent > self.budget * (1 + 1e-9):
            raise BudgetExceededError("over budget")'''),
        },
        zero=(REFUSAL_FREE,),
        full=(SPENDS, ROUNDING),
    ),
    Variant(
        "above_threshold_fresh_threshold_noise_per_query",
        {"above_threshold_solution": above_threshold_with("rng.laplace(0.0, 2.0 / epsilon)", "rng.laplace(0.0, 4.0 / epsilon)",
                                                          fresh_threshold=True)},
        zero=(DRAWN_ONCE, SCALES),
        full=(FIRST_INDEX, CLOSES_IN),
    ),
    Variant(
        "above_threshold_no_query_noise",
        {"above_threshold_solution": above_threshold_with("rng.laplace(0.0, 2.0 / epsilon)", "0.0")},
        zero=(SCALES, DRAWN_ONCE),
        full=(FIRST_INDEX,),
    ),
    Variant(
        "above_threshold_scales_one_over_epsilon",
        {"above_threshold_solution": above_threshold_with("rng.laplace(0.0, 1.0 / epsilon)", "rng.laplace(0.0, 1.0 / epsilon)")},
        zero=(SCALES,),
        full=(FIRST_INDEX,),
    ),
    Variant(
        "above_threshold_scales_times_epsilon",
        {"above_threshold_solution": above_threshold_with("rng.laplace(0.0, 2.0 * epsilon)", "rng.laplace(0.0, 4.0 * epsilon)")},
        zero=(SCALES,),
        full=(FIRST_INDEX,),
    ),
    Variant(
        "above_threshold_scales_swapped",
        # One query alone cannot tell 2/eps on the threshold and 4/eps on the query from the reverse;
        # ten queries compared with one threshold can (the scales test), and so can thirty (drawn once).
        {"above_threshold_solution": above_threshold_with("rng.laplace(0.0, 4.0 / epsilon)", "rng.laplace(0.0, 2.0 / epsilon)")},
        zero=(SCALES, DRAWN_ONCE),
        full=(FIRST_INDEX,),
    ),
    Variant(
        "numpy_scalars_and_lists",
        {
            "sequential_epsilon_solution": "def sequential_epsilon(epsilons):\n    return np.sum(epsilons)",
            "parallel_epsilon_solution": "def parallel_epsilon(epsilons):\n"
                                         "    return np.max(np.append(np.asarray(epsilons, dtype=float), 0.0))",
            "histogram_sensitivity_solution": '''def histogram_sensitivity(neighbours):
    sensitivities = {"add_remove": np.int64(1), "substitute": np.float64(2)}
    if neighbours not in sensitivities:
        raise ValueError(f"neighbours must be 'add_remove' or 'substitute', got {neighbours!r}")
    return sensitivities[neighbours]''',
            "noisy_histogram_solution": noisy_histogram_with("rng.laplace(0.0, 1.0 / epsilon, size=k)").replace(
                "    return counts + ", "    return list(counts + ") + ")",
            "averaging_attack_solution": '''def averaging_attack(true_value, sensitivity, epsilon, k, rng=None):
    return np.mean(true_value + np.random.default_rng(rng).laplace(0.0, sensitivity / epsilon, size=k))''',
            "above_threshold_solution": '''def above_threshold(queries, threshold, epsilon, rng=None):
    rng = np.random.default_rng(rng)
    noisy_threshold = threshold + rng.laplace(0.0, 2.0 / epsilon)
    above = np.flatnonzero(np.asarray(queries, dtype=float) + rng.laplace(0.0, 4.0 / epsilon, size=len(queries))
                           >= noisy_threshold)
    return above[0] if above.size else np.int64(-1)''',
        },
        full=ALL_TESTS,
    ),
    mocks_that_equal_everything(
        ["sequential_epsilon", "parallel_epsilon", "histogram_sensitivity", "noisy_histogram", "averaging_attack",
         "above_threshold"],
        {"__ne__": True},
        also={
            "privacy_accountant_solution": '''from unittest import mock


class PrivacyAccountant:
    def __init__(self, budget):
        if not (math.isfinite(budget) and budget > 0):
            raise ValueError(f"budget must be a finite number > 0, got {budget!r}")

    spent = remaining = property(lambda self: mock.MagicMock(**{"__eq__.return_value": True}))

    def spend(self, epsilon):
        if not (math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")''',
        },
        zero=ALL_TESTS,
    ),
    Variant(
        "delegates_to_dplib",
        {
            "sequential_epsilon_solution": "sequential_epsilon = dplib.sequential_epsilon",
            "parallel_epsilon_solution": "from dplib import parallel_epsilon",
            "histogram_sensitivity_solution": "histogram_sensitivity = dplib.histogram_sensitivity",
            "noisy_histogram_solution": '''def noisy_histogram(categories, k, epsilon, rng=None):
    return dplib.noisy_histogram(categories, k, epsilon, rng=rng)''',
            "averaging_attack_solution": "averaging_attack = dplib.averaging_attack",
            "privacy_accountant_solution": "class PrivacyAccountant(dplib.PrivacyAccountant):\n    pass",
            "above_threshold_solution": "above_threshold = dplib.above_threshold",
        },
        zero=ALL_TESTS,
    ),
]


# The randomness contract, one variant per style (tests/helpers/rng_styles.py): the honest styles keep full marks;
# a generator created once at module level fails the tests that call check_is_random, a function that ignores rng
# (numpy's global generator, the random module) those that call check_uses_rng.
VARIANTS += rng_style_variants(
    ASSIGNMENT,
    is_random=(
        "test_noisy_histogram_scale",
        "test_averaging_attack_one_query",
        "test_averaging_attack_closes_in",
        "test_above_threshold_noise_scales",
        "test_above_threshold_threshold_drawn_once",
    ),
    uses_rng=(
        "test_noisy_histogram_scale",
        "test_averaging_attack_one_query",
        "test_averaging_attack_closes_in",
        "test_above_threshold_noise_scales",
        "test_above_threshold_threshold_drawn_once",
    ),
)
