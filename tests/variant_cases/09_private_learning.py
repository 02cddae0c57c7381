"""09_private_learning: correct answers written differently keep full marks; classic mistakes and delegation lose them."""

from helpers.rng_styles import rng_style_variants
from helpers.variants import (
    Variant,
    autograded_tests,
    mocking_source,
    mocks_that_equal_everything,
    requires_finite,
)

ASSIGNMENT = "09_private_learning"
ALL_TESTS = autograded_tests(ASSIGNMENT)

VALIDATION = requires_finite("clip_norm", "> 0") + requires_finite("noise_multiplier", ">= 0")


def noisy_gradient_with(body: str) -> str:
    """A noisy_gradient that validates as asked, then runs ``body`` (which has per-example clipped gradients in G)."""
    return f'''def noisy_gradient(theta, X, y, clip_norm, noise_multiplier, rng=None):
{VALIDATION}    rng = np.random.default_rng(rng)
    G = clip_gradients(per_example_gradients(theta, X, y), clip_norm)
    n, d = G.shape
{body}'''


def wrong_noise(name: str, body: str) -> Variant:
    """A noisy_gradient that validates and clips as asked, then adds the wrong noise in ``body``: the test of the
    noise scores 0, the tests that use noisy_gradient without measuring its noise keep full marks."""
    return Variant(
        name,
        {"noisy_gradient_solution": noisy_gradient_with(body)},
        zero=("test_noisy_gradient_noise_once_on_the_sum",),
        full=("test_noisy_gradient_clipped_mean", "test_noisy_gradient_validation", "test_noisy_gradient_descent_steps",
              "test_noisy_gradient_descent_fresh_noise", "test_central_accuracy_design"),
    )


RIGHT = {
    # the sigmoid written out, with np.where keeping exp from overflowing; einsum-free broadcasting
    "per_example_gradients_solution": '''def per_example_gradients(theta, X, y):
    z = np.asarray(X, dtype=float).dot(np.asarray(theta, dtype=float))
    probability = np.where(z >= 0, 1 / (1 + np.exp(-np.abs(z))), np.exp(-np.abs(z)) / (1 + np.exp(-np.abs(z))))
    return np.multiply((probability - np.asarray(y))[:, np.newaxis], X)''',
    # rows longer than C divided by their norm over C, the others left alone
    "clip_gradients_solution": '''def clip_gradients(gradients, clip_norm):
    gradients = np.array(gradients, dtype=float)
    norms = np.sqrt((gradients ** 2).sum(axis=1))
    too_long = norms > clip_norm
    gradients[too_long] = gradients[too_long] / (norms[too_long] / clip_norm)[:, None]
    return gradients''',
    "gradient_sum_sensitivity_solution": '''def gradient_sum_sensitivity(clip_norm, neighbours):
    factors = {"add_remove": 1, "substitute": 2}
    if neighbours not in factors:
        raise ValueError(f"unknown neighbours {neighbours!r}")
    return factors[neighbours] * clip_norm''',
    # average first, then noise of standard deviation sigma C / n on the average: the same distribution
    "noisy_gradient_solution": noisy_gradient_with('''    return G.mean(axis=0) + rng.normal(0.0, noise_multiplier * clip_norm / n, size=d)'''),
    # a while loop, and no rng handed on: every step's noisy_gradient draws from a fresh generator
    "noisy_gradient_descent_solution": '''def noisy_gradient_descent(X, y, clip_norm, noise_multiplier, steps, learning_rate, rng=None):
    theta = np.zeros(len(X[0]))
    t = 0
    while t < steps:
        theta -= learning_rate * noisy_gradient(theta, X, y, clip_norm, noise_multiplier)
        t += 1
    return theta''',
    # the formulas written out
    "dp_gd_accounting_solution": '''def dp_gd_rho(noise_multiplier, steps, neighbours="add_remove"):
    sensitivity_in_clip_norms = {"add_remove": 1.0, "substitute": 2.0}[neighbours]
    return steps * sensitivity_in_clip_norms ** 2 / (2 * noise_multiplier ** 2)


def dp_gd_epsilon(noise_multiplier, steps, delta, neighbours="add_remove"):
    rho = dp_gd_rho(noise_multiplier, steps, neighbours)
    return rho + 2 * np.sqrt(rho * np.log(1 / delta))''',
    # solved in closed form: sqrt(rho) is the positive root of r^2 + 2 r sqrt(L) - epsilon = 0
    "noise_multiplier_for_solution": '''def noise_multiplier_for(epsilon, delta, steps, neighbours="add_remove"):
    L = math.log(1 / delta)
    rho = (math.sqrt(L + epsilon) - math.sqrt(L)) ** 2
    return math.sqrt(dp_gd_rho(1.0, steps, neighbours) / rho)''',
    # trials in the outer loop, accuracy computed inline, statistics module, a dict of lists
    "central_accuracy_solution": '''import statistics

def central_accuracy(epsilons, trials, rng=None):
    generator = np.random.default_rng(rng)
    scores = {epsilon: [] for epsilon in epsilons}
    for _ in range(trials):
        for epsilon in epsilons:
            sigma = noise_multiplier_for(epsilon, DELTA, STEPS, neighbours="substitute")
            theta = noisy_gradient_descent(X_train, y_train, CLIP_NORM, sigma, STEPS, LEARNING_RATE, rng=generator)
            scores[epsilon].append(float(np.mean((X_test @ theta > 0) == (y_test == 1))))
    baseline = nonprivate_logistic_regression(X_train, y_train)
    table = pd.DataFrame({"accuracy_mean": [statistics.mean(s) for s in scores.values()],
                          "accuracy_std": [statistics.pstdev(s) for s in scores.values()]},
                         index=pd.Index([float(e) for e in epsilons], name="epsilon"))
    table.loc[np.inf] = [float(np.mean((X_test @ baseline > 0) == (y_test == 1))), 0.0]
    return table''',
}

