"""A submission notebook is read once, as nbgrader reads it (issue 29, item 3): intake, review, copy detection, grading.

:func:`dpgrader.intake.read_notebook` is ``nbformat.read(..., as_version=4)``, the call nbgrader makes
before grading. The review and the copy detection used to read the raw JSON and look for a top-level
``cells`` list: the instructor's reference handed in as nbformat 3 (cells inside ``worksheets``)
raised no review and no copy flag, while the same code in format 4 was flagged.

The fast tests read notebooks only. One class, graded once by ``grade_class`` in the sandbox on two
workers, holds every other case: the reference as v4 and as v3, honest answers in a v4 file without
cell ids and with duplicated ids, and honest answers whose nbgrader metadata was edited (points, grade
flags, a grade_id, a checksum). For each, the review and the copy detection see exactly the cells
nbgrader graded (the autograded notebook), the v3 key is flagged exactly as the v4 key, and every grade
is what the answers earn.
"""

from __future__ import annotations

import copy
import json

import nbformat
import pytest
from helpers.checks import autograded_points
from helpers.classes import submit_class

from dpgrader import Course, notebooks_of
from dpgrader.classroom import grade_class
from dpgrader.simulation.own_way import own_way
from dpgrader.course import REPO_ROOT
from dpgrader.intake import UnreadableNotebook, read_notebook
from dpgrader.outcomes import Status
from dpgrader.review import review_flags, review_notebook, student_cells
from dpgrader.similarity import REFERENCE, find_matches, solution_cells

ASSIGNMENT = "01_definition"
SOURCE = notebooks_of(REPO_ROOT / "source" / ASSIGNMENT)[0]
POINTS = autograded_points(SOURCE)
FULL = sum(POINTS.values())
LONG = "max_privacy_loss_solution"  # the exercise of 01 long enough for the reference check (minimum_sizes)
KEY_FLAG = f"copy: {LONG} matches the instructor's reference solution (similarity 1.00)"


def _grade_id(cell) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def _v3_text(notebook: nbformat.NotebookNode) -> str:
    """``notebook`` written as nbformat 3 (its cells in one worksheet), as an old tool saves it."""
    return nbformat.writes(nbformat.convert(copy.deepcopy(notebook), 3), version=3)


def _own_answers(seed: int) -> nbformat.NotebookNode:
    """The reference notebook with every solution rewritten as one student would write it (correct, her own)."""
    notebook = nbformat.read(str(SOURCE), as_version=4)
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = own_way(cell.source, rng=1000 * seed + index)
    return notebook


def _key_with(extra: str) -> nbformat.NotebookNode:
    notebook = nbformat.read(str(SOURCE), as_version=4)
    cell = next(c for c in notebook.cells if _grade_id(c) == LONG)
    cell.source += extra
    return notebook


# --- reading, without grading ---------------------------------------------------------------------------------------


def test_a_v3_notebook_is_the_same_notebook_as_its_v4(tmp_path):
    """The reference with a flagged line, as v3 and as v4: the same cells, the same review flags, the same copy match."""
    v4 = _key_with("\nimport gc")
    (tmp_path / "v3.ipynb").write_text(_v3_text(v4))
    nbformat.write(v4, str(tmp_path / "v4.ipynb"))
    assert json.loads((tmp_path / "v3.ipynb").read_text())["nbformat"] == 3
    assert "cells" not in json.loads((tmp_path / "v3.ipynb").read_text())  # the old review saw no cell at all
    read = {name: read_notebook(tmp_path / f"{name}.ipynb") for name in ("v3", "v4")}
    assert [(c.cell_type, c.source, c.metadata.get("nbgrader")) for c in read["v3"].cells] == [
        (c.cell_type, c.source, c.metadata.get("nbgrader")) for c in read["v4"].cells]
    assert student_cells(tmp_path / "v3.ipynb", SOURCE) == student_cells(tmp_path / "v4.ipynb", SOURCE)
    flags = review_flags(tmp_path / "v3.ipynb", SOURCE)
    assert flags == review_flags(tmp_path / "v4.ipynb", SOURCE) and any(f.kind == "introspection" for f in flags)
    matches = find_matches({"v3": tmp_path / "v3.ipynb", "v4": tmp_path / "v4.ipynb"}, SOURCE, ASSIGNMENT)
    assert {(m.student, m.grade_id) for m in matches if m.kind == REFERENCE} == {("v3", LONG), ("v4", LONG)}


