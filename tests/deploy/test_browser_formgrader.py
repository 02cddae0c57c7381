"""In a real browser, no formgrader page runs a name as script: reflected from its URL or stored in the gradebook.

nbgrader 0.9's formgrader renders its pages without escaping (issue 36): ``/formgrader/manage_students/<img
src=x onerror=...>`` ran script in the instructor's logged-in page. The course's own Jupyter server (formgrader
enabled, the course's ``nbgrader_config.py``, as ``make lab`` serves it) serves a course whose gradebook holds a
student, her names and e-mail, an assignment and a notebook whose names are payloads, inserted with nbgrader's
``Gradebook`` model directly, past :mod:`dpgrader.ids` (the escaping must hold on its own). Headless Chromium opens
every route of formgrader's handlers that shows a student id, an assignment or a notebook name, once with payloads in
the URL and once over the stored ones. A hook installed before any page script (``add_init_script``) defines
``window.__pwned``; dialogs and requests to the attacker's host are recorded. Nothing may run, and each page shows
the payload as text. Then the "add student" form and formgrader's student API refuse a bad id with a message.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
from nbgrader.api import Gradebook, Student

from dpgrader import Course
from dpgrader.course import REPO_ROOT
from test_browser import browser_page, free_port, save_screenshot, stop_server, wait_until_serving

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser_formgrader")]

ASSIGNMENT = "01_definition"
NOTEBOOK = "01_definition"
ATTACKER = "attacker.invalid"


def _push(name: str) -> str:
    return f"window.__pwned.push('{name}');alert('{name}')"


# No "/" in what a URL path segment carries. Each breaks out of HTML text, of an attribute and of a JS string.
STUDENT = f'<img src=x onerror="{_push("student")}">";{_push("student_js")};"'
FIRST_NAME = f'<svg onload="{_push("first_name")}">'
LAST_NAME = f'<img src="//{ATTACKER}/last_name" onerror="{_push("last_name")}">'
EMAIL = f"<script>{_push('email')}</script>"
BAD_ASSIGNMENT = f'<img src=x onerror="{_push("assignment")}">";{_push("assignment_js")};"'
BAD_NOTEBOOK = f'<img src=x onerror="{_push("notebook")}">";{_push("notebook_js")};"'
REFLECTED = f'<img src=x onerror="{_push("reflected")}">";{_push("reflected_js")};"'
REFLECTED_2 = f"<svg onload=\"{_push('reflected_2')}\">';{_push('reflected_2_js')};'"


def _u(text: str) -> str:
    return quote(text, safe="")


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> tuple[Course, int]:
    """A course with 01_definition, an honest student, and payloads stored in its gradebook: (course, submission id)."""
    course = Course.from_repo(tmp_path_factory.mktemp("formgrader_xss") / "course", [ASSIGNMENT])
    course.generate_assignment(ASSIGNMENT)
    with Gradebook(course.gradebook_url) as gradebook:
        # Student rows added as nbgrader's model, past Gradebook.add_student and its check of the id.
        gradebook.db.add(Student(id=STUDENT, first_name=FIRST_NAME, last_name=LAST_NAME, email=EMAIL))
        gradebook.db.add(Student(id="ada", first_name="Ada", last_name="Lovelace"))
        gradebook.db.commit()
        gradebook.add_assignment(BAD_ASSIGNMENT)
        gradebook.add_notebook(BAD_NOTEBOOK, BAD_ASSIGNMENT)
        gradebook.add_submission(BAD_ASSIGNMENT, STUDENT)  # its notebook is never autograded: "(file missing)"
        for student in (STUDENT, "ada"):
            gradebook.add_submission(ASSIGNMENT, student)
        submission_id = gradebook.find_submission_notebook(NOTEBOOK, ASSIGNMENT, STUDENT).id
    # formgrader lists the assignments of source/: the stored one has its folder there (an instructor's name).
    (course.source(BAD_ASSIGNMENT)).mkdir()
    shutil.copy(course.release(ASSIGNMENT) / f"{NOTEBOOK}.ipynb", course.source(BAD_ASSIGNMENT) / f"{BAD_NOTEBOOK}.ipynb")
    for student in (STUDENT, "ada"):  # what formgrader shows of a submission: the autograded notebook
        folder = course.autograded(student, ASSIGNMENT)
        folder.mkdir(parents=True)
        shutil.copy(course.release(ASSIGNMENT) / f"{NOTEBOOK}.ipynb", folder)
    return course, submission_id


def _serve(root: Path, tmp_path: Path, config: Path, env_extra: dict[str, str] | None = None):
    port, token = free_port(), "dp-course-formgrader-xss"
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]), **(env_extra or {}))
    command = [sys.executable, "-m", "jupyter_server", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}",
               f"--IdentityProvider.token={token}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    log = open(tmp_path / "server.log", "wb")
    server = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(server, f"{url}/api/status?token={token}", tmp_path / "server.log", "the Jupyter server")
    except BaseException:
        _stop(server, log)
        raise
    return server, log, url, token


def _stop(server: subprocess.Popen, log) -> None:
    stop_server(server)
    log.close()


@pytest.fixture(scope="module")
def formgrader(course, tmp_path_factory):
    """The course's own Jupyter server, as ``make lab`` starts it (no configuration but the course's): (url, token)."""
    root = course[0].root
    tmp_path = tmp_path_factory.mktemp("formgrader_server")
    (tmp_path / "config").mkdir()
    server, log, url, token = _serve(root, tmp_path, tmp_path / "config")
    try:
        yield url, token
    finally:
        _stop(server, log)


def _routes(submission_id: int) -> list[tuple[str, list[str]]]:
    """Every formgrader route that shows a name: its path and what its page must show as text."""
    s, a, n = _u(STUDENT), _u(ASSIGNMENT), _u(NOTEBOOK)
    ba, bn = _u(BAD_ASSIGNMENT), _u(BAD_NOTEBOOK)
    r, r2 = _u(REFLECTED), _u(REFLECTED_2)
    reflected = [
        (f"manage_submissions/{r}", [REFLECTED]),
        (f"gradebook/{r}", [REFLECTED]),
        (f"gradebook/{r}/{r2}", [REFLECTED, REFLECTED_2]),
        (f"manage_students/{r}", [REFLECTED]),
        (f"manage_students/{r}/{r2}", [REFLECTED, REFLECTED_2]),
        (f"submissions/{r}", []),  # no such submission: jupyter_server's 404 page
        (f"submissions/{r}/{r2}", []),
    ]  # /formgrader/<anything else> is formgrader's own 404, an empty page
    stored = [
        ("manage_assignments", [BAD_ASSIGNMENT, ASSIGNMENT]),
        (f"manage_submissions/{a}", [STUDENT, f"{LAST_NAME}, {FIRST_NAME}"]),
        (f"manage_submissions/{ba}", [BAD_ASSIGNMENT]),  # its submission has no folder in submitted/: not listed
        ("gradebook", [BAD_ASSIGNMENT, ASSIGNMENT]),
        (f"gradebook/{a}", [NOTEBOOK]),
        (f"gradebook/{ba}", [BAD_ASSIGNMENT, BAD_NOTEBOOK]),
        (f"gradebook/{a}/{n}", [f"{LAST_NAME}, {FIRST_NAME}"]),
        (f"gradebook/{ba}/{bn}", [BAD_ASSIGNMENT, BAD_NOTEBOOK]),
        ("manage_students", [STUDENT, f"{LAST_NAME}, {FIRST_NAME}", EMAIL]),
        (f"manage_students/{s}", [STUDENT, ASSIGNMENT, BAD_ASSIGNMENT]),
        (f"manage_students/{s}/{a}", [STUDENT, ASSIGNMENT, NOTEBOOK]),
        (f"manage_students/{s}/{ba}", [STUDENT, BAD_ASSIGNMENT, f"{BAD_NOTEBOOK} (file missing)"]),
        (f"submissions/{submission_id}/", [f"{LAST_NAME}, {FIRST_NAME}", ASSIGNMENT]),
    ]
    return reflected + stored


# The page's text, hidden parts included (formgrader hides students' names until asked), scripts left out.
_TEXT = """() => { const body = document.body.cloneNode(true);
    body.querySelectorAll('script, style').forEach(e => e.remove()); return body.textContent; }"""


class Watch:
    """What a page's payloads could do, recorded for one page after another: pushes to ``window.__pwned``,
    dialogs and requests to the attacker's host (aborted)."""

    def __init__(self, page):
        self.page, self.dialogs, self.requests = page, [], []
        page.add_init_script("window.__pwned = [];")  # in every frame, before any script of the page
        page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        page.route(re.compile(rf"https?://{re.escape(ATTACKER)}/.*"),
                   lambda route: (self.requests.append(route.request.url), route.abort()))

    def visit(self, url: str) -> tuple[int, dict[str, list], str]:
        """Open ``url``; its status, what ran there, and the text of the page."""
        dialogs, requests = len(self.dialogs), len(self.requests)
        response = self.page.goto(url)
        self.page.wait_for_load_state("networkidle")
        self.page.wait_for_timeout(150)  # an onload or onerror fires after the load event
        ran = {"pushed": self.page.evaluate("() => window.__pwned"), "dialogs": self.dialogs[dialogs:],
               "requests": self.requests[requests:]}
        return response.status, ran, self.page.evaluate(_TEXT)


