"""The guarded execute plug-in, and the all-or-nothing scoring of test cells.

:class:`GuardedExecute` replaces nbgrader's ``Execute`` (the kernel guarded, a dead kernel
survived); :class:`AllOrNothingTests` runs before ``SaveAutoGrades``.
"""

from __future__ import annotations

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import writes as nbformat_writes
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Bool, Dict, Int

from dpgrader import guard
from dpgrader.outcomes import Status, note
from dpgrader.preprocessors.cells import (
    _SourceNotebook,
    _bound_names,
    _error,
    _import_lines,
    _is_test_cell,
)


class GuardedExecute(Execute):
    """nbgrader's ``Execute``, with the kernel guarded and a dead kernel survived.

    - Before the first cell, :mod:`dpgrader.guard` is installed in the kernel
      (silently), so every cell starts from untouched builtins, numpy, pandas, dplib, ...
      and the names the read-only cells import.
    - If the kernel dies (``os._exit``, ``exit()``, a crash, memory) or stops answering
      after a timeout, the cells that already ran keep their results; the failing cell
      and every later code cell get an error output saying why, so their tests score 0
      and the notebook is still graded.
    """

    guard = Bool(True, help="Install dpgrader.guard in the kernel before the first cell.").tag(config=True)

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

