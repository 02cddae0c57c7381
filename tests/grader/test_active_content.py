"""Active content from a submission is made inert before any page is made of it; honest figures, tables, math stay.

Unit tests of :mod:`dpgrader.preprocessors.active_content` and of the feedback scrub of images (no kernel).
Each payload carries the marker ``PWNED``; a page is safe when no script, event handler, URL, style or
frame of the rendered HTML holds it (it may remain as visible, escaped text). The real pipeline and a real
browser are in ``tests/deploy/test_browser_active_content.py``.
"""

from __future__ import annotations

import base64
import functools
import html
import html.parser
import struct
import zlib

import nbformat
import pytest
from nbconvert.exporters import HTMLExporter
from nbconvert.filters.markdown_mistune import InvalidNotebook
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell

from dpgrader.preprocessors.mathml import latex_to_mathml
from dpgrader.preprocessors import HideHiddenTests, NeutralizeActiveContent, clean_html, quotes_secret, student_frames
from dpgrader.preprocessors.active_content import markdown_to_safe_html, safe_output

MARK = "PWNED"
HTML_PAYLOADS = {
    "script": f"<script>window.{MARK}=1</script>",
    "img_onerror": f"<img src=x onerror=\"{MARK}()\">",
    "svg_onload": f"<svg onload=\"{MARK}()\"><circle r=3 /></svg>",
    "javascript_link": f"<a href=\"javascript:{MARK}()\">click</a>",
    "entity_javascript_link": f"<a href=\"java&#115;cript:{MARK}()\">click</a>",
    "iframe_srcdoc": f"<iframe srcdoc=\"<script>{MARK}()</script>\"></iframe>",
    "base_href": f"<base href=\"https://attacker.invalid/{MARK}/\">",
    "style_hides_grade": f"<style>h4, .score {{ display: none }} /* {MARK} */</style>",
    "style_attribute": f"<div style=\"position:fixed;top:0;left:0;width:100%;height:100%\" title=x>{MARK}-cover</div>",
    "meta_refresh": f"<meta http-equiv=refresh content=\"0;url=https://attacker.invalid/{MARK}\">",
    "form": f"<form action=\"https://attacker.invalid/{MARK}\"><input name=a></form>",
    "object": f"<object data=\"https://attacker.invalid/{MARK}.swf\"></object><embed src=\"https://attacker.invalid/{MARK}\">",
    "remote_image": f"<img src=\"https://attacker.invalid/{MARK}.png\">",
    "data_html_link": f"<a href=\"data:text/html,<script>{MARK}()</script>\">x</a>",
    "math_href": f"<math><mi href=\"javascript:{MARK}()\">x</mi><maction actiontype=statusline>{MARK}</maction></math>",
    "mxss_noscript": f"<noscript><p title=\"</noscript><img src=x onerror={MARK}()>\"></noscript>",
}
MARKDOWN_PAYLOADS = {
    **HTML_PAYLOADS,
    "markdown_javascript_link": f"[click](javascript:{MARK}())",
    "markdown_reference_link": f"[click][r]\n\n[r]: JaVaScRiPt:{MARK}()",
    "markdown_entity_link": f"[click](java&#115;cript:{MARK}())",
    "markdown_image": f"![x](javascript:{MARK}())",
    "html_in_math": f"$<img src=x onerror={MARK}()>$",
    "missing_attachment": f"![x](attachment:{MARK}.png)",
}


