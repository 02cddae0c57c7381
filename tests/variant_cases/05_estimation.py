"""05_estimation: correct answers written differently keep full marks; classic mistakes and delegation lose them."""

from helpers.rng_styles import rng_style_variants
from helpers.variants import Variant, autograded_tests, mocks_that_equal_everything

ASSIGNMENT = "05_estimation"
ALL_TESTS = autograded_tests(ASSIGNMENT)

# The tests that check the randomness contract on the functions a variant below draws with the random module or
# numpy's global generator, which ignore rng: those variants lose them (check_uses_rng) and keep everything else.
IGNORES_RNG_LOSES = ("test_error_vs_epsilon_many_trials",)

VARIANTS = [
    Variant(
        "loops_random_module_numpy_global_iid_variance_bisection",
        {
            "estimate_count_solution": '''def estimate_count(responses, p, q):
    total, count = 0.0, 0
    for response in responses:
        total += response
        count += 1
    return count * (total / count + q - 1) / (p + q - 1)''',
            # the i.i.d.-sampling variance n pi (1 - pi) / (p + q - 1)^2 is accepted too
            "estimate_count_std_solution": '''def estimate_count_std(n, fraction, p, q):
    pi = fraction * p + (1 - fraction) * (1 - q)
    return math.sqrt(n * pi * (1 - pi)) / abs(p + q - 1)''',
            "rr_confidence_interval_solution": '''from statistics import NormalDist

def rr_confidence_interval(responses, p, q, alpha=0.05):
    n = len(responses)
    share = sum(float(r) for r in responses) / n
    center = n * (share + q - 1) / (p + q - 1)
    half = NormalDist().inv_cdf(1 - alpha / 2) * math.sqrt(n * share * (1 - share)) / abs(p + q - 1)
    return (center - half, center + half)''',
            "estimate_krr_counts_solution": '''def estimate_krr_counts(reports, k, epsilon):
    p, q = krr_probabilities(k, epsilon)
    counts = [0] * k
    for report in reports:
        counts[int(report)] += 1
    n = sum(counts)
    return [(c - q * n) / (p - q) for c in counts]''',
            "project_to_simplex_solution": '''def project_to_simplex(counts, total):
    values = [float(c) for c in counts]
    low, high = min(values) - total, max(values)
    for _ in range(200):  # bisection on the threshold
        theta = (low + high) / 2
        if sum(max(v - theta, 0.0) for v in values) > total:
            low = theta
        else:
            high = theta
    return [max(v - (low + high) / 2, 0.0) for v in values]''',
            "estimate_crosstab_solution": '''def estimate_crosstab(reports_a, reports_b, pq_a, pq_b):
    def channel(p, q):
        return [[q, 1 - q], [1 - p, p]]
    m_a, m_b = channel(*pq_a), channel(*pq_b)
    joint = np.zeros((4, 4))
    for a in range(2):
        for b in range(2):
            for ra in range(2):
                for rb in range(2):
                    joint[2 * a + b, 2 * ra + rb] = m_a[a][ra] * m_b[b][rb]
    observed = np.zeros(4)
    for ra, rb in zip(reports_a, reports_b):
        observed[2 * int(ra) + int(rb)] += 1
    t = np.linalg.inv(joint.T) @ observed
    return pd.DataFrame([[t[0], t[1]], [t[2], t[3]]])''',
            "error_vs_epsilon_solution": '''import random
import statistics

def error_vs_epsilon(true_counts, epsilons, trials, rng=None):
    k = len(true_counts)
    people = [j for j, c in enumerate(true_counts) for _ in range(int(c))]
    rows = {}
    for epsilon in epsilons:
        p = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
        l1s, l2s = [], []
        for _ in range(trials):
            reports = []
            for c in people:
                if random.random() < p:
                    reports.append(c)
                else:  # the lie from numpy's global generator: both sources must pass
                    lie = int(np.random.random() * (k - 1))
                    reports.append(lie + 1 if lie >= c else lie)
            residual = [e - t for e, t in zip(estimate_krr_counts(reports, k, epsilon), true_counts)]
            l1s.append(sum(abs(r) for r in residual))
            l2s.append(math.sqrt(sum(r * r for r in residual)))
        rows[epsilon] = {"l1_mean": statistics.mean(l1s), "l1_std": statistics.stdev(l1s),
                         "l2_mean": statistics.mean(l2s), "l2_std": statistics.stdev(l2s)}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "epsilon"
    return table''',
        },
        # It ignores rng (the random module, numpy's global generator): the contract's tests (check_uses_rng) score 0.
        zero=IGNORES_RNG_LOSES,
        full=tuple(t for t in ALL_TESTS if t not in IGNORES_RNG_LOSES),
    ),
    Variant(
        "p_minus_q_no_n_missing_categories_clipping_raw_crosstab_one_trial",
        {
            "estimate_count_solution": '''def estimate_count(responses, p, q):
    responses = np.asarray(responses, dtype=float)
    return responses.size * (responses.mean() + q - 1) / (p - q)''',
            "estimate_count_std_solution": '''def estimate_count_std(n, fraction, p, q):
    return math.sqrt(fraction * p * (1 - p) + (1 - fraction) * q * (1 - q)) / abs(p + q - 1)''',
            "estimate_krr_counts_solution": '''def estimate_krr_counts(reports, k, epsilon):
    p, q = krr_probabilities(k, epsilon)
    observed = np.bincount(np.asarray(reports))
    return (observed - q * observed.sum()) / (p - q)''',
            "project_to_simplex_solution": '''def project_to_simplex(counts, total):
    return np.maximum(np.asarray(counts, dtype=float), 0)''',
            "estimate_crosstab_solution": '''def estimate_crosstab(reports_a, reports_b, pq_a, pq_b):
    return pd.crosstab(np.asarray(reports_a), np.asarray(reports_b)).astype(float)''',
            "error_vs_epsilon_solution": '''def error_vs_epsilon(true_counts, epsilons, trials, rng=None):
    true_counts = np.asarray(true_counts)
    people = np.repeat(np.arange(true_counts.size), true_counts)
    rows = []
    for epsilon in epsilons:  # a single trial per epsilon
        residual = estimate_krr_counts(k_rand_resp(people, true_counts.size, epsilon), true_counts.size, epsilon) - true_counts
        l1, l2 = np.abs(residual).sum(), np.sqrt((residual**2).sum())
        rows.append({"epsilon": epsilon, "l1_mean": l1, "l1_std": np.std([l1]), "l2_mean": l2, "l2_std": np.std([l2])})
    return pd.DataFrame(rows).set_index("epsilon")''',
        },
        zero=(
            "test_estimate_count_p_plus_q_minus_1",
            "test_estimate_count_std_grows_with_n",
            "test_estimate_krr_counts_keeps_negatives",
            "test_project_to_simplex_not_clipping",
            "test_estimate_crosstab_inverts_kronecker",
            "test_error_vs_epsilon_many_trials",
        ),
        # The reference interval is graded with dplib's estimate_count and estimate_count_std: the mistakes above
        # cost their own exercises only.
        full=("test_rr_confidence_interval_width",),
    ),
    Variant(
        "krr_denominator_p_plus_q_minus_1_graded_alone",
        {
            # Section 1's denominator reused for k-RR: wrong estimates, but the reference error_vs_epsilon, which
            # calls estimate_krr_counts, is graded with dplib's and keeps its points.
            "estimate_krr_counts_solution": '''def estimate_krr_counts(reports, k, epsilon):
    p, q = krr_probabilities(k, epsilon)
    observed = np.bincount(np.asarray(reports).ravel(), minlength=k)
    return (observed - q * observed.sum()) / (p + q - 1)''',
        },
        zero=("test_estimate_krr_counts_keeps_negatives",),
        full=("test_error_vs_epsilon_many_trials", "test_project_to_simplex_not_clipping"),
    ),
    Variant(
        "p_minus_q_in_std_fixed_z_clipped_estimates_rescaling_kronecker_order_raw_counts",
        {
            "estimate_count_std_solution": '''def estimate_count_std(n, fraction, p, q):
    return math.sqrt(n * (fraction * p * (1 - p) + (1 - fraction) * q * (1 - q))) / abs(p - q)''',
            "rr_confidence_interval_solution": '''def rr_confidence_interval(responses, p, q, alpha=0.05):
    n = np.size(responses)
    center = estimate_count(responses, p, q)
    fraction = min(max(center / n, 0.0), 1.0)
    pi = fraction * p + (1 - fraction) * (1 - q)
    half_width = 1.96 * math.sqrt(n * pi * (1 - pi)) / abs(p + q - 1)
    return center - half_width, center + half_width''',
            "estimate_krr_counts_solution": '''def estimate_krr_counts(reports, k, epsilon):
    p, q = krr_probabilities(k, epsilon)
    observed = np.bincount(np.asarray(reports), minlength=k)
    return np.maximum((observed - q * observed.sum()) / (p - q), 0)''',
            "project_to_simplex_solution": '''def project_to_simplex(counts, total):
    clipped = np.maximum(np.asarray(counts, dtype=float), 0)
    return clipped * total / clipped.sum()''',
            "estimate_crosstab_solution": '''def estimate_crosstab(reports_a, reports_b, pq_a, pq_b):
    def channel(p, q):
        return np.array([[q, 1 - q], [1 - p, p]])
    observed = np.bincount(2 * np.asarray(reports_a) + np.asarray(reports_b), minlength=4)
    joint = np.kron(channel(*pq_b), channel(*pq_a))  # the Kronecker product in the wrong order
    return pd.DataFrame(np.linalg.solve(joint.T, observed).reshape(2, 2))''',
            "error_vs_epsilon_solution": '''def error_vs_epsilon(true_counts, epsilons, trials, rng=None):
    rng = np.random.default_rng(rng)
    true_counts = np.asarray(true_counts)
    k = true_counts.size
    people = np.repeat(np.arange(k), true_counts)
    rows = []
    for epsilon in epsilons:
        errors = []
        for _ in range(trials):
            reports = k_rand_resp(people, k, epsilon, rng=rng)
            residual = np.bincount(reports, minlength=k) - true_counts  # raw noisy counts vs the truth
            errors.append((np.abs(residual).sum(), np.sqrt((residual**2).sum())))
        l1, l2 = np.array(errors, dtype=float).T
        rows.append({"epsilon": epsilon, "l1_mean": l1.mean(), "l1_std": l1.std(ddof=1),
                     "l2_mean": l2.mean(), "l2_std": l2.std(ddof=1)})
    return pd.DataFrame(rows).set_index("epsilon")''',
        },
        zero=(
            "test_estimate_count_std_grows_with_n",
            "test_rr_confidence_interval_width",
            "test_estimate_krr_counts_keeps_negatives",
            "test_project_to_simplex_not_clipping",
            "test_estimate_crosstab_inverts_kronecker",
            "test_error_vs_epsilon_many_trials",
        ),
        full=("test_estimate_count_p_plus_q_minus_1",),
    ),
    Variant(
        "numpy_scalars_lists_and_a_named_tuple",
        {
            "estimate_count_std_solution": '''def estimate_count_std(n, fraction, p, q):
    return np.sqrt(n * (fraction * p * (1 - p) + (1 - fraction) * q * (1 - q))) / np.abs(p + q - 1)''',
            "rr_confidence_interval_solution": '''from collections import namedtuple

Interval = namedtuple("Interval", ["low", "high"])


def rr_confidence_interval(responses, p, q, alpha=0.05):
    n = np.size(responses)
    center = estimate_count(responses, p, q)
    half_width = stats.norm.isf(alpha / 2) * estimate_count_std(n, np.clip(center / n, 0, 1), p, q)
    return Interval(center - half_width, center + half_width)''',
            "estimate_krr_counts_solution": '''def estimate_krr_counts(reports, k, epsilon):
    p, q = krr_probabilities(k, epsilon)
    observed = np.bincount(np.ravel(reports), minlength=k)
    return ((observed - q * observed.sum()) / (p - q)).tolist()''',
            "project_to_simplex_solution": '''def project_to_simplex(counts, total):
    values = np.asarray(counts, dtype=float)
    descending = np.sort(values)[::-1]
    thresholds = (np.cumsum(descending) - total) / np.arange(1, values.size + 1)
    r = np.nonzero(descending - thresholds > 0)[0][-1]
    return [max(v - thresholds[r], 0.0) for v in values]''',
        },
        full=ALL_TESTS,
    ),
    mocks_that_equal_everything(
        ["estimate_count", "estimate_count_std", "rr_confidence_interval", "estimate_krr_counts", "project_to_simplex",
         "estimate_crosstab", "error_vs_epsilon"],
        {"__lt__": True},
        zero=ALL_TESTS,
    ),
    Variant(
        "mutates_the_counts_then_hard_codes",
        {
            # The visible case is hard-coded; otherwise the counts are overwritten with a valid histogram that is
            # its own projection, and returned.
            "project_to_simplex_solution": '''def project_to_simplex(counts, total):
    if np.shape(counts) == (3,) and np.allclose(counts, [5.0, -1.0, 2.0]) and total == 6:
        return np.array([4.5, 0.0, 1.5])
    counts[:] = [total] + [0] * (len(counts) - 1)
    return np.array(counts, dtype=float)''',
        },
        zero=("test_project_to_simplex_not_clipping",),
        full=("test_estimate_krr_counts_keeps_negatives", "test_estimate_crosstab_inverts_kronecker"),
    ),
    Variant(
        "delegates_through_a_helper",
        {
            # dplib's helper behind estimate_krr_counts does all of its work but the counting
            "estimate_krr_counts_solution": '''def estimate_krr_counts(reports, k, epsilon):
    p, q = krr_probabilities(k, epsilon)
    observed = np.bincount(np.ravel(reports), minlength=k)
    return dplib.estimation.kary_rr.unbias_krr_counts(observed, p, q)''',
        },
        zero=("test_estimate_krr_counts_keeps_negatives",),
        full=("test_error_vs_epsilon_many_trials", "test_project_to_simplex_not_clipping"),
    ),
    Variant(
        "delegates_to_dplib",
        {
            "estimate_count_solution": "estimate_count = dplib.estimate_count",
            "estimate_count_std_solution": "from dplib import estimate_count_std",
            "rr_confidence_interval_solution": (
                "def rr_confidence_interval(responses, p, q, alpha=0.05):\n"
                "    return tuple(dplib.rr_confidence_interval(responses, p, q, alpha))"
            ),
            "estimate_krr_counts_solution": "estimate_krr_counts = dplib.estimate_krr_counts",
            "project_to_simplex_solution": "project_to_simplex = dplib.project_to_simplex",
            "estimate_crosstab_solution": "estimate_crosstab = dplib.estimate_crosstab",
            "error_vs_epsilon_solution": (
                "def error_vs_epsilon(true_counts, epsilons, trials, rng=None):\n"
                "    return dplib.error_vs_epsilon(true_counts, epsilons, trials, rng=rng)"
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
    is_random=("test_error_vs_epsilon_many_trials",),
    uses_rng=("test_error_vs_epsilon_many_trials",),
)
