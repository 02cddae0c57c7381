"""Formgrader that runs no script: every name it shows escaped, and no bad student id stored in the gradebook.

nbgrader 0.9's formgrader renders its pages with a Jinja environment that does not escape, so a student
id, an assignment or a notebook name in a URL (``/formgrader/manage_students/<img src=x onerror=...>``, a
link anyone can send an instructor) or in the gradebook is markup in the instructor's logged-in page.
:func:`secure_nbgrader` closes that for the process it runs in, once, before formgrader builds its pages:

- its pages (``manage_*``, ``gradebook*``, the error pages) render with ``autoescape=True``. They hold
  no value meant as HTML: the macros they import return markup that is not escaped twice. A value they
  hand to their script (``var student_id = "{{ student_id }}";``) is written as JSON instead (``|tojson``,
  :class:`ScriptValuesAsJson`): escaped for a script, and the script gets the name as it is;
- the page of a submission is the autograded notebook exported by nbconvert, whose environment must not
  escape (the notebook's HTML is the page). The names that page shows (student, first and last name,
  assignment, notebook, path) are escaped in the resources before it renders (:class:`EscapeNames`);
  the notebook's outputs were cleaned at autograding (:mod:`dpgrader.preprocessors.active_content`);
- nbgrader's JavaScript inserts names with ``.text()`` but in one place: a missing notebook's name
  (``manage_students_notebook_submissions.js``). That file, and ``manage_students.js`` (whose "add
  student" form now says why an id is refused), are served from ``dpgrader/templates/formgrader_js/``;
- the page of a submission renders with ``templates/formgrade_a11y/formgrade/``, nbgrader's template changed for
  WCAG 2.1 AA (issue 39: the page's language, a label on every score and comment field, contrast, underlined links);
- a student id outside :data:`dpgrader.ids.STUDENT_ID` is refused by ``Gradebook.add_student``, which
  every way into the gradebook goes through (``nbgrader autograde``, ``nbgrader db student add`` and
  ``import``, formgrader's "add student"), and by formgrader's student API with a 400 and a message.

``nbgrader_config.py`` calls it: every nbgrader command and every formgrader that serves the course
reads that file (``make lab``, the hub's instructor servers, whose configuration loads it), before
formgrader sets up its environment and routes. Nothing is changed twice.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from pathlib import Path

from jinja2 import BaseLoader
from markupsafe import escape
from nbconvert.preprocessors import Preprocessor

from dpgrader.ids import require_student_id

#: nbgrader's JavaScript files that formgrader gets from here instead, changed as each file's first lines say.
JS_DIR = Path(__file__).resolve().parent / "templates" / "formgrader_js"
PATCHED_JS = ("manage_students.js", "manage_students_notebook_submissions.js")
#: Where formgrader's page of a submission finds its template (``formgrade/``) before nbgrader's own.
FORMGRADE_TEMPLATES = Path(__file__).resolve().parent / "templates" / "formgrade_a11y"
#: The names the page of a submission shows, put into nbconvert's resources by formgrader's SubmissionHandler.
NAMES = ("student", "first_name", "last_name", "assignment_id", "notebook_id", "notebook_path", "filename")
FORMGRADER = "nbgrader.server_extensions.formgrader"
_DONE = "_dpgrader_secured"


# ``var name = "{{ value }}";`` in formgrader's templates: a value handed to the page's script.
_SCRIPT_VALUE = re.compile(r'(var \w+ = )"\{\{ ([\w.]+) \}\}"')


class ScriptValuesAsJson(BaseLoader):
    """formgrader's templates as ``loader`` reads them, each ``var x = "{{ value }}";`` written ``{{ value|tojson }}``."""

    def __init__(self, loader: BaseLoader):
        self.loader = loader

    def get_source(self, environment, template):
        source, filename, uptodate = self.loader.get_source(environment, template)
        return _SCRIPT_VALUE.sub(r"\1{{ \2|tojson }}", source), filename, uptodate

    def list_templates(self):
        return self.loader.list_templates()


