"""nbgrader preprocessors that make autograding survive real submissions, and feedback safe to hand back.

``nbgrader_config.py`` puts them in nbgrader's pipelines by dotted name (nbconvert imports
a preprocessor given as a string):

- sanitize (before anything runs): :class:`SanitizeMetadata` replaces nbgrader's
  ``DeduplicateIds``, :class:`RestoreCells` replaces ``OverwriteCells``;
- autograde: :class:`GuardedExecute` replaces ``Execute``, :class:`AllOrNothingTests`
  runs before ``SaveAutoGrades``;
- feedback: :class:`HideHiddenTests` runs last.

Why, as measured on nbgrader 0.9.6 (see the tests in ``tests/test_grading_failure_modes.py``):

- ``DeduplicateIds`` turns the metadata of a duplicated cell into ``{}`` instead of removing
  it. With ``add_missing_cells`` the submission then fails with ``KeyError: 'grade_id'``;
  without it, ``CheckCellMetadata`` raises ``SchemaTooOldError`` (the misleading "old
  metadata format" message of nbgrader#1083), which aborts the grading of *everybody*.
- ``OverwriteCells.add_missing_cells`` raises ``KeyError`` when the cell before a missing
  test cell is missing too (a student who deleted an exercise with its tests, or
  submitted an empty notebook), and never restores a deleted read-only (set-up) cell.
- A dead kernel (``os._exit``, ``exit()``, a crash) discards the whole notebook, also the
  tests that had already passed; a kernel that ignores the interrupt after a timeout
  does the same.
- A test cell whose output holds an ``execute_result`` is scored by that number (nbgrader's
  partial credit), even when an assertion failed after it: a student's function can call
  ``sys.displayhook(2.0)`` to award itself the points.
- Feedback HTML shows the full test cells, hidden tests included, and IPython tracebacks
  quote the lines of the failing (hidden) code.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import read as nbformat_read
from nbformat import writes as nbformat_writes
from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, Execute, NbGraderPreprocessor, OverwriteCells
from traitlets import Bool, Dict, Int, Unicode

from dplib.grading import guard
from dplib.grading.outcomes import Status, note

SCHEMA_VERSION = 3
# Feedback pages: nbgrader's template with entries named after the exercise (templates/feedback_named).
FEEDBACK_TEMPLATE_DIRS = [
    str(Path(__file__).parent / "templates"),
    str(Path(utils.__file__).parent / "server_extensions" / "formgrader" / "templates"),
]


def _is_test_cell(cell: NotebookNode) -> bool:
    """An autograded test cell: a graded code cell that is not a student's answer."""
    return cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell)


