"""What the class got wrong (issue 24): the mistakes page's numbers match the gradebook, and it quotes no hidden test.

The pure parts (reading a test cell's line, the page) are checked on made-up notebooks and
on every source notebook of the course; the numbers on a small class graded for real: one
assignment (01_definition) and a handful of submissions.
"""

from __future__ import annotations

import csv
import html
import math
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from dpgrader import Course, notebooks_of
from dpgrader.classroom import (
    ClassMistakes,
    Mistake,
    WrittenAnswer,
    class_mistakes,
    grade_class,
    main,
    merge,
    mistakes_html,
    summarize_mistakes,
    write_mistakes,
)
from dpgrader.classroom.mistakes import cell_lines, most_common, visible_part
from dpgrader.classroom.mistakes_page import check_no_hidden_code, label_shares, report_rows
from dpgrader.course import REPO_ROOT
from dpgrader.grading.task import GradingResult
from dpgrader.outcomes import Outcome, Status, write_outcomes
from helpers.checks import autograded_points
from helpers.classes import submit_class
from helpers.secret_markers import hidden_test_lines

ASSIGNMENT = "01_definition"
SOURCE = notebooks_of(REPO_ROOT / "source" / ASSIGNMENT)[0]
POINTS = autograded_points(SOURCE)  # the test cells' grade ids and points
SOLVED_BY_CY = ("test_uniqueness", "test_max_privacy_loss")


def page_text(page: str) -> str:
    """What a page says: its markup's text, unescaped, without the embedded images."""
    return html.unescape(re.sub(r'src="data:image/png;base64,[^"]*"', "", page))


# --- a made-up source notebook --------------------------------------------------------------------------


def made_up_source(folder: Path) -> Path:
    test = {"nbgrader": {"grade": True, "solution": False, "locked": True, "points": 2, "grade_id": "test_scale"}}
    answer = {"nbgrader": {"grade": True, "solution": True, "locked": False, "points": 2, "grade_id": "written_why"}}
    notebook = new_notebook(cells=[
        new_code_cell(
            '"""Check that scale is sensitivity / epsilon."""\n'
            'check_close(scale(2, 0.5), 4.0, hint="Divide the sensitivity by epsilon, not epsilon by it.")\n'
            'check_close(scale(1, 1), 1.0, hint=f"got {scale(1, 1)}")\n'
            "### BEGIN HIDDEN TESTS\n"
            'check_close(scale(3, 2), 1.5, hint="SECRET HINT: three over two, not two over three")\n'
            "assert scale(7, 0.25) == 28.0, 'SECRET: seven over a quarter'\n"
            "### END HIDDEN TESTS",
            metadata=test),
        new_markdown_cell("Some theory.\n\n**Exercise 2 (2 points, graded by hand).** Why is the scale\n"
                          "sensitivity / epsilon?"),
        new_markdown_cell("MODEL ANSWER: because the density ratio is bounded by e^epsilon.", metadata=answer),
    ])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "made_up.ipynb"
    nbformat.write(notebook, str(path))
    return path


def test_a_test_cell_gives_its_docstring_and_visible_hints_never_its_hidden_tests(tmp_path):
    lines = cell_lines(made_up_source(tmp_path))
    assert lines == {
        "test_scale": ("Check that scale is sensitivity / epsilon.",
                       ("Divide the sensitivity by epsilon, not epsilon by it.",)),
        "written_why": ("Exercise 2: Why is the scale sensitivity / epsilon?", ()),
    }
    assert "SECRET" not in visible_part(made_up_source(tmp_path).read_text())


def test_visible_part_drops_an_unterminated_hidden_region_to_the_end():
    assert visible_part('"""Check that f."""\n### BEGIN HIDDEN TESTS\nsecret()\nmore()') == '"""Check that f."""'


