"""Grading a class in parallel loses nothing: every grade reaches the one gradebook, grades.csv and feedback.

A small class (4 students, 2 assignments: 01_definition and a copy of it under another name)
is graded on two workers; each worker grades in its own scratch course with its own SQLite
gradebook, and the main process merges. The merged gradebook must hold exactly the scores
each submission deserves, cell by cell.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import nbformat
import psutil
import pytest

from dpgrader import Course, notebooks_of
from dpgrader.classroom import grade_class, main, read_outcomes
from helpers.checks import autograded_points
from helpers.classes import submit_class
from dpgrader.course import REPO_ROOT

pytestmark = pytest.mark.xdist_group("grading_classroom")  # one worker grades the module's class once

FIRST, RETAKE = "01_definition", "01_retake"
SOURCE = notebooks_of(REPO_ROOT / "source" / FIRST)[0]
POINTS = autograded_points(SOURCE)  # grade_id -> points, from the notebook's metadata
FULL = dict(POINTS)
ZERO = {k: 0.0 for k in POINTS}
PARTIAL = {**ZERO, "test_uniqueness": 2.0, "test_max_privacy_loss": 3.0}


def _partial(release: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The release with two exercises solved (copied from the reference)."""
    reference = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
                 for c in nbformat.read(str(SOURCE), as_version=4).cells}
    for cell in release.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in ("uniqueness_solution", "max_privacy_loss_solution"):
            cell.source = reference[grade_id]
    return release


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = Course.from_repo(tmp_path_factory.mktemp("classroom"), [FIRST])
    shutil.copytree(course.root / "source" / FIRST, course.root / "source" / RETAKE)
    course.generate_assignments()
    release = nbformat.read(str(course.root / "release" / FIRST / SOURCE.name), as_version=4)
    submissions = {
        ("ada", FIRST): nbformat.read(str(SOURCE), as_version=4),
        ("ada", RETAKE): nbformat.read(str(SOURCE), as_version=4),
        ("bob", FIRST): release,
        ("bob", RETAKE): release,
        ("cy", FIRST): _partial(nbformat.read(str(course.root / "release" / FIRST / SOURCE.name), as_version=4)),
        ("cy", RETAKE): nbformat.read(str(SOURCE), as_version=4),
        ("dee", FIRST): "{ not a notebook",
        # dee hands in nothing for the retake
    }
    for assignment in (FIRST, RETAKE):
        submit_class(course, assignment, {s: nb for (s, a), nb in submissions.items() if a == assignment}, SOURCE.name)
    return course


EXPECTED = {
    ("ada", FIRST): ("ok", FULL),
    ("ada", RETAKE): ("ok", FULL),
    ("bob", FIRST): ("ok", ZERO),
    ("bob", RETAKE): ("ok", ZERO),
    ("cy", FIRST): ("ok", PARTIAL),
    ("cy", RETAKE): ("ok", FULL),
    ("dee", FIRST): ("unreadable", ZERO),
}