LOOPS = {
    # one person at a time, with the math module (about 20 ms a step on 10,000 people)
    "per_example_gradients_solution": '''def per_example_gradients(theta, X, y):
    rows = []
    for x_i, y_i in zip(np.asarray(X, dtype=float), np.asarray(y)):
        z = float(x_i @ theta)
        probability = 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))
        rows.append((probability - y_i) * x_i)
    return np.array(rows)''',
    # np.where on the rows' scale factors
    "clip_gradients_solution": '''def clip_gradients(gradients, clip_norm):
    gradients = np.asarray(gradients, dtype=float)
    norms = np.linalg.norm(gradients, axis=1)
    factors = np.where(norms > clip_norm, clip_norm / np.where(norms > 0, norms, 1.0), 1.0)
    return gradients * factors[:, None]''',
    # the noise drawn with the random module, one coordinate at a time, on the sum; validation written plainly
    "noisy_gradient_solution": '''import random

def noisy_gradient(theta, X, y, clip_norm, noise_multiplier, rng=None):
    if clip_norm != clip_norm or clip_norm <= 0 or clip_norm == float("inf"):
        raise ValueError(f"bad clip_norm: {clip_norm}")
    if noise_multiplier != noise_multiplier or noise_multiplier < 0 or noise_multiplier == float("inf"):
        raise ValueError(f"bad noise_multiplier: {noise_multiplier}")
    total = clip_gradients(per_example_gradients(theta, X, y), clip_norm).sum(axis=0)
    noise = [random.gauss(0.0, noise_multiplier * clip_norm) for _ in range(len(total))]
    return (total + np.array(noise)) / len(X)''',
    # a recursive noisy_gradient_descent that hands on one generator
    "noisy_gradient_descent_solution": '''def noisy_gradient_descent(X, y, clip_norm, noise_multiplier, steps, learning_rate, rng=None):
    rng = np.random.default_rng(rng)
    if steps == 0:
        return np.zeros(np.shape(X)[1])
    theta = noisy_gradient_descent(X, y, clip_norm, noise_multiplier, steps - 1, learning_rate, rng=rng)
    return theta - learning_rate * noisy_gradient(theta, X, y, clip_norm, noise_multiplier, rng=rng)''',
    # bisection written by hand, to about 1e-12 relative
    "noise_multiplier_for_solution": '''def noise_multiplier_for(epsilon, delta, steps, neighbours="add_remove"):
    low, high = 1e-6, 1e8
    for _ in range(200):
        middle = math.sqrt(low * high)
        if dp_gd_epsilon(middle, steps, delta, neighbours) > epsilon:
            low = middle
        else:
            high = middle
    return math.sqrt(low * high)''',
}


# The tests that check the randomness contract on the functions a variant below draws with the random module or
# numpy's global generator, which ignore rng: those variants lose them (check_uses_rng) and keep everything else.
IGNORES_RNG_LOSES = ("test_noisy_gradient_noise_once_on_the_sum",)

