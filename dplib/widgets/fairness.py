"""Lecture 06: the exponential mechanism per group, and who pays for the noise.

:func:`fairness_view` computes what is shown; :class:`FairnessExplorer` draws it.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
import pandas as pd

from dplib.mechanisms.fairness import group_outcome_probabilities
from dplib.figures import MARKERS, PALETTE
from dplib.widgets._render import SLIDER_LAYOUT, SLIDER_STYLE, Explorer, epsilon_slider

__all__ = ["SCORINGS", "FairnessView", "fairness_view", "FairnessExplorer"]


#: How the fairness explorer scores each value: label -> keyword arguments of group_outcome_probabilities.
SCORINGS = {
    "count (sensitivity 1)": {"score": "count"},
    "proportion (sensitivity 1/n)": {"score": "proportion"},
    "proportion, sensitivity 1 (a mistake)": {"score": "proportion", "sensitivity": 1.0},
}


@dataclass(frozen=True)
class FairnessView:
    """Per-group chance of the exponential mechanism reporting the majority value, at one epsilon and over a grid."""

    epsilon: float
    sizes: pd.Series
    minority_counts: pd.Series
    at_epsilon: pd.DataFrame  # index = group, columns = majority, minority
    curves: pd.DataFrame  # index = epsilon grid, columns = group: P(majority)

    @property
    def gap(self) -> float:
        """Largest minus smallest per-group chance of the truth (majority) at ``epsilon``."""
        majority = self.at_epsilon["majority"]
        return float(majority.max() - majority.min())


def fairness_view(
    sizes,
    base_rates,
    epsilon: float,
    *,
    scoring: str = "count (sensitivity 1)",
    epsilons=None,
) -> FairnessView:
    """Each group's chance that the exponential mechanism reports its true majority value.

    ``sizes`` and ``base_rates`` map group names to n and to the fraction of the group
    holding the rarer value (clipped to [0, 1/2]; the minority count is rounded).

    Examples
    --------
    >>> view = fairness_view({"Blue": 30, "Red": 70}, {"Blue": 1 / 30, "Red": 9 / 70}, 0.2)
    >>> view.at_epsilon["majority"].round(3).to_dict()
    {'Blue': 0.943, 'Red': 0.995}
    """
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {list(SCORINGS)}, got {scoring!r}")
    sizes = pd.Series(sizes, dtype=float).astype(int)
    rates = pd.Series(base_rates, dtype=float).reindex(sizes.index).clip(0.0, 0.5)
    minority = np.minimum(np.round(rates * sizes), sizes // 2).astype(int)
    grid = np.geomspace(0.01, 10.0, 61) if epsilons is None else np.asarray(epsilons, dtype=float)
    # one call for the grid and the current epsilon (its last row): one check, one computation
    table = group_outcome_probabilities(sizes, minority, np.append(grid, epsilon), **SCORINGS[scoring])
    at_epsilon = pd.DataFrame({"majority": table["majority"].iloc[-1], "minority": table["minority"].iloc[-1]})
    return FairnessView(float(epsilon), sizes, minority, at_epsilon, table["majority"].iloc[:-1])


class FairnessExplorer(Explorer):
    """The exponential mechanism per group: who pays for the noise.

    Each group reports its majority or minority value through the exponential mechanism
    (score = how many people hold the value). Left: each group's chance of the truth
    (the majority value) against epsilon, the current epsilon marked. Right: both
    outcomes' probabilities per group at the current epsilon.

    Controls: ``epsilon``; ``sizes[group]`` and ``base_rates[group]`` (fraction holding
    the rarer value) for each group; ``scoring`` (how the score and its sensitivity are set).

    Examples
    --------
    >>> explorer = FairnessExplorer()
    >>> explorer.sizes["Blue"].value = 300
    >>> int(explorer.view.minority_counts["Blue"])
    10
    """

    figsize = (7.2, 3.0)
    colors = PALETTE[:4]  # Okabe-Ito: no red against green

    def __init__(self, groups=None, epsilon: float = 0.1):
        groups = {"Blue": (30, 1 / 30), "Red": (70, 9 / 70)} if groups is None else dict(groups)
        if not 1 <= len(groups) <= len(self.colors):
            raise ValueError(f"groups must name 1 to {len(self.colors)} groups, got {len(groups)}")
        self.groups = list(groups)
        self.epsilon = epsilon_slider(epsilon, low=0.01, high=10.0)
        self.sizes = {
            name: widgets.IntSlider(value=size, min=2, max=500, description=f"{name} size",
                                    style=SLIDER_STYLE, layout=SLIDER_LAYOUT)
            for name, (size, _) in groups.items()
        }
        self.base_rates = {
            name: widgets.FloatSlider(value=rate, min=0.0, max=0.5, step=0.01, readout_format=".3f",
                                      description=f"{name} base rate", style=SLIDER_STYLE, layout=SLIDER_LAYOUT)
            for name, (_, rate) in groups.items()
        }
        self.scoring = widgets.Dropdown(options=list(SCORINGS), value=next(iter(SCORINGS)), description="score",
                                        style=SLIDER_STYLE, layout={"width": "320px"})
        controls = {"epsilon": self.epsilon}
        for name in self.groups:
            controls[f"{name} size"] = self.sizes[name]
            controls[f"{name} base rate"] = self.base_rates[name]
        controls["scoring"] = self.scoring
        super().__init__(controls)

    def _compute(self) -> FairnessView:
        return fairness_view(
            {name: slider.value for name, slider in self.sizes.items()},
            {name: slider.value for name, slider in self.base_rates.items()},
            self.epsilon.value,
            scoring=self.scoring.value,
        )

    def _build(self, view: FairnessView) -> None:
        self.figure.subplots_adjust(left=0.09, right=0.98, top=0.9, bottom=0.16, wspace=0.3)
        self.ax_curves, self.ax_bars = self.figure.subplots(1, 2, width_ratios=[1.4, 1])
        ax = self.ax_curves
        self.curves = {}
        self.markers = {}
        for name, color, marker, style in zip(self.groups, self.colors, MARKERS, ("-", "--", "-.", ":")):
            (self.curves[name],) = ax.plot(view.curves.index, view.curves[name], color=color, linestyle=style, label=name)
            (self.markers[name],) = ax.plot([view.epsilon], [view.at_epsilon.loc[name, "majority"]], marker, color=color)
        self.epsilon_line = ax.axvline(view.epsilon, color="black", linestyle=":", linewidth=1)
        ax.set_xscale("log")
        ax.set_ylim(0.45, 1.02)
        ax.set_xlabel("epsilon")
        ax.set_ylabel("P(report the majority value)", fontsize=9)
        ax.legend(loc="lower right", fontsize=8)
        ax = self.ax_bars
        g = len(self.groups)
        majority_x = 2.5 * np.arange(g)
        colors = list(self.colors[:g])
        self.majority_bars = ax.bar(majority_x, view.at_epsilon["majority"], width=0.9, color=colors)
        self.minority_bars = ax.bar(majority_x + 1, view.at_epsilon["minority"], width=0.9, color=colors, alpha=0.35,
                                    hatch="//")
        ax.set_xticks(np.r_[majority_x, majority_x + 1],
                      [f"{name}\ntruth" for name in self.groups] + [f"{name}\nwrong" for name in self.groups],
                      fontsize=8)
        ax.set_ylim(0, 1.12)
        ax.set_ylabel("probability", fontsize=9)
        self.bar_title = ax.set_title("", fontsize=10)
        self.bar_labels = [ax.text(x, 0, "", ha="center", va="bottom", fontsize=8)
                           for x in np.r_[majority_x, majority_x + 1]]
        self.animated = [*self.curves.values(), *self.markers.values(), self.epsilon_line, *self.majority_bars,
                         *self.minority_bars, *self.bar_labels, self.bar_title]

    def _draw(self, view: FairnessView) -> None:
        for name in self.groups:
            self.curves[name].set_ydata(view.curves[name])
            self.markers[name].set_data([view.epsilon], [view.at_epsilon.loc[name, "majority"]])
        self.epsilon_line.set_xdata([view.epsilon, view.epsilon])
        bars = [*self.majority_bars, *self.minority_bars]
        heights = [*view.at_epsilon.loc[self.groups, "majority"], *view.at_epsilon.loc[self.groups, "minority"]]
        for bar, label, height in zip(bars, self.bar_labels, heights):
            bar.set_height(height)
            label.set_y(height + 0.01)
            label.set_text(f"{height:.2f}")
        self.bar_title.set_text(f"at epsilon = {view.epsilon:.3g}")

    def _readout(self, view: FairnessView) -> str:
        groups = "; ".join(
            f"{name}: {view.sizes[name]} people, {view.minority_counts[name]} with the rarer value, "
            f"truth reported with probability {view.at_epsilon.loc[name, 'majority']:.3f}"
            for name in self.groups
        )
        return f"{groups} &nbsp;|&nbsp; gap = {view.gap:.3f}"