def test_every_test_cell_of_the_course_has_a_line_and_no_hidden_text_in_it():
    from dpgrader.preprocessors.scrubber import secret_lines

    for source in sorted((REPO_ROOT / "source").glob("*/*.ipynb")):
        lines = cell_lines(source)
        tests = autograded_points(source)
        secrets = secret_lines([c.source for c in nbformat.read(str(source), as_version=4).cells])
        assert set(tests) <= set(lines), source.name
        for grade_id in tests:
            line, hints = lines[grade_id]
            assert line.startswith("Check that "), (source.name, grade_id, line)
            shown = " ".join((line, *hints))
            assert not [s for s in secrets if s in shown], (source.name, grade_id)
            assert not [s for s in hidden_test_lines(source) if s in shown], (source.name, grade_id)


# --- the page, from made-up numbers ---------------------------------------------------------------------


def made_up_mistakes() -> ClassMistakes:
    students = ("ann", "bo", "<script>cy</script>", "di")
    return ClassMistakes(
        "02_made_up",
        mistakes=(
            Mistake("nb", "test_scale", 3.0, "Check that the scale is Δ/ε (not ε/Δ).", ("Divide by epsilon.",),
                    ran=students, failed=students[1:]),
            Mistake("nb", "test_fresh_coins", 2.0, "Check that coins are drawn per person.", (),
                    ran=students, failed=students[2:3]),
            Mistake("nb", "test_never_ran", 1.0, "Check that nothing.", (), ran=(), failed=()),
        ),
        written=(WrittenAnswer("nb", "written_why", 2.0, "Exercise 2: why?", pending=2, graded=1, blank=1),),
        percents={"ann": 100.0, "bo": 50.0, "<script>cy</script>": 20.0, "di": 0.0, "ed": 0.0},
        ran=students,
        not_run={"ed": "unreadable", "fay": "error"},
    )


def test_the_page_shows_the_numbers_escaped_and_names_only_for_the_instructor():
    report = made_up_mistakes()
    page = mistakes_html(report, labels={"bo": "wrong", "di": "wrong", "ann": "correct"})
    text = page_text(page)
    assert "<script>" not in page and "&lt;script&gt;cy&lt;/script&gt;" in page
    assert "75%" in text and "3 of 4" in text and "25%" in text and "1 of 4" in text
    assert "Check that the scale is Δ/ε (not ε/Δ)." in text and "Divide by epsilon." in text
    assert "2 did not run and are left out of the counts (error 1, unreadable 1)" in text
    assert re.search(r"<th class=num>pending</th>.*<td class=num>2</td><td class=num>1</td><td class=num>1</td>", page)
    assert page.count("data:image/png;base64,") == 3  # failure rates, grades, and the groups' grid
    assert "bo <span class=label>(wrong)</span>" in page
    shared = mistakes_html(report, names=False)
    assert not [s for s in ("ann", "bo", "cy", "di", "fay") if re.search(rf"\b{s}\b", page_text(shared))]
    assert shared.count("data:image/png;base64,") == 2 and "75%" in page_text(shared)


def test_the_groups_grid_counts_each_groups_failures():
    names, shares, counts = label_shares(made_up_mistakes(), {"ann": "correct", "bo": "wrong", "di": "wrong"})
    assert names == ["correct", "wrong"] and counts == [1, 2]
    assert shares.tolist() == [[0.0, 0.0], [1.0, 0.0]]  # columns: test_scale, test_fresh_coins (never_ran left out)


def test_the_csv_has_the_pages_numbers():
    rows = {r["grade_id"]: r for r in report_rows(made_up_mistakes())}
    assert (rows["test_scale"]["ran"], rows["test_scale"]["failed"], rows["test_scale"]["failed_percent"]) == (4, 3, 75.0)
    assert rows["test_never_ran"]["failed_percent"] == "" and rows["test_scale"]["not_run"] == 2
    assert (rows["written_why"]["pending"], rows["written_why"]["graded"], rows["written_why"]["blank"]) == (2, 1, 1)
    assert rows["written_why"]["failed"] == ""  # written answers are never failures


