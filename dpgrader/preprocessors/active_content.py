"""No active content from a submission in any page a person opens: every output and every text cell made inert.

A student's notebook reaches the instructor's browser through formgrader (which renders the
autograded notebook with nbconvert's ``HTMLExporter``, HTML sanitizing off) and the student's
through the feedback page. Raw ``text/html``, ``application/javascript``, an ``<svg onload>``, a
Markdown cell with ``<img src=x onerror=...>`` or ``[link](javascript:...)``, an ``<iframe srcdoc>``,
a ``<base href>``, a ``<style>`` that hides the grade, a widget view: each would run in that page,
in the instructor's logged-in Jupyter session.

:class:`NeutralizeActiveContent` runs last in ``c.Autograde.autograde_preprocessors``, so the
autograded notebook on disk (what formgrader shows) holds none of it, and again in the feedback
pipeline. Everything goes through one allow-list sanitizer, nh3 (Ammonia), never regular
expressions:

- ``text/html`` outputs are cleaned (:func:`clean_html`): pandas tables, images, MathML stay;
  scripts, styles, frames, forms, event handlers, ``id``/``style`` attributes, links other than
  http(s), mailto and relative ones, and images other than ``data:image/...`` go;
- ``image/svg+xml`` becomes an ``<img>`` of a ``data:`` URI (an image never runs script);
  ``text/markdown`` is rendered and cleaned like a Markdown cell; PNG and JPEG are kept when they are
  base64 and nothing else; every other type (JavaScript, widget views and state, unknown ones) is
  dropped, with a line saying so when nothing visible is left;
- Markdown cells are rendered as nbconvert renders them (math first converted to MathML, as the
  feedback does, attachments embedded) and the *resulting HTML* is cleaned and stored as the
  cell's source: cleaning the HTML that Markdown produces is what closes links such as
  ``[x](javascript:...)``, which nbconvert's Markdown renderer passes through, as well as raw HTML;
- raw cells are escaped (nbconvert copies a raw cell of type ``text/html`` into the page verbatim);
- output metadata keeps only numeric image sizes (nbconvert writes ``width=`` unquoted) and an image's
  text alternative ``alt`` (a string, cut to :data:`MAX_ALT` characters; the templates escape it), and the
  notebook's widget state is dropped.
"""

from __future__ import annotations

import base64
import binascii
import functools
import html
import re

import nh3
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors import Preprocessor
from nbformat.notebooknode import NotebookNode
from traitlets import default

from dpgrader.preprocessors.mathml import markdown_math_to_mathml

# MathML Core, as latex2mathml writes it (dpgrader/preprocessors/mathml.py).
MATHML_ATTRIBUTES = {
    "math": {"display", "alttext", "xmlns"},
    "mo": {"stretchy", "fence", "separator", "lspace", "rspace", "form", "largeop", "movablelimits",
           "symmetric", "minsize", "maxsize", "accent"},
    "mi": {"mathvariant"}, "mn": {"mathvariant"}, "mtext": {"mathvariant"},
    "mstyle": {"displaystyle", "scriptlevel", "mathvariant", "mathsize"},
    "mspace": {"width", "height", "depth"},
    "mpadded": {"width", "height", "depth", "lspace", "voffset"},
    "mfrac": {"linethickness"},
    "mover": {"accent"}, "munder": {"accentunder"}, "munderover": {"accent", "accentunder"},
    "mtable": {"columnalign", "rowspacing", "columnspacing", "columnlines", "rowlines", "frame"},
    "mtr": {"columnalign"}, "mtd": {"columnalign", "columnspan", "rowspan"},
    "menclose": {"notation"},
    "annotation": {"encoding"},
}
MATHML_TAGS = set(MATHML_ATTRIBUTES) | {"mrow", "msub", "msup", "msubsup", "msqrt", "mroot", "ms", "mphantom",
                                        "semantics", "mmultiscripts", "mprescripts", "none"}
TABLE_TAGS = {"table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "col", "colgroup"}
ALLOWED_TAGS = (nh3.ALLOWED_TAGS | TABLE_TAGS | MATHML_TAGS) - {"map", "area"}
_CLASSED = {"table", "thead", "tbody", "tr", "th", "td", "div", "span", "pre", "code", "p"}
ALLOWED_ATTRIBUTES = {
    **{tag: set(attributes) for tag, attributes in nh3.ALLOWED_ATTRIBUTES.items()},
    **MATHML_ATTRIBUTES,
    "*": {"title", "lang", "dir"},
}
for _tag in _CLASSED:  # pandas' class="dataframe", pygments' highlighting classes
    ALLOWED_ATTRIBUTES[_tag] = ALLOWED_ATTRIBUTES.get(_tag, set()) | {"class"}
ALLOWED_ATTRIBUTES["table"] = ALLOWED_ATTRIBUTES["table"] | {"border"}
URL_SCHEMES = {"http", "https", "mailto", "data"}  # data: only for <img src>, see _keep_attribute
_IMAGE_DATA_URI = re.compile(r"data:image/(png|jpeg|gif|svg\+xml);base64,[A-Za-z0-9+/=]*\Z", re.IGNORECASE)
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*\Z")
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f]")

