"""Lecture 11's explorer: audit a vendor's claim of epsilon-DP from its outputs on two neighbours.

:func:`audit_view` runs one vendor mechanism (:mod:`dplib.auditing.vendors`) on its two neighbouring datasets,
chooses a threshold event on one set of runs and bounds epsilon on fresh runs
(:func:`dplib.auditing.event_audit.audit_events`); :class:`AuditExplorer` draws the output histograms, the event
and the lower bound with its interval against the claim.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.patches import Rectangle

from dplib._validation import require_epsilon, require_open_probability, require_positive_int
from dplib.auditing.event_audit import EventAudit, audit_events, mechanism_outputs
from dplib.auditing.vendors import vendor_mechanisms
from dplib.widgets._render import LIMIT_STEPS, SLIDER_LAYOUT, SLIDER_STYLE, Explorer, nice_ceiling, seed_box

__all__ = ["AuditView", "audit_view", "AuditExplorer"]

#: Number of histogram bins for a vendor whose outputs are not whole numbers.
BINS = 60


@dataclass(frozen=True)
class AuditView:
    """One audit of one vendor: the histograms of the fresh runs and the :class:`~dplib.auditing.event_audit.EventAudit`.

    ``density_d`` and ``density_d_prime`` are the histograms (density scale) over ``bin_edges`` of the
    ``trials`` estimation runs on each dataset; ``audit`` is the chosen event and its bound.
    """

    vendor: str
    claim: str
    claimed_epsilon: float
    trials: int
    alpha: float
    bin_edges: np.ndarray
    density_d: np.ndarray
    density_d_prime: np.ndarray
    audit: EventAudit

    @property
    def refuted(self) -> bool:
        """True when the lower bound exceeds the claimed epsilon: the claim is false (at confidence 1 - alpha)."""
        return self.audit.epsilon_lower > self.claimed_epsilon


def _bin_edges(thresholds: np.ndarray, whole_numbers: bool) -> np.ndarray:
    low, high = float(thresholds.min()), float(thresholds.max())
    if whole_numbers:
        return np.arange(np.floor(low) - 0.5, np.ceil(high) + 1.0)
    return np.linspace(low, high, BINS + 1)


def audit_view(vendor: str = "B", claimed_epsilon: float | None = None, trials: int = 2_000, *,
               alpha: float = 0.05, seed: int = 0) -> AuditView:
    """Audit vendor ``vendor`` (a letter A to H) with ``trials`` runs per dataset to choose and as many to estimate.

    ``claimed_epsilon`` defaults to the vendor's own claim. The runs come from
    ``numpy.random.default_rng(seed)`` (vendor D's reused noise too).

    Examples
    --------
    >>> view = audit_view("B", trials=5_000, seed=1)
    >>> view.claimed_epsilon, view.refuted, round(view.audit.epsilon_lower, 1)
    (0.5, True, 1.7)
    """
    vendors = {v.name: v for v in vendor_mechanisms(rng=seed)}
    if vendor not in vendors:
        raise ValueError(f"vendor must be one of {sorted(vendors)}, got {vendor!r}")
    chosen = vendors[vendor]
    claimed = chosen.claimed_epsilon if claimed_epsilon is None else require_epsilon(claimed_epsilon, "claimed_epsilon")
    trials = require_positive_int(trials, "trials")
    alpha = require_open_probability(alpha, "alpha")
    rng = np.random.default_rng(seed + 1)
    runs = [mechanism_outputs(chosen.mechanism, data, trials, rng)
            for data in (chosen.d, chosen.d_prime, chosen.d, chosen.d_prime)]
    audit = audit_events(*runs, chosen.thresholds, alpha)
    edges = _bin_edges(chosen.thresholds, whole_numbers=all(np.array_equal(r, np.round(r)) for r in runs[2:]))
    width = np.diff(edges)
    density_d, density_d_prime = (np.histogram(r, edges)[0] / (trials * width) for r in runs[2:])
    return AuditView(vendor, chosen.claim, float(claimed), trials, alpha, edges, density_d, density_d_prime, audit)


class AuditExplorer(Explorer):
    """Audit a vendor: which mechanism, the epsilon it claims, and how many runs the auditor can afford.

    Top: histograms of the fresh runs on d and on d_prime, and the chosen event (shaded). Bottom: the
    lower bound on epsilon (dot), the event's interval for the log-ratio (bar) and the claim (dashed).

    Controls: ``vendor``, ``claimed`` (reset to the vendor's own claim when the vendor changes),
    ``runs`` (per dataset and stage) and ``seed``.

    Examples
    --------
    >>> explorer = AuditExplorer(vendor="A", runs=1_000)
    >>> explorer.vendor.value = "F"
    >>> explorer.view.vendor, explorer.claimed.value, explorer.view.refuted
    ('F', 0.5, True)
    """

    figsize = (6.4, 3.8)

    def __init__(self, vendor: str = "B", runs: int = 2_000, *, seed: int = 0, alpha: float = 0.05):
        self.alpha = alpha
        self.claims = {v.name: v for v in vendor_mechanisms(rng=seed)}
        self.vendor = widgets.Dropdown(options=[(f"{name}: {v.claim}", name) for name, v in self.claims.items()],
                                       value=vendor, description="vendor", style=SLIDER_STYLE,
                                       layout={"width": "420px"})
        # linear steps of 0.05: the vendors' claims (0.5, 1) are on the slider's grid, so the browser keeps them exact
        self.claimed = widgets.FloatSlider(value=self.claims[vendor].claimed_epsilon, min=0.05, max=5.0, step=0.05,
                                           description="claimed epsilon", readout_format=".3g", style=SLIDER_STYLE,
                                           layout=SLIDER_LAYOUT)
        self.runs = widgets.FloatLogSlider(value=runs, base=10, min=2, max=5, step=0.25, description="runs",
                                           readout_format=".0f", continuous_update=False, style=SLIDER_STYLE,
                                           layout=SLIDER_LAYOUT)
        self.seed = seed_box(seed)
        self._following_vendor = False
        super().__init__({"vendor": self.vendor, "claimed": self.claimed, "runs": self.runs, "seed": self.seed})

    def _on_change(self, change) -> None:
        if change["owner"] is self.vendor:  # a new vendor: show its own claim first (one redraw, not two)
            self._following_vendor = True
            self.claimed.value = self.claims[self.vendor.value].claimed_epsilon
            self._following_vendor = False
        if not self._following_vendor:
            self.update()

    def _compute(self) -> AuditView:
        return audit_view(self.vendor.value, self.claimed.value, int(round(self.runs.value)), alpha=self.alpha,
                          seed=self.seed.value)

    def _build(self, view: AuditView) -> None:
        self.figure.subplots_adjust(left=0.1, right=0.97, top=0.9, bottom=0.12, hspace=0.6)
        self.ax_hist, self.ax_epsilon = self.figure.subplots(2, 1, height_ratios=[2.2, 1])
        ax = self.ax_hist
        self.event = Rectangle((0, 0), 0, 1, transform=ax.get_xaxis_transform(), color="0.85", zorder=0)
        ax.add_patch(self.event)
        self.hist_d = ax.stairs(view.density_d, view.bin_edges, fill=True, alpha=0.45, color="C0", label="runs on d")
        self.hist_d_prime = ax.stairs(view.density_d_prime, view.bin_edges, fill=True, alpha=0.45, color="C1",
                                      label="runs on d_prime")
        self.threshold_line = ax.axvline(view.audit.threshold, color="black", linewidth=1)
        ax.set_ylabel("density")
        ax.set_xlabel("output", labelpad=1)
        self.legend = ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=3, fontsize=8, frameon=False,
                                borderaxespad=0.2)
        self.event_text = ax.text(0.99, 0.95, "", transform=ax.transAxes, ha="right", va="top", fontsize=8)
        ax = self.ax_epsilon
        (self.interval,) = ax.plot([0, 0], [0, 0], color="C2", linewidth=4, alpha=0.5,
                                   solid_capstyle="butt")
        (self.bound,) = ax.plot([0], [0], "o", color="C2")
        self.claim_line = ax.axvline(view.claimed_epsilon, color="C3", linestyle="--", linewidth=1.2)
        ax.set_ylim(-1, 1)
        ax.set_yticks([])
        ax.set_xlabel("epsilon: lower bound (dot), the event's log-ratio interval (bar), claim (dashed)", fontsize=8)
        self.animated = [self.event, self.hist_d, self.hist_d_prime, self.threshold_line, self.event_text,
                         self.interval, self.bound, self.claim_line]

    def _draw(self, view: AuditView) -> None:
        audit = view.audit
        self.hist_d.set_data(view.density_d, view.bin_edges)
        self.hist_d_prime.set_data(view.density_d_prime, view.bin_edges)
        self.ax_hist.set_xlim(view.bin_edges[0], view.bin_edges[-1])
        top = max(view.density_d.max(), view.density_d_prime.max())
        self.ax_hist.set_ylim(0, nice_ceiling(1.1 * top, steps=LIMIT_STEPS))
        low, high = view.bin_edges[0], view.bin_edges[-1]
        start, end = (audit.threshold, high) if audit.side == ">=" else (low, audit.threshold)
        self.event.set_x(start)
        self.event.set_width(max(end - start, 0.0))
        self.threshold_line.set_xdata([audit.threshold, audit.threshold])
        self.event_text.set_text(f"event: output {audit.side} {audit.threshold:.4g}\n"
                                 f"{audit.successes_numerator} vs {audit.successes_denominator} of {audit.trials} runs")
        interval = audit.log_ratio_interval
        limit = nice_ceiling(1.15 * max(view.claimed_epsilon, audit.epsilon_lower, 1.0), steps=LIMIT_STEPS)
        shown_low = max(interval.low, 0.0) if np.isfinite(interval.low) else 0.0
        shown_high = min(interval.high, limit) if np.isfinite(interval.high) else limit
        self.interval.set_data([shown_low, shown_high], [0, 0])
        self.bound.set_data([audit.epsilon_lower], [0])
        self.claim_line.set_xdata([view.claimed_epsilon, view.claimed_epsilon])
        self.ax_epsilon.set_xlim(0, limit)

    def _readout(self, view: AuditView) -> str:
        audit = view.audit
        other = "d" if audit.numerator == "d_prime" else "d_prime"
        verdict = ("<b>claim refuted</b>" if view.refuted
                   else "no evidence against the claim (which does not prove it)")
        return (f"vendor {view.vendor} claims epsilon = {view.claimed_epsilon:.3g} &nbsp;|&nbsp; "
                f"P[output {audit.side} {audit.threshold:.4g}] on {audit.numerator} in "
                f"[{audit.interval_numerator.low:.4f}, {audit.interval_numerator.high:.4f}], on {other} in "
                f"[{audit.interval_denominator.low:.4f}, {audit.interval_denominator.high:.4f}] "
                f"({view.trials} fresh runs each) &nbsp;|&nbsp; "
                f"epsilon &ge; {audit.epsilon_lower:.3f} with confidence {1 - view.alpha:.0%} "
                f"(point estimate {audit.epsilon_point:.3f}) &nbsp;|&nbsp; {verdict}")
