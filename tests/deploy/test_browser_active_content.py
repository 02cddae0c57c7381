"""In a real browser, nothing a student hands in runs: formgrader's page of her autograded notebook and her feedback.

One submission of 01_definition carries a payload in every channel a notebook has to a page: raw
``text/html`` (a script, an ``onerror``), ``_repr_javascript_``, ``application/javascript``, an
``<svg onload>``, ``javascript:`` links (in HTML, in a Markdown output, in a Markdown cell), an
``<iframe srcdoc>``, a ``<base href>``, a ``<style>`` that hides the grade, a remote image, a widget view,
a Markdown cell with ``<img onerror>`` and a raw HTML cell. Every payload calls
``window.__pwned.push(name)``. It is graded by the course's own ``nbgrader autograde`` (sandbox on) and
``generate_feedback``; then headless Chromium opens formgrader's page of the submission, served by the
course's own Jupyter server (``/formgrader/submissions/<id>/``), and the feedback page. A hook installed
before any page script (``add_init_script``) defines ``window.__pwned``; dialogs, console messages and
requests to the attacker's host are recorded too. Nothing may run, and the honest figure (a PNG), the
math (MathML) and the grade must be visible.

The same graded notebook proves, without a browser, what feedback shows when a hidden test raises inside
the student's own function (her frames, never the test's lines) and that images holding the kernel's
input history reach the feedback only without hidden-test lines.
"""

from __future__ import annotations

import base64
import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from dpgrader import Course
from dpgrader.course import REPO_ROOT
from helpers.classes import submit_class
from helpers.secret_markers import hidden_test_lines, not_shown
from helpers.variants import notebook_with
from test_browser import browser_page, free_port, save_screenshot, stop_server, wait_until_serving

pytestmark = pytest.mark.xdist_group("grading_active_content")  # one worker grades the submission once

ASSIGNMENT = "01_definition"
SOURCE = REPO_ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
STUDENT = "mallory"
ATTACKER = "attacker.invalid"
PUSH = "window.__pwned.push"

PAYLOADS = f'''import base64 as _b64
import io as _io

from IPython.display import HTML, SVG, Image, Javascript, Markdown, display


class _Sneaky:
    def _repr_javascript_(self):
        return "{PUSH}('repr_javascript')"


display(HTML("<script>{PUSH}('html_script')</script><img src=x onerror=\\"{PUSH}('html_onerror')\\">"))
display(_Sneaky())
display(Javascript("{PUSH}('application_javascript')"))
display(SVG('<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20" onload="{PUSH}(\\'svg_onload\\')">'
            '<circle cx="10" cy="10" r="5"/></svg>'))
display(HTML('<svg onload="{PUSH}(\\'html_svg_onload\\')"></svg>'))
display(HTML('<a class="payload-link" href="javascript:{PUSH}(\\'javascript_link\\')">html link</a>'))
display(HTML('<iframe srcdoc="<script>parent.__pwned.push(\\'iframe_srcdoc\\')</script>"></iframe>'))
display(HTML('<base href="http://{ATTACKER}/">'))
display(HTML("<style>h4, .panel-heading, .panel-title, #toc, math, img {{ display: none !important }}</style>"))
display(HTML('<img src="http://{ATTACKER}/beacon.png">'))
display(Markdown("[markdown output link](javascript:{PUSH}('markdown_output_link'))"))
display({{"application/vnd.jupyter.widget-view+json": {{"model_id": "0" * 32, "version_major": 2, "version_minor": 0}},
         "text/plain": "IntSlider(value=3)"}}, raw=True)

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as _plt
_figure, _ax = _plt.subplots(figsize=(3, 2))
_ax.plot([0, 1, 2], [0, 1, 4])
_buffer = _io.BytesIO()
_figure.savefig(_buffer, format="png")
display(Image(_buffer.getvalue()))  # the honest figure
'''
MARKDOWN_PAYLOAD = (f"With epsilon = 0 nothing can be learned. <img src=x onerror=\"{PUSH}('markdown_onerror')\"> "
                    f"[markdown link](javascript:{PUSH}('markdown_link'))")