IMAGE_SIZE_KEYS = ("width", "height")
MAX_CACHED_CHARACTERS = 20_000  # a longer cell (a student's) is rendered without keeping it in memory
_WRAPPER = '<div class="dp-markdown">'
REMOVED_NOTE = "[{kinds} output removed: active content is not shown in grading and feedback pages]"


def _keep_attribute(tag: str, attribute: str, value: str) -> str | None:
    """nh3's attribute filter: an image only from a ``data:image/...`` URI (a remote one would tell an outsider who
    opened the page, a relative one could call the server's GET URLs, such as ``/logout``), no other ``data:`` URI."""
    if attribute not in ("href", "src", "cite"):
        return value
    url = _CONTROL_OR_SPACE.sub("", value)  # as a browser's URL parser reads it ("da\tta:" is "data:")
    is_image_data = _IMAGE_DATA_URI.match(url) is not None
    if tag == "img" and attribute == "src":
        return value if is_image_data else None
    return None if url.lower().startswith("data:") else value


def clean_html(text: str) -> str:
    """``text`` (HTML from a submission) with only allow-listed tags, attributes and URLs left (nh3, Ammonia).

    Examples
    --------
    >>> clean_html('<img src=x onerror="alert(1)"><script>alert(2)</script><b>kept</b>')
    '<img><b>kept</b>'
    >>> clean_html('<a href="javascript:alert(1)">x</a> <table border="1" class="dataframe"></table>')
    '<a rel="noopener noreferrer">x</a> <table border="1" class="dataframe"></table>'
    """
    return nh3.clean(str(text), tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, url_schemes=URL_SCHEMES,
                     attribute_filter=_keep_attribute, strip_comments=True, link_rel="noopener noreferrer")


def _image_attachments(attachments: dict) -> dict[str, dict[str, str]]:
    """A Markdown cell's attachments that are base64 raster or SVG images (shown as ``<img>``), nothing else."""
    kept = {}
    for name, bundle in (attachments or {}).items():
        images = {kind: "".join(data.split()) for kind, data in (bundle or {}).items()
                  if kind in ("image/png", "image/jpeg", "image/gif", "image/svg+xml")
                  and isinstance(data, str) and _BASE64.match(data)}
        if images:
            kept[str(name)] = images
    return kept


def markdown_to_safe_html(source: str, attachments: dict | None = None) -> str:
    """Markdown as nbconvert renders it (math as MathML, attachments embedded), cleaned, on one line.

    The result is itself a Markdown source that renders to the same page: one HTML block (a ``<div>``
    with no blank line, newlines written ``&#10;``) that a Markdown renderer copies as it is, with
    ``$`` and ``\\`` written as entities so no later math pass finds a formula in it. Attachments show
    only when they are images; a source the renderer fails on is shown as text.

    Examples
    --------
    >>> markdown_to_safe_html("Say *hi* [x](javascript:alert(1)) <img src=x onerror=alert(1)>")
    '<div class="dp-markdown"><p>Say <em>hi</em> <a rel="noopener noreferrer">x</a> <img></p></div>'
    """
    images = _image_attachments(attachments or {})
    if len(str(source)) > MAX_CACHED_CHARACTERS:
        return _markdown_to_safe_html.__wrapped__(str(source), tuple((n, tuple(k.items())) for n, k in images.items()))
    if not images:  # the course's own cells repeat in every submission: rendered once per process
        return _markdown_to_safe_html(str(source))
    return _markdown_to_safe_html(str(source), tuple((name, tuple(kinds.items())) for name, kinds in images.items()))


class _Renderer(IPythonRenderer):
    """nbconvert's Markdown renderer, with an attachment that is missing or not an image shown as an empty image
    (nbconvert raises for a missing one: formgrader would answer 500 for the whole submission)."""

    def _embed_image_or_attachment(self, src: str) -> str:
        if src.startswith("attachment:") and src[len("attachment:"):] not in self.attachments:
            return ""
        return super()._embed_image_or_attachment(src)


@functools.lru_cache(maxsize=4096)
def _markdown_to_safe_html(source: str, images: tuple = ()) -> str:
    try:
        renderer = _Renderer(escape=False, attachments={name: dict(kinds) for name, kinds in images})
        rendered = MarkdownWithMath(renderer=renderer).render(markdown_math_to_mathml(source))
    except Exception:  # a renderer bug must not put the source on the page unescaped: show it as text
        rendered = f"<pre>{html.escape(source, quote=False)}</pre>"
    cleaned = clean_html(rendered).replace("$", "&#36;").replace("\\", "&#92;").replace("\r", "").rstrip("\n")
    cleaned = cleaned.replace("\n", "&#10;")
    if cleaned.startswith(_WRAPPER) and cleaned.endswith("</div>") and cleaned.count(_WRAPPER) == 1:
        return cleaned  # the source was already made safe (the feedback pipeline runs this again)
    return f"{_WRAPPER}{cleaned}</div>"


