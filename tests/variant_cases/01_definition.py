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
        "numpy_scalars_and_dplib_handed_over",
        {
            "uniqueness_solution": '''def uniqueness(df, columns):
    return np.mean(~df.duplicated(list(columns), keep=False).to_numpy())''',
            "differencing_attack_solution": '''def differencing_attack(df, name):
    rich = (df["income"] == ">50K").to_numpy()
    return np.sum(rich) - np.sum(rich[(df["Name"] != name).to_numpy()]) == 1''',
            "max_privacy_loss_solution": '''def max_privacy_loss(p_d, p_d_prime):
    p_d, p_d_prime = np.asarray(p_d, dtype=float), np.asarray(p_d_prime, dtype=float)
    possible = (p_d > 0) | (p_d_prime > 0)
    if np.any((p_d[possible] == 0) | (p_d_prime[possible] == 0)):
        return np.inf
    return np.max(np.abs(np.log(p_d[possible] / p_d_prime[possible])), initial=0)''',
            # the test hands dplib's max_privacy_loss over while satisfies_dp is checked: calling it is fine
            "satisfies_dp_solution": '''def satisfies_dp(p_d, p_d_prime, epsilon):
    return np.float64(dplib.max_privacy_loss(p_d, p_d_prime)) <= epsilon + 1e-12''',
        },
        # numpy bools (differencing_attack, satisfies_dp), numpy floats (uniqueness, max_privacy_loss) are answers
        full=ALL_TESTS,
    ),
    Variant(
        "mocks_that_equal_everything",
        {
            "uniqueness_solution": "from unittest import mock\n\ndef uniqueness(df, columns):\n    return mock.MagicMock(**{'__eq__.return_value': True})",
            "reidentify_solution": "from unittest import mock\n\ndef reidentify(deidentified, auxiliary, keys):\n    return mock.MagicMock()",
            "differencing_attack_solution": "from unittest import mock\n\ndef differencing_attack(df, name):\n    return mock.MagicMock(**{'__eq__.return_value': True, '__bool__.return_value': name != 'Bob'})",
            "max_privacy_loss_solution": "from unittest import mock\n\ndef max_privacy_loss(p_d, p_d_prime):\n    return mock.MagicMock(**{'__eq__.return_value': True})",
            "satisfies_dp_solution": "from unittest import mock\n\ndef satisfies_dp(p_d, p_d_prime, epsilon):\n    return mock.MagicMock(**{'__eq__.return_value': True})",
        },
        zero=ALL_TESTS,
    ),
    Variant(
        "mutates_the_data_then_hard_codes",
        {
            # The notebook's `people` is rewritten so that everybody earns >50K; the answer ignores the data.
            "differencing_attack_solution": '''people.loc[:, "income"] = ">50K"


def differencing_attack(df, name):
    return name != "Bob"''',
        },
        zero=("test_differencing_attack",),
        full=("test_uniqueness", "test_reidentify", "test_max_privacy_loss", "test_satisfies_dp"),
    ),
    Variant(
        "delegates_through_a_helper",
        {
            # privacy_loss_per_output computes all but the last line of max_privacy_loss
            "max_privacy_loss_solution": '''def max_privacy_loss(p_d, p_d_prime):
    losses = dplib.privacy_loss_per_output(p_d, p_d_prime)
    return float(np.abs(losses[~np.isnan(losses)]).max(initial=0.0))''',
        },
        zero=("test_max_privacy_loss",),
        full=("test_uniqueness", "test_reidentify", "test_differencing_attack", "test_satisfies_dp"),
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