RAW_PAYLOAD = f"<script>{PUSH}('raw_cell')</script>"
# Raises ValueError('math domain error') on the hidden test's zero probabilities, in the student's own line.
RAISING_SOLUTION = '''def max_privacy_loss(p_d, p_d_prime):
    """max over outputs y of |ln(p_d[y] / p_d_prime[y])|"""
    ratios = [abs(math.log(a) - math.log(b)) for a, b in zip(p_d, p_d_prime)]
    return max(ratios)
'''
RAISING_LINE = "ratios = [abs(math.log(a) - math.log(b)) for a, b in zip(p_d, p_d_prime)]"
# Runs after test_uniqueness and test_reidentify: shows what the kernel recorded of them, as an SVG and a "PNG".
HISTORY_IMAGES = '''
from IPython.display import SVG as _SVG, display as _display
import base64 as _base64
from xml.sax.saxutils import escape as _escape

_history = "\\n".join(str(cell) for cell in globals().get("In", []))
_display(_SVG('<svg xmlns="http://www.w3.org/2000/svg" width="800" height="40">' + "".join(
    f'<text x="0" y="{12 * (i + 1)}">{_escape(line)}</text>' for i, line in enumerate(_history.split("\\n"))) + "</svg>"))
_display({"image/png": _base64.b64encode(_history.encode()).decode()}, raw=True)
'''


def _submission() -> nbformat.NotebookNode:
    reference = nbformat.read(str(SOURCE), as_version=4)
    solutions = {cell.metadata["nbgrader"]["grade_id"]: cell.source for cell in reference.cells
                 if cell.metadata.get("nbgrader", {}).get("solution")}
    notebook = notebook_with(SOURCE, {
        "uniqueness_solution": PAYLOADS + "\n\n" + solutions["uniqueness_solution"],
        "differencing_attack_solution": solutions["differencing_attack_solution"] + "\n" + HISTORY_IMAGES,
        "max_privacy_loss_solution": RAISING_SOLUTION,
        "written_epsilon_zero": MARKDOWN_PAYLOAD,
    })
    notebook.cells.append(nbformat.v4.new_raw_cell(RAW_PAYLOAD, metadata={"raw_mimetype": "text/html"}))
    return notebook


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The course, one hostile submission autograded (sandbox on) and its feedback: (course, submission id, feedback)."""
    course = Course.from_repo(tmp_path_factory.mktemp("active_content") / "course", [ASSIGNMENT])
    course.generate_assignment(ASSIGNMENT)
    submit_class(course, ASSIGNMENT, {STUDENT: _submission()}, SOURCE.name)
    course.autograde(ASSIGNMENT)
    course.nbgrader("generate_feedback", ASSIGNMENT, "--force")
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        submission_id = gradebook.find_submission_notebook(SOURCE.stem, ASSIGNMENT, STUDENT).id
    feedback = course.root / "feedback" / STUDENT / ASSIGNMENT / f"{SOURCE.stem}.html"
    return course, submission_id, feedback


INSTRUCTOR_SERVER_CONFIG = REPO_ROOT / "deploy" / "jupyterhub" / "jupyter" / "instructor" / "jupyter_server_config.json"


@pytest.fixture
def formgrader(graded, tmp_path, request):
    """The course's own Jupyter server (formgrader enabled, the course's nbgrader_config.py) on a free port.

    With ``indirect`` parameter ``True``, the server reads the hub's instructor configuration, as deployed.
    """
    course, _, _ = graded
    port, token = free_port(), "dp-course-active-content"
    config = tmp_path / "config"
    config.mkdir()
    if getattr(request, "param", False):
        shutil.copy(INSTRUCTOR_SERVER_CONFIG, config / "jupyter_server_config.json")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    command = [sys.executable, "-m", "jupyter_server", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--ServerApp.root_dir={course.root}",
               f"--IdentityProvider.token={token}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    with open(tmp_path / "server.log", "wb") as log:
        server = subprocess.Popen(command, cwd=course.root, env=env, stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_serving(server, f"{url}/api/status?token={token}", tmp_path / "server.log", "the Jupyter server")
            yield url, token
        finally:
            stop_server(server)


class Watch:
    """Everything a page's payloads could do, recorded: pushes to ``window.__pwned``, dialogs, console lines and
    requests to the attacker's host (aborted)."""

    def __init__(self, page):
        self.page, self.dialogs, self.console, self.requests = page, [], [], []
        page.add_init_script("window.__pwned = [];")  # in every frame, before any script of the page
        page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        page.on("console", lambda message: self.console.append(message.text))
        page.route(re.compile(rf"https?://{re.escape(ATTACKER)}/.*"),
                   lambda route: (self.requests.append(route.request.url), route.abort()))

    def ran(self) -> dict[str, list]:
        self.page.wait_for_timeout(1000)  # an onload or onerror fires after the load event
        for link in self.page.locator("a", has_text=re.compile("link$")).all():  # the javascript: links, clicked
            link.dispatch_event("click")
        self.page.wait_for_timeout(300)
        pushed = self.page.evaluate("() => window.__pwned")
        return {"pushed": pushed, "dialogs": self.dialogs, "requests": self.requests,
                "console": [line for line in self.console if "pwned" in line.lower() or ATTACKER in line]}


