"""Lecture 03: pixel randomized response on a black-and-white picture.

:func:`image_view` computes what is shown; :class:`ImageExplorer` draws it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np

from dplib._validation import require_binary
from dplib.accounting.channels import alpha_beta_to_p_q, get_epsilon
from dplib.estimation.binary_rr import unbias_black_fraction
from dplib.images import demo_picture
from dplib.plotting import plot_image
from dplib.mechanisms.randomized_response import privatize_image_unchecked
from dplib.widgets._render import SLIDER_LAYOUT, SLIDER_STYLE, Explorer, epsilon_text, seed_box

__all__ = ["ImageView", "image_view", "ImageExplorer"]


@dataclass(frozen=True)
class ImageView:
    """What the image explorer shows for one (alpha, beta): the pictures and the numbers."""

    alpha: float
    beta: float
    p: float
    q: float
    epsilon: float
    picture: np.ndarray
    private: np.ndarray
    true_fraction: float
    observed_fraction: float
    estimated_fraction: float  # NaN when alpha = 0 (no pixel carries information)


def image_view(alpha: float, beta: float, *, picture=None, rng=None) -> ImageView:
    """Privatize ``picture`` (default: the demo smiley) pixel by pixel and estimate its black fraction back.

    The picture is :func:`dplib.privatize_image` ``(picture, alpha, beta, rng)``, epsilon is
    :func:`dplib.alpha_beta_epsilon` and the estimate :func:`dplib.estimate_black_fraction`;
    alpha and beta are checked once (in :func:`dplib.alpha_beta_to_p_q`) and p, q computed once.

    Examples
    --------
    >>> view = image_view(0.5, 0.5, rng=0)
    >>> round(view.epsilon, 4), round(view.true_fraction, 3)
    (1.0986, 0.27)
    """
    p, q = alpha_beta_to_p_q(alpha, beta)  # checks alpha and beta
    alpha, beta = float(alpha), float(beta)
    picture = demo_picture() if picture is None else require_binary(picture, "picture")
    private = privatize_image_unchecked(picture, alpha, beta, np.random.default_rng(rng))
    observed = float(private.mean())
    return ImageView(
        alpha=alpha,
        beta=beta,
        p=p,
        q=q,
        epsilon=get_epsilon(p, q),
        picture=picture,
        private=private,
        true_fraction=float(picture.mean()),
        observed_fraction=observed,
        estimated_fraction=unbias_black_fraction(observed, alpha, beta) if alpha > 0 else math.nan,
    )


class ImageExplorer(Explorer):
    """Pixel randomized response on a black-and-white picture: alpha and beta sliders.

    Each pixel is kept with probability ``alpha``, else painted black with probability
    ``beta``. Shows the picture, the privatized picture, the true black fraction beside
    the one estimated from the privatized pixels, and the channel's exact epsilon.

    Controls: ``alpha``, ``beta``, ``seed``.

    Examples
    --------
    >>> explorer = ImageExplorer()
    >>> explorer.alpha.value = 0.8
    >>> round(explorer.view.epsilon, 4)
    2.1972
    """

    figsize = (7.2, 2.7)

    def __init__(self, alpha: float = 0.5, beta: float = 0.5, *, picture=None, seed: int = 0):
        self.picture = demo_picture() if picture is None else require_binary(picture, "picture")
        self.alpha = widgets.FloatSlider(value=alpha, min=0.0, max=1.0, step=0.01, description="alpha (keep)",
                                         style=SLIDER_STYLE, layout=SLIDER_LAYOUT)
        self.beta = widgets.FloatSlider(value=beta, min=0.0, max=1.0, step=0.01, description="beta (black)",
                                        style=SLIDER_STYLE, layout=SLIDER_LAYOUT)
        self.seed = seed_box(seed)
        super().__init__({"alpha": self.alpha, "beta": self.beta, "seed": self.seed})

    def _compute(self) -> ImageView:
        return image_view(self.alpha.value, self.beta.value, picture=self.picture,
                          rng=np.random.default_rng(self.seed.value))

    def _build(self, view: ImageView) -> None:
        self.figure.subplots_adjust(left=0.02, right=0.98, top=0.88, bottom=0.1, wspace=0.3)
        grid = self.figure.add_gridspec(1, 3, width_ratios=[1, 1, 0.8])
        ax_true, ax_private, self.ax_bars = (self.figure.add_subplot(grid[0, i]) for i in range(3))
        plot_image(view.picture, title="the truth", ax=ax_true).title.set_fontsize(10)
        plot_image(view.private, title="", ax=ax_private)
        self.private_image = ax_private.images[0]
        self.private_title = ax_private.title
        self.private_title.set_fontsize(10)
        self.bars = self.ax_bars.bar([0, 1], [view.true_fraction, 0.0], color=["0.3", "C0"], width=0.6)
        self.ax_bars.set_xticks([0, 1], ["true", "estimated"])
        self.ax_bars.set_ylim(-0.25, 1.0)
        self.ax_bars.axhline(0, color="black", linewidth=0.8)
        self.ax_bars.set_title("black fraction", fontsize=10)
        self.bar_labels = [self.ax_bars.text(i, 0, "", ha="center", va="bottom", fontsize=9) for i in range(2)]
        self.ax_bars.tick_params(labelsize=8)
        self.animated = [self.private_image, self.private_title, *self.bars, *self.bar_labels]

    def _draw(self, view: ImageView) -> None:
        self.private_image.set_data(view.private)
        self.private_title.set_text(f"privatized, epsilon = {epsilon_text(view.epsilon)}")
        estimate = 0.0 if math.isnan(view.estimated_fraction) else view.estimated_fraction
        for bar, label, value in zip(self.bars, self.bar_labels, (view.true_fraction, estimate)):
            bar.set_height(value)
            label.set_position((label.get_position()[0], max(value, 0.0) + 0.02))
            label.set_text(f"{value:.3f}")
        if math.isnan(view.estimated_fraction):
            self.bar_labels[1].set_text("n/a")

    def _readout(self, view: ImageView) -> str:
        if math.isnan(view.estimated_fraction):
            estimate = "undefined (alpha = 0 keeps no pixel)"
        else:
            estimate = f"{view.estimated_fraction:.3f}"
        no_privacy = " (no privacy)" if math.isinf(view.epsilon) else ""
        return (
            f"true black fraction {view.true_fraction:.3f} &nbsp;|&nbsp; estimated from the privatized pixels "
            f"{estimate} &nbsp;|&nbsp; p = P(black | black) = {view.p:.3f}, q = P(white | white) = {view.q:.3f}, "
            f"epsilon = {epsilon_text(view.epsilon)}{no_privacy}"
        )
