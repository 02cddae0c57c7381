"""Feedback plug-ins: the feedback template, and feedback without hidden tests, solutions or review notes.

:class:`HideHiddenTests` runs last in the feedback pipeline; :func:`secret_lines` and
:func:`scrub` remove any line of a hidden test or a solution from the outputs.
:class:`HideReviewNotes` keeps the automatic review's notes (copy and tampering flags) in
formgrader, for the instructor, and out of the student's feedback.
"""

from __future__ import annotations

import ast
import base64
import binascii
import html
import html.parser
import json
import re
import zlib
from pathlib import Path


import jinja2
import jinja2.bccache

from nbconvert.exporters import HTMLExporter
from nbformat import read as nbformat_read
from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.preprocessors import ClearHiddenTests, GetGrades, NbGraderPreprocessor
from traitlets import Unicode, default

from dpgrader.cells import SECRET_REGIONS, LineKind, grade_id_of, is_test_cell, mark_lines, nbgrader_metadata
from dpgrader.preprocessors.active_content import clean_html
from dpgrader.preprocessors.source_notebook import SourceNotebook, error_output
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


MIN_SECRET_LENGTH = 12  # shorter lines (``return x``, ``)``) are too common to mean anything


def secret_lines(sources: list[str]) -> set[str]:
    """Stripped lines of hidden tests, reference solutions and mark schemes in ``sources`` (cell texts).

    The regions are read by :func:`dpgrader.cells.mark_lines` (:data:`~dpgrader.cells.SECRET_REGIONS`; an
    unterminated or nested region is secret to its end). Marker lines are neither secret nor public. Lines
    that also appear outside those regions (what students see anyway) and lines shorter than
    :data:`MIN_SECRET_LENGTH` are left out.
    """
    secret, public = set(), set()
    for text in sources:
        for line, kind in mark_lines(text, SECRET_REGIONS):
            if line.strip() and kind in (LineKind.HIDDEN, LineKind.VISIBLE):
                (secret if kind is LineKind.HIDDEN else public).add(line.strip())
    return {line for line in secret - public if len(line) >= MIN_SECRET_LENGTH}


def _string_literals(source: str) -> list[str]:
    """The string constants of a cell's code, f-strings' constant parts included (none if it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def message_secrets(sources: list[str]) -> set[str]:
    """The lines a failure message the course's tests raised must not quote: hidden-test *code*.

    These are the lines of :func:`secret_lines` inside hidden-test regions (not solutions or mark schemes:
    neither is in the grading kernel, so no value a message quotes can hold them), without those that
    a string literal of the notebook contains: a message or hint the course wrote for students, split
    over lines (``"two calls of ..., rng=np.random.default_rng(2024))"``), is theirs to read.
    What is left can reach a course message only through a value the student's code made (a type's
    name, a dict's keys); :class:`HideHiddenTests` removes the lines that quote it.
    """
    hidden = {line.strip() for text in sources for line, kind in mark_lines(text) if kind is LineKind.HIDDEN}
    literals = [literal for text in sources for literal in _string_literals(text)]
    return {line for line in hidden & secret_lines(sources) if not any(line in literal for literal in literals)}


def scrub(text: str, secrets: set[str]) -> tuple[str, int]:
    """``text`` without the lines that quote a secret line (verbatim, or escaped as in a ``repr``)."""
    if not secrets or not text:
        return text, 0
    forms = secrets | {json.dumps(line)[1:-1] for line in secrets} | {repr(line)[1:-1] for line in secrets}
    kept, removed = [], 0
    for line in text.split("\n"):
        if any(form in line for form in forms):
            removed += 1
        else:
            kept.append(line)
    return "\n".join(kept), removed


_DATA_URI = re.compile(r"data:[\w.+/-]*(?:;[\w.+=-]*)*;base64,([A-Za-z0-9+/=\s]+)", re.IGNORECASE)
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_INFLATED_BYTES = 16 << 20  # a text chunk that inflates to more than this is not read further


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _png_texts(data: bytes) -> list[bytes]:
    """The text chunks of a PNG: tEXt, zTXt and iTXt, inflated when compressed.

    Its pixels are not read: text drawn into an image is beyond any scrub (an OCR would be needed).
    """
    found, position = [], len(_PNG_SIGNATURE)
    while position + 8 <= len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind, body = data[position + 4:position + 8], data[position + 8:position + 8 + length]
        position += 12 + length
        if kind in (b"tEXt", b"iTXt", b"zTXt"):
            found.append(body)
            keyword_end = body.find(b"\0")
            for start in (keyword_end + 2, keyword_end + 3, keyword_end + 5):  # zTXt; iTXt (flags, method, tags)
                try:
                    found.append(zlib.decompressobj().decompress(body[start:], MAX_INFLATED_BYTES))
                except zlib.error:
                    pass
    return found


class _Text(html.parser.HTMLParser):
    """The text of markup (HTML, SVG) without its tags, entities decoded."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def _markup_text(value: str) -> str:
    parser = _Text()
    parser.feed(value)
    parser.close()
    return "".join(parser.parts)


