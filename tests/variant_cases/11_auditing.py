"""11_auditing: correct audits written differently keep full marks; the classic mistakes and delegation lose them."""

from helpers.rng_styles import rng_style_variants
from helpers.variants import Variant, autograded_tests

ASSIGNMENT = "11_auditing"
ALL_TESTS = autograded_tests(ASSIGNMENT)


def everything_but(*zero: str) -> tuple[str, ...]:
    return tuple(t for t in ALL_TESTS if t not in zero)


# The reference audit, with the lines the mistakes change marked by their {placeholders}.
AUDIT_TEMPLATE = '''def audit_threshold(mechanism, d, d_prime, thresholds, trials, alpha, rng=None):
    rng = np.random.default_rng(rng)

    def counts(outputs_d, outputs_d_prime, t, side, numerator):
        inside = {inside}
        k_d, k_d_prime = int(inside(outputs_d)), int(inside(outputs_d_prime))
        return (k_d, k_d_prime) if numerator == "d" else (k_d_prime, k_d)

    choose_d, choose_d_prime = mechanism(d, size=trials, rng=rng), mechanism(d_prime, size=trials, rng=rng)
    best_event, best_bound = None, -1.0
    for t in thresholds:
        for side in (">=", "<="):
            for numerator in ("d", "d_prime"):
                bound = epsilon_lower_bound(*counts(choose_d, choose_d_prime, t, side, numerator), trials, alpha)
                if bound > best_bound:
                    best_event, best_bound = (t, side, numerator), bound
    {fresh}
    k_num, k_den = counts(fresh_d, fresh_d_prime, *best_event)
    return {result}'''
ONE_SIDED = '(lambda y: np.sum(y >= t)) if side == ">=" else (lambda y: np.sum(y <= t))'
FRESH = "fresh_d, fresh_d_prime = mechanism(d, size=trials, rng=rng), mechanism(d_prime, size=trials, rng=rng)"
BOUND = "epsilon_lower_bound(k_num, k_den, trials, alpha)"


NUMERATOR = 'return (k_d, k_d_prime) if numerator == "d" else (k_d_prime, k_d)'


def audit(inside: str = ONE_SIDED, fresh: str = FRESH, result: str = BOUND, numerator: str = NUMERATOR) -> str:
    return AUDIT_TEMPLATE.format(inside=inside, fresh=fresh, result=result).replace(NUMERATOR, numerator)


