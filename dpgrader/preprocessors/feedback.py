"""Feedback plug-ins: the feedback template, and feedback without hidden tests, solutions or review notes.

:class:`HideHiddenTests` runs last in the feedback pipeline; the scrubber (:mod:`.scrubber`) removes any line
of a hidden test or a solution from the outputs, and only the student's frames of a traceback are shown
(:mod:`.tracebacks`).
:class:`HideReviewNotes` keeps the automatic review's notes (copy and tampering flags) in
formgrader, for the instructor, and out of the student's feedback.
"""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
import jinja2.bccache

from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbformat import read as nbformat_read
from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.preprocessors import ClearHiddenTests, GetGrades, NbGraderPreprocessor
from traitlets import Unicode, default

from dpgrader.cells import LineKind, grade_id_of, is_test_cell, mark_lines, nbgrader_metadata
from dpgrader.preprocessors.active_content import clean_html
from dpgrader.preprocessors.scrubber import message_secrets, quotes_secret, scrub, secret_lines
from dpgrader.preprocessors.source_notebook import SourceNotebook, error_output
from dpgrader.preprocessors.tracebacks import raised_by_the_tests, student_frames
from dpgrader.review.notebook import REVIEW_HEADING

# Feedback pages: nbgrader's template with entries named after the exercise (templates/feedback_named).
FEEDBACK_TEMPLATE_DIRS = [
    str(Path(__file__).parent.parent / "templates"),
    str(Path(utils.__file__).parent / "server_extensions" / "formgrader" / "templates"),
]


class _SharedBytecode(jinja2.BytecodeCache):
    """Compiled templates kept in memory for the life of the process (a worker writes one feedback page per
    submission: compiling the same templates each time cost about 0.2 CPU s a page)."""

    compiled: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        code = self.compiled.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.compiled[bucket.key] = bucket.bytecode_to_string()


# An <img> start tag (its quoted attribute values may hold ">"), and a well-formed list of attributes: white space
# before each name, values quoted or plain. A tag whose attributes are not such a list (stray quotes, "==", a slash in
# the middle, a tag cut short) is left to an HTML parser: the reading finds alt only where every parser does.
_IMG_TAG = re.compile(r"""<img(?=[\s/>])((?:[^>"']|"[^"]*"|'[^']*')*)>""", re.IGNORECASE)
_IMG_START = re.compile(r"<img(?=[\s/>])", re.IGNORECASE)
_ATTRIBUTE = r"""\s+([^\s"'>/=]+)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`/]+))?"""
_ATTRIBUTES = re.compile(rf"(?:{_ATTRIBUTE})*\s*/?")
_ATTRIBUTE_NAME = re.compile(_ATTRIBUTE)
ALT_PLACEHOLDER = "No description has been provided for this image"  # nbconvert's, word for word


def images_lack_alt(html: str) -> bool:
    """Whether an ``<img>`` of ``html`` may lack an ``alt`` attribute (False only when every one surely has one).

    >>> images_lack_alt('<p>2 < 3</p><img src="data:," alt="a > b">'), images_lack_alt('<img title="alt=x" src=y>')
    (False, True)
    """
    tags = _IMG_TAG.findall(html)
    if len(tags) != len(_IMG_START.findall(html)):  # a tag this reading cannot delimit
        return True
    return not all(_ATTRIBUTES.fullmatch(attributes)
                   and any(name.lower() == "alt" for name in _ATTRIBUTE_NAME.findall(attributes)) for attributes in tags)


