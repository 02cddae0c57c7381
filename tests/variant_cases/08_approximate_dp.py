"""08_approximate_dp: correct answers written differently keep full marks; classic mistakes and delegation lose them."""

from helpers.rng_styles import rng_style_variants
from helpers.variants import Variant, autograded_tests, mocking_source, mocks_that_equal_everything

ASSIGNMENT = "08_approximate_dp"
ALL_TESTS = autograded_tests(ASSIGNMENT)

RIGHT = {
    "gaussian_sigma_solution": '''def gaussian_sigma(l2_sensitivity, epsilon, delta):
    if epsilon != epsilon or epsilon <= 0:
        raise ValueError("epsilon must be > 0")
    if epsilon >= 1:
        raise ValueError(f"epsilon = {epsilon} >= 1: the classic bound does not hold; use the analytic Gaussian "
                         "mechanism (dplib.analytic_gaussian_sigma)")
    if not (0 < delta < 1):
        raise ValueError(f"bad delta {delta}")
    if not (l2_sensitivity >= 0 and np.isfinite(l2_sensitivity)):
        raise ValueError(f"bad l2_sensitivity {l2_sensitivity}")
    return float(np.sqrt(2 * np.log(1.25 / delta)) * l2_sensitivity / epsilon)''',
    # plain Python: one random.gauss per entry, nested lists for arrays
    "gaussian_mech_solution": '''import random

def gaussian_mech(value, l2_sensitivity, epsilon, delta, rng=None):
    sigma = gaussian_sigma(l2_sensitivity, epsilon, delta)
    def noisy(v):
        if isinstance(v, (list, tuple, np.ndarray)):
            return [noisy(x) for x in v]
        return float(v) + random.gauss(0.0, sigma)
    return noisy(value)''',
    "l2_sensitivity_of_histogram_solution": '''def l2_sensitivity_of_histogram(neighbours):
    changes = {"add_remove": [1], "substitute": [1, -1]}
    if neighbours not in changes:
        raise ValueError(f"unknown neighbours {neighbours!r}")
    return math.hypot(*changes[neighbours])''',
    "zcdp_solution": '''def zcdp_rho(l2_sensitivity, sigma):
    return 0.5 * (l2_sensitivity / sigma) ** 2


def zcdp_to_epsilon(rho, delta):
    return rho + 2 * math.sqrt(-rho * math.log(delta))''',
    "advanced_composition_epsilon_solution": '''def advanced_composition_epsilon(epsilon, k, delta_prime):
    return float(epsilon * np.sqrt(2 * k * -np.log(delta_prime)) + k * epsilon * np.expm1(epsilon))''',
    "advanced_composition_delta_solution": '''def advanced_composition_delta(delta, k, delta_prime):
    return math.fsum([delta] * k + [delta_prime])''',
    # a loop over rows with the random module, values compared as they are; a Categorical column becomes plain
    # strings, another column keeps the values (and types) of its domain
    "privatize_columns_solution": '''import random

def privatize_columns(df, columns, epsilon, rng=None, domains=None):
    result = df.copy()
    share = epsilon / len(columns)
    for column in columns:
        if hasattr(df[column], "cat"):
            domain = [str(c) for c in df[column].cat.categories]
            values = [str(v) for v in df[column]]
        elif domains and column in domains:
            domain = list(domains[column])
            values = list(df[column])
        else:
            raise ValueError(f"no public domain for {column}: pass it in domains")
        k = len(domain)
        keep = math.exp(share) / (math.exp(share) + k - 1)
        reports = []
        for value in values:
            if random.random() < keep:
                reports.append(value)
            else:
                reports.append(random.choice([d for d in domain if d != value]))
        result[column] = reports
    return result''',
    # trials in the outer loop, the baseline first in the dict but last in the table, statistics module
    "private_accuracy_solution": '''import statistics

def private_accuracy(epsilons, trials, rng=None):
    scores = {epsilon: [] for epsilon in epsilons}
    for _ in range(trials):
        for epsilon in epsilons:
            scores[epsilon].append(train_and_score(privatize_columns(train, list(PRIVATE_COLUMNS), epsilon), test))
    table = pd.DataFrame(
        {"accuracy_mean": [statistics.mean(s) for s in scores.values()],
         "accuracy_std": [statistics.pstdev(s) for s in scores.values()]},
        index=pd.Index([float(e) for e in epsilons], name="epsilon"),
    )
    table.loc[np.inf] = [train_and_score(train, test), 0.0]
    return table''',
}