@pytest.fixture(scope="module")
def graded(course):
    outcomes = grade_class(course.root, workers=2, progress=False)
    with open(course.root / "grades.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return outcomes, rows


@pytest.mark.pipeline
def test_every_grade_reaches_the_merged_gradebook(course, graded):
    outcomes, _ = graded
    assert {(o.student, o.assignment): o.status for o in outcomes} == {k: v[0] for k, v in EXPECTED.items()}
    for (student, assignment), (_, expected) in EXPECTED.items():
        (grades,) = course.grades(assignment, student).values()
        got = {g.grade_id: g.auto_score for g in grades if g.grade_id in POINTS}
        assert got == expected, (student, assignment)
        assert all(not g.needs_manual_grade for g in grades if g.grade_id in POINTS)


@pytest.mark.pipeline
def test_grades_csv_has_one_right_row_per_student_and_assignment(graded):
    _, rows = graded
    by_key = {(r["student_id"], r["assignment"]): r for r in rows}
    assert len(rows) == 8 and len(by_key) == 8
    for key, (status, expected) in EXPECTED.items():
        row = by_key[key]
        assert float(row["score"]) == sum(expected.values()), row
        assert float(row["max_score"]) == 14.0  # 12 autograded + 2 for the written answer
        assert row["status"] == status
        if status == "ok":  # a written answer awaits a grader: pending, not 0 (one left untouched scores 0)
            pending = 2.0 if expected == FULL else 0.0
            assert float(row["points_pending"]) == pending, row
            assert float(row["percent_of_graded"]) == round(100 * sum(expected.values()) / (14.0 - pending), 1), row
    assert by_key["dee", RETAKE]["status"] == "not submitted" and float(by_key["dee", RETAKE]["score"]) == 0
    assert "not a readable notebook" in by_key["dee", FIRST]["message"]


@pytest.mark.pipeline
def test_autograded_notebooks_and_feedback_are_in_the_course(course, graded):
    for (student, assignment), (status, _) in EXPECTED.items():
        graded_notebook = course.root / "autograded" / student / assignment / SOURCE.name
        html = course.root / "feedback" / student / assignment / f"{SOURCE.stem}.html"
        assert graded_notebook.is_file() == html.is_file() == (status != "unreadable")
    assert len(read_outcomes(course.root)) == len(EXPECTED)


def _graded_copy(course: Course, tmp_path) -> Course:
    """A copy of the graded class, for a test that grades more: the module's class stays as graded."""
    return Course(Path(shutil.copytree(course.root, tmp_path / "course", symlinks=True)))


@pytest.mark.pipeline
def test_regrading_one_student_keeps_everybody_else(course, graded, tmp_path):
    course = _graded_copy(course, tmp_path)
    assert main(["--course", str(course.root), "grade", "--student", "cy", "--assignment", FIRST, "--workers", "1"]) == 0
    outcomes = read_outcomes(course.root)
    assert len(outcomes) == len(EXPECTED)
    with open(course.root / "grades.csv", newline="") as handle:
        rows = {(r["student_id"], r["assignment"]): r for r in csv.DictReader(handle)}
    for key, (_, expected) in EXPECTED.items():
        assert float(rows[key]["score"]) == sum(expected.values()), key


@pytest.mark.pipeline
def test_a_submission_past_its_time_limit_is_stopped_and_flagged(course, graded, tmp_path):
    course = _graded_copy(course, tmp_path)
    folder = course.root / "submitted" / "eve" / FIRST
    folder.mkdir(parents=True)
    looping = nbformat.read(str(SOURCE), as_version=4)
    looping.cells[1].source += "\nwhile True:\n    pass"  # the set-up cell: the per-cell limit is 60 s
    looping.cells[1].metadata = {}
    nbformat.write(looping, str(folder / SOURCE.name))
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    (outcome,) = grade_class(course.root, [FIRST], ["eve"], workers=1, limits={"submission_seconds": 15}, progress=False)
    assert outcome.status == "killed" and outcome.score is None
    assert "longer than 15 s" in outcome.message
    (grades,) = course.grades(FIRST, "eve").values()
    assert all(g.auto_score is None and g.needs_manual_grade for g in grades)
    leftovers = [p for p in psutil.Process().children(recursive=True) if p.pid not in before and p.is_running()]
    assert not [p for p in leftovers if p.status() != psutil.STATUS_ZOMBIE], "the worker and its kernel are gone"
    assert course.outcomes_file.read_text().count("\neve,") == 1


def test_review_flags_point_at_tampering_and_delegation(tmp_path):
    from nbformat.v4 import new_code_cell, new_notebook

    from dpgrader.classroom import review_flags

    solution = {"nbgrader": {"solution": True, "grade": False, "locked": False, "grade_id": "f_solution"}}
    read_only = {"nbgrader": {"solution": False, "grade": False, "locked": True, "grade_id": "setup"}}
    notebook = new_notebook(cells=[
        new_code_cell("import builtins\nbuiltins.abs = lambda x: 0", metadata=read_only),  # ours: skipped
        new_code_cell("uniqueness = dplib.uniqueness", metadata=solution),
        new_code_cell("np.allclose = lambda *a, **k: True\nimport os\nos._exit(1)"),
        new_code_cell("total = np.sum([1, 2])  # fine", metadata={"nbgrader": {**solution["nbgrader"], "grade_id": "g_solution"}}),
    ])
    path = tmp_path / "nb.ipynb"
    nbformat.write(notebook, str(path))
    assert tuple(map(str, review_flags(path))) == (  # issue 12: dpgrader.review, "kind: reason (cell, line)"
        "delegates to dplib: uniqueness is dplib's own dplib.uniqueness (f_solution, line 1)",
        "tampering: replaces numpy.allclose, a library attribute the tests use (cell 2, line 1)",
        "process control: kills the kernel or another process (os._exit) (cell 2, line 3)",
    )
    path.write_text("{ broken")
    assert review_flags(path) == ()
