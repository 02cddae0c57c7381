"""Interactive explorers for the lectures: sliders wired to dplib's pure functions.

Each explorer is a thin layer in the spirit of the ipywidgets tutorial's "Separating
Concerns": a pure ``*_view`` function computes everything shown (from dplib's
mechanisms and estimators) and returns a small frozen dataclass; the explorer class
holds the controls, calls that function when a control moves, updates the existing
matplotlib artists in place and renders the figure to PNG bytes in an
``ipywidgets.Image``. No interactive matplotlib backend is needed, so the same object
works in JupyterLab, in a test (set ``.value`` on a control and read ``.view``,
``.readout.value`` or the artists) and in a plain PNG.

A notebook cell ends with the explorer itself, e.g. ``LaplaceExplorer()``: it displays
its ``.widget``. Randomness comes from a ``seed`` control, so a redraw after moving a
slider changes only what the parameter changes.

Explorers
---------
LaplaceExplorer
    epsilon and sensitivity; noisy answers on neighbours D and D'; the privacy loss.
ImageExplorer
    alpha and beta of pixel randomized response on :func:`dplib.images.demo_picture`.
EstimationExplorer
    epsilon and n; k-RR counts estimated back, with error bars; clipping vs projection.
FairnessExplorer
    group sizes, base rates and epsilon; each group's chance of the exponential
    mechanism reporting its true majority value.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
import pandas as pd
import PIL.Image
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from dplib._validation import check_numeric_array, check_positive_int
from dplib.channels import alpha_beta_epsilon, alpha_beta_to_p_q, krr_probabilities
from dplib.estimators import estimate_black_fraction, estimate_krr_counts, krr_count_std, project_to_simplex
from dplib.fairness import group_outcome_probabilities
from dplib.images import demo_picture
from dplib.kary_randomized_response import k_rand_resp
from dplib.laplace import laplace_interval, laplace_mech, laplace_scale
from dplib.randomized_response import privatize_image

__all__ = [
    "LaplaceView",
    "laplace_view",
    "laplace_privacy_loss",
    "LaplaceExplorer",
    "ImageView",
    "image_view",
    "ImageExplorer",
    "EstimationView",
    "estimation_view",
    "apportion",
    "EstimationExplorer",
    "FairnessView",
    "fairness_view",
    "FairnessExplorer",
    "SCORINGS",
    "ADULT_AGE_SEX_COUNTS",
    "ADULT_AGE_SEX_LABELS",
]

#: Resolution of every explorer figure (dots per inch). Small figures redraw fast.
DPI = 100

#: True counts of age x sex on the 45,222 clean Adult rows (``dplib.datasets.age_sex_categories``).
ADULT_AGE_SEX_COUNTS = (8196, 14831, 6499, 15696)
ADULT_AGE_SEX_LABELS = ("<=37, female", "<=37, male", ">37, female", ">37, male")

#: Axis limits that follow the data snap to these multiples of powers of ten (see ``_nice_ceiling``).
LIMIT_STEPS = (1.0, 2.0, 5.0)

_SLIDER_STYLE = {"description_width": "initial"}
_SLIDER_LAYOUT = {"width": "320px"}


def _format_epsilon(epsilon: float) -> str:
    return "inf (no privacy)" if math.isinf(epsilon) else f"{epsilon:.3f}"


# ---------------------------------------------------------------------------
# Pure computations (no widgets, no drawing): what each explorer shows.
# ---------------------------------------------------------------------------


def laplace_privacy_loss(
    outputs, value_d: float, value_d_prime: float, sensitivity: float, epsilon: float
) -> np.ndarray:
    r"""Privacy loss ``ln(p_D(y) / p_D'(y))`` of each output y of the Laplace mechanism.

    Notes
    -----
    With densities :math:`\frac{1}{2b} e^{-|y - f(D)|/b}` and :math:`b = \Delta f/\varepsilon`,

    .. math:: L(y) = \frac{|y - f(D')| - |y - f(D)|}{b},

    which by the triangle inequality never exceeds :math:`|f(D) - f(D')|/b \le \varepsilon`
    in size, and reaches it for every output outside the interval between the two answers.

    Examples
    --------
    >>> laplace_privacy_loss([-5.0, 0.5, 5.0], 0.0, 1.0, sensitivity=1.0, epsilon=0.5)
    array([ 0.5,  0. , -0.5])
    """
    outputs = check_numeric_array(outputs, "outputs")
    scale = laplace_scale(sensitivity, epsilon)
    return (np.abs(outputs - value_d_prime) - np.abs(outputs - value_d)) / scale


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
    seed: int = 0,
) -> LaplaceView:
    """Noisy answers of the Laplace mechanism on D (true answer ``value``) and on a neighbour D'.

    D' is the worst-case neighbour: its true answer is ``value + sensitivity``. The
    histograms cover the fixed ``window`` around ``value`` so a wider spread shows as
    a flatter histogram; the bin width follows the noise scale.

    Examples
    --------
    >>> view = laplace_view(epsilon=0.5, sensitivity=2.0)
    >>> view.scale, round(view.max_loss, 12)
    (4.0, 0.5)
    """
    scale = laplace_scale(sensitivity, epsilon)
    samples = check_positive_int(samples, "samples")
    value_d, value_d_prime = float(value), float(value) + float(sensitivity)
    rng = np.random.default_rng(seed)
    answers_d = laplace_mech(np.full(samples, value_d), sensitivity, epsilon, rng=rng)
    answers_d_prime = laplace_mech(np.full(samples, value_d_prime), sensitivity, epsilon, rng=rng)
    low, high = value_d + window[0], value_d + window[1]
    width = float(np.clip(scale / 3.0, 0.05, 1.0))
    bin_edges = np.linspace(low, high, int(round((high - low) / width)) + 1)
    # density=False then divide, so answers outside the window count in the total (as they should)
    density_d = np.histogram(answers_d, bin_edges)[0] / (samples * np.diff(bin_edges))
    density_d_prime = np.histogram(answers_d_prime, bin_edges)[0] / (samples * np.diff(bin_edges))
    outputs = np.linspace(low, high, 901)
    curve_d = np.exp(-np.abs(outputs - value_d) / scale) / (2 * scale)
    curve_d_prime = np.exp(-np.abs(outputs - value_d_prime) / scale) / (2 * scale)
    loss = laplace_privacy_loss(outputs, value_d, value_d_prime, sensitivity, epsilon)
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
        interval_95=laplace_interval(sensitivity, epsilon, 0.05),
    )


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


def image_view(alpha: float, beta: float, *, picture=None, seed: int = 0) -> ImageView:
    """Privatize ``picture`` (default: the demo smiley) pixel by pixel and estimate its black fraction back.

    Examples
    --------
    >>> view = image_view(0.5, 0.5)
    >>> round(view.epsilon, 4), round(view.true_fraction, 3)
    (1.0986, 0.27)
    """
    picture = demo_picture() if picture is None else np.asarray(picture)
    private = privatize_image(picture, alpha, beta, rng=np.random.default_rng(seed))
    p, q = alpha_beta_to_p_q(alpha, beta)
    estimate = estimate_black_fraction(private, alpha, beta) if alpha > 0 else math.nan
    return ImageView(
        alpha=float(alpha),
        beta=float(beta),
        p=p,
        q=q,
        epsilon=alpha_beta_epsilon(alpha, beta),
        picture=picture,
        private=private,
        true_fraction=float(picture.mean()),
        observed_fraction=float(private.mean()),
        estimated_fraction=estimate,
    )


def apportion(weights, n: int) -> np.ndarray:
    """Split ``n`` people into integer counts proportional to ``weights`` (largest remainders).

    Examples
    --------
    >>> apportion([8196, 14831, 6499, 15696], 100).tolist()
    [18, 33, 14, 35]
    """
    weights = check_numeric_array(weights, "weights")
    n = check_positive_int(n, "n")
    exact = weights / weights.sum() * n
    counts = np.floor(exact).astype(np.int64)
    remainders = exact - counts
    counts[np.argsort(-remainders, kind="stable")[: n - counts.sum()]] += 1
    return counts


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


def estimation_view(epsilon: float, n: int, *, weights=ADULT_AGE_SEX_COUNTS, seed: int = 0) -> EstimationView:
    """Randomize ``n`` people with k-RR (categories in proportion to ``weights``) and estimate the counts back.

    Error bars are the standard deviation of each unbiased estimate
    (:func:`dplib.krr_count_std`). Negative estimates are fixed two ways: clipped to 0
    (the total grows past n) or projected onto the simplex (:func:`dplib.project_to_simplex`).

    Examples
    --------
    >>> view = estimation_view(1.0, 1000)
    >>> int(view.true_counts.sum()), round(float(view.projected.sum()), 6)
    (1000, 1000.0)
    """
    true_counts = apportion(weights, n)
    k = true_counts.size
    people = np.repeat(np.arange(k), true_counts)
    reports = k_rand_resp(people, k, epsilon, rng=np.random.default_rng(seed))
    estimates = estimate_krr_counts(reports, k, epsilon)
    p, q = krr_probabilities(k, epsilon)
    return EstimationView(
        epsilon=float(epsilon),
        n=int(n),
        p=p,
        q=q,
        true_counts=true_counts,
        report_counts=np.bincount(reports, minlength=k),
        estimates=estimates,
        std=krr_count_std(true_counts, epsilon),
        clipped=np.maximum(estimates, 0.0),
        projected=project_to_simplex(estimates, n),
    )


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
    options = SCORINGS[scoring]
    here = group_outcome_probabilities(sizes, minority, epsilon, **options)
    at_epsilon = pd.DataFrame({"majority": here["majority"].iloc[0], "minority": here["minority"].iloc[0]})
    curves = group_outcome_probabilities(sizes, minority, grid, **options)["majority"]
    return FairnessView(float(epsilon), sizes, minority, at_epsilon, curves)


# ---------------------------------------------------------------------------
# The explorers: controls, in-place drawing, PNG rendering.
# ---------------------------------------------------------------------------


def _epsilon_slider(value: float, low: float = 0.1, high: float = 10.0, continuous: bool = True):
    return widgets.FloatLogSlider(
        value=value,
        base=10,
        min=math.log10(low),
        max=math.log10(high),
        step=0.01,
        description="epsilon",
        readout_format=".3g",
        continuous_update=continuous,
        style=_SLIDER_STYLE,
        layout=_SLIDER_LAYOUT,
    )


def _seed_box(seed: int):
    return widgets.BoundedIntText(
        value=seed, min=0, max=2**31 - 1, description="seed", style=_SLIDER_STYLE, layout={"width": "140px"}
    )


def _nice_ceiling(value: float, steps=LIMIT_STEPS) -> float:
    """Smallest of ``steps`` times a power of ten that is >= ``value`` (1 if ``value`` <= 0).

    Axis limits snap to these, so most slider moves keep the axes (and the cached
    background) unchanged.

    Examples
    --------
    >>> _nice_ceiling(0.23), _nice_ceiling(7.0), _nice_ceiling(1000.0), _nice_ceiling(3.0, steps=(1, 1.5, 3))
    (0.5, 10.0, 1000.0, 3.0)
    """
    if not value > 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    for step in (*steps, 10.0):
        if step * power >= value * (1 - 1e-12):
            return float(f"{step * power:.12g}")
    return 10.0 * power  # pragma: no cover - the loop always returns


class _Explorer:
    """Shared wiring: controls in a row, the figure as a PNG ``Image`` below, a readout under it.

    Subclasses create their controls, pass them (name -> widget) to ``__init__`` and
    implement ``_compute`` (returns the view), ``_build`` (creates the artists once and
    lists those that change in ``self.animated``), ``_draw`` (updates them in place)
    and ``_readout`` (the line of text under the figure).

    Rendering blits: the static part of the figure (frames, axes, ticks, labels) is
    drawn once per set of axis limits and cached (the last ``_cache_size`` sets); an
    update restores it and draws only the artists in ``self.animated`` on top, then
    encodes the pixels as PNG. Limits that follow the data snap to ``LIMIT_STEPS``, so
    most moves of a slider find their background in the cache.
    """

    figsize = (6.0, 3.0)
    _cache_size = 8

    def __init__(self, controls: dict[str, widgets.Widget]):
        self.controls = controls
        self.figure = Figure(figsize=self.figsize, dpi=DPI)
        FigureCanvasAgg(self.figure)
        self.animated: list = []
        self._backgrounds: dict = {}
        self.image = widgets.Image(format="png", layout={"width": f"{int(self.figsize[0] * DPI)}px"})
        self.readout = widgets.HTML()
        self.view = self._compute()
        self._build(self.view)
        for artist in self.animated:
            artist.set_animated(True)
        self.widget = widgets.VBox(
            [
                widgets.HBox(list(controls.values()), layout={"flex_flow": "row wrap"}),
                self.image,
                self.readout,
            ]
        )
        for control in controls.values():
            control.observe(self._on_change, names="value")
        self.update()

    def _on_change(self, change) -> None:
        self.update()

    def update(self) -> None:
        """Recompute the view from the controls, redraw the artists in place, re-render the PNG."""
        self.view = self._compute()
        self._draw(self.view)
        self.readout.value = self._readout(self.view)
        self.image.value = self.png()

    def _render(self) -> None:
        """Draw the figure into the canvas: cached background plus the animated artists."""
        canvas = self.figure.canvas
        key = tuple((ax.get_xlim(), ax.get_ylim()) for ax in self.figure.axes)
        background = self._backgrounds.pop(key, None)
        if background is None:
            canvas.draw()  # skips animated artists: this is the static background
            background = canvas.copy_from_bbox(self.figure.bbox)
            while len(self._backgrounds) >= self._cache_size:
                self._backgrounds.pop(next(iter(self._backgrounds)))
        else:
            canvas.restore_region(background)
        self._backgrounds[key] = background  # most recently used last
        for artist in self.animated:
            self.figure.draw_artist(artist)

    def png(self) -> bytes:
        """The figure as PNG bytes (what the ``image`` widget shows)."""
        self._render()
        pixels = np.asarray(self.figure.canvas.buffer_rgba())
        buffer = io.BytesIO()
        PIL.Image.fromarray(pixels[..., :3]).save(buffer, format="png", compress_level=1)
        return buffer.getvalue()

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    # subclasses implement these
    def _compute(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _build(self, view) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _draw(self, view) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _readout(self, view) -> str:  # pragma: no cover - abstract
        raise NotImplementedError


class LaplaceExplorer(_Explorer):
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
        self.epsilon = _epsilon_slider(epsilon)
        self.sensitivity = widgets.FloatSlider(
            value=sensitivity, min=0.5, max=5.0, step=0.5, description="sensitivity",
            style=_SLIDER_STYLE, layout=_SLIDER_LAYOUT,
        )
        self.seed = _seed_box(seed)
        super().__init__({"epsilon": self.epsilon, "sensitivity": self.sensitivity, "seed": self.seed})

    def _compute(self) -> LaplaceView:
        return laplace_view(self.epsilon.value, self.sensitivity.value, value=self.value, seed=self.seed.value)

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
        self.ax_hist.set_ylim(0, _nice_ceiling(1.1 * top, steps=LIMIT_STEPS))
        self.scale_text.set_text(
            f"f(D) = {view.value_d:g}, f(D') = {view.value_d_prime:g}\nLaplace scale b = {view.scale:.3g}"
        )
        self.loss_line.set_ydata(view.loss)
        self.bound_high.set_ydata([view.epsilon, view.epsilon])
        self.bound_low.set_ydata([-view.epsilon, -view.epsilon])
        limit = _nice_ceiling(1.25 * view.epsilon, steps=LIMIT_STEPS)
        self.ax_loss.set_ylim(-limit, limit)

    def _readout(self, view: LaplaceView) -> str:
        return (
            f"scale b = {view.scale:.3g} &nbsp;|&nbsp; 95% of noisy answers within "
            f"&plusmn;{view.interval_95:.3g} of the truth &nbsp;|&nbsp; "
            f"max privacy loss over all outputs = {view.max_loss:.3f} (epsilon = {view.epsilon:.3f})"
        )


class ImageExplorer(_Explorer):
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
        self.picture = demo_picture() if picture is None else np.asarray(picture)
        self.alpha = widgets.FloatSlider(value=alpha, min=0.0, max=1.0, step=0.01, description="alpha (keep)",
                                         style=_SLIDER_STYLE, layout=_SLIDER_LAYOUT)
        self.beta = widgets.FloatSlider(value=beta, min=0.0, max=1.0, step=0.01, description="beta (black)",
                                        style=_SLIDER_STYLE, layout=_SLIDER_LAYOUT)
        self.seed = _seed_box(seed)
        super().__init__({"alpha": self.alpha, "beta": self.beta, "seed": self.seed})

    def _compute(self) -> ImageView:
        return image_view(self.alpha.value, self.beta.value, picture=self.picture, seed=self.seed.value)

    def _build(self, view: ImageView) -> None:
        self.figure.subplots_adjust(left=0.02, right=0.98, top=0.88, bottom=0.1, wspace=0.3)
        grid = self.figure.add_gridspec(1, 3, width_ratios=[1, 1, 0.8])
        ax_true, ax_private, self.ax_bars = (self.figure.add_subplot(grid[0, i]) for i in range(3))
        for ax in (ax_true, ax_private):
            ax.set_xticks([])
            ax.set_yticks([])
        ax_true.imshow(view.picture, cmap="gray_r", vmin=0, vmax=1, interpolation="nearest")
        ax_true.set_title("the truth", fontsize=10)
        self.private_image = ax_private.imshow(view.private, cmap="gray_r", vmin=0, vmax=1,
                                               interpolation="nearest")
        self.private_title = ax_private.set_title("", fontsize=10)
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
        self.private_title.set_text(f"privatized, epsilon = {_format_epsilon(view.epsilon).split(' ')[0]}")
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
        return (
            f"true black fraction {view.true_fraction:.3f} &nbsp;|&nbsp; estimated from the privatized pixels "
            f"{estimate} &nbsp;|&nbsp; p = P(black | black) = {view.p:.3f}, q = P(white | white) = {view.q:.3f}, "
            f"epsilon = {_format_epsilon(view.epsilon)}"
        )


class EstimationExplorer(_Explorer):
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

    def __init__(self, epsilon: float = 1.0, n: int = 1000, *, weights=ADULT_AGE_SEX_COUNTS,
                 labels=ADULT_AGE_SEX_LABELS, seed: int = 0):
        self.weights = weights
        self.labels = labels
        self.epsilon = _epsilon_slider(epsilon, low=0.05, high=10.0, continuous=False)
        self.n = widgets.IntSlider(value=n, min=50, max=50_000, step=50, description="n (people)",
                                   continuous_update=False, style=_SLIDER_STYLE, layout=_SLIDER_LAYOUT)
        self.seed = _seed_box(seed)
        super().__init__({"epsilon": self.epsilon, "n": self.n, "seed": self.seed})

    def _compute(self) -> EstimationView:
        return estimation_view(self.epsilon.value, self.n.value, weights=self.weights, seed=self.seed.value)

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
        top = _nice_ceiling(1.05 * max(high.max(), view.report_counts.max()), steps=LIMIT_STEPS)
        bottom = -_nice_ceiling(-1.05 * low.min(), steps=LIMIT_STEPS) if low.min() < 0 else -0.02 * top
        self.ax.set_ylim(bottom, top)
        k = view.true_counts.size
        self.title.set_text(f"k-RR, k = {k}: truth kept with p = {view.p:.2f}, each lie q = {view.q:.2f}")

    def _readout(self, view: EstimationView) -> str:
        errors = ", ".join(f"{name} {value:,.0f}" for name, value in view.errors.items())
        totals = f"clipped {view.clipped.sum():,.0f}, projected {view.projected.sum():,.0f} (n = {view.n:,})"
        return f"L1 error: {errors} &nbsp;|&nbsp; totals: {totals}"


class FairnessExplorer(_Explorer):
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
    colors = ("tab:blue", "tab:red", "tab:green", "tab:purple")

    def __init__(self, groups=None, epsilon: float = 0.1):
        groups = {"Blue": (30, 1 / 30), "Red": (70, 9 / 70)} if groups is None else dict(groups)
        if not 1 <= len(groups) <= len(self.colors):
            raise ValueError(f"groups must name 1 to {len(self.colors)} groups, got {len(groups)}")
        self.groups = list(groups)
        self.epsilon = _epsilon_slider(epsilon, low=0.01, high=10.0)
        self.sizes = {
            name: widgets.IntSlider(value=size, min=2, max=500, description=f"{name} size",
                                    style=_SLIDER_STYLE, layout=_SLIDER_LAYOUT)
            for name, (size, _) in groups.items()
        }
        self.base_rates = {
            name: widgets.FloatSlider(value=rate, min=0.0, max=0.5, step=0.01, readout_format=".3f",
                                      description=f"{name} base rate", style=_SLIDER_STYLE, layout=_SLIDER_LAYOUT)
            for name, (_, rate) in groups.items()
        }
        self.scoring = widgets.Dropdown(options=list(SCORINGS), value=next(iter(SCORINGS)), description="score",
                                        style=_SLIDER_STYLE, layout={"width": "320px"})
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
        for name, color in zip(self.groups, self.colors):
            (self.curves[name],) = ax.plot(view.curves.index, view.curves[name], color=color, label=name)
            (self.markers[name],) = ax.plot([view.epsilon], [view.at_epsilon.loc[name, "majority"]], "o", color=color)
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
