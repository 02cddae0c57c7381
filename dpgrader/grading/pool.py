"""The grading worker pool: worker processes, one task each at a time, results accepted from the right task only.

Each worker is ``python -m dpgrader.grading.worker`` (see :mod:`dpgrader.grading.worker`), talking
JSON lines over its stdin/stdout pipes. The student's kernel runs sandboxed and cannot see
those pipes; still, a result is accepted only if it carries the random token of the task
that worker was sent, and only once: anything else on the pipe is ignored and logged.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

from dpgrader.course import nbgrader_env
from dpgrader.grading.task import AssignmentBundle, GradingResult, GradingTask
from dpgrader.grading.worker import READY
from dpgrader.outcomes import Status

WORKER_MODULE = "dpgrader.grading.worker"  # what each worker process runs (``python -m``)


class _Worker:
    """One ``python -m dpgrader.grading.worker`` process and the task it is on."""

    def __init__(self, index: int, log_dir: Path, env: dict | None = None):
        env = {**nbgrader_env(), **(env or {})}
        env.pop("PYTHONWARNINGS", None)  # kernels inherit it: students' warnings must be real
        self.log = open(log_dir / f"worker-{index}.log", "ab")
        scratch = log_dir / f"scratch-{index}"  # its tasks' scratch courses (removed with the run's folder)
        scratch.mkdir(mode=0o700, exist_ok=True)
        self.sent: set[str] = set()  # digests of the bundles this worker has
        self.proc = subprocess.Popen(
            [sys.executable, "-W", "ignore", "-m", WORKER_MODULE, str(scratch)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env, start_new_session=True,
        )
        self.buffer = b""
        self.ready = False
        self.task: GradingTask | None = None
        self.deadline = float("inf")

    @property
    def fd(self) -> int:
        return self.proc.stdout.fileno()

    def send(self, task: GradingTask, bundle: AssignmentBundle) -> None:
        """Send ``task`` (its submission's files read now), with its assignment's bundle if this worker lacks it."""
        self.task, self.deadline = task, time.monotonic() + task.timeout
        digest = bundle.digest
        message = {"task": task.packed().to_bytes().decode(), "digest": digest,
                   "bundle": None if digest in self.sent else bundle.to_bytes().decode()}
        self.sent.add(digest)
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def messages(self) -> list[GradingResult | str] | None:
        """What is now readable: results, and :data:`~dpgrader.grading.worker.READY`; None when the worker is gone."""
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            return None
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        messages = []
        for line in filter(bytes.strip, lines):
            if line.strip() == READY.encode():
                messages.append(READY)
                continue
            try:
                messages.append(GradingResult.from_bytes(line))
            except (ValueError, TypeError, KeyError):
                self.log.write(b"ignored a line on the result pipe that is not a result: " + line[:200] + b"\n")
        return messages

    def kill(self) -> None:
        """Kill the worker and everything it started (its kernels run in their own sessions)."""
        import psutil

        try:
            processes = psutil.Process(self.proc.pid).children(recursive=True) + [psutil.Process(self.proc.pid)]
        except psutil.NoSuchProcess:
            processes = []
        for process in processes:
            try:
                process.kill()
            except psutil.NoSuchProcess:
                pass
        self.proc.wait()
        self.close()

    def stop(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except (subprocess.TimeoutExpired, OSError):
            self.kill()
        self.close()

    def close(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout, self.log):
            try:
                stream.close()
            except OSError:
                pass


def run_tasks(tasks: list[GradingTask], workers: int, log_dir: Path, on_result, bundle_of, setup=None,
              env: dict | None = None, first: list[GradingTask] = (), on_first=None) -> None:
    """Run ``tasks`` on ``workers`` worker processes; call ``on_result(task, result)`` for each, in this process.

    ``bundle_of(assignment)`` gives the :class:`~dpgrader.grading.task.AssignmentBundle` a task's worker
    needs (called once ``setup`` ran; each worker gets each bundle once).

    ``first`` tasks (the pre-flight) run before any of ``tasks`` is sent, their results go to
    ``on_first(task, result)``; an exception it raises stops the run before ``tasks`` start.
    ``on_first`` may return new tasks to run in place of ``tasks`` (with the time budget it set).
    A task may run :attr:`~dpgrader.grading.task.GradingTask.timeout` seconds.

    ``setup()``, if given, runs once the workers are starting (they take seconds to import
    nbgrader), before any task is sent. Every task carries a ``token``; a worker's answer
    counts only if it echoes the token of the task it is on, and only once. A worker that exceeds its task's
    timeout, or dies, is killed with its kernels and replaced; its task gets a ``killed`` /
    ``error`` result.
    """
    pending, pending_first = deque(tasks), deque(first)
    first_running: set[str] = set()
    pool: list[_Worker] = []
    selector = selectors.DefaultSelector()
    startup_failures = 0

    def spawn(index: int) -> _Worker:
        worker = _Worker(index, log_dir, env)
        selector.register(worker.fd, selectors.EVENT_READ, worker)
        return worker

    def retire(worker: _Worker, status: Status | None = None, message: str = "", seconds: float = 0.0) -> None:
        """Kill ``worker``, report its task's ``result``, and replace it if work is left."""
        selector.unregister(worker.fd)
        worker.kill()
        task, worker.task, worker.deadline = worker.task, None, float("inf")
        if task is not None and status is not None:
            report(task, GradingResult.failed(task, status, message, seconds))
        if pending or pending_first:
            index = pool.index(worker)
            pool[index] = spawn(index)

    def report(task: GradingTask, result: GradingResult) -> None:
        if task.token in first_running:
            first_running.discard(task.token)
            replaced = on_first(task, result)
            if replaced is not None:
                pending.clear()
                pending.extend(replaced)
        else:
            on_result(task, result)

    def next_task() -> GradingTask | None:
        if pending_first:
            first_running.add(pending_first[0].token)
            return pending_first.popleft()
        return pending.popleft() if pending and not first_running else None

    try:
        pool.extend(spawn(i) for i in range(max(1, min(workers, len(tasks) + len(first)))))
        if setup is not None:
            setup()
        while pending or pending_first or any(w.task is not None for w in pool):
            for worker in pool:
                task = next_task() if worker.ready and worker.task is None else None
                if task is not None:
                    worker.send(task, bundle_of(task.assignment))
            wait = min([w.deadline for w in pool if w.task is not None], default=time.monotonic() + 5)
            for key, _ in selector.select(timeout=max(0.05, wait - time.monotonic())):
                worker: _Worker = key.data
                messages = worker.messages()
                if messages is None:  # the worker process itself died
                    if not worker.ready:
                        startup_failures += 1
                        if startup_failures > 2 * len(pool):
                            raise RuntimeError(f"grading workers die at start-up: see the logs in {log_dir}")
                    retire(worker, Status.ERROR, "the grading worker crashed")
                    continue
                for message in messages:
                    if message == READY and not worker.ready:
                        worker.ready = True
                    elif worker.task is not None and isinstance(message, GradingResult) and message.token == worker.task.token:
                        task, worker.task, worker.deadline = worker.task, None, float("inf")
                        report(task, message)
                    else:
                        worker.log.write(b"ignored a message for no task of this worker\n")
            now = time.monotonic()
            for worker in list(pool):
                if worker.task is not None and now > worker.deadline:
                    limit = worker.task.timeout
                    retire(worker, Status.KILLED, f"grading took longer than {limit:.0f} s and was stopped", limit)
    finally:
        for worker in pool:
            try:
                selector.unregister(worker.fd)
            except (KeyError, ValueError):
                pass
            try:
                worker.proc.stdin.close()  # all at once: they exit side by side
            except OSError:
                pass
        for worker in pool:
            worker.stop()
        selector.close()