def _views(value: str, depth: int = 0) -> list[str]:
    """The texts a browser could show from one output value: as written, its text without markup (an SVG's
    ``<text>``), and, decoded, the base64 of an image and the ``data:`` URIs inside it (recursively, twice)."""
    views = [value, _markup_text(value)] if "<" in value else [value]
    if depth >= 2:
        return views
    blobs = [match.group(1) for match in _DATA_URI.finditer(value)]
    if len(value) >= 16 and not value.lstrip().startswith("<"):
        blobs.append(value)  # an image/png or image/jpeg value is base64 itself
    for blob in blobs:
        try:
            data = base64.b64decode("".join(blob.split()), validate=True)
        except (binascii.Error, ValueError):
            continue
        decoded = [data] + (_png_texts(data) if data.startswith(_PNG_SIGNATURE) else [])
        for raw in decoded:
            views += _views(raw.decode("utf-8", errors="ignore"), depth + 1)
            views.append(raw.decode("latin-1"))
    return views


def quotes_secret(value: str, secrets: set[str]) -> bool:
    """Whether any text a page could show from ``value`` (see :func:`_views`) holds a secret line, with
    whitespace ignored (an SVG spaces its text as it likes)."""
    if not secrets or not value:
        return False
    forms = {_squeezed(form) for line in secrets for form in (line, json.dumps(line)[1:-1], repr(line)[1:-1])}
    for view in _views(value):
        squeezed = _squeezed(view)
        if any(form in squeezed for form in forms):
            return True
    return False


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CELL_FRAME = re.compile(r"^Cell In\[(?P<count>\d+)\], line (?P<line>\d+)(?:, in (?P<function>[\w.<>]+))?")
STUDENT_FRAMES_HEADING = "Where it failed in your code (the hidden test's own lines are not shown):"


def student_frames(traceback: list[str], cells: dict[int, NotebookNode]) -> list[str]:
    """The frames of an IPython traceback that run the student's own cells: ``cell <name>, line <n>, in <f>`` and
    that line, read from the cell's source (never from the traceback, which the kernel wrote).

    ``cells`` maps an execution count (IPython's ``In[n]``) to the code cell that ran with it; a frame
    of a test cell, of a file (a library) or of a count that names no cell is left out.
    """
    frames = []
    for entry in traceback:
        match = _CELL_FRAME.match(_ANSI.sub("", str(entry)).strip())
        cell = cells.get(int(match.group("count"))) if match else None
        if cell is None or is_test_cell(cell):
            continue
        lines, number = cell.source.split("\n"), int(match.group("line"))
        if not 1 <= number <= len(lines):
            continue
        name = grade_id_of(cell) or f"In [{match.group('count')}]"
        where = f", in {match.group('function')}" if match.group("function") else ""
        frames += [f"  cell {name}, line {number}{where}:", f"    {lines[number - 1].strip()}"]
    return [STUDENT_FRAMES_HEADING, *frames] if frames else []


_FILE_FRAME = re.compile(r"^File (?P<path>.+?):\d+(?:, in |$)")
CHECK_FILES = re.compile(r"(?:^|[/\\])dplib[/\\]testing[/\\][A-Za-z_]\w*\.py$")  # dplib.testing: the course's checks


def raised_by_the_tests(traceback: list[str], cells: dict[int, NotebookNode]) -> bool:
    """Whether an error was raised by the course's own test code: an ``assert ..., message`` of a test cell or a
    :mod:`dplib.testing` check's ``fail``. Every frame of the IPython ``traceback`` is then a test cell's
    (``cells`` maps execution counts to code cells, as for :func:`student_frames`) or a ``dplib/testing/`` file's;
    a frame in the student's code, in another library, or that names no cell makes it not the tests' own.
    A traceback with no frame (none recorded) is not the tests' either.
    """
    frames = 0
    for entry in traceback:
        head = _ANSI.sub("", str(entry)).strip().split("\n", 1)[0]
        if head.startswith("Cell In["):
            match = _CELL_FRAME.match(head)
            cell = cells.get(int(match.group("count"))) if match else None
            if cell is None or not is_test_cell(cell):
                return False
        elif head.startswith("File "):
            match = _FILE_FRAME.match(head)
            if not (match and CHECK_FILES.search(match.group("path"))):
                return False
        elif head.startswith(("Input In", "<ipython-input")):  # older IPython frames: never trusted
            return False
        else:
            continue
        frames += 1
    return frames > 0


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
