"""What every explorer shares: controls in a row, the figure as a PNG below, a readout under it.

An explorer subclasses :class:`Explorer` and implements four small methods: ``_compute``
(calls the lecture's pure ``*_view`` function with the controls' values), ``_build``
(creates the artists once, listing those that change in ``self.animated``), ``_draw``
(updates them in place) and ``_readout`` (the line of text under the figure).

A slider move therefore runs: control ``.value`` changes -> ``update()`` -> ``_compute()``
(the view: numbers only) -> ``_draw(view)`` (set data on existing artists) -> ``png()``
(blit onto a cached background, encode) -> the ``Image`` widget's value. No interactive
matplotlib backend is needed, so the same object works in JupyterLab, in a test and in a
plain PNG.

Accessibility (issue 39): the figure is drawn in :data:`dplib.figures.PALETTE` (``"C0"``, ``"C1"``, ...
name its colours), and the ``Image`` carries the figure's text alternative (its titles, labels and legend,
then the readout) as its ``title``, which a screen reader reads as the image's name; every control has a
``description`` (its visible label) and is reached with Tab.
"""

from __future__ import annotations

import html
import io
import math
import re

import ipywidgets as widgets
import numpy as np
import PIL.Image
from cycler import cycler
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from traitlets import Unicode

from dplib.figures import PALETTE, alt_text

__all__ = ["Explorer", "epsilon_slider", "seed_box", "nice_ceiling", "epsilon_text", "DPI", "LIMIT_STEPS"]

#: Resolution of every explorer figure (dots per inch). Small figures redraw fast.
DPI = 100

#: Axis limits that follow the data snap to these multiples of powers of ten (see ``nice_ceiling``).
LIMIT_STEPS = (1.0, 2.0, 5.0)

#: "C0", "C1", ... in an explorer are the colours of :data:`dplib.figures.PALETTE` (when built and drawn).
PALETTE_RC = {"axes.prop_cycle": cycler(color=PALETTE)}

SLIDER_STYLE = {"description_width": "initial"}
SLIDER_LAYOUT = {"width": "320px"}


def epsilon_text(epsilon: float) -> str:
    """epsilon as shown in titles and readouts: three decimals, or ``inf``.

    Examples
    --------
    >>> epsilon_text(math.log(3)), epsilon_text(math.inf)
    ('1.099', 'inf')
    """
    return "inf" if math.isinf(epsilon) else f"{epsilon:.3f}"


def epsilon_slider(value: float, low: float = 0.1, high: float = 10.0, continuous: bool = True):
    """A log-scale epsilon slider from ``low`` to ``high``."""
    return widgets.FloatLogSlider(
        value=value,
        base=10,
        min=math.log10(low),
        max=math.log10(high),
        step=0.01,
        description="epsilon",
        readout_format=".3g",
        continuous_update=continuous,
        style=SLIDER_STYLE,
        layout=SLIDER_LAYOUT,
    )


def seed_box(seed: int):
    """The seed of the explorer's random generator: a redraw after a slider move changes only what it changes."""
    return widgets.BoundedIntText(
        value=seed, min=0, max=2**31 - 1, description="seed", style=SLIDER_STYLE, layout={"width": "140px"}
    )


def nice_ceiling(value: float, steps=LIMIT_STEPS) -> float:
    """Smallest of ``steps`` times a power of ten that is >= ``value`` (1 if ``value`` <= 0).

    Axis limits snap to these, so most slider moves keep the axes (and the cached
    background) unchanged.

    Examples
    --------
    >>> nice_ceiling(0.23), nice_ceiling(7.0), nice_ceiling(1000.0), nice_ceiling(3.0, steps=(1, 1.5, 3))
    (0.5, 10.0, 1000.0, 3.0)
    """
    if not value > 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    for step in (*steps, 10.0):
        if step * power >= value * (1 - 1e-12):
            return float(f"{step * power:.12g}")
    return 10.0 * power  # pragma: no cover - the loop always returns


class DescribedImage(widgets.Image):
    """An ``Image`` whose ``tooltip`` is its ``title``, the name a screen reader reads.

    ipywidgets 8's view sets the title only when the model's ``description`` is empty, and an ``Image``
    has none: the view fails. This one has an empty ``description``.
    """

    description = Unicode("").tag(sync=True)


class Explorer:
    """Shared wiring: controls in a row, the figure as a PNG ``Image`` below, a readout under it.

    Subclasses create their controls, pass them (name -> widget) to ``__init__`` and
    implement ``_compute``, ``_build``, ``_draw`` and ``_readout`` (see the module docstring).

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
        self.image = DescribedImage(format="png", layout={"width": f"{int(self.figsize[0] * DPI)}px"})
        self.readout = widgets.HTML()
        self.view = self._compute()
        with rc_context(PALETTE_RC):
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
        self.image.tooltip = self.alt_text()

    def alt_text(self) -> str:
        """The figure's text alternative: its titles, labels and legend, then the readout as plain text."""
        readout = re.sub(r"<[^>]*>", " ", self.readout.value)
        readout = re.sub(r"\s+", " ", html.unescape(readout)).strip()
        return f"{alt_text(self.figure)} {readout}".strip()

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
        with rc_context(PALETTE_RC):  # a line keeps "C1" and resolves it when drawn
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
