"""Lectures 04 and 05: k-ary randomized response estimated back, with error bars.

:func:`estimation_view` computes what is shown; :class:`EstimationExplorer` draws it.
The default population is age x sex on Adult (:func:`dplib.datasets.age_sex_categories`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np

from dplib.accounting.channels import krr_probabilities
from dplib.datasets import age_sex_categories
from dplib.estimation.experiments import apportion
from dplib.estimation.kary_rr import krr_count_std_unchecked, project_to_simplex, unbias_krr_counts
from dplib.mechanisms.kary_randomized_response import k_rand_resp_unchecked
from dplib.widgets._render import LIMIT_STEPS, SLIDER_LAYOUT, SLIDER_STYLE, Explorer, epsilon_slider, nice_ceiling, seed_box

__all__ = ["EstimationView", "estimation_view", "adult_age_sex_counts", "AGE_SEX_LABELS", "EstimationExplorer"]

#: Names of the four categories of :func:`dplib.datasets.age_sex_categories` (age split at the median, 37).
AGE_SEX_LABELS = ("<=37, female", "<=37, male", ">37, female", ">37, male")


@functools.cache
def adult_age_sex_counts() -> tuple[int, ...]:
    """True counts of the four age x sex categories on the clean Adult rows (read once).

    Examples
    --------
    >>> adult_age_sex_counts()
    (8196, 14831, 6499, 15696)
    """
    counts = age_sex_categories().value_counts().sort_index()
    return tuple(int(c) for c in counts.reindex(range(4), fill_value=0))


@dataclass(frozen=True)
class EstimationView:
    """What the estimation explorer shows for one (epsilon, n): true, raw, estimated, clipped, projected counts."""

    epsilon: float
    n: int
    p: float
    q: float
    true_counts: np.ndarray
    report_counts: np.ndarray
    estimates: np.ndarray
    std: np.ndarray
    clipped: np.ndarray
    projected: np.ndarray

    @property
    def errors(self) -> dict[str, float]:
        """L1 distance to the true counts of the raw report counts and of each estimate."""
        return {
            name: float(np.abs(values - self.true_counts).sum())
            for name, values in (
                ("raw reports", self.report_counts),
                ("unbiased", self.estimates),
                ("clipped", self.clipped),
                ("projected", self.projected),
            )
        }


def estimation_view(epsilon: float, n: int, *, weights=None, rng=None) -> EstimationView:
    """Randomize ``n`` people with k-RR (categories in proportion to ``weights``) and estimate the counts back.

    ``weights`` defaults to :func:`adult_age_sex_counts`. The reports are those of
    :func:`dplib.k_rand_resp` with the same ``rng``, the estimates
    :func:`dplib.estimate_krr_counts` and the error bars :func:`dplib.krr_count_std`,
    with epsilon checked and ``(p, q)`` computed once (:func:`dplib.krr_probabilities`).
    Negative estimates are fixed two ways: clipped to 0 (the total grows past n) or
    projected onto the simplex (:func:`dplib.project_to_simplex`).

    Examples
    --------
    >>> view = estimation_view(1.0, 1000, rng=0)
    >>> int(view.true_counts.sum()), round(float(view.projected.sum()), 6)
    (1000, 1000.0)
    """
    true_counts = apportion(adult_age_sex_counts() if weights is None else weights, n)
    k = true_counts.size
    p, q = krr_probabilities(k, epsilon)  # checks k and epsilon
    people = np.repeat(np.arange(k), true_counts)
    reports = k_rand_resp_unchecked(people, k, p, np.random.default_rng(rng))
    report_counts = np.bincount(reports, minlength=k)
    estimates = unbias_krr_counts(report_counts, p, q)
    return EstimationView(
        epsilon=float(epsilon),
        n=int(n),
        p=p,
        q=q,
        true_counts=true_counts,
        report_counts=report_counts,
        estimates=estimates,
        std=krr_count_std_unchecked(true_counts, p, q),
        clipped=np.maximum(estimates, 0.0),
        projected=project_to_simplex(estimates, n),
    )


class EstimationExplorer(Explorer):
    """k-ary randomized response estimated back: epsilon and n sliders (update on release).

    Bars per category: the true count, the raw count of reports (biased toward n/k),
    the unbiased estimate with +/- 2 standard deviation error bars, the estimate with
    negatives clipped to 0, and the estimate projected onto the simplex.

    Controls: ``epsilon``, ``n``, ``seed``.

    Examples
    --------
    >>> explorer = EstimationExplorer(epsilon=1.0, n=1000)
    >>> explorer.n.value = 2000
    >>> int(explorer.view.true_counts.sum())
    2000
    """

    figsize = (7.2, 3.2)
    series = ("true", "raw reports", "unbiased +/- 2 sd", "clipped at 0", "projected")

    def __init__(self, epsilon: float = 1.0, n: int = 1000, *, weights=None, labels=None, seed: int = 0):
        self.weights = adult_age_sex_counts() if weights is None else weights
        self.labels = AGE_SEX_LABELS if labels is None and weights is None else labels
        self.epsilon = epsilon_slider(epsilon, low=0.05, high=10.0, continuous=False)
        self.n = widgets.IntSlider(value=n, min=50, max=50_000, step=50, description="n (people)",
                                   continuous_update=False, style=SLIDER_STYLE, layout=SLIDER_LAYOUT)
        self.seed = seed_box(seed)
        super().__init__({"epsilon": self.epsilon, "n": self.n, "seed": self.seed})

    def _compute(self) -> EstimationView:
        return estimation_view(self.epsilon.value, self.n.value, weights=self.weights,
                               rng=np.random.default_rng(self.seed.value))

    def _heights(self, view: EstimationView) -> list[np.ndarray]:
        return [view.true_counts, view.report_counts, view.estimates, view.clipped, view.projected]

    def _build(self, view: EstimationView) -> None:
        self.figure.subplots_adjust(left=0.1, right=0.74, top=0.9, bottom=0.12)
        ax = self.ax = self.figure.add_subplot()
        k = view.true_counts.size
        width = 0.16
        self.positions = np.arange(k)
        self.offsets = (np.arange(len(self.series)) - (len(self.series) - 1) / 2) * width
        colors = ["0.25", "0.7", "C0", "C3", "C2"]
        self.bars = [
            ax.bar(self.positions + offset, heights, width=width, color=color, label=label)
            for offset, heights, color, label in zip(self.offsets, self._heights(view), colors, self.series)
        ]
        x = self.positions + self.offsets[2]
        low, high = view.estimates - 2 * view.std, view.estimates + 2 * view.std
        self.error_bars = ax.vlines(x, low, high, color="black", linewidth=1.2)
        self.zero_line = ax.axhline(0, color="black", linewidth=0.8)
        labels = [str(i) for i in range(k)] if self.labels is None else list(self.labels)[:k]
        ax.set_xticks(self.positions, labels, fontsize=8)
        ax.set_ylabel("people")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
        self.title = ax.set_title("", fontsize=10)
        self.animated = [bar for bars in self.bars for bar in bars] + [self.error_bars, self.title]

    def _draw(self, view: EstimationView) -> None:
        for bars, heights in zip(self.bars, self._heights(view)):
            for bar, height in zip(bars, heights):
                bar.set_height(height)
        x = self.positions + self.offsets[2]
        low, high = view.estimates - 2 * view.std, view.estimates + 2 * view.std
        self.error_bars.set_segments([[(xi, lo), (xi, hi)] for xi, lo, hi in zip(x, low, high)])
        top = nice_ceiling(1.05 * max(high.max(), view.report_counts.max()), steps=LIMIT_STEPS)
        bottom = -nice_ceiling(-1.05 * low.min(), steps=LIMIT_STEPS) if low.min() < 0 else -0.02 * top
        self.ax.set_ylim(bottom, top)
        k = view.true_counts.size
        self.title.set_text(f"k-RR, k = {k}: truth kept with p = {view.p:.2f}, each lie q = {view.q:.2f}")

    def _readout(self, view: EstimationView) -> str:
        errors = ", ".join(f"{name} {value:,.0f}" for name, value in view.errors.items())
        totals = f"clipped {view.clipped.sum():,.0f}, projected {view.projected.sum():,.0f} (n = {view.n:,})"
        return f"L1 error: {errors} &nbsp;|&nbsp; totals: {totals}"