class _ActiveParts(html.parser.HTMLParser):
    """Collects what a browser would run or fetch: script and style text, attribute values, frames, bases."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.active: list[str] = []
        self._inside: str | None = None

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name.startswith("on") or name in ("href", "src", "srcdoc", "action", "data", "style", "content", "formaction", "xlink:href"):
                self.active.append(f"{tag} {name}={value}")
        if tag in ("iframe", "base", "object", "embed", "form", "meta"):
            self.active.append(f"<{tag}> {attrs}")
        if tag in ("script", "style"):
            self._inside = tag

    def handle_endtag(self, tag):
        if tag == self._inside:
            self._inside = None

    def handle_data(self, data):
        if self._inside:
            self.active.append(f"<{self._inside}> {data}")


def active_parts(page: str) -> list[str]:
    """Every script, style, attribute value with a URL or code, and frame of ``page`` that holds the marker."""
    parser = _ActiveParts()
    parser.feed(page)
    return [part for part in parser.active if MARK.lower() in part.lower()]


@functools.lru_cache(maxsize=1)
def _classic() -> HTMLExporter:
    return HTMLExporter(template_name="classic")


def classic_page(notebook) -> tuple[str, dict]:
    """``notebook`` exported by nbconvert's classic HTML template (the one formgrader's and the feedback extend)."""
    return _classic().from_notebook_node(notebook)


def png(width: int = 4, height: int = 3, text: bytes | None = None) -> bytes:
    """A small valid PNG (a grey rectangle), with a tEXt chunk when ``text`` is given."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    rows = b"".join(b"\0" + b"\x80" * width for _ in range(height))
    chunks = [chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))]
    if text is not None:
        chunks.append(chunk(b"tEXt", b"Comment\0" + text))
    chunks += [chunk(b"IDAT", zlib.compress(rows)), chunk(b"IEND", b"")]
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks)


def b64(data: bytes | str) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode("ascii")


@pytest.mark.parametrize("name", sorted(HTML_PAYLOADS))
def test_clean_html_leaves_nothing_that_runs(name):
    cleaned = clean_html(HTML_PAYLOADS[name])
    assert not active_parts(cleaned), (name, cleaned)


@pytest.mark.parametrize("name", sorted(MARKDOWN_PAYLOADS))
def test_a_markdown_cell_renders_inert_through_nbconvert(name):
    """The stored source, rendered again by nbconvert's Markdown filter (formgrader's path), runs nothing."""
    notebook = new_notebook(cells=[new_markdown_cell(MARKDOWN_PAYLOADS[name])])
    if name == "missing_attachment":  # nbconvert raises: formgrader would answer 500 for this submission
        with pytest.raises(InvalidNotebook, match="missing attachment"):
            classic_page(notebook)
        before = ""
    else:
        before, _ = classic_page(notebook)
    NeutralizeActiveContent().preprocess(notebook, {})
    after, _ = classic_page(notebook)
    if name not in ("style_attribute", "remote_image", "math_href", "missing_attachment", "mxss_noscript", "html_in_math"):
        assert active_parts(before), f"{name}: the payload must be live without the preprocessor"
    assert not active_parts(after), (name, notebook.cells[0].source)


def test_markdown_keeps_math_tables_code_and_links():
    source = ("Noise $b = s/\\varepsilon$ and\n\n$$e^{\\varepsilon} \\le 2$$\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
              "```python\nx = 1\n\ny = 2\n```\n\nSee [the docs](https://numpy.org) and `code $x$`.")
    safe = markdown_to_safe_html(source)
    assert safe.count("<math ") == 2 and 'display="block"' in safe
    assert "<table>" in safe and "<td>2</td>" in safe
    assert '<a href="https://numpy.org" rel="noopener noreferrer">the docs</a>' in safe
    assert "<code>code &#36;x&#36;</code>" in safe, "code stays code, its $ are not math"
    assert "\n" not in safe and markdown_to_safe_html(safe) == safe, "one line, idempotent"


def test_mathml_of_the_course_survives_cleaning():
    for latex in ("e^{\\varepsilon}", "\\frac{1}{n}\\sum_{i=1}^{n} x_i", "\\sqrt{2\\ln(1.25/\\delta)}", "a < b \\le c"):
        mathml = latex_to_mathml(latex, display=True)
        assert html.unescape(clean_html(mathml)) == html.unescape(mathml), latex


def test_pandas_table_survives_cleaning():
    pd = pytest.importorskip("pandas")
    table = pd.DataFrame({"zip": ["01", "02"], "age": [30, 41]}).to_html()
    cleaned = clean_html(table)
    assert '<table border="1" class="dataframe">' in cleaned
    assert cleaned.count("<td>") == table.count("<td>") == 4 and cleaned.count("<th") == table.count("<th")