RIGHT = {
    # scipy's binomtest gives the same exact interval
    "clopper_pearson_solution": '''def clopper_pearson(successes, trials, alpha):
    interval = stats.binomtest(int(successes), int(trials)).proportion_ci(confidence_level=1 - alpha, method="exact")
    return interval.low, interval.high''',
    # indexing instead of unpacking, numpy's log, the comparison on the ratio
    "epsilon_lower_bound_solution": '''def epsilon_lower_bound(successes_d, successes_d_prime, trials, alpha):
    ratio = clopper_pearson(successes_d, trials, alpha)[0] / clopper_pearson(successes_d_prime, trials, alpha)[1]
    return float(np.log(ratio)) if ratio > 1 else 0.0''',
    # one call of 2 * trials runs per dataset split in halves; counts from sorted runs with bisect; the event chosen by
    # a smoothed point estimate (the confidence bound is only needed on the fresh half), ties to the last event tried
    "audit_threshold_solution": '''import bisect

def audit_threshold(mechanism, d, d_prime, thresholds, trials, alpha, rng=None):
    runs_d = list(mechanism(d, size=2 * trials, rng=rng))
    runs_d_prime = list(mechanism(d_prime, size=2 * trials, rng=rng))
    choose = sorted(runs_d[:trials]), sorted(runs_d_prime[:trials])
    fresh = sorted(runs_d[trials:]), sorted(runs_d_prime[trials:])

    def count(sorted_runs, t, side):
        if side == "above":
            return len(sorted_runs) - bisect.bisect_left(sorted_runs, t)
        return bisect.bisect_right(sorted_runs, t)

    def score(pair, t, side, flip):
        a, b = count(pair[0], t, side), count(pair[1], t, side)
        if flip:
            a, b = b, a
        return (a + 1) / (b + 1), a, b

    options = [(t, side, flip) for t in thresholds for side in ("above", "below") for flip in (False, True)]
    t, side, flip = max(reversed(options), key=lambda option: score(choose, *option)[0])
    _, a, b = score(fresh, t, side, flip)
    return epsilon_lower_bound(a, b, trials, alpha)''',
    # Sidak's correction instead of Bonferroni's; a dict of columns
    "audit_vendors_solution": '''def audit_vendors(vendors, alpha, trials, rng=None):
    vendors = list(vendors)
    level = 1 - (1 - alpha) ** (1 / len(vendors))
    columns = {"claimed_epsilon": [], "epsilon_lower": [], "broken": []}
    for v in vendors:
        bound = audit_threshold(v.mechanism, v.d, v.d_prime, v.thresholds, trials, level)
        columns["claimed_epsilon"].append(float(v.claimed_epsilon))
        columns["epsilon_lower"].append(bound)
        columns["broken"].append(bool(bound > v.claimed_epsilon))
    return pd.DataFrame(columns, index=pd.Index([v.name for v in vendors], name="name"))''',
    # one output at a time, Python integers, a list of bools
    "can_produce_solution": '''def can_produce(outputs, value, scale):
    answers = []
    for target in np.asarray(outputs, dtype=float).ravel():
        low, high = 0, 2**53 - 1
        while low < high:
            middle = (low + high) // 2
            if textbook_laplace_output(middle, value, scale) >= target:
                high = middle
            else:
                low = middle + 1
        answers.append(bool(textbook_laplace_output(low, value, scale) == target))
    return np.array(answers).reshape(np.shape(outputs))''',
    # the random module and inversion of the geometric distribution, a loop over entries
    "grid_laplace_solution": '''import random

def grid_laplace(value, scale, granularity, rng=None):
    r = math.exp(-granularity / scale)

    def geometric():  # trials up to the first success, success probability 1 - r
        return 1 + int(math.log(1.0 - random.random()) / math.log(r))

    def one(v):
        return round(v / granularity) * granularity + granularity * (geometric() - geometric())

    if np.ndim(value) == 0:
        return one(float(value))
    values = np.asarray(value, dtype=float)
    return np.array([one(v) for v in values.ravel()]).reshape(values.shape)''',
    # the normal equations, rounding with rint and clipping
    "reconstruct_solution": '''def reconstruct(queries, answers):
    A = np.asarray(queries, dtype=float)
    estimate = np.linalg.solve(A.T @ A, A.T @ np.asarray(answers, dtype=float))
    return np.clip(np.rint(estimate), 0, 1).astype(np.int8)''',
}

DELEGATING = {
    "clopper_pearson_solution": '''def clopper_pearson(successes, trials, alpha):
    return tuple(dplib.clopper_pearson(successes, trials, alpha))''',
    "epsilon_lower_bound_solution": '''def epsilon_lower_bound(successes_d, successes_d_prime, trials, alpha):
    return dplib.epsilon_lower_bound(successes_d, successes_d_prime, trials, alpha)''',
    # built on dplib's helper that chooses and bounds the event: switched off with audit_threshold
    "audit_threshold_solution": '''def audit_threshold(mechanism, d, d_prime, thresholds, trials, alpha, rng=None):
    runs = [mechanism(data, size=trials, rng=rng) for data in (d, d_prime, d, d_prime)]
    return dplib.audit_events(*runs, thresholds, alpha).epsilon_lower''',
    "audit_vendors_solution": '''def audit_vendors(vendors, alpha, trials, rng=None):
    return dplib.audit_vendors(vendors, alpha, trials, rng=rng)''',
    "can_produce_solution": '''def can_produce(outputs, value, scale):
    return dplib.can_produce(outputs, value, scale)''',
    "grid_laplace_solution": '''def grid_laplace(value, scale, granularity, rng=None):
    return dplib.grid_laplace(value, scale, granularity, rng=rng)''',
    "reconstruct_solution": '''def reconstruct(queries, answers):
    return dplib.reconstruct(queries, answers)''',
}

