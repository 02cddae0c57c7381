"""Feedback a student receives: which tests passed, the points, a failing test's message; never hidden test code.

Graded with the instructor's plain commands (``nbgrader autograde``, ``nbgrader generate_feedback``),
so what is checked is the course's ``nbgrader_config.py``, not a wrapper around it.
"""

from __future__ import annotations

import html
import re

import nbformat
import pytest
from nbgrader.api import Gradebook

from dpgrader import Course, notebooks_of
from dpgrader.outcomes import Flag
from dpgrader.course import REPO_ROOT
from dpgrader.grading.review_comments import comment_in_gradebook
from helpers.secret_markers import REGIONS, hidden_test_lines, not_shown

pytestmark = pytest.mark.xdist_group("grading_feedback")  # one worker grades the module's class once

ASSIGNMENT = "01_definition"
SOURCE = notebooks_of(REPO_ROOT / "source" / ASSIGNMENT)[0]
REVIEW_FLAG = "copy: uniqueness_solution matches another submission (similarity 0.91)"


def _student(**replacements: str) -> nbformat.NotebookNode:
    notebook = nbformat.read(str(SOURCE), as_version=4)
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in replacements:
            cell.source = replacements[grade_id]
    return notebook


STUDENTS = {
    "reference": _student(),
    # keeps ambiguous matches: passes the visible test, fails a hidden one
    "ambiguous_matches": _student(
        reidentify_solution="def reidentify(deidentified, auxiliary, keys):\n"
        "    return deidentified.merge(auxiliary[list(keys) + ['Name']], on=list(keys))"
    ),
    # prints what the hidden tests pass in (the visible test's table has 4 rows, the hidden one 6)
    "prints_inputs": _student(
        uniqueness_solution="def uniqueness(df, columns):\n"
        "    if len(df) == 6:\n"
        "        print('LEAK' + 'ED', df.to_dict())\n"
        "    return float((~df.duplicated(list(columns), keep=False)).mean())"
    ),
}


def _test_cells() -> dict[str, str]:
    """grade_id -> source of every autograded test cell of the source notebook."""
    notebook = nbformat.read(str(SOURCE), as_version=4)
    return {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in notebook.cells
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")
    }


def _hidden_lines() -> set[str]:
    """Lines of the hidden-test regions (long enough to be distinctive) that the release does not show."""
    return not_shown(hidden_test_lines(SOURCE), REPO_ROOT / "release" / ASSIGNMENT / SOURCE.name)


