"""Every variant of every assignment is graded as intended, in the assignment's one nbgrader run.

The variants are declared in ``tests/variant_cases/<assignment>.py``: correct answers written
differently keep full marks, each classic mistake scores 0 on the test aimed at it and keeps the
points of unrelated tests. The same run (shared with ``tests/notebooks/test_pipeline.py``) shows the written
answers of the reference waiting for a human grader, and each variant's feedback (generated once from that
run) shows every failure message whole and no hidden-test code.
"""

from __future__ import annotations

import nbformat
import pytest

from dpgrader import assignments_in
from dpgrader.course import REPO_ROOT
from helpers.checks import feedback_problems
from helpers.variants import autograded_tests, unmet_expectations, variants_of, written_answers

ASSIGNMENTS = assignments_in(REPO_ROOT / "source")
CASES = [
    pytest.param(assignment, variant, marks=pytest.mark.xdist_group(assignment), id=f"{assignment}-{variant.name}")
    for assignment in ASSIGNMENTS
    for variant in variants_of(assignment)
]
pytestmark = pytest.mark.pipeline


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_assignment_has_right_and_wrong_variants(assignment):
    variants = variants_of(assignment)
    assert any(not v.zero for v in variants), f"tests/variant_cases/{assignment}.py: no correct answer written differently"
    assert any(v.zero for v in variants), f"tests/variant_cases/{assignment}.py: no classic mistake"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_expectation_names_a_test_of_the_assignment(assignment):
    tests = set(autograded_tests(assignment))
    unknown = {(v.name, grade_id) for v in variants_of(assignment) for grade_id in v.full + v.zero if grade_id not in tests}
    assert not unknown, f"{assignment}: variants expect scores of cells that are not tests: {sorted(unknown)}"


@pytest.mark.parametrize(("assignment", "variant"), CASES)
def test_variant_is_graded_as_intended(assignment, variant, graded_assignment):
    problems = unmet_expectations(variant, graded_assignment(assignment).scores(variant.name))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("assignment", "variant"), CASES)
def test_feedback_gives_every_failure_message_and_no_hidden_test_code(assignment, variant, graded_assignment):
    """The variant's feedback shows each message a failing check raised, whole, and no line of hidden-test code.

    Feedback is generated once per assignment, from the same grading run (``GradedAssignment.feedback``).
    """
    graded = graded_assignment(assignment)
    pages, autograded = graded.feedback(variant.name), graded.autograded(variant.name)
    assert pages.keys() == autograded.keys(), f"{variant.name}: feedback pages {sorted(pages)}, notebooks {sorted(autograded)}"
    problems = []
    for notebook, page in pages.items():
        source = nbformat.read(str(graded.course.source(assignment) / f"{notebook}.ipynb"), as_version=4)
        problems += feedback_problems(autograded[notebook], page, source, variant.name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("assignment", [pytest.param(a, marks=pytest.mark.xdist_group(a)) for a in ASSIGNMENTS])
def test_written_answers_await_a_grader(assignment, graded_assignment):
    graded = graded_assignment(assignment)
    (reference,) = graded.course.grades(assignment, "reference").values()
    waiting = {g.grade_id: (g.auto_score, g.max_score) for g in reference if g.needs_manual_grade}
    assert waiting == {grade_id: (None, points) for grade_id, points in written_answers(assignment).items()}
