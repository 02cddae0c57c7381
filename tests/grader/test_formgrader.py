"""What formgrader renders, without a browser: every template escapes, and the scripts served from dpgrader are current.

The browser test (``tests/deploy/test_browser_formgrader.py``) opens every page; these checks name the template or
the line of script that would let a name through, and fail when an nbgrader upgrade changes what was patched.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from jinja2 import Environment, FileSystemLoader
from nbgrader.server_extensions.formgrader import handlers

from dpgrader.formgrader import JS_DIR, NAMES, PATCHED_JS, EscapeNames, escaping_environment

PAYLOAD = '<img src=x onerror="alert(1)">\';alert(2);//"'
NBGRADER_JS = Path(handlers.static_path) / "js"
# sha256 of nbgrader 0.9.6's files that dpgrader/templates/formgrader_js/ are copies of. Another version:
# copy its file again, make the change the copy's first lines describe, and put its hash here.
ORIGINALS = {
    "manage_students.js": "14379bf5c7471fac3377f63ea5b5ec10ae70b073901e23553120e09db8c4a09f",
    "manage_students_notebook_submissions.js": "b970149ba92067b5f54c2d3a84d59c4fbe3091bf2f7114acc1e3e48a4c138098",
}
# A value inserted as HTML: an argument built with "+" of .html(), .append() and the like, or a variable's
# .html() or innerHTML (jQuery objects appended, $("<a/>").text(x), literals: fine).
AS_HTML = re.compile(r"""\.(html|append|prepend|after|before|replaceWith)\([^)]*\+|\.html\(\s*[\w.]+\s*\)|"""
                     r"""innerHTML\s*=(?!=)\s*[^"'\s]""")


def _as_html(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if AS_HTML.search(line)]


@pytest.mark.parametrize("name", PATCHED_JS)
def test_the_served_scripts_are_copies_of_this_nbgraders(name):
    original = (NBGRADER_JS / name).read_bytes()
    assert hashlib.sha256(original).hexdigest() == ORIGINALS[name], (
        f"nbgrader's {name} changed: copy it again into {JS_DIR} with dpgrader's change, and update ORIGINALS")
    copy = (JS_DIR / name).read_text()
    assert copy.startswith(f"// nbgrader 0.9's {name}, served by dpgrader/formgrader.py with")
    assert _as_html(copy) == []


def test_no_other_script_of_formgrader_inserts_a_value_as_html():
    found = {path.name: _as_html(path.read_text()) for path in sorted(NBGRADER_JS.glob("*.js"))}
    unsafe = {name: lines for name, lines in found.items() if lines}
    assert unsafe == {"manage_students_notebook_submissions.js": ['this.$name.append(name + " (file missing)");']}
    assert set(unsafe) <= set(PATCHED_JS), "a script inserts a value as HTML and is not served from dpgrader"


def _context(payload: str) -> dict:
    resources = {key: payload for key in NAMES} | {"base_url": "", "index": 0, "total": 1, "submission_id": payload}
    return {"base_url": "", "url_prefix": payload, "course_id": payload, "exchange": payload, "current_config": payload,
            "default_timezone": payload, "course_dir": payload, "assignment_id": payload, "notebook_id": payload,
            "student_id": payload, "error_code": 500, "windows": False, "exchange_missing": True, "resources": resources}


# formgrade_404.tpl imports "formgrade_macros.tpl", which nbgrader 0.9 does not ship (a missing autograded notebook
# gives formgrader's 500 page instead); the same macros render the submission page, through EscapeNames.
TEMPLATES = sorted(p.name for p in Path(handlers.template_path).glob("*.tpl") if p.name != "formgrade_404.tpl")


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_formgrader_page_escapes_what_it_shows_and_hands_its_script_json(template):
    nbgraders = Environment(loader=FileSystemLoader([handlers.template_path]))
    assert "<img src=x" in nbgraders.get_template(template).render(**_context(PAYLOAD)) or template.startswith(
        ("base", "gradebook_assignments", "gradebook_base", "manage_students.", "manage_students_base")), \
        "nbgrader's own environment no longer lets the payload through: is this check still needed?"
    page = escaping_environment(nbgraders).get_template(template).render(**_context(PAYLOAD))
    assert "<img src=x" not in page
    for name, value in re.findall(r"var (\w+) = (.+);\n", page):
        if name != "base_url" or value.startswith('"'):
            assert json.loads(value) in (PAYLOAD, ""), f"{template}: var {name} = {value}"


def test_the_submission_page_gets_its_names_escaped():
    _, resources = EscapeNames().preprocess(None, {key: PAYLOAD for key in NAMES} | {"index": 0})
    assert all(resources[key] == PAYLOAD.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
               .replace('"', "&#34;").replace("'", "&#39;") for key in NAMES)
    assert resources["index"] == 0
