"""Plot helpers: each takes an ``ax`` (or makes one), draws on it and returns it.

They only draw; the numbers come from dplib's pure functions. No LaTeX is ever needed.
Each gives its axes a title and a one-sentence description (:func:`dplib.figures.describe`: the
text alternative a screen reader reads), and draws in the colour-blind-safe :data:`dplib.figures.PALETTE`.
``import dplib`` makes every figure a kernel shows carry its text alternative
(:func:`dplib.figures.show_alt_text`).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dplib.figures import MARKERS, PALETTE, describe

__all__ = [
    "plot_neighbour_histograms",
    "plot_image",
    "plot_count_estimates",
    "plot_error_vs_epsilon",
    "plot_group_probabilities",
]


def _axes(ax):
    return plt.subplots()[1] if ax is None else ax


def plot_neighbour_histograms(answers_d, answers_d_prime, *, bins=60, labels=("D", "D'"), ax=None):
    """Overlaid density histograms of many noisy answers on two neighbouring datasets.

    Examples
    --------
    >>> import numpy as np
    >>> ax = plot_neighbour_histograms(np.zeros(10), np.ones(10))
    >>> len(ax.patches) > 0
    True
    """
    ax = _axes(ax)
    both = np.concatenate([np.ravel(answers_d), np.ravel(answers_d_prime)])
    edges = np.histogram_bin_edges(both, bins=bins)
    for answers, label, color, hatch in zip((answers_d, answers_d_prime), labels, PALETTE, ("", "//")):
        ax.hist(np.ravel(answers), bins=edges, density=True, alpha=0.5, label=label, color=color, hatch=hatch)
    ax.set_xlabel("noisy answer")
    ax.set_ylabel("density")
    ax.legend()
    return describe(ax, "Noisy answers on two neighbouring datasets",
                    f"Overlaid density histograms of the noisy answers on {labels[0]} and on {labels[1]}: "
                    "the more they overlap, the less one answer tells which dataset was used.")


def plot_image(image, *, title: str | None = None, ax=None):
    """Show a 0/1 picture with 1 as black.

    Examples
    --------
    >>> import numpy as np
    >>> plot_image(np.eye(4), title="eye").get_title()
    'eye'
    """
    ax = _axes(ax)
    ax.imshow(np.asarray(image), cmap="gray_r", vmin=0, vmax=1, interpolation="nearest")
    ax.set_xticks([])
    ax.set_yticks([])
    if title is not None:
        ax.set_title(title)
    shape = np.shape(image)
    return describe(ax, title or "A black-and-white picture",
                    f"A picture of {shape[0]} by {shape[1] if len(shape) > 1 else 1} pixels, 1 drawn black and 0 white.",
                    show_title=False)


def plot_count_estimates(true_counts, estimates, std=None, *, labels=None, ax=None):
    """Bars of true counts beside estimated counts (with +/- 1 std error bars when given).

    Examples
    --------
    >>> ax = plot_count_estimates([5, 3], [4.5, 3.2], std=[0.5, 0.5])
    >>> len(ax.patches)
    4
    """
    ax = _axes(ax)
    true_counts = np.asarray(true_counts, dtype=float)
    positions = np.arange(true_counts.size)
    ax.bar(positions - 0.2, true_counts, width=0.4, label="true", color=PALETTE[0])
    ax.bar(positions + 0.2, np.asarray(estimates, dtype=float), width=0.4, yerr=std, capsize=4, label="estimated",
           color=PALETTE[1], hatch="//")
    ax.set_xticks(positions, labels if labels is not None else [str(i) for i in positions])
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel("count")
    ax.legend()
    return describe(ax, "True and estimated counts",
                    f"Bars of the true count beside the estimated count for each of {true_counts.size} values"
                    + (", with error bars of one standard error." if std is not None else "."))


def plot_error_vs_epsilon(table: pd.DataFrame, theory: pd.DataFrame | None = None, *, metric: str = "l1", ax=None):
    """Log-log plot of mean error (with +/- 1 std over trials) against epsilon, and the theory curve.

    Examples
    --------
    >>> import pandas as pd

from dplib.figures import MARKERS, PALETTE, describe
    >>> table = pd.DataFrame({"l1_mean": [10.0, 1.0], "l1_std": [1.0, 0.1]}, index=pd.Index([0.1, 1.0], name="epsilon"))
    >>> plot_error_vs_epsilon(table).get_xscale()
    'log'
    """
    ax = _axes(ax)
    ax.errorbar(table.index, table[f"{metric}_mean"], yerr=table[f"{metric}_std"], fmt="o", capsize=3,
                label=f"simulated {metric.upper()} error (mean +/- std)", color=PALETTE[0])
    if theory is not None:
        ax.plot(theory.index, theory[f"{metric}_mean"], "--", label="theory", color=PALETTE[1])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("epsilon")
    ax.set_ylabel(f"{metric.upper()} error of the counts")
    ax.legend()
    return describe(ax, f"{metric.upper()} error against epsilon",
                    f"On log-log axes, the mean {metric.upper()} error of the counts over trials (dots with error "
                    "bars) at each epsilon" + (", and the theory (dashed line)." if theory is not None else "."))


def plot_group_probabilities(table: pd.DataFrame, *, ax=None):
    """One line per column of ``table`` (index = epsilon), e.g. each group's chance of the truth.

    Examples
    --------
    >>> import pandas as pd

from dplib.figures import MARKERS, PALETTE, describe
    >>> table = pd.DataFrame({"Blue": [0.6, 0.9], "Red": [0.7, 0.99]}, index=pd.Index([0.1, 1.0], name="epsilon"))
    >>> len(plot_group_probabilities(table).lines)
    2
    """
    ax = _axes(ax)
    for i, column in enumerate(table.columns):
        ax.plot(table.index, table[column], marker=MARKERS[i % len(MARKERS)], color=PALETTE[i % len(PALETTE)],
                label=str(column))
    ax.set_xscale("log")
    ax.set_xlabel("epsilon")
    ax.set_ylabel("probability")
    ax.legend()
    return describe(ax, "Probability against epsilon",
                    "One line per group (" + ", ".join(map(str, table.columns)) + ") giving its probability at each "
                    "epsilon, on a log scale of epsilon.")