def _error(ename: str, evalue: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def _bound_names(source: str) -> set[str]:
    """Names a cell binds at top level (defs, classes, assignments, imports); empty if it does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _visible_lines(source: str, drop_hidden: bool = False) -> list[str]:
    """The non-blank lines of a cell, without its hidden-test region if ``drop_hidden``."""
    lines, inside = [], False
    for line in source.split("\n"):
        if drop_hidden and "BEGIN HIDDEN TESTS" in line:
            inside = True
        elif drop_hidden and "END HIDDEN TESTS" in line:
            inside = False
        elif not inside and line.strip():
            lines.append(line.rstrip())
    return lines


def _import_lines(source: str) -> list[str]:
    """The top-level import statements of a cell, one per line."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]


class _SourceNotebook:
    """What the gradebook knows about one notebook of an assignment, as plain data."""

    def __init__(self, resources: dict):
        meta = resources["nbgrader"]
        with Gradebook(meta["db_url"]) as gradebook:
            notebook = gradebook.find_notebook(meta["notebook"], meta["assignment"])
            self.cells = [
                {"name": c.name, "cell_type": c.cell_type, "locked": c.locked, "source": c.source, "checksum": c.checksum}
                for c in notebook.source_cells
            ]
            self.points = {c.name: c.max_score for c in notebook.grade_cells}
            self.solutions = {c.name for c in notebook.solution_cells}
            self.tasks = {c.name: c.max_score for c in notebook.task_cells}
        self.by_name = {c["name"]: c for c in self.cells}

    def is_read_only(self, name: str) -> bool:
        cell = self.by_name[name]
        return cell["locked"] and name not in self.points and name not in self.solutions and name not in self.tasks

    def metadata(self, name: str) -> dict:
        """The nbgrader metadata generate_assignment gives this cell."""
        cell = self.by_name[name]
        meta = {
            "grade": name in self.points,
            "grade_id": name,
            "locked": bool(cell["locked"]),
            "schema_version": SCHEMA_VERSION,
            "solution": name in self.solutions,
            "task": name in self.tasks,
            "cell_type": cell["cell_type"],
            "checksum": cell["checksum"],
        }
        if name in self.points or name in self.tasks:
            meta["points"] = self.points.get(name, self.tasks.get(name))
        return meta


class SanitizeMetadata(NbGraderPreprocessor):
    """Trust nothing in a submitted cell's nbgrader metadata but its ``grade_id``.

    - metadata that is not a dict, has no ``grade_id`` or an id the gradebook does not
      know is removed (the cell is graded as ordinary code);
    - of several cells with the same id (copy-paste keeps the metadata), the last keeps
      it, as nbgrader's ``DeduplicateIds`` intends, and the others lose it *entirely*;
    - the kept metadata is rebuilt from the gradebook (flags, points, type, schema
      version), so hand-edited or outdated metadata cannot abort the run.
    """

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        source = _SourceNotebook(resources)
        last_copy = {}
        for index, cell in enumerate(nb.cells):
            meta = cell.metadata.get("nbgrader")
            if isinstance(meta, dict) and meta.get("grade_id") in source.by_name:
                last_copy[meta["grade_id"]] = index
        for index, cell in enumerate(nb.cells):
            if "nbgrader" not in cell.metadata:
                continue
            meta = cell.metadata["nbgrader"]
            grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
            if last_copy.get(grade_id) != index:
                reason = "a duplicate of a later cell" if grade_id in last_copy else "unknown to the gradebook"
                self.log.warning("Cell %d (grade_id %r) is %s: graded as ordinary code", index, grade_id, reason)
                del cell.metadata["nbgrader"]
                continue
            cell.metadata["nbgrader"] = source.metadata(grade_id)
        return nb, resources


class RestoreCells(OverwriteCells):
    """nbgrader's ``OverwriteCells``, with missing cells put back robustly.

    Every missing test cell (and, unlike nbgrader, every missing read-only cell such
    as the imports at the top) comes back from the gradebook, right after the closest
    earlier cell of the source notebook that the submission still has (at the top if
    none), so an empty notebook or a deleted exercise with its tests is still graded.
    """

    restore_read_only_cells = Bool(True, help="Also put back deleted read-only cells.").tag(config=True)

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        """An untouched released test cell gets its hidden tests back silently.

        nbgrader stores a test cell's checksum *with* its hidden tests, so every untouched
        release cell looks changed and nbgrader warns "checksum has changed" for each; the
        cell is restored either way, so the warning is kept for real edits only.
        """
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None:
            try:
                source_cell = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                source_cell = None
            if source_cell is not None and source_cell.locked and _visible_lines(cell.source) == _visible_lines(
                    source_cell.source, drop_hidden=True):
                cell.source = source_cell.source
        return super().preprocess_cell(cell, resources, index)

    def add_missing_grade_cells(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        source = _SourceNotebook(resources)
        source_cells = self.gradebook.find_notebook(self.notebook_id, self.assignment_id).source_cells
        for position, wanted in enumerate(source.cells):
            name = wanted["name"]
            if name not in source.points and not (self.restore_read_only_cells and source.is_read_only(name)):
                continue
            present = {
                cell.metadata["nbgrader"]["grade_id"]: i
                for i, cell in enumerate(nb.cells)
                if "grade_id" in cell.metadata.get("nbgrader", {})
            }
            if name in present:
                continue
            where = 0
            for earlier in reversed(source.cells[:position]):
                if earlier["name"] in present:
                    where = present[earlier["name"]] + 1
                    break
            self.log.warning("Missing cell %s: put back from the gradebook", name)
            if name in source.points:
                cell = self.missing_cell_transform(
                    source_cells[position], source.points[name], is_solution=name in source.solutions
                )
            else:
                cell = self._read_only_cell(source, name)
            nb.cells.insert(where, cell)
        return nb, resources

    def _read_only_cell(self, source: _SourceNotebook, name: str) -> NotebookNode:
        wanted = source.by_name[name]
        cell = NotebookNode(
            cell_type=wanted["cell_type"],
            metadata=NotebookNode(deletable=False, editable=False, nbgrader=NotebookNode(source.metadata(name))),
            source=wanted["source"],
        )
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        return cell


class GuardedExecute(Execute):
    """nbgrader's ``Execute``, with the kernel guarded and a dead kernel survived.

    - Before the first cell, :mod:`dplib.grading.guard` is installed in the kernel
      (silently), so every cell starts from untouched builtins, numpy, pandas, dplib, ...
      and the names the read-only cells import.
    - If the kernel dies (``os._exit``, ``exit()``, a crash, memory) or stops answering
      after a timeout, the cells that already ran keep their results; the failing cell
      and every later code cell get an error output saying why, so their tests score 0
      and the notebook is still graded.
    """

    guard = Bool(True, help="Install dplib.grading.guard in the kernel before the first cell.").tag(config=True)

    error_on_timeout = Dict(
        default_value={
            "ename": "CellTimeoutError",
            "evalue": "the cell ran past the autograder's time limit (an infinite loop?) and was interrupted",
            "traceback": ["CellTimeoutError: the cell ran past the autograder's time limit and was interrupted"],
        },
        help=Execute.error_on_timeout.help,
    ).tag(config=True)

    max_cells = Int(1000, help="Notebooks with more cells are refused before anything runs.").tag(config=True)
    max_notebook_bytes = Int(16 << 20, help="Notebooks larger than this are refused before anything runs.").tag(config=True)
    max_output_bytes_per_cell = Int(2 << 20, help="Output kept per cell; the rest is dropped.").tag(config=True)
    max_output_bytes = Int(16 << 20, help="Output kept per notebook; the rest is dropped.").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict | None = None, km=None):
        self._guard_code = self._guard_setup(resources) if self.guard else None
        self._stopped = None
        self._output_bytes, self._cell_bytes, self._truncated = 0, {}, set()
        self._notebook = ((resources or {}).get("nbgrader") or {}).get("notebook", "notebook")
        size = len(nbformat_writes(nb))
        if len(nb.cells) > self.max_cells or size > self.max_notebook_bytes:
            what = (f"{len(nb.cells)} cells (at most {self.max_cells})" if len(nb.cells) > self.max_cells
                    else f"{size} bytes (at most {self.max_notebook_bytes})")
            note(Status.TOO_LARGE, f"{self._notebook}: the notebook has {what}: refused, nothing was run")
            for cell in nb.cells:
                if cell.cell_type == "code":
                    cell.outputs = [_error("NotebookTooLarge", f"not run: the notebook has {what}")]
            return nb, resources
        return super().preprocess(nb, resources, km)

    def output(self, outs, msg, display_id, cell_index):
        """Keep a cell's outputs up to the per-cell and per-notebook byte limits; drop the rest."""
        size = len(str(msg.get("content", "")))
        used = self._cell_bytes.get(cell_index, 0)
        if used + size > self.max_output_bytes_per_cell or self._output_bytes + size > self.max_output_bytes:
            if cell_index not in self._truncated:
                self._truncated.add(cell_index)
                note(Status.OUTPUT_LIMIT,
                     f"{self._notebook}: cell {cell_index} printed more than the output limit: the rest was dropped")
                outs.append(NotebookNode(output_type="stream", name="stdout", text=(
                    f"\n[output truncated: more than {self.max_output_bytes_per_cell} bytes in this cell "
                    f"or {self.max_output_bytes} in the notebook]\n")))
            return None
        self._cell_bytes[cell_index] = used + size
        self._output_bytes += size
        return super().output(outs, msg, display_id, cell_index)

    async def _async_handle_timeout(self, timeout, cell=None):
        name = (cell.metadata.get("nbgrader", {}).get("grade_id") if cell is not None else None) or "a cell"
        note(Status.TIMED_OUT, f"{self._notebook}: {name} timed out after {timeout} s and was interrupted")
        return await super()._async_handle_timeout(timeout, cell)

    def _guard_setup(self, resources: dict | None) -> str | None:
        if not resources or "nbgrader" not in resources:
            return guard.setup_code([])
        source = _SourceNotebook(resources)
        imports, keep_out = [], set()
        for cell in source.cells:
            if cell["cell_type"] != "code":
                continue
            if source.is_read_only(cell["name"]):
                imports += _import_lines(cell["source"])
            elif cell["name"] in source.solutions:
                keep_out |= _bound_names(cell["source"])
        return guard.setup_code(imports, sorted(keep_out))

    def _run_silently(self, code: str) -> None:
        msg_id = self.kc.execute(code, silent=True, store_history=False, allow_stdin=False)
        cell_limit, self.timeout = self.timeout, max(self.timeout or 0, 300)  # imports: not a student's cell
        try:
            reply = self.wait_for_reply(msg_id)
        finally:
            self.timeout = cell_limit
        if reply is None or reply["content"]["status"] != "ok":
            content = reply["content"] if reply else {}
            self.log.error("Could not install the grading guard: %s: %s", content.get("ename"), content.get("evalue"))
            note(Status.OK, "the grading guard could not be installed: tests ran unguarded (see the log)")

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        if self._guard_code is not None:
            code, self._guard_code = self._guard_code, None
            self._run_silently(code)
        if cell.cell_type != "code" or not cell.source.strip():
            return cell, resources
        if self._stopped:
            cell.outputs = [_error("CellNotRun", self._stopped)]
            return cell, resources
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            what = (
                "the kernel died while running this cell (os._exit, exit(), a crash or running out of memory)"
            )
            ename, status = "DeadKernelError", Status.KERNEL_DIED
        except CellTimeoutError:
            what = "the kernel stopped responding after this cell timed out, even to an interrupt"
            ename, status = "UnresponsiveKernelError", Status.KERNEL_UNRESPONSIVE
        name = cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell {index}"
        said = (f"the kernel died in {name}" if status == Status.KERNEL_DIED
                else f"the kernel stopped responding after {name} timed out")
        note(status, f"{self._notebook}: {said}; later cells were not run")
        self.log.error("Cell %d: %s; the later cells are not run", index, what)
        self._stopped = f"not run: {what.replace('this cell', f'cell {index}')}"
        cell.outputs = list(cell.get("outputs", [])) + [_error(ename, what + "; the cells after it were not run")]
        return cell, resources


class AllOrNothingTests(NbGraderPreprocessor):
    """A test cell passes when it runs without an error: no partial credit from its output.

    nbgrader scores a test cell by the first number it displays as an ``execute_result``,
    even if an assertion fails after it, so student code could call
    ``sys.displayhook(2.0)`` to grant itself the points. The course's tests never use
    partial credit: such outputs are turned into plain displays (still visible).
    """

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        if _is_test_cell(cell):
            for output in cell.get("outputs", []):
                if output.output_type == "execute_result":
                    output.output_type = "display_data"
                    output.pop("execution_count", None)
        return cell, resources


SECRET_REGIONS = (("BEGIN HIDDEN TESTS", "END HIDDEN TESTS"), ("BEGIN SOLUTION", "END SOLUTION"),
                  ("BEGIN MARK SCHEME", "END MARK SCHEME"))
MIN_SECRET_LENGTH = 12  # shorter lines (``return x``, ``)``) are too common to mean anything


def secret_lines(sources: list[str]) -> set[str]:
    """Stripped lines of hidden tests, reference solutions and mark schemes in ``sources`` (cell texts).

    Lines that also appear outside those regions (what students see anyway) and lines
    shorter than :data:`MIN_SECRET_LENGTH` are left out.
    """
    secret, public = set(), set()
    for text in sources:
        inside = None
        for line in text.split("\n"):
            stripped = line.strip()
            begin = [end for start, end in SECRET_REGIONS if start in line]
            if begin:
                inside = begin[0]
            elif inside and inside in line:
                inside = None
            elif stripped:
                (secret if inside else public).add(stripped)
    return {line for line in secret - public if len(line) >= MIN_SECRET_LENGTH}


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


class HideHiddenTests(ClearHiddenTests):
    """Feedback shows which tests passed, their points and the failure message, never hidden test code.

    In every test cell: the ``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS`` region
    is replaced by one comment line; an error output keeps only ``ename: evalue`` (an
    IPython traceback quotes the failing lines, which may be hidden tests); other
    outputs (what the student's function printed while hidden tests called it, which
    may show their inputs) are dropped.

    In every cell, test or not: any output line that quotes a line of a hidden test, a
    reference solution or a mark scheme of the source notebook (:func:`secret_lines`) is
    removed, so ``print(In)``, printing a course file or an exception message quoting a
    test's frame puts none of it into the feedback.
    """

    placeholder = Unicode(
        "# ... hidden tests ran here (their code is not shown; see the message below if one failed)",
        help="The line that replaces a hidden-test region in feedback.",
    ).tag(config=True)

    _secrets: frozenset[str] = frozenset()  # until preprocess() reads the source notebook

    def preprocess(self, nb: NotebookNode, resources: dict):
        self._secrets = self._load_secrets(resources)
        return super().preprocess(nb, resources)

    def _load_secrets(self, resources: dict) -> set[str]:
        texts = []
        meta = resources.get("nbgrader") or {}
        if "db_url" in meta:
            texts += [cell["source"] for cell in _SourceNotebook(resources).cells]
        try:
            from nbgrader.coursedir import CourseDirectory

            coursedir = CourseDirectory(config=self.config)
            folder = Path(coursedir.format_path(coursedir.source_directory, ".", meta["assignment"]))
            texts += [cell.source for cell in nbformat_read(str(folder / f"{meta['notebook']}.ipynb"), as_version=4).cells]
        except Exception as error:  # no source notebook here: the gradebook's hidden tests still count
            self.log.warning("Feedback: source notebook not read (%s); scrubbing hidden tests only", error)
        return secret_lines(texts)

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
            for key, value in (output.get("data") or {}).items():
                if isinstance(value, str) and (key.startswith("text/") or key.endswith("json")):
                    output.data[key], n = scrub(value, self._secrets)
                    removed += n
        if removed:
            cell.outputs.append(NotebookNode(output_type="stream", name="stdout", text=(
                f"[{removed} output line(s) removed from this feedback: they quote the course's hidden tests "
                "or solutions]\n")))

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        if not _is_test_cell(cell):
            if cell.cell_type == "code":
                self._scrub_outputs(cell)
            return cell, resources
        lines, kept, inside = cell.source.split("\n"), [], False
        for line in lines:
            if self.begin_test_delimeter in line:
                inside = True
                kept.append(line[: len(line) - len(line.lstrip())] + self.placeholder)
            elif self.end_test_delimeter in line:
                inside = False
            elif not inside:
                kept.append(line)
        cell.source = "\n".join(kept)
        cell.outputs = [
            _error(output.get("ename", "Error"), str(output.get("evalue", "")))
            for output in cell.get("outputs", [])
            if output.output_type == "error"
        ]
        self._scrub_outputs(cell)
        return cell, resources


__all__ = ["SanitizeMetadata", "RestoreCells", "GuardedExecute", "AllOrNothingTests", "HideHiddenTests"]
