"""WCAG 2.1 AA in a real browser: axe-core finds no serious or critical violation on any page a person opens.

Issue 39. Public universities must publish course material that meets WCAG 2.1 AA. Headless Chromium (Debian's,
driven by Playwright as in ``test_browser.py``) opens every kind of page this course hands a person, and axe-core
(the copy ``axe-playwright-python`` ships, from the ``test`` extra: nothing is fetched at test time) checks it:

- a student's feedback page (figures, MathML, a failed test) and the reference's, as ``nbgrader generate_feedback``
  writes them;
- the misconception report ``mistakes/<assignment>.html``, with names and as ``--no-names`` writes it;
- the similarity report, over a class with a copied pair, a pasted dplib function and the reference handed in;
- formgrader's page of an autograded notebook, served by the course's own Jupyter server;
- every lecture and assignment notebook exported with ``jupyter nbconvert --to html`` as a student exports it, and
  an executed one with figures (the autograded reference).

The graded class is the session's ``graded_assignment("02_laplace")`` (``tests/notebooks/test_pipeline.py`` grades it
anyway; this module joins its xdist group). One browser serves the module; each page is one test. Network requests
other than to this machine are aborted, as on a student's laptop offline. ``A11Y_COUNTS=<file>`` appends each page's
counts (serious or critical violations, all violations; rules and nodes) to that file as JSON lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from nbgrader.api import Gradebook

from dpgrader.classroom.mistakes import class_mistakes
from dpgrader.classroom.mistakes_page import mistakes_html
from dpgrader.course import REPO_ROOT
from dpgrader.similarity import find_matches, minimum_sizes, report_html, solution_cells
from dpgrader.simulation.copying import disguise
from helpers.variants import notebook_with
from test_browser import CHROMIUM, CHROMIUM_FLAGS, STEP_TIMEOUT_MS, sync_playwright_or_skip
from test_browser_formgrader import _serve, _stop

ASSIGNMENT = "02_laplace"
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group(ASSIGNMENT)]  # reuses the graded 02_laplace

SOURCE = REPO_ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
LECTURES = sorted((REPO_ROOT / "course").glob("*.ipynb"))
RELEASES = sorted(p for p in (REPO_ROOT / "release").glob("*/*.ipynb") if p.stem == p.parent.name)
BLOCKING = ("serious", "critical")
FAILING_STUDENT = "loops_and_random_module"  # a variant of tests/variant_cases/02_laplace.py that fails three tests

NOTEBOOK_PAGES = [f"nbconvert-lecture-{p.stem}" for p in LECTURES] + [f"nbconvert-release-{p.stem}" for p in RELEASES]
PAGES = ["feedback-failed", "feedback-reference", "mistakes-named", "mistakes-no-names", "similarity", "formgrader",
         "nbconvert-executed"] + NOTEBOOK_PAGES


@pytest.fixture(scope="module")
def graded(graded_assignment):
    return graded_assignment(ASSIGNMENT)


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the module; every request off this machine is aborted."""
    sync_playwright = sync_playwright_or_skip()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        try:
            context = chromium.new_context(viewport={"width": 1280, "height": 1000})
            context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(
                ("file:", "data:", "http://127.0.0.1")) else route.abort())
            context.set_default_timeout(STEP_TIMEOUT_MS)
            yield context
        finally:
            chromium.close()


def _similarity_page() -> str:
    """The report over a class where bo hands in ada's cells disguised, cy pastes the reference, dee dplib's body."""
    import inspect
    import textwrap

    import dplib

    rng = np.random.default_rng(39)
    reference = solution_cells(nbformat.read(str(SOURCE), as_version=4))
    own = {g: code.replace("scale", "b") for g, code in reference.items()}  # ada's: not the reference's tokens
    submissions = {
        "ada": notebook_with(SOURCE, own),
        "bo": notebook_with(SOURCE, {g: disguise(code, rng) for g, code in own.items()}),
        "cy": nbformat.read(str(SOURCE), as_version=4),
        "dee": notebook_with(SOURCE, {"laplace_mech_solution": textwrap.dedent(inspect.getsource(dplib.laplace_mech))}),
    }
    matches = find_matches(submissions, SOURCE, ASSIGNMENT)
    assert matches, "the made-up class must have something to report"
    return report_html(ASSIGNMENT, matches, sizes=minimum_sizes(SOURCE))