def test_a_decoy_cells_list_beside_the_worksheets_is_ignored_as_nbgrader_ignores_it(tmp_path):
    """A v3 file whose worksheets hold the key and a ctypes cell, with the untouched release as a top-level
    ``cells`` list: nbformat's upgrade (and so grading) drops the decoy; the review and the copy check do too."""
    notebook = json.loads(_v3_text(_key_with("\nimport ctypes")))
    notebook["cells"] = nbformat.read(str(REPO_ROOT / "release" / ASSIGNMENT / SOURCE.name), as_version=4).cells
    (tmp_path / "decoy.ipynb").write_text(json.dumps(notebook))
    graded = read_notebook(tmp_path / "decoy.ipynb")
    assert any("import ctypes" in cell.source for cell in graded.cells)
    assert any("ctypes" in str(flag) for flag in review_flags(tmp_path / "decoy.ipynb", SOURCE))
    assert LONG in {m.grade_id for m in find_matches({"d": tmp_path / "decoy.ipynb"}, SOURCE) if m.kind == REFERENCE}


def test_what_nbformat_cannot_read_is_unreadable_everywhere(tmp_path):
    """A file nbformat refuses raises UnreadableNotebook (the grader's ``unreadable``, 0 points): no review flag,
    no copy match; one nbformat reads is reviewed, whatever its format says."""
    for name, text in {"json": "{not json", "list": "[1]", "v9": '{"nbformat": 9, "cells": []}',
                       "bad_v3": '{"nbformat": 3, "nbformat_minor": 0, "worksheets": 5, "metadata": {}}'}.items():
        (tmp_path / f"{name}.ipynb").write_text(text)
        with pytest.raises(UnreadableNotebook):
            read_notebook(tmp_path / f"{name}.ipynb")
        with pytest.raises(Exception):  # noqa: B017 -- the call nbgrader makes refuses it too
            nbformat.read(str(tmp_path / f"{name}.ipynb"), as_version=4)
        assert review_flags(tmp_path / f"{name}.ipynb", SOURCE) == ()
    with pytest.raises(UnreadableNotebook):
        review_notebook({"nbformat": 9, "cells": []})
    # JSON without a version is read by nbformat as format 1 and upgraded (nbgrader grades it: every cell missing)
    (tmp_path / "bare.ipynb").write_text('{"cells": [{"cell_type": "code", "source": "import gc"}]}')
    assert read_notebook(tmp_path / "bare.ipynb").nbformat == 4 and review_flags(tmp_path / "bare.ipynb", SOURCE) == ()


def test_a_solution_cell_without_its_metadata_is_still_compared():
    """A copier who removes a solution cell's nbgrader metadata (or renames its grade_id) is graded as before (the
    tests call the function wherever it is defined): the copy check finds the exercise by the names it defines."""
    for edit in ({"grade_id": "my_cell"}, None):
        notebook = nbformat.read(str(SOURCE), as_version=4)
        cell = next(c for c in notebook.cells if _grade_id(c) == LONG)
        if edit is None:
            del cell.metadata["nbgrader"]
        else:
            cell.metadata.nbgrader.update(edit)
        assert LONG in solution_cells(notebook, SOURCE)
        assert {m.grade_id for m in find_matches({"k": notebook}, SOURCE) if m.kind == REFERENCE} == {LONG}


# --- the class, graded once -----------------------------------------------------------------------------------------


