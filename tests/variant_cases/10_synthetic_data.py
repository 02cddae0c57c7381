"""10_synthetic_data: correct answers written differently keep full marks; classic mistakes and delegation lose them."""

from helpers.rng_styles import rng_style_variants
from helpers.variants import Variant, autograded_tests, mocks_that_equal_everything

ASSIGNMENT = "10_synthetic_data"
ALL_TESTS = autograded_tests(ASSIGNMENT)

RIGHT = {
    # pandas: value_counts over the rows, reindexed on the product of the domains, after rejecting values outside it
    "marginal_solution": '''def marginal(data, columns, domain):
    columns = list(columns)
    for c in columns:
        if not data[c].astype(str).isin(list(domain[c])).all():
            raise ValueError(f"column {c} holds values outside its domain")
    cells = pd.MultiIndex.from_product([list(domain[c]) for c in columns], names=columns)
    counts = data[columns].astype(str).value_counts().reindex(cells, fill_value=0)
    return counts.to_numpy().reshape([len(domain[c]) for c in columns])''',
    # the random module, seeded from rng: a Laplace draw is the difference of two exponential draws
    "noisy_marginals_solution": '''import random

def noisy_marginals(data, marginals, epsilon, domain, rng=None):
    generator = random.Random(int(np.random.default_rng(rng).integers(2**63)))
    scale = len(marginals) / epsilon
    result = {}
    for columns in marginals:
        counts = np.array(marginal(data, columns, domain), dtype=float)
        noisy = [c + generator.expovariate(1 / scale) - generator.expovariate(1 / scale) for c in counts.ravel()]
        result[tuple(columns)] = np.array(noisy).reshape(counts.shape)
    return result''',
    # its own projection, by sorting, in plain Python
    "consistent_marginals_solution": '''def consistent_marginals(noisy):
    sizes = {key: np.size(value) for key, value in noisy.items()}
    n_hat = sum(float(np.sum(value)) / sizes[key] for key, value in noisy.items()) / sum(1 / s for s in sizes.values())
    n_hat = max(n_hat, 0.0)

    def project(values, total):
        if total <= 0:
            return [0.0] * len(values)  # the only histogram of total 0
        theta, cumulative = 0.0, 0.0
        for j, value in enumerate(sorted(values, reverse=True), start=1):
            cumulative += value
            if value - (cumulative - total) / j > 0:
                theta = (cumulative - total) / j
        return [max(v - theta, 0.0) for v in values]

    return {key: np.array(project([float(v) for v in np.ravel(value)], n_hat)).reshape(np.shape(value))
            for key, value in noisy.items()}''',
    # the random module again, seeded from rng
    "sample_independent_solution": '''import random

def sample_independent(marginals, domain, n, rng=None):
    generator = random.Random(int(np.random.default_rng(rng).integers(2**63)))
    return pd.DataFrame({column: generator.choices(list(values), weights=list(marginals[(column,)]), k=n)
                         for column, values in domain.items()})''',
    # inverse CDF per record, with uniforms from rng
    "sample_tree_solution": '''def sample_tree(marginals, tree, domain, n, rng=None):
    rng = np.random.default_rng(rng)

    def draw(probabilities):
        cdf = np.cumsum(probabilities / probabilities.sum(axis=1, keepdims=True), axis=1)
        return np.minimum((rng.random((len(cdf), 1)) > cdf).sum(axis=1), cdf.shape[1] - 1)

    root = tree[0][0]
    first = np.asarray(marginals[tuple(tree[0])], dtype=float)
    codes = {root: draw(np.tile(first.sum(axis=1), (n, 1)))}
    for parent, child in tree:
        table = np.asarray(marginals[(parent, child)], dtype=float)
        rows = table[codes[parent]]
        empty = rows.sum(axis=1) == 0
        rows[empty] = table.sum(axis=0)
        codes[child] = draw(rows)
    return pd.DataFrame({column: pd.Categorical.from_codes(codes[column], categories=list(values))
                         for column, values in domain.items()})''',
    # one call per edge at epsilon / |edges| each: the same noise, the same budget
    "synthesize_solution": '''def synthesize(data, epsilon, tree, domain, rng=None):
    generator = np.random.default_rng(rng)
    edges = [tuple(edge) for edge in tree]
    noisy = {}
    for edge in edges:
        noisy.update(noisy_marginals(data, [edge], epsilon / len(edges), domain, rng=generator))
    consistent = consistent_marginals(noisy)
    return sample_tree(consistent, edges, domain, int(np.rint(sum(consistent[edges[0]].ravel()))), rng=generator)''',
    "marginal_errors_solution": '''def marginal_errors(real, synthetic, domain):
    names = list(domain)
    rows = []
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            def shares(frame):
                table = pd.crosstab(frame[first].astype(str), frame[second].astype(str))
                table = table.reindex(index=list(domain[first]), columns=list(domain[second]), fill_value=0)
                return table.to_numpy() / len(frame)
            rows.append((first, second, float(abs(shares(real) - shares(synthetic)).sum() / 2)))
    return pd.DataFrame(rows, columns=["first", "second", "tv_distance"])''',
    # trials in the outer loop, the statistics module (population standard deviation)
    "synthetic_utility_solution": '''import statistics

def synthetic_utility(epsilons, trials, rng=None):
    generator = np.random.default_rng(rng)
    tv = {epsilon: [] for epsilon in epsilons}
    accuracy = {epsilon: [] for epsilon in epsilons}
    for _ in range(trials):
        for epsilon in epsilons:
            table = synthesize(private, epsilon, TREE, DOMAIN, rng=generator)
            tv[epsilon].append(float(marginal_errors(private, table, DOMAIN)["tv_distance"].mean()))
            accuracy[epsilon].append(classifier_accuracy(table, test))
    frame = pd.DataFrame(
        {"tv_mean": [statistics.mean(tv[e]) for e in epsilons], "tv_std": [statistics.pstdev(tv[e]) for e in epsilons],
         "accuracy_mean": [statistics.mean(accuracy[e]) for e in epsilons],
         "accuracy_std": [statistics.pstdev(accuracy[e]) for e in epsilons]},
        index=pd.Index([float(e) for e in epsilons], name="epsilon"),
    )
    frame.loc[np.inf] = [0.0, 0.0, classifier_accuracy(private, test), 0.0]
    return frame''',
    # the Gumbel-max form of the exponential mechanism
    "select_worst_query_solution": '''def select_worst_query(errors, epsilon, rng=None):
    scores = epsilon * np.asarray(errors, dtype=float) / 2
    return int(np.argmax(scores + np.random.default_rng(rng).gumbel(size=scores.shape)))''',
    "multiplicative_weights_update_solution": '''def multiplicative_weights_update(synthetic, query, measurement):
    a, q = [float(x) for x in synthetic], [float(x) for x in query]
    n = sum(a)
    answer = sum(x * y for x, y in zip(a, q))
    logs = [math.log(x) + qx * (measurement - answer) / (2 * n) if x > 0 else -math.inf for x, qx in zip(a, q)]
    top = max(logs)
    weights = [math.exp(value - top) for value in logs]
    return np.array([n * w / sum(weights) for w in weights])''',
    # keyword arguments, a list of errors
    "mwem_solution": '''def mwem(histogram, queries, total, epsilon, rounds, rng=None):
    generator = np.random.default_rng(rng)
    histogram, queries = np.asarray(histogram, dtype=float), np.asarray(queries, dtype=float)
    truth = queries @ histogram
    current = np.ones(len(histogram)) * total / len(histogram)
    history = []
    share = epsilon / rounds / 2
    for _ in range(rounds):
        errors = [abs(a - b) for a, b in zip(queries @ current, truth)]
        q = select_worst_query(errors, epsilon=share, rng=generator)
        history.append((q, laplace_mech(truth[q], sensitivity=1, epsilon=share, rng=generator)))
        for index, value in history:
            current = multiplicative_weights_update(current, queries[index], value)
    return current''',
}

