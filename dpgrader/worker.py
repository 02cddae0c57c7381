"""A grading worker: autogrades one submission at a time, each in its own throwaway course folder.

Started by :mod:`dpgrader.classroom` as ``python -m dpgrader.worker``; reads one
JSON task per line on stdin and answers one JSON result per line. nbgrader is imported
once per worker (it takes seconds), not once per submission.

A task's scratch folder holds the course's ``nbgrader_config.py``, the assignment's
``source/``, a copy of the instructor's gradebook and this one submission. So a
submission can only damage its own copy (``rm -rf ../..`` from a notebook hits the
scratch folder), each SQLite gradebook has one writer, and the results come back as
plain data for the main process to merge into the real gradebook.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import traceback
from pathlib import Path

from dpgrader.intake import UnreadableNotebook, copy_for_grading, read_notebook
from dpgrader.outcomes import Status, take_measurements, take_notes

MAX_NOTEBOOK_BYTES = 16 << 20  # as GuardedExecute.max_notebook_bytes: bigger files are refused unread


def _read_problem(path: Path) -> str | None:
    """Why ``path`` is not a notebook nbgrader can grade, or None if it is."""
    try:
        read_notebook(path)  # as the review, copy detection and nbgrader read it
    except UnreadableNotebook as error:
        return str(error)
    except OSError as error:
        return f"{type(error).__name__}: {str(error)[:160]}"
    return None


def prepare(task: dict) -> list[str]:
    """Build the scratch course of a task; return messages about notebooks left out as unreadable.

    ``task["scratch"]`` is a private folder the class grader made (``tempfile.mkdtemp``); the
    kernel sees none of it but its own ``autograded/<student>/<assignment>`` copy.
    """
    scratch = Path(task["scratch"])
    course, assignment, student = Path(task["course"]), task["assignment"], task["student"]
    scratch.mkdir(parents=True, exist_ok=True)
    shutil.copy2(course / "nbgrader_config.py", scratch / "nbgrader_config.py")
    shutil.copytree(course / "source" / assignment, scratch / "source" / assignment)
    shutil.copy2(task["template_db"], scratch / "gradebook.db")
    target = scratch / "submitted" / student / assignment
    copy_for_grading(Path(task["submission"]), target)  # regular notebooks only, no link followed
    problems = []
    for notebook in sorted(target.glob("*.ipynb")):
        if notebook.stat().st_size > MAX_NOTEBOOK_BYTES:
            notebook.unlink()
            problems.append(f"{notebook.name} is larger than {MAX_NOTEBOOK_BYTES} bytes: refused, it scores 0")
            continue
        problem = _read_problem(notebook)
        if problem:
            notebook.unlink()  # graded as missing (0 points) instead of failing the whole assignment
            problems.append(f"{notebook.name} is not a readable notebook ({problem}); it scores 0")
    return problems


def _load(scratch: Path):
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(scratch)).load_config()
    config.CourseDirectory.root = str(scratch)
    return config, CourseDirectory(config=config)


def _last_error_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    for line in reversed(lines):
        if ("Error" in line or "Exception" in line) and not line.startswith("[") and not line.startswith("File "):
            return line[:300]
    return lines[-1][:300] if lines else "unknown error"


def _results(scratch: Path, assignment: str, student: str) -> dict:
    from nbgrader.api import Gradebook

    grades, comments, penalties = {}, {}, {}
    with Gradebook(f"sqlite:///{scratch / 'gradebook.db'}") as gradebook:
        submission = gradebook.find_submission(assignment, student)
        timestamp = submission.timestamp.isoformat() if submission.timestamp else None
        for notebook in submission.notebooks:
            grades[notebook.name] = {g.name: [g.auto_score, bool(g.needs_manual_grade)] for g in notebook.grades}
            comments[notebook.name] = {c.name: c.auto_comment for c in notebook.comments}
            penalties[notebook.name] = notebook.late_submission_penalty
    return {"grades": grades, "comments": comments, "penalties": penalties, "timestamp": timestamp}


def grade(task: dict) -> dict:
    """Autograde the task's submission (and generate its feedback); never raises."""
    from nbgrader.converters import Autograde, GenerateFeedback
    from nbgrader.utils import capture_log

    started = time.perf_counter()
    take_notes(), take_measurements()  # forget anything left from an earlier task
    scratch, assignment, student = Path(task["scratch"]), task["assignment"], task["student"]
    result = {"token": task.get("token"), "student": student, "assignment": assignment, "status": Status.OK,
              "messages": [], "log": ""}
    try:
        unreadable = prepare(task)
        result["messages"] += unreadable
        if not any((scratch / "submitted" / student / assignment).glob("*.ipynb")):
            too_large = any("larger than" in m for m in unreadable)
            result["status"] = Status.TOO_LARGE if too_large else Status.UNREADABLE if unreadable else Status.MISSING
            if not unreadable:
                result["messages"].append("no notebook was submitted")
            return result
        config, coursedir = _load(scratch)
        if task.get("time_budget"):  # set by the class grader from the reference solution's run time
            config.GuardedExecute.time_budget = float(task["time_budget"])
        coursedir.assignment_id, coursedir.student_id = assignment, student
        autograde = Autograde(coursedir=coursedir, config=config)
        autograde.force, autograde.create_student = True, True
        outcome = capture_log(autograde)
        result["log"] = outcome.get("log", "")[-20000:]
        autograded = scratch / "autograded" / student / assignment
        notes = take_notes()
        if not outcome["success"]:
            result["status"] = Status.ERROR
            result["messages"].append("nbgrader could not grade it: " + _last_error_line(outcome.get("error", "") + "\n" + result["log"]))
            result["messages"] += list(dict.fromkeys(message for _, message in notes))  # e.g. why the kernel died
            return result
        result["status"] = Status.worst(*(status for status, _ in notes))
        result["messages"] += list(dict.fromkeys(message for _, message in notes))
        if unreadable:
            result["status"] = Status.worst(result["status"], Status.UNREADABLE)
        result.update(_results(scratch, assignment, student))
        result["autograded"] = str(autograded)
        if task.get("feedback", True):
            feedback = GenerateFeedback(coursedir=coursedir, config=config)
            feedback.force = True
            made = capture_log(feedback)
            if made["success"]:
                result["feedback"] = str(scratch / "feedback" / student / assignment)
            else:
                result["messages"].append("feedback could not be generated: " + _last_error_line(made.get("error", "")))
    except Exception:
        result["status"] = Status.ERROR
        result["messages"].append("grading failed: " + _last_error_line(traceback.format_exc()))
        result["log"] += traceback.format_exc()
    finally:
        result["seconds"] = time.perf_counter() - started
        result["kernel_cpu"] = take_measurements().get("kernel_cpu")
    return result


def main() -> None:
    # Only this process writes protocol lines: fd 1 of every child (the kernels, whose C code or
    # os.write(1, ...) may print) goes to stderr instead.
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import nbgrader.converters  # noqa: F401  (the slow import, once)

    protocol.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        if line.strip():
            protocol.write(json.dumps(grade(json.loads(line)), default=str) + "\n")


if __name__ == "__main__":
    main()
