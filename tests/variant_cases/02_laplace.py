"""02_laplace: correct answers written differently keep full marks; classic mistakes and delegation lose them."""

from helpers.rng_styles import rng_style_variants
from helpers.variants import Variant, autograded_tests, mocks_that_equal_everything, requires_finite

ASSIGNMENT = "02_laplace"
ALL_TESTS = autograded_tests(ASSIGNMENT)

# A correct laplace_mech with one line changed by each mistake below.
CHECKS = requires_finite("epsilon", "> 0") + requires_finite("sensitivity", ">= 0")


def laplace_mech_with(noise_line: str, checks: str = CHECKS, make_rng: str = "    rng = np.random.default_rng(rng)\n") -> str:
    return (
        "def laplace_mech(value, sensitivity, epsilon, rng=None):\n"
        + checks
        + make_rng
        + "    value = np.asarray(value, dtype=float)\n"
        + f"    noisy = value + {noise_line}\n"
        + "    return noisy if noisy.ndim else float(noisy)"
    )


RANDOM_MODULE_LOSES = ("test_laplace_mech_scale", "test_laplace_histogram_l1_scale", "test_noisy_average_budget")

VARIANTS = [
    Variant(
        "loops_and_random_module",
        {
            "laplace_mech_solution": '''import random

def laplace_mech(value, sensitivity, epsilon, rng=None):
    if not (epsilon > 0 and epsilon != float("inf")):
        raise ValueError("epsilon must be a finite number > 0")
    if not (sensitivity >= 0 and sensitivity != float("inf")):
        raise ValueError("sensitivity must be a finite number >= 0")
    scale = sensitivity / epsilon

    def noise():
        return random.expovariate(1 / scale) * random.choice([-1, 1])

    if np.ndim(value) == 0:
        return float(value) + noise()
    result = np.array(value, dtype=float)
    for index in np.ndindex(result.shape):
        result[index] += noise()
    return result''',
            "clipped_sum_sensitivity_solution": '''def clipped_sum_sensitivity(lower, upper):
    biggest = 0
    for bound in (lower, upper):
        if bound < 0:
            bound = -bound
        if bound > biggest:
            biggest = bound
    return biggest''',
            "proportion_sensitivity_solution": "def proportion_sensitivity(n):\n    return n ** -1",
            "laplace_histogram_solution": '''def laplace_histogram(counts, neighbours, epsilon, rng=None):
    if neighbours == "add_remove":
        scale = 1 / epsilon
    elif neighbours == "substitute":
        scale = 2 / epsilon  # one person leaves a bin and joins another: L1 distance 2
    else:
        raise ValueError("unknown neighbours: " + repr(neighbours))
    return [c + random.expovariate(1 / scale) * random.choice([-1, 1]) for c in counts]''',
            "laplace_tail_solution": "def laplace_tail(t, sensitivity, epsilon):\n    return math.e ** (-(t / (sensitivity / epsilon)))",
            "laplace_interval_solution": '''def laplace_interval(sensitivity, epsilon, alpha):
    scale = sensitivity / epsilon
    return -scale * math.log(alpha)''',
            "noisy_average_solution": '''def noisy_average(values, lower, upper, epsilon, rng=None):
    total, count = 0.0, 0
    for v in values:
        total += min(max(v, lower), upper)
        count += 1
    half = epsilon / 2
    noisy_total = laplace_mech(total, clipped_sum_sensitivity(lower, upper), half)
    noisy_count = laplace_mech(count, 1, half)
    return noisy_total / noisy_count''',
            "uniform_noise_epsilon_solution": 'def uniform_noise_epsilon():\n    return float("inf")',
        },
        # The random module ignores rng: the tests that check the contract (check_uses_rng) on laplace_mech, on this
        # laplace_histogram and on noisy_average score 0; everything else keeps full marks.
        zero=RANDOM_MODULE_LOSES,
        full=tuple(t for t in ALL_TESTS if t not in RANDOM_MODULE_LOSES),
    ),
    Variant(
        "numpy_global_and_scipy",
        {
            "laplace_mech_solution": '''def laplace_mech(value, sensitivity, epsilon, rng=None):
    if not np.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"bad epsilon: {epsilon}")
    if not np.isfinite(sensitivity) or sensitivity < 0:
        raise ValueError(f"bad sensitivity: {sensitivity}")
    return value + stats.laplace.rvs(scale=sensitivity / epsilon, size=np.shape(value))''',
            "clipped_sum_sensitivity_solution": "def clipped_sum_sensitivity(lower, upper):\n    return np.max(np.abs([lower, upper]))",
            "laplace_tail_solution": "def laplace_tail(t, sensitivity, epsilon):\n    return np.exp(-t * epsilon / sensitivity)",
            "laplace_interval_solution": "def laplace_interval(sensitivity, epsilon, alpha):\n    return sensitivity * np.log(1 / alpha) / epsilon",
            "noisy_average_solution": '''def noisy_average(values, lower, upper, epsilon, rng=None):
    clipped = np.minimum(np.maximum(values, lower), upper)
    noisy_sum = clipped.sum() + np.random.laplace(0, max(abs(lower), abs(upper)) / (epsilon / 2))
    noisy_count = len(clipped) + np.random.laplace(0, 2 / epsilon)
    return noisy_sum / noisy_count''',
            "uniform_noise_epsilon_solution": "def uniform_noise_epsilon():\n    return np.inf",
        },
        # scipy's rvs without random_state and np.random.laplace ignore rng (check_uses_rng); laplace_histogram is the
        # reference.
        zero=("test_laplace_mech_scale", "test_noisy_average_budget"),
        full=tuple(t for t in ALL_TESTS if t not in ("test_laplace_mech_scale", "test_noisy_average_budget")),
    ),
    Variant(
        "scale_epsilon_over_sensitivity_swapped_formulas_rng_none_breaks",
        {
            "laplace_mech_solution": laplace_mech_with("rng.laplace(0.0, epsilon / sensitivity, size=value.shape)"),
            "clipped_sum_sensitivity_solution": "def clipped_sum_sensitivity(lower, upper):\n    return float(max(lower, upper))",
            "proportion_sensitivity_solution": "def proportion_sensitivity(n):\n    return 1.0",
            "laplace_tail_solution": "def laplace_tail(t, sensitivity, epsilon):\n    return math.exp(-t * sensitivity / epsilon)",
            "laplace_interval_solution": "def laplace_interval(sensitivity, epsilon, alpha):\n    return epsilon / sensitivity * math.log(1 / alpha)",
            # Right formula, but rng=None is used as a generator.
            "noisy_average_solution": '''def noisy_average(values, lower, upper, epsilon, rng=None):
    clipped = np.clip(values, lower, upper)
    noisy_sum = clipped.sum() + rng.laplace(0, max(abs(lower), abs(upper)) / (epsilon / 2))
    noisy_count = len(clipped) + rng.laplace(0, 2 / epsilon)
    return noisy_sum / noisy_count''',
            "uniform_noise_epsilon_solution": "def uniform_noise_epsilon():\n    return 20.0",
            # The number of bins as the sensitivity: far too much noise.
            "laplace_histogram_solution": '''def laplace_histogram(counts, neighbours, epsilon, rng=None):
    if neighbours not in ("add_remove", "substitute"):
        raise ValueError(f"neighbours must be 'add_remove' or 'substitute', got {neighbours!r}")
    counts = np.asarray(counts, dtype=float)
    return counts + np.random.laplace(0, counts.size / epsilon, size=counts.shape)''',
        },
        zero=(
            "test_laplace_mech_scale",
            "test_clipped_sum_sensitivity",
            "test_proportion_sensitivity",
            "test_laplace_tail",
            "test_laplace_interval",
            "test_noisy_average_clipping",
            "test_noisy_average_budget",
            "test_uniform_noise_epsilon",
            "test_laplace_histogram_l1_scale",
        ),
        full=("test_laplace_mech_per_entry", "test_laplace_mech_validation"),
    ),
    Variant(
        "normal_noise_no_validation_no_clipping_width_as_sensitivity",
        {
            "laplace_mech_solution": laplace_mech_with("rng.normal(0.0, sensitivity / epsilon, size=value.shape)", checks=""),
            "clipped_sum_sensitivity_solution": "def clipped_sum_sensitivity(lower, upper):\n    return upper - lower",
            "laplace_histogram_solution": '''def laplace_histogram(counts, neighbours, epsilon, rng=None):
    sensitivity = {"add_remove": 2.0, "substitute": 1.0}[neighbours]  # the two notions swapped
    return laplace_mech(counts, sensitivity, epsilon, rng=rng)''',
            "noisy_average_solution": '''def noisy_average(values, lower, upper, epsilon, rng=None):
    values = np.asarray(values, dtype=float)
    noisy_sum = values.sum() + np.random.laplace(0, max(abs(lower), abs(upper)) / (epsilon / 2))
    noisy_count = values.size + np.random.laplace(0, 1 / (epsilon / 2))
    return noisy_sum / noisy_count''',
        },
        # noisy_average draws from np.random, which ignores rng: check_uses_rng zeroes its budget test.
        zero=("test_laplace_mech_scale", "test_laplace_mech_validation", "test_clipped_sum_sensitivity", "test_noisy_average_clipping",
              "test_laplace_histogram_l1_scale", "test_noisy_average_budget"),
        full=("test_laplace_mech_per_entry", "test_laplace_tail", "test_proportion_sensitivity"),
    ),
    Variant(
        "one_draw_for_the_whole_array_whole_epsilon_twice",
        {
            "laplace_mech_solution": laplace_mech_with("rng.laplace(0.0, sensitivity / epsilon)"),
            "noisy_average_solution": '''def noisy_average(values, lower, upper, epsilon, rng=None):
    clipped = np.clip(np.asarray(values, dtype=float), lower, upper)
    noisy_sum = laplace_mech(clipped.sum(), clipped_sum_sensitivity(lower, upper), epsilon)
    noisy_count = laplace_mech(clipped.size, 1, epsilon)
    return float(noisy_sum / noisy_count)''',
        },
        zero=("test_laplace_mech_per_entry", "test_noisy_average_budget"),
        # laplace_histogram is graded with dplib's laplace_mech: the one-draw mistake costs laplace_mech only.
        full=("test_laplace_mech_validation", "test_noisy_average_clipping", "test_laplace_interval", "test_clipped_sum_sensitivity",
              "test_laplace_histogram_l1_scale"),
    ),
    Variant(
        "deterministic_stratified_noise_none_for_a_scalar_per_entry_histogram_sensitivity",
        {
            # Laplace quantiles at evenly spaced levels in a fixed shuffled order: the right distribution and
            # independent-looking entries, but the same "noise" on every call, and none for a single number.
            "laplace_mech_solution": '''def laplace_mech(value, sensitivity, epsilon, rng=None):
''' + CHECKS + '''    value = np.asarray(value, dtype=float)
    if value.ndim == 0:
        return float(value)
    levels = (np.arange(value.size) + 0.5) / value.size
    noise = np.random.default_rng(0).permutation(stats.laplace(scale=sensitivity / epsilon).ppf(levels))
    return value + noise.reshape(value.shape)''',
            # Each bin moves by at most 1, so sensitivity 1 for both notions: only 2 epsilon-DP under substitution.
            "laplace_histogram_solution": '''def laplace_histogram(counts, neighbours, epsilon, rng=None):
    if neighbours not in ("add_remove", "substitute"):
        raise ValueError(f"neighbours must be 'add_remove' or 'substitute', got {neighbours!r}")
    return laplace_mech(np.asarray(counts, dtype=float), 1.0, epsilon, rng=rng)''',
        },
        # The distribution tests also need a sample: two calls that differ, and noise on a single number.
        zero=("test_laplace_mech_scale", "test_laplace_mech_per_entry", "test_laplace_histogram_l1_scale"),
        full=("test_laplace_mech_validation", "test_clipped_sum_sensitivity", "test_laplace_tail"),
    ),
    Variant(
        "fixed_seeds",
        {
            # Seeded once when the cell runs: every call draws new values, every run of the notebook the same ones.
            "laplace_mech_solution": "SEEDED = np.random.default_rng(0)\n\n\n"
            + laplace_mech_with("rng.laplace(0.0, sensitivity / epsilon, size=value.shape)",
                                make_rng="    rng = rng if rng is not None else SEEDED\n"),
            # The generator seeded in another cell (laplace_mech's): laplace_histogram is graded with dplib's laplace_mech.
            "laplace_histogram_solution": '''def laplace_histogram(counts, neighbours, epsilon, rng=None):
    scales = {"add_remove": 1.0, "substitute": 2.0}
    if neighbours not in scales:
        raise ValueError(f"neighbours must be 'add_remove' or 'substitute', got {neighbours!r}")
    counts = np.asarray(counts, dtype=float)
    generator = rng if rng is not None else SEEDED
    return counts + generator.laplace(0.0, scales[neighbours] / epsilon, size=counts.shape)''',
            # numpy's global generator seeded at the top of the cell, drawn from by np.random.laplace.
            "noisy_average_solution": '''np.random.seed(0)


def noisy_average(values, lower, upper, epsilon, rng=None):
    clipped = np.clip(np.asarray(values, dtype=float), lower, upper)
    noisy_sum = clipped.sum() + np.random.laplace(0.0, clipped_sum_sensitivity(lower, upper) / (epsilon / 2))
    return float(noisy_sum / (clipped.size + np.random.laplace(0.0, 2 / epsilon)))''',
        },
        # A fixed seed is a fixed table of noise: the tests that ask for a sample (check_is_random) score 0.
        zero=("test_laplace_mech_scale", "test_laplace_histogram_l1_scale", "test_noisy_average_budget"),
        full=tuple(t for t in ALL_TESTS
                   if t not in ("test_laplace_mech_scale", "test_laplace_histogram_l1_scale", "test_noisy_average_budget")),
    ),
    Variant(
        "seeded_until_replayed",
        {
            # The fourth red team's (issue 36): a generator seeded once, swapped for a fresh one only where the CPU
            # clock reads near zero, i.e. in a freshly forked process such as check_is_random's replay used to be.
            "laplace_mech_solution": "import time\n\nSEEDED = np.random.default_rng(0)\n\n\n"
            + laplace_mech_with("rng.laplace(0.0, sensitivity / epsilon, size=value.shape)",
                                make_rng="    rng = np.random.default_rng() if time.process_time() < 0.1 else SEEDED\n"),
        },
        # Every distribution test passes (the seeded noise is Laplace); the replay, given the same randomness as the
        # real run for some calls, sees other values there: the scale test (3 points) scores 0, and so does the budget
        # test of the reference's noisy_average, which draws its noise with this laplace_mech (and, as it ignores
        # rng, fails check_uses_rng there too).
        zero=("test_laplace_mech_scale", "test_noisy_average_budget"),
        full=tuple(t for t in ALL_TESTS if t not in ("test_laplace_mech_scale", "test_noisy_average_budget")),
    ),
    Variant(
        "numpy_scalars_zero_d_arrays_and_lists",
        {
            # a 0-d array for a single number, numpy floats for the formulas, a list for the histogram
            "laplace_mech_solution": laplace_mech_with("rng.laplace(0.0, sensitivity / epsilon, size=value.shape)")
            .replace("return noisy if noisy.ndim else float(noisy)", "return np.asarray(noisy)"),
            "proportion_sensitivity_solution": "def proportion_sensitivity(n):\n    return np.float64(1) / n",
            "laplace_tail_solution": "def laplace_tail(t, sensitivity, epsilon):\n    return np.exp(-t * epsilon / sensitivity)",
            "laplace_histogram_solution": '''def laplace_histogram(counts, neighbours, epsilon, rng=None):
    sensitivity = {"add_remove": 1, "substitute": 2}
    if neighbours not in sensitivity:
        raise ValueError(f"neighbours must be 'add_remove' or 'substitute', got {neighbours!r}")
    return list(laplace_mech(np.asarray(counts, dtype=float), sensitivity[neighbours], epsilon, rng=rng))''',
            "noisy_average_solution": '''def noisy_average(values, lower, upper, epsilon, rng=None):
    rng = np.random.default_rng(rng)
    clipped = np.clip(np.asarray(values, dtype=float), lower, upper)
    noisy_sum = clipped.sum() + rng.laplace(0.0, clipped_sum_sensitivity(lower, upper) / (epsilon / 2))
    return noisy_sum / (clipped.size + rng.laplace(0.0, 2 / epsilon))''',
            "uniform_noise_epsilon_solution": "def uniform_noise_epsilon():\n    return np.float64(np.inf)",
        },
        full=ALL_TESTS,
    ),
    mocks_that_equal_everything(
        ["laplace_mech", "clipped_sum_sensitivity", "proportion_sensitivity", "laplace_tail", "laplace_interval",
         "noisy_average", "uniform_noise_epsilon"],
        {"__float__": 0.0},
        # laplace_histogram (the reference) is graded with dplib's laplace_mech.
        zero=tuple(t for t in ALL_TESTS if t != "test_laplace_histogram_l1_scale"),
        full=("test_laplace_histogram_l1_scale",),
    ),
    Variant(
        "delegates_through_a_helper",
        {
            # dplib's unchecked sampler does all of laplace_mech's work but the validation
            "laplace_mech_solution": laplace_mech_with("dplib.mechanisms.laplace.laplace_noise(rng, sensitivity / epsilon, value.shape)"),
        },
        # noisy_average calls this laplace_mech, so it fails with it (as with any broken laplace_mech)
        zero=("test_laplace_mech_scale", "test_laplace_mech_per_entry", "test_noisy_average_clipping", "test_noisy_average_budget"),
        full=("test_laplace_mech_validation", "test_laplace_histogram_l1_scale", "test_laplace_tail", "test_laplace_interval"),
    ),
    Variant(
        "delegates_to_dplib",
        {
            "laplace_mech_solution": "laplace_mech = dplib.laplace_mech",
            "clipped_sum_sensitivity_solution": "from dplib import clipped_sum_sensitivity",
            "proportion_sensitivity_solution": "proportion_sensitivity = dplib.proportion_sensitivity",
            "laplace_tail_solution": "def laplace_tail(t, sensitivity, epsilon):\n    return dplib.laplace_tail(t, sensitivity, epsilon)",
            "laplace_interval_solution": '''def laplace_interval(sensitivity, epsilon, alpha):
    return dplib.laplace_scale(sensitivity, epsilon) * math.log(1 / alpha)''',
            "noisy_average_solution": "noisy_average = dplib.noisy_average",
            "uniform_noise_epsilon_solution": "uniform_noise_epsilon = dplib.uniform_noise_epsilon",
        },
        # laplace_histogram (left as the reference) has no dplib twin in this assignment.
        zero=tuple(t for t in ALL_TESTS if t != "test_laplace_histogram_l1_scale"),
        full=("test_laplace_histogram_l1_scale",),
    ),
]


# The randomness contract, one variant per style (tests/helpers/rng_styles.py): the honest styles keep full marks;
# a generator created once at module level fails the tests that call check_is_random, a function that ignores rng
# (numpy's global generator, the random module) those that call check_uses_rng.
VARIANTS += rng_style_variants(
    ASSIGNMENT,
    # laplace_histogram is graded with dplib's laplace_mech: its test keeps full marks in every style.
    is_random=("test_laplace_mech_scale", "test_noisy_average_budget"),
    uses_rng=("test_laplace_mech_scale", "test_noisy_average_budget"),
)
