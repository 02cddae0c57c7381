"""Where a notebook's grading time goes: each step of grading, in CPU seconds and as a share of the cells' own CPU.

``bench_grading.py --profile`` prints it. The steps are measured by wrapping the grader's own functions in this
process (nothing of the grader changes; the wrappers are removed after), while one submission after another is
graded here exactly as a worker grades it (:func:`dpgrader.grading.worker.grade`, the same sandbox and zygote):

- **grader's process**: CPU of this process (``time.process_time``), each step counted *without* the steps inside
  it (a preprocessor's time does not include the kernel start it waits for);
- **kernel**: CPU of the kernel's cgroup, read before and after the kernel's start, the guard's installation and
  each cell (so a cell's share is the cell's own work plus the guard's restore before it), and the zygote's
  cgroup (its imports once per worker, then one fork per kernel).

**The cells' own CPU** (the denominator) is the same notebook run top to bottom in the same sandbox (bubblewrap,
the kernel's cgroup, single-threaded BLAS as every grading kernel), *started cold*, as a student's kernel starts
(no zygote, no guard, no grader): its cgroup's CPU from before the first cell to after the last, so the
notebook's imports count as a student pays them; kernel start-up is left out. ``check_is_random`` replays a
function in a forked child of the kernel: that child's CPU (the kernel's ``RUSAGE_CHILDREN``, read between cells)
is shown apart, as part of the cells.

The class-wide steps (worker start, pre-flight, merge and review, copy detection, export) are timed in
``bench_grading.py``'s class run.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections import Counter, defaultdict
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

PROBE = ("(lambda r: (lambda c: c.ru_utime + c.ru_stime)(r.getrusage(r.RUSAGE_CHILDREN)))"
         "(__import__('resource'))")  # the kernel's finished children's CPU (check_is_random's replays)


@dataclass
class Ledger:
    """CPU seconds by step: the grader's process (exclusive of nested steps) and the kernel (cgroup)."""

    grader: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    kernel: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    calls: Counter = field(default_factory=Counter)
    _stack: list[float] = field(default_factory=list)

    @contextmanager
    def step(self, name: str):
        """Charge the CPU this process uses inside the block to ``name``, less that of the steps inside it."""
        started = time.process_time()
        self._stack.append(0.0)
        try:
            yield
        finally:
            spent = time.process_time() - started
            nested = self._stack.pop()
            self.grader[name] += spent - nested
            self.calls[name] += 1
            if self._stack:
                self._stack[-1] += spent


def _wrap(stack: ExitStack, owner, name: str, wrapper) -> None:
    """Replace ``owner.name`` by ``wrapper(original)`` until ``stack`` closes."""
    original = owner.__dict__[name] if name in owner.__dict__ else getattr(owner, name)
    setattr(owner, name, wrapper(original))
    stack.callback(setattr, owner, name, original)


def _timed(ledger: Ledger, step, kernel_step=None):
    """A wrapper that charges a (sync or async) method's CPU to ``step`` (a name, or a function of the call's
    arguments); with ``kernel_step``, also the kernel's cgroup CPU over the call (``self.km``)."""

    def wrapper(original):
        def names(args):
            return (step(*args) if callable(step) else step), (kernel_step(*args) if callable(kernel_step) else kernel_step)

        def kernel_cpu(args):
            km = getattr(args[0], "km", None) if args else None
            reading = getattr(km, "cpu_seconds", None)
            return (reading() or 0.0) if reading is not None else 0.0

        if asyncio.iscoroutinefunction(original):
            @functools.wraps(original)
            async def timed_async(*args, **kwargs):
                name, kernel_name = names(args)
                before = kernel_cpu(args) if kernel_name else 0.0
                with ledger.step(name):
                    result = await original(*args, **kwargs)
                if kernel_name:
                    ledger.kernel[kernel_name] += kernel_cpu(args) - before
                return result
            return timed_async

        @functools.wraps(original)
        def timed(*args, **kwargs):
            name, kernel_name = names(args)
            before = kernel_cpu(args) if kernel_name else 0.0
            with ledger.step(name):
                result = original(*args, **kwargs)
            if kernel_name:
                ledger.kernel[kernel_name] += kernel_cpu(args) - before
            return result
        return timed

    return wrapper