REFERENCE_SYNTHESIZE_HEAD = '''def synthesize(data, epsilon, tree, domain, rng=None):
    rng = np.random.default_rng(rng)
    noisy = noisy_marginals(data, list(tree), epsilon, domain, rng=rng)
'''


def noisy_marginals_with(loop_body: str, make_rng: str = "np.random.default_rng(rng)") -> str:
    """A noisy_marginals whose rng is ``make_rng`` and whose loop over the marginals runs ``loop_body``, which stores
    each marginal's noisy counts in ``result[tuple(columns)]``."""
    return ("def noisy_marginals(data, marginals, epsilon, domain, rng=None):\n"
            f"    rng = {make_rng}\n"
            "    result = {}\n"
            "    for columns in marginals:\n"
            + loop_body + "\n"
            "    return result")


def sample_tree_with(edges: str) -> str:
    """A sample_tree that draws the root from the first edge's table, as the reference does, then runs ``edges``,
    which draws every child into ``codes``."""
    return ("def sample_tree(marginals, tree, domain, n, rng=None):\n"
            "    rng = np.random.default_rng(rng)\n"
            "    root = tree[0][0]\n"
            "    first = np.asarray(marginals[tuple(tree[0])], dtype=float)\n"
            "    codes = {root: rng.choice(len(domain[root]), size=n, p=first.sum(axis=1) / first.sum())}\n"
            + edges + "\n"
            "    return pd.DataFrame({column: np.asarray(values)[codes[column]] for column, values in domain.items()})")


