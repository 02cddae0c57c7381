"""Lecture 08's explorer: the total epsilon of k Gaussian queries under three accountings.

A pure :func:`composition_view` computes the three curves (basic composition, advanced
composition, zCDP) from dplib's formulas; :class:`CompositionExplorer` is the thin
widget over it (per-query epsilon and delta, the number of queries k, the delta at which
the totals are read), built on the shared explorer base of :mod:`dplib.widgets._render`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np

from dplib._validation import require_epsilon, require_open_probability, require_positive_int
from dplib.accounting.zcdp import advanced_composition_epsilon, zcdp_rho, zcdp_to_epsilon
from dplib.mechanisms.gaussian import analytic_gaussian_sigma
from dplib.widgets._render import SLIDER_LAYOUT, SLIDER_STYLE, Explorer, epsilon_slider, nice_ceiling

__all__ = ["ACCOUNTINGS", "CompositionView", "composition_view", "CompositionExplorer"]

#: The three accountings, in the order they are drawn.
ACCOUNTINGS = ("basic", "advanced", "zcdp")
_LABELS = {"basic": "basic composition", "advanced": "advanced composition", "zcdp": "zCDP"}


@dataclass(frozen=True)
class CompositionView:
    """Total epsilon of ``ks`` queries, each the Gaussian mechanism at (epsilon, delta), sensitivity 1.

    ``totals[name]`` is the curve of each accounting over ``ks``; ``at_k[name]`` its value
    for the chosen ``k`` and ``deltas[name]`` the total delta it comes with there.
    """

    epsilon: float
    delta: float
    k: int
    delta_total: float
    sigma: float
    ks: np.ndarray
    totals: dict
    at_k: dict
    deltas: dict

    @property
    def best(self) -> str:
        """The accounting with the smallest total epsilon at ``k``."""
        return min(self.at_k, key=self.at_k.get)


def _totals(ks, epsilon: float, rho: float, delta_total: float) -> dict:
    ks = np.asarray(ks)
    return {
        "basic": epsilon * ks.astype(float),
        "advanced": np.array([advanced_composition_epsilon(epsilon, int(k), delta_total) for k in ks]),
        "zcdp": np.array([zcdp_to_epsilon(int(k) * rho, delta_total) for k in ks]),
    }


def composition_view(epsilon: float, delta: float, k: int, *, delta_total: float = 1e-6,
                     max_k: int = 1000) -> CompositionView:
    r"""The three totals for ``1..max_k`` queries, each Gaussian with the analytic sigma for (epsilon, delta).

    Notes
    -----
    Basic: :math:`k\varepsilon` with total delta :math:`k\delta`. Advanced (Dwork, Rothblum,
    Vadhan 2010): :math:`\sqrt{2k\ln(1/\delta')}\varepsilon + k\varepsilon(e^\varepsilon - 1)`
    with :math:`k\delta + \delta'`. zCDP (Bun & Steinke 2016): each query is
    :math:`\rho = 1/(2\sigma^2)`-zCDP, k of them :math:`k\rho`, read at :math:`\delta'`.
    Here :math:`\delta' =` ``delta_total``.

    Examples
    --------
    >>> view = composition_view(0.1, 1e-7, 100)
    >>> view.best, round(view.at_k["basic"], 3)
    ('zcdp', 10.0)
    """
    epsilon = require_epsilon(epsilon)
    delta = require_open_probability(delta, "delta")
    delta_total = require_open_probability(delta_total, "delta_total")
    max_k = require_positive_int(max_k, "max_k")
    k = require_positive_int(k, "k")
    if k > max_k:
        raise ValueError(f"k must be an integer <= max_k = {max_k}, got {k!r}")
    sigma = analytic_gaussian_sigma(1.0, epsilon, delta)
    rho = zcdp_rho(1.0, sigma)
    ks = np.unique(np.geomspace(1, max_k, 120).round().astype(int))
    at_k = {name: float(values[0]) for name, values in _totals([k], epsilon, rho, delta_total).items()}
    deltas = {"basic": k * delta, "advanced": k * delta + delta_total, "zcdp": delta_total}
    return CompositionView(epsilon, delta, k, delta_total, sigma, ks, _totals(ks, epsilon, rho, delta_total),
                           at_k, deltas)


class CompositionExplorer(Explorer):
    """Total epsilon of k Gaussian queries: basic vs advanced composition vs zCDP.

    Controls: ``epsilon`` and ``delta`` of each query, the number of queries ``k`` (the
    marker), and ``delta_total``, the delta at which advanced composition and zCDP are read.

    Examples
    --------
    >>> explorer = CompositionExplorer(epsilon=0.1, k=100)
    >>> explorer.k.value = 1000
    >>> round(explorer.view.at_k["basic"], 6)
    100.0
    """

    figsize = (6.4, 3.6)

    def __init__(self, epsilon: float = 0.1, delta: float = 1e-7, k: int = 100, *, delta_total: float = 1e-6,
                 max_k: int = 1000):
        self.max_k = max_k
        self.epsilon = epsilon_slider(epsilon, low=0.01, high=2.0)
        self.delta = widgets.FloatLogSlider(value=delta, base=10, min=-12, max=-3, step=0.5, description="delta",
                                            readout_format=".0e", style=SLIDER_STYLE, layout=SLIDER_LAYOUT)
        self.k = widgets.IntSlider(value=k, min=1, max=max_k, description="k queries", style=SLIDER_STYLE,
                                   layout=SLIDER_LAYOUT)
        self.delta_total = widgets.FloatLogSlider(value=delta_total, base=10, min=-12, max=-2, step=0.5,
                                                  description="delta' (read at)", readout_format=".0e",
                                                  style=SLIDER_STYLE, layout=SLIDER_LAYOUT)
        super().__init__({"epsilon": self.epsilon, "delta": self.delta, "k": self.k, "delta_total": self.delta_total})

    def _compute(self) -> CompositionView:
        return composition_view(self.epsilon.value, self.delta.value, self.k.value,
                                delta_total=self.delta_total.value, max_k=self.max_k)

    def _build(self, view: CompositionView) -> None:
        self.figure.subplots_adjust(left=0.12, right=0.97, top=0.88, bottom=0.14)
        ax = self.ax = self.figure.subplots()
        self.lines = {name: ax.plot(view.ks, view.totals[name], color=f"C{i}", label=_LABELS[name])[0]
                      for i, name in enumerate(ACCOUNTINGS)}
        self.markers = {name: ax.plot([view.k], [view.at_k[name]], "o", color=f"C{i}")[0]
                        for i, name in enumerate(ACCOUNTINGS)}
        self.k_line = ax.axvline(view.k, color="grey", linestyle=":", linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(1, self.max_k)
        ax.set_xlabel("number of queries k")
        ax.set_ylabel("total epsilon")
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=3, fontsize=8, frameon=False, borderaxespad=0.2)
        self.animated = [*self.lines.values(), *self.markers.values(), self.k_line]

    def _draw(self, view: CompositionView) -> None:
        for name in ACCOUNTINGS:
            self.lines[name].set_data(view.ks, view.totals[name])
            self.markers[name].set_data([view.k], [view.at_k[name]])
        self.k_line.set_xdata([view.k, view.k])
        low = min(values.min() for values in view.totals.values())
        high = max(values.max() for values in view.totals.values())
        self.ax.set_ylim(1 / nice_ceiling(1 / low), nice_ceiling(high))

    def _readout(self, view: CompositionView) -> str:
        parts = [f"{_LABELS[name]} {view.at_k[name]:.3g} (delta {view.deltas[name]:.1e})" for name in ACCOUNTINGS]
        return (f"{view.k} queries, each Gaussian with sigma = {view.sigma:.3g} ((epsilon, delta) = "
                f"({view.epsilon:.3g}, {view.delta:.0e})) &nbsp;|&nbsp; total epsilon: " + " &nbsp;|&nbsp; ".join(parts)
                + f" &nbsp;|&nbsp; smallest: {_LABELS[view.best]}")
