"""01_definition: correct answers written differently keep full marks; classic mistakes and delegation lose them."""

from helpers.variants import Variant, autograded_tests

ASSIGNMENT = "01_definition"
ALL_TESTS = autograded_tests(ASSIGNMENT)

VARIANTS = [
    Variant(
        "loops_everywhere",
        {
            "uniqueness_solution": '''def uniqueness(df, columns):
    counts = {}
    rows = [tuple(row) for row in df[list(columns)].itertuples(index=False)]
    for row in rows:
        counts[row] = counts.get(row, 0) + 1
    return sum(1 for row in rows if counts[row] == 1) / len(rows)''',
            "max_privacy_loss_solution": '''def max_privacy_loss(p_d, p_d_prime):
    worst = 0.0
    for a, b in zip(p_d, p_d_prime):
        if a == 0 and b == 0:
            continue
        if a == 0 or b == 0:
            return float("inf")
        worst = max(worst, abs(math.log(a / b)))
    return worst''',
        },
        full=ALL_TESTS,
    ),
    Variant(
        "classic_mistakes",
        {
            "uniqueness_solution": '''def uniqueness(df, columns):
    return len(df.drop_duplicates(list(columns))) / len(df)''',
            "reidentify_solution": '''def reidentify(deidentified, auxiliary, keys):
    return deidentified.merge(auxiliary[list(keys) + ["Name"]], on=list(keys))''',
            "max_privacy_loss_solution": '''def max_privacy_loss(p_d, p_d_prime):
    return float(np.max(np.log(np.asarray(p_d) / np.asarray(p_d_prime))))''',
        },
        # satisfies_dp is graded with dplib's max_privacy_loss: the one-sided loss costs Exercise 4 only.
        zero=("test_uniqueness", "test_reidentify", "test_max_privacy_loss"),
        full=("test_differencing_attack", "test_satisfies_dp"),
    ),
    Variant(
        "strict_inequality",
        {
            "satisfies_dp_solution": '''def satisfies_dp(p_d, p_d_prime, epsilon):
    return max_privacy_loss(p_d, p_d_prime) < epsilon''',
        },
        # The hidden boundary case has a loss of exactly ln 2 in floating point, so a strict < fails it.
        zero=("test_satisfies_dp",),
        full=("test_max_privacy_loss",),
    ),
    Variant(
        "delegates_to_dplib",
        {
            "uniqueness_solution": "uniqueness = dplib.uniqueness",
            "reidentify_solution": "from dplib import reidentify",
            "differencing_attack_solution": "def differencing_attack(df, name):\n    return dplib.differencing_attack(df, name)",
            "max_privacy_loss_solution": "max_privacy_loss = dplib.max_privacy_loss",
            "satisfies_dp_solution": "satisfies_dp = dplib.satisfies_dp",
        },
        zero=ALL_TESTS,
    ),
]
