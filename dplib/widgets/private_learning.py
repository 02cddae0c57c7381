r"""Lecture 09's explorer: noisy gradient descent on Adult, its training curve, its accuracy and its epsilon.

A pure :func:`private_learning_view` trains logistic regression with full-batch DP-GD
(:mod:`dplib.learning.noisy_gd`) for a clip norm C, a noise multiplier σ and T steps, and
returns the test accuracy along the way, the same run without noise, the non-private model's
accuracy and the epsilon of the T steps (zCDP, read at δ, under substitution neighbours: the run
divides every step by the number of people, which is public only under substitution, so no add/remove
epsilon is shown).
:class:`PrivateLearningExplorer` is the thin widget over it, built on the shared explorer base
of :mod:`dplib.widgets._render`.

Speed: a run of ``max_steps`` steps is computed once per (C, σ, seed) and cached; T only takes
its first T + 1 iterates (the path to T steps is the start of the path to more steps from the
same seed), so moving T redraws without training again. C and σ retrain (a few tenths of a second
at most): their sliders send their value when released.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np

from dplib._validation import require_epsilon, require_open_probability, require_positive_int, require_sensitivity
from dplib.accounting.dp_gd import dp_gd_epsilon
from dplib.learning.logistic_model import adult_design_matrices, logistic_accuracy, nonprivate_logistic_regression
from dplib.learning.noisy_gd import CLIP_NORM, DELTA, LEARNING_RATE, STEPS, noisy_gradient_descent_path
from dplib.widgets._render import SLIDER_LAYOUT, SLIDER_STYLE, Explorer, seed_box

__all__ = ["PrivateLearningView", "private_learning_view", "PrivateLearningExplorer", "MAX_STEPS"]

#: The longest training the explorer runs (its steps slider's maximum).
MAX_STEPS = 150
#: Test accuracy is measured at about this many steps along a run.
CHECKPOINTS = 60
#: People of Adult's train split the explorer trains on: unit 08's and the assignment's 10,000.
TRAIN_SIZE = 10_000


@dataclass(frozen=True)
class PrivateLearningView:
    """One DP-GD training on Adult, as the explorer shows it.

    ``accuracy`` and ``accuracy_without_noise`` are the test accuracies at the steps
    ``checkpoints`` (0 to ``steps``) of the noisy run and of the same run with σ = 0 (the same
    clipping, no privacy); ``baseline_accuracy`` is scikit-learn's model without privacy.
    ``epsilon`` is the whole training's at ``delta`` under substitution neighbours (as unit 08's
    local records), ``inf`` for σ = 0. There is no add/remove epsilon: every step divides by the number
    of people, ``len(X)``, which is private under add/remove, and then the later steps' sums are taken at
    points that depend on it (:mod:`dplib.accounting.dp_gd`).
    """

    clip_norm: float
    noise_multiplier: float
    steps: int
    learning_rate: float
    delta: float
    seed: int
    epsilon: float
    checkpoints: np.ndarray
    accuracy: np.ndarray
    accuracy_without_noise: np.ndarray
    baseline_accuracy: float
    majority_accuracy: float

    @property
    def final_accuracy(self) -> float:
        """Test accuracy of the published model, after ``steps`` steps."""
        return float(self.accuracy[-1])


@functools.lru_cache(maxsize=2)
def _data(train_size: int):
    """``(X_train, y_train, X_test, y_test)`` once per process, read-only."""
    arrays = adult_design_matrices(train_size)
    for array in arrays:
        array.setflags(write=False)
    return arrays


@functools.lru_cache(maxsize=2)
def _baseline(train_size: int) -> tuple[float, float]:
    """(scikit-learn's test accuracy, the test accuracy of always predicting <=50K)."""
    X_train, y_train, X_test, y_test = _data(train_size)
    theta = nonprivate_logistic_regression(X_train, y_train)
    return logistic_accuracy(theta, X_test, y_test), float(np.mean(y_test == 0.0))


@functools.lru_cache(maxsize=16)
def _path(clip_norm: float, noise_multiplier: float, learning_rate: float, seed: int, max_steps: int,
          train_size: int) -> np.ndarray:
    X_train, y_train, _, _ = _data(train_size)
    path = noisy_gradient_descent_path(X_train, y_train, clip_norm, noise_multiplier, max_steps, learning_rate,
                                       rng=np.random.default_rng(seed))
    path.setflags(write=False)
    return path


def _checkpoints(steps: int) -> np.ndarray:
    return np.unique(np.linspace(0, steps, min(steps, CHECKPOINTS) + 1).round().astype(int))


def _test_accuracies(path: np.ndarray, checkpoints: np.ndarray, train_size: int) -> np.ndarray:
    _, _, X_test, y_test = _data(train_size)
    predictions = path[checkpoints] @ X_test.T > 0
    return (predictions == (y_test == 1.0)).mean(axis=1)


def _epsilon(noise_multiplier: float, steps: int, delta: float, neighbours: str) -> float:
    if noise_multiplier == 0 or steps == 0:
        return math.inf if steps else 0.0
    return dp_gd_epsilon(noise_multiplier, steps, delta, neighbours)


def private_learning_view(clip_norm: float = CLIP_NORM, noise_multiplier: float = 100.0, steps: int = STEPS, *,
                          learning_rate: float = LEARNING_RATE, delta: float = DELTA, seed: int = 0,
                          max_steps: int = MAX_STEPS, train_size: int = TRAIN_SIZE) -> PrivateLearningView:
    r"""Train DP-GD on ``train_size`` people of Adult for ``steps`` steps and measure it on the test split.

    Parameters
    ----------
    clip_norm : float
        C, finite and > 0.
    noise_multiplier : float
        σ, finite and >= 0 (0: no noise, epsilon ``inf``).
    steps : int
        T, 0 to ``max_steps``.
    learning_rate, delta : float
        η of every step; δ at which epsilon is read.
    seed : int
        Seed of the noise: the same seed gives the same run.

    Notes
    -----
    The run is :func:`dplib.learning.noisy_gd.noisy_gradient_descent_path` from
    ``numpy.random.default_rng(seed)``; epsilon is :func:`dplib.accounting.dp_gd.dp_gd_epsilon`,
    :math:`T\rho_1` with :math:`\rho_1 = 2/\sigma^2` (substitution neighbours), converted at δ.

    Examples
    --------
    >>> view = private_learning_view(1.0, 107.0, 100, train_size=2_000)
    >>> round(view.epsilon, 2), int(view.checkpoints[-1]), bool(view.final_accuracy > 0.75)
    (1.0, 100, True)
    """
    clip_norm = require_epsilon(clip_norm, "clip_norm")
    noise_multiplier = require_sensitivity(noise_multiplier, "noise_multiplier")
    max_steps = require_positive_int(max_steps, "max_steps")
    steps = require_positive_int(steps, "steps", minimum=0)
    if steps > max_steps:
        raise ValueError(f"steps must be an integer <= max_steps = {max_steps}, got {steps!r}")
    learning_rate = require_epsilon(learning_rate, "learning_rate")
    delta = require_open_probability(delta, "delta")
    seed = require_positive_int(seed, "seed", minimum=0)
    train_size = require_positive_int(train_size, "train_size")
    checkpoints = _checkpoints(steps)
    noisy = _path(clip_norm, noise_multiplier, learning_rate, seed, max_steps, train_size)
    noiseless = _path(clip_norm, 0.0, learning_rate, 0, max_steps, train_size)
    baseline, majority = _baseline(train_size)
    return PrivateLearningView(
        clip_norm, noise_multiplier, steps, learning_rate, delta, seed,
        epsilon=_epsilon(noise_multiplier, steps, delta, "substitute"),
        checkpoints=checkpoints,
        accuracy=_test_accuracies(noisy, checkpoints, train_size),
        accuracy_without_noise=_test_accuracies(noiseless, checkpoints, train_size),
        baseline_accuracy=baseline,
        majority_accuracy=majority,
    )


class PrivateLearningExplorer(Explorer):
    """DP-GD on Adult, live: clip norm, noise multiplier and steps; the test accuracy along the run and epsilon.

    The figure: test accuracy against the step, for the noisy run (solid), the same clipping
    without noise (dashed), scikit-learn without privacy and always predicting <=50K (dotted).
    The readout: epsilon of the T steps at δ under substitution neighbours (the steps divide by
    the number of people: no add/remove epsilon holds for them), and the accuracies of the published model.

    Controls: ``clip_norm``, ``noise_multiplier``, ``steps``, ``seed``.

    Examples
    --------
    >>> explorer = PrivateLearningExplorer(train_size=2_000)
    >>> explorer.steps.value = 50
    >>> explorer.view.steps, int(explorer.view.checkpoints[-1])
    (50, 50)
    """

    figsize = (6.4, 3.6)

    def __init__(self, clip_norm: float = CLIP_NORM, noise_multiplier: float = 100.0, steps: int = STEPS, *,
                 seed: int = 0, learning_rate: float = LEARNING_RATE, delta: float = DELTA,
                 max_steps: int = MAX_STEPS, train_size: int = TRAIN_SIZE):
        self.learning_rate, self.delta, self.max_steps, self.train_size = learning_rate, delta, max_steps, train_size
        self.clip_norm = widgets.FloatLogSlider(value=clip_norm, base=10, min=-2, max=1, step=0.05,
                                                description="clip norm C", readout_format=".3g",
                                                continuous_update=False, style=SLIDER_STYLE, layout=SLIDER_LAYOUT)
        self.noise_multiplier = widgets.FloatLogSlider(value=noise_multiplier, base=10, min=0, max=3, step=0.05,
                                                       description="noise multiplier sigma", readout_format=".3g",
                                                       continuous_update=False, style=SLIDER_STYLE, layout=SLIDER_LAYOUT)
        self.steps = widgets.IntSlider(value=steps, min=1, max=max_steps, description="steps T", style=SLIDER_STYLE,
                                       layout=SLIDER_LAYOUT)
        self.seed = seed_box(seed)
        super().__init__({"clip_norm": self.clip_norm, "noise_multiplier": self.noise_multiplier, "steps": self.steps,
                          "seed": self.seed})

    def _compute(self) -> PrivateLearningView:
        return private_learning_view(self.clip_norm.value, self.noise_multiplier.value, self.steps.value,
                                     learning_rate=self.learning_rate, delta=self.delta, seed=self.seed.value,
                                     max_steps=self.max_steps, train_size=self.train_size)

    def _build(self, view: PrivateLearningView) -> None:
        self.figure.subplots_adjust(left=0.11, right=0.97, top=0.88, bottom=0.14)
        ax = self.ax = self.figure.subplots()
        (self.noisy_line,) = ax.plot(view.checkpoints, view.accuracy, color="C0", label="DP-GD (noisy)")
        (self.noiseless_line,) = ax.plot(view.checkpoints, view.accuracy_without_noise, color="C1", linestyle="--",
                                         label="same clipping, no noise")
        ax.axhline(view.baseline_accuracy, color="black", linestyle=":", linewidth=1.2,
                   label="scikit-learn, no privacy")
        ax.axhline(view.majority_accuracy, color="grey", linestyle=":", linewidth=1, label="always <=50K")
        (self.end_marker,) = ax.plot([view.steps], [view.final_accuracy], "o", color="C0")
        ax.set_xlim(0, self.max_steps)
        ax.set_xlabel("gradient step")
        ax.set_ylabel("test accuracy")
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=4, fontsize=7.5, frameon=False, borderaxespad=0.2)
        self.animated = [self.noisy_line, self.noiseless_line, self.end_marker]

    def _draw(self, view: PrivateLearningView) -> None:
        self.noisy_line.set_data(view.checkpoints, view.accuracy)
        self.noiseless_line.set_data(view.checkpoints, view.accuracy_without_noise)
        self.end_marker.set_data([view.steps], [view.final_accuracy])
        lowest = min(view.accuracy.min(), view.accuracy_without_noise.min(), view.majority_accuracy)
        self.ax.set_ylim(min(0.7, math.floor(lowest * 10) / 10), 0.9)  # 0.1 steps: few backgrounds to cache

    def _readout(self, view: PrivateLearningView) -> str:
        def shown(epsilon: float) -> str:
            return "inf (no noise)" if math.isinf(epsilon) else f"{epsilon:.3g}"

        return (f"T = {view.steps} steps, C = {view.clip_norm:.3g}, sigma = {view.noise_multiplier:.3g} "
                f"(noise sd on the mean gradient sigma C / n = {view.noise_multiplier * view.clip_norm / self.train_size:.2g})"
                f" &nbsp;|&nbsp; epsilon = {shown(view.epsilon)} at delta = {view.delta:.0e}, substitution neighbours "
                f"&nbsp;|&nbsp; test accuracy {view.final_accuracy:.3f} "
                f"(no noise {view.accuracy_without_noise[-1]:.3f}; scikit-learn, no privacy, "
                f"{view.baseline_accuracy:.3f})")
