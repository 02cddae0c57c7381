"""The export step of a grading run (:func:`dpgrader.grading.export.export_run`): outcomes and grades written.

No grading runs here: a real gradebook (SQLite) with results merged by hand. The run's outcomes replace
those recorded before for the same submission and keep the others; ``grading_outcomes.csv`` holds them
all, and ``grades.csv`` has one row per student and assignment of the gradebook, built from them.
"""

from __future__ import annotations

import csv

from nbgrader.api import Gradebook

from dpgrader.course import Course
from dpgrader.grading.export import export_run, grade_rows
from dpgrader.grading.merge import merge
from dpgrader.grading.task import GradingResult
from dpgrader.outcomes import Flag, FlagKind, Outcome, Status, read_outcomes


def test_the_runs_outcomes_replace_those_known_before_and_every_row_is_written(tmp_path):
    course = Course(tmp_path)
    with Gradebook(course.gradebook_url) as gradebook:
        gradebook.add_assignment("a")
        for student in ("ada", "bo"):
            merge(gradebook, student, "a", GradingResult("", Status.OK))
    flag = Flag(FlagKind.COPY, "answer matches the earlier submission of bo", cell="s1", line=3,
                anonymous_reason="answer matches an earlier submission")
    known = {("ada", "a"): Outcome("ada", "a", Status.ERROR, "worker lost", None),
             ("bo", "a"): Outcome("bo", "a", Status.OK, "", 0.0, 0.0)}
    now = Outcome("ada", "a", Status.OK, "", 0.0, 0.0, 2.5, (flag,))
    recorded, rows = export_run(course, known, [now], tmp_path / "grades.csv")
    assert recorded == {("ada", "a"): now, ("bo", "a"): known["bo", "a"]}
    assert read_outcomes(course) == recorded, "grading_outcomes.csv holds every outcome, flags whole"
    assert rows == grade_rows(course, recorded)
    with open(tmp_path / "grades.csv", newline="") as handle:
        written = [(row["student_id"], row["status"], row["flags"]) for row in csv.DictReader(handle)]
    assert written == [("ada", "ok", str(flag)), ("bo", "ok", "")]
