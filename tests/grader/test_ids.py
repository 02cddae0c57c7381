"""Student ids outside ``[A-Za-z0-9._@-]`` are refused wherever they enter: folders, the gradebook, nbgrader's commands."""

from __future__ import annotations

import nbformat
import pytest
from nbgrader.api import Gradebook

from dpgrader import Course
from dpgrader.formgrader import refuse_bad_student_ids
from dpgrader.grading.run import find_submissions
from dpgrader.ids import require_student_id, valid_student_id
from dpgrader.outcomes import Status

ASSIGNMENT = "01_definition"
MARKUP = '<img src=x onerror="alert(1)">'
GOOD = ["ada", "ada.lovelace@example.org", "bob_2", "x1", "A-b", "7", "_x", "a" * 128]
BAD = ["", ".", "..", ".hidden", "-rf", "@x", "=2+5", "a b", "x[1]", "*", MARKUP, "a/b", "a\\b", "é", "a\n",
       "tab\tbed", "$(touch pwned)", "a;b", "a" * 129, None, 5]


@pytest.mark.parametrize("student", GOOD)
def test_a_login_or_an_email_is_an_id(student):
    assert valid_student_id(student) and require_student_id(student) == student


@pytest.mark.parametrize("student", BAD, ids=repr)
def test_anything_else_is_refused_naming_the_id(student):
    assert not valid_student_id(student)
    with pytest.raises(ValueError, match=r"^student folder must be 1 to 128 of the characters A-Z a-z 0-9 \. _ @ - "
                                         r"\(not starting with \. or -\); got ") as refused:
        require_student_id(student, "student folder")
    assert str(refused.value).endswith(repr(student))


def test_the_gradebook_refuses_a_bad_id_and_keeps_a_good_one(tmp_path):
    refuse_bad_student_ids()
    refuse_bad_student_ids()  # twice changes nothing
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        for add in (gradebook.add_student, gradebook.update_or_create_student):
            with pytest.raises(ValueError, match="student id must be"):
                add(MARKUP, first_name="Mallory")
        gradebook.update_or_create_student("ada", first_name="Ada")
        assert [s.id for s in gradebook.students] == ["ada"]


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Course:
    course = Course.from_repo(tmp_path_factory.mktemp("ids") / "course", [ASSIGNMENT])
    course.generate_assignment(ASSIGNMENT)
    return course


def _students(course: Course) -> set[str]:
    with Gradebook(course.gradebook_url) as gradebook:
        return {student.id for student in gradebook.students}


@pytest.mark.pipeline  # nbgrader's own commands, each a process
def test_nbgrader_db_student_add_refuses_a_bad_id(course):
    refused = course.nbgrader("db", "student", "add", MARKUP, "--first-name=Mallory", check=False)
    assert refused.returncode != 0
    assert "student id must be 1 to 128 of the characters" in refused.stdout + refused.stderr
    course.nbgrader("db", "student", "add", "ada.l@example.org")
    assert _students(course) == {"ada.l@example.org"}


@pytest.mark.pipeline  # nbgrader's own commands, each a process
def test_a_bad_folder_name_is_refused_by_the_class_grader_and_by_nbgrader_autograde(course):
    release = course.release(ASSIGNMENT) / f"{ASSIGNMENT}.ipynb"
    for student in (MARKUP, ".hidden", "a b"):
        folder = course.submitted(student, ASSIGNMENT)
        folder.mkdir(parents=True)
        nbformat.write(nbformat.read(str(release), as_version=4), str(folder / release.name))
    found, refused = find_submissions(course.root)
    assert found == []
    assert {o.student: o.status for o in refused} == {MARKUP: Status.REFUSED, ".hidden": Status.REFUSED,
                                                      "a b": Status.REFUSED}
    assert all("rename the folder" in o.message for o in refused)
    # Plain nbgrader, which discovers the folders by itself: the student is never created, nothing is graded.
    autograde = course.nbgrader("autograde", ASSIGNMENT, "--student", MARKUP, check=False)
    assert autograde.returncode != 0
    assert "student id must be 1 to 128 of the characters" in autograde.stdout + autograde.stderr
    assert MARKUP not in _students(course)
    assert not course.autograded(MARKUP, ASSIGNMENT).exists()
