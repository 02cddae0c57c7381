"""A grading worker: autogrades one submission at a time, each in its own throwaway course folder.

:func:`grade` is what every engine runs: the local pool's worker processes
(``python -m dpgrader.grading.worker``, one JSON message per line on stdin, one result per line
on stdout) and a Dask worker (:mod:`dpgrader.grading.cluster`). nbgrader is imported once per
worker (it takes seconds), not once per submission.

A task's scratch folder, made here under the worker's own base folder, holds the bundle of its
assignment (``nbgrader_config.py``, ``source/<assignment>``, a gradebook that knows the
assignment and no student) and this one submission's files. So a submission can only damage its
own copy (``rm -rf ../..`` from a notebook hits the scratch folder), each SQLite gradebook has
one writer, and the results (scores, graded notebooks and feedback as bytes) go back as data for
the class grader to merge into the real gradebook.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from dpgrader import sandbox
from dpgrader.course import Course, notebooks_of
from dpgrader.intake import GRADED_FILES, UnreadableNotebook, read_notebook
from dpgrader.grading.task import (
    AssignmentBundle, CellScore, GradingResult, NotebookResult, PackedTask, read_files, write_files,
)
from dpgrader.outcomes import Status, TaskNotes

LOG_CHARACTERS = 20_000  # the end of nbgrader's log a result carries
READY = '{"ready": true}'  # the worker's first line: nbgrader is imported, send tasks


def _read_problem(path: Path) -> str | None:
    """Why ``path`` is not a notebook nbgrader can grade, or None if it is."""
    try:
        read_notebook(path)  # as the review, copy detection and nbgrader read it
    except UnreadableNotebook as error:
        return str(error)
    except OSError as error:
        return f"{type(error).__name__}: {str(error)[:160]}"
    return None


def prepare(task: PackedTask, bundle: AssignmentBundle, scratch: Course) -> list[tuple[Status, str]]:
    """Build the scratch course of a task; return ``(status, message)`` of each notebook left out (it scores 0).

    A notebook larger than ``limits.notebook_bytes`` is refused unread (``too_large``); one nbformat
    cannot read is left out (``unreadable``), so the rest of the submission is still graded.
    """
    if bundle.assignment != task.assignment:
        raise ValueError(f"the bundle of {bundle.assignment} was sent with a task of {task.assignment}")
    write_files(bundle.files, scratch.root)
    target = scratch.submitted(task.student, task.assignment)
    target.mkdir(parents=True, exist_ok=True)
    problems = []
    for name, content in sorted(task.files.items()):
        if name.endswith(".ipynb") and len(content) > task.limits.notebook_bytes:
            problems.append((Status.TOO_LARGE, f"{name} is larger than {task.limits.notebook_bytes} bytes: "
                                               "refused, it scores 0"))
            continue
        (target / Path(name).name).write_bytes(content)
    for notebook in notebooks_of(target):
        problem = _read_problem(notebook)
        if problem:
            notebook.unlink()  # graded as missing (0 points) instead of failing the whole assignment
            problems.append((Status.UNREADABLE, f"{notebook.name} is not a readable notebook ({problem}); it scores 0"))
    return problems


def _load(task: PackedTask, scratch: Course):
    """nbgrader's configuration of the scratch course, with the task's limits (``c.GradingLimits``)."""
    from nbgrader.coursedir import CourseDirectory

    config = scratch.config()
    task.limits.to_config(config)
    return config, CourseDirectory(config=config)


def _last_error_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    for line in reversed(lines):
        if ("Error" in line or "Exception" in line) and not line.startswith("[") and not line.startswith("File "):
            return line[:300]
    return lines[-1][:300] if lines else "unknown error"


def _recorded(task: PackedTask, scratch: Course) -> tuple[dict[str, NotebookResult], str | None]:
    """What nbgrader wrote in the scratch gradebook: each notebook's scores and comments, and the hand-in time."""
    from nbgrader.api import Gradebook

    notebooks = {}
    with Gradebook(scratch.gradebook_url) as gradebook:
        submission = gradebook.find_submission(task.assignment, task.student)
        timestamp = submission.timestamp.isoformat() if submission.timestamp else None
        for notebook in submission.notebooks:
            notebooks[notebook.name] = NotebookResult(
                {g.name: CellScore(g.auto_score, bool(g.needs_manual_grade)) for g in notebook.grades},
                {c.name: c.auto_comment for c in notebook.comments},
                notebook.late_submission_penalty,
            )
    return notebooks, timestamp


def worker_name() -> str:
    """This worker, for the log of who graded what: the host and the process."""
    return f"{platform.node()}:{os.getpid()}"