@contextmanager
def instrumented(ledger: Ledger):
    """The grader's steps wrapped to charge ``ledger``, for the duration of the block."""
    from nbconvert.preprocessors import Preprocessor
    from nbgrader.converters import Autograde, GenerateFeedback

    from dpgrader.cells import grade_id_of
    from dpgrader.grading import worker
    from dpgrader.preprocessors.execute import GuardedExecute
    from dpgrader.sandbox.zygote import Zygote

    zygote_calls = Counter()

    def zygote_cpu(original):
        @functools.wraps(original)
        def taken(self):
            seconds = original(self)
            first = zygote_calls[id(self)] == 0
            zygote_calls[id(self)] += 1
            ledger.kernel["zygote: start and imports (once per worker)" if first else "zygote: fork of the kernel"] += seconds
            return seconds
        return taken

    def cell_step(self, cell, resources, index):
        return "cells: the grader waits for the kernel (nbclient's messages)"

    def cell_kernel_step(self, cell, resources, index):
        return f"cell {index:>2} {grade_id_of(cell) or cell.cell_type}" if cell.cell_type == "code" else None

    def preprocessor_step(self, *args, **kwargs):
        return f"preprocessor {type(self).__name__}"

    with ExitStack() as stack:
        _wrap(stack, Preprocessor, "__call__", _timed(ledger, preprocessor_step))
        _wrap(stack, Autograde, "start", _timed(ledger, "autograde: nbgrader's own work (files, nbformat, gradebook)"))
        _wrap(stack, Autograde, "init_assignment", _timed(ledger, "autograde: the scratch gradebook's set-up (SQLAlchemy)"))
        _wrap(stack, GenerateFeedback, "start", _timed(ledger, "feedback: nbconvert's HTML export (templates)"))
        _wrap(stack, GuardedExecute, "async_start_new_kernel_client",
              _timed(ledger, "kernel start: the grader's side (cgroup, zygote request, channels)",
                     "kernel start (after the fork, before the first cell)"))
        _wrap(stack, GuardedExecute, "start_new_kernel_client",  # nbclient calls the sync one: run the wrapped async
              lambda original: _run_sync(GuardedExecute.async_start_new_kernel_client))
        _wrap(stack, GuardedExecute, "_run_silently", _timed(ledger, "guard: installation (grader's side)",
                                                             "guard: installation (snapshot of the libraries)"))
        _wrap(stack, GuardedExecute, "preprocess_cell", _timed(ledger, cell_step, cell_kernel_step))
        _wrap(stack, GuardedExecute, "_tick", _timed(ledger, "polling: reads of the kernel's CPU, wait and periods"))
        _wrap(stack, GuardedExecute, "_async_handle_timeout", _timed(ledger, "polling: wake-ups while a cell runs"))
        _wrap(stack, Zygote, "take_cpu_seconds", zygote_cpu)
        _wrap(stack, Zygote, "spawn", _timed(ledger, "zygote: fork request (grader's side)"))
        _wrap(stack, worker, "prepare", _timed(ledger, "worker: the scratch course (bundle, submission files)"))
        _wrap(stack, worker, "_recorded", _timed(ledger, "worker: scores read from the scratch gradebook"))
        yield


def _run_sync(coroutine_function):
    from jupyter_core.utils import run_sync

    return run_sync(coroutine_function)


def cells_cpu(notebook: Path, folder: Path) -> tuple[float, dict[str, float], float]:
    """The cells' own CPU of ``notebook``: run cold in the grading sandbox, no zygote, no guard, in ``folder``.

    Returns the total (kernel cgroup CPU from before the first cell to after the last, imports included),
    the CPU of each code cell by name, and the part spent in forked children (``check_is_random``'s replays).
    """
    import nbformat
    from nbclient import NotebookClient

    from dpgrader.cells import grade_id_of
    from dpgrader.sandbox.manager import SandboxedKernelManager

    nb = nbformat.read(str(notebook), as_version=4)
    per_cell: dict[str, float] = {}
    children = [0.0]

    class Measured(NotebookClient):
        async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
            before = self.km.cpu_seconds() or 0.0
            result = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
            if cell.cell_type == "code":
                per_cell[f"cell {cell_index:>2} {grade_id_of(cell) or 'code'}"] = (self.km.cpu_seconds() or 0.0) - before
                msg_id = self.kc.execute("", silent=True, store_history=False, user_expressions={"children": PROBE})
                reply = await self.async_wait_for_reply(msg_id)
                value = reply["content"].get("user_expressions", {}).get("children", {})
                if value.get("status") == "ok":
                    children[0] = float(value["data"]["text/plain"])
            return result

    km = SandboxedKernelManager(kernel_name="python3", preforked=False)
    client = Measured(nb, km=km, timeout=600, allow_errors=True, resources={"metadata": {"path": str(folder)}})
    try:
        client.execute()
    finally:  # nbclient leaves a kernel manager it was given running
        if km.has_kernel:
            _run_sync(km.shutdown_kernel)(now=True)  # an AsyncKernelManager
    return sum(per_cell.values()), per_cell, children[0]


def table(ledger: Ledger, notebooks: int, cells: float) -> list[str]:
    """The profile as lines: step, CPU s per notebook, share of the cells' own CPU, calls per notebook."""
    rows = [("grader", name, seconds) for name, seconds in ledger.grader.items()]
    rows += [("kernel", name, seconds) for name, seconds in ledger.kernel.items()]
    width = max(len(name) for _, name, _ in rows) + 2
    lines = [f"{'where':<8}{'step':<{width}}{'CPU s/nb':>9}{'of cells':>10}{'calls/nb':>10}"]
    for where, name, seconds in sorted(rows, key=lambda row: (row[0], not row[1].startswith("cell"), row[1])):
        per = seconds / notebooks
        calls = ledger.calls.get(name, 0) / notebooks if where == "grader" else float("nan")
        lines.append(f"{where:<8}{name:<{width}}{per:>9.3f}{per / cells:>9.0%}{calls:>10.1f}")
    total = (sum(ledger.grader.values()) + sum(ledger.kernel.values())) / notebooks
    lines.append(f"{'total':<8}{'':<{width}}{total:>9.3f}{total / cells:>9.0%}")
    return lines
