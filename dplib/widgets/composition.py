"""Lecture 07's explorer: the averaging attack, k queries at epsilon each, against a budget.

A pure :func:`averaging_view` computes everything shown: k noisy answers to the same count,
the attacker's running mean, its two-standard-deviation band, the total epsilon, and how
many of the k queries a :class:`~dplib.PrivacyAccountant` with the given budget answers
before refusing. :class:`AveragingExplorer` is the thin widget over it, built on the shared
explorer base of :mod:`dplib.widgets._render`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np

from dplib._validation import require_epsilon, require_finite, require_positive_int, require_sensitivity
from dplib.accounting.budgets import BudgetExceededError, PrivacyAccountant, averaging_attack_tail, sequential_epsilon
from dplib.widgets._render import SLIDER_LAYOUT, SLIDER_STYLE, Explorer, nice_ceiling, seed_box

__all__ = ["AveragingView", "averaging_view", "AveragingExplorer", "EPSILONS", "BUDGETS"]

MAX_QUERIES = 2_000
#: The choices of the epsilon and budget sliders: round numbers, so k x epsilon is easy to check by hand.
EPSILONS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
BUDGETS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)


@dataclass(frozen=True)
class AveragingView:
    """What the averaging-attack explorer shows for one setting of its controls."""

    k: int
    epsilon: float
    budget: float
    sensitivity: float
    true_value: float
    answers: np.ndarray  # the k noisy answers, in the order asked
    running_mean: np.ndarray  # mean of the first j answers, j = 1..k
    band: np.ndarray  # two standard deviations of that mean: 2 sqrt(2) b / sqrt(j)
    total_epsilon: float  # sequential composition of the k answers
    answered: int  # queries the accountant answers before its first refusal
    spent: float  # epsilon the accountant charged
    within_one: float  # P(|mean of k answers - truth| < 1)

    @property
    def refused(self) -> int:
        return self.k - self.answered

    @property
    def attack_error(self) -> float:
        """How far the mean of all k answers is from the truth (no budget)."""
        return float(abs(self.running_mean[-1] - self.true_value))

    @property
    def budgeted_error(self) -> float:
        """How far the mean of the answers the accountant allowed is from the truth (nan if none)."""
        if self.answered == 0:
            return math.nan
        return float(abs(self.running_mean[self.answered - 1] - self.true_value))


def averaging_view(k: int, epsilon: float, budget: float, *, sensitivity: float = 1.0, true_value: float = 100.0,
                   rng=None) -> AveragingView:
    r"""The averaging attack on one count, k answers at ``epsilon`` each, against an accountant with ``budget``.

    The answers are drawn one after another from ``rng`` (a Generator, a seed or None), so with the same seed
    raising k adds answers and keeps the earlier ones. The mean of j answers has standard deviation :math:`\sqrt{2}\, b / \sqrt{j}`, :math:`b =
    \Delta f / \varepsilon`; by sequential composition the k answers cost :math:`k\varepsilon`.

    Examples
    --------
    >>> view = averaging_view(k=50, epsilon=0.1, budget=1.0)
    >>> view.answered, view.refused, round(view.total_epsilon, 6)
    (10, 40, 5.0)
    """
    k = require_positive_int(k, "k")
    epsilon = require_epsilon(epsilon)
    sensitivity = require_sensitivity(sensitivity)
    true_value = require_finite(true_value, "true_value")
    scale = sensitivity / epsilon
    answers = true_value + np.random.default_rng(rng).laplace(0.0, scale, size=k)
    j = np.arange(1, k + 1)
    accountant = PrivacyAccountant(budget)
    answered = 0
    for _ in range(k):
        try:
            accountant.spend(epsilon)
        except BudgetExceededError:
            break
        answered += 1
    return AveragingView(
        k=k, epsilon=epsilon, budget=accountant.budget, sensitivity=sensitivity, true_value=true_value,
        answers=answers, running_mean=np.cumsum(answers) / j, band=2 * math.sqrt(2) * scale / np.sqrt(j),
        total_epsilon=sequential_epsilon(np.full(k, epsilon)), answered=answered, spent=accountant.spent,
        within_one=1.0 - averaging_attack_tail(1.0, sensitivity, epsilon, k),
    )


def _choice_slider(description: str, value: float, options: tuple[float, ...]) -> widgets.SelectionSlider:
    """A slider over round numbers (a log slider would show 0.501 for 0.5 once the browser snaps it to its grid)."""
    if value not in options:
        raise ValueError(f"{description} must be one of {list(options)}, got {value!r}")
    return widgets.SelectionSlider(options=list(options), value=value, description=description, style=SLIDER_STYLE,
                                   layout=SLIDER_LAYOUT)


class AveragingExplorer(Explorer):
    """Averaging attack and budget: sliders for k, epsilon per query and the budget.

    The figure shows every noisy answer (dots), the attacker's running mean (line) inside the
    truth +/- two standard deviations of the mean (band), and the queries the accountant refuses
    (shaded). The readout gives the total epsilon without a budget and what the accountant says.

    Controls: ``k`` (1 to 2,000), ``epsilon`` (one of :data:`EPSILONS`), ``budget`` (one of
    :data:`BUDGETS`), ``seed``. Set ``.value`` on one and read ``.view``.

    Examples
    --------
    >>> explorer = AveragingExplorer(k=100, epsilon=0.5, budget=2.0)
    >>> explorer.view.answered
    4
    >>> explorer.budget.value = 10.0
    >>> explorer.view.answered
    20
    """

    figsize = (6.4, 3.4)

    def __init__(self, k: int = 200, epsilon: float = 0.5, budget: float = 5.0, *, true_value: float = 100.0,
                 sensitivity: float = 1.0, seed: int = 0):
        self.true_value, self.sensitivity = float(true_value), float(sensitivity)
        self.k = widgets.IntSlider(value=k, min=1, max=MAX_QUERIES, step=1, description="k queries", style=SLIDER_STYLE,
                                   layout=SLIDER_LAYOUT)
        self.epsilon = _choice_slider("epsilon per query", epsilon, EPSILONS)
        self.budget = _choice_slider("budget", budget, BUDGETS)
        self.seed = seed_box(seed)
        super().__init__({"k": self.k, "epsilon": self.epsilon, "budget": self.budget, "seed": self.seed})

    def _compute(self) -> AveragingView:
        return averaging_view(self.k.value, self.epsilon.value, self.budget.value, sensitivity=self.sensitivity,
                              true_value=self.true_value, rng=np.random.default_rng(self.seed.value))

    def _build(self, view: AveragingView) -> None:
        self.figure.subplots_adjust(left=0.12, right=0.97, top=0.88, bottom=0.15)
        ax = self.ax = self.figure.subplots()
        j = np.arange(1, view.k + 1)
        self.band = ax.fill_between(j, view.true_value - view.band, view.true_value + view.band, color="C0", alpha=0.2,
                                    label="truth +/- 2 std of the mean")
        (self.dots,) = ax.plot(j, view.answers, ".", color="gray", markersize=2, alpha=0.5, label="one noisy answer")
        (self.mean_line,) = ax.plot(j, view.running_mean, color="C0", linewidth=1.5, label="attacker's running mean")
        ax.axhline(view.true_value, color="black", linewidth=0.8)
        self.refused_span = ax.axvspan(1, 1, color="C3", alpha=0.12, label="refused by the accountant")
        ax.set_xscale("log")
        ax.set_xlabel("queries asked")
        ax.set_ylabel("answer")
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=2, fontsize=7, frameon=False, borderaxespad=0.2)
        self.animated = [self.band, self.refused_span, self.dots, self.mean_line]

    def _draw(self, view: AveragingView) -> None:
        j = np.arange(1, view.k + 1)
        self.band.set_data(j, view.true_value - view.band, view.true_value + view.band)
        self.dots.set_data(j, view.answers)
        self.mean_line.set_data(j, view.running_mean)
        right = nice_ceiling(max(view.k, 2) * 1.05)  # snapped, so most moves of k reuse the cached background
        self.refused_span.set_x(view.answered + 0.5 if view.refused else right)
        self.refused_span.set_width(right - view.answered - 0.5 if view.refused else 0)
        scale = view.sensitivity / view.epsilon
        self.ax.set_xlim(0.9, right)
        self.ax.set_ylim(view.true_value - 5 * scale, view.true_value + 5 * scale)

    def _readout(self, view: AveragingView) -> str:
        allowed = (f"answers {view.answered} and refuses {view.refused}; their mean is off by "
                   f"{view.budgeted_error:.3g}" if view.answered else "refuses every query")
        return (f"{view.k} answers at epsilon {view.epsilon:.3g}: mean off by {view.attack_error:.3g}, "
                f"P(within 1 of the truth) = {view.within_one:.2f}, total epsilon {view.total_epsilon:.3g}"
                f"<br>accountant with budget {view.budget:.3g}: {allowed} (spent {view.spent:.3g})")