@pytest.fixture(scope="module")
def pages(graded, tmp_path_factory) -> dict[str, str]:
    """page id -> file:// URL of every static page checked (produced from the one graded class)."""
    folder = tmp_path_factory.mktemp("a11y_pages")
    written: dict[str, Path] = {}

    def write(name: str, text: str) -> None:
        written[name] = folder / f"{name}.html"
        written[name].write_text(text, encoding="utf-8")

    (failed,) = graded.feedback(FAILING_STUDENT).values()
    (reference,) = graded.feedback("reference").values()
    write("feedback-failed", failed)
    write("feedback-reference", reference)
    report = class_mistakes(graded.course.root, ASSIGNMENT)
    labels = {s: ("reference" if s == "reference" else "variant") for s in report.ran}
    write("mistakes-named", mistakes_html(report, labels, names=True))
    write("mistakes-no-names", mistakes_html(report, labels, names=False))
    write("similarity", _similarity_page())
    # Every notebook as a student exports it: one `jupyter nbconvert --to html` over all of them.
    exports = folder / "nbconvert"
    executed = folder / "executed"
    executed.mkdir()
    (autograded,) = graded.autograded("reference").values()
    nbformat.write(autograded, str(executed / f"{ASSIGNMENT}.ipynb"))
    for kind, notebooks in (("lecture", LECTURES), ("release", RELEASES), ("executed", [executed / f"{ASSIGNMENT}.ipynb"])):
        subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--output-dir", str(exports / kind),
                        *map(str, notebooks)], check=True, capture_output=True, cwd=folder)
    for path in LECTURES:
        written[f"nbconvert-lecture-{path.stem}"] = exports / "lecture" / f"{path.stem}.html"
    for path in RELEASES:
        written[f"nbconvert-release-{path.stem}"] = exports / "release" / f"{path.stem}.html"
    written["nbconvert-executed"] = exports / "executed" / f"{ASSIGNMENT}.html"
    return {name: path.as_uri() for name, path in written.items()}


@pytest.fixture(scope="module")
def formgrader_page(graded, tmp_path_factory) -> str:
    """The URL of formgrader's page of the reference's autograded notebook (the course's own Jupyter server)."""
    tmp_path = tmp_path_factory.mktemp("a11y_formgrader")
    (tmp_path / "config").mkdir()
    with Gradebook(graded.course.gradebook_url) as gradebook:
        submission = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "reference").id
    server, log, url, token = _serve(graded.course.root, tmp_path, tmp_path / "config")
    try:
        yield f"{url}/formgrader/submissions/{submission}/?token={token}"
    finally:
        _stop(server, log)


def loaded(name: str) -> str:
    """When a page is ready to check: formgrader's builds itself from the server's answers (no request for 0.5 s);
    a static page once it and its images and styles have loaded (every request off this machine is aborted)."""
    return "networkidle" if name == "formgrader" else "load"


def axe(page) -> dict:
    """axe-core's results on ``page``: every rule of its default set (WCAG 2.0/2.1 A and AA, best practices)."""
    from axe_playwright_python.base import AXE_SCRIPT

    page.evaluate(AXE_SCRIPT)
    return page.evaluate("axe.run(document, {resultTypes: ['violations']})")


def counts(violations: list[dict]) -> dict[str, int]:
    blocking = [v for v in violations if v["impact"] in BLOCKING]
    return {"blocking_rules": len(blocking), "blocking_nodes": sum(len(v["nodes"]) for v in blocking),
            "all_rules": len(violations), "all_nodes": sum(len(v["nodes"]) for v in violations)}


def describe(violations: list[dict]) -> str:
    lines = []
    for v in violations:
        targets = ", ".join(str(n["target"]) for n in v["nodes"][:3])
        lines.append(f"{v['id']} ({v['impact']}, {len(v['nodes'])} nodes): {v['help']} e.g. {targets}")
    return "\n".join(lines)


@pytest.mark.parametrize("name", PAGES)
def test_page_has_no_serious_or_critical_axe_violation(name, request, browser):
    url = request.getfixturevalue("formgrader_page") if name == "formgrader" else request.getfixturevalue("pages")[name]
    page = browser.new_page()
    try:
        page.goto(url, wait_until=loaded(name))
        violations = axe(page)["violations"]
    finally:
        page.close()
    if os.environ.get("A11Y_COUNTS"):
        with open(os.environ["A11Y_COUNTS"], "a") as handle:
            handle.write(json.dumps({"page": name, **counts(violations), "rules": [
                f"{v['id']}:{v['impact']}:{len(v['nodes'])}" for v in violations]}) + "\n")
    blocking = [v for v in violations if v["impact"] in BLOCKING]
    assert not blocking, f"{name}: axe-core finds serious or critical violations:\n{describe(blocking)}"


NBCONVERT_PLACEHOLDER = "No description has been provided for this image"


@pytest.mark.parametrize("name", ["feedback-failed", "formgrader", "nbconvert-executed"])
def test_figures_say_what_they_show_and_math_is_mathml(name, request, browser):
    """Each figure of the graded notebook has its text alternative (dplib.figures) as ``alt``; math is MathML."""
    url = request.getfixturevalue("formgrader_page") if name == "formgrader" else request.getfixturevalue("pages")[name]
    page = browser.new_page()
    try:
        page.goto(url, wait_until=loaded(name))
        alts = page.eval_on_selector_all("#notebook img, .jp-Notebook img", "els => els.map(e => e.alt)")
        maths = page.locator("math").count()
        text = page.inner_text("body")
    finally:
        page.close()
    assert len(alts) >= 4, f"{name}: the reference of {ASSIGNMENT} draws 4 figures, the page shows {len(alts)}"
    assert all(alt and alt != NBCONVERT_PLACEHOLDER and len(alt) > 20 for alt in alts), alts
    # plot_neighbour_histograms' sentence, after the title the notebook gave the axes
    assert any(". Overlaid density histograms of the noisy answers on D and on D'" in alt for alt in alts), alts
    if name != "formgrader":  # formgrader typesets with its own MathJax
        assert maths > 20, f"{name}: {maths} MathML formulas"
    if name == "feedback-failed":
        assert "Score: 0.0 /" in text, "the feedback page must show a failed test"
