"""A class on JupyterHub, end to end, in headless Chromium: release, fetch, validate, submit, grade, feedback.

A real JupyterHub (deploy/jupyterhub/jupyterhub_config.py, PAM logins of real system users made
with useradd) runs on 127.0.0.1 with one instructor and two students:

1. the instructor logs in and releases 02_laplace (formgrader's API, from the logged-in page);
2. each student logs in, fetches it from the Assignment List, fills it in (alice: the reference
   solution; bob: the Laplace scale upside down), validates and submits it, with the buttons;
3. a student cannot open formgrader, another user's server, the course's source/ or gradebook, or
   another student's home;
4. the instructor collects and autogrades (formgrader's API, with the course's nbgrader_config),
   grades the written answer in formgrader's page, generates and releases the feedback;
5. each student fetches the feedback with the button and opens it: their own score, math
   rendered as MathML (no CDN), and the figures.

Needs root (it creates system users; CI runs as root), ``.venv-hub`` (``make hub-install``) and
Debian's Chromium. Outside CI a missing piece skips it; in CI it fails. Screenshots go to the
test's tmp dir and to ``tests/artifacts/hub_e2e/`` (git-ignored); each step's time is printed
and written there as ``timings.json``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import nbformat
import pytest

try:  # pytest puts tests/ on sys.path (rootdir without __init__.py) ...
    from test_browser import CHROMIUM, CHROMIUM_FLAGS, sync_playwright_or_skip
except ImportError:  # ... or tests/ is a package
    from tests.test_browser import CHROMIUM, CHROMIUM_FLAGS, sync_playwright_or_skip

from helpers.hub import hub_venv, local_hub, new_hub, running_hub

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENT = "02_laplace"
WRITTEN = "written_bounded_noise_never_dp"
INSTRUCTOR, ALICE, BOB = "dpe2e-teach", "dpe2e-alice", "dpe2e-bob"
ARTIFACTS = REPO / "tests" / "artifacts" / "hub_e2e"
STEP_TIMEOUT_MS = 120_000
SPAWN_TIMEOUT_MS = 180_000  # a user's first server start: 5-30 s, more on a loaded machine


@pytest.fixture(scope="module")
def hub():
    """A running hub with its users; everything it made is removed afterwards."""
    venv = hub_venv("needs root to create system users")
    base, hub = new_hub("dp-hub-e2e-", instructors=[INSTRUCTOR], students=[ALICE, BOB],
                        instructors_group="dpe2e-instructors", students_group="dpe2e-students",
                        assignments=[ASSIGNMENT], venv=venv)
    log_path = base / "jupyterhub.log"
    try:
        started = time.perf_counter()
        local_hub.set_up(hub)
        hub.setup_seconds = time.perf_counter() - started
        with running_hub(hub, log_path):
            yield hub
    finally:
        if log_path.exists():
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            shutil.copy(log_path, ARTIFACTS / "jupyterhub.log")
        local_hub.tear_down(hub)
        shutil.rmtree(base, ignore_errors=True)


class Steps:
    """Times each step and keeps its screenshots; a failing step fails the test with its name."""

    def __init__(self, tmp_path: Path):
        self.tmp_path = tmp_path
        self.seconds: dict[str, float] = {}
        self.screenshots: list[Path] = []

    @contextmanager
    def step(self, name: str):
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = round(time.perf_counter() - started, 1)
            print(f"[hub e2e] {name}: {self.seconds[name]} s", flush=True)

    def shot(self, page, name: str, full_page: bool = False) -> Path:
        path = self.tmp_path / f"{len(self.screenshots) + 1:02d}_{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, ARTIFACTS / path.name)
        self.screenshots.append(path)
        return path


def log_in(browser, hub, user: str):
    """A fresh browser context logged in as ``user``, on their JupyterLab."""
    context = browser.new_context(viewport={"width": 1400, "height": 950})
    page = context.new_page()
    page.set_default_timeout(STEP_TIMEOUT_MS)
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", hub.passwords[user])
    page.click("#login_submit")
    # The hub spawns the user's server behind a spawn-pending page that redirects when it is ready;
    # if that redirect is missed, asking for the server again lands on it.
    deadline = time.monotonic() + SPAWN_TIMEOUT_MS / 1000
    while True:
        try:
            page.wait_for_selector(".jp-LabShell", timeout=15_000)
            break
        except Exception:
            if time.monotonic() > deadline:
                ARTIFACTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / f"failed_login_{user}.png"))
                raise
            page.goto(f"{hub.url}/user/{user}/lab", wait_until="commit")
    assert f"/user/{user}/lab" in page.url, page.url
    return context, page


def api(page, method: str, path: str, body=None) -> dict:
    """Call the user's own server from their logged-in page (cookie auth and the XSRF header, as the UI does)."""
    result = page.evaluate(
        """async ([method, path, body]) => {
            const xsrf = (document.cookie.match(/(?:^|; )_xsrf=([^;]*)/) || [])[1] || '';
            const response = await fetch(path, {method, credentials: 'same-origin',
                headers: {'Content-Type': 'application/json', 'X-XSRFToken': decodeURIComponent(xsrf)},
                body: body === null ? undefined : JSON.stringify(body)});
            const text = await response.text();
            return {status: response.status, text};
        }""",
        [method, path, body],
    )
    return result


