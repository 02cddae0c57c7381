"""A grading worker: autogrades one submission at a time, each in its own throwaway course folder.

Started by :mod:`dpgrader.classroom` as ``python -m dpgrader.grading.worker``; reads one
JSON task per line on stdin and answers one JSON result per line. nbgrader is imported
once per worker (it takes seconds), not once per submission.

A task's scratch folder holds the course's ``nbgrader_config.py``, the assignment's
``source/``, a copy of the instructor's gradebook and this one submission. So a
submission can only damage its own copy (``rm -rf ../..`` from a notebook hits the
scratch folder), each SQLite gradebook has one writer, and the results come back as
plain data for the main process to merge into the real gradebook.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
import traceback
from pathlib import Path

from dpgrader.course import Course, notebooks_of
from dpgrader.grading.intake import UnreadableNotebook, copy_for_grading, read_notebook
from dpgrader.grading.task import CellScore, GradingResult, GradingTask, NotebookResult
from dpgrader.outcomes import Status, take_measurements, take_notes

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


def prepare(task: GradingTask) -> list[tuple[Status, str]]:
    """Build the scratch course of a task; return ``(status, message)`` of each notebook left out (it scores 0).

    ``task.scratch`` is a private folder the class grader made (``tempfile.mkdtemp``); the
    kernel sees none of it but its own ``autograded/<student>/<assignment>`` copy. A notebook
    larger than ``limits.notebook_bytes`` is refused unread (``too_large``); one nbformat cannot
    read is left out (``unreadable``), so the rest of the submission is still graded.
    """
    scratch, course = Course(task.scratch), Course(task.course)
    scratch.root.mkdir(parents=True, exist_ok=True)
    shutil.copy2(course.config_file, scratch.config_file)
    shutil.copytree(course.source(task.assignment), scratch.source(task.assignment))
    shutil.copy2(task.template_db, scratch.gradebook)
    target = scratch.submitted(task.student, task.assignment)
    copy_for_grading(task.submission, target)  # regular notebooks only, no link followed
    problems = []
    for notebook in notebooks_of(target):
        if notebook.stat().st_size > task.limits.notebook_bytes:
            notebook.unlink()
            problems.append((Status.TOO_LARGE, f"{notebook.name} is larger than {task.limits.notebook_bytes} bytes: "
                                               "refused, it scores 0"))
            continue
        problem = _read_problem(notebook)
        if problem:
            notebook.unlink()  # graded as missing (0 points) instead of failing the whole assignment
            problems.append((Status.UNREADABLE, f"{notebook.name} is not a readable notebook ({problem}); it scores 0"))
    return problems


def _load(task: GradingTask):
    """nbgrader's configuration of the scratch course, with the task's limits (``c.GradingLimits``)."""
    from nbgrader.coursedir import CourseDirectory

    config = Course(task.scratch).config()
    task.limits.to_config(config)
    return config, CourseDirectory(config=config)


def _last_error_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    for line in reversed(lines):
        if ("Error" in line or "Exception" in line) and not line.startswith("[") and not line.startswith("File "):
            return line[:300]
    return lines[-1][:300] if lines else "unknown error"


def _recorded(task: GradingTask) -> tuple[dict[str, NotebookResult], str | None]:
    """What nbgrader wrote in the scratch gradebook: each notebook's scores and comments, and the hand-in time."""
    from nbgrader.api import Gradebook

    notebooks = {}
    with Gradebook(Course(task.scratch).gradebook_url) as gradebook:
        submission = gradebook.find_submission(task.assignment, task.student)
        timestamp = submission.timestamp.isoformat() if submission.timestamp else None
        for notebook in submission.notebooks:
            notebooks[notebook.name] = NotebookResult(
                {g.name: CellScore(g.auto_score, bool(g.needs_manual_grade)) for g in notebook.grades},
                {c.name: c.auto_comment for c in notebook.comments},
                notebook.late_submission_penalty,
            )
    return notebooks, timestamp


def grade(task: GradingTask) -> GradingResult:
    """Autograde the task's submission (and generate its feedback); never raises."""
    from nbgrader.converters import Autograde, GenerateFeedback
    from nbgrader.utils import capture_log

    started = time.perf_counter()
    take_notes(), take_measurements()  # forget anything left from an earlier task
    scratch = Course(task.scratch)
    status, messages, log = Status.OK, [], ""
    found: dict = {}
    try:
        left_out = prepare(task)
        messages += [message for _, message in left_out]
        status = Status.worst(*(problem for problem, _ in left_out))
        if not notebooks_of(scratch.submitted(task.student, task.assignment)):
            if not left_out:
                status = Status.MISSING
                messages.append("no notebook was submitted")
            return _result(task, started, status, messages, log)
        config, coursedir = _load(task)
        coursedir.assignment_id, coursedir.student_id = task.assignment, task.student
        autograde = Autograde(coursedir=coursedir, config=config)
        autograde.force, autograde.create_student = True, True
        outcome = capture_log(autograde)
        log = outcome.get("log", "")[-LOG_CHARACTERS:]
        notes = take_notes()
        noted = list(dict.fromkeys(message for _, message in notes))  # e.g. why the kernel died
        if not outcome["success"]:
            error = _last_error_line(outcome.get("error", "") + "\n" + log)
            return _result(task, started, Status.ERROR, [*messages, f"nbgrader could not grade it: {error}", *noted], log)
        status = Status.worst(status, *(noted_status for noted_status, _ in notes))
        messages += noted
        notebooks, timestamp = _recorded(task)
        found = {"notebooks": notebooks, "timestamp": timestamp,
                 "autograded": scratch.autograded(task.student, task.assignment)}
        if task.feedback:
            feedback = GenerateFeedback(coursedir=coursedir, config=config)
            feedback.force = True
            made = capture_log(feedback)
            if made["success"]:
                found["feedback"] = scratch.feedback(task.student, task.assignment)
            else:
                messages.append("feedback could not be generated: " + _last_error_line(made.get("error", "")))
    except Exception:
        status = Status.ERROR
        messages.append("grading failed: " + _last_error_line(traceback.format_exc()))
        log += traceback.format_exc()
    return _result(task, started, status, messages, log, **found)


def _result(task: GradingTask, started: float, status: Status, messages: list[str], log: str, **found) -> GradingResult:
    """The task's result, with the seconds it took and its kernels' CPU seconds (forgotten here)."""
    return GradingResult(task.token, status, tuple(messages), log=log, seconds=time.perf_counter() - started,
                         kernel_cpu=take_measurements().get("kernel_cpu"), **found)


def main() -> None:
    # Only this process writes protocol lines: fd 1 of every child (the kernels, whose C code or
    # os.write(1, ...) may print) goes to stderr instead.
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import nbgrader.converters  # noqa: F401  (the slow import, once)

    protocol.write(READY + "\n")
    for line in sys.stdin:
        if line.strip():
            protocol.write(grade(GradingTask.from_json(line)).to_json() + "\n")


if __name__ == "__main__":
    main()
