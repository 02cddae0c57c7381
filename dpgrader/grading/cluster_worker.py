"""The worker side of grading on Dask: what each worker process holds, and the function it runs per task.

Registered by the class grader (:class:`dpgrader.grading.cluster.DaskEngine`) on every worker of
the cluster, present and future; a worker needs the course's Python environment and bubblewrap,
nothing of the instructor's files.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from dataclasses import replace
from pathlib import Path

from distributed import WorkerPlugin, get_worker

from dpgrader import sandbox
from dpgrader.grading.engine import GRADER, grader_function
from dpgrader.grading.task import AssignmentBundle, GradingResult, PackedTask
from dpgrader.outcomes import Status

PLUGIN_NAME = "dpgrader-grading"


class GradingPlugin(WorkerPlugin):
    """What one Dask worker process holds for grading: nbgrader imported, the sandbox and its zygote, a scratch folder.

    Registered by the class grader on every worker (present and future); set up once per worker
    process and torn down with it.
    """

    name = PLUGIN_NAME

    def __init__(self):
        self.scratch: Path | None = None
        self.sandbox_problem: str | None = None
        # One task at a time per process: a task's sandbox opt-out is the process's environment (the notes
        # of a task are its own, dpgrader.outcomes.TaskNotes, whatever thread grades it).
        self.lock = threading.Lock()

    def __getstate__(self):
        return {}  # sent to the workers before setup: nothing of the instructor's process travels

    def __setstate__(self, state):
        self.__init__()

    def setup(self, worker) -> None:
        import nbgrader.converters  # noqa: F401  (the slow import, once per worker)

        self.scratch = Path(tempfile.mkdtemp(prefix="dpgrader-worker-"))
        self.sandbox_problem = _sandbox_problem()

    def teardown(self, worker) -> None:
        from dpgrader.sandbox.zygote import Zygote

        Zygote.stop_all()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


def _sandbox_problem() -> str | None:
    """Why no sandboxed kernel can start in this worker process, or None (the zygote is started here, once)."""
    from dpgrader.sandbox.zygote import Zygote

    os.environ.pop(sandbox.OPT_OUT_VARIABLE, None)  # a task says whether it is sandboxed, not the worker
    try:
        sandbox.require_sandbox()
        Zygote.for_python(sys.executable)
    except Exception as error:  # noqa: BLE001 -- every reason becomes the tasks' error message
        return f"{type(error).__name__}: {str(error)[:300]}"
    return None


def grade_on_worker(task_bytes: bytes, bundle_bytes: bytes, grader: str = GRADER) -> bytes:
    """Grade one packed task on this Dask worker with ``grader`` (the function the client submits); a result as bytes."""
    grade = grader_function(grader)  # looked up at each task

    worker = get_worker()
    task = PackedTask.from_bytes(task_bytes)
    plugin = worker.plugins.get(PLUGIN_NAME)
    if plugin is None:
        return GradingResult(task.token, Status.ERROR, (f"worker {worker.address} has no grading plugin",),
                             worker=worker.address).to_bytes()
    if task.sandboxed and plugin.sandbox_problem:
        message = f"not graded: the sandbox cannot start on worker {worker.address} ({plugin.sandbox_problem})"
        return GradingResult(task.token, Status.ERROR, (message,), worker=worker.address).to_bytes()
    with plugin.lock:
        result = grade(task, AssignmentBundle.from_bytes(bundle_bytes), plugin.scratch)
    return replace(result, worker=worker.address).to_bytes()