def _edited(seed: int) -> nbformat.NotebookNode:
    """Honest answers whose nbgrader metadata was edited every way: points, grade flags, a grade_id, a checksum.

    - every test cell claims 100 points, the first also ``grade: false``, the last a new checksum;
    - the first solution cell claims to be a read-only cell (``solution: false, locked: true``) and holds a
      line the review flags: nbgrader rebuilds its metadata from the gradebook and runs it as the solution;
    - the long exercise is the reference's own code under a grade_id of the student's (graded as
      ordinary code): the copy check must still see the key.
    """
    notebook = _own_answers(seed)
    tests = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade")
             and c.cell_type == "code"]
    for cell in tests:
        cell.metadata.nbgrader["points"] = 100
    tests[0].metadata.nbgrader["grade"] = False
    tests[-1].metadata.nbgrader["checksum"] = "0" * 32
    solutions = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"]
    solutions[0].metadata.nbgrader.update(solution=False, locked=True)
    solutions[0].source += "\nimport gc"
    reference = {_grade_id(c): c.source for c in nbformat.read(str(SOURCE), as_version=4).cells}
    long = next(c for c in solutions if _grade_id(c) == LONG)
    long.source = reference[LONG]
    long.metadata.nbgrader["grade_id"] = "my_own_cell"
    return notebook


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One class on 01_definition, graded by grade_class on two workers, sandbox on (a few notebooks only)."""
    course = Course.from_repo(tmp_path_factory.mktemp("reading") / "course", [ASSIGNMENT])
    course.generate_assignment(ASSIGNMENT)
    key = nbformat.read(str(SOURCE), as_version=4)
    no_ids = json.loads(nbformat.writes(_own_answers(1)))
    for cell in no_ids["cells"]:
        del cell["id"]
    duplicated = json.loads(nbformat.writes(_own_answers(2)))
    for cell in duplicated["cells"]:
        cell["id"] = "same"
    texts = {"key_v4": nbformat.writes(key), "key_v3": _v3_text(key), "no_ids": json.dumps(no_ids),
             "duplicated_ids": json.dumps(duplicated), "edited": nbformat.writes(_edited(3))}
    submit_class(course, ASSIGNMENT, texts, SOURCE.name)
    outcomes = {o.student: o for o in grade_class(course.root, workers=2, progress=False)}
    return course, outcomes


def _score(course: Course, student: str) -> tuple[float, float]:
    (grades,) = course.grades(ASSIGNMENT, student).values()
    autograded = [g for g in grades if g.grade_id in POINTS]
    return sum(g.auto_score or 0.0 for g in autograded), sum(g.max_score for g in autograded)


@pytest.mark.pipeline
@pytest.mark.parametrize("student", ["key_v4", "key_v3", "no_ids", "duplicated_ids", "edited"])
def test_the_review_and_the_copy_check_see_the_cells_nbgrader_graded(graded, student):
    course, _ = graded
    submitted = course.root / "submitted" / student / ASSIGNMENT / SOURCE.name
    autograded = course.root / "autograded" / student / ASSIGNMENT / SOURCE.name
    assert student_cells(submitted, SOURCE) == student_cells(autograded, SOURCE)
    assert solution_cells(submitted, SOURCE) == solution_cells(autograded, SOURCE)
    assert solution_cells(submitted, SOURCE).keys() == solution_cells(SOURCE).keys()


@pytest.mark.pipeline
def test_the_key_handed_in_as_v3_is_graded_and_flagged_exactly_as_in_v4(graded):
    course, outcomes = graded
    assert _score(course, "key_v3") == _score(course, "key_v4") == (FULL, FULL)
    assert outcomes["key_v3"].status == outcomes["key_v4"].status == Status.OK
    assert KEY_FLAG in map(str, outcomes["key_v4"].flags)
    assert outcomes["key_v3"].flags == outcomes["key_v4"].flags


@pytest.mark.pipeline
def test_honest_answers_without_or_with_duplicated_cell_ids_earn_full_marks_and_no_flag(graded):
    course, outcomes = graded
    for student in ("no_ids", "duplicated_ids"):
        assert _score(course, student) == (FULL, FULL), student
        assert outcomes[student].status == Status.OK and outcomes[student].flags == (), outcomes[student]


@pytest.mark.pipeline
def test_edited_metadata_changes_no_grade_and_hides_no_code(graded):
    """Points, grade flags and checksum edits are undone by SanitizeMetadata; the code under a fake read-only
    flag is run and reviewed; the key under a renamed grade_id is run and found."""
    course, outcomes = graded
    assert _score(course, "edited") == (FULL, FULL)
    assert outcomes["edited"].status == Status.OK
    solutions = [_grade_id(c) for c in nbformat.read(str(SOURCE), as_version=4).cells
                 if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"]
    flags = [str(flag) for flag in outcomes["edited"].flags]
    assert any(f.startswith("introspection: walks live objects with gc") and f"({solutions[0]}, line" in f for f in flags), flags
    assert KEY_FLAG in flags, flags