def escaping_environment(env):
    """``env`` (formgrader's Jinja environment) escaping every value, and writing those its scripts get as JSON."""
    return env.overlay(autoescape=True, loader=ScriptValuesAsJson(env.loader))


class EscapeNames(Preprocessor):
    """Escape, in the resources of formgrader's submission page, every name it shows (:data:`NAMES`)."""

    enabled = True

    def preprocess(self, nb, resources):
        for key in NAMES:
            if isinstance(resources.get(key), str):
                resources[key] = escape(resources[key])
        return nb, resources


def _once(owner, name: str, wrap) -> None:
    """Replace ``owner.name`` by ``wrap(original)``, unless that was done already."""
    original = getattr(owner, name)
    if getattr(original, _DONE, False):
        return
    replacement = functools.wraps(original)(wrap(original))
    setattr(replacement, _DONE, True)
    setattr(owner, name, replacement)


def refuse_bad_student_ids() -> None:
    """Make nbgrader's ``Gradebook.add_student`` refuse an id outside :data:`dpgrader.ids.STUDENT_ID` (ValueError)."""
    from nbgrader.api import Gradebook

    def wrap(add_student):
        def checked(self, student_id, **kwargs):
            return add_student(self, require_student_id(student_id), **kwargs)
        return checked

    _once(Gradebook, "add_student", wrap)


def secure_formgrader() -> None:
    """Escaping pages, escaped names in the submission page, patched scripts and a checked student API."""
    from jupyter_server.utils import url_path_join
    from nbgrader.server_extensions.formgrader import apihandlers
    from nbgrader.server_extensions.formgrader.formgrader import FormgradeExtension
    from tornado import web

    def wrap_settings(init_tornado_settings):
        def secured(self, webapp):
            init_tornado_settings(self, webapp)
            settings = webapp.settings
            settings["nbgrader_jinja2_env"] = escaping_environment(settings["nbgrader_jinja2_env"])
            exporter = settings["nbgrader_exporter"]  # its template paths are fixed when it is made: make it again
            exporter = type(exporter)(config=exporter.config,
                                      extra_template_basedirs=[str(FORMGRADE_TEMPLATES), *exporter.extra_template_basedirs])
            exporter.register_preprocessor(EscapeNames(), enabled=True)
            settings["nbgrader_exporter"] = exporter
        return secured

    def wrap_handlers(init_handlers):
        def secured(self, webapp):
            # Added first, so matched before nbgrader's own /formgrader/static/ route.
            files = "|".join(re.escape(name) for name in PATCHED_JS)
            pattern = url_path_join(webapp.settings["base_url"], rf"/formgrader/static/js/({files})")
            webapp.add_handlers(".*$", [(pattern, web.StaticFileHandler, {"path": str(JS_DIR)})])
            init_handlers(self, webapp)
        return secured

    def wrap_put(put):
        @web.authenticated
        def checked(self, student_id):
            try:
                require_student_id(student_id.strip())
            except ValueError as error:  # said to the page that sent it (manage_students.js shows it)
                self.set_status(400)
                self.set_header("Content-Type", "application/json")
                self.finish(json.dumps({"message": f"Student not added: {error}."}))
                return None
            return put(self, student_id)
        return checked

    _once(FormgradeExtension, "init_tornado_settings", wrap_settings)
    _once(FormgradeExtension, "init_handlers", wrap_handlers)
    _once(apihandlers.StudentHandler, "put", wrap_put)


def secure_nbgrader() -> None:
    """What ``nbgrader_config.py`` calls: bad student ids refused, and formgrader secured if this process runs it.

    formgrader is imported by the server that serves it before it reads the course's configuration; an
    nbgrader command never imports it, and then nothing of the server is imported here.
    """
    refuse_bad_student_ids()
    if FORMGRADER in sys.modules:
        secure_formgrader()