def test_outputs_keep_png_and_lose_scripts_widgets_and_bad_metadata():
    figure = b64(png())
    outputs = [
        new_output("display_data", data={"image/png": figure, "text/plain": "<Figure>"},
                   metadata={"image/png": {"width": 400, "height": "1 onerror=PWNED()"}}),
        new_output("display_data", data={"application/javascript": f"{MARK}()"}),
        new_output("display_data", data={"application/vnd.jupyter.widget-view+json": {"model_id": "x", "version_major": 2},
                                         "text/plain": "IntSlider(value=3)"}),
        new_output("display_data", data={"image/svg+xml": f"<svg onload='{MARK}()'/>"}),
        new_output("execute_result", data={"text/markdown": f"[x](javascript:{MARK}())", "text/plain": "md"}, execution_count=3),
        new_output("display_data", data={"image/png": f"\"><script>{MARK}()</script>"}),
    ]
    safe = [safe_output(output) for output in outputs]
    assert safe[0].data["image/png"] == figure and dict(safe[0].metadata) == {"image/png": {"width": 400}}
    assert "application/javascript" not in safe[1].data and "active content is not shown" in safe[1].data["text/plain"]
    assert set(safe[2].data) == {"text/plain"} and safe[2].data["text/plain"] == "IntSlider(value=3)"
    assert safe[3].data["text/html"].startswith('<img alt="SVG figure" src="data:image/svg+xml;base64,')
    assert "javascript" not in safe[4].data["text/html"] and safe[4].execution_count == 3
    assert "image/png" not in safe[5].data, "a PNG that is not base64 would break out of the src attribute"


def test_a_figures_text_alternative_is_kept_and_exported_escaped():
    """dplib.figures' ``alt`` metadata survives (issue 39); a hostile one is text in the attribute, never markup."""
    figure = b64(png())
    outputs = [new_output("display_data", data={"image/png": figure}, metadata={"image/png": {"alt": "A plot of error."}}),
               new_output("display_data", data={"image/png": figure},
                          metadata={"image/png": {"alt": f'"><script>{MARK}()</script>\x07' + "x" * 5000}}),
               new_output("display_data", data={"image/png": figure}, metadata={"image/png": {"alt": ["not", "text"]}})]
    safe = [safe_output(output) for output in outputs]
    assert dict(safe[0].metadata) == {"image/png": {"alt": "A plot of error."}}
    hostile = safe[1].metadata["image/png"]["alt"]
    assert len(hostile) <= 2000 and "\x07" not in hostile
    assert dict(safe[2].metadata) == {}
    notebook = new_notebook(cells=[new_code_cell("plot()", outputs=safe)])
    page, _ = HTMLExporter(template_name="classic").from_notebook_node(notebook)  # the feedback's and formgrader's base
    assert 'alt="A plot of error."' in page and f"<script>{MARK}" not in page and f"&lt;script&gt;{MARK}" in page


def test_a_whole_notebook_exports_inert_and_keeps_the_honest_parts():
    cells = [new_markdown_cell(f"Math $e^{{\\varepsilon}}$ {HTML_PAYLOADS['img_onerror']} [x](javascript:{MARK}())"),
             new_raw_cell(f"<script>{MARK}()</script>", metadata={"raw_mimetype": "text/html"}),
             new_code_cell("x", outputs=[new_output("display_data", data={"text/html": payload, "text/plain": "p"})
                                         for payload in HTML_PAYLOADS.values()]
                           + [new_output("display_data", data={"image/png": b64(png())})])]
    notebook = new_notebook(cells=cells, metadata={"widgets": {"application/vnd.jupyter.widget-state+json": {"state": {}}}})
    before, _ = classic_page(notebook)
    assert active_parts(before)
    NeutralizeActiveContent().preprocess(notebook, {})
    nbformat.validate(notebook)
    page, _ = classic_page(notebook)
    assert not active_parts(page)
    assert "<math " in page and 'src="data:image/png;base64,' in page
    assert "widgets" not in notebook.metadata