VARIANTS = [
    # Its noisy_gradient_descent hands no rng on to noisy_gradient (each step draws from a fresh generator): it ignores
    # rng, and the contract's test of noisy_gradient_descent (check_uses_rng) scores 0.
    Variant("vectorized_differently_closed_form_noise_on_the_mean", RIGHT, zero=("test_noisy_gradient_descent_fresh_noise",),
            full=tuple(t for t in ALL_TESTS if t != "test_noisy_gradient_descent_fresh_noise")),
    # It ignores rng (the random module, numpy's global generator): the contract's tests (check_uses_rng) score 0.
    Variant("loop_over_people_random_module_recursion_bisection", LOOPS, zero=IGNORES_RNG_LOSES,
            full=tuple(t for t in ALL_TESTS if t not in IGNORES_RNG_LOSES)),
    Variant(
        "batch_clipping_sign_flipped",
        {
            "per_example_gradients_solution": '''def per_example_gradients(theta, X, y):
    X = np.asarray(X, dtype=float)
    return (np.asarray(y) - special.expit(X @ theta))[:, None] * X  # (y - sigmoid) x''',
            # the whole matrix clipped by its norm, and the mean clipped in the step
            "clip_gradients_solution": '''def clip_gradients(gradients, clip_norm):
    gradients = np.asarray(gradients, dtype=float)
    return gradients * min(1.0, clip_norm / np.linalg.norm(gradients))''',
            "noisy_gradient_solution": f'''def noisy_gradient(theta, X, y, clip_norm, noise_multiplier, rng=None):
{VALIDATION}    rng = np.random.default_rng(rng)
    mean = per_example_gradients(theta, X, y).mean(axis=0)
    mean = mean * min(1.0, clip_norm / max(np.linalg.norm(mean), 1e-300))
    return mean + rng.normal(0.0, noise_multiplier * clip_norm / len(X), size=mean.shape)''',
        },
        zero=("test_per_example_gradients_logistic", "test_clip_gradients_per_row", "test_noisy_gradient_clipped_mean"),
        full=("test_gradient_sum_sensitivity_neighbours", "test_noisy_gradient_noise_once_on_the_sum",
              "test_noisy_gradient_validation", "test_noisy_gradient_descent_steps", "test_noisy_gradient_descent_fresh_noise",
              "test_dp_gd_rho_every_step", "test_noise_multiplier_for_solves", "test_central_accuracy_design"),
    ),
    Variant(
        "coordinates_clipped_to_c",
        {
            "clip_gradients_solution": '''def clip_gradients(gradients, clip_norm):
    return np.clip(gradients, -clip_norm, clip_norm)''',
        },
        zero=("test_clip_gradients_per_row",),
        full=tuple(t for t in ALL_TESTS if t != "test_clip_gradients_per_row"),
    ),
    wrong_noise("noise_scaled_to_one_not_c", '''    return (G.sum(axis=0) + rng.normal(0.0, noise_multiplier, size=d)) / n'''),
    wrong_noise("noise_added_to_every_example",
                '''    return (G + rng.normal(0.0, noise_multiplier * clip_norm, size=G.shape)).sum(axis=0) / n'''),
    wrong_noise("averaged_before_the_noise_of_the_sum",
                '''    return G.mean(axis=0) + rng.normal(0.0, noise_multiplier * clip_norm, size=d)'''),
    Variant(
        "no_validation_one_noise_value_for_every_coordinate",
        {"noisy_gradient_solution": '''def noisy_gradient(theta, X, y, clip_norm, noise_multiplier, rng=None):
    rng = np.random.default_rng(rng)
    G = clip_gradients(per_example_gradients(theta, X, y), clip_norm)
    return (G.sum(axis=0) + rng.normal(0.0, noise_multiplier * clip_norm)) / len(X)'''},
        zero=("test_noisy_gradient_noise_once_on_the_sum", "test_noisy_gradient_validation"),
        full=("test_noisy_gradient_clipped_mean", "test_noisy_gradient_descent_steps",
              "test_noisy_gradient_descent_fresh_noise", "test_central_accuracy_design"),
    ),
    Variant(
        "the_same_noise_in_every_step",
        {
            # the noise drawn once, before the loop, and added to every step's clipped sum
            "noisy_gradient_descent_solution": '''def noisy_gradient_descent(X, y, clip_norm, noise_multiplier, steps, learning_rate, rng=None):
    rng = np.random.default_rng(rng)
    n, d = np.shape(X)
    noise = rng.normal(0.0, noise_multiplier * clip_norm, size=d)
    theta = np.zeros(d)
    for _ in range(steps):
        clipped_sum = clip_gradients(per_example_gradients(theta, X, y), clip_norm).sum(axis=0)
        theta = theta - learning_rate * (clipped_sum + noise) / n
    return theta''',
        },
        zero=("test_noisy_gradient_descent_fresh_noise",),
        full=tuple(t for t in ALL_TESTS if t != "test_noisy_gradient_descent_fresh_noise"),
    ),
    Variant(
        "the_same_seed_in_every_step",
        {
            "noisy_gradient_descent_solution": '''def noisy_gradient_descent(X, y, clip_norm, noise_multiplier, steps, learning_rate, rng=None):
    theta = np.zeros(np.shape(X)[1])
    for _ in range(steps):
        theta = theta - learning_rate * noisy_gradient(theta, X, y, clip_norm, noise_multiplier, rng=0)
    return theta''',
        },
        zero=("test_noisy_gradient_descent_fresh_noise",),
        full=("test_noisy_gradient_descent_steps", "test_noisy_gradient_noise_once_on_the_sum", "test_dp_gd_rho_every_step"),
    ),
    Variant(
        "steps_charged_as_one_conversion_per_step",
        {
            "dp_gd_accounting_solution": '''def dp_gd_rho(noise_multiplier, steps, neighbours="add_remove"):
    return zcdp_rho(gradient_sum_sensitivity(1.0, neighbours), noise_multiplier)  # one step


def dp_gd_epsilon(noise_multiplier, steps, delta, neighbours="add_remove"):
    # epsilon of one step, times the steps (basic composition of the converted steps)
    return steps * zcdp_to_epsilon(dp_gd_rho(noise_multiplier, 1, neighbours), delta)''',
        },
        zero=("test_dp_gd_rho_every_step", "test_dp_gd_epsilon_conversion"),
        full=("test_noise_multiplier_for_solves", "test_gradient_sum_sensitivity_neighbours", "test_central_accuracy_design",
              "test_noisy_gradient_noise_once_on_the_sum"),
    ),
    Variant(
        "substitution_sensitivity_c",
        {
            "gradient_sum_sensitivity_solution": '''def gradient_sum_sensitivity(clip_norm, neighbours):
    if neighbours not in ("add_remove", "substitute"):
        raise ValueError(f"neighbours must be 'add_remove' or 'substitute', got {neighbours!r}")
    return clip_norm  # one clipped gradient changes either way''',
            "dp_gd_accounting_solution": '''def dp_gd_rho(noise_multiplier, steps, neighbours="add_remove"):
    return steps / (2 * noise_multiplier ** 2)  # sensitivity C for both notions


def dp_gd_epsilon(noise_multiplier, steps, delta, neighbours="add_remove"):
    return zcdp_to_epsilon(dp_gd_rho(noise_multiplier, steps, neighbours), delta)''',
        },
        zero=("test_gradient_sum_sensitivity_neighbours", "test_dp_gd_rho_every_step"),
        full=("test_dp_gd_epsilon_conversion", "test_noise_multiplier_for_solves", "test_central_accuracy_design",
              "test_noisy_gradient_descent_fresh_noise"),
    ),
    Variant(
        "sigma_from_a_grid",
        {
            "noise_multiplier_for_solution": '''def noise_multiplier_for(epsilon, delta, steps, neighbours="add_remove"):
    grid = np.geomspace(0.1, 1_000.0, 400)
    gaps = [abs(dp_gd_epsilon(sigma, steps, delta, neighbours) - epsilon) for sigma in grid]
    return float(grid[int(np.argmin(gaps))])''',
        },
        zero=("test_noise_multiplier_for_solves",),
        full=tuple(t for t in ALL_TESTS if t != "test_noise_multiplier_for_solves"),
    ),
    Variant(
        "scored_on_the_training_split",
        {
            "central_accuracy_solution": '''def central_accuracy(epsilons, trials, rng=None):
    rng = np.random.default_rng(rng)
    rows = []
    for epsilon in epsilons:
        sigma = noise_multiplier_for(epsilon, DELTA, STEPS, "substitute")
        scores = [logistic_accuracy(noisy_gradient_descent(X_train, y_train, CLIP_NORM, sigma, STEPS, LEARNING_RATE,
                                                           rng=rng), X_train, y_train) for _ in range(trials)]
        rows.append((epsilon, np.mean(scores), np.std(scores)))
    rows.append((np.inf, logistic_accuracy(nonprivate_logistic_regression(X_train, y_train), X_train, y_train), 0.0))
    return pd.DataFrame(rows, columns=["epsilon", "accuracy_mean", "accuracy_std"]).set_index("epsilon")''',
        },
        zero=("test_central_accuracy_design",),
        full=tuple(t for t in ALL_TESTS if t != "test_central_accuracy_design"),
    ),
    Variant(
        "the_same_seed_every_trial_add_remove_sigma",
        {
            "central_accuracy_solution": '''def central_accuracy(epsilons, trials, rng=None):
    rows = []
    for epsilon in epsilons:
        sigma = noise_multiplier_for(epsilon, DELTA, STEPS)  # add/remove: not the local model's neighbours
        scores = [logistic_accuracy(noisy_gradient_descent(X_train, y_train, CLIP_NORM, sigma, STEPS, LEARNING_RATE,
                                                           rng=2024), X_test, y_test) for _ in range(trials)]
        rows.append((epsilon, np.mean(scores), np.std(scores)))
    rows.append((np.inf, logistic_accuracy(nonprivate_logistic_regression(X_train, y_train), X_test, y_test), 0.0))
    return pd.DataFrame(rows, columns=["epsilon", "accuracy_mean", "accuracy_std"]).set_index("epsilon")''',
        },
        zero=("test_central_accuracy_design",),
        full=("test_noise_multiplier_for_solves", "test_noisy_gradient_descent_fresh_noise"),
    ),
    mocks_that_equal_everything(
        ["per_example_gradients", "clip_gradients", "gradient_sum_sensitivity", "noisy_gradient",
         "noisy_gradient_descent", "noise_multiplier_for", "central_accuracy"],
        {"__lt__": True},
        also={"dp_gd_accounting_solution": mocking_source(["dp_gd_rho", "dp_gd_epsilon"])},
        zero=ALL_TESTS,
    ),
    Variant(
        "delegates_to_dplib",
        {
            "per_example_gradients_solution": "per_example_gradients = dplib.per_example_gradients",
            "clip_gradients_solution": "from dplib import clip_gradients",
            "gradient_sum_sensitivity_solution": "gradient_sum_sensitivity = dplib.gradient_sum_sensitivity",
            "noisy_gradient_solution": (
                "def noisy_gradient(theta, X, y, clip_norm, noise_multiplier, rng=None):\n"
                "    return dplib.noisy_gradient(theta, X, y, clip_norm, noise_multiplier, rng=rng)"
            ),
            "noisy_gradient_descent_solution": (
                "def noisy_gradient_descent(X, y, clip_norm, noise_multiplier, steps, learning_rate, rng=None):\n"
                "    return dplib.noisy_gradient_descent_path(X, y, clip_norm, noise_multiplier, steps, learning_rate,\n"
                "                                             rng=rng)[-1]"
            ),
            "dp_gd_accounting_solution": "from dplib import dp_gd_epsilon, dp_gd_rho",
            "noise_multiplier_for_solution": "noise_multiplier_for = dplib.noise_multiplier_for",
            "central_accuracy_solution": (
                "def central_accuracy(epsilons, trials, rng=None):\n"
                "    return dplib.central_accuracy(epsilons, trials, rng=rng, data=(X_train, y_train, X_test, y_test))"
            ),
        },
        zero=ALL_TESTS,
    ),
]


# The randomness contract, one variant per style (tests/helpers/rng_styles.py): the honest styles keep full marks;
# a generator created once at module level fails the tests that call check_is_random, a function that ignores rng
# (numpy's global generator, the random module) those that call check_uses_rng.
VARIANTS += rng_style_variants(
    ASSIGNMENT,
    is_random=("test_noisy_gradient_noise_once_on_the_sum", "test_noisy_gradient_descent_fresh_noise"),
    # central_accuracy's test hands it a stand-in that draws from the rng it is given: any generator passes.
    uses_rng=("test_noisy_gradient_noise_once_on_the_sum", "test_noisy_gradient_descent_fresh_noise"),
)
