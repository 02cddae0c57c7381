"""The third engine: one task at a time, in this process. All it takes is one class (issue 38).

It says what :class:`~dpgrader.grading.engine.Engine` asks: how many tasks could start (one, when
idle), how to start one (keep it), what finished (grade it now, stopped by ``SIGALRM`` at its
deadline), and how to stop one (nothing is left running). Deadlines, tokens and ``killed`` results
are the engine base's, as for the pool and Dask.
"""

from __future__ import annotations

import shutil
import signal
import tempfile
from pathlib import Path

from dpgrader.grading.engine import GRADER, Engine, grader_function
from dpgrader.grading.task import AssignmentBundle, GradingResult, PackedTask
from dpgrader.outcomes import Status


class _PastDeadline(Exception):
    pass


def _alarm(signum, frame):
    raise _PastDeadline


class SerialEngine(Engine):
    """Grades each task in this process, one at a time (the main thread: its deadline is a ``SIGALRM``)."""

    description = "this process"

    def __init__(self, grader: str = GRADER):
        self.grader = grader
        self.task: tuple[PackedTask, AssignmentBundle] | None = None
        self.scratch: Path | None = None

    def start(self) -> None:
        self.scratch = Path(tempfile.mkdtemp(prefix="dpgrader-serial-"))

    def close(self) -> None:
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def free(self) -> int:
        return 0 if self.task else 1

    def submit(self, task: PackedTask, bundle: AssignmentBundle) -> None:
        self.task = (task, bundle)

    def finished(self, timeout: float) -> list[tuple[str, GradingResult]]:
        if self.task is None:
            return []
        (task, bundle), self.task = self.task, None
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, task.timeout)
        try:
            return [(task.token, grader_function(self.grader)(task, bundle, self.scratch))]
        except _PastDeadline:
            return []  # the engine sees it past its deadline: killed
        except Exception as error:  # noqa: BLE001 -- the grader failed: this task is not graded, the others are
            return [(task.token, GradingResult.failed(task, Status.ERROR, f"the grader failed: {error!r}"))]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    def stop(self, token: str) -> None:
        """Nothing is left running: a task past its deadline was interrupted in :meth:`finished`."""
