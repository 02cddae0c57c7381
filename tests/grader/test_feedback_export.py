"""Feedback pages are written without nbconvert's BeautifulSoup pass, and are the pages that pass would write.

``NamedFeedbackExporter`` skips the pass (half of a page's export, issue 40) unless an ``<img>`` may lack ``alt``
(``images_lack_alt``); then nbconvert's own pass runs. Checked here against nbconvert itself: the reading of the
tags never misses an image BeautifulSoup would give the placeholder, and every page, parsed once, is the page
``HTMLExporter.from_notebook_node`` writes.
"""

from __future__ import annotations

import base64
import itertools
import random
from pathlib import Path

import nbformat
import nbgrader
import pytest
from bs4 import BeautifulSoup
from nbconvert.exporters import HTMLExporter
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from dpgrader.preprocessors.feedback import ALT_PLACEHOLDER, FEEDBACK_TEMPLATE_DIRS, NamedFeedbackExporter, images_lack_alt


def soup_finds_no_alt(html: str) -> bool:
    """What nbconvert's pass looks for: an ``img`` element without an ``alt`` attribute."""
    return bool(BeautifulSoup(html, features="html.parser").select("img:not([alt])"))


@pytest.mark.parametrize(("html", "lacks"), [
    ('<img src="data:," alt="a plot">', False),
    ("<img src='x' alt='a > b'>", False),
    ('<img title="a > b" alt="c">', False),
    ("<img src=x alt=y>", False),
    ('<IMG SRC="x" ALT="y">', False),
    ('<img alt src="x">', False),
    ('<p>2 &lt; 3</p><img\nsrc="x"\nalt="">', False),
    ("<p>no image</p><image href=x><imgx src=y>", False),
    ('<img src="x">', True),
    ("<img>", True),
    ('<img data-alt="x" src="y">', True),
    ('<img title="alt=x" src="y">', True),
    ("<img title='a alt=b'>", True),
    ('<img src="x" alt="y"><img src="z">', True),
    ('<img src="x', True),  # cut short: a tag this reading cannot delimit
])
def test_images_lack_alt_reads_the_tags(html, lacks):
    assert images_lack_alt(html) is lacks
    if not lacks:
        assert not soup_finds_no_alt(html)


ATTRIBUTES = ['src="data:,"', "src=x", 'alt="a"', "alt='b'", "alt=c", "ALT=d", "alt", 'title="a > b"', "title='alt=x'",
              'data-alt="e"', 'title="x alt=y"', "width=3", 'title=""', "/", '"', "'", "=", "alt=", 'alt ="f"']


def test_no_image_without_alt_is_missed_in_made_up_tags():
    """Over thousands of tags built from well- and ill-formed pieces: whenever BeautifulSoup finds an image without
    ``alt``, so does the exporter's reading (the reverse, a needless parse, only costs time)."""
    rng = random.Random(40)
    separators = [" ", "\n", "  ", ""]
    checked = 0
    for size, _ in itertools.product(range(0, 5), range(600)):
        parts = [rng.choice(separators) + rng.choice(ATTRIBUTES) for _ in range(size)]
        html = f"<p>x</p><{rng.choice(['img', 'IMG', 'Img'])}{rng.choice([' ', chr(10)])}{''.join(parts)}>tail"
        if soup_finds_no_alt(html):
            assert images_lack_alt(html), html
        checked += 1
    assert checked == 3000


def _png() -> str:
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(1, 1))
    axes.plot([0, 1], [1, 0])
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode()


def _graded_notebook(alt: str | None) -> nbformat.NotebookNode:
    """A small autograded notebook: a passing and a failing test, Markdown with math and an image, one figure."""
    figure = new_output("display_data", data={"image/png": _png(), "text/plain": "<Figure>"},
                        metadata={"image/png": {"alt": alt}} if alt else {})
    failed = new_output("error", ename="AssertionError", evalue="expected 0.5 (it's ε/2), got 1.0 <b>",
                        traceback=["AssertionError: expected 0.5 (it's ε/2), got 1.0 <b>"])
    cells = [
        new_markdown_cell("# Exercise\n\nThe loss is $\\ln(e^\\varepsilon)$ & more: ![a bar chart](data:image/png;base64,"
                          + _png() + ")"),
        new_code_cell("def f(x):\n    return x", metadata={"nbgrader": {
            "grade": False, "solution": True, "locked": False, "task": False, "grade_id": "f_solution",
            "schema_version": 3}}),
        new_code_cell("assert f(1) == 1", metadata={"nbgrader": {
            "grade": True, "solution": False, "locked": True, "task": False, "grade_id": "test_f", "points": 1.0,
            "score": 1.0, "schema_version": 3}}),
        new_code_cell("assert f(1) == 0.5", outputs=[failed], metadata={"nbgrader": {
            "grade": True, "solution": False, "locked": True, "task": False, "grade_id": "test_g", "points": 2.0,
            "score": 0.0, "schema_version": 3}}),
        new_code_cell("plot()", outputs=[figure]),
    ]
    return new_notebook(cells=cells, metadata={"language_info": {"name": "python", "pygments_lexer": "ipython3"}})


def _resources() -> dict:
    return {"nbgrader": {"notebook": "exercise", "score": 1.0, "max_score": 3.0, "late_penalty": 0.0,
                         "pending_points": 0.0}}


class _WithTheSoupPass(NamedFeedbackExporter):
    """The exporter as it was: nbconvert's ``HTMLExporter.from_notebook_node``, BeautifulSoup pass included."""

    def from_notebook_node(self, nb, resources=None, **kw):
        return HTMLExporter.from_notebook_node(self, nb, resources, **kw)


def _export(exporter_class, notebook) -> str:
    """The page of ``notebook`` as ``nbgrader generate_feedback`` configures the exporter (bootstrap's CSS inlined)."""
    bootstrap = Path(nbgrader.__file__).parent / "server_extensions/formgrader/static/node_modules/bootstrap/dist/css"
    exporter = exporter_class(template_name="feedback_named", extra_template_basedirs=FEEDBACK_TEMPLATE_DIRS,
                              extra_template_paths=[str(bootstrap)])
    return exporter.from_notebook_node(notebook, _resources())[0]


@pytest.mark.parametrize("alt", ["A line from (0, 1) to (1, 0).", None], ids=["figure-with-alt", "figure-without-alt"])
def test_the_page_is_the_page_nbconverts_pass_writes(alt):
    notebook = _graded_notebook(alt)
    page, before = _export(NamedFeedbackExporter, notebook), _export(_WithTheSoupPass, notebook)
    assert "expected 0.5" in before and before.count("<img") == 2  # the page shows the failure and both images
    assert str(BeautifulSoup(page, features="html.parser")) == before
    if alt is None:  # the figure has no text alternative: nbconvert's pass ran, and gave it the placeholder
        assert page == before and before.count(f'alt="{ALT_PLACEHOLDER}"') == 1
    else:  # every image had its alt: the page was not parsed and written out again
        assert page != before and ALT_PLACEHOLDER not in page and f'alt="{alt}"' in page
