"""What every grading engine is: packed tasks in, ``(task, result)`` pairs out, as they finish.

An engine runs the grading of :class:`~dpgrader.grading.task.PackedTask` values somewhere (worker
processes here, :class:`~dpgrader.grading.pool.PoolEngine`; a Dask cluster,
:class:`~dpgrader.grading.cluster.DaskEngine`) and answers with
:class:`~dpgrader.grading.task.GradingResult` values. :meth:`Engine.grade` is written once, here:
it keeps every running task's deadline, accepts an answer only with the token of a task it sent
(and only once), and gives a task past its deadline a ``killed`` result after :meth:`Engine.stop`
stopped it. An engine only says how to start a task, what finished, and how to stop one: adding
an engine is one class with :meth:`~Engine.free`, :meth:`~Engine.submit`, :meth:`~Engine.finished`
and :meth:`~Engine.stop` (the tests grade with a serial in-process one as well).

What a task runs is named by ``grader``, ``"module:function"`` (default :data:`GRADER`): a function
``(PackedTask, AssignmentBundle, scratch: Path) -> GradingResult`` that never raises.
"""

from __future__ import annotations

import importlib
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from dpgrader.grading.task import AssignmentBundle, GradingResult, PackedTask
from dpgrader.outcomes import Status

GRADER = "dpgrader.grading.worker:grade"  # what grades one task, on any engine


def grader_function(name: str = GRADER):
    """The function ``"module:function"`` names (imported now)."""
    module, _, function = name.partition(":")
    if not module or not function:
        raise ValueError(f"grader must be 'module:function', got {name!r}")
    return getattr(importlib.import_module(module), function)


def killed(task: PackedTask) -> GradingResult:
    """The result of a task stopped past its time limit (on any engine)."""
    return GradingResult.failed(task, Status.KILLED, f"grading took longer than {task.timeout:.0f} s and was stopped",
                                task.timeout)


def accepted(task: PackedTask, answer: GradingResult) -> GradingResult:
    """``answer`` if it carries ``task``'s token; else an ``error`` result (a worker answered for another task)."""
    if answer.token != task.token:
        return GradingResult.failed(task, Status.ERROR, "a worker answered with another task's token: not graded")
    return answer


class Engine(ABC):
    """Grades packed tasks; :meth:`grade` yields ``(task, result)`` once per task, as they finish.

    Used as a context manager: entering starts the engine's workers (they may go on starting while
    the caller prepares the bundles), leaving stops them. :meth:`grade` may be called several times
    (the pre-flight, then the class) on the same workers.
    """

    description = "an engine"  # for the progress bar: "grading on <description>"

    def __enter__(self) -> Engine:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        """Start the workers (may return before they are ready)."""

    def close(self) -> None:
        """Stop the workers."""

    def keep_logs(self, folder: Path) -> None:
        """Copy the workers' own logs into ``folder`` (an engine whose workers log elsewhere keeps none)."""

    # --- what an engine says -------------------------------------------------------------------------

    @abstractmethod
    def free(self) -> int:
        """How many more tasks could start now."""

    @abstractmethod
    def submit(self, task: PackedTask, bundle: AssignmentBundle) -> None:
        """Start grading ``task`` (its assignment's ``bundle`` with it)."""

    @abstractmethod
    def finished(self, timeout: float) -> list[tuple[str, GradingResult]]:
        """``(token, result)`` of the tasks that finished (waiting at most ``timeout`` seconds for one).

        A task whose worker crashed finishes with a failed result (:meth:`GradingResult.failed`).
        """

    @abstractmethod
    def stop(self, token: str) -> None:
        """Stop the task of ``token`` (past its deadline) and whatever it started."""

    # --- written once -----------------------------------------------------------------------------------

    def grade(self, tasks: Iterable[PackedTask],
              bundles: Mapping[str, AssignmentBundle]) -> Iterator[tuple[PackedTask, GradingResult]]:
        """Grade ``tasks`` (taken as workers free up); yield ``(task, result)`` for each, as they finish.

        An answer counts only with the token of a running task, and once; a task past its
        :attr:`~dpgrader.grading.task.PackedTask.timeout` (from when it started) is stopped and
        gets a ``killed`` result.
        """
        waiting = iter(tasks)
        more = True
        running: dict[str, tuple[PackedTask, float]] = {}  # token -> (task, deadline)
        while True:
            while more and self.free() > 0:
                task = next(waiting, None)
                if task is None:
                    more = False
                    break
                self.submit(task, bundles[task.assignment])
                running[task.token] = (task, time.monotonic() + task.timeout)
            if not running and not more:
                return
            nearest = min((deadline for _, deadline in running.values()), default=time.monotonic() + 5)
            for token, answer in self.finished(max(0.05, nearest - time.monotonic())):
                task, _ = running.pop(token, (None, 0.0))
                if task is not None:  # a token of no running task (a replay, a stale answer) is no answer
                    yield task, accepted(task, answer)
            now = time.monotonic()
            for token, (task, deadline) in list(running.items()):
                if now > deadline:
                    del running[token]
                    self.stop(token)
                    yield task, killed(task)