REFERENCE_PRIVATIZE = '''def privatize_columns(df, columns, epsilon, rng=None, domains=None):
    rng = np.random.default_rng(rng)
    out = df.copy()
    for column in columns:
        if isinstance(df[column].dtype, pd.CategoricalDtype):
            domain = pd.Index(df[column].cat.categories)
        elif domains is not None and column in domains:
            domain = pd.Index(domains[column])
        else:
            raise ValueError(f"column {column!r}: give its public domain in domains")
        codes = domain.get_indexer(df[column])
        reports = np.asarray(k_rand_resp(codes, len(domain), epsilon / len(columns), rng=rng))
        out[column] = pd.Categorical.from_codes(reports, dtype=df[column].dtype) if isinstance(
            df[column].dtype, pd.CategoricalDtype) else list(domain[reports])
    return out'''

# The domain of a Categorical column is its categories, but a plain column's is read off the data (its sorted
# distinct values): `domains` is ignored.
DOMAIN_FROM_THE_DATA = '''def privatize_columns(df, columns, epsilon, rng=None, domains=None):
    rng = np.random.default_rng(rng)
    out = df.copy()
    for column in columns:
        values = df[column]
        if isinstance(values.dtype, pd.CategoricalDtype):
            domain, codes = values.cat.categories, values.cat.codes.to_numpy()
        else:
            domain = pd.Index(sorted(values.unique()))
            codes = domain.get_indexer(values)
        reports = np.asarray(k_rand_resp(codes, len(domain), epsilon / len(columns), rng=rng))
        if isinstance(values.dtype, pd.CategoricalDtype):
            out[column] = pd.Categorical.from_codes(reports, dtype=values.dtype)
        else:
            out[column] = np.asarray(domain)[reports]
    return out'''

TOTAL_DELTA = "test_advanced_composition_total_delta"


def private_accuracy_with(train_line: str, test_argument: str = "test", trials: str = "trials") -> str:
    return f'''def private_accuracy(epsilons, trials, rng=None):
    rows = []
    for epsilon in epsilons:
        scores = []
        for _ in range({trials}):
            {train_line}
            scores.append(train_and_score(private, {test_argument}))
        rows.append((epsilon, np.mean(scores), np.std(scores)))
    rows.append((np.inf, train_and_score(train, test), 0.0))
    return pd.DataFrame(rows, columns=["epsilon", "accuracy_mean", "accuracy_std"]).set_index("epsilon")'''


# The tests that check the randomness contract on the functions a variant below draws with the random module or
# numpy's global generator, which ignore rng: those variants lose them (check_uses_rng) and keep everything else.
IGNORES_RNG_LOSES = (
    "test_gaussian_mech_noise_scale",
    "test_gaussian_mech_per_entry",
    "test_privatize_columns_budget_split",
    "test_privatize_columns_full_domain",
)