def test_the_feedback_scrub_finds_hidden_lines_in_images_and_data_uris():
    secret = "assert f(2) == 4, 'f(2) should be 4'"
    svg = (f"<svg xmlns='http://www.w3.org/2000/svg'><text x='0' y='10'>{secret.replace(chr(39), '&apos;')}"
           "</text></svg>")
    spread = "<svg>" + "".join(f"<tspan>{c}</tspan>" for c in secret) + "</svg>"
    leaks = {
        "svg": svg,
        "svg_split_into_tspans": spread,
        "svg_as_data_uri": f'<img src="data:image/svg+xml;base64,{b64(svg)}">',
        "text_as_png": b64(f"line\n{secret}\n"),
        "png_text_chunk": b64(png(text=secret.encode())),
        "png_compressed_chunk": b64(_with_chunk(png(), b"zTXt", b"Comment\0\0" + zlib.compress(secret.encode()))),
    }
    for name, value in leaks.items():
        assert quotes_secret(value, {secret}), name
    assert not quotes_secret(b64(png()), {secret}), "an honest figure stays"
    assert not quotes_secret(svg_of("an honest label"), {secret})

    cell = new_code_cell("plot()", outputs=[new_output("display_data", data={"image/svg+xml": svg}),
                                            new_output("display_data", data={"image/png": leaks["png_text_chunk"]}),
                                            new_output("display_data", data={"image/png": b64(png())})])
    hide = HideHiddenTests()
    hide._secrets = {secret}
    cell, _ = hide.preprocess_cell(cell, {}, 0)
    assert [list(o.get("data", {})) for o in cell.outputs[:-1]] == [["image/png"]]
    assert cell.outputs[0].data["image/png"] == b64(png())
    assert "2 output line(s) removed from this feedback (an image counts as one line)" in cell.outputs[-1].text


def test_markup_that_breaks_pythons_html_parser_is_still_read_and_stops_nothing():
    # "<![" then no name: Python 3.11's html.parser raises AssertionError. An image's random bytes held it once and
    # stopped generate_feedback for the whole class; a student can print it on purpose.
    secret = "assert f(2) == 4, 'f(2) should be 4'"
    broken = "<![[[5zf\x0f<b>{}</b>"
    assert quotes_secret(broken.format(secret), {secret})
    assert quotes_secret(b64(broken.format(secret.replace("'", "&#39;"))), {secret}), "entities decoded, base64 read"
    assert not quotes_secret(broken.format("an honest label"), {secret})

    cell = new_code_cell("print(x)", outputs=[new_output("stream", name="stdout", text=broken.format("fine")),
                                              new_output("display_data", data={"image/png": b64(broken.format(secret))})])
    hide = HideHiddenTests()
    hide._secrets = {secret}
    cell, _ = hide.preprocess_cell(cell, {}, 0)
    assert [o.get("text") for o in cell.outputs[:1]] == [broken.format("fine")]
    assert "1 output line(s) removed" in cell.outputs[-1].text


def svg_of(text: str) -> str:
    return f"<svg><text>{text}</text></svg>"


def _with_chunk(data: bytes, kind: bytes, body: bytes) -> bytes:
    """``data`` (a PNG) with one more chunk before IEND."""
    chunk = struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    return data[:-12] + chunk + data[-12:]