def _text(page: str) -> str:
    """The visible text of an HTML page (tags dropped, entities decoded)."""
    page = re.sub(r"<(script|style)\b.*?</\1>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


@pytest.fixture(scope="module")
def feedback(tmp_path_factory):
    course = Course.from_repo(tmp_path_factory.mktemp("feedback"), [ASSIGNMENT])
    course.generate_assignment(ASSIGNMENT)
    for student, notebook in STUDENTS.items():
        folder = course.root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(notebook, str(folder / SOURCE.name))
    course.autograde(ASSIGNMENT)
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:  # as the class grader does
        comment_in_gradebook(gradebook, "reference", ASSIGNMENT, {SOURCE.stem: [Flag.from_text(REVIEW_FLAG)]})
    course.nbgrader("generate_feedback", ASSIGNMENT, "--force")
    pages = {
        student: (course.root / "feedback" / student / ASSIGNMENT / f"{SOURCE.stem}.html").read_text()
        for student in STUDENTS
    }
    return course, pages


@pytest.mark.pipeline
def test_feedback_lists_every_test_with_its_points(feedback):
    course, pages = feedback
    for student, page in pages.items():
        for grade_id in _test_cells():
            if grade_id.startswith("test_"):
                assert re.search(rf'href="#{grade_id}">Tests of [^<]+</a> \(Score: [\d.]+ / [\d.]+\)', page), (student, grade_id)
    assert re.search(r'href="#test_reidentify">Tests of [^<]+</a> \(Score: 0.0 / 3.0\)', pages["ambiguous_matches"])
    assert re.search(r'href="#test_reidentify">Tests of [^<]+</a> \(Score: 3.0 / 3.0\)', pages["reference"])


@pytest.mark.pipeline
def test_a_written_answer_awaiting_a_grader_is_pending_not_zero(feedback):
    course, pages = feedback
    page = pages["reference"]
    assert re.search(r'href="#written_epsilon_zero">Written answer: [^<]+</a> \(Score: pending \(awaiting a grader\) / 2.0\)', page)
    assert not re.search(r'href="#written_epsilon_zero">Written answer: [^<]+</a> \(Score: 0', page)
    assert re.search(r"\(Score: [\d.]+ / [\d.]+; 2.0 of them awaiting a grader\)</h4>", page)
    # once a person grades it, it shows the score
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        grade = gradebook.find_grade("written_epsilon_zero", SOURCE.stem, ASSIGNMENT, "reference")
        grade.manual_score = 1.5
        gradebook.db.commit()
    course.nbgrader("generate_feedback", ASSIGNMENT, "--force", "--student", "reference")
    regraded = (course.root / "feedback" / "reference" / ASSIGNMENT / f"{SOURCE.stem}.html").read_text()
    assert re.search(r'href="#written_epsilon_zero">Written answer: [^<]+</a> \(Score: 1.5 / 2.0\)', regraded)
    assert "awaiting a grader" not in regraded


def test_only_the_review_notes_leave_a_comment():
    from dpgrader.preprocessors.feedback import without_review_notes
    from dpgrader.review import REVIEW_HEADING

    notes = f"{REVIEW_HEADING}\n- copy: a_solution matches another submission (similarity 0.91)\n- review: b"
    assert without_review_notes(notes) == ""
    assert without_review_notes(f"Well argued.\n\n{notes}\n\nSee me about exercise 2.") == (
        "Well argued.\n\n\nSee me about exercise 2.")
    assert without_review_notes("- a list the grader wrote\n- stays") == "- a list the grader wrote\n- stays"


@pytest.mark.pipeline
def test_review_flags_stay_in_formgrader_and_out_of_the_feedback(feedback):
    course, pages = feedback
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook(SOURCE.stem, ASSIGNMENT, "reference")
        assert notebook.flagged
        assert any(REVIEW_FLAG in (c.comment or "") for c in notebook.comments)
    text = _text(pages["reference"])
    assert "Tests of" in text
    assert "Automatic review" not in text and "matches another submission" not in text


@pytest.mark.pipeline
def test_a_failing_hidden_test_shows_its_message(feedback):
    _, pages = feedback
    text = _text(pages["ambiguous_matches"])
    assert "AssertionError: Two released rows share ('01', 'd1'): a match on them is ambiguous and must be dropped." in text


@pytest.mark.pipeline
def test_feedback_never_shows_hidden_test_code(feedback):
    course, pages = feedback
    hidden = _hidden_lines()
    assert len(hidden) > 10
    autograded = (course.root / "autograded" / "reference" / ASSIGNMENT / SOURCE.name).read_text()
    assert any(line in html.unescape(autograded) for line in hidden), "the check must be able to see hidden lines"
    for student, page in pages.items():
        text = _text(page)
        leaked = sorted(line for line in hidden if line in text)
        assert not leaked, f"{student}'s feedback shows hidden test code: {leaked[:3]}"
        for marker in REGIONS["hidden tests"]:
            assert marker not in text
        assert "hidden tests ran here" in text
        assert "Traceback (most recent call last)" not in text and "---->" not in text, "tracebacks quote test code"
        assert 'table = pd.DataFrame({"zip": ["01", "01", "02", "03"]' in text, "visible tests stay visible"


@pytest.mark.pipeline
def test_feedback_drops_what_student_code_printed_during_hidden_tests(feedback):
    _, pages = feedback
    assert "LEAKED" not in _text(pages["prints_inputs"])
    assert re.search(r'href="#test_uniqueness">Tests of [^<]+</a> \(Score: 2.0 / 2.0\)', pages["prints_inputs"])


def test_hide_hidden_tests_keeps_visible_code_and_the_message_only():
    """The feedback preprocessor on one test cell (no kernel)."""
    from nbformat.v4 import new_code_cell, new_output

    from dpgrader.preprocessors import HideHiddenTests

    cell = new_code_cell(
        '"""Check that f works."""\nassert f(1) == 1\n### BEGIN HIDDEN TESTS\nassert f(2) == 4, "f(2) should be 4"\n'
        "### END HIDDEN TESTS\nprint('done')",
        metadata={"nbgrader": {"grade": True, "solution": False, "grade_id": "test_f", "points": 1}},
    )
    cell.outputs = [
        new_output("stream", name="stdout", text="f was called with 2\n"),
        new_output("error", ename="AssertionError", evalue="f(2) should be 4",
                   traceback=["---> 4 assert f(2) == 4, 'f(2) should be 4'", "AssertionError: f(2) should be 4"]),
    ]
    cell, _ = HideHiddenTests().preprocess_cell(cell, {}, 0)
    assert "f(2) == 4" not in cell.source and "HIDDEN" not in cell.source
    assert cell.source.startswith('"""Check that f works."""\nassert f(1) == 1\n# ... hidden tests ran here')
    assert cell.source.endswith("print('done')")
    assert [(o.output_type, o.traceback) for o in cell.outputs] == [("error", ["AssertionError: f(2) should be 4"])]


# --- the message a test raised is the student's: kept whole (issue 37) --------------------------------------

HINT = "draw every number from rng = np.random.default_rng(rng), not from numpy's global generator."
SOLUTION_CELL = ("def f(x, rng=None):\n    ### BEGIN SOLUTION\n    rng = np.random.default_rng(rng)\n"
                 "    return x + rng.normal()\n    ### END SOLUTION")
TEST_CELL = ('"""Check that f draws from rng."""\nassert f(1) != f(1)\n### BEGIN HIDDEN TESTS\n'
             "first, again = f(3, rng=np.random.default_rng(2024)), f(3, rng=np.random.default_rng(2024))\n"
             'assert first == again, ("two calls of f with generators of the same seed differ: "\n'
             f'                        "{HINT}")\n'
             "### END HIDDEN TESTS")
MESSAGE = f"two calls of f with generators of the same seed differ: {HINT}"
HIDDEN_CODE = "first, again = f(3, rng=np.random.default_rng(2024)), f(3, rng=np.random.default_rng(2024))"


def _frame(count: int, line: int, function: str = "") -> str:
    """A frame of a cell as IPython 9 writes it (ANSI colours included)."""
    where = f", in \x1b[36m{function}\x1b[39m" if function else ""
    return f"\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[{count}]\x1b[39m\x1b[32m, line {line}\x1b[39m{where}\n"


def _file_frame(path: str, function: str) -> str:
    return f"File \x1b[32m{path}:47\x1b[39m, in \x1b[36m{function}\x1b[39m\x1b[34m(message, hint)\x1b[39m\n"


def _graded(evalue: str, *frames: str):
    """The solution and the test cell of a made-up notebook, the test failed with ``evalue`` after ``frames``;
    and a HideHiddenTests that read the notebook's secrets (as ``preprocess`` does from the source notebook)."""
    from nbformat.v4 import new_code_cell, new_output

    from dpgrader.preprocessors import HideHiddenTests, message_secrets, secret_lines

    solution = new_code_cell(SOLUTION_CELL.replace("    ### BEGIN SOLUTION\n", "").replace("\n    ### END SOLUTION", ""),
                             execution_count=1, metadata={"nbgrader": {"grade_id": "f_solution", "solution": True}})
    test = new_code_cell(TEST_CELL, execution_count=2, metadata={
        "nbgrader": {"grade_id": "test_f", "solution": False, "grade": True, "points": 2}})
    traceback = ["\x1b[31m-----\x1b[39m", "\x1b[31mAssertionError\x1b[39m    Traceback (most recent call last)",
                 *frames, f"\x1b[31mAssertionError\x1b[39m: {evalue}"]
    test.outputs = [new_output("error", ename="AssertionError", evalue=evalue, traceback=traceback)]
    hide = HideHiddenTests()
    hide._secrets = secret_lines([SOLUTION_CELL, TEST_CELL])
    hide._message_secrets = message_secrets([SOLUTION_CELL, TEST_CELL])
    hide._cells = {1: solution, 2: test}
    return hide, test


def test_the_secrets_hold_the_solution_line_the_message_quotes():
    from dpgrader.preprocessors import message_secrets, scrub, secret_lines

    secrets = secret_lines([SOLUTION_CELL, TEST_CELL])
    assert "rng = np.random.default_rng(rng)" in secrets and HIDDEN_CODE in secrets  # why the message was removed
    kept_out = message_secrets([SOLUTION_CELL, TEST_CELL])
    assert HIDDEN_CODE in kept_out, "hidden-test code stays out of every message"
    assert "rng = np.random.default_rng(rng)" not in kept_out, "a solution line is not in the grading kernel"
    assert scrub(MESSAGE, secrets)[1] == 1, "the scrub of every secret takes the message for a secret"
    assert scrub(MESSAGE, kept_out) == (MESSAGE, 0), "the scrub of a test's message keeps it whole"


@pytest.mark.parametrize("frames", [
    pytest.param((_frame(2, 5),), id="assert_in_the_test_cell"),
    pytest.param((_frame(2, 5), _file_frame("/opt/venv/lib/python3.11/site-packages/dplib/testing/checks.py", "fail")),
                 id="a_dplib_testing_check"),
])
def test_a_message_the_tests_raised_reaches_the_student_whole(frames):
    hide, test = _graded(MESSAGE, *frames)
    test, _ = hide.preprocess_cell(test, {}, 1)
    assert [(o.output_type, o.get("traceback")) for o in test.outputs] == [("error", [f"AssertionError: {MESSAGE}"])]
    assert HIDDEN_CODE not in test.source and "hidden tests ran here" in test.source


def test_hidden_code_a_student_value_put_into_a_test_message_is_removed():
    evalue = f"f should return a float, got a\n{HIDDEN_CODE}\n(not a number)"  # a class named after the test's code
    hide, test = _graded(evalue, _frame(2, 5))
    test, _ = hide.preprocess_cell(test, {}, 1)
    error, note = test.outputs
    assert error.traceback == ["AssertionError: f should return a float, got a\n(not a number)"]
    assert "1 output line(s) removed" in note.text


@pytest.mark.parametrize("frames", [
    pytest.param((_frame(2, 5), _frame(1, 3, "f")), id="the_students_cell"),
    pytest.param((_frame(2, 5), _file_frame("/usr/lib/python3/numpy/core/fromnumeric.py", "sum")), id="a_library"),
    pytest.param((_frame(2, 5), _file_frame("/tmp/mine/dplib/testing/checks.py.evil", "fail")), id="not_a_module"),
    pytest.param((_frame(7, 5),), id="a_count_that_names_no_cell"),
    pytest.param((), id="no_frame"),
])
def test_a_message_raised_elsewhere_is_scrubbed_and_never_leaves_an_empty_box(frames):
    from dpgrader.preprocessors import raised_by_the_tests

    hide, test = _graded(f"{HIDDEN_CODE}\nrng = np.random.default_rng(rng)", *frames)
    assert not raised_by_the_tests(test.outputs[0].traceback, hide._cells)
    test, _ = hide.preprocess_cell(test, {}, 1)
    error, note = test.outputs
    assert error.traceback[-1] == "AssertionError: [the message is not shown: it quoted the course's hidden tests or solutions]"
    assert not any("default_rng" in line for line in error.traceback)
    assert "output line(s) removed from this feedback" in note.text


def test_the_students_own_line_is_shown_even_when_the_reference_has_it_too():
    hide, test = _graded("Probabilities contain NaN", _frame(2, 5), _frame(1, 2, "f"))
    test.outputs[0].ename = "ValueError"
    test, _ = hide.preprocess_cell(test, {}, 1)
    (error,) = test.outputs
    assert error.traceback[1:] == ["  cell f_solution, line 2, in f:", "    rng = np.random.default_rng(rng)",
                                   "ValueError: Probabilities contain NaN"]


def test_an_error_raised_without_a_message_says_so():
    hide, test = _graded("", _frame(2, 5), _frame(1, 3, "f"))
    test.outputs[0].ename = "NotImplementedError"
    test, _ = hide.preprocess_cell(test, {}, 1)
    (error,) = test.outputs
    assert error.traceback[-1] == "NotImplementedError: [raised without a message]"
