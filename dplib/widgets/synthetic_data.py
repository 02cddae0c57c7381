"""Lecture 10's explorer: a whole private table released as synthetic data, and what survives.

:func:`synthetic_view` measures Adult's five columns (:func:`dplib.adult_synthetic_data`) with a
budget epsilon, either as 1-way marginals (independent columns) or as the 2-way marginals of a
tree (:data:`dplib.ADULT_TREE`), samples a synthetic table from them and compares every 2-way
marginal with the real one (:func:`dplib.marginal_errors`). :class:`SyntheticDataExplorer` draws
the ten errors and the true and synthetic shares of one chosen pair of columns.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np

from dplib._validation import require_epsilon
from dplib.synthetic.marginals import consistent_marginals, marginal, marginal_errors, noisy_marginals
from dplib.synthetic.sampling import ADULT_DOMAIN, ADULT_TREE, cached_adult_tables, sample_independent, synthesize
from dplib.widgets._render import LIMIT_STEPS, SLIDER_STYLE, Explorer, epsilon_slider, nice_ceiling, seed_box

__all__ = ["MEASUREMENTS", "PAIRS", "SyntheticView", "synthetic_view", "SyntheticDataExplorer"]

#: What the generator is built from: name -> description.
MEASUREMENTS = {"one_way": "1-way marginals (independent columns)", "tree": "2-way marginals along the tree"}
#: Every pair of columns, in the order of :func:`dplib.marginal_errors`.
PAIRS = tuple(itertools.combinations(ADULT_DOMAIN, 2))


@dataclass(frozen=True)
class SyntheticView:
    """One synthetic Adult table against the real one.

    ``tv[i]`` is the total variation distance of the 2-way marginal of ``PAIRS[i]``;
    ``true_shares`` and ``synthetic_shares`` are the shares of the chosen ``pair`` (rows: values of
    its first column, columns: of its second).
    """

    epsilon: float
    measured: str
    pair: tuple
    seed: int
    n_real: int
    n_synthetic: int
    tv: np.ndarray
    true_shares: np.ndarray
    synthetic_shares: np.ndarray

    @property
    def mean_tv(self) -> float:
        """The mean error over the ten 2-way marginals."""
        return float(self.tv.mean())

    @property
    def pair_tv(self) -> float:
        """The error of the chosen pair."""
        return float(self.tv[PAIRS.index(self.pair)])

    @property
    def marginals_measured(self) -> list:
        """The marginals the generator was built from."""
        return [(c,) for c in ADULT_DOMAIN] if self.measured == "one_way" else list(ADULT_TREE)


def synthetic_view(epsilon: float = 1.0, measured: str = "tree", pair=("education", "income"), *,
                   seed: int = 0) -> SyntheticView:
    """Synthesize Adult at ``epsilon`` from the ``measured`` marginals and compare it with the real table.

    ``measured`` is ``"one_way"`` (the five 1-way marginals, epsilon / 5 each, independent columns)
    or ``"tree"`` (:func:`dplib.synthesize` over :data:`dplib.ADULT_TREE`, epsilon / 4 per edge).
    The noise and the sampling come from ``numpy.random.default_rng(seed)``. Neighbours: add/remove.

    Examples
    --------
    >>> tree, independent = synthetic_view(1.0, "tree", seed=3), synthetic_view(1.0, "one_way", seed=3)
    >>> tree.pair_tv < 0.01 < independent.pair_tv
    True
    """
    epsilon = require_epsilon(epsilon)
    if measured not in MEASUREMENTS:
        raise ValueError(f"measured must be one of {list(MEASUREMENTS)}, got {measured!r}")
    pair = tuple(pair)
    if pair not in PAIRS:
        raise ValueError(f"pair must be one of {list(PAIRS)}, got {pair!r}")
    private, _ = cached_adult_tables()
    rng = np.random.default_rng(seed)
    if measured == "tree":
        synthetic = synthesize(private, epsilon, ADULT_TREE, ADULT_DOMAIN, rng=rng)
    else:
        one_way = consistent_marginals(noisy_marginals(private, [(c,) for c in ADULT_DOMAIN], epsilon, ADULT_DOMAIN,
                                                       rng=rng))
        n_hat = int(round(float(next(iter(one_way.values())).sum())))
        synthetic = sample_independent(one_way, ADULT_DOMAIN, n_hat, rng=rng)
    tv = marginal_errors(private, synthetic, ADULT_DOMAIN)["tv_distance"].to_numpy()
    true_shares = marginal(private, pair, ADULT_DOMAIN) / len(private)
    synthetic_shares = marginal(synthetic, pair, ADULT_DOMAIN) / max(len(synthetic), 1)
    return SyntheticView(epsilon, measured, pair, int(seed), len(private), len(synthetic), tv, true_shares,
                         synthetic_shares)


def _pair_label(pair) -> str:
    return f"{pair[0]} x {pair[1]}"


class SyntheticDataExplorer(Explorer):
    """A synthetic Adult table: epsilon, the marginals it is built from, and the pair of columns pictured.

    Left: the error (total variation distance) of each of the ten 2-way marginals; the tree's edges
    in a darker colour. Right: the shares of the chosen pair in the real and in the synthetic table,
    on one colour scale.

    Examples
    --------
    >>> explorer = SyntheticDataExplorer(epsilon=1.0)
    >>> explorer.measured.value = "one_way"
    >>> explorer.view.measured, explorer.view.pair_tv > 0.05
    ('one_way', True)
    """

    figsize = (7.6, 4.0)

    def __init__(self, epsilon: float = 1.0, measured: str = "tree", pair=("education", "income"), *, seed: int = 0):
        if tuple(pair) not in PAIRS:
            raise ValueError(f"pair must be one of {list(PAIRS)}, got {pair!r}")
        self.epsilon = epsilon_slider(epsilon, low=0.01, high=10.0)
        self.measured = widgets.Dropdown(options=[(label, name) for name, label in MEASUREMENTS.items()],
                                         value=measured, description="measured", style=SLIDER_STYLE,
                                         layout={"width": "330px"})
        self.pair = widgets.Dropdown(options=[(_pair_label(p), p) for p in PAIRS], value=tuple(pair),
                                     description="pictured", style=SLIDER_STYLE, layout={"width": "250px"})
        self.seed = seed_box(seed)
        self._pictured = None
        super().__init__({"epsilon": self.epsilon, "measured": self.measured, "pair": self.pair, "seed": self.seed})

    def _compute(self) -> SyntheticView:
        return synthetic_view(self.epsilon.value, self.measured.value, self.pair.value, seed=self.seed.value)

    def _build(self, view: SyntheticView) -> None:
        self.figure.subplots_adjust(left=0.2, right=0.98, top=0.87, bottom=0.3, wspace=0.4)
        grid = self.figure.add_gridspec(1, 3, width_ratios=[1.5, 1, 1])
        self.ax_errors = self.figure.add_subplot(grid[0])
        self.ax_true = self.figure.add_subplot(grid[1])
        self.ax_synthetic = self.figure.add_subplot(grid[2])
        edges = {frozenset(edge) for edge in ADULT_TREE}
        colours = ["C0" if frozenset(p) in edges else "C9" for p in PAIRS]
        self.bars = self.ax_errors.barh(np.arange(len(PAIRS)), view.tv, color=colours)
        self.ax_errors.set_yticks(np.arange(len(PAIRS)), [_pair_label(p) for p in PAIRS], fontsize=7)
        self.ax_errors.invert_yaxis()
        self.ax_errors.set_xlabel("TV distance of the 2-way marginal", fontsize=8)
        self.ax_errors.set_title("error of every 2-way marginal\n(dark: the tree's edges)", fontsize=8)
        self.images = [ax.imshow(shares, aspect="auto", cmap="viridis", interpolation="nearest")
                       for ax, shares in ((self.ax_true, view.true_shares), (self.ax_synthetic, view.synthetic_shares))]
        self.ax_true.set_title("real shares", fontsize=8)
        self.ax_synthetic.set_title("synthetic shares", fontsize=8)
        self.animated = [*self.bars.patches, *self.images]

    def _picture_axes(self, pair) -> None:
        """Ticks and labels of the two pictures for a new pair (part of the cached background)."""
        first, second = pair
        for ax in (self.ax_true, self.ax_synthetic):
            ax.set_xticks(np.arange(len(ADULT_DOMAIN[second])), ADULT_DOMAIN[second], rotation=90, fontsize=6)
            ax.set_xlabel(second, fontsize=8)
        self.ax_true.set_yticks(np.arange(len(ADULT_DOMAIN[first])), ADULT_DOMAIN[first], fontsize=6)
        self.ax_true.set_ylabel(first, fontsize=8)
        self.ax_synthetic.set_yticks([])
        self._backgrounds.clear()  # same limits, other labels: the cached backgrounds are stale
        self._pictured = pair

    def _draw(self, view: SyntheticView) -> None:
        for bar, value in zip(self.bars.patches, view.tv):
            bar.set_width(value)
        self.ax_errors.set_xlim(0, nice_ceiling(1.05 * float(view.tv.max()), steps=LIMIT_STEPS))
        top = float(view.true_shares.max())
        for image, shares in zip(self.images, (view.true_shares, view.synthetic_shares)):
            image.set_data(shares)
            image.set_extent((-0.5, shares.shape[1] - 0.5, shares.shape[0] - 0.5, -0.5))
            image.set_clim(0, top)
        for ax, shares in ((self.ax_true, view.true_shares), (self.ax_synthetic, view.synthetic_shares)):
            ax.set_xlim(-0.5, shares.shape[1] - 0.5)
            ax.set_ylim(shares.shape[0] - 0.5, -0.5)
        if view.pair != self._pictured:
            self._picture_axes(view.pair)

    def _readout(self, view: SyntheticView) -> str:
        measured = view.marginals_measured
        return (f"epsilon = {view.epsilon:.3g} over {len(measured)} marginals ({MEASUREMENTS[view.measured]}, "
                f"epsilon / {len(measured)} each; add/remove neighbours) &nbsp;|&nbsp; {view.n_synthetic:,} synthetic "
                f"rows for {view.n_real:,} real ones &nbsp;|&nbsp; mean TV over the 10 pairs {view.mean_tv:.4f}, "
                f"{_pair_label(view.pair)}: {view.pair_tv:.4f}")
