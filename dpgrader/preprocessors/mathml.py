"""Math that renders offline: LaTeX in Markdown cells becomes MathML when a notebook is exported to HTML.

nbconvert's HTML loads MathJax from a CDN, so on a course machine without internet the
feedback and formgrader pages show raw ``$e^{\\varepsilon}$``. Every current browser draws
MathML itself (MathML Core), so converting the math once, at export time, needs nothing at
view time: :class:`MathMLPreprocessor` rewrites ``$...$``, ``$$...$$``, ``\\(...\\)`` and
``\\[...\\]`` in Markdown cells with ``latex2mathml`` and leaves code (fenced blocks, inline code
spans) untouched. A formula latex2mathml cannot parse is left as it was.

It runs in ``c.GenerateFeedback.preprocessors`` (feedback HTML) and, for formgrader, in
``c.HTMLExporter.preprocessors`` of the instructor's Jupyter server.
"""

from __future__ import annotations

import html
import re

from latex2mathml.converter import convert
from nbconvert.preprocessors import Preprocessor
from traitlets import default

# Code is protected first, then math is found, longest delimiters first.
# (Indented lines are not taken for code: in the course's notes they continue a list item, formulas included.)
# A code span or an inline formula may run over a line break (as in CommonMark and pandoc), never over a blank line.
_CODE = re.compile(r"(^[ \t]*```.*?^[ \t]*```[ \t]*$|^[ \t]*~~~.*?^[ \t]*~~~[ \t]*$|`(?:[^`\n]|\n(?![ \t]*\n))+`)",
                   re.MULTILINE | re.DOTALL)
_MATH = re.compile(
    r"\$\$(?P<d1>.+?)\$\$"  # $$ display $$
    r"|\\\[(?P<d2>.+?)\\\]"  # \[ display \]
    r"|\\\((?P<i1>.+?)\\\)"  # \( inline \)
    # $inline$ (pandoc's rule): no space inside either $, the closing one not followed by a digit, so a price
    # ("$5 and $6") is no formula; "Beta$(a, b)$" is one
    r"|(?<![\\$])\$(?P<i2>[^\s$](?:(?:[^$\n]|\n(?![ \t]*\n))*?[^\s\\$])?)\$(?![\d$])",
    re.DOTALL,
)


def latex_to_mathml(latex: str, display: bool = False) -> str | None:
    """MathML for one LaTeX formula, or ``None`` if latex2mathml cannot parse it.

    Parameters
    ----------
    latex : str
        The formula without its delimiters, e.g. ``"e^{\\varepsilon}"``.
    display : bool
        A block formula (``$$...$$``) rather than an inline one.

    Examples
    --------
    >>> mathml = latex_to_mathml("e^{x}")
    >>> mathml.startswith("<math") and 'display="inline"' in mathml and "<msup>" in mathml
    True
    """
    try:
        mathml = convert(latex.strip(), display="block" if display else "inline")
    except Exception:  # latex2mathml raises many kinds of errors on unknown commands
        return None
    # the TeX source stays in alttext, for copy-paste and screen readers
    return mathml.replace("<math ", f'<math alttext="{html.escape(latex.strip(), quote=True)}" ', 1)


def _replace_math(text: str) -> str:
    def one(match: re.Match) -> str:
        display = match.group("d1") is not None or match.group("d2") is not None
        latex = next(g for g in (match.group("d1"), match.group("d2"), match.group("i1"), match.group("i2")) if g is not None)
        mathml = latex_to_mathml(latex, display=display)
        return match.group(0) if mathml is None else mathml

    return _MATH.sub(one, text)


def markdown_math_to_mathml(markdown: str) -> str:
    """Markdown with every formula outside code replaced by MathML.

    Examples
    --------
    >>> out = markdown_math_to_mathml("noise $b = s/\\\\varepsilon$ and `$HOME`")
    >>> "<math" in out and "`$HOME`" in out and "$b" not in out
    True
    """
    pieces, last = [], 0
    for code in _CODE.finditer(markdown):
        pieces.append(_replace_math(markdown[last : code.start()]))
        pieces.append(code.group(0))
        last = code.end()
    pieces.append(_replace_math(markdown[last:]))
    return "".join(pieces)


def text_to_html(text: str) -> str:
    """Plain text (one line of a report) as HTML: escaped, every formula outside code as MathML.

    A formula latex2mathml cannot parse stays as escaped text.

    Examples
    --------
    >>> out = text_to_html("Is $a<b$ for a < b? `$HOME`")
    >>> out.count("<math") == 1 and "for a &lt; b?" in out and "`$HOME`" in out
    True
    """
    pieces, last = [], 0
    for match in _MATH.finditer(text):
        if any(code.start() < match.start() < code.end() for code in _CODE.finditer(text)):
            continue  # a $ inside a code span is not math
        display = match.group("d1") is not None or match.group("d2") is not None
        latex = next(g for g in (match.group("d1"), match.group("d2"), match.group("i1"), match.group("i2")) if g is not None)
        mathml = latex_to_mathml(latex, display=display)
        pieces.append(html.escape(text[last:match.start()], quote=False))
        pieces.append(html.escape(match.group(0), quote=False) if mathml is None else mathml)
        last = match.end()
    pieces.append(html.escape(text[last:], quote=False))
    return "".join(pieces)


class MathMLPreprocessor(Preprocessor):
    """Replace LaTeX math in Markdown cells by MathML, so HTML exports render math offline."""

    @default("enabled")
    def _enabled_default(self) -> bool:  # nbconvert skips preprocessors that are not enabled
        return True

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown" and ("$" in cell.source or "\\(" in cell.source or "\\[" in cell.source):
            cell.source = markdown_math_to_mathml(cell.source)
        return cell, resources
