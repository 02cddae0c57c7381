"""Merging one worker's result into the course: gradebook rows, files copied back, the outcome recorded."""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

from dpgrader.outcomes import UNGRADED, Outcome, Status
# Review flags: a syntax-tree review of every submission (dpgrader.review).
from dpgrader.review import comment_in_gradebook, review_flags


def _rmtree(path: Path) -> None:
    def make_writable(function, target, _):
        os.chmod(target, 0o700)
        function(target)

    if path.exists():
        shutil.rmtree(path, onerror=make_writable)


def _copy_back(source: str | None, target: Path, keep=None) -> None:
    """Replace ``target`` by the regular files of ``source`` (no symlinks; only names ``keep`` accepts, if given)."""
    _rmtree(target)
    if source and Path(source).is_dir():
        target.mkdir(parents=True, exist_ok=True)
        for item in sorted(Path(source).iterdir()):
            if item.is_file() and not item.is_symlink() and (keep is None or keep(item.name)):
                shutil.copy2(item, target / item.name)


def merge(gradebook, result: dict) -> tuple[float, float]:
    """Write one worker result into the course gradebook; return the submission's (score, max_score).

    Autograder scores come from the result; a manual score already in the gradebook is
    kept (and keeps the cell flagged for review, as nbgrader does). Unreadable or missing
    notebooks score 0; a submission that could not be graded gets no score and is
    flagged ``needs_manual_grade``.
    """
    student, assignment = result["student"], result["assignment"]
    gradebook.update_or_create_student(student)
    extra = {"timestamp": result["timestamp"]} if result.get("timestamp") else {}
    with warnings.catch_warnings():  # nbgrader's add_submission trips SQLAlchemy's autoflush warning
        warnings.simplefilter("ignore")
        submission = gradebook.update_or_create_submission(assignment, student, **extra)
    graded = result.get("grades") or {}
    for notebook in submission.notebooks:
        scores = graded.get(notebook.name)
        for grade in notebook.grades:
            if scores is not None and grade.name in scores:
                grade.auto_score, needs_review = scores[grade.name]
                grade.needs_manual_grade = bool(needs_review) or grade.manual_score is not None
            elif result["status"] in UNGRADED:
                grade.auto_score, grade.needs_manual_grade = None, True
            else:  # a notebook nbgrader found missing, or an unreadable one
                grade.auto_score = 0.0
                grade.needs_manual_grade = grade.manual_score is not None
        comments = (result.get("comments") or {}).get(notebook.name, {})
        for comment in notebook.comments:
            comment.auto_comment = comments.get(comment.name)
        notebook.late_submission_penalty = (result.get("penalties") or {}).get(notebook.name)
    gradebook.db.commit()
    return float(submission.score - (submission.late_submission_penalty or 0.0)), float(submission.max_score)


def _write_log(root: Path, student: str, assignment: str, text: str) -> Path:
    """Keep the grading log of one submission in ``autograded/grading_logs/<assignment>/<student>.log``."""
    path = Path(root) / "autograded" / "grading_logs" / assignment / f"{student}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _record(root: Path, gradebook, task: dict, result: dict, feedback: bool) -> Outcome:
    """Merge one result into the course: gradebook, autograded/ and feedback/ folders; return its outcome."""
    student, assignment = task["student"], task["assignment"]
    status = Status(result.get("status", Status.ERROR))
    score, maximum = merge(gradebook, {**result, "status": status})
    if status != Status.OK and result.get("log"):  # why, for the instructor: nbgrader's log with any traceback
        _write_log(root, student, assignment, result["log"])
    # Back into the course: the graded notebooks and the submission's own files, nothing the kernel made.
    submitted = {p.name for p in Path(task["submission"]).iterdir()}
    _copy_back(result.get("autograded"), root / "autograded" / student / assignment,
               keep=lambda name: name.endswith(".ipynb") or name in submitted)
    if feedback:
        _copy_back(result.get("feedback"), root / "feedback" / student / assignment,
                   keep=lambda name: name.endswith(".html"))
    flags: tuple[str, ...] = ()
    by_notebook = {}  # reviewed against the instructor's notebook; the flags are shown in formgrader
    for notebook in sorted(Path(task["submission"]).glob("*.ipynb")):
        instructor = root / "source" / assignment / notebook.name
        by_notebook[notebook.stem] = review_flags(notebook, instructor if instructor.exists() else None)
        flags += by_notebook[notebook.stem]
    comment_in_gradebook(gradebook, student, assignment, by_notebook)
    return Outcome(
        student, assignment, status, " | ".join(result.get("messages", [])),
        None if status in UNGRADED else score, maximum,
        round(float(result.get("seconds", 0.0)), 2), tuple(dict.fromkeys(flags)), task["sandboxed"],
        round(float(result["kernel_cpu"]), 3) if result.get("kernel_cpu") is not None else None,
    )