def test_the_most_common_mistakes_are_ranked_by_share():
    report = made_up_mistakes()
    top = most_common([report], 3)
    assert [m.grade_id for _, m in top] == ["test_scale", "test_fresh_coins"]  # a test nobody ran is not ranked
    assert math.isnan(report.mistakes[2].share)
    assert "02_made_up: 75% (3/4) test_scale: Check that the scale is Δ/ε (not ε/Δ)." in summarize_mistakes([report])


def test_a_page_quoting_a_hidden_test_is_refused(tmp_path):
    made_up_source(tmp_path)
    check_no_hidden_code("<p>Check that scale is sensitivity / epsilon.</p>", tmp_path)
    with pytest.raises(RuntimeError, match="would quote 1 line"):
        check_no_hidden_code("<p>assert scale(7, 0.25) == 28.0, &#x27;SECRET: seven over a quarter&#x27;</p>", tmp_path)


# --- a small class graded for real ----------------------------------------------------------------------


def _solved(release: nbformat.NotebookNode, grade_ids: tuple[str, ...]) -> nbformat.NotebookNode:
    """The release with the solution cells of ``grade_ids`` copied from the reference."""
    reference = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
                 for c in nbformat.read(str(SOURCE), as_version=4).cells}
    for cell in release.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in grade_ids:
            cell.source = reference[grade_id]
    return release


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """ada hands in the reference, bob the release, cy two exercises, dee a broken file; fay's grading failed."""
    course = Course.from_repo(tmp_path_factory.mktemp("mistakes"), [ASSIGNMENT])
    course.generate_assignments()
    release = course.root / "release" / ASSIGNMENT / SOURCE.name
    submissions = {
        "ada": nbformat.read(str(SOURCE), as_version=4),
        "bob": nbformat.read(str(release), as_version=4),
        "cy": _solved(nbformat.read(str(release), as_version=4), ("uniqueness_solution", "max_privacy_loss_solution")),
        "dee": "{ not a notebook",
    }
    submit_class(course, ASSIGNMENT, submissions, SOURCE.name)
    grade_class(course.root, workers=2, progress=False)
    # fay: a submission the grader could not grade (as grade_class records it): grades unknown
    from nbgrader.api import Gradebook

    with Gradebook(course.gradebook_url) as gradebook:
        merge(gradebook, "fay", ASSIGNMENT, GradingResult("t", Status.ERROR))
    write_outcomes(course.root, [Outcome("fay", ASSIGNMENT, Status.ERROR, "nbgrader failed")])
    return course


def _gradebook_failures(course: Course, students) -> dict[str, set[str]]:
    """grade_id -> the students whose autograder score for it is below its points, read with Course.grades."""
    failures = {grade_id: set() for grade_id in POINTS}
    for student in students:
        (grades,) = course.grades(ASSIGNMENT, student).values()
        for grade in grades:
            if grade.grade_id in POINTS and grade.auto_score < grade.max_score:
                failures[grade.grade_id].add(student)
    return failures


@pytest.mark.pipeline
def test_the_numbers_match_the_gradebook(graded):
    report = class_mistakes(graded.root, ASSIGNMENT)
    assert report.ran == ("ada", "bob", "cy")
    assert report.not_run == {"dee": "unreadable", "fay": "error"}  # left out of every count
    expected = {g: {"bob"} | ({"cy"} if g not in SOLVED_BY_CY else set()) for g in POINTS}
    assert _gradebook_failures(graded, report.ran) == expected  # the class was graded as it should
    by_id = {m.grade_id: m for m in report.mistakes}
    assert set(by_id) == set(POINTS)
    for grade_id, failed in expected.items():
        mistake = by_id[grade_id]
        assert mistake.ran == ("ada", "bob", "cy") and set(mistake.failed) == failed, grade_id
        assert mistake.points == POINTS[grade_id] and mistake.line.startswith("Check that ")
    shares = [m.share for m in report.mistakes]
    assert shares == sorted(shares, reverse=True) and shares[0] == pytest.approx(2 / 3)
    (written,) = report.written  # ada wrote the model answer; bob and cy left it as released
    assert (written.grade_id, written.pending, written.graded, written.blank) == ("written_epsilon_zero", 1, 0, 2)
    with open(graded.root / "grades.csv", newline="") as handle:
        grades = {r["student_id"]: float(r["percent_of_graded"]) for r in csv.DictReader(handle)}
    assert set(report.percents) == {"ada", "bob", "cy", "dee"}  # fay's grade is unknown
    assert {s: round(p, 1) for s, p in report.percents.items()} == {s: grades[s] for s in report.percents}