def test_student_frames_show_the_students_lines_never_the_tests():
    solution = new_code_cell("import math\ndef f(x):\n    y = x + 1\n    return math.log(x)", execution_count=1,
                             metadata={"nbgrader": {"grade_id": "f_solution", "solution": True, "grade": False}})
    test = new_code_cell("assert f(1) == 0\n### BEGIN HIDDEN TESTS\nassert f(-1) == 0\n### END HIDDEN TESTS",
                         execution_count=2,
                         metadata={"nbgrader": {"grade_id": "test_f", "solution": False, "grade": True, "points": 1}})
    traceback = [  # as IPython 8 writes it (ANSI colours included)
        "\x1b[31m-----\x1b[39m", "\x1b[31mValueError\x1b[39m    Traceback (most recent call last)",
        "\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[2]\x1b[39m\x1b[32m, line 3\x1b[39m\n\x1b[32m----> 3\x1b[39m assert f(-1) == 0\n",
        "File \x1b[32m/usr/lib/python3/helpers.py:12\x1b[39m, in \x1b[36mquiet\x1b[39m\n",
        "\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[1]\x1b[39m\x1b[32m, line 4\x1b[39m, in \x1b[36mf\x1b[39m\x1b[34m(x)\x1b[39m\n"
        "\x1b[32m----> 4\x1b[39m     return math.log(x)\n",
        "\x1b[31mValueError\x1b[39m: math domain error",
    ]
    frames = student_frames(traceback, {1: solution, 2: test})
    assert frames[1:] == ["  cell f_solution, line 4, in f:", "    return math.log(x)"]
    assert not any("f(-1)" in line for line in frames)
    assert student_frames(traceback, {2: test}) == [], "no frame of the student's: nothing but the message"

    test.outputs = [new_output("error", ename="ValueError", evalue="math domain error", traceback=traceback)]
    hide = HideHiddenTests()
    hide._cells = {1: solution, 2: test}
    test, _ = hide.preprocess_cell(test, {}, 1)
    (error,) = test.outputs
    assert error.traceback[-1] == "ValueError: math domain error"
    assert "    return math.log(x)" in error.traceback and not any("f(-1)" in line for line in error.traceback)


HOSTILE_ID = f"<img src=x onerror={MARK}()>"
HOSTILE_CODE = f"</pre><script>{MARK}()</script><a href='javascript:{MARK}()'>x</a>"


def test_the_similarity_report_escapes_every_text_of_a_submission():
    from dpgrader.similarity.matches import CLASSMATE, REFERENCE, UNCHECKED, Match
    from dpgrader.similarity.report import report_html

    matches = [Match("a", f"x_solution{HOSTILE_ID}", HOSTILE_ID, "bob", 0.97, HOSTILE_CODE, "y = 1", CLASSMATE),
               Match("a", "x_solution", HOSTILE_ID, "reference", 0.9, HOSTILE_CODE, "", REFERENCE),
               Match("a", HOSTILE_ID, HOSTILE_ID, HOSTILE_CODE, 0.0, "", "", UNCHECKED)]
    page = report_html(HOSTILE_ID, matches, sizes={HOSTILE_ID: 1})
    assert not active_parts(page)
    assert "Content-Security-Policy" in page and page.count(html.escape(HOSTILE_ID)) >= 4


def test_the_misconception_report_escapes_every_text_of_a_submission():
    from dpgrader.classroom import ClassMistakes, Mistake, WrittenAnswer, mistakes_html

    students = (HOSTILE_ID, "bob")
    mistakes = (Mistake("a", "test_x", 2.0, f"Check that $x^2$ is {HOSTILE_CODE}", (HOSTILE_CODE,),
                        ran=students, failed=(HOSTILE_ID,)),)
    report = ClassMistakes("a", mistakes, (WrittenAnswer("a", "written_x", 2.0, f"Why $e^x$? {HOSTILE_CODE}", 1, 1, 0),),
                           {s: 50.0 for s in students}, students, {HOSTILE_CODE: HOSTILE_ID})
    page = mistakes_html(report, labels={HOSTILE_ID: HOSTILE_CODE})
    assert not active_parts(page)
    assert "Content-Security-Policy" in page and "<summary>1 student</summary>" in page and "2 submissions ran" in page
    assert page.count("<math") == 2, "the questions' math renders"


def test_a_pasted_image_stays_and_other_attachments_go():
    figure = b64(png())
    cell = new_markdown_cell("My plot: ![plot](attachment:plot.png) and ![page](attachment:page.html)",
                             attachments={"plot.png": {"image/png": figure[:20] + "\n" + figure[20:]},
                                          "page.html": {"text/html": b64(f"<script>{MARK}()</script>")}})
    notebook = new_notebook(cells=[cell])
    NeutralizeActiveContent().preprocess(notebook, {})
    page, _ = classic_page(notebook)
    assert f'src="data:image/png;base64,{figure}"' in page and not active_parts(page)
    assert "attachments" not in notebook.cells[0]