def svg_as_image(svg: str) -> str:
    """An ``<img>`` showing ``svg`` from a ``data:`` URI: a browser never runs a script of an image.

    >>> svg_as_image('<svg onload="alert(1)"/>').startswith('<img alt="SVG figure" src="data:image/svg+xml;base64,')
    True
    """
    data = base64.b64encode(str(svg).encode("utf-8")).decode("ascii")
    return f'<img alt="SVG figure" src="data:image/svg+xml;base64,{data}">'


def _is_base64(value) -> bool:
    if not isinstance(value, str) or not _BASE64.match(value):
        return False
    try:
        base64.b64decode("".join(value.split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


#: The longest text alternative of an image kept from a submission's output (dplib.figures writes a few sentences).
MAX_ALT = 2000


def _image_metadata(metadata: dict, kinds: set[str]) -> dict:
    """Output metadata with only numeric image sizes (nbconvert writes ``width=...`` unquoted) and a string ``alt``."""
    kept = {}
    for kind in kinds & {"image/png", "image/jpeg"}:
        sizes = (metadata or {}).get(kind) or {}
        numeric = {key: sizes[key] for key in IMAGE_SIZE_KEYS
                   if isinstance(sizes, dict) and isinstance(sizes.get(key), (int, float))
                   and not isinstance(sizes.get(key), bool)}
        if isinstance(sizes, dict) and isinstance(sizes.get("alt"), str):  # written escaped (escape_html)
            numeric["alt"] = "".join(c for c in sizes["alt"][:MAX_ALT] if c.isprintable())
        if numeric:
            kept[kind] = numeric
    return kept


def safe_output(output: NotebookNode) -> NotebookNode:
    """One output with its active content removed (see the module's docstring); a new node."""
    kind = output.get("output_type")
    if kind == "stream":
        return NotebookNode(output_type="stream", name="stderr" if output.get("name") == "stderr" else "stdout",
                            text=str(output.get("text", "")))
    if kind == "error":
        return NotebookNode(output_type="error", ename=str(output.get("ename", "")), evalue=str(output.get("evalue", "")),
                            traceback=[str(line) for line in output.get("traceback", [])])
    if kind not in ("display_data", "execute_result"):
        return NotebookNode(output_type="stream", name="stdout", text=REMOVED_NOTE.format(kinds=repr(str(kind))) + "\n")
    data, removed = {}, []
    for mime, value in (output.get("data") or {}).items():
        text = "".join(value) if isinstance(value, list) else value
        if mime == "text/html" and isinstance(text, str):
            data[mime] = clean_html(text)
        elif mime == "image/svg+xml" and isinstance(text, str):
            data.setdefault("text/html", svg_as_image(text))
        elif mime == "text/markdown" and isinstance(text, str):
            data.setdefault("text/html", markdown_to_safe_html(text))
        elif mime in ("image/png", "image/jpeg") and _is_base64(text):
            data[mime] = text
        elif mime in ("text/plain", "text/latex") and isinstance(text, str):
            data[mime] = text
        else:
            removed.append(mime)
    if removed and not set(data) - {"text/latex"}:
        data["text/plain"] = REMOVED_NOTE.format(kinds=", ".join(sorted(removed)))
    safe = NotebookNode(output_type=kind, data=NotebookNode(data), metadata=NotebookNode(_image_metadata(output.get("metadata"), set(data))))
    if kind == "execute_result":
        safe.execution_count = output.get("execution_count")
    return safe


class NeutralizeActiveContent(Preprocessor):
    """Every output, Markdown cell and raw cell of a submission made inert (see :mod:`.active_content`).

    Runs last in ``c.Autograde.autograde_preprocessors`` (after the grades are saved), so the
    autograded notebook formgrader renders is clean, and in ``c.GenerateFeedback.preprocessors``
    after :class:`~dpgrader.preprocessors.HideHiddenTests`. Idempotent.
    """

    @default("enabled")
    def _enabled_default(self) -> bool:  # nbconvert skips preprocessors that are not enabled
        return True

    def preprocess(self, nb: NotebookNode, resources: dict):
        nb.metadata.pop("widgets", None)  # widget state: the page would load a widget manager to show it
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        if cell.cell_type == "markdown":
            cell.source = markdown_to_safe_html(cell.source, cell.get("attachments"))
            cell.pop("attachments", None)  # embedded in the source as data: images
        elif cell.cell_type == "raw":
            cell.source = html.escape(str(cell.source), quote=False)
        elif cell.cell_type == "code":
            cell.outputs = [safe_output(output) for output in cell.get("outputs", [])]
        return cell, resources
