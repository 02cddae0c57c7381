"""03_randomized_response: correct answers written differently keep full marks; classic mistakes and delegation lose them."""

from helpers.rng_styles import rng_style_variants
from helpers.variants import Variant, autograded_tests, mocks_that_equal_everything

ASSIGNMENT = "03_randomized_response"
ALL_TESTS = autograded_tests(ASSIGNMENT)

# Both functions that draw randomness are checked for the contract in their rate tests.
IGNORES_RNG_LOSES = ("test_coin_rr_rates", "test_privatize_image_rates")

VARIANTS = [
    Variant(
        "loops_and_random_module",
        {
            "coin_rr_solution": '''import random

def coin_rr(x, rng=None):
    def one_person(truth):
        if random.random() < 0.5:
            return int(truth)
        return 1 if random.random() < 0.5 else 0

    if np.ndim(x) == 0:
        return one_person(x)
    x = np.asarray(x)
    answers = np.empty(x.shape, dtype=int)
    for index in np.ndindex(x.shape):
        answers[index] = one_person(x[index])
    return answers''',
            "coin_rr_epsilon_solution": "COIN_RR_EPSILON = math.log(0.75) - math.log(0.25)",
            "estimate_proportion_coin_solution": '''def estimate_proportion_coin(responses):
    total, count = 0, 0
    for answer in responses:
        total += answer
        count += 1
    return 2 * total / count - 1 / 2''',
            "privatize_image_solution": '''import random

def privatize_image(image, alpha, beta, rng=None):
    image = np.asarray(image)
    result = np.zeros(image.shape, dtype=int)
    for index in np.ndindex(image.shape):
        if random.random() < alpha:
            result[index] = image[index]
        elif random.random() < beta:
            result[index] = 1
    return result''',
            "estimate_black_fraction_solution": '''def estimate_black_fraction(private_image, alpha, beta):
    pixels = [pixel for row in private_image for pixel in row]
    observed = sum(pixels) / len(pixels)
    return (observed - (1 - alpha) * beta) / alpha''',
            "alpha_beta_epsilon_solution": '''def alpha_beta_epsilon(alpha, beta):
    p_black = [alpha + (1 - alpha) * beta, (1 - alpha) * beta]
    p_white = [1 - p_black[0], 1 - p_black[1]]
    worst = 0.0
    for a, b in (p_black, p_white):
        if a == 0 and b == 0:
            continue
        if a == 0 or b == 0:
            return float("inf")
        worst = max(worst, math.log(max(a, b) / min(a, b)))
    return worst''',
        },
        # The random module / numpy's global generator ignore rng: the contract's tests (check_uses_rng) score 0.
        zero=IGNORES_RNG_LOSES,
        full=tuple(t for t in ALL_TESTS if t not in IGNORES_RNG_LOSES),
    ),
    Variant(
        "numpy_global_and_coin_roles_swapped",
        {
            # Heads: the second coin answers; tails: the truth. The same distribution as Warner's order.
            "coin_rr_solution": '''def coin_rr(x, rng=None):
    x = np.asarray(x)
    first = np.random.randint(0, 2, size=x.shape)
    second = np.random.randint(0, 2, size=x.shape)
    answers = np.where(first == 1, second, x)
    return answers if answers.ndim else int(answers)''',
            "coin_rr_epsilon_solution": "COIN_RR_EPSILON = float(np.log(3))",
            "estimate_proportion_coin_solution": "def estimate_proportion_coin(responses):\n    return 2 * np.mean(responses) - 0.5",
            "privatize_image_solution": '''def privatize_image(image, alpha, beta, rng=None):
    image = np.asarray(image)
    keep = np.random.binomial(1, alpha, size=image.shape)
    paint = np.random.binomial(1, beta, size=image.shape)
    return keep * image + (1 - keep) * paint''',
            "estimate_black_fraction_solution": '''def estimate_black_fraction(private_image, alpha, beta):
    return (np.asarray(private_image).mean() - (1 - alpha) * beta) / alpha''',
            "alpha_beta_epsilon_solution": '''def alpha_beta_epsilon(alpha, beta):
    channel = np.array([[alpha + (1 - alpha) * beta, (1 - alpha) * (1 - beta)],
                        [(1 - alpha) * beta, alpha + (1 - alpha) * (1 - beta)]])
    epsilon = 0.0
    for column in channel.T:
        if column.max() == 0:
            continue
        if column.min() == 0:
            return np.inf
        epsilon = max(epsilon, np.log(column.max() / column.min()))
    return float(epsilon)''',
        },
        # The random module / numpy's global generator ignore rng: the contract's tests (check_uses_rng) score 0.
        zero=IGNORES_RNG_LOSES,
        full=tuple(t for t in ALL_TESTS if t not in IGNORES_RNG_LOSES),
    ),
    Variant(
        "shared_coins_ln2_two_mean_minus_one",
        {
            "coin_rr_solution": '''def coin_rr(x, rng=None):
    rng = np.random.default_rng(rng)
    x = np.asarray(x)
    answers = x.copy() if rng.random() < 0.5 else np.full(x.shape, int(rng.random() < 0.5))
    return answers if answers.ndim else int(answers)''',
            "coin_rr_epsilon_solution": "COIN_RR_EPSILON = math.log(2)",
            "estimate_proportion_coin_solution": "def estimate_proportion_coin(responses):\n    return 2 * np.mean(responses) - 1",
            "estimate_black_fraction_solution": '''def estimate_black_fraction(private_image, alpha, beta):
    return (np.mean(private_image) - beta) / alpha''',
        },
        zero=("test_coin_rr_fresh_coins", "test_coin_rr_epsilon", "test_estimate_proportion_coin", "test_estimate_black_fraction"),
        full=("test_privatize_image_rates", "test_alpha_beta_epsilon"),
    ),
    Variant(
        "lie_on_tails_swapped_alpha_beta_one_output",
        {
            "coin_rr_solution": '''def coin_rr(x, rng=None):
    rng = np.random.default_rng(rng)
    x = np.asarray(x)
    heads = rng.random(x.shape) < 0.5
    answers = np.where(heads, x, 1 - x)
    return answers if answers.ndim else int(answers)''',
            "privatize_image_solution": '''def privatize_image(image, alpha, beta, rng=None):
    rng = np.random.default_rng(rng)
    image = np.asarray(image)
    keep = rng.random(image.shape) < beta
    black = rng.random(image.shape) < alpha
    return np.where(keep, image, black).astype(int)''',
            "alpha_beta_epsilon_solution": '''def alpha_beta_epsilon(alpha, beta):
    p = alpha + (1 - alpha) * beta
    q = (1 - alpha) * beta
    return math.inf if q == 0 else math.log(p / q)''',
        },
        zero=("test_coin_rr_rates", "test_privatize_image_rates", "test_alpha_beta_epsilon"),
        full=("test_coin_rr_fresh_coins", "test_coin_rr_epsilon", "test_estimate_proportion_coin", "test_estimate_black_fraction"),
    ),
    Variant(
        "seeded_coins_and_one_draw_per_picture",
        {
            "coin_rr_solution": '''def coin_rr(x, rng=None):
    if rng is None:
        rng = np.random.default_rng(0)
    x = np.asarray(x)
    first_heads = rng.random(x.shape) < 0.5
    second_heads = rng.random(x.shape) < 0.5
    answers = np.where(first_heads, x, second_heads).astype(int)
    return answers if answers.ndim else int(answers)''',
            "privatize_image_solution": '''def privatize_image(image, alpha, beta, rng=None):
    rng = np.random.default_rng(rng)
    image = np.asarray(image)
    if rng.random() < alpha:
        return image.copy()
    return np.full(image.shape, int(rng.random() < beta))''',
        },
        # Seeded coins give the right rates, but the same answers on every call: not a sample.
        zero=("test_coin_rr_rates", "test_coin_rr_fresh_coins", "test_privatize_image_rates"),
        full=("test_estimate_black_fraction", "test_alpha_beta_epsilon"),
    ),
    Variant(
        "no_coins_for_a_scalar_and_a_fixed_seed_per_picture",
        {
            # Right for arrays, but a single number goes out as it came in.
            "coin_rr_solution": '''def coin_rr(x, rng=None):
    if np.ndim(x) == 0:
        return int(x)
    rng = np.random.default_rng(rng)
    x = np.asarray(x)
    first_heads = rng.random(x.shape) < 0.5
    second_heads = rng.random(x.shape) < 0.5
    return np.where(first_heads, x, second_heads).astype(int)''',
            # Right rates, independent pixels, but the same picture on every call.
            "privatize_image_solution": '''def privatize_image(image, alpha, beta, rng=None):
    rng = np.random.default_rng(0 if rng is None else rng)
    image = np.asarray(image)
    keep = rng.random(image.shape) < alpha
    black = rng.random(image.shape) < beta
    return np.where(keep, image, black).astype(int)''',
        },
        # A single answer without coins is no sample: the rates test needs one too.
        zero=("test_coin_rr_rates", "test_coin_rr_fresh_coins", "test_privatize_image_rates"),
        full=("test_estimate_black_fraction", "test_alpha_beta_epsilon"),
    ),
    Variant(
        "numpy_bools_floats_and_nested_lists",
        {
            # bools for 0/1 answers (a numpy bool for a single one), numpy floats, a picture as nested lists
            "coin_rr_solution": '''def coin_rr(x, rng=None):
    rng = np.random.default_rng(rng)
    x = np.asarray(x)
    return np.where(rng.random(x.shape) < 0.5, x == 1, rng.random(x.shape) < 0.5)[()]''',
            "coin_rr_epsilon_solution": "COIN_RR_EPSILON = np.log(0.75 / 0.25)",
            "estimate_proportion_coin_solution": "def estimate_proportion_coin(responses):\n    return 2 * np.mean(responses) - 0.5",
            "privatize_image_solution": '''def privatize_image(image, alpha, beta, rng=None):
    rng = np.random.default_rng(rng)
    image = np.asarray(image)
    keep = rng.random(image.shape) < alpha
    return np.where(keep, image, rng.random(image.shape) < beta).astype(int).tolist()''',
            "estimate_black_fraction_solution": '''def estimate_black_fraction(private_image, alpha, beta):
    return (np.mean(private_image) - (1 - alpha) * beta) / np.float64(alpha)''',
        },
        full=ALL_TESTS,
    ),
    mocks_that_equal_everything(
        ["coin_rr", "estimate_proportion_coin", "privatize_image", "estimate_black_fraction", "alpha_beta_epsilon"],
        {"__ne__": True},
        also={"coin_rr_epsilon_solution":
              "from unittest import mock\n\nCOIN_RR_EPSILON = mock.MagicMock(**{'__eq__.return_value': True})"},
        zero=ALL_TESTS,
    ),
    Variant(
        "delegates_through_helpers",
        {
            # the unchecked helpers behind privatize_image and estimate_black_fraction do all their work
            "privatize_image_solution": '''def privatize_image(image, alpha, beta, rng=None):
    return dplib.mechanisms.randomized_response.privatize_image_unchecked(np.asarray(image), alpha, beta, np.random.default_rng(rng))''',
            "estimate_black_fraction_solution": '''def estimate_black_fraction(private_image, alpha, beta):
    return dplib.estimation.binary_rr.unbias_black_fraction(float(np.mean(private_image)), alpha, beta)''',
        },
        zero=("test_privatize_image_rates", "test_estimate_black_fraction"),
        full=("test_coin_rr_rates", "test_coin_rr_fresh_coins", "test_alpha_beta_epsilon"),
    ),
    Variant(
        "delegates_to_dplib",
        {
            "coin_rr_solution": "def coin_rr(x, rng=None):\n    return dplib.rand_resp(x, 0.75, 0.75, rng=rng)",
            "coin_rr_epsilon_solution": "COIN_RR_EPSILON = dplib.COIN_RR_EPSILON",
            "estimate_proportion_coin_solution": "estimate_proportion_coin = dplib.estimate_proportion_coin",
            "privatize_image_solution": "from dplib import privatize_image",
            "estimate_black_fraction_solution": '''def estimate_black_fraction(private_image, alpha, beta):
    p, q = dplib.alpha_beta_to_p_q(alpha, beta)
    return dplib.estimate_count(np.ravel(private_image), p, q) / np.size(private_image)''',
            "alpha_beta_epsilon_solution": '''def alpha_beta_epsilon(alpha, beta):
    return dplib.get_epsilon(*dplib.alpha_beta_to_p_q(alpha, beta))''',
        },
        zero=ALL_TESTS,
    ),
]


# The randomness contract, one variant per style (tests/helpers/rng_styles.py): the honest styles keep full marks;
# a generator created once at module level fails the tests that call check_is_random, a function that ignores rng
# (numpy's global generator, the random module) those that call check_uses_rng.
VARIANTS += rng_style_variants(
    ASSIGNMENT,
    is_random=("test_coin_rr_rates", "test_privatize_image_rates"),
    uses_rng=("test_coin_rr_rates", "test_privatize_image_rates"),
)
