"""Recording one worker's result: the submission reviewed, merged into the course (gradebook rows, files copied
back), its outcome and who graded it.

:func:`record` is the step of the run (one result in, a :class:`~dpgrader.grading.flagging.Graded` out, never
raising); :func:`record_refused` records a submission refused unread. Below them, :func:`merge` writes the
gradebook and :func:`merge_submission` the course's folders.
"""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

from collections.abc import Mapping

from dpgrader.course import Course
from dpgrader.grading.flagging import Graded, review
from dpgrader.grading.task import GradingResult, GradingTask
from dpgrader.ids import valid_student_id
from dpgrader.outcomes import Effect, Flag, Outcome, Status
from dpgrader.safe_output import one_line


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything in it, read-only folders a kernel left included."""
    def make_writable(function, target, _):
        os.chmod(target, 0o700)
        function(target)

    if path.exists():
        shutil.rmtree(path, onerror=make_writable)


def _replace_files(files: dict[str, bytes], target: Path, keep) -> None:
    """Replace ``target`` by ``files``: plain names only (no folder), only those ``keep`` accepts."""
    remove_tree(target)
    kept = {name: content for name, content in files.items() if "/" not in name and name not in (".", "..") and keep(name)}
    if kept:
        target.mkdir(parents=True, exist_ok=True)
        for name, content in sorted(kept.items()):
            (target / name).write_bytes(content)


def merge(gradebook, student: str, assignment: str, result: GradingResult) -> tuple[float, float]:
    """Write one worker result into the course gradebook; return the submission's (score, max_score).

    Autograder scores come from the result; a manual score already in the gradebook is
    kept (and keeps the cell flagged for review, as nbgrader does). Unreadable or missing
    notebooks score 0; a submission that could not be graded gets no score and is
    flagged ``needs_manual_grade``.
    """
    gradebook.update_or_create_student(student)
    extra = {"timestamp": result.timestamp} if result.timestamp else {}
    with warnings.catch_warnings():  # nbgrader's add_submission trips SQLAlchemy's autoflush warning
        warnings.simplefilter("ignore")
        submission = gradebook.update_or_create_submission(assignment, student, **extra)
    for notebook in submission.notebooks:
        graded = result.notebooks.get(notebook.name)
        for grade in notebook.grades:
            if graded is not None and grade.name in graded.scores:
                score = graded.scores[grade.name]
                # the gradebook's points (from the instructor's source), whatever a worker claims
                grade.auto_score = (None if score.auto_score is None
                                    else min(max(float(score.auto_score), 0.0), float(grade.max_score)))
                grade.needs_manual_grade = score.needs_manual_grade or grade.manual_score is not None
            elif result.status.effect is Effect.UNGRADED:
                grade.auto_score, grade.needs_manual_grade = None, True
            else:  # a notebook nbgrader found missing, or an unreadable one
                grade.auto_score = 0.0
                grade.needs_manual_grade = grade.manual_score is not None
        comments = graded.comments if graded is not None else {}
        for comment in notebook.comments:
            comment.auto_comment = comments.get(comment.name)
        notebook.late_submission_penalty = graded.late_penalty if graded is not None else None
    gradebook.db.commit()
    return float(submission.score - (submission.late_submission_penalty or 0.0)), float(submission.max_score)


def _write_log(course: Course, student: str, assignment: str, text: str) -> Path:
    """Keep the grading log of one submission in ``autograded/grading_logs/<assignment>/<student>.log``."""
    path = course.grading_logs / assignment / f"{student}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def record(gradebook, task: GradingTask, result: GradingResult) -> Graded:
    """One result into the course: the submission reviewed (:func:`~dpgrader.grading.flagging.review`), merged
    (:func:`merge_submission`) with its review flags, and who graded it logged; never raises on a merge."""
    flags = review(task)
    try:
        graded = Graded(merge_submission(gradebook, task, result, flags), dict(flags))
    except Exception as error:  # never let one submission stop the class
        gradebook.db.rollback()
        graded = Graded(Outcome(task.student, task.assignment, Status.ERROR, f"could not record the result: {error!r}",
                                sandboxed=task.sandboxed), {})
    log_graded(task, result, graded.outcome)
    return graded


def record_refused(gradebook, outcome: Outcome) -> Graded:
    """A submission refused unread: 0 points in the gradebook (if its folder name is a student id)."""
    if valid_student_id(outcome.student):  # a folder name that is no id stays out of the gradebook
        merge(gradebook, outcome.student, outcome.assignment, GradingResult("", outcome.status))
    return Graded(outcome, {})


def log_graded(task: GradingTask, result: GradingResult, outcome: Outcome) -> str:
    """Who graded what, for the instructor (``grading_logs/graded_by.log``); the line is returned."""
    line = one_line(f"{task.student}/{task.assignment}: {outcome.status} by {result.worker or 'the grader'} "
                    f"in {result.seconds:.1f} s")
    with open(task.course.grading_logs / "graded_by.log", "a") as log:
        log.write(line + "\n")
    return line


def merge_submission(gradebook, task: GradingTask, result: GradingResult,
                     flags: Mapping[str, tuple[Flag, ...]] | None = None) -> Outcome:
    """Merge one result into the course: gradebook, autograded/ and feedback/ folders; return its outcome.

    ``flags`` are the submission's review flags by notebook (:func:`~dpgrader.grading.flagging.review`):
    the outcome carries them, in notebook order, each once.
    """
    course, student, assignment, status = task.course, task.student, task.assignment, result.status
    score, maximum = merge(gradebook, student, assignment, result)
    if status != Status.OK and result.log:  # why, for the instructor: nbgrader's log with any traceback
        _write_log(course, student, assignment, result.log)
    # Back into the course: the graded notebooks and the submission's own files, nothing the kernel made.
    submitted = {p.name for p in task.submission.iterdir()}
    _replace_files(result.autograded, course.autograded(student, assignment),
                   keep=lambda name: name.endswith(".ipynb") or name in submitted)
    if task.feedback:
        _replace_files(result.feedback, course.feedback(student, assignment), keep=lambda name: name.endswith(".html"))
    reviewed = tuple(flag for found in (flags or {}).values() for flag in found)
    return Outcome(
        student, assignment, status, " | ".join(result.messages),
        None if status.effect is Effect.UNGRADED else score, maximum,
        round(result.seconds, 2), tuple(dict.fromkeys(reviewed)), task.sandboxed,
        round(result.kernel_cpu, 3) if result.kernel_cpu is not None else None,
    )