@pytest.mark.pipeline
def test_a_manual_grade_moves_a_written_answer_from_pending_to_graded(graded, tmp_path):
    from nbgrader.api import Gradebook

    course = Course(Path(shutil.copytree(graded.root, tmp_path / "course", symlinks=True)))
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        gradebook.find_grade("written_epsilon_zero", SOURCE.stem, ASSIGNMENT, "ada").manual_score = 1.5
        gradebook.db.commit()
    (written,) = class_mistakes(course.root, ASSIGNMENT).written
    assert (written.pending, written.graded, written.blank) == (0, 1, 2)


@pytest.mark.pipeline
def test_the_command_writes_the_page_and_csv_with_no_hidden_test_code(graded, tmp_path, capsys):
    folder = tmp_path / "out"
    assert main(["--course", str(graded.root), "mistakes", "--folder", str(folder)]) == 0
    printed = capsys.readouterr().out
    assert f"mistakes: {folder}/<assignment>.html and .csv, for {ASSIGNMENT}" in printed
    assert "most common mistakes" in printed and "67% (2/3)" in printed
    page = (folder / f"{ASSIGNMENT}.html").read_text()
    text = page_text(page)
    hidden = hidden_test_lines(SOURCE)
    assert len(hidden) > 20 and not [line for line in hidden if line in text]
    lines = cell_lines(SOURCE)
    assert all(lines[g][0] in text for g in POINTS)  # what the page does show
    assert page.count("data:image/png;base64,") == 2 and "<details class=names><summary>2 students" in page
    with open(folder / f"{ASSIGNMENT}.csv", newline="") as handle:
        rows = {r["grade_id"]: r for r in csv.DictReader(handle)}
    report = class_mistakes(graded.root, ASSIGNMENT)
    for mistake in report.mistakes:
        row = rows[mistake.grade_id]
        assert (int(row["ran"]), int(row["failed"]), int(row["not_run"])) == (3, len(mistake.failed), 2)
    assert rows["written_epsilon_zero"]["pending"] == "1"


@pytest.mark.pipeline
def test_grading_writes_the_report_next_to_grades_csv(graded, tmp_path, capsys):
    course = Course(Path(shutil.copytree(graded.root, tmp_path / "course", symlinks=True)))
    grades = tmp_path / "elsewhere" / "grades.csv"
    grades.parent.mkdir()
    main(["--course", str(course.root), "grade", "--student", "dee", "--workers", "1", "--csv", str(grades)])
    assert f"mistakes: {grades.parent / 'mistakes'}/<assignment>.html" in capsys.readouterr().out
    assert (grades.parent / "mistakes" / f"{ASSIGNMENT}.html").is_file()
    assert (grades.parent / "mistakes" / f"{ASSIGNMENT}.csv").is_file()


@pytest.mark.pipeline
def test_the_demo_labels_show_on_the_page(graded, tmp_path):
    labels = {("ada", ASSIGNMENT): "correct", ("bob", ASSIGNMENT): "empty", ("cy", ASSIGNMENT): "partial"}
    ((page, _),) = write_mistakes(graded.root, folder=tmp_path, labels=labels).values()
    text = page.read_text()
    assert "bob <span class=label>(empty)</span>" in text and "cy <span class=label>(partial)</span>" in text
    assert text.count("data:image/png;base64,") == 3  # the groups' grid too