def grade(task: PackedTask, bundle: AssignmentBundle, scratch_base: Path | None = None) -> GradingResult:
    """Autograde the task's submission (and generate its feedback) in a scratch course of its own; never raises.

    The scratch course is made under ``scratch_base`` (a private folder of the worker's) and removed after.
    """
    started = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="task-", dir=scratch_base))  # 0700, unguessable
    try:
        return _grade(task, bundle, Course(folder / "course"), started)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _grade(task: PackedTask, bundle: AssignmentBundle, scratch: Course, started: float) -> GradingResult:
    notes = TaskNotes()  # this task's: what the sandbox and the preprocessors note while it is graded
    with notes.collecting():
        return _graded(task, bundle, scratch, started, notes)


def _graded(task: PackedTask, bundle: AssignmentBundle, scratch: Course, started: float, notes: TaskNotes) -> GradingResult:
    from nbgrader.converters import Autograde, GenerateFeedback
    from nbgrader.utils import capture_log

    status, messages, log = Status.OK, [], ""
    found: dict = {}
    try:
        _choose_sandbox(task)
        left_out = prepare(task, bundle, scratch)
        messages += [message for _, message in left_out]
        status = Status.worst(*(problem for problem, _ in left_out))
        if not notebooks_of(scratch.submitted(task.student, task.assignment)):
            if not left_out:
                status = Status.MISSING
                messages.append("no notebook was submitted")
            return _result(task, started, notes, status, messages, log)
        config, coursedir = _load(task, scratch)
        coursedir.assignment_id, coursedir.student_id = task.assignment, task.student
        autograde = Autograde(coursedir=coursedir, config=config)
        autograde.force, autograde.create_student = True, True
        outcome = capture_log(autograde)
        log = outcome.get("log", "")[-LOG_CHARACTERS:]
        noted = list(dict.fromkeys(message for _, message in notes.notes))  # e.g. why the kernel died
        if not outcome["success"]:
            error = _last_error_line(outcome.get("error", "") + "\n" + log)
            return _result(task, started, notes, Status.ERROR, [*messages, f"nbgrader could not grade it: {error}", *noted],
                           log)
        status = Status.worst(status, *(noted_status for noted_status, _ in notes.notes))
        messages += noted
        notebooks, timestamp = _recorded(task, scratch)
        found = {"notebooks": notebooks, "timestamp": timestamp,
                 "autograded": read_files(scratch.autograded(task.student, task.assignment),
                                          keep=lambda name: any(Path(name).match(p) for p in GRADED_FILES))}
        if task.feedback:
            feedback = GenerateFeedback(coursedir=coursedir, config=config)
            feedback.force = True
            made = capture_log(feedback)
            if made["success"]:
                found["feedback"] = read_files(scratch.feedback(task.student, task.assignment),
                                               keep=lambda name: name.endswith(".html"))
            else:
                messages.append("feedback could not be generated: " + _last_error_line(made.get("error", "")))
    except Exception:
        status = Status.ERROR
        messages.append("grading failed: " + _last_error_line(traceback.format_exc()))
        log += traceback.format_exc()
    return _result(task, started, notes, status, messages, log, **found)


def _choose_sandbox(task: PackedTask) -> None:
    """Grade as the task says: sandboxed unless the instructor opted out for this run, whatever this worker's
    environment says (a worker's ``DPLIB_NO_SANDBOX`` never unsandboxes a task)."""
    if task.sandboxed:
        os.environ.pop(sandbox.OPT_OUT_VARIABLE, None)
    else:
        os.environ[sandbox.OPT_OUT_VARIABLE] = "1"


def _result(task: PackedTask, started: float, notes: TaskNotes, status: Status, messages: list[str], log: str,
            **found) -> GradingResult:
    """The task's result, with the seconds it took and its kernels' CPU seconds."""
    return GradingResult(task.token, status, tuple(messages), log=log, seconds=time.perf_counter() - started,
                         kernel_cpu=notes.kernel_cpu, worker=worker_name(), **found)


def main() -> None:
    """The local pool's worker: ``{"task": ..., "bundle": ... or null, "digest": ...}`` per line in, a result per line out.

    ``python -m dpgrader.grading.worker <scratch> [module:function]``: the function grades each task
    (default :func:`grade`).

    A bundle is sent once per worker and assignment; later tasks name it by its digest.
    """
    # Only this process writes protocol lines: fd 1 of every child (the kernels, whose C code or
    # os.write(1, ...) may print) goes to stderr instead.
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import nbgrader.converters  # noqa: F401  (the slow import, once)

    from dpgrader.grading.engine import grader_function

    scratch_base = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    grade_one = grader_function(sys.argv[2]) if len(sys.argv) > 2 else grade
    bundles: dict[str, AssignmentBundle] = {}
    protocol.write(READY + "\n")
    for line in sys.stdin:
        if line.strip():
            message = json.loads(line)
            if message.get("bundle") is not None:
                bundles[message["digest"]] = AssignmentBundle.from_bytes(message["bundle"])
            task = PackedTask.from_bytes(message["task"])
            protocol.write(grade_one(task, bundles[message["digest"]], scratch_base).to_bytes().decode() + "\n")


if __name__ == "__main__":
    main()
