"""Accessible figures: a colour-blind-safe palette, and a text alternative for every figure dplib draws.

A figure dplib draws carries a title and a one-sentence description (:func:`describe`); :func:`alt_text`
reads them back as the sentence a screen reader speaks. A figure nobody described gets one made from
what it shows in words: its titles, axis labels and legend entries.

In a Jupyter kernel, :func:`show_alt_text` (run by ``import dplib``) makes the PNG of every matplotlib figure carry that text as display metadata,
``{"image/png": {"alt": ...}}``: nbconvert's classic template (feedback pages, formgrader) and the
course's ``dp_course`` HTML template (``jupyter nbconvert --to html`` in the course's environment) write it
as the image's ``alt``.

Colours come from :data:`PALETTE`, Okabe and Ito's (2002) palette, told apart with any common colour
vision deficiency; a line that carries meaning also differs in marker or style, never in red against
green alone.
"""

from __future__ import annotations

import re
import sys

__all__ = ["PALETTE", "MARKERS", "describe", "alt_text", "show_alt_text"]

#: Okabe & Ito, "Color Universal Design" (2002): blue, orange, bluish green, vermillion, reddish purple,
#: sky blue, yellow; distinguishable under protanopia, deuteranopia and tritanopia.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442")

#: Markers paired with :data:`PALETTE`, so that a series is told apart without its colour too.
MARKERS = ("o", "s", "^", "D", "v", "P", "X")

_KEY = "dplib_description"


def describe(ax, title: str, sentence: str, *, show_title: bool = True):
    """Give the axes ``ax`` a title (shown, unless it has one) and a one-sentence description; return ``ax``.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes drawn on.
    title : str
        A short title, shown above the axes when they have none yet.
    sentence : str
        One sentence saying what the axes show, for a reader who cannot see them.
    show_title : bool
        Also show ``title`` above the axes when they have no title yet (``False``: in the text only).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = describe(Figure().add_subplot(), "Coins", "Two bars: heads and tails.")
    >>> alt_text(ax.figure)
    'Coins. Two bars: heads and tails.'
    """
    for name, text in (("title", title), ("sentence", sentence)):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{name} must be a non-empty string, got {text!r}")
    if show_title and not ax.get_title():
        ax.set_title(title)
    setattr(ax, _KEY, (title.strip(), sentence.strip()))
    return ax


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("$", "")).strip()


def _axes_text(ax) -> str:
    described = getattr(ax, _KEY, None)
    title = _clean(ax.get_title()) or (described[0] if described else "")
    if described:
        sentence = described[1]
    else:
        x, y = _clean(ax.get_xlabel()), _clean(ax.get_ylabel())
        plot = f"A plot of {y} against {x}" if x and y else f"A plot of {y}" if y else f"A plot against {x}" if x else ""
        legend = ax.get_legend()
        entries = [_clean(t.get_text()) for t in legend.get_texts()] if legend is not None else []
        entries = [e for e in entries if e]
        if entries:
            plot = (plot or "A plot") + "; legend: " + ", ".join(entries)
        sentence = plot + "." if plot else ""
    title = title if not title or title.endswith((".", "?", "!")) else title + "."
    return " ".join(part for part in (title, sentence) if part)


def alt_text(figure) -> str:
    """The text alternative of a matplotlib figure: each axes' title and description, in order.

    Axes described with :func:`describe` give their sentence; the others their title, then "A plot of <y
    label> against <x label>" and their legend entries. A figure with nothing in words is "A figure with no text."

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> figure = Figure()
    >>> ax = figure.add_subplot()
    >>> _ = ax.plot([1, 2], label="noisy"), ax.set_xlabel("epsilon"), ax.legend()
    >>> alt_text(figure)
    'A plot against epsilon; legend: noisy.'
    """
    texts = [text for text in (_axes_text(ax) for ax in figure.axes if ax.get_visible()) if text]
    suptitle = getattr(figure, "_suptitle", None)
    if suptitle is not None and _clean(suptitle.get_text()):
        texts.insert(0, _clean(suptitle.get_text()).rstrip(".") + ".")
    return " ".join(texts) if texts else "A figure with no text."


def _alt_metadata(figure, include=None, exclude=None):
    """IPython's mime-bundle formatter of figures: no data (the PNG formatter gives it), the PNG's alt text."""
    return {}, {"image/png": {"alt": alt_text(figure)}}


def show_alt_text(shell=None) -> bool:
    """In an IPython kernel, make every matplotlib figure's PNG carry :func:`alt_text` as its ``alt``.

    Registers a mime-bundle formatter for ``matplotlib.figure.Figure`` (by name: matplotlib is not
    imported) that gives only the metadata ``{"image/png": {"alt": ...}}``; the inline backend's PNG
    formatter still gives the picture. Returns whether a shell was found (``False`` outside IPython).

    Examples
    --------
    >>> show_alt_text()  # not in a kernel
    False
    """
    if shell is None:
        ipython = sys.modules.get("IPython")  # a kernel has imported it; nothing else needs to
        shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return False
    shell.display_formatter.mimebundle_formatter.for_type_by_name("matplotlib.figure", "Figure", _alt_metadata)
    return True
