"""The secret scrubber: no line of a hidden test or a solution in anything feedback shows.

:func:`secret_lines` reads the secrets (every line of a hidden-test region or a solution, long enough to mean
something) from the source notebooks; :func:`message_secrets` adds the string literals of the tests, which a
failure message may quote; :func:`scrub` removes them from a text, and :func:`quotes_secret` tells whether a
value quotes one in any form it may be shown in (HTML, Markdown, an image's text chunks, a data URI).
"""

from __future__ import annotations

import ast
import base64
import binascii
import html
import html.parser
import json
import re
import zlib

from dpgrader.cells import SECRET_REGIONS, LineKind, mark_lines

MIN_SECRET_LENGTH = 12  # shorter lines (``return x``, ``)``) are too common to mean anything


def secret_lines(sources: list[str]) -> set[str]:
    """Stripped lines of hidden tests, reference solutions and mark schemes in ``sources`` (cell texts).

    The regions are read by :func:`dpgrader.cells.mark_lines` (:data:`~dpgrader.cells.SECRET_REGIONS`; an
    unterminated or nested region is secret to its end). Marker lines are neither secret nor public. Lines
    that also appear outside those regions (what students see anyway) and lines shorter than
    :data:`MIN_SECRET_LENGTH` are left out.
    """
    secret, public = set(), set()
    for text in sources:
        for line, kind in mark_lines(text, SECRET_REGIONS):
            if line.strip() and kind in (LineKind.HIDDEN, LineKind.VISIBLE):
                (secret if kind is LineKind.HIDDEN else public).add(line.strip())
    return {line for line in secret - public if len(line) >= MIN_SECRET_LENGTH}


def _string_literals(source: str) -> list[str]:
    """The string constants of a cell's code, f-strings' constant parts included (none if it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def message_secrets(sources: list[str]) -> set[str]:
    """The lines a failure message the course's tests raised must not quote: hidden-test *code*.

    These are the lines of :func:`secret_lines` inside hidden-test regions (not solutions or mark schemes:
    neither is in the grading kernel, so no value a message quotes can hold them), without those that
    a string literal of the notebook contains: a message or hint the course wrote for students, split
    over lines (``"two calls of ..., rng=np.random.default_rng(2024))"``), is theirs to read.
    What is left can reach a course message only through a value the student's code made (a type's
    name, a dict's keys); :class:`HideHiddenTests` removes the lines that quote it.
    """
    hidden = {line.strip() for text in sources for line, kind in mark_lines(text) if kind is LineKind.HIDDEN}
    literals = [literal for text in sources for literal in _string_literals(text)]
    return {line for line in hidden & secret_lines(sources) if not any(line in literal for literal in literals)}


def scrub(text: str, secrets: set[str]) -> tuple[str, int]:
    """``text`` without the lines that quote a secret line (verbatim, or escaped as in a ``repr``)."""
    if not secrets or not text:
        return text, 0
    forms = secrets | {json.dumps(line)[1:-1] for line in secrets} | {repr(line)[1:-1] for line in secrets}
    kept, removed = [], 0
    for line in text.split("\n"):
        if any(form in line for form in forms):
            removed += 1
        else:
            kept.append(line)
    return "\n".join(kept), removed


_DATA_URI = re.compile(r"data:[\w.+/-]*(?:;[\w.+=-]*)*;base64,([A-Za-z0-9+/=\s]+)", re.IGNORECASE)
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_INFLATED_BYTES = 16 << 20  # a text chunk that inflates to more than this is not read further


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _png_texts(data: bytes) -> list[bytes]:
    """The text chunks of a PNG: tEXt, zTXt and iTXt, inflated when compressed.

    Its pixels are not read: text drawn into an image is beyond any scrub (an OCR would be needed).
    """
    found, position = [], len(_PNG_SIGNATURE)
    while position + 8 <= len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind, body = data[position + 4:position + 8], data[position + 8:position + 8 + length]
        position += 12 + length
        if kind in (b"tEXt", b"iTXt", b"zTXt"):
            found.append(body)
            keyword_end = body.find(b"\0")
            for start in (keyword_end + 2, keyword_end + 3, keyword_end + 5):  # zTXt; iTXt (flags, method, tags)
                try:
                    found.append(zlib.decompressobj().decompress(body[start:], MAX_INFLATED_BYTES))
                except zlib.error:
                    pass
    return found


class _Text(html.parser.HTMLParser):
    """The text of markup (HTML, SVG) without its tags, entities decoded."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


_TAG = re.compile(r"<[^>]*>")


def _markup_text(value: str) -> str:
    """``value``'s text without its tags. Python 3.11's parser raises ``AssertionError`` on a malformed ``<![``
    section, which a student can print or an image's bytes can hold: then every tag is cut out by a pattern, so
    the text after it is still read (never an error that stops the feedback of a whole class)."""
    parser = _Text()
    try:
        parser.feed(value)
        parser.close()
    except AssertionError:
        return html.unescape(_TAG.sub("", value))
    return "".join(parser.parts)


def _views(value: str, depth: int = 0) -> list[str]:
    """The texts a browser could show from one output value: as written, its text without markup (an SVG's
    ``<text>``), and, decoded, the base64 of an image and the ``data:`` URIs inside it (recursively, twice)."""
    views = [value, _markup_text(value)] if "<" in value else [value]
    if depth >= 2:
        return views
    blobs = [match.group(1) for match in _DATA_URI.finditer(value)]
    if len(value) >= 16 and not value.lstrip().startswith("<"):
        blobs.append(value)  # an image/png or image/jpeg value is base64 itself
    for blob in blobs:
        try:
            data = base64.b64decode("".join(blob.split()), validate=True)
        except (binascii.Error, ValueError):
            continue
        decoded = [data] + (_png_texts(data) if data.startswith(_PNG_SIGNATURE) else [])
        for raw in decoded:
            views += _views(raw.decode("utf-8", errors="ignore"), depth + 1)
            views.append(raw.decode("latin-1"))
    return views


def quotes_secret(value: str, secrets: set[str]) -> bool:
    """Whether any text a page could show from ``value`` (see :func:`_views`) holds a secret line, with
    whitespace ignored (an SVG spaces its text as it likes)."""
    if not secrets or not value:
        return False
    forms = {_squeezed(form) for line in secrets for form in (line, json.dumps(line)[1:-1], repr(line)[1:-1])}
    for view in _views(value):
        squeezed = _squeezed(view)
        if any(form in squeezed for form in forms):
            return True
    return False