def _visible_honest_parts(page) -> dict[str, object]:
    page.wait_for_function("() => [...document.images].every(i => i.complete)")
    figures = page.evaluate("""() => [...document.images]
        .filter(i => i.src.startsWith('data:image/png') && i.naturalWidth > 0 && i.getBoundingClientRect().width > 0)
        .length""")
    math = page.locator("math").first
    return {"figures": figures, "math_visible": page.locator("math").count() > 0 and math.is_visible()}


@pytest.mark.browser
@pytest.mark.pipeline
def test_nothing_runs_in_formgrader_page_of_the_submission(graded, formgrader, tmp_path):
    _, submission_id, _ = graded
    url, token = formgrader
    with browser_page() as page:
        watch = Watch(page)
        response = page.goto(f"{url}/formgrader/submissions/{submission_id}/?token={token}")
        assert response.status == 200, f"formgrader answered {response.status}"
        page.wait_for_load_state("networkidle")
        assert page.locator("#notebook-container").count() >= 1, "not formgrader's page of the submission"
        honest = _visible_honest_parts(page)
        title = page.locator(".panel-title").first
        ran = watch.ran()
        save_screenshot(page, tmp_path, "formgrader_active_content.png")
        assert title.is_visible() and "Submission 1 / 1" in title.inner_text(), "the style payload hid formgrader's heading"
    assert ran == {"pushed": [], "dialogs": [], "requests": [], "console": []}, f"a payload ran in formgrader: {ran}"
    assert honest["figures"] >= 1 and honest["math_visible"], honest