VARIANTS = [
    # It ignores rng (the random module, numpy's global generator): the contract's tests (check_uses_rng) score 0.
    Variant("loops_random_module_strings_trials_outside", RIGHT, zero=IGNORES_RNG_LOSES,
            full=tuple(t for t in ALL_TESTS if t not in IGNORES_RNG_LOSES)),
    Variant(
        "log_one_over_delta_l1_histogram_factor_two_whole_epsilon_private_test",
        {
            "gaussian_sigma_solution": '''def gaussian_sigma(l2_sensitivity, epsilon, delta):
    if not 0 < epsilon < 1:
        raise ValueError(f"epsilon must be in (0, 1), got {epsilon}; for more use dplib.analytic_gaussian_sigma")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if not (math.isfinite(l2_sensitivity) and l2_sensitivity >= 0):
        raise ValueError(f"l2_sensitivity must be >= 0, got {l2_sensitivity}")
    return l2_sensitivity * math.sqrt(2 * math.log(1 / delta)) / epsilon''',
            "l2_sensitivity_of_histogram_solution": '''def l2_sensitivity_of_histogram(neighbours):
    if neighbours == "add_remove":
        return 1.0
    if neighbours == "substitute":
        return 2.0  # the L1 sensitivity
    raise ValueError(f"neighbours must be add_remove or substitute, got {neighbours!r}")''',
            "zcdp_solution": '''def zcdp_rho(l2_sensitivity, sigma):
    return l2_sensitivity**2 / sigma**2


def zcdp_to_epsilon(rho, delta):
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))''',
            "privatize_columns_solution": REFERENCE_PRIVATIZE.replace("epsilon / len(columns)", "epsilon"),
            "private_accuracy_solution": private_accuracy_with(
                "private = privatize_columns(train, PRIVATE_COLUMNS, epsilon)",
                test_argument="privatize_columns(test, PRIVATE_COLUMNS, epsilon)",
            ),
        },
        zero=(
            "test_gaussian_sigma_classic_bound",
            "test_l2_sensitivity_of_histogram",
            "test_zcdp_rho_factor_two",
            "test_privatize_columns_budget_split",
            "test_private_accuracy_design",
        ),
        full=("test_gaussian_sigma_validation", "test_zcdp_to_epsilon_conversion", "test_privatize_columns_full_domain",
              "test_advanced_composition_both_terms", "test_gaussian_mech_per_entry"),
    ),
    Variant(
        "no_square_root_sign_of_ln_delta_no_second_term_sample_categories_one_trial",
        {
            "gaussian_sigma_solution": '''def gaussian_sigma(l2_sensitivity, epsilon, delta):
    if not 0 < epsilon < 1:
        raise ValueError(f"epsilon must be in (0, 1), got {epsilon}; for more use dplib.analytic_gaussian_sigma")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if not (math.isfinite(l2_sensitivity) and l2_sensitivity >= 0):
        raise ValueError(f"l2_sensitivity must be >= 0, got {l2_sensitivity}")
    return l2_sensitivity * 2 * math.log(1.25 / delta) / epsilon''',
            "zcdp_solution": '''def zcdp_rho(l2_sensitivity, sigma):
    return l2_sensitivity**2 / (2 * sigma**2)


def zcdp_to_epsilon(rho, delta):
    return rho + 2 * np.sqrt(rho * np.log(delta))''',
            "advanced_composition_epsilon_solution": '''def advanced_composition_epsilon(epsilon, k, delta_prime):
    return math.sqrt(2 * k * math.log(1 / delta_prime)) * epsilon''',
            "privatize_columns_solution": '''def privatize_columns(df, columns, epsilon, rng=None, domains=None):
    rng = np.random.default_rng(rng)
    out = df.copy()
    for column in columns:
        domain = sorted(df[column].astype(str).unique())  # the categories seen in this sample
        codes = pd.Index(domain).get_indexer(df[column].astype(str))
        reports = np.asarray(k_rand_resp(codes, len(domain), epsilon / len(columns), rng=rng))
        out[column] = np.asarray(domain)[reports]
    return out''',
            "private_accuracy_solution": private_accuracy_with(
                "private = privatize_columns(train, PRIVATE_COLUMNS, epsilon)", trials="1"),
        },
        zero=(
            "test_gaussian_sigma_classic_bound",
            "test_zcdp_to_epsilon_conversion",
            "test_advanced_composition_both_terms",
            "test_privatize_columns_full_domain",
            "test_private_accuracy_design",
        ),
        full=("test_gaussian_sigma_validation", "test_gaussian_mech_per_entry", "test_l2_sensitivity_of_histogram",
              "test_zcdp_rho_factor_two", "test_privatize_columns_budget_split"),
    ),
    Variant(
        "epsilon_squared_no_analytic_pointer_shared_laplace_noise_one_privatization_train_on_test",
        {
            "gaussian_sigma_solution": '''def gaussian_sigma(l2_sensitivity, epsilon, delta):
    if not 0 < epsilon < 1:
        raise ValueError(f"epsilon must be strictly between 0 and 1, got {epsilon}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if not (math.isfinite(l2_sensitivity) and l2_sensitivity >= 0):
        raise ValueError(f"l2_sensitivity must be >= 0, got {l2_sensitivity}")
    return l2_sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon**2''',
            "gaussian_mech_solution": '''def gaussian_mech(value, l2_sensitivity, epsilon, delta, rng=None):
    rng = np.random.default_rng(rng)
    return np.asarray(value, dtype=float) + rng.laplace(0, gaussian_sigma(l2_sensitivity, epsilon, delta))''',
            "private_accuracy_solution": private_accuracy_with(
                "private = privatize_columns(test, PRIVATE_COLUMNS, epsilon)"),
        },
        zero=(
            "test_gaussian_sigma_classic_bound",
            "test_gaussian_sigma_validation",
            "test_gaussian_mech_noise_scale",
            "test_gaussian_mech_per_entry",
            "test_private_accuracy_design",
        ),
        full=("test_l2_sensitivity_of_histogram", "test_zcdp_rho_factor_two", "test_zcdp_to_epsilon_conversion",
              "test_advanced_composition_both_terms", "test_privatize_columns_budget_split",
              "test_privatize_columns_full_domain"),
    ),
    Variant(
        "same_privatization_every_trial",
        {
            "private_accuracy_solution": '''def private_accuracy(epsilons, trials, rng=None):
    rows = []
    for epsilon in epsilons:
        private = privatize_columns(train, PRIVATE_COLUMNS, epsilon)  # drawn once, scored `trials` times
        scores = [train_and_score(private, test) for _ in range(trials)]
        rows.append((epsilon, np.mean(scores), np.std(scores)))
    rows.append((np.inf, train_and_score(train, test), 0.0))
    return pd.DataFrame(rows, columns=["epsilon", "accuracy_mean", "accuracy_std"]).set_index("epsilon")''',
        },
        zero=("test_private_accuracy_design",),
        full=tuple(t for t in ALL_TESTS if t != "test_private_accuracy_design"),
    ),
    Variant(
        "numpy_scalars_and_zero_d_arrays",
        {
            "gaussian_sigma_solution": RIGHT["gaussian_sigma_solution"].replace("return float(", "return np.float64("),
            "gaussian_mech_solution": '''def gaussian_mech(value, l2_sensitivity, epsilon, delta, rng=None):
    value = np.asarray(value, dtype=float)
    noise = np.random.default_rng(rng).normal(0.0, gaussian_sigma(l2_sensitivity, epsilon, delta), size=value.shape)
    return np.asarray(value + noise)''',
            "l2_sensitivity_of_histogram_solution": '''def l2_sensitivity_of_histogram(neighbours):
    if neighbours not in ("add_remove", "substitute"):
        raise ValueError(f"neighbours must be 'add_remove' or 'substitute', got {neighbours!r}")
    return np.sqrt(1.0 if neighbours == "add_remove" else 2.0)''',
            "advanced_composition_epsilon_solution": RIGHT["advanced_composition_epsilon_solution"].replace("return float(", "return ("),
            "advanced_composition_delta_solution": "def advanced_composition_delta(delta, k, delta_prime):\n"
                                                   "    return np.float64(k) * delta + np.float64(delta_prime)",
        },
        full=ALL_TESTS,
    ),
    mocks_that_equal_everything(
        ["gaussian_sigma", "gaussian_mech", "l2_sensitivity_of_histogram", "advanced_composition_epsilon",
         "advanced_composition_delta", "privatize_columns", "private_accuracy"],
        {"__lt__": True},
        also={"zcdp_solution": mocking_source(["zcdp_rho", "zcdp_to_epsilon"])},
        zero=ALL_TESTS,
    ),
    Variant(
        "deterministic_stratified_noise_none_for_a_scalar",
        {
            # Normal quantiles at evenly spaced levels in a fixed shuffled order: the right distribution and
            # independent-looking entries, but the same "noise" on every call, and none for a single number.
            "gaussian_mech_solution": '''def gaussian_mech(value, l2_sensitivity, epsilon, delta, rng=None):
    sigma = gaussian_sigma(l2_sensitivity, epsilon, delta)
    value = np.asarray(value, dtype=float)
    if value.ndim == 0:
        return float(value)
    levels = (np.arange(value.size) + 0.5) / value.size
    noise = np.random.default_rng(0).permutation(stats.norm(scale=sigma).ppf(levels))
    return value + noise.reshape(value.shape)''',
        },
        zero=("test_gaussian_mech_noise_scale", "test_gaussian_mech_per_entry"),
        full=("test_gaussian_sigma_classic_bound", "test_l2_sensitivity_of_histogram", "test_privatize_columns_budget_split"),
    ),
    Variant(
        "delegates_to_dplib",
        {
            "gaussian_sigma_solution": "gaussian_sigma = dplib.gaussian_sigma",
            "gaussian_mech_solution": (
                "def gaussian_mech(value, l2_sensitivity, epsilon, delta, rng=None):\n"
                "    return dplib.gaussian_mech(value, l2_sensitivity, epsilon, delta, rng=rng)"
            ),
            "l2_sensitivity_of_histogram_solution": "from dplib import l2_sensitivity_of_histogram",
            "zcdp_solution": "from dplib import zcdp_rho, zcdp_to_epsilon",
            "advanced_composition_epsilon_solution": "advanced_composition_epsilon = dplib.advanced_composition_epsilon",
            "privatize_columns_solution": "privatize_columns = dplib.privatize_columns",
            "private_accuracy_solution": (
                "def private_accuracy(epsilons, trials, rng=None):\n"
                "    return dplib.private_accuracy(epsilons, trials, rng=rng)"
            ),
        },
        # dplib has no function for advanced composition's total delta: that cell keeps the reference's answer
        zero=tuple(t for t in ALL_TESTS if t != TOTAL_DELTA),
        full=(TOTAL_DELTA,),
    ),
    Variant(
        "plain_column_domain_from_the_data_total_delta_without_delta_prime",
        {
            "privatize_columns_solution": DOMAIN_FROM_THE_DATA,
            "advanced_composition_delta_solution": "def advanced_composition_delta(delta, k, delta_prime):\n"
                                                   "    return k * delta",
        },
        zero=("test_privatize_columns_full_domain", TOTAL_DELTA),
        full=("test_privatize_columns_budget_split", "test_private_accuracy_design", "test_advanced_composition_both_terms"),
    ),
    Variant(
        "total_delta_with_delta_once_instead_of_k_delta",
        {"advanced_composition_delta_solution": "def advanced_composition_delta(delta, k, delta_prime):\n"
                                                "    return delta + delta_prime"},
        zero=(TOTAL_DELTA,),
        full=("test_advanced_composition_both_terms", "test_zcdp_to_epsilon_conversion"),
    ),
]


# The randomness contract, one variant per style (tests/helpers/rng_styles.py): the honest styles keep full marks;
# a generator created once at module level fails the tests that call check_is_random, a function that ignores rng
# (numpy's global generator, the random module) those that call check_uses_rng.
VARIANTS += rng_style_variants(
    ASSIGNMENT,
    is_random=(
        "test_gaussian_mech_noise_scale",
        "test_gaussian_mech_per_entry",
        "test_privatize_columns_budget_split",
        "test_privatize_columns_full_domain",
    ),
    uses_rng=(
        "test_gaussian_mech_noise_scale",
        "test_gaussian_mech_per_entry",
        "test_privatize_columns_budget_split",
        "test_privatize_columns_full_domain",
    ),
)
