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
_CODE = re.compile(r"(^[ \t]*```.*?^[ \t]*```[ \t]*$|^[ \t]*~~~.*?^[ \t]*~~~[ \t]*$|`[^`\n]+`)", re.MULTILINE | re.DOTALL)
_MATH = re.compile(
    r"\$\$(?P<d1>.+?)\$\$"  # $$ display $$
    r"|\\\[(?P<d2>.+?)\\\]"  # \[ display \]
    r"|\\\((?P<i1>.+?)\\\)"  # \( inline \)
    r"|(?<![\\$\w])\$(?P<i2>[^\s$](?:[^$\n]*?[^\s\\$])?)\$(?!\w)",  # $inline$, not a price like $5 or 5$
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


class MathMLPreprocessor(Preprocessor):
    """Replace LaTeX math in Markdown cells by MathML, so HTML exports render math offline."""

    @default("enabled")
    def _enabled_default(self) -> bool:  # nbconvert skips preprocessors that are not enabled
        return True

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown" and ("$" in cell.source or "\\(" in cell.source or "\\[" in cell.source):
            cell.source = markdown_math_to_mathml(cell.source)
        return cell, resources
