"""End to end in a real browser: JupyterLab serves a lecture, headless Chromium runs it and moves a slider.

Needs Debian's ``chromium`` at /usr/bin/chromium (``.ci/run`` installs it) and the
``playwright`` Python package (the ``test`` extra), which drives that browser: Playwright's
own browser download is never used. Outside CI a missing browser skips the test; in CI
(``CI`` set) it fails. The screenshot is saved under the test's tmp dir and, if
``SCREENSHOT_DIR`` is set, there too.

The module starts one JupyterLab (``jupyter_lab``), whose root holds a copy of every lecture
the tests open, and one Chromium (``browser``): each costs seconds of start-up and CPU, which
every test paid once more when each had its own. The tests stay independent of each other and of
their order: each opens its own lecture in a fresh browser context (no cookies or storage of
another test) and a JupyterLab workspace of its own (none restores another test's notebook),
and when it ends its kernel is shut down (``lab``), so none keeps running into the next test.
Under pytest-xdist each worker that runs a test of the module starts its own pair.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
COURSE = REPO / "course"
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
# As root, on a machine with no network but the package registries: no sandbox, no GPU,
# and none of Chromium's background connections.
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
SERVER_START_TIMEOUT = 60  # seconds
STEP_TIMEOUT_MS = 60_000  # any one browser wait


def sync_playwright_or_skip():
    """Playwright's sync API, or a skip (a failure in CI) when it or Chromium is missing."""
    reason = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        reason = "the playwright package is not installed (pip install -e '.[test]')"
    if reason is None and not CHROMIUM.exists():
        reason = f"{CHROMIUM} not found (apt-get install -y chromium)"
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"browser test cannot run in CI: {reason}")
        pytest.skip(reason)
    return sync_playwright


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_server(server: subprocess.Popen, grace: float = 15) -> None:
    """Stop a server started with ``start_new_session=True`` (SIGTERM, ``grace`` seconds to shut its kernels or users'
    servers down, then SIGKILL), and anything it left behind in its process group."""
    server.terminate()
    try:
        server.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=5)
    try:  # anything it left behind, by our own process group id
        os.killpg(server.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def wait_until_serving(server: subprocess.Popen, status_url: str, log: Path, name: str,
                       timeout: float = SERVER_START_TIMEOUT, poll: float = 0.25) -> None:
    """Wait until ``status_url`` of the server ``server`` answers 200; fail with its log if it exits or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        if server.poll() is not None:
            pytest.fail(f"{name} exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(status_url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"{name} did not answer within {timeout} s:\n{log.read_text()[-3000:]}")
        time.sleep(poll)


@pytest.fixture(scope="module")
def jupyter_lab(tmp_path_factory):
    """A JupyterLab server on a free localhost port, serving temp copies of the lectures of ``DRAGS``; killed afterwards.

    Shared by the module's tests: use it through ``lab``, which shuts each test's kernels down.
    """
    tmp_path = tmp_path_factory.mktemp("jupyter_lab")
    root = tmp_path / "course"
    root.mkdir()
    for lecture in {drag.lecture for drag in DRAGS}:
        shutil.copy(lecture, root / lecture.name)
    port, token = free_port(), "dp-course-browser-test"
    # a fresh user-settings folder that answers the "Jupyter news?" toast in advance
    notification = tmp_path / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True)
    notification.write_text('{"fetchNews": "false", "checkForUpdates": false}')
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)  # the kernel uses the inline backend, as in class
    env.update(
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),  # no user config, no stale settings
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
    )
    command = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={token}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        f"--LabApp.user_settings_dir={tmp_path / 'settings'}",
        f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # CI machines run as root
    log = open(tmp_path / "jupyterlab.log", "wb")
    server = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_serving(server, f"{url}/api/status?token={token}", tmp_path / "jupyterlab.log", "JupyterLab")
        yield url, token, root
    finally:
        stop_server(server)  # JupyterLab shuts its kernels down on SIGTERM
        log.close()


def lab_api(url: str, token: str, path: str, method: str = "GET"):
    """Call JupyterLab's REST API (``/api/<path>``) with the token; the answer's JSON, or None when it has no body."""
    request = urllib.request.Request(f"{url}/api/{path}", method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        body = response.read()
    return json.loads(body) if body else None


@pytest.fixture
def lab(jupyter_lab):
    """The module's JupyterLab for one test, ``(url, token, root)``; the test's kernels are shut down after it.

    The tests of a process run one at a time, so every session then open is this test's: each is deleted
    (which shuts its kernel down), then any kernel left without a session, and none may remain.
    """
    url, token, _ = jupyter_lab
    yield jupyter_lab
    for session in lab_api(url, token, "sessions"):
        lab_api(url, token, f"sessions/{session['id']}", "DELETE")
    for kernel in lab_api(url, token, "kernels"):
        lab_api(url, token, f"kernels/{kernel['id']}", "DELETE")
    assert lab_api(url, token, "kernels") == [], "a kernel still runs after its test"


def png_pixels(png: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def save_screenshot(page, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    page.screenshot(path=str(path), full_page=False)
    if os.environ.get("SCREENSHOT_DIR"):
        target = Path(os.environ["SCREENSHOT_DIR"])
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target / name)
    return path


def launch_chromium(playwright):
    """Headless Chromium (the system's, with ``CHROMIUM_FLAGS``), launched by a started Playwright."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)


@contextlib.contextmanager
def new_page(browser):
    """A page of ``browser`` in a fresh context of its own, with the step timeout; the context is closed afterwards."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        page = context.new_page()
        page.set_default_timeout(STEP_TIMEOUT_MS)
        yield page
    finally:
        context.close()


@contextlib.contextmanager
def browser_page():
    """A page of headless Chromium (Playwright), with the step timeout; the browser is closed afterwards."""
    sync_playwright = sync_playwright_or_skip()
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            with new_page(browser) as page:
                yield page
        finally:
            browser.close()


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium shared by the module's tests, each of which opens its own context (``new_page``)."""
    sync_playwright = sync_playwright_or_skip()
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()


def run_lecture_in_lab(page, url: str, token: str, lecture: Path, workspace: str | None = None) -> None:
    """Open ``lecture`` in JupyterLab, wait for its kernel, and run all its cells.

    In the workspace ``workspace`` when given (letters, digits, ``-`` and ``_``): a new one opens only
    ``lecture``, where the default workspace also reopens the notebooks an earlier page left open.
    """
    workspace_path = f"/workspaces/{workspace}" if workspace else ""
    page.goto(f"{url}/lab{workspace_path}/tree/{lecture.name}?token={token}")
    page.wait_for_function(
        """() => {
            const app = window.jupyterapp;
            const panel = app && app.shell.currentWidget;
            const kernel = panel && panel.sessionContext && panel.sessionContext.session
                && panel.sessionContext.session.kernel;
            return kernel && kernel.status === 'idle';
        }"""
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


def drag_slider(page, label: str, dx: float) -> None:
    """Drag the handle of the slider whose description contains ``label`` by ``dx`` pixels."""
    handle = page.locator(".widget-hslider", has_text=label).locator(".noUi-handle").first
    handle.scroll_into_view_if_needed()
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + dx, y, steps=6)
    page.mouse.up()


def redraw_by_dragging(page, readout_text: str, shows: str, slider: str, dx: float, gone: str | None = None):
    """Drag an explorer's slider and wait for the redraw; return the share of pixels changed and the readout.

    The explorer is the one whose readout contains ``readout_text``; it must first show ``shows``. After
    dragging ``slider`` by ``dx`` pixels, waits until the image is new and the readout no longer
    contains ``gone`` (default: ``shows``).
    """
    image = page.locator("img.widget-image").first
    image.wait_for(state="visible")
    readout = page.locator(".widget-html-content", has_text=readout_text).first
    readout.wait_for(state="visible")
    assert shows in readout.inner_text()
    image.scroll_into_view_if_needed()
    before_src = image.get_attribute("src")
    before = png_pixels(image.screenshot())
    drag_slider(page, slider, dx)
    page.wait_for_function(
        "([old]) => { const img = document.querySelector('img.widget-image'); return img && img.src !== old; }",
        arg=[before_src],
    )
    page.wait_for_function("([el, old]) => !el.textContent.includes(old)", arg=[readout.element_handle(), gone or shows])
    page.wait_for_timeout(500)  # let the last update of the drag arrive
    after = png_pixels(image.screenshot())
    assert before.shape == after.shape
    return float((np.abs(before - after).sum(axis=2) > 0).mean()), readout.inner_text()


@dataclass(frozen=True)
class Drag:
    """A slider of a lecture's explorer dragged in the browser, and what the redraw must show."""

    lecture: Path
    readout: str  # text that finds the explorer's readout
    shows: str  # what the readout shows before the drag
    slider: str  # text in the slider's label
    dx: float  # pixels: to the right when positive
    moved: Callable[[str], bool]  # the readout after the drag went the right way
    expected: str  # what ``moved`` looks for, said in the failure message
    changed: float = 0.001  # the share of the figure's pixels that must change, at least
    gone: str | None = None  # what the readout no longer shows when the redraw is complete (default: ``shows``)


def number_in(text: str, pattern: str) -> float:
    """The number that stands at ``{}`` in ``pattern`` (its other characters literal), the first time it is in ``text``."""
    before, after = pattern.split("{}")
    match = re.search(re.escape(before) + r"(\S+?)" + re.escape(after), text)
    assert match, f"no {pattern!r} in the readout {text!r}"
    return float(match.group(1))


DRAGS = [
    # to the left: a smaller epsilon, wider noise
    Drag(COURSE / "02_laplace.ipynb", "max privacy loss", "epsilon = 1.000", "epsilon", -60,
         lambda shown: 0.1 <= number_in(shown, "(epsilon = {})") < 1.0, "a smaller epsilon", changed=0.01),
    # a larger budget: the accountant answers more queries
    Drag(COURSE / "07_composition.ipynb", "accountant with budget", "accountant with budget 5: answers 10 and refuses 190",
         "budget", 60,
         lambda shown: number_in(shown, "accountant with budget {}:") > 5 and number_in(shown, ": answers {} ") > 10,
         "a larger budget and more answers", changed=0.005, gone="with budget 5:"),
    # to the right: more queries
    Drag(COURSE / "08_approximate_dp.ipynb", "total epsilon", "100 queries", "k queries", 80,
         lambda shown: number_in(shown, "{} queries") > 100, "more queries", gone="100 queries,"),
    # to the left: fewer steps, a smaller epsilon (the run is cached: no retraining)
    Drag(COURSE / "09_private_learning.ipynb", "substitution neighbours", "T = 100 steps", "steps T", -60,
         lambda shown: number_in(shown, "T = {} steps") < 100 and number_in(shown, "epsilon = {} ") < 1.0,
         "fewer steps and epsilon below 1"),
    # to the left: a smaller epsilon, more noise in the measured marginals
    Drag(COURSE / "10_synthetic_data.ipynb", "mean TV over the 10 pairs", "epsilon = 1 over", "epsilon", -80,
         lambda shown: number_in(shown, "epsilon = {} ") < 1.0, "a smaller epsilon"),
    # to the right: more runs (the slider sends its value when released)
    Drag(COURSE / "11_auditing.ipynb", "fresh runs each", "(2000 fresh runs each)", "runs", 60,
         lambda shown: number_in(shown, "({} fresh runs each)") > 2000, "more runs"),
]


@pytest.mark.parametrize("drag", DRAGS, ids=[d.lecture.stem for d in DRAGS])
def test_explorer_redraws_when_its_slider_moves(lab, browser, drag, tmp_path):
    """Check that a lecture runs in JupyterLab and dragging its explorer's slider redraws the figure and the readout."""
    url, token, _ = lab
    with new_page(browser) as page:
        run_lecture_in_lab(page, url, token, drag.lecture, workspace=drag.lecture.stem)
        changed, shown = redraw_by_dragging(page, drag.readout, drag.shows, drag.slider, drag.dx, gone=drag.gone)
        save_screenshot(page, tmp_path, f"browser_{drag.lecture.stem}_explorer.png")
    assert changed > drag.changed, f"the explorer's figure did not change after moving {drag.slider}"
    direction = "right" if drag.dx > 0 else "left"
    assert drag.moved(shown), f"expected {drag.expected} after dragging {direction}, got {shown!r}"


def test_mistakes_page_renders_its_figures_and_table(browser, tmp_path):
    """Check that the instructor's mistakes page (issue 24) renders in Chromium: figures drawn, tests ranked, names folded."""
    from dpgrader.classroom import ClassMistakes, Mistake, WrittenAnswer, mistakes_html
    from dpgrader.classroom.mistakes import cell_lines

    lines = cell_lines(REPO / "source" / "02_laplace" / "02_laplace.ipynb")
    tests = [g for g in lines if g.startswith("test_")]
    students = tuple(f"student_{i:02d}" for i in range(20))
    kinds = {s: ("correct", "partial", "wrong")[i % 3] for i, s in enumerate(students)}
    mistakes = tuple(  # every test is failed by the wrong students, and by fewer partial ones down the notebook
        Mistake("02_laplace", g, 2.0, *lines[g], ran=students,
                failed=tuple(s for s in students if kinds[s] == "wrong")
                + tuple(s for s in students if kinds[s] == "partial")[: len(tests) - 1 - i])
        for i, g in enumerate(tests)
    )
    report = ClassMistakes("02_laplace", mistakes, (WrittenAnswer("02_laplace", "written_x", 2.0, "Why?", 5, 3, 12),),
                           {s: 100.0 * (i % 3 == 0) for i, s in enumerate(students)}, students, {"student_20": "killed"})
    page_file = tmp_path / "02_laplace.html"
    page_file.write_text(mistakes_html(report, labels=kinds))
    with new_page(browser) as page:
        page.goto(page_file.as_uri())
        page.wait_for_function("() => [...document.images].every(i => i.complete)")
        widths = page.evaluate("() => [...document.images].map(i => i.naturalWidth)")
        first_test = page.locator("table tr:nth-child(2) code").first.inner_text()
        folded = page.locator("details.names").nth(1)
        hidden_before = folded.locator("span.label").first.is_visible()
        folded.locator("summary").click()
        shown_after = folded.locator("span.label").first.is_visible()
        save_screenshot(page, tmp_path, "browser_mistakes_page.png")
    assert len(widths) == 3 and min(widths) > 300, f"three figures drawn, got widths {widths}"
    assert first_test == tests[0], "the most failed test comes first"
    assert not hidden_before and shown_after, "who failed a test is folded away until the instructor opens it"