def mwem_with(rounds: str) -> str:
    """An mwem that starts from the uniform histogram of the total, as the reference does, then runs ``rounds``,
    which updates ``synthetic``."""
    return ("def mwem(histogram, queries, total, epsilon, rounds, rng=None):\n"
            "    rng = np.random.default_rng(rng)\n"
            "    histogram, queries = np.asarray(histogram, dtype=float), np.asarray(queries, dtype=float)\n"
            "    answers = queries @ histogram\n"
            "    synthetic = np.full(histogram.size, total / histogram.size)\n"
            + rounds + "\n"
            "    return synthetic")


VARIANTS = [
    Variant("value_counts_random_module_own_projection_gumbel_trials_outside", RIGHT, full=ALL_TESTS),
    Variant(
        "domain_from_data_epsilon_per_marginal_clipping_shared_uniform_no_factor_two_rounds_charged_as_one",
        {
            "marginal_solution": '''def marginal(data, columns, domain):
    columns = list(columns)
    counts = data[columns].astype(str).value_counts().sort_index()  # the values seen in the data
    shape = [data[c].astype(str).nunique() for c in columns]
    cells = pd.MultiIndex.from_product([sorted(data[c].astype(str).unique()) for c in columns])
    return counts.reindex(cells, fill_value=0).to_numpy().reshape(shape)''',
            "noisy_marginals_solution": noisy_marginals_with('''        counts = marginal(data, columns, domain)
        result[tuple(columns)] = counts + rng.laplace(0.0, 1 / epsilon, size=counts.shape)  # epsilon for each'''),
            "consistent_marginals_solution": '''def consistent_marginals(noisy):
    return {key: np.clip(value, 0, None) for key, value in noisy.items()}''',
            "sample_independent_solution": '''def sample_independent(marginals, domain, n, rng=None):
    rng = np.random.default_rng(rng)
    u = rng.random(n)  # one uniform per record, shared by the columns
    columns = {}
    for column, values in domain.items():
        counts = np.asarray(marginals[(column,)], dtype=float)
        codes = np.minimum(np.searchsorted(np.cumsum(counts / counts.sum()), u, side="right"), len(values) - 1)
        columns[column] = np.asarray(values)[codes]
    return pd.DataFrame(columns)''',
            "select_worst_query_solution": '''def select_worst_query(errors, epsilon, rng=None):
    rng = np.random.default_rng(rng)
    exponents = epsilon * np.asarray(errors, dtype=float)  # the factor 2 dropped
    weights = np.exp(exponents - exponents.max())
    return int(rng.choice(len(weights), p=weights / weights.sum()))''',
            "mwem_solution": mwem_with('''    measured = []
    for _ in range(rounds):
        chosen = select_worst_query(np.abs(queries @ synthetic - answers), epsilon / 2, rng=rng)  # each round: epsilon
        measured.append((chosen, laplace_mech(answers[chosen], 1.0, epsilon / 2, rng=rng)))
        for query, measurement in measured:
            synthetic = multiplicative_weights_update(synthetic, queries[query], measurement)'''),
        },
        zero=("test_marginal_public_domain", "test_noisy_marginals_composition", "test_consistent_marginals_valid",
              "test_consistent_marginals_projection", "test_sample_independent_columns",
              "test_select_worst_query_factor_two", "test_mwem_budget_per_round"),
        full=("test_noisy_marginals_noise_on_counts", "test_sample_tree_follows_the_edges", "test_sample_tree_empty_row",
              "test_synthesize_samples_consistent_marginals", "test_synthesize_reads_the_data_only_to_measure",
              "test_marginal_errors_total_variation", "test_synthetic_utility_design",
              "test_multiplicative_weights_update", "test_mwem_replays_the_measurements"),
    ),
    Variant(
        "normalized_before_noise_plain_mean_child_margin_true_size_counts_of_real_size_no_renormalization",
        {
            "noisy_marginals_solution": noisy_marginals_with('''        shares = marginal(data, columns, domain) / len(data)  # normalized before the noise
        result[tuple(columns)] = shares + rng.laplace(0.0, len(marginals) / epsilon, size=shares.shape)'''),
            "consistent_marginals_solution": '''def consistent_marginals(noisy):
    n_hat = max(np.mean([np.sum(value) for value in noisy.values()]), 0.0)  # every sum weighted alike
    return {key: project_to_simplex(np.ravel(value), n_hat).reshape(np.shape(value)) for key, value in noisy.items()}''',
            "sample_tree_solution": sample_tree_with('''    for parent, child in tree:
        table = np.asarray(marginals[(parent, child)], dtype=float)
        codes[child] = rng.choice(len(domain[child]), size=n, p=table.sum(axis=0) / table.sum())  # parent ignored'''),
            "synthesize_solution": REFERENCE_SYNTHESIZE_HEAD + '''    consistent = consistent_marginals(noisy)
    return sample_tree(consistent, tree, domain, len(data), rng=rng)  # the true number of people''',
            "marginal_errors_solution": '''def marginal_errors(real, synthetic, domain):
    rows = []
    for first, second in itertools.combinations(domain, 2):
        difference = marginal(real, (first, second), domain) - marginal(synthetic, (first, second), domain)
        rows.append({"first": first, "second": second, "tv_distance": 0.5 * np.abs(difference).sum() / len(real)})
    return pd.DataFrame(rows)''',
            "multiplicative_weights_update_solution": '''def multiplicative_weights_update(synthetic, query, measurement):
    synthetic, query = np.asarray(synthetic, dtype=float), np.asarray(query, dtype=float)
    return synthetic * np.exp(query * (measurement - query @ synthetic) / (2 * synthetic.sum()))''',
        },
        zero=("test_noisy_marginals_composition", "test_noisy_marginals_noise_on_counts",
              "test_consistent_marginals_projection", "test_sample_tree_follows_the_edges", "test_sample_tree_empty_row",
              "test_synthesize_reads_the_data_only_to_measure", "test_marginal_errors_total_variation",
              "test_multiplicative_weights_update"),
        full=("test_marginal_public_domain", "test_consistent_marginals_valid", "test_sample_independent_columns",
              "test_synthesize_samples_consistent_marginals", "test_synthetic_utility_design",
              "test_select_worst_query_factor_two", "test_mwem_budget_per_round", "test_mwem_replays_the_measurements"),
    ),
    Variant(
        "no_noise_on_empty_cells_negative_counts_sampled_no_empty_row_fallback_tested_on_synthetic_overflow_no_replay",
        {
            "noisy_marginals_solution": noisy_marginals_with('''        counts = marginal(data, columns, domain).astype(float)
        occupied = counts > 0  # only the cells somebody is in get noise
        counts[occupied] += rng.laplace(0.0, len(marginals) / epsilon, size=occupied.sum())
        result[tuple(columns)] = counts'''),
            "sample_tree_solution": sample_tree_with('''    for parent, child in tree:
        table = np.asarray(marginals[(parent, child)], dtype=float)
        conditional = table / table.sum(axis=1, keepdims=True)  # an all-zero row gives NaN
        drawn = np.zeros(n, dtype=int)
        for value in range(len(domain[parent])):
            rows = np.flatnonzero(codes[parent] == value)
            if len(rows):
                drawn[rows] = rng.choice(len(domain[child]), size=len(rows), p=conditional[value])
        codes[child] = drawn'''),
            "synthesize_solution": REFERENCE_SYNTHESIZE_HEAD + '''    n = int(round(float(np.sum(noisy[tuple(tree[0])]))))
    return sample_tree(noisy, tree, domain, n, rng=rng)  # the noisy counts, negatives and all''',
            "synthetic_utility_solution": '''def synthetic_utility(epsilons, trials, rng=None):
    rows = []
    for epsilon in epsilons:
        tv, accuracy = [], []
        for _ in range(trials):
            table = synthesize(private, epsilon, TREE, DOMAIN, rng=rng)
            tv.append(marginal_errors(private, table, DOMAIN)["tv_distance"].mean())
            accuracy.append(classifier_accuracy(table, table))  # tested on synthetic data
        rows.append((epsilon, np.mean(tv), np.std(tv), np.mean(accuracy), np.std(accuracy)))
    rows.append((np.inf, 0.0, 0.0, classifier_accuracy(private, test), 0.0))
    return pd.DataFrame(rows, columns=["epsilon", "tv_mean", "tv_std", "accuracy_mean", "accuracy_std"]).set_index("epsilon")''',
            "select_worst_query_solution": '''def select_worst_query(errors, epsilon, rng=None):
    rng = np.random.default_rng(rng)
    weights = np.exp(epsilon * np.asarray(errors, dtype=float) / 2)  # overflows for errors in the thousands
    return int(rng.choice(len(weights), p=weights / weights.sum()))''',
            "mwem_solution": mwem_with('''    for _ in range(rounds):
        chosen = select_worst_query(np.abs(queries @ synthetic - answers), epsilon / (2 * rounds), rng=rng)
        measurement = laplace_mech(answers[chosen], 1.0, epsilon / (2 * rounds), rng=rng)
        synthetic = multiplicative_weights_update(synthetic, queries[chosen], measurement)  # the new one only'''),
        },
        zero=("test_noisy_marginals_composition", "test_noisy_marginals_noise_on_counts", "test_sample_tree_empty_row",
              "test_synthesize_samples_consistent_marginals", "test_synthesize_reads_the_data_only_to_measure",
              "test_synthetic_utility_design", "test_select_worst_query_factor_two", "test_mwem_replays_the_measurements"),
        full=("test_marginal_public_domain", "test_consistent_marginals_valid", "test_consistent_marginals_projection",
              "test_sample_independent_columns", "test_sample_tree_follows_the_edges",
              "test_marginal_errors_total_variation", "test_multiplicative_weights_update", "test_mwem_budget_per_round"),
    ),
    Variant(
        "clipped_counts_sampled_with_the_noisy_total",
        {
            "synthesize_solution": REFERENCE_SYNTHESIZE_HEAD + '''    n = int(round(float(np.sum(consistent_marginals(noisy)[tuple(tree[0])]))))
    clipped = {key: np.clip(value, 0, None) for key, value in noisy.items()}  # clipped, not projected
    return sample_tree(clipped, tree, domain, n, rng=rng)''',
        },
        zero=("test_synthesize_samples_consistent_marginals",),
        full=tuple(t for t in ALL_TESTS if t != "test_synthesize_samples_consistent_marginals"),
    ),
    Variant(
        "bootstraps_the_private_table_assumes_a_chain_one_table_per_epsilon",
        {
            "synthesize_solution": REFERENCE_SYNTHESIZE_HEAD + '''    n = int(round(float(np.sum(consistent_marginals(noisy)[tuple(tree[0])]))))
    return data.sample(n, replace=True, random_state=rng.integers(2**31)).reset_index(drop=True)  # real rows''',
            "sample_tree_solution": sample_tree_with('''    previous = root
    for parent, child in tree:
        table = np.asarray(marginals[(parent, child)], dtype=float)
        drawn = np.zeros(n, dtype=int)
        for value in range(table.shape[0]):
            rows = np.flatnonzero(codes[previous] == value)  # a chain: conditions on the last column drawn
            row = table[value]
            p = row / row.sum() if row.sum() > 0 else table.sum(axis=0) / table.sum()
            drawn[rows] = rng.choice(len(domain[child]), size=len(rows), p=p)
        codes[child] = drawn
        previous = child'''),
            "synthetic_utility_solution": '''def synthetic_utility(epsilons, trials, rng=None):
    rows = []
    for epsilon in epsilons:
        table = synthesize(private, epsilon, TREE, DOMAIN, rng=rng)  # one table, scored `trials` times
        tv = [marginal_errors(private, table, DOMAIN)["tv_distance"].mean() for _ in range(trials)]
        accuracy = [classifier_accuracy(table, test) for _ in range(trials)]
        rows.append((epsilon, np.mean(tv), np.std(tv), np.mean(accuracy), np.std(accuracy)))
    rows.append((np.inf, 0.0, 0.0, classifier_accuracy(private, test), 0.0))
    return pd.DataFrame(rows, columns=["epsilon", "tv_mean", "tv_std", "accuracy_mean", "accuracy_std"]).set_index("epsilon")''',
        },
        zero=("test_synthesize_samples_consistent_marginals", "test_synthesize_reads_the_data_only_to_measure",
              "test_sample_tree_follows_the_edges", "test_synthetic_utility_design"),
        full=("test_marginal_public_domain", "test_noisy_marginals_composition", "test_noisy_marginals_noise_on_counts",
              "test_consistent_marginals_valid", "test_consistent_marginals_projection",
              "test_sample_independent_columns", "test_sample_tree_empty_row", "test_marginal_errors_total_variation",
              "test_select_worst_query_factor_two", "test_multiplicative_weights_update", "test_mwem_budget_per_round",
              "test_mwem_replays_the_measurements"),
    ),
    Variant(
        "fixed_seed_when_rng_is_none",
        {
            "noisy_marginals_solution": noisy_marginals_with('''        counts = marginal(data, columns, domain)
        result[tuple(columns)] = counts + rng.laplace(0.0, len(marginals) / epsilon, size=counts.shape)''',
                make_rng="np.random.default_rng(0 if rng is None else rng)"),
            "sample_independent_solution": '''def sample_independent(marginals, domain, n, rng=None):
    rng = np.random.default_rng(0 if rng is None else rng)
    return pd.DataFrame({column: np.asarray(values)[rng.choice(len(values), size=n,
                                                                p=np.asarray(marginals[(column,)]) / np.sum(marginals[(column,)]))]
                         for column, values in domain.items()})''',
            "select_worst_query_solution": '''def select_worst_query(errors, epsilon, rng=None):
    rng = np.random.default_rng(0 if rng is None else rng)
    exponents = epsilon * np.asarray(errors, dtype=float) / 2
    weights = np.exp(exponents - exponents.max())
    return int(rng.choice(len(weights), p=weights / weights.sum()))''',
        },
        zero=("test_noisy_marginals_composition", "test_sample_independent_columns", "test_select_worst_query_factor_two"),
        full=("test_noisy_marginals_noise_on_counts", "test_marginal_public_domain", "test_sample_tree_follows_the_edges",
              "test_mwem_budget_per_round"),
    ),
    Variant(
        "outside_values_counted_negative_total_kept_size_truncated_laplace_noisy_max",
        {
            # get_indexer's -1 for a value outside the domain, counted by np.add.at in the last cell
            "marginal_solution": '''def marginal(data, columns, domain):
    columns = tuple(columns)
    counts = np.zeros(tuple(len(domain[c]) for c in columns), dtype=int)
    np.add.at(counts, tuple(pd.Index(domain[c]).get_indexer(data[c]) for c in columns), 1)
    return counts''',
            "consistent_marginals_solution": '''def consistent_marginals(noisy):
    sizes = {key: np.size(table) for key, table in noisy.items()}
    n_hat = sum(np.sum(noisy[key]) / sizes[key] for key in noisy) / sum(1 / k for k in sizes.values())  # may be < 0
    return {key: project_to_simplex(np.ravel(table), n_hat).reshape(np.shape(table)) for key, table in noisy.items()}''',
            "synthesize_solution": REFERENCE_SYNTHESIZE_HEAD + '''    consistent = consistent_marginals(noisy)
    return sample_tree(consistent, tree, domain, int(np.sum(consistent[tuple(tree[0])])), rng=rng)  # truncated''',
            # report-noisy-max with Laplace noise: private, but not the exponential mechanism's probabilities
            "select_worst_query_solution": '''def select_worst_query(errors, epsilon, rng=None):
    rng = np.random.default_rng(rng)
    errors = np.asarray(errors, dtype=float)
    return int(np.argmax(errors + rng.laplace(0.0, 2 / epsilon, size=errors.shape)))''',
        },
        zero=("test_marginal_public_domain", "test_consistent_marginals_valid",
              "test_synthesize_reads_the_data_only_to_measure", "test_select_worst_query_factor_two"),
        full=tuple(t for t in ALL_TESTS if t not in {
            "test_marginal_public_domain", "test_consistent_marginals_valid",
            "test_synthesize_reads_the_data_only_to_measure", "test_select_worst_query_factor_two"}),
    ),
    Variant(
        "rng_ignored_numpy_global_generator",
        {
            "noisy_marginals_solution": noisy_marginals_with('''        counts = marginal(data, columns, domain)
        result[tuple(columns)] = counts + np.random.laplace(0.0, len(marginals) / epsilon, size=counts.shape)'''),
            "sample_independent_solution": '''def sample_independent(marginals, domain, n, rng=None):
    columns = {}
    for column, values in domain.items():
        counts = np.asarray(marginals[(column,)], dtype=float)
        columns[column] = np.asarray(values)[np.random.choice(len(values), size=n, p=counts / counts.sum())]
    return pd.DataFrame(columns)''',
            "sample_tree_solution": sample_tree_with('''    rng = np.random.default_rng()  # a fresh generator: the rng given is ignored
    for parent, child in tree:
        table = np.asarray(marginals[(parent, child)], dtype=float)
        child_margin = table.sum(axis=0) / table.sum()
        drawn = np.zeros(n, dtype=int)
        for value in range(len(domain[parent])):
            rows = np.flatnonzero(codes[parent] == value)
            row = table[value]
            drawn[rows] = rng.choice(len(domain[child]), size=len(rows), p=row / row.sum() if row.sum() > 0 else child_margin)
        codes[child] = drawn'''),
            "synthesize_solution": '''def synthesize(data, epsilon, tree, domain, rng=None):
    consistent = consistent_marginals(noisy_marginals(data, list(tree), epsilon, domain))  # no rng handed on
    return sample_tree(consistent, tree, domain, int(round(np.sum(consistent[tuple(tree[0])]))))''',
            "select_worst_query_solution": '''def select_worst_query(errors, epsilon, rng=None):
    exponents = epsilon * np.asarray(errors, dtype=float) / 2
    weights = np.exp(exponents - exponents.max())
    return int(np.random.choice(len(weights), p=weights / weights.sum()))''',
            "mwem_solution": mwem_with('''    measured = []
    for _ in range(rounds):
        chosen = select_worst_query(np.abs(queries @ synthetic - answers), epsilon / (2 * rounds))  # no rng handed on
        measured.append((chosen, laplace_mech(answers[chosen], 1.0, epsilon / (2 * rounds))))
        for query, measurement in measured:
            synthetic = multiplicative_weights_update(synthetic, queries[query], measurement)'''),
        },
        zero=("test_noisy_marginals_composition", "test_sample_independent_columns", "test_sample_tree_follows_the_edges",
              "test_synthesize_samples_consistent_marginals", "test_select_worst_query_factor_two",
              "test_mwem_replays_the_measurements", "test_mwem_budget_per_round"),  # mwem's check_uses_rng too
        full=("test_marginal_public_domain", "test_noisy_marginals_noise_on_counts", "test_consistent_marginals_valid",
              "test_consistent_marginals_projection", "test_sample_tree_empty_row",
              "test_synthesize_reads_the_data_only_to_measure", "test_marginal_errors_total_variation",
              "test_synthetic_utility_design", "test_multiplicative_weights_update"),
    ),
    mocks_that_equal_everything(
        ["marginal", "noisy_marginals", "consistent_marginals", "sample_independent", "sample_tree", "synthesize",
         "marginal_errors", "synthetic_utility", "select_worst_query", "multiplicative_weights_update", "mwem"],
        {"__lt__": True},
        zero=ALL_TESTS,
    ),
    Variant(
        "delegates_to_dplib",
        {
            "marginal_solution": "marginal = dplib.marginal",
            "noisy_marginals_solution": (
                "def noisy_marginals(data, marginals, epsilon, domain, rng=None):\n"
                "    return dplib.noisy_marginals(data, marginals, epsilon, domain, rng=rng)"
            ),
            "consistent_marginals_solution": "from dplib import consistent_marginals",
            "sample_independent_solution": "sample_independent = dplib.sample_independent",
            "sample_tree_solution": "sample_tree = dplib.sample_tree",
            "synthesize_solution": "synthesize = dplib.synthesize",
            "marginal_errors_solution": "marginal_errors = dplib.marginal_errors",
            "synthetic_utility_solution": (
                "def synthetic_utility(epsilons, trials, rng=None):\n"
                "    return dplib.synthetic_utility(epsilons, trials, rng=rng, train=private, test=test)"
            ),
            "select_worst_query_solution": "select_worst_query = dplib.select_worst_query",
            "multiplicative_weights_update_solution": "multiplicative_weights_update = dplib.multiplicative_weights_update",
            "mwem_solution": "mwem = dplib.mwem",
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
        "test_noisy_marginals_composition",
        "test_sample_independent_columns",
        "test_sample_tree_follows_the_edges",
        "test_synthesize_samples_consistent_marginals",
        "test_select_worst_query_factor_two",
        "test_mwem_budget_per_round",
    ),
    uses_rng=(
        "test_noisy_marginals_composition",
        "test_sample_independent_columns",
        "test_sample_tree_follows_the_edges",
        "test_synthesize_samples_consistent_marginals",
        "test_select_worst_query_factor_two",
        "test_mwem_budget_per_round",
        "test_mwem_replays_the_measurements",
    ),
)