def api_json(page, method: str, path: str, body=None):
    result = api(page, method, path, body)
    assert result["status"] < 300, f"{method} {path} -> {result['status']}: {result['text'][:500]}"
    return json.loads(result["text"]) if result["text"] else None


def student_notebook(fetched: dict, right: bool) -> dict:
    """The fetched notebook filled in: the reference solution's cells (bob's with the Laplace scale upside down)."""
    source = nbformat.read(str(REPO / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells if c.metadata.get("nbgrader", {}).get("solution")}
    notebook = nbformat.from_dict(fetched)
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and grade_id in answers:
            cell.source = answers[grade_id]
            if not right:
                cell.source = cell.source.replace("rng.laplace(0.0, sensitivity / epsilon,", "rng.laplace(0.0, epsilon / sensitivity,")
                if grade_id == WRITTEN:
                    cell.source = "Uniform noise is fine if B is large enough."
    if not right:
        assert any("epsilon / sensitivity" in c.source for c in notebook.cells), "bob's mistake was not planted"
    return notebook


def assignment_list(page):
    """Open JupyterLab's Assignment List from the Nbgrader menu and wait for its lists."""
    if not page.locator("#released_assignments_list").is_visible():
        page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
        page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click()
    page.wait_for_selector("#released_assignments_list", state="visible")


def test_class_on_jupyterhub_end_to_end(hub, tmp_path):
    sync_playwright = sync_playwright_or_skip()
    steps = Steps(tmp_path)
    steps.seconds["set up users, exchange, course (before the hub starts)"] = round(hub.setup_seconds, 1)
    course = local_hub.home(INSTRUCTOR) / local_hub.COURSE_FOLDER
    fg = f"/user/{INSTRUCTOR}/formgrader"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        try:
            with steps.step("instructor logs in and releases 02_laplace"):
                teacher_context, teacher = log_in(browser, hub, INSTRUCTOR)
                teacher.goto(f"{hub.url}{fg}/manage_assignments")
                teacher.wait_for_selector(f"text={ASSIGNMENT}")
                listed = {a["name"]: a for a in api_json(teacher, "GET", f"{fg}/api/assignments")}
                assert listed[ASSIGNMENT]["id"] is not None and listed[ASSIGNMENT]["max_score"] > 0, listed
                assert listed[ASSIGNMENT]["status"] == "draft"
                released = api_json(teacher, "POST", f"{fg}/api/assignment/{ASSIGNMENT}/release")
                assert released["success"], released
                teacher.reload()
                teacher.wait_for_selector(f"text={ASSIGNMENT}")
                assert api_json(teacher, "GET", f"{fg}/api/assignment/{ASSIGNMENT}")["status"] == "released"
                steps.shot(teacher, "instructor_formgrader_released")

            students = {}
            for student, right in ((ALICE, True), (BOB, False)):
                with steps.step(f"{student} logs in, fetches, fills in, validates, submits"):
                    context, page = log_in(browser, hub, student)
                    students[student] = (context, page)
                    assignment_list(page)
                    page.locator("#released_assignments_list button", has_text="Fetch").first.click()
                    page.wait_for_selector(f"#fetched_assignments_list >> text={ASSIGNMENT}")
                    steps.shot(page, f"{student}_fetched")
                    path = f"/user/{student}/api/contents/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
                    fetched = api_json(page, "GET", path)["content"]
                    filled = student_notebook(fetched, right)
                    api_json(page, "PUT", path, {"type": "notebook", "format": "json", "content": filled})
                    validate = page.locator("#fetched_assignments_list button", has_text="Validate").first
                    if not validate.is_visible():
                        page.locator("#fetched_assignments_list a", has_text=ASSIGNMENT).first.click()
                    validate.click()
                    page.wait_for_function(
                        "() => [...document.querySelectorAll('#fetched_assignments_list button')]"
                        ".some(b => b.classList.contains('btn-success') || b.classList.contains('btn-danger'))",
                        timeout=STEP_TIMEOUT_MS,
                    )
                    passed = page.locator("#fetched_assignments_list button.btn-success").count() > 0
                    steps.shot(page, f"{student}_validated")
                    assert passed == right, f"{student}: validation {'passed' if passed else 'failed'}"
                    for _ in range(3):  # close a results dialog if the extension opened one
                        if page.locator(".jp-Dialog").count() == 0:
                            break
                        page.locator(".jp-Dialog button").last.click()
                    page.locator("#fetched_assignments_list button", has_text="Submit").first.click()
                    page.wait_for_selector("#submitted_assignments_list >> text=" + ASSIGNMENT)
                    steps.shot(page, f"{student}_submitted")

            with steps.step("a student cannot reach formgrader, others' servers, source/, the gradebook, others' homes"):
                _, alice = students[ALICE]
                assert api(alice, "GET", f"/user/{ALICE}/formgrader")["status"] == 404
                assert api(alice, "GET", f"/user/{ALICE}/formgrader/api/assignments")["status"] == 404
                other = api(alice, "GET", f"/user/{INSTRUCTOR}/api/contents/{local_hub.COURSE_FOLDER}")
                assert other["status"] in (302, 403, 404) or "dp-course" not in other["text"], other
                assert api(alice, "GET", f"/user/{ALICE}/api/contents/..%2F{BOB}")["status"] in (403, 404)
                response = alice.goto(f"{hub.url}/user/{INSTRUCTOR}/lab")
                assert response.status == 403 or f"/user/{ALICE}/" in alice.url, (response.status, alice.url)
                steps.shot(alice, "alice_forbidden_instructor_server")
                for target in (course / "source" / ASSIGNMENT, course / "gradebook.db", local_hub.home(BOB), REPO / "source"):
                    denied = subprocess.run(["runuser", "-u", ALICE, "--", "ls", str(target)], capture_output=True, text=True)
                    assert denied.returncode != 0 and "Permission denied" in denied.stderr, (target, denied.stdout, denied.stderr)

            with steps.step("instructor collects and autogrades both (formgrader, course config)"):
                collected = api_json(teacher, "POST", f"{fg}/api/assignment/{ASSIGNMENT}/collect")
                assert collected["success"], collected
                for student in (ALICE, BOB):
                    assert (course / "submitted" / student / ASSIGNMENT / "timestamp.txt").exists()
                    graded = api_json(teacher, "POST", f"{fg}/api/submission/{ASSIGNMENT}/{student}/autograde")
                    assert graded["success"], graded

            with steps.step("instructor grades the written answer in formgrader"):
                notebooks = api_json(teacher, "GET", f"{fg}/api/submitted_notebooks/{ASSIGNMENT}/{ASSIGNMENT}")
                for submission in notebooks:
                    student = submission["student"]
                    teacher.goto(f"{hub.url}{fg}/submissions/{submission['id']}/?index=0")
                    box = teacher.locator(f"input.score#{WRITTEN}")
                    box.wait_for(state="visible")
                    teacher.wait_for_load_state("networkidle")  # formgrader's views are bound
                    heading = teacher.locator(".panel-heading", has=box)
                    heading.locator("button.full-credit" if student == ALICE else "button.no-credit").click()
                    expected = "2" if student == ALICE else "0"
                    teacher.wait_for_function(
                        "([id, v]) => document.getElementById(id).value === v", arg=[WRITTEN, expected]
                    )
                    if student == ALICE:
                        assert teacher.locator("math").count() > 0, "formgrader shows no MathML: math would need the CDN"
                        steps.shot(teacher, "instructor_formgrader_written_answer")
                summary = {s["student"]: s for s in api_json(teacher, "GET", f"{fg}/api/submitted_notebooks/{ASSIGNMENT}/{ASSIGNMENT}")}
                assert not summary[ALICE]["needs_manual_grade"] and not summary[BOB]["needs_manual_grade"], summary
                assert summary[ALICE]["score"] == summary[ALICE]["max_score"], summary[ALICE]
                assert 0 < summary[BOB]["score"] < summary[ALICE]["score"], summary[BOB]
                scores = {s: summary[s]["score"] for s in (ALICE, BOB)}

            with steps.step("instructor generates and releases feedback"):
                assert api_json(teacher, "POST", f"{fg}/api/assignment/{ASSIGNMENT}/generate_feedback")["success"]
                assert api_json(teacher, "POST", f"{fg}/api/assignment/{ASSIGNMENT}/release_feedback")["success"]

            for student in (ALICE, BOB):
                with steps.step(f"{student} fetches and opens the feedback"):
                    context, page = students[student]
                    page.goto(f"{hub.url}/user/{student}/lab")
                    page.wait_for_selector(".jp-LabShell")
                    assignment_list(page)
                    page.locator("#submitted_assignments_list button", has_text="Fetch Feedback").first.click()
                    page.locator("#submitted_assignments_list a", has_text="view feedback").first.click()
                    folder = api_json(page, "GET", f"/user/{student}/api/contents/{ASSIGNMENT}/feedback")["content"]
                    assert len(folder) == 1, folder
                    html_path = f"{folder[0]['path']}/{ASSIGNMENT}.html"
                    page.goto(f"{hub.url}/user/{student}/files/{html_path}")
                    page.wait_for_selector("text=Score:")
                    text = page.inner_text("body")
                    score_line = next(line for line in text.splitlines() if "Score:" in line)
                    assert f"{scores[student]:g}" in score_line.replace(".0 ", " "), (score_line, scores[student])
                    math = page.locator("math")
                    assert math.count() > 5, "the feedback's math is not MathML"
                    height = math.first.evaluate("m => m.getBoundingClientRect().height")
                    assert height > 5, "the MathML is not drawn"
                    assert "\\varepsilon" not in text, "raw LaTeX in the feedback"
                    figures = page.evaluate("() => [...document.images].filter(i => i.naturalWidth > 100).length")
                    assert figures >= 1, "the feedback shows no figure"
                    other = BOB if student == ALICE else ALICE
                    assert other not in text
                    page.locator("text=Score:").first.scroll_into_view_if_needed()
                    steps.shot(page, f"{student}_feedback_score")
                    page.locator("math").nth(3).scroll_into_view_if_needed()
                    steps.shot(page, f"{student}_feedback_math")
                    page.locator("img").first.scroll_into_view_if_needed()
                    steps.shot(page, f"{student}_feedback_figure")
        finally:
            browser.close()
    (ARTIFACTS / "timings.json").write_text(json.dumps(steps.seconds, indent=2))
    print("[hub e2e] screenshots:", *[str(ARTIFACTS / p.name) for p in steps.screenshots], sep="\n  ")
    total = sum(steps.seconds.values())
    print(f"[hub e2e] total {total:.0f} s", flush=True)
