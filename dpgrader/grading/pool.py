"""The local grading engine: worker processes, one task each at a time, results accepted from the right task only.

Each worker is ``python -m dpgrader.grading.worker`` (see :mod:`dpgrader.grading.worker`), talking
JSON lines over its stdin/stdout pipes. The student's kernel runs sandboxed and cannot see
those pipes; still, a result is accepted only if it carries the random token of the task
that worker was sent, and only once: anything else on the pipe is ignored and logged.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from dpgrader.course import nbgrader_env
from dpgrader.grading.engine import GRADER, Engine
from dpgrader.grading.task import AssignmentBundle, GradingResult, PackedTask
from dpgrader.grading.worker import READY
from dpgrader.outcomes import Status

WORKER_MODULE = "dpgrader.grading.worker"  # what each worker process runs (``python -m``)


class _Worker:
    """One ``python -m dpgrader.grading.worker`` process and the task it is on."""

    def __init__(self, index: int, log_dir: Path, env: dict | None = None, grader: str = GRADER):
        env = {**nbgrader_env(), **(env or {})}
        env.pop("PYTHONWARNINGS", None)  # kernels inherit it: students' warnings must be real
        self.log = open(log_dir / f"worker-{index}.log", "ab")
        scratch = log_dir / f"scratch-{index}"  # its tasks' scratch courses (removed with the run's folder)
        scratch.mkdir(mode=0o700, exist_ok=True)
        self.sent: set[str] = set()  # digests of the bundles this worker has
        self.proc = subprocess.Popen(
            [sys.executable, "-W", "ignore", "-m", WORKER_MODULE, str(scratch), grader],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env, start_new_session=True,
        )
        self.buffer = b""
        self.ready = False
        self.task: PackedTask | None = None

    @property
    def fd(self) -> int:
        return self.proc.stdout.fileno()

    def send(self, task: PackedTask, bundle: AssignmentBundle) -> None:
        """Send ``task``, with its assignment's bundle if this worker lacks it."""
        self.task = task
        digest = bundle.digest
        message = {"task": task.to_bytes().decode(), "digest": digest,
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


class PoolEngine(Engine):
    """The :class:`~dpgrader.grading.engine.Engine` of ``workers`` local worker processes.

    Each is ``python -m dpgrader.grading.worker <scratch> <grader>`` (nbgrader imported once per
    worker, which takes seconds: :meth:`start` spawns them and returns). A worker's answer counts
    only for the task it is on; a worker that dies is replaced and its task gets an ``error``
    result; a worker stopped past its task's deadline is killed with its kernels and replaced.

    Parameters
    ----------
    workers : int
        How many worker processes.
    log_dir : Path, optional
        A private folder: each worker's log (``worker-<i>.log``) and its tasks' scratch courses
        (default: a new one, 0700 and unguessable, removed by :meth:`close`).
    env : dict, optional
        Added to the workers' environment.
    grader : str
        What grades a task, ``"module:function"`` (:data:`~dpgrader.grading.engine.GRADER`).
    """

    def __init__(self, workers: int, log_dir: Path | None = None, env: dict | None = None, grader: str = GRADER):
        self.workers, self.env, self.grader = max(1, workers), env, grader
        self.log_dir, self.own_dir = (Path(log_dir) if log_dir else None), log_dir is None
        self.pool: list[_Worker] = []
        self.selector = selectors.DefaultSelector()
        self.startup_failures = 0
        self.description = f"{self.workers} workers"

    def start(self) -> None:
        if self.log_dir is None:
            self.log_dir = Path(tempfile.mkdtemp(prefix="dplib-grading-"))  # 0700, unguessable
        self.pool = [self._spawn(i) for i in range(self.workers)]

    def keep_logs(self, folder: Path) -> None:
        for log in sorted(self.log_dir.glob("worker-*.log")) if self.log_dir else ():
            shutil.copy2(log, Path(folder) / log.name)

    def _spawn(self, index: int) -> _Worker:
        worker = _Worker(index, self.log_dir, self.env, self.grader)
        self.selector.register(worker.fd, selectors.EVENT_READ, worker)
        return worker

    def _replace(self, worker: _Worker) -> None:
        """Kill ``worker`` and start another in its place."""
        self.selector.unregister(worker.fd)
        worker.kill()
        index = self.pool.index(worker)
        self.pool[index] = self._spawn(index)

    def free(self) -> int:
        return sum(1 for worker in self.pool if worker.ready and worker.task is None)

    def submit(self, task: PackedTask, bundle: AssignmentBundle) -> None:
        next(w for w in self.pool if w.ready and w.task is None).send(task, bundle)

    def finished(self, timeout: float) -> list[tuple[str, GradingResult]]:
        done = []
        for key, _ in self.selector.select(timeout=timeout):
            worker: _Worker = key.data
            messages = worker.messages()
            if messages is None:  # the worker process itself died
                if not worker.ready:
                    self.startup_failures += 1
                    if self.startup_failures > 2 * len(self.pool):
                        raise RuntimeError(f"grading workers die at start-up: see the logs in {self.log_dir}")
                task = worker.task
                self._replace(worker)
                if task is not None:
                    done.append((task.token, GradingResult.failed(task, Status.ERROR, "the grading worker crashed")))
                continue
            for message in messages:
                if message == READY and not worker.ready:
                    worker.ready = True
                elif worker.task is not None and isinstance(message, GradingResult) and message.token == worker.task.token:
                    worker.task = None
                    done.append((message.token, message))
                else:
                    worker.log.write(b"ignored a message for no task of this worker\n")
        return done

    def stop(self, token: str) -> None:
        for worker in list(self.pool):
            if worker.task is not None and worker.task.token == token:
                self._replace(worker)

    def close(self) -> None:
        for worker in self.pool:
            try:
                self.selector.unregister(worker.fd)
            except (KeyError, ValueError):
                pass
            try:
                worker.proc.stdin.close()  # all at once: they exit side by side
            except OSError:
                pass
        for worker in self.pool:
            worker.stop()
        self.selector.close()
        if self.own_dir and self.log_dir is not None:
            _remove_tree(self.log_dir)
            self.log_dir = None


def _remove_tree(path: Path) -> None:
    """Remove ``path`` and everything in it, read-only folders a kernel left included."""
    def make_writable(function, target, _):
        os.chmod(target, 0o700)
        function(target)

    shutil.rmtree(path, onerror=make_writable)
