"""A toy grader for the engine tests: no nbgrader, no kernel; what a task does is written in its one file.

A task's ``do.txt`` says what grading it does:

- ``ok``: answers ``ok`` with the message ``graded <student> with <bundle's note.txt>``;
- ``sleep <seconds>``: sleeps, then answers as ``ok`` does;
- ``raise``: the grader itself fails (an exception, as a broken grading function would);
- ``forge``: answers with a token of no task.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from dpgrader.grading.task import AssignmentBundle, GradingResult, PackedTask
from dpgrader.outcomes import Status

GRADER = "helpers.toy_grading:grade"


def grade(task: PackedTask, bundle: AssignmentBundle, scratch: Path | None = None) -> GradingResult:
    what = task.files["do.txt"].decode().split()
    if what[0] == "raise":
        raise RuntimeError(f"the toy grader fails on {task.student}")
    if what[0] == "forge":
        return GradingResult("f" * 32, Status.OK, (f"graded {task.student} with a forged token",))
    if what[0] == "sleep":
        time.sleep(float(what[1]))
    note = bundle.files["note.txt"].decode() if bundle.assignment == task.assignment else "the wrong bundle"
    return GradingResult(task.token, Status.OK, (f"graded {task.student} with {note}",), worker=f"toy:{os.getpid()}")
