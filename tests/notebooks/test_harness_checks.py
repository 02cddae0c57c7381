"""The pipeline harness fails loudly: on release drift, on a reference that loses a point, on a leak.

A toy assignment in a throwaway repository is pushed through the same checks as the real ones.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from dpgrader import Course, notebooks_of
from helpers.checks import earned_points, feedback_problems, leaks, lost_points, partial_credit_endings, release_drift, source_problems
from dpgrader.release import regenerate
from helpers.tiny_assignment import nbauthor as load_nbauthor, tiny_repo

nbauthor = load_nbauthor()

TOY = '''%% readonly id=setup_imports
from dplib.testing import check_close

%% solution id=double_solution
def double(x):
    """Twice x."""
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION

%% tests id=test_double points=1
"""Check that double doubles."""
check_close(double(2), 4)
### BEGIN HIDDEN TESTS
check_close(double(-1.5), -3.0, hint="secret hidden hint for negative numbers")
### END HIDDEN TESTS
'''


@pytest.fixture(scope="module")
def toy_repo(tmp_path_factory) -> Path:
    repo = tiny_repo(tmp_path_factory.mktemp("toy_repo"), "99_toy", nbauthor.text_to_notebook(TOY))
    regenerate("99_toy", repo=repo)
    return repo


@pytest.mark.pipeline  # the toy repository's release is nbgrader's generate_assignment
def test_a_clean_toy_assignment_passes_every_static_check(toy_repo):
    notebooks = notebooks_of(toy_repo / "source" / "99_toy")
    assert source_problems(notebooks) == []
    assert leaks(notebooks, toy_repo / "release" / "99_toy") == []
    assert partial_credit_endings(notebooks[0]) == []


@pytest.mark.pipeline  # the toy repository's release is nbgrader's generate_assignment
def test_release_drift_is_caught(toy_repo, tmp_path):
    committed = tmp_path / "committed"
    shutil.copytree(toy_repo / "release" / "99_toy", committed)
    assert release_drift(toy_repo / "release" / "99_toy", committed) == []
    notebook = committed / "99_toy.ipynb"
    notebook.write_text(notebook.read_text().replace("Twice x.", "Twice x!"))
    (committed / "notes.txt").write_text("stray file")
    problems = release_drift(toy_repo / "release" / "99_toy", committed)
    assert any("99_toy.ipynb differs" in p for p in problems) and any("notes.txt" in p for p in problems)


@pytest.mark.pipeline  # the toy repository's release is nbgrader's generate_assignment
def test_leaked_solution_hidden_test_or_marker_is_caught(toy_repo, tmp_path):
    leaky = tmp_path / "leaky"
    shutil.copytree(toy_repo / "release" / "99_toy", leaky)
    shutil.copy2(toy_repo / "source" / "99_toy" / "99_toy.ipynb", leaky / "99_toy_solutions.ipynb")
    problems = leaks(notebooks_of(toy_repo / "source" / "99_toy"), leaky)
    assert any("BEGIN HIDDEN TESTS" in p for p in problems)
    assert any("secret hidden hint" in p for p in problems)


@pytest.mark.pipeline  # the toy repository's release is nbgrader's generate_assignment
def test_stored_outputs_and_vague_grade_ids_are_caught(toy_repo, tmp_path):
    notebook = nbformat.read(toy_repo / "source" / "99_toy" / "99_toy.ipynb", as_version=4)
    notebook.cells[1].outputs = [nbformat.v4.new_output("stream", text="hi")]
    notebook.cells[2].metadata["nbgrader"]["grade_id"] = "cell-1a2b"
    path = tmp_path / "bad.ipynb"
    nbformat.write(notebook, path)
    problems = source_problems([path])
    assert any("stores outputs" in p for p in problems) and any("cell-1a2b" in p for p in problems)


@pytest.mark.pipeline  # the toy repository's release is nbgrader's generate_assignment
def test_a_test_cell_that_ends_in_a_shown_number_is_caught(toy_repo, tmp_path):
    """nbgrader would read the number as partial credit; in the release only the visible part counts."""
    notebook = nbformat.read(toy_repo / "source" / "99_toy" / "99_toy.ipynb", as_version=4)
    test = notebook.cells[2]
    test.source = test.source.replace("check_close(double(2), 4)", "check_close(double(2), 4)\ncheck_number(double(2))")
    notebook.cells[0].source += ", check_number"
    path = tmp_path / "shown.ipynb"
    nbformat.write(notebook, path)
    problems = partial_credit_endings(path)
    assert len(problems) == 1 and "test_double (as released)" in problems[0] and "partial credit" in problems[0]
    test.source = "value = 3\nvalue"
    nbformat.write(notebook, path)
    assert len(partial_credit_endings(path)) == 2  # shown in the source and in the release


@pytest.mark.pipeline
def test_a_reference_that_loses_a_point_is_caught(toy_repo, tmp_path):
    course = Course.from_repo(tmp_path / "course", ["99_toy"], repo=toy_repo)
    release = course.generate_assignment("99_toy")
    broken = nbformat.read(toy_repo / "source" / "99_toy" / "99_toy.ipynb", as_version=4)
    broken.cells[1].source = broken.cells[1].source.replace("return 2 * x", "return 2 * abs(x)")
    folder = course.root / "submitted" / "broken_reference" / "99_toy"
    folder.mkdir(parents=True)
    nbformat.write(broken, folder / "99_toy.ipynb")
    course.submit("99_toy", "untouched", notebooks_of(release))
    course.autograde("99_toy")
    assert lost_points(course.grades("99_toy", "broken_reference")) == ["99_toy: test_double scored 0.0 of 1.0"]
    assert earned_points(course.grades("99_toy", "untouched")) == []


def test_a_feedback_page_that_drops_a_message_or_shows_hidden_code_is_caught():
    """feedback_problems, on a made-up autograded notebook and feedback pages (no grading run)."""
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    hidden = "check_close(double(-1.5), -3.0, hint=\"secret hidden hint for negative numbers\")"
    test = '"""Check that double doubles."""\ncheck_close(double(2), 4)\n### BEGIN HIDDEN TESTS\n' + hidden + "\n### END HIDDEN TESTS"
    source = new_notebook(cells=[new_code_cell(test, metadata={"nbgrader": {"grade_id": "test_double", "grade": True}})])
    message = "double(-1.5): expected -3.0, got 3.0. Double keeps the sign & the <b>size</b>."
    autograded = new_notebook(cells=[new_code_cell(test, metadata={"nbgrader": {"grade_id": "test_double", "grade": True}},
                                                   outputs=[new_output("error", ename="AssertionError", evalue=message)])])
    shown = "<pre>AssertionError: double(-1.5): expected -3.0, got 3.0. Double keeps the sign &amp; the &lt;b&gt;size&lt;/b&gt;.</pre>"
    assert feedback_problems(autograded, shown, source) == []
    assert feedback_problems(autograded, "<pre>AssertionError: </pre>", source) == [
        f": test_double: the feedback does not show the failure message whole: {message!r}"]
    assert feedback_problems(autograded, shown + f"<pre>{hidden}</pre>", source) == [
        f": the feedback shows a line of a hidden test: {hidden}"]
    autograded.cells[0].outputs[0].evalue = ""
    assert feedback_problems(autograded, shown, source, "ada") == [
        "ada: test_double failed with AssertionError and no message (an empty error box)"]
