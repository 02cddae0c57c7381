"""Every formula of the course renders: no raw ``$`` left in any Markdown cell of a source notebook, as feedback shows it.

Feedback and formgrader pages show a Markdown cell after
:class:`~dpgrader.preprocessors.NeutralizeActiveContent` (math to MathML with :mod:`dpgrader.preprocessors.mathml`, then
nbconvert's Markdown renderer, then nh3) and :class:`~dpgrader.preprocessors.mathml.MathMLPreprocessor`; the misconception
report shows a written answer's question through :func:`dpgrader.preprocessors.mathml.text_to_html`. A ``$`` (or ``\\(``,
``\\[``) left in the visible text outside code is a formula the student sees as raw LaTeX.
"""

from __future__ import annotations

import html.parser

import nbformat
import pytest
from nbconvert.filters.markdown import markdown2html
from nbformat.v4 import new_notebook

from dpgrader.classroom.mistakes import cell_lines
from dpgrader.course import REPO_ROOT
from dpgrader.preprocessors.mathml import MathMLPreprocessor, text_to_html
from dpgrader.preprocessors import NeutralizeActiveContent

SOURCES = sorted((REPO_ROOT / "source").glob("*/*.ipynb"))
RAW_MATH = ("$", "\\(", "\\[")


class _VisibleText(html.parser.HTMLParser):
    """The text a reader sees outside code, preformatted blocks and rendered math."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipped = 0

    def handle_starttag(self, tag, attrs):
        self._skipped += tag in ("code", "pre", "math")

    def handle_endtag(self, tag):
        self._skipped -= tag in ("code", "pre", "math")

    def handle_data(self, data):
        if not self._skipped:
            self.parts.append(data)


def visible_text(page: str) -> str:
    parser = _VisibleText()
    parser.feed(page)
    parser.close()
    return "".join(parser.parts)


def raw_math_left(page: str) -> str | None:
    """The visible text around the first raw math delimiter of ``page``, or None if there is none."""
    text = visible_text(page)
    at = min((text.index(d) for d in RAW_MATH if d in text), default=None)
    return None if at is None else text[max(0, at - 60): at + 60]


def test_the_check_sees_raw_math():
    assert raw_math_left(markdown2html("costs $x^2 and")).strip() == "costs $x^2 and"
    assert raw_math_left(markdown2html("code `$x$` stays code")) is None
    assert raw_math_left(text_to_html("Is $a<b$?")) is None


@pytest.mark.parametrize("markdown", [
    # 09 cell 19 (before its rewrite): a code span over a line break, then a formula
    "`dp_gd(X, y, clip_norm, noise_multiplier, steps,\nlearning_rate, rng=None)`: $\\theta_T$, an array of shape `(d,)`",
    # 09 cell 27: a formula over a line break, with \\_ in \\text
    "so the equation $\\text{dp\\_gd\\_epsilon}(\\sigma) =\n\\varepsilon$ has one solution",
    # 11 cell 3: a formula right after a word
    "the $q$-quantile of the Beta$(a, b)$ distribution",
    # 08 cell 5: \\big and a line break
    "$\\Phi\\big(\\frac{a}{2} -\n\\frac{b}{c}\\big) \\le \\delta$; dplib provides it",
], ids=["code_span_over_a_line_break", "formula_over_a_line_break", "formula_after_a_word", "big_over_a_line_break"])
def test_formulas_the_renderer_once_missed(markdown):
    page = markdown2html(NeutralizeActiveContent().preprocess_cell(
        nbformat.v4.new_markdown_cell(markdown), {}, 0)[0].source)
    assert raw_math_left(page) is None and "<math" in page


@pytest.mark.parametrize("source", SOURCES, ids=[s.parent.name for s in SOURCES])
def test_every_formula_of_a_notebook_renders_in_feedback(source):
    notebook = nbformat.read(str(source), as_version=4)
    cells = [cell for cell in notebook.cells if cell.cell_type == "markdown"]
    rendered = new_notebook(cells=[nbformat.from_dict(dict(cell)) for cell in cells])
    NeutralizeActiveContent().preprocess(rendered, {})
    MathMLPreprocessor().preprocess(rendered, {})
    left = {}
    for original, cell in zip(cells, rendered.cells):
        found = raw_math_left(markdown2html(cell.source))
        if found is not None:
            left[notebook.cells.index(original)] = found
    assert not left, f"{source.parent.name}: raw LaTeX left in cells {left}"


@pytest.mark.parametrize("source", SOURCES, ids=[s.parent.name for s in SOURCES])
def test_every_question_of_the_misconception_report_renders(source):
    left = {grade_id: raw_math_left(text_to_html(line)) for grade_id, (line, _) in cell_lines(source).items()}
    assert not {g: found for g, found in left.items() if found is not None}