# The tests that check the randomness contract on the functions a variant below draws with the random module or
# numpy's global generator, which ignore rng: those variants lose them (check_uses_rng) and keep everything else.
IGNORES_RNG_LOSES = ("test_grid_laplace_outputs_on_the_grid",)

VARIANTS = [
    # It ignores rng (the random module, numpy's global generator): the contract's tests (check_uses_rng) score 0.
    Variant("binomtest_bisect_halves_sidak_python_ints_random_module_normal_equations", RIGHT, zero=IGNORES_RNG_LOSES,
            full=tuple(t for t in ALL_TESTS if t not in IGNORES_RNG_LOSES)),
    Variant(
        "wald_interval_point_estimate_two_sided_event",
        {
            "clopper_pearson_solution": '''def clopper_pearson(successes, trials, alpha):
    p = successes / trials
    half_width = stats.norm.ppf(1 - alpha / 2) * math.sqrt(p * (1 - p) / trials)
    return max(0.0, p - half_width), min(1.0, p + half_width)''',
            "epsilon_lower_bound_solution": '''def epsilon_lower_bound(successes_d, successes_d_prime, trials, alpha):
    if successes_d == 0:
        return 0.0
    if successes_d_prime == 0:
        return math.inf
    return max(0.0, math.log(successes_d / successes_d_prime))''',
            # the event |output| >= t (or <= t): a distance from 0 instead of one side of a threshold
            "audit_threshold_solution": audit(
                inside='(lambda y: np.sum(np.abs(y) >= t)) if side == ">=" else (lambda y: np.sum(np.abs(y) <= t))'),
        },
        zero=("test_clopper_pearson_exact_interval", "test_epsilon_lower_bound_uses_confidence_bounds",
              "test_audit_threshold_refutes_broken_mechanisms"),
        full=everything_but("test_clopper_pearson_exact_interval", "test_epsilon_lower_bound_uses_confidence_bounds",
                            "test_audit_threshold_refutes_broken_mechanisms"),
    ),
    Variant(
        "same_runs_choose_and_estimate",
        {"audit_threshold_solution": audit(fresh="fresh_d, fresh_d_prime = choose_d, choose_d_prime")},
        zero=("test_audit_threshold_false_alarm_rate",),
        full=everything_but("test_audit_threshold_false_alarm_rate"),
    ),
    Variant(
        "point_estimate_of_the_chosen_event",
        {"audit_threshold_solution": audit(result="math.log(k_num / k_den) if k_den > 0 else math.inf")},
        zero=("test_audit_threshold_refutes_broken_mechanisms", "test_audit_threshold_false_alarm_rate"),
        full=everything_but("test_audit_threshold_refutes_broken_mechanisms", "test_audit_threshold_false_alarm_rate"),
    ),
    Variant(
        "uncorrected_confidence_approximate_membership_rounded_continuous_noise_no_rounding_to_bits",
        {
            "audit_vendors_solution": '''def audit_vendors(vendors, alpha, trials, rng=None):
    rows = []
    for v in vendors:  # every vendor at the full alpha
        bound = audit_threshold(v.mechanism, v.d, v.d_prime, v.thresholds, trials, alpha, rng=rng)
        rows.append({"name": v.name, "claimed_epsilon": v.claimed_epsilon, "epsilon_lower": bound,
                     "broken": bound > v.claimed_epsilon})
    return pd.DataFrame(rows).set_index("name")''',
            # an inverse of the sampler accepted up to a relative tolerance
            "can_produce_solution": '''def can_produce(outputs, value, scale):
    targets = np.asarray(outputs, dtype=float)
    noise = targets - value
    uniform = 0.5 + np.sign(noise) * (1 - np.exp(-np.abs(noise) / scale)) / 2
    k = np.clip(np.round(uniform * 2**53), 0, 2**53 - 1).astype(np.int64)
    return np.isclose(textbook_laplace_output(k, value, scale), targets, rtol=1e-12, atol=0)''',
            # continuous Laplace noise rounded to the grid: on the grid, but not discrete Laplace
            "grid_laplace_solution": '''def grid_laplace(value, scale, granularity, rng=None):
    rng = np.random.default_rng(rng)
    value = np.asarray(value, dtype=float)
    noisy = np.round((value + rng.laplace(0.0, scale, value.shape)) / granularity) * granularity
    return noisy if noisy.ndim else float(noisy)''',
            "reconstruct_solution": '''def reconstruct(queries, answers):
    return np.linalg.lstsq(np.asarray(queries, dtype=float), np.asarray(answers, dtype=float), rcond=None)[0]''',
        },
        zero=("test_audit_vendors_corrects_confidence", "test_can_produce_finds_the_gaps",
              "test_grid_laplace_discrete_laplace", "test_reconstruct_recovers_the_bits"),
        full=("test_clopper_pearson_exact_interval", "test_epsilon_lower_bound_uses_confidence_bounds",
              "test_audit_threshold_refutes_broken_mechanisms", "test_audit_threshold_false_alarm_rate",
              "test_audit_vendors_classifies", "test_can_produce_what_the_sampler_produces",
              "test_grid_laplace_outputs_on_the_grid"),
    ),
    Variant(
        "noise_off_the_grid_rounding_at_zero",
        {
            "grid_laplace_solution": '''def grid_laplace(value, scale, granularity, rng=None):
    rng = np.random.default_rng(rng)
    value = np.asarray(value, dtype=float)
    success = 1 - math.exp(-granularity / scale)
    steps = rng.geometric(success, value.shape) - rng.geometric(success, value.shape)
    noisy = value + granularity * steps  # the value itself is not rounded to the grid
    return noisy if noisy.ndim else float(noisy)''',
            "reconstruct_solution": '''def reconstruct(queries, answers):
    estimate = np.linalg.lstsq(np.asarray(queries, dtype=float), np.asarray(answers, dtype=float), rcond=None)[0]
    return (estimate > 0).astype(int)''',
        },
        zero=("test_grid_laplace_outputs_on_the_grid", "test_reconstruct_recovers_the_bits"),
        full=everything_but("test_grid_laplace_outputs_on_the_grid", "test_grid_laplace_discrete_laplace",
                            "test_reconstruct_recovers_the_bits"),
    ),
    Variant(
        "only_the_upper_side_bits_as_floats",
        {
            # output >= t with either dataset in the numerator, never output <= t
            "audit_threshold_solution": audit(inside="(lambda y: np.sum(y >= t))"),
            # the right bits, as floats 0.0 and 1.0
            "reconstruct_solution": '''def reconstruct(queries, answers):
    estimate = np.linalg.lstsq(np.asarray(queries, dtype=float), np.asarray(answers, dtype=float), rcond=None)[0]
    return np.where(estimate >= 0.5, 1.0, 0.0)''',
        },
        zero=("test_audit_threshold_refutes_broken_mechanisms", "test_reconstruct_recovers_the_bits"),
        full=everything_but("test_audit_threshold_refutes_broken_mechanisms", "test_reconstruct_recovers_the_bits"),
    ),
    Variant(
        "d_always_in_the_numerator",
        {"audit_threshold_solution": audit(numerator="return (k_d, k_d_prime)")},
        zero=("test_audit_threshold_refutes_broken_mechanisms",),
        full=everything_but("test_audit_threshold_refutes_broken_mechanisms"),
    ),
    Variant(
        "selection_runs_of_d_prime_reused_for_the_estimate",
        {"audit_threshold_solution": audit(fresh="fresh_d, fresh_d_prime = mechanism(d, size=trials, rng=rng), choose_d_prime")},
        zero=("test_audit_threshold_false_alarm_rate",),
        full=everything_but("test_audit_threshold_false_alarm_rate"),
    ),
    Variant("delegates_to_dplib", DELEGATING, zero=ALL_TESTS),
]


# The randomness contract, one variant per style (tests/helpers/rng_styles.py): the honest styles keep full marks;
# a generator created once at module level fails the tests that call check_is_random, a function that ignores rng
# (numpy's global generator, the random module) those that call check_uses_rng.
VARIANTS += rng_style_variants(
    ASSIGNMENT,
    is_random=("test_grid_laplace_outputs_on_the_grid",),
    uses_rng=("test_audit_threshold_refutes_broken_mechanisms", "test_grid_laplace_outputs_on_the_grid"),
)
