"""04_generalized_rr: correct answers written differently keep full marks; classic mistakes and delegation lose them."""

from helpers.rng_styles import rng_style_variants
from helpers.variants import Variant, autograded_tests, mocks_that_equal_everything

ASSIGNMENT = "04_generalized_rr"
ALL_TESTS = autograded_tests(ASSIGNMENT)

# The tests that check the randomness contract on the functions a variant below draws with the random module or
# numpy's global generator, which ignore rng: those variants lose them (check_uses_rng) and keep everything else.
IGNORES_RNG_LOSES = ("test_rand_resp_keep_rates", "test_k_rand_resp_lies_uniform")

VARIANTS = [
    Variant(
        "loops_random_module_and_numpy_global_random",
        {
            "rand_resp_solution": '''def rand_resp(x, p, q, rng=None):
    x = np.array(x)
    flip = np.where(x == 1, np.random.random(x.shape) >= p, np.random.random(x.shape) >= q)
    return np.where(flip, 1 - x, x)''',
            "get_epsilon_solution": '''def get_epsilon(p, q):
    worst = 0.0
    for a, b in [(p, 1 - q), (1 - q, p), (q, 1 - p), (1 - p, q)]:
        if a == 0:
            continue
        if b == 0:
            return float("inf")
        worst = max(worst, math.log(a) - math.log(b))
    return worst''',
            "get_p_q_solution": '''def get_p_q(epsilon):
    e = math.exp(epsilon)
    return (e / (1 + e), e / (1 + e))''',
            "krr_probabilities_solution": '''def krr_probabilities(k, epsilon):
    q = 1 / (np.exp(epsilon) + k - 1)
    return q * np.exp(epsilon), q''',
            "k_rand_resp_solution": '''import random

def k_rand_resp(categories, k, epsilon, rng=None):
    p, _ = krr_probabilities(k, epsilon)
    reports = []
    for value in np.asarray(categories).ravel().tolist():
        if random.random() < p:
            reports.append(value)
        else:
            reports.append(random.choice([other for other in range(k) if other != value]))
    return np.array(reports).reshape(np.shape(categories))''',
            "channel_epsilon_solution": '''def channel_epsilon(matrix):
    rows = [[float(v) for v in row] for row in matrix]
    worst = 0.0
    for y in range(len(rows[0])):
        column = [row[y] for row in rows]
        for a in column:
            for b in column:
                if a > 0 and b == 0:
                    return math.inf
                if a > 0 and b > 0:
                    worst = max(worst, math.log(a / b))
    return worst''',
        },
        # It ignores rng (the random module, numpy's global generator): the contract's tests (check_uses_rng) score 0.
        zero=IGNORES_RNG_LOSES,
        full=tuple(t for t in ALL_TESTS if t not in IGNORES_RNG_LOSES),
    ),
    Variant(
        "swapped_p_q_textbook_epsilon_k_not_k_minus_1_lie_skips_a_value_rows_not_columns",
        {
            "rand_resp_solution": '''def rand_resp(x, p, q, rng=None):
    rng = np.random.default_rng(rng)
    x = np.asarray(x)
    u = rng.random(x.shape)
    return np.where(x == 1, u < q, u >= p).astype(int)''',
            "get_epsilon_solution": '''def get_epsilon(p, q):
    return max(math.log(p / (1 - q)), math.log(q / (1 - p)))''',
            "krr_probabilities_solution": '''def krr_probabilities(k, epsilon):
    return math.exp(epsilon) / (math.exp(epsilon) + k), 1 / (math.exp(epsilon) + k)''',
            # a lie shifted by 1..k-2: never the truth, but never (x - 1) mod k either
            "k_rand_resp_solution": '''def k_rand_resp(categories, k, epsilon, rng=None):
    rng = np.random.default_rng(rng)
    categories = np.asarray(categories)
    p = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    truthful = rng.random(categories.shape) < p
    return np.where(truthful, categories, (categories + rng.integers(1, k - 1, size=categories.shape)) % k)''',
            "channel_epsilon_solution": '''def channel_epsilon(matrix):
    matrix = np.asarray(matrix, dtype=float)
    return float(np.max(np.log(matrix.max(axis=1) / matrix.min(axis=1))))''',
        },
        zero=(
            "test_rand_resp_keep_rates",
            "test_get_epsilon_any_p_q",
            "test_krr_probabilities_truth_and_lie",
            "test_k_rand_resp_lies_uniform",
            "test_channel_epsilon_within_columns",
        ),
        full=("test_get_p_q_symmetric",),
    ),
    Variant(
        "one_coin_one_sided_epsilon_lie_over_all_k_neighbouring_rows",
        {
            "rand_resp_solution": '''def rand_resp(x, p, q, rng=None):
    rng = np.random.default_rng(rng)
    x = np.asarray(x)
    u = rng.random()
    return np.where(x == 1, u < p, u >= q).astype(int)''',
            "get_epsilon_solution": '''def get_epsilon(p, q):
    return abs(math.log(p / (1 - q)))''',
            "get_p_q_solution": '''def get_p_q(epsilon):
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    return p, 1 - p''',
            "k_rand_resp_solution": '''def k_rand_resp(categories, k, epsilon, rng=None):
    rng = np.random.default_rng(rng)
    categories = np.asarray(categories)
    p, _ = krr_probabilities(k, epsilon)
    truthful = rng.random(categories.shape) < p
    return np.where(truthful, categories, rng.integers(0, k, size=categories.shape))''',
            "channel_epsilon_solution": '''def channel_epsilon(matrix):
    matrix = np.asarray(matrix, dtype=float)
    return float(np.max(np.abs(np.log(matrix[1:] / matrix[:-1]))))''',
        },
        zero=(
            "test_rand_resp_keep_rates",
            "test_get_epsilon_any_p_q",
            "test_get_p_q_symmetric",
            "test_k_rand_resp_lies_uniform",
            "test_channel_epsilon_within_columns",
        ),
        full=("test_krr_probabilities_truth_and_lie",),
    ),
    Variant(
        "k_not_k_minus_1_graded_alone_and_no_coin_for_a_scalar",
        {
            # Right for arrays, but a single number goes out as it came in.
            "rand_resp_solution": '''def rand_resp(x, p, q, rng=None):
    if np.ndim(x) == 0:
        return int(x)
    rng = np.random.default_rng(rng)
    x = np.asarray(x)
    u = rng.random(x.shape)
    return np.where(x == 1, u < p, u >= q).astype(int)''',
            # The reference k_rand_resp calls this wrong krr_probabilities: Exercise 6 must keep its points.
            "krr_probabilities_solution": '''def krr_probabilities(k, epsilon):
    return math.exp(epsilon) / (math.exp(epsilon) + k), 1 / (math.exp(epsilon) + k)''',
        },
        zero=("test_rand_resp_keep_rates", "test_krr_probabilities_truth_and_lie"),
        full=("test_k_rand_resp_lies_uniform", "test_get_epsilon_any_p_q", "test_channel_epsilon_within_columns"),
    ),
    Variant(
        "fixed_seed_k_rand_resp",
        {
            # Right rates, independent people, but the same reports on every call.
            "k_rand_resp_solution": '''def k_rand_resp(categories, k, epsilon, rng=None):
    rng = np.random.default_rng(0 if rng is None else rng)
    categories = np.asarray(categories)
    p, _ = krr_probabilities(k, epsilon)
    truthful = rng.random(categories.shape) < p
    shift = rng.integers(1, k, size=categories.shape)
    return np.where(truthful, categories, (categories + shift) % k)''',
        },
        zero=("test_k_rand_resp_lies_uniform",),
        full=("test_rand_resp_keep_rates", "test_krr_probabilities_truth_and_lie"),
    ),
    Variant(
        "numpy_arrays_lists_and_bools",
        {
            # bool reports, a numpy array or a list for a pair, a list of reports, numpy floats
            "rand_resp_solution": '''def rand_resp(x, p, q, rng=None):
    rng = np.random.default_rng(rng)
    x = np.asarray(x)
    u = rng.random(x.shape)
    return np.where(x == 1, u < p, u >= q)''',
            "get_epsilon_solution": '''def get_epsilon(p, q):
    columns = np.array([[p, 1 - q], [1 - p, q]])
    possible = columns.max(axis=1) > 0
    if (columns[possible].min(axis=1) == 0).any():
        return np.inf
    return np.max(np.log(columns[possible].max(axis=1) / columns[possible].min(axis=1)), initial=0.0)''',
            "get_p_q_solution": "def get_p_q(epsilon):\n    p = 1 / (1 + np.exp(-epsilon))\n    return np.array([p, p])",
            "krr_probabilities_solution": '''def krr_probabilities(k, epsilon):
    return [np.exp(epsilon) / (np.exp(epsilon) + k - 1), 1 / (np.exp(epsilon) + k - 1)]''',
            "k_rand_resp_solution": '''def k_rand_resp(categories, k, epsilon, rng=None):
    rng = np.random.default_rng(rng)
    categories = np.asarray(categories)
    p, _ = krr_probabilities(k, epsilon)
    lies = (categories + rng.integers(1, k, size=categories.shape)) % k
    return np.where(rng.random(categories.shape) < p, categories, lies).tolist()''',
        },
        full=ALL_TESTS,
    ),
    mocks_that_equal_everything(
        ["rand_resp", "get_epsilon", "get_p_q", "krr_probabilities", "k_rand_resp", "channel_epsilon"],
        {"__ne__": True},
        zero=ALL_TESTS,
    ),
    Variant(
        "fixed_stratified_coins",
        {
            # Evenly spaced uniforms in a fixed shuffled order: exact rates, but the same reports on every call.
            "rand_resp_solution": '''def rand_resp(x, p, q, rng=None):
    x = np.asarray(x)
    u = ((np.random.default_rng(0).permutation(x.size) + 0.5) / x.size).reshape(x.shape)
    return np.where(x == 1, u < p, u >= q).astype(int)''',
        },
        zero=("test_rand_resp_keep_rates",),
        full=("test_get_epsilon_any_p_q", "test_krr_probabilities_truth_and_lie", "test_k_rand_resp_lies_uniform"),
    ),
    Variant(
        "delegates_through_a_helper",
        {
            # dplib's unchecked sampler behind k_rand_resp does all of its work but the validation
            "k_rand_resp_solution": '''def k_rand_resp(categories, k, epsilon, rng=None):
    p, _ = krr_probabilities(k, epsilon)
    return dplib.mechanisms.kary_randomized_response.k_rand_resp_unchecked(np.asarray(categories), k, p, np.random.default_rng(rng))''',
        },
        zero=("test_k_rand_resp_lies_uniform",),
        full=("test_rand_resp_keep_rates", "test_krr_probabilities_truth_and_lie", "test_channel_epsilon_within_columns"),
    ),
    Variant(
        "delegates_to_dplib",
        {
            "rand_resp_solution": "rand_resp = dplib.rand_resp",
            "get_epsilon_solution": "def get_epsilon(p, q):\n    return dplib.channel_epsilon(dplib.rr_channel(p, q))",
            "get_p_q_solution": "from dplib import get_p_q",
            "krr_probabilities_solution": "krr_probabilities = dplib.krr_probabilities",
            "k_rand_resp_solution": "def k_rand_resp(categories, k, epsilon, rng=None):\n    return dplib.k_rand_resp(categories, k, epsilon, rng=rng)",
            "channel_epsilon_solution": "channel_epsilon = dplib.channel_epsilon",
        },
        zero=ALL_TESTS,
    ),
]


# The randomness contract, one variant per style (tests/helpers/rng_styles.py): the honest styles keep full marks;
# a generator created once at module level fails the tests that call check_is_random, a function that ignores rng
# (numpy's global generator, the random module) those that call check_uses_rng.
VARIANTS += rng_style_variants(
    ASSIGNMENT,
    is_random=("test_rand_resp_keep_rates", "test_k_rand_resp_lies_uniform"),
    uses_rng=("test_rand_resp_keep_rates", "test_k_rand_resp_lies_uniform"),
)
