"""The guarded execute plug-in, and the all-or-nothing scoring of test cells.

:class:`GuardedExecute` replaces nbgrader's ``Execute`` (the kernel guarded, a dead kernel
survived); :class:`AllOrNothingTests` runs before ``SaveAutoGrades``.
"""

from __future__ import annotations

import time
from queue import Empty

from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import writes as nbformat_writes
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Bool, Dict, Enum, List, Unicode

from dpgrader import guard
from dpgrader.limits import GradingLimits
from dpgrader.outcomes import Status, note
from dpgrader.sandbox.stderr import last_error_line
from dpgrader.cells import cell_name, grade_id_of, is_test_cell
from dpgrader.preprocessors.cpu_charge import charged_seconds
from dpgrader.preprocessors.source_notebook import SourceNotebook, bound_names, error_output, import_lines


SHORTEST_WAIT = 0.1  # seconds: the shortest wait for a running cell's reply before its charge is read again
class GuardedExecute(Execute):
    """nbgrader's ``Execute``, with the kernel guarded and a dead kernel survived.

    - Before the first cell, :mod:`dpgrader.guard` is installed in the kernel
      (silently), so every cell starts from untouched builtins, numpy, pandas, dplib, ...
      and the names the read-only cells import.
    - If the guard cannot be installed (the kernel cannot import what the course needs), the
      notebook fails closed: its outcome is ``error`` (grades unknown, never 0 with ``ok``), no
      cell runs, and the log keeps the traceback.
    - If the kernel dies (``os._exit``, ``exit()``, a crash, memory) or stops answering
      after a timeout, the cells that already ran keep their results; the failing cell
      and every later code cell get an error output saying why, so their tests score 0
      and the notebook is still graded.
    - The notebook's cells share a time budget (``GradingLimits.notebook_seconds``, set per assignment by
      the class grader from the reference's run time): a cell's limit is the smaller of
      ``GradingLimits.cell_seconds`` and what is left; past it the later cells are not run (status
      ``time_budget``). Every limit is read from ``c.GradingLimits`` (:mod:`dpgrader.limits`).
    - Both limits count the time the kernel got, not the time others took from it. Nothing polls a running
      cell: the grader waits for its reply, and reads what the kernel was charged only when the limit could
      first be crossed (a charge never exceeds wall-clock time, so not before ``limit - charged`` more
      seconds), then again at the next such moment. An interval in which the kernel's cgroup got less than
      its CPU share is
      charged its wall-clock time less the seconds the kernel's threads waited, ready to run, for a
      CPU (``run_delay``; the kernel manager's ``waited_seconds``), down to a quarter of it, to the
      CPU it used over its cap, and less nothing in the periods its own cap throttled it (the kernel
      manager's ``cpu_periods``); an interval in which it got its share is charged in full
      (:func:`~dpgrader.preprocessors.cpu_charge.charged_seconds`). So a classmate's load cannot time out an honest notebook, a notebook cannot
      buy time by keeping itself busy or by waiting on its own threads (a cell limit of ``t`` s never
      buys more than ``t`` times ``cpu_cores`` CPU seconds), and no limit stretches past
      :data:`~dpgrader.preprocessors.cpu_charge.MAX_STRETCH` times its wall-clock length (the class
      grader's per-submission limit still
      holds). Where the wait cannot be read, the limits are plain wall-clock.
    - A kernel that dies before it answers (an import failing at start-up) makes the notebook an
      ``error`` whose message carries the kernel's own last error line (from its stderr pipe).
    - After every cell, a kernel that filled its work folder (the sandbox's size-limited tmpfs:
      bytes or files) stops the notebook (status ``disk_limit``).
    """

    guard = Bool(True, help="Install dpgrader.guard in the kernel before the first cell.").tag(config=True)
    shutdown_kernel = Enum(
        ["graceful", "immediate"], default_value="immediate",
        help="After the last cell the kernel is killed (its namespaces, and whatever it started, end with it): "
             "nothing of a graded notebook remains to save, and no student code (an atexit hook) runs after its "
             "cells. A graceful shutdown cost each notebook about 0.1 s of waiting for the kernel to tear down.",
    ).tag(config=True)
    preload = List(Unicode(), help="Modules the guard also imports and snapshots before any student code runs "
                                   "(besides numpy, pandas, scipy.stats, dplib, ...).").tag(config=True)

    error_on_timeout = Dict(
        default_value={
            "ename": "CellTimeoutError",
            "evalue": "the cell ran past the autograder's time limit (an infinite loop?) and was interrupted",
            "traceback": ["CellTimeoutError: the cell ran past the autograder's time limit and was interrupted"],
        },
        help=Execute.error_on_timeout.help,
    ).tag(config=True)

    @property
    def limits(self) -> GradingLimits:
        """The limits of this run (``c.GradingLimits``), read once per notebook."""
        if self._limits is None:
            self._limits = GradingLimits.from_config(self.config)
        return self._limits

    _limits: GradingLimits | None = None

    async def async_start_new_kernel_client(self):
        """Start the client; a kernel that dies before it answers is an error that says why, in its words."""
        km = self.km  # nbclient drops it when the kernel fails to start
        try:
            return await super().async_start_new_kernel_client()
        except RuntimeError as error:
            last = getattr(km, "last_error", None)
            said = last_error_line(last()) if last is not None else ""
            note(Status.ERROR, f"{self._notebook}: {error}" + (f"; the kernel's last error: {said}" if said else ""))
            raise

    start_new_kernel_client = run_sync(async_start_new_kernel_client)  # as nbclient's: the sync name it calls

    def preprocess(self, nb: NotebookNode, resources: dict | None = None, km=None):
        self._limits = None
        self.timeout = self.limits.cell_seconds
        self._guard_code = self._guard_setup(resources) if self.guard else None
        self._stopped = None
        self._output_bytes, self._cell_bytes, self._truncated = 0, {}, set()
        self._notebook = ((resources or {}).get("nbgrader") or {}).get("notebook", "notebook")
        self._budget_used = None  # seconds charged since the first cell ran (kernel up, guard installed)
        self._cell_limit = None  # the running cell's limit, and (below) what was charged of it
        self._reading = None
        size = len(nbformat_writes(nb))
        cells, most_bytes = self.limits.cells, self.limits.notebook_bytes
        if len(nb.cells) > cells or size > most_bytes:
            what = (f"{len(nb.cells)} cells (at most {cells})" if len(nb.cells) > cells
                    else f"{size} bytes (at most {most_bytes})")
            note(Status.TOO_LARGE, f"{self._notebook}: the notebook has {what}: refused, nothing was run")
            for cell in nb.cells:
                if cell.cell_type == "code":
                    cell.outputs = [error_output("NotebookTooLarge", f"not run: the notebook has {what}")]
            return nb, resources
        return super().preprocess(nb, resources, km)

    def output(self, outs, msg, display_id, cell_index):
        """Keep a cell's outputs up to the per-cell and per-notebook byte limits; drop the rest."""
        size = len(str(msg.get("content", "")))
        used = self._cell_bytes.get(cell_index, 0)
        per_cell, per_notebook = self.limits.output_bytes_per_cell, self.limits.output_bytes
        if used + size > per_cell or self._output_bytes + size > per_notebook:
            if cell_index not in self._truncated:
                self._truncated.add(cell_index)
                note(Status.OUTPUT_LIMIT,
                     f"{self._notebook}: cell {cell_index} printed more than the output limit: the rest was dropped")
                outs.append(NotebookNode(output_type="stream", name="stdout", text=(
                    f"\n[output truncated: more than {per_cell} bytes in this cell "
                    f"or {per_notebook} in the notebook]\n")))
            return None
        self._cell_bytes[cell_index] = used + size
        self._output_bytes += size
        return super().output(outs, msg, display_id, cell_index)

    _by_budget = False  # the running cell's time limit is what is left of the notebook's budget
    _cell_limit = None
    _cell_msg_id = None

    def _reading_now(self) -> tuple[float, float, float | None, tuple[int, int] | None]:
        """(wall-clock, seconds the kernel waited for a CPU so far (0 where unknown), its cgroup's CPU seconds or
        None, its cgroup's CFS periods and throttled periods or None)."""
        waited = getattr(self.km, "waited_seconds", None)
        cpu = getattr(self.km, "cpu_seconds", None)
        periods = getattr(self.km, "cpu_periods", None)
        return (time.monotonic(), (waited() if waited is not None else None) or 0.0, cpu() if cpu is not None else None,
                periods() if periods is not None else None)

    def _tick(self) -> float:
        """Charge the interval since the last tick to the budget and the running cell; return its charge."""
        now, self._reading = self._reading, self._reading_now()
        if now is None:
            return 0.0
        (wall0, waited0, cpu0, periods0), (wall1, waited1, cpu1, periods1) = now, self._reading
        cpu = cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else None
        cores = self.km.limits.cpu_cores if isinstance(getattr(self.km, "limits", None), GradingLimits) else None
        throttled = 0.0
        if periods0 is not None and periods1 is not None and periods1[0] > periods0[0]:
            throttled = (periods1[1] - periods0[1]) / (periods1[0] - periods0[0])
        charge = charged_seconds(wall1 - wall0, waited1 - waited0, cpu, cores, throttled)
        self._budget_used += charge
        self._cell_used += charge
        return charge

    def _budget_left(self) -> float:
        return self.limits.notebook_seconds - self._budget_used

    async def _async_poll_for_reply(self, msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive):
        self._cell_msg_id = msg_id  # the reply _reply_within_limit waits for
        return await super()._async_poll_for_reply(msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive)

    async def _reply_within_limit(self):
        """The running cell's reply, if it comes before the cell is charged its limit; None at the limit.

        Woken by the reply, or when the limit could next be crossed: ``limit - charged`` seconds on (a
        charge never exceeds wall-clock time), at least :data:`SHORTEST_WAIT`.
        """
        while True:
            self._tick()
            headroom = self._cell_limit - self._cell_used
            if headroom <= 0:
                return None
            await self._async_check_alive()
            try:
                reply = await ensure_async(self.kc.shell_channel.get_msg(timeout=max(headroom, SHORTEST_WAIT)))
            except Empty:
                continue
            if reply["parent_header"].get("msg_id") == self._cell_msg_id:
                return reply  # nbclient takes what this returns as the cell's reply

    async def _async_handle_timeout(self, timeout, cell=None):
        if self._cell_limit is not None:  # nbclient waited until the cell's limit could first be crossed
            reply = await self._reply_within_limit()
            if reply is not None:
                return reply
            timeout = self._cell_limit
        name = (grade_id_of(cell) if cell is not None else None) or "a cell"
        if not self._by_budget:  # else the budget's own note follows
            note(Status.TIMED_OUT, f"{self._notebook}: {name} timed out after {timeout} s and was interrupted")
        return await super()._async_handle_timeout(timeout, cell)

    def _guard_setup(self, resources: dict | None) -> str | None:
        if not resources or "nbgrader" not in resources:
            return guard.setup_code([], preload=self.preload)
        source = SourceNotebook(resources)
        imports, keep_out = [], set()
        for cell in source.cells:
            if cell["cell_type"] != "code":
                continue
            if source.is_read_only(cell["name"]):
                imports += import_lines(cell["source"])
            elif cell["name"] in source.solutions:
                keep_out |= bound_names(cell["source"])
        return guard.setup_code(imports, sorted(keep_out), self.preload)

    def _run_silently(self, code: str) -> None:
        msg_id = self.kc.execute(code, silent=True, store_history=False, allow_stdin=False)
        cell_limit, self.timeout = self.timeout, max(self.timeout or 0, 300)  # imports: not a student's cell
        try:
            reply = self.wait_for_reply(msg_id)
        finally:
            self.timeout = cell_limit
        if reply is None or reply["content"]["status"] != "ok":
            # Fail closed: unguarded tests can be fooled, and a guard that cannot import the course's
            # packages means no test can run either. Nothing of this notebook is graded.
            content = reply["content"] if reply else {}
            error = f"{content.get('ename', 'no reply')}: {content.get('evalue', '')}".strip()
            self.log.error("Could not install the grading guard: %s\n%s", error,
                           "\n".join(content.get("traceback") or []))
            note(Status.ERROR, f"{self._notebook}: the grading guard could not be installed ({error[:300]}): "
                               "not graded, see the log")
            self._stopped = f"not run: the grading guard could not be installed ({error[:300]})"

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        if self._guard_code is not None:
            code, self._guard_code = self._guard_code, None
            self._run_silently(code)
        if cell.cell_type != "code" or not cell.source.strip():
            return cell, resources
        if self._stopped:
            cell.outputs = [error_output("CellNotRun", self._stopped)]
            return cell, resources
        if self._budget_used is None:  # the clock starts with the first cell (kernel up, guard installed)
            self._budget_used, self._cell_used = 0.0, 0.0
        self._tick()
        remaining = self._budget_left()
        if remaining <= 0:
            self._stop_for_budget(cell, index)
            return cell, resources
        cell_limit = self.timeout
        self._by_budget = not cell_limit or remaining < cell_limit
        self._cell_limit = max(1, int(remaining)) if self._by_budget else cell_limit
        self._cell_used = 0.0
        self.timeout = self._cell_limit  # nbclient waits for the reply this long, then asks _async_handle_timeout
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self._stop_for_dead_kernel(cell, index, Status.KERNEL_DIED)
            return cell, resources
        except CellTimeoutError:
            self._stop_for_dead_kernel(cell, index, Status.KERNEL_UNRESPONSIVE)
            return cell, resources
        finally:
            self.timeout, by_budget, self._by_budget, self._cell_limit = cell_limit, self._by_budget, False, None
            self._tick()
        if by_budget and self._budget_left() <= 0:
            self._stop_for_budget(cell, index)
        self._check_work_folder(cell, index)
        return cell, resources

    def _stop_for_dead_kernel(self, cell: NotebookNode, index: int, status: Status) -> None:
        """The kernel died or stopped answering: this cell keeps an error saying why, the later ones are not run."""
        if status == Status.KERNEL_DIED:
            what = "the kernel died while running this cell (os._exit, exit(), a crash or running out of memory)"
            ename = "DeadKernelError"
        else:
            what = "the kernel stopped responding after this cell timed out, even to an interrupt"
            ename = "UnresponsiveKernelError"
        name = cell_name(cell, index)
        said = (f"the kernel died in {name}" if status == Status.KERNEL_DIED
                else f"the kernel stopped responding after {name} timed out")
        note(status, f"{self._notebook}: {said}; later cells were not run")
        self.log.error("Cell %d: %s; the later cells are not run", index, what)
        self._stopped = f"not run: {what.replace('this cell', f'cell {index}')}"
        cell.outputs = list(cell.get("outputs", [])) + [error_output(ename, what + "; the cells after it were not run")]

    def _stop_for_budget(self, cell: NotebookNode, index: int) -> None:
        """The notebook used up ``limits.notebook_seconds``: this cell (if it was cut short) and every later one score 0."""
        name = cell_name(cell, index)
        what = f"the notebook used up its time budget of {self.limits.notebook_seconds:.0f} s"
        note(Status.TIME_BUDGET, f"{self._notebook}: {what} at {name}; later cells were not run")
        self._stopped = f"not run: {what}"
        cell.outputs = list(cell.get("outputs", [])) + [error_output("TimeBudgetExceeded", what)]

    def _check_work_folder(self, cell: NotebookNode, index: int) -> None:
        """Stop the notebook if the kernel filled its work folder (the kernel manager's ``work_folder_breach``)."""
        breach = getattr(self.km, "work_folder_breach", None)
        problem = breach() if breach is not None else None
        if problem:
            name = cell_name(cell, index)
            note(Status.DISK_LIMIT, f"{self._notebook}: {problem} in {name}; later cells were not run")
            self._stopped = f"not run: {problem}"


class AllOrNothingTests(NbGraderPreprocessor):
    """A test cell passes when it runs without an error: no partial credit from its output.

    nbgrader scores a test cell by the first number it displays as an ``execute_result``,
    even if an assertion fails after it, so student code could call
    ``sys.displayhook(2.0)`` to grant itself the points. The course's tests never use
    partial credit: such outputs are turned into plain displays (still visible).
    """

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        if is_test_cell(cell):
            for output in cell.get("outputs", []):
                if output.output_type == "execute_result":
                    output.output_type = "display_data"
                    output.pop("execution_count", None)
        return cell, resources

