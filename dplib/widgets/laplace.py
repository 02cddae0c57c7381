"""Lecture 02 (and 01): the Laplace mechanism on neighbours D and D', with its privacy loss.

:func:`laplace_view` computes what is shown; :class:`LaplaceExplorer` draws it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.ticker import MaxNLocator

from dplib._validation import require_finite, require_positive_int
from dplib.mechanisms.laplace import laplace_noise, laplace_privacy_loss, laplace_scale
from dplib.widgets._render import LIMIT_STEPS, SLIDER_LAYOUT, SLIDER_STYLE, Explorer, epsilon_slider, nice_ceiling, seed_box

__all__ = ["LaplaceView", "laplace_view", "LaplaceExplorer"]


@dataclass(frozen=True)
class LaplaceView:
    """What the Laplace explorer shows for one (epsilon, sensitivity).

    ``answers_d`` / ``answers_d_prime`` are the simulated noisy answers; ``density_*``
    their histograms (density scale) over ``bin_edges``; ``curve_*`` the exact Laplace
    densities and ``loss`` the privacy loss on the grid ``outputs``.
    """

    epsilon: float
    sensitivity: float
    scale: float
    value_d: float
    value_d_prime: float
    answers_d: np.ndarray
    answers_d_prime: np.ndarray
    bin_edges: np.ndarray
    density_d: np.ndarray
    density_d_prime: np.ndarray
    outputs: np.ndarray
    curve_d: np.ndarray
    curve_d_prime: np.ndarray
    loss: np.ndarray
    max_loss: float
    interval_95: float


def laplace_view(
    epsilon: float,
    sensitivity: float,
    *,
    value: float = 100.0,
    window: tuple[float, float] = (-20.0, 25.0),
    samples: int = 20_000,
    rng=None,
) -> LaplaceView:
    """Noisy answers of the Laplace mechanism on D (true answer ``value``) and on a neighbour D'.

    D' is the worst-case neighbour: its true answer is ``value + sensitivity``. The
    histograms cover the fixed ``window`` around ``value`` so a wider spread shows as
    a flatter histogram; the bin width follows the noise scale. The answers are those
    of :func:`dplib.laplace_mech` with the same ``rng`` (its noise, drawn once for both
    neighbours after checking epsilon and sensitivity once, in :func:`dplib.laplace_scale`).

    Examples
    --------
    >>> view = laplace_view(epsilon=0.5, sensitivity=2.0, rng=0)
    >>> view.scale, round(view.max_loss, 12)
    (4.0, 0.5)
    """
    scale = laplace_scale(sensitivity, epsilon)  # the one check of epsilon and sensitivity
    samples = require_positive_int(samples, "samples")
    value_d = require_finite(value, "value")
    value_d_prime = value_d + float(sensitivity)
    noise = laplace_noise(np.random.default_rng(rng), scale, (2, samples))
    answers_d, answers_d_prime = noise[0] + value_d, noise[1] + value_d_prime
    low, high = value_d + window[0], value_d + window[1]
    width = float(np.clip(scale / 3.0, 0.05, 1.0))
    bin_edges = np.linspace(low, high, int(round((high - low) / width)) + 1)
    # density=False then divide, so answers outside the window count in the total (as they should)
    density_d = np.histogram(answers_d, bin_edges)[0] / (samples * np.diff(bin_edges))
    density_d_prime = np.histogram(answers_d_prime, bin_edges)[0] / (samples * np.diff(bin_edges))
    outputs = np.linspace(low, high, 901)
    curve_d = np.exp(-np.abs(outputs - value_d) / scale) / (2 * scale)  # Laplace(f(D), b) density
    curve_d_prime = np.exp(-np.abs(outputs - value_d_prime) / scale) / (2 * scale)
    loss = laplace_privacy_loss(outputs, value_d, value_d_prime, scale)
    return LaplaceView(
        epsilon=float(epsilon),
        sensitivity=float(sensitivity),
        scale=scale,
        value_d=value_d,
        value_d_prime=value_d_prime,
        answers_d=answers_d,
        answers_d_prime=answers_d_prime,
        bin_edges=bin_edges,
        density_d=density_d,
        density_d_prime=density_d_prime,
        outputs=outputs,
        curve_d=curve_d,
        curve_d_prime=curve_d_prime,
        loss=loss,
        max_loss=float(np.abs(loss).max()),
        interval_95=scale * math.log(1 / 0.05),  # dplib.laplace_interval(sensitivity, epsilon, 0.05)
    )


class LaplaceExplorer(Explorer):
    """Laplace mechanism on neighbours D and D': epsilon and sensitivity sliders.

    Top: histograms of 20,000 noisy answers on D (true answer ``value``) and on D'
    (``value + sensitivity``) with the exact densities. Bottom: the privacy loss
    ``ln(p_D(y) / p_D'(y))`` of every output y, which stays within +/- epsilon.

    Controls: ``epsilon``, ``sensitivity``, ``seed``.

    Examples
    --------
    >>> explorer = LaplaceExplorer(epsilon=1.0, sensitivity=1.0)
    >>> explorer.sensitivity.value = 2.0
    >>> explorer.view.scale
    2.0
    """

    figsize = (6.4, 3.6)

    def __init__(self, epsilon: float = 1.0, sensitivity: float = 1.0, *, value: float = 100.0,
                 labels: tuple[str, str] = ("D", "D'"), seed: int = 0):
        self.value = float(value)
        self.labels = labels
        self.epsilon = epsilon_slider(epsilon)
        self.sensitivity = widgets.FloatSlider(
            value=sensitivity, min=0.5, max=5.0, step=0.5, description="sensitivity",
            style=SLIDER_STYLE, layout=SLIDER_LAYOUT,
        )
        self.seed = seed_box(seed)
        super().__init__({"epsilon": self.epsilon, "sensitivity": self.sensitivity, "seed": self.seed})

    def _compute(self) -> LaplaceView:
        return laplace_view(self.epsilon.value, self.sensitivity.value, value=self.value,
                            rng=np.random.default_rng(self.seed.value))

    def _build(self, view: LaplaceView) -> None:
        self.figure.subplots_adjust(left=0.12, right=0.95, top=0.9, bottom=0.13, hspace=0.45)
        self.ax_hist, self.ax_loss = self.figure.subplots(2, 1, sharex=True, height_ratios=[2, 1])
        ax = self.ax_hist
        self.hist_d = ax.stairs(view.density_d, view.bin_edges, fill=True, alpha=0.45, color="C0",
                                label=self.labels[0])
        self.hist_d_prime = ax.stairs(view.density_d_prime, view.bin_edges, fill=True, alpha=0.45, color="C1",
                                      label=self.labels[1])
        (self.curve_d,) = ax.plot(view.outputs, view.curve_d, color="C0", linewidth=1.2)
        (self.curve_d_prime,) = ax.plot(view.outputs, view.curve_d_prime, color="C1", linewidth=1.2)
        ax.set_ylabel("density")
        ax.set_xlim(view.bin_edges[0], view.bin_edges[-1])
        # above the axes, so the (animated, drawn last) histograms never cover it
        self.legend = ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=2, fontsize=8, frameon=False,
                                borderaxespad=0.2)
        self.scale_text = ax.text(0.01, 0.95, "", transform=ax.transAxes, ha="left", va="top", fontsize=8)
        ax = self.ax_loss
        (self.loss_line,) = ax.plot(view.outputs, view.loss, color="C3")
        self.bound_high = ax.axhline(view.epsilon, color="black", linestyle="--", linewidth=0.8)
        self.bound_low = ax.axhline(-view.epsilon, color="black", linestyle="--", linewidth=0.8)
        ax.set_title("privacy loss ln(p_D(y) / p_D'(y)) of each output y, and +/- epsilon", fontsize=8)
        ax.set_ylabel("loss", fontsize=9)
        ax.set_xlabel("noisy answer y")
        ax.xaxis.set_major_locator(MaxNLocator(6, steps=[1, 2, 5, 10]))
        self.animated = [self.hist_d, self.hist_d_prime, self.curve_d, self.curve_d_prime, self.scale_text,
                         self.loss_line, self.bound_high, self.bound_low]

    def _draw(self, view: LaplaceView) -> None:
        self.hist_d.set_data(view.density_d, view.bin_edges)
        self.hist_d_prime.set_data(view.density_d_prime, view.bin_edges)
        self.curve_d.set_ydata(view.curve_d)
        self.curve_d_prime.set_ydata(view.curve_d_prime)
        top = max(view.density_d.max(), view.density_d_prime.max(), view.curve_d.max())
        self.ax_hist.set_ylim(0, nice_ceiling(1.1 * top, steps=LIMIT_STEPS))
        self.scale_text.set_text(
            f"f(D) = {view.value_d:g}, f(D') = {view.value_d_prime:g}\nLaplace scale b = {view.scale:.3g}"
        )
        self.loss_line.set_ydata(view.loss)
        self.bound_high.set_ydata([view.epsilon, view.epsilon])
        self.bound_low.set_ydata([-view.epsilon, -view.epsilon])
        limit = nice_ceiling(1.25 * view.epsilon, steps=LIMIT_STEPS)
        self.ax_loss.set_ylim(-limit, limit)

    def _readout(self, view: LaplaceView) -> str:
        return (
            f"scale b = {view.scale:.3g} &nbsp;|&nbsp; 95% of noisy answers within "
            f"&plusmn;{view.interval_95:.3g} of the truth &nbsp;|&nbsp; "
            f"max privacy loss over all outputs = {view.max_loss:.3f} (epsilon = {view.epsilon:.3f})"
        )