def _placeholder_alt_text(html: str, log) -> str:
    """nbconvert's own pass (``HTMLExporter.from_notebook_node``, 7.x): every ``img`` without ``alt`` gets its
    placeholder, JupyterLab-template cells a ``tabindex``, and the page is written out again."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, features="html.parser")
    missing = soup.select("img:not([alt])")
    for element in missing:
        element.attrs["alt"] = ALT_PLACEHOLDER
    if missing:
        log.warning("Alternative text is missing on %s image(s).", len(missing))
    for element in soup.select(".jp-Notebook div.jp-Cell-inputWrapper, .jp-Notebook div.jp-OutputArea-output"):
        element.attrs["tabindex"] = "0"
    return str(soup)


class NamedFeedbackExporter(HTMLExporter):
    """The exporter of feedback pages: nbgrader's feedback template, entries named after the exercise.

    Chosen for ``nbgrader generate_feedback`` alone (``c.GenerateFeedback.exporter_class``), so
    formgrader's own ``HTMLExporter`` keeps its grading template. nbgrader configures
    ``HTMLExporter.template_name = "feedback"``; ``nbgrader_config.py`` sets this class's own
    section, which takes precedence over its parent's.
    """

    @default("template_name")
    def _template_name_default(self):
        return "feedback_named"

    @default("extra_template_basedirs")
    def _extra_template_basedirs_default(self):
        return list(FEEDBACK_TEMPLATE_DIRS)

    @default("sanitize_html")
    def _sanitize_html_default(self):  # the template cleans Markdown and HTML outputs with clean_html (nh3)
        return True

    def default_filters(self):
        yield from super().default_filters()
        yield ("clean_html", clean_html)  # nh3 with MathML and tables, in place of nbconvert's bleach

    def _create_environment(self):
        environment = super()._create_environment()
        environment.bytecode_cache = _SharedBytecode()  # keyed by template name and source checksum
        return environment

    def from_notebook_node(self, nb: NotebookNode, resources: dict | None = None, **kw) -> tuple[str, dict]:
        """The page as the template writes it, each image without a text alternative given nbconvert's placeholder.

        nbconvert's ``HTMLExporter`` parses and re-writes every page with BeautifulSoup to add that placeholder
        (and ``tabindex`` on JupyterLab-template cells, which this classic-based template has none of): half of a
        feedback page's export. Here the page is parsed only when an ``<img>`` tag may lack ``alt``
        (:func:`images_lack_alt`); then nbconvert's own pass runs, exactly as before.
        """
        # HTMLExporter.from_notebook_node (nbconvert 7) up to its BeautifulSoup pass: the same filters, then the template
        language = nb.metadata.get("language_info", {})
        lexer = language.get("pygments_lexer", language.get("name", None))
        highlight_code = self.filters.get("highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self))
        resources = self._init_resources(resources)
        filter_data_type = WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata, parent=self, resources=resources)
        self.register_filter("highlight_code", highlight_code)
        self.register_filter("filter_data_type", filter_data_type)
        html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        if images_lack_alt(html):
            html = _placeholder_alt_text(html, self.log)
        return html, resources


class GetGradesWithPending(GetGrades):
    """nbgrader's ``GetGrades``, and which grades still await a person (shown as pending, never as 0).

    A cell is pending when it needs a manual grade and has none (a written answer, or every
    cell of a submission the grader could not grade); its ``metadata.nbgrader.pending`` is set
    and ``resources["nbgrader"]["pending_points"]`` sums the points of the notebook's pending cells.
    """

    def preprocess(self, nb, resources):
        resources.setdefault("nbgrader", {})["pending_points"] = 0.0
        return super().preprocess(nb, resources)

    def _get_score(self, cell, resources):
        super()._get_score(cell, resources)
        grade = self.gradebook.find_grade(
            grade_id_of(cell), self.notebook_id, self.assignment_id, self.student_id)
        pending = bool(grade.needs_manual_grade) and grade.manual_score is None
        cell.metadata.nbgrader["pending"] = pending
        if pending:
            resources["nbgrader"]["pending_points"] += float(grade.max_score)


MESSAGE_WITHHELD = "[the message is not shown: it quoted the course's hidden tests or solutions]"
NO_MESSAGE = "[raised without a message]"


class HideHiddenTests(ClearHiddenTests):
    """Feedback shows which tests passed, their points and the failure message, never hidden test code.

    In every test cell: the ``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS`` region
    is replaced by one comment line; an error output keeps only ``ename: evalue`` and, when the
    error was raised in the student's own code, its frames there (:func:`student_frames`; an
    IPython traceback also quotes the failing lines of the test, which may be hidden); other
    outputs (what the student's function printed while hidden tests called it, which
    may show their inputs) are dropped.

    The failure message is the student's by construction when the course's tests raised it
    (:func:`raised_by_the_tests`: an ``assert ..., message`` in a test cell or a ``dplib.testing``
    check's ``fail``): the course writes those messages for students, and whatever they say
    (a hint naming the idiom ``rng = np.random.default_rng(rng)``, an expected value) is shown whole.
    Only a line of it that quotes hidden-test code (:func:`message_secrets`), which a value the
    student's code made could smuggle in, is removed. A message raised anywhere else (the student's
    code, a library it called) is scrubbed of every secret line, as every other output. A message
    that loses every line says so (:data:`MESSAGE_WITHHELD`), and so does an error raised without
    one (:data:`NO_MESSAGE`, as an exercise not done yet raises ``NotImplementedError()``): no error
    box is left empty.

    In every cell, test or not: any output line that quotes a line of a hidden test, a
    reference solution or a mark scheme of the source notebook (:func:`secret_lines`) is
    removed, so ``print(In)``, printing a course file or an exception message quoting a
    test's frame puts none of it into the feedback; an output whose image, ``data:`` URI or
    markup text holds such a line (:func:`quotes_secret`) is removed whole.
    """

    placeholder = Unicode(
        "# ... hidden tests ran here (their code is not shown; see the message below if one failed)",
        help="The line that replaces a hidden-test region in feedback.",
    ).tag(config=True)

    _secrets: frozenset[str] = frozenset()  # until preprocess() reads the source notebook
    _message_secrets: frozenset[str] = frozenset()  # the hidden-test code a course message must not quote
    _cells: dict[int, NotebookNode] = {}  # execution count -> code cell, set by preprocess()

    def preprocess(self, nb: NotebookNode, resources: dict):
        sources = self._load_sources(resources)
        self._secrets, self._message_secrets = secret_lines(sources), message_secrets(sources)
        counts = [cell.get("execution_count") for cell in nb.cells if cell.cell_type == "code"]
        self._cells = {cell.execution_count: cell for cell in nb.cells  # a count seen twice (a restart) names no cell
                       if cell.cell_type == "code" and cell.get("execution_count") and counts.count(cell.execution_count) == 1}
        return super().preprocess(nb, resources)

    def _load_sources(self, resources: dict) -> list[str]:
        """The cell sources of the source notebook: from the gradebook and from the course's source folder."""
        texts = []
        meta = resources.get("nbgrader") or {}
        if "db_url" in meta:
            texts += [cell["source"] for cell in SourceNotebook(resources).cells]
        try:
            from nbgrader.coursedir import CourseDirectory

            coursedir = CourseDirectory(config=self.config)
            folder = Path(coursedir.format_path(coursedir.source_directory, ".", meta["assignment"]))
            texts += [cell.source for cell in nbformat_read(str(folder / f"{meta['notebook']}.ipynb"), as_version=4).cells]
        except Exception as error:  # no source notebook here: the gradebook's hidden tests still count
            self.log.warning("Feedback: source notebook not read (%s); scrubbing hidden tests only", error)
        return texts

    def _scrub_outputs(self, cell: NotebookNode) -> None:
        removed = 0
        for output in cell.get("outputs", []):
            if "text" in output:
                output.text, n = scrub(output.text, self._secrets)
                removed += n
            if "evalue" in output:
                output.evalue, n = scrub(str(output.evalue), self._secrets)
                removed += n
            if "traceback" in output:
                lines = [scrub(line, self._secrets) for line in output.traceback]
                output.traceback = [line for line, _ in lines]
                removed += sum(n for _, n in lines)
                if not "".join(output.traceback).strip():  # never an empty error box
                    output.traceback = [f"{output.get('ename', 'Error')}: {output.get('evalue') or MESSAGE_WITHHELD}"]
            for key, value in (output.get("data") or {}).items():
                if isinstance(value, str) and (key.startswith("text/") or key.endswith("json")):
                    output.data[key], n = scrub(value, self._secrets)
                    removed += n
        kept = []
        for output in cell.get("outputs", []):  # what is left, images and data: URIs decoded
            values = [str(v) for v in (output.get("data") or {}).values()] + [str(output.get("text", ""))]
            if any(quotes_secret(value, self._secrets) for value in values):
                removed += 1
            else:
                kept.append(output)
        cell.outputs = kept
        self._note_removed(cell, removed)

    @staticmethod
    def _note_removed(cell: NotebookNode, removed: int) -> None:
        if removed:
            cell.outputs.append(NotebookNode(output_type="stream", name="stdout", text=(
                f"[{removed} output line(s) removed from this feedback (an image counts as one line): they quote "
                "the course's hidden tests or solutions]\n")))

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        if not is_test_cell(cell):
            if cell.cell_type == "code":
                self._scrub_outputs(cell)
            return cell, resources
        regions = ((self.begin_test_delimeter, self.end_test_delimeter),)
        cell.source = "\n".join(
            line[: len(line) - len(line.lstrip())] + self.placeholder if kind is LineKind.OPEN else line
            for line, kind in mark_lines(cell.source, regions) if kind in (LineKind.OPEN, LineKind.VISIBLE))
        shown = [self._error_shown(output) for output in cell.get("outputs", []) if output.output_type == "error"]
        cell.outputs = [error for error, _ in shown]
        self._note_removed(cell, sum(removed for _, removed in shown))
        return cell, resources

    def _error_shown(self, output: NotebookNode) -> tuple[NotebookNode, int]:
        """A test cell's error as feedback shows it, and how many lines it lost: the frames in the student's own
        cells, then ``ename: evalue`` (whole when the tests raised it; see the class's docstring)."""
        traceback = output.get("traceback", [])
        ours = raised_by_the_tests(traceback, self._cells)
        evalue, removed = scrub(str(output.get("evalue", "")), self._message_secrets if ours else self._secrets)
        if not evalue.strip():  # never an empty error box
            evalue = MESSAGE_WITHHELD if removed else NO_MESSAGE
        ename, dropped = scrub(str(output.get("ename", "Error")), self._secrets)
        ename = ename if not dropped and ename.strip() else "Error"
        error = error_output(ename, evalue)
        # The frames quote the student's own cells (never a test cell, never the traceback's text): a line of theirs
        # that equals the reference solution's is theirs to see.
        error.traceback = student_frames(traceback, self._cells) + error.traceback
        return error, removed + dropped


class HideReviewNotes(NbGraderPreprocessor):
    """Feedback without the automatic review's notes: they are for the instructor to check.

    :func:`dpgrader.grading.review_comments.comment_in_gradebook` writes copy and tampering flags into the
    comment of a notebook's first solution cell, under :data:`REVIEW_HEADING`, so that formgrader
    shows them. A flag is a reason to look, not a verdict, so the student's feedback keeps only
    the rest of the comment (what a grader wrote). Runs after ``GetGrades``.
    """

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        meta = nbgrader_metadata(cell)
        if REVIEW_HEADING in (meta.get("comment") or ""):
            meta["comment"] = without_review_notes(meta["comment"])
        return cell, resources


def without_review_notes(comment: str) -> str:
    """``comment`` without the :data:`REVIEW_HEADING` line and the ``- flag`` lines that follow it."""
    kept, in_notes = [], False
    for line in comment.split("\n"):
        if line.strip() == REVIEW_HEADING:
            in_notes = True
        elif in_notes and line.startswith("- "):
            continue
        else:
            in_notes = False
            kept.append(line)
    return "\n".join(kept).strip()
