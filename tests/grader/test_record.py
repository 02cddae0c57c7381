"""The record step of a grading run (:func:`dpgrader.grading.merge.record`): one result reviewed and merged.

No grading runs here: a real gradebook (SQLite) and a submission folder on disk, results made by hand.
The record step carries the submission's review flags on its outcome and on its notebooks, logs who graded
it, and never lets one submission stop the class: a result the gradebook cannot take becomes an ``error``
outcome (its flags dropped, the gradebook rolled back, the next result recorded as usual).
A submission refused unread (:func:`~dpgrader.grading.merge.record_refused`) scores 0 in the gradebook,
unless its folder name is no student id.
"""

from __future__ import annotations

import secrets
import shutil

import nbformat
import pytest
from nbgrader.api import Gradebook, MissingEntry

from dpgrader.course import Course
from dpgrader.grading.merge import record, record_refused
from dpgrader.grading.task import GradingResult, GradingTask
from dpgrader.outcomes import FlagKind, Outcome, Status

ASSIGNMENT = "a"


@pytest.fixture(scope="module")
def empty_gradebook(tmp_path_factory):
    """A gradebook that knows assignment ``a`` (no notebooks) and no student, made once (nbgrader's migrations take seconds)."""
    course = Course(tmp_path_factory.mktemp("gradebook"))
    with Gradebook(course.gradebook_url) as gradebook:
        gradebook.add_assignment(ASSIGNMENT)
    return course.gradebook


@pytest.fixture
def course(tmp_path, empty_gradebook):
    """A course of its own with a copy of that gradebook, its logs folder made."""
    course = Course(tmp_path / "course")
    course.grading_logs.mkdir(parents=True)
    shutil.copyfile(empty_gradebook, course.gradebook)
    return course


def _task(course: Course, student: str, assignment: str = ASSIGNMENT) -> GradingTask:
    """A submission of one notebook whose solution cell kills the kernel (a review flag, line 2 of cell ``s1``)."""
    folder = course.submitted(student, ASSIGNMENT)
    if not folder.exists():
        folder.mkdir(parents=True)
        notebook = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell("import os\nos._exit(0)")
        cell.metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": "s1", "schema_version": 3,
                                     "locked": False}
        notebook.cells.append(cell)
        nbformat.write(notebook, folder / "answers.ipynb")
    return GradingTask(course, assignment, student, folder, secrets.token_hex(16), feedback=False)


def test_a_result_is_recorded_with_its_review_flags_and_who_graded_it(course):
    task = _task(course, "ada")
    with Gradebook(course.gradebook_url) as gradebook:
        graded = record(gradebook, task, GradingResult(task.token, Status.OK, seconds=1.54, worker="w1"))
        assert gradebook.find_submission(ASSIGNMENT, "ada").score == 0.0
    flags = graded.notebooks["answers"]
    assert [(f.kind, f.cell, f.line) for f in flags] == [(FlagKind.PROCESS_CONTROL, "s1", 2)]
    assert graded.outcome.flags == flags, "the outcome carries the notebook's flags, once"
    assert (graded.outcome.student, graded.outcome.status, graded.outcome.seconds) == ("ada", Status.OK, 1.54)
    assert (course.grading_logs / "graded_by.log").read_text() == "ada/a: ok by w1 in 1.5 s\n"


def test_a_result_the_gradebook_cannot_take_is_an_error_and_the_class_goes_on(course):
    unknown = _task(course, "bo", assignment="not_in_the_gradebook")
    after = _task(course, "cy")
    with Gradebook(course.gradebook_url) as gradebook:
        failed = record(gradebook, unknown, GradingResult(unknown.token, Status.OK, worker="w1"))
        graded = record(gradebook, after, GradingResult(after.token, Status.OK, worker="w1"))
        with pytest.raises(MissingEntry):
            gradebook.find_submission("not_in_the_gradebook", "bo")
        assert gradebook.find_submission(ASSIGNMENT, "cy").score == 0.0
    assert failed.outcome.status is Status.ERROR and failed.outcome.score is None
    assert failed.outcome.message.startswith("could not record the result: MissingEntry(")
    assert failed.notebooks == {} and failed.outcome.flags == (), "flags of a result not recorded are not shown"
    assert graded.outcome.status is Status.OK and graded.outcome.flags
    assert (course.grading_logs / "graded_by.log").read_text().splitlines() == [
        "bo/not_in_the_gradebook: error by w1 in 0.0 s", "cy/a: ok by w1 in 0.0 s"]


def test_a_refused_submission_scores_zero_unless_its_folder_is_no_student_id(course):
    refused = [Outcome(student, ASSIGNMENT, Status.REFUSED, "a link", 0.0) for student in ("dee", "../x")]
    with Gradebook(course.gradebook_url) as gradebook:
        graded = [record_refused(gradebook, outcome) for outcome in refused]
        assert gradebook.find_submission(ASSIGNMENT, "dee").score == 0.0
        assert sorted(student.id for student in gradebook.students) == ["dee"], "no student named ../x"
    assert [g.outcome for g in graded] == refused and all(g.notebooks == {} for g in graded)
    assert not (course.grading_logs / "graded_by.log").exists(), "nobody graded a refused submission"