def test_no_formgrader_page_runs_a_name_and_each_shows_it_as_text(course, formgrader, tmp_path):
    """Check that no route showing a student id, assignment or notebook name runs one (reflected or stored)."""
    _, submission_id = course
    url, token = formgrader
    ran, unseen, statuses = {}, {}, {}
    with browser_page() as page:
        watch = Watch(page)
        watch.visit(f"{url}/formgrader?token={token}")  # logs in (cookie) and opens formgrader on the course
        for route, shown in _routes(submission_id):
            status, did, text = watch.visit(f"{url}/formgrader/{route}")
            statuses[route] = status
            if any(did.values()):
                ran[route] = did
            missing = [s for s in shown if s not in text]
            if missing:
                unseen[route] = missing
        save_screenshot(page, tmp_path, "formgrader_escaped_names.png")
    assert not ran, f"a name ran as script in formgrader: {ran}"
    assert not unseen, f"a page does not show the name as text: {unseen}"
    expected_404 = {route for route, _ in _routes(submission_id)[5:7]}
    assert {r: s for r, s in statuses.items() if (s == 404) != (r in expected_404)} == {}, statuses


def test_the_add_student_form_refuses_a_bad_id_with_a_message(course, formgrader, tmp_path):
    """Check that formgrader's "add student" form and its student API refuse an id outside [A-Za-z0-9._@-]."""
    url, token = formgrader
    bad = "<b>eve</b>"
    with browser_page() as page:
        watch = Watch(page)
        watch.visit(f"{url}/formgrader?token={token}")
        watch.visit(f"{url}/formgrader/manage_students")
        page.get_by_text("Add new student").click()
        page.locator("#add-student-modal input.id").fill(bad)
        page.locator("#add-student-modal button.save").click()
        message = page.locator(".refused-student-id")
        message.wait_for(state="visible")
        said = message.inner_text()
        save_screenshot(page, tmp_path, "formgrader_refused_id.png")
    assert "refused" in said and "A-Z a-z 0-9 . _ @ -" in said and bad in said, said
    # The server refuses too, whatever the page sends: 400 and why, in JSON, and nothing stored.
    request = urllib.request.Request(f"{url}/formgrader/api/student/{_u(bad)}", method="PUT",
                                     data=json.dumps({"first_name": "Eve"}).encode(),
                                     headers={"Authorization": f"token {token}"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 400
    assert "student id must be 1 to 128 of the characters" in json.loads(refused.value.read())["message"]
    good = urllib.request.Request(f"{url}/formgrader/api/student/eve.k", method="PUT",
                                  data=json.dumps({"first_name": "Eve"}).encode(),
                                  headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(good, timeout=30) as response:
        assert json.loads(response.read())["id"] == "eve.k"
    with Gradebook(course[0].gradebook_url) as gradebook:
        ids = {student.id for student in gradebook.students}
    assert "eve.k" in ids and bad not in ids


INSTRUCTOR = REPO_ROOT / "deploy" / "jupyterhub" / "jupyter" / "instructor"


def test_the_hubs_instructor_server_escapes_too(course, tmp_path):
    """Check that an instructor's server on the hub (its configuration, the course in DP_COURSE_ROOT) escapes."""
    root = course[0].root
    config = tmp_path / "config"
    shutil.copytree(INSTRUCTOR, config)
    server, log, url, token = _serve(root, tmp_path, config, {"DP_COURSE_ROOT": str(root),
                                                               "DP_EXCHANGE_ROOT": str(tmp_path / "exchange")})
    try:
        with urllib.request.urlopen(f"{url}/formgrader/manage_students/{_u(REFLECTED)}?token={token}",
                                    timeout=30) as response:
            page = response.read().decode()
    finally:
        _stop(server, log)
    assert "<img src=x" not in page and "&lt;img src=x onerror=" in page