def _as_before_sanitizing(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """An autograded notebook as it was before NeutralizeActiveContent: the student's Markdown and raw payloads
    back, and live outputs in her first answer (a notebook autograded by an older version of the course)."""
    submitted = {c.metadata["nbgrader"]["grade_id"]: c for c in _submission().cells if "nbgrader" in c.metadata}
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "markdown" and grade_id in submitted:
            cell.source = submitted[grade_id].source
        if grade_id == "uniqueness_solution":
            cell.outputs += [nbformat.v4.new_output("display_data", data={"text/html": html_payload})
                             for html_payload in (f"<script>{PUSH}('old_script')</script>",
                                                  f"<img src=x onerror=\"{PUSH}('old_onerror')\">")]
            cell.outputs.append(nbformat.v4.new_output("display_data", data={"application/javascript": f"{PUSH}('old_js')"}))
    notebook.cells.append(nbformat.v4.new_raw_cell(RAW_PAYLOAD, metadata={"raw_mimetype": "text/html"}))
    return notebook


@pytest.mark.browser
@pytest.mark.pipeline
@pytest.mark.parametrize("formgrader", [True], indirect=True, ids=["instructor_config"])
def test_the_deployed_formgrader_cleans_a_notebook_autograded_before(graded, formgrader, tmp_path):
    """Second layer: the hub's instructor server runs NeutralizeActiveContent in formgrader's exporter, so a
    notebook autograded before it existed (payloads live on disk) shows nothing that runs either."""
    course, submission_id, _ = graded
    url, token = formgrader
    path = course.root / "autograded" / STUDENT / ASSIGNMENT / SOURCE.name
    saved = path.read_bytes()
    try:
        nbformat.write(_as_before_sanitizing(nbformat.read(str(path), as_version=4)), str(path))
        assert "old_onerror" in path.read_text()
        with browser_page() as page:
            watch = Watch(page)
            response = page.goto(f"{url}/formgrader/submissions/{submission_id}/?token={token}")
            assert response.status == 200, f"formgrader answered {response.status}"
            page.wait_for_load_state("networkidle")
            honest = _visible_honest_parts(page)
            ran = watch.ran()
    finally:
        path.write_bytes(saved)
    assert ran == {"pushed": [], "dialogs": [], "requests": [], "console": []}, f"a payload ran in formgrader: {ran}"
    assert honest["figures"] >= 1 and honest["math_visible"], honest


@pytest.mark.browser
@pytest.mark.pipeline
def test_nothing_runs_in_the_feedback_page(graded, tmp_path):
    _, _, feedback = graded
    with browser_page() as page:
        watch = Watch(page)
        page.goto(feedback.as_uri())
        honest = _visible_honest_parts(page)
        heading = page.locator("h4").first
        ran = watch.ran()
        save_screenshot(page, tmp_path, "feedback_active_content.png")
        assert heading.is_visible() and re.search(r"\(Score: [\d.]+ / [\d.]+", heading.inner_text()), "the grade is hidden"
    assert ran == {"pushed": [], "dialogs": [], "requests": [], "console": []}, f"a payload ran in the feedback: {ran}"
    assert honest["figures"] >= 1 and honest["math_visible"], honest


def _data_uri_texts(page: str) -> str:
    """Every base64 payload of ``page`` (data: URIs and bare image data), decoded as text."""
    texts = []
    for blob in re.findall(r"base64,([A-Za-z0-9+/=]+)", page):
        try:
            texts.append(base64.b64decode(blob).decode("utf-8", errors="ignore"))
        except ValueError:
            continue
    return "\n".join(texts)


@pytest.mark.pipeline
def test_feedback_shows_the_students_own_frames_of_an_error_never_the_hidden_test(graded):
    course, _, feedback = graded
    page = feedback.read_text()
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "ValueError: math domain error" in text
    assert re.search(r"cell max_privacy_loss_solution, line 3, in \S+:", text), "the frame in the student's own cell"
    assert RAISING_LINE in text, "and the student's line itself"
    hidden = _hidden_test_lines(course)
    assert any("max_privacy_loss([0.5, 0.5, 0.0], [0.25, 0.75, 0.0])" in line for line in hidden)
    shown = text + "\n" + _data_uri_texts(page)
    leaked = sorted(line for line in hidden if line in shown or "".join(line.split()) in "".join(shown.split()))
    assert not leaked, f"hidden test lines in the feedback: {leaked[:3]}"


def _hidden_test_lines(course: Course) -> set[str]:
    """Lines of the hidden tests (12 characters or more) that the released notebook does not show."""
    return not_shown(hidden_test_lines(SOURCE), course.root / "release" / ASSIGNMENT / SOURCE.name)


@pytest.mark.pipeline
def test_images_of_the_input_history_reach_the_instructor_not_the_student(graded):
    """The autograded notebook (for the instructor) keeps the history images when the kernel has an input
    history; the feedback keeps none of their hidden-test lines (checked above), and says it removed them."""
    course, _, feedback = graded
    autograded = nbformat.read(str(course.root / "autograded" / STUDENT / ASSIGNMENT / SOURCE.name), as_version=4)
    (cell,) = [c for c in autograded.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "differencing_attack_solution"]
    images = [o for o in cell.outputs if "image/png" in o.get("data", {}) or "text/html" in o.get("data", {})]
    assert len(images) == 2, "the SVG (as an <img>) and the PNG are kept for the instructor"
    recorded = _data_uri_texts(" ".join(str(o.data) for o in images)) + base64.b64decode(
        next(o.data["image/png"] for o in images if "image/png" in o.data)).decode("utf-8", errors="ignore")
    if any(line in recorded for line in _hidden_test_lines(course)):  # the kernel keeps In: the feedback must have removed them
        assert "removed from this feedback (an image counts as one line)" in feedback.read_text()
