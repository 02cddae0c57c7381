"""Every failure mode of NBGRADER_NOTES, graded through the course's real pipeline, with the outcome it promises.

One course (01_definition), one class of hostile and broken students, graded in one run of
``dpgrader.classroom.grade_class`` on two workers (per-cell time limit cut to 5 s so the
infinite loops stay cheap). Each test below checks one student's scores and outcome; the last
ones check that nobody's grade or submission suffered from anybody else.
"""

from __future__ import annotations

import copy
import hashlib
import shutil
from pathlib import Path

import nbformat
import pytest

from dpgrader import Course, notebooks_of
from dpgrader.classroom import grade_class
from helpers.checks import autograded_points
from helpers.classes import submit_class
from dpgrader.course import REPO_ROOT

pytestmark = pytest.mark.xdist_group("grading_failure_modes")  # one worker grades the module's class once

ASSIGNMENT = "01_definition"
SOURCE = notebooks_of(REPO_ROOT / "source" / ASSIGNMENT)[0]
POINTS = autograded_points(SOURCE)  # grade_id -> points, from the notebook's metadata
CELL_TIMEOUT = 5

WRONG_UNIQUENESS = "def uniqueness(df, columns):\n    return 0.3"
ONE_SIDED_LOSS = (
    "def max_privacy_loss(p_d, p_d_prime):\n"
    "    return float(np.max(np.log(np.asarray(p_d) / np.asarray(p_d_prime))))"
)


def reference() -> nbformat.NotebookNode:
    return nbformat.read(str(SOURCE), as_version=4)


def cell(notebook, grade_id: str):
    return next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def drop(notebook, *grade_ids: str):
    notebook.cells = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") not in grade_ids]
    return notebook


def with_sources(**sources: str):
    notebook = reference()
    for grade_id, source in sources.items():
        cell(notebook, grade_id).source = source
    return notebook


def appended(grade_id: str, code: str):
    notebook = reference()
    cell(notebook, grade_id).source += "\n" + code
    return notebook


def warns():
    """Correct, but every function warns, divides by zero in numpy and prints to stderr when called."""
    noisy = "warnings.warn('is this right?'); np.log(np.zeros(1)); print('debug', file=sys.stderr)"
    notebook = reference()
    for grade_id in ("uniqueness_solution", "reidentify_solution", "max_privacy_loss_solution", "satisfies_dp_solution"):
        c = cell(notebook, grade_id)
        c.source = c.source.replace("### BEGIN SOLUTION", f"### BEGIN SOLUTION\n    {noisy}")
    c = cell(notebook, "uniqueness_solution")
    c.source = (
        "import sys\nimport warnings\nwith warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.warn('probe')\nprint('warnings seen:', len(seen))\n" + c.source
    )
    return notebook


def duplicated():
    notebook = reference()
    for grade_id in ("setup_imports_definition", "uniqueness_solution", "test_uniqueness"):
        original = cell(notebook, grade_id)
        twin = copy.deepcopy(original)
        twin["id"] = f"{grade_id[:20]}-copy"
        notebook.cells.insert(notebook.cells.index(original) + 1, twin)
    return notebook


def stripped_test():
    notebook = reference()
    del cell(notebook, "test_uniqueness").metadata["nbgrader"]
    return notebook


def bad_metadata():
    notebook = reference()
    cell(notebook, "test_uniqueness").metadata["nbgrader"]["schema_version"] = 1
    cell(notebook, "test_reidentify").metadata["nbgrader"]["points"] = 100
    cell(notebook, "uniqueness_solution").metadata["nbgrader"] = {"grade": "yes"}
    return notebook


def empty():
    notebook = reference()
    notebook.cells = []
    return notebook


STUDENTS = {
    "reference": reference(),
    "warns": warns(),
    "deleted_test": drop(reference(), "test_uniqueness"),
    "stripped_test": stripped_test(),
    "deleted_exercise_and_setup": drop(reference(), "setup_imports_definition", "uniqueness_solution", "test_uniqueness"),
    "empty_notebook": empty(),
    "edited_test": with_sources(test_uniqueness="pass", uniqueness_solution=WRONG_UNIQUENESS),
    "duplicated_cells": duplicated(),
    "bad_metadata": bad_metadata(),
    "infinite_loop": appended("uniqueness_solution", "while True:\n    pass"),
    "hangs_in_test": appended(
        "differencing_attack_solution", "def differencing_attack(df, name):\n    while True:\n        pass"
    ),
    "ignores_interrupt": appended(
        "satisfies_dp_solution",
        "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass",
    ),
    "kernel_dies": appended("max_privacy_loss_solution", "import os\nos._exit(1)"),
    "corrupted": None,  # written as truncated JSON below
    "monkeypatches_builtins_and_numpy": with_sources(
        uniqueness_solution="import builtins\nbuiltins.abs = lambda x: 0\nnp.allclose = lambda *a, **k: True\n"
        "np.isclose = lambda *a, **k: True\n" + WRONG_UNIQUENESS,
        max_privacy_loss_solution=ONE_SIDED_LOSS,
    ),
    "rebinds_test_helpers": with_sources(
        uniqueness_solution="check_close = lambda *a, **k: None\n" + WRONG_UNIQUENESS,
    ),
    "patches_while_called": with_sources(
        reidentify_solution='''class AlwaysEqual(list):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    def __contains__(self, item):
        return False
def reidentify(deidentified, auxiliary, keys):
    import builtins
    builtins.sorted = lambda *a, **k: AlwaysEqual()
    return deidentified.merge(auxiliary[list(keys) + ["Name"]], on=list(keys))''',
    ),
    "patches_math": with_sources(
        uniqueness_solution="import math\nmath.log = lambda x: 0.0\nmath.inf = 0.0\n" + WRONG_UNIQUENESS,
        max_privacy_loss_solution="def max_privacy_loss(p_d, p_d_prime):\n    return 0.0",
    ),
    "fakes_partial_credit": with_sources(
        uniqueness_solution="import sys\ndef uniqueness(df, columns):\n    sys.displayhook(2.0)\n    return 0.3",
    ),
    "hooks_ipython": with_sources(
        uniqueness_solution="get_ipython().set_custom_exc((Exception,), lambda *a, **k: None)\n"
        "get_ipython().input_transformers_cleanup.append(\n"
        "    lambda lines: ['pass\\n'] if lines and 'Check that' in lines[0] else lines)\n" + WRONG_UNIQUENESS,
    ),
    "delegates_to_dplib": with_sources(
        uniqueness_solution="uniqueness = dplib.uniqueness",
        reidentify_solution="from dplib import reidentify",
        differencing_attack_solution="def differencing_attack(df, name):\n    return dplib.differencing_attack(df, name)",
        max_privacy_loss_solution="max_privacy_loss = dplib.max_privacy_loss",
        satisfies_dp_solution="satisfies_dp = dplib.satisfies_dp",
    ),
    # the course from the kernel's folder (autograded/<student>/<assignment>) when unsandboxed; not the whole
    # filesystem the sandbox shows at '../../..' ('/'): walking it took 2.4-6 s against the 5 s cell limit
    "vandal": appended("uniqueness_solution", "import os, shutil\nfor part in ('submitted', 'source', 'autograded', "
                       "'release', 'feedback'):\n    shutil.rmtree(os.path.join('../../..', part), ignore_errors=True)\n"
                       "for name in ('gradebook.db', 'nbgrader_config.py'):\n    try:\n"
                       "        os.remove(os.path.join('../../..', name))\n    except OSError:\n        pass"),
}


def _digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = Course.from_repo(tmp_path_factory.mktemp("failure_modes"), [ASSIGNMENT])
    with open(course.root / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.GradingLimits.cell_seconds = {CELL_TIMEOUT}\n")
    course.generate_assignment(ASSIGNMENT)
    text = SOURCE.read_text()
    submit_class(course, ASSIGNMENT, {student: text[: len(text) // 2] if notebook is None else notebook  # cut in half
                                      for student, notebook in STUDENTS.items()}, SOURCE.name)
    before = _digest(course.root / "submitted")
    outcomes = {o.student: o for o in grade_class(course.root, workers=2, feedback=False, progress=False)}
    return course, outcomes, before


def scores(graded, student: str) -> dict[str, float | None]:
    course, _, _ = graded
    (grades,) = course.grades(ASSIGNMENT, student).values()
    return {g.grade_id: g.auto_score for g in grades if g.grade_id in POINTS}


def assert_scores(graded, student: str, zero=(), status="ok"):
    """Full marks on every test but ``zero``, which must score 0; and the given outcome."""
    expected = {grade_id: 0.0 if grade_id in zero else points for grade_id, points in POINTS.items()}
    assert scores(graded, student) == expected, graded[1][student]
    assert graded[1][student].status == status, graded[1][student]


def autograded_notebook(graded, student: str) -> nbformat.NotebookNode:
    course, _, _ = graded
    return nbformat.read(str(course.root / "autograded" / student / ASSIGNMENT / SOURCE.name), as_version=4)


@pytest.mark.pipeline
def test_reference_gets_full_marks(graded):
    assert_scores(graded, "reference")


@pytest.mark.pipeline
def test_a_correct_answer_that_warns_keeps_full_marks(graded):
    assert_scores(graded, "warns")
    # Warnings are really emitted in the grading kernel (no blanket filter hides them).
    solution = cell(autograded_notebook(graded, "warns"), "uniqueness_solution")
    assert "warnings seen: 1" in "".join(o.get("text", "") for o in solution.outputs)


@pytest.mark.pipeline
@pytest.mark.parametrize("student", ["deleted_test", "stripped_test"])
def test_a_deleted_or_stripped_test_cell_comes_back_and_is_scored(graded, student):
    assert_scores(graded, student)
    assert cell(autograded_notebook(graded, student), "test_uniqueness").outputs == []  # ran, passed


@pytest.mark.pipeline
def test_deleted_setup_and_exercise_cells_do_not_stop_the_grading(graded):
    assert_scores(graded, "deleted_exercise_and_setup", zero=["test_uniqueness"])
    assert_scores(graded, "empty_notebook", zero=list(POINTS))


@pytest.mark.pipeline
def test_an_edited_test_cell_is_restored(graded):
    assert_scores(graded, "edited_test", zero=["test_uniqueness"])
    assert "BEGIN HIDDEN TESTS" in cell(autograded_notebook(graded, "edited_test"), "test_uniqueness").source


@pytest.mark.pipeline
def test_duplicated_or_hand_edited_cells_are_still_graded(graded):
    assert_scores(graded, "duplicated_cells")
    assert_scores(graded, "bad_metadata")
    course, _, _ = graded
    (grades,) = course.grades(ASSIGNMENT, "bad_metadata").values()
    assert {g.grade_id: g.max_score for g in grades}["test_reidentify"] == 3.0  # points come from the gradebook


@pytest.mark.pipeline
def test_an_infinite_loop_times_out_and_the_rest_is_graded(graded):
    assert_scores(graded, "infinite_loop", status="timed_out")
    assert_scores(graded, "hangs_in_test", zero=["test_differencing_attack"], status="timed_out")
    assert "timed out" in graded[1]["hangs_in_test"].message


@pytest.mark.pipeline
def test_a_dead_or_unresponsive_kernel_is_recorded_and_earlier_tests_count(graded):
    assert_scores(graded, "kernel_dies", zero=["test_max_privacy_loss", "test_satisfies_dp"], status="kernel_died")
    assert "kernel died in max_privacy_loss_solution" in graded[1]["kernel_dies"].message
    assert_scores(graded, "ignores_interrupt", zero=["test_satisfies_dp"], status="kernel_unresponsive")


@pytest.mark.pipeline
def test_a_corrupted_notebook_is_recorded_with_a_clear_message(graded):
    outcome = graded[1]["corrupted"]
    assert outcome.status == "unreadable"
    assert "01_definition.ipynb is not a readable notebook (NotJSONError" in outcome.message
    assert scores(graded, "corrupted") == {grade_id: 0.0 for grade_id in POINTS}


@pytest.mark.pipeline
@pytest.mark.parametrize(
    "student, zero",
    [
        # satisfies_dp keeps its points: it is graded with dplib's max_privacy_loss, so a wrong loss costs Exercise 4 only.
        ("monkeypatches_builtins_and_numpy", ["test_uniqueness", "test_max_privacy_loss"]),
        ("rebinds_test_helpers", ["test_uniqueness"]),
        ("patches_while_called", ["test_reidentify"]),
        ("patches_math", ["test_uniqueness", "test_max_privacy_loss"]),
        ("fakes_partial_credit", ["test_uniqueness"]),
        ("hooks_ipython", ["test_uniqueness"]),
    ],
)
def test_monkeypatching_does_not_make_a_wrong_answer_pass(graded, student, zero):
    assert_scores(graded, student, zero=zero)
    assert graded[1][student].flags, "tampering should be flagged for review"


@pytest.mark.pipeline
def test_delegating_to_dplib_earns_nothing(graded):
    assert_scores(graded, "delegates_to_dplib", zero=list(POINTS))
    assert any(str(f).startswith("delegates to dplib: uniqueness is dplib's own") for f in graded[1]["delegates_to_dplib"].flags)


@pytest.mark.pipeline
def test_no_submission_loses_another_students_grade_or_submission(graded):
    course, outcomes, before = graded
    assert set(outcomes) == set(STUDENTS), "every student has an outcome"
    assert _digest(course.root / "submitted") == before, "submitted/ must be left exactly as handed in"
    # `rm -rf ../../..` from the notebook: the sandbox shows it nothing above its own folder, so the
    # vandal (a correct answer) is graded like anyone else
    assert_scores(graded, "vandal")
    assert all(o.status != "error" for o in outcomes.values())


@pytest.mark.pipeline
def test_nbgrader_1083_comes_from_deduplicate_ids_and_sanitize_metadata_fixes_it(tmp_path):
    """Duplicated cells: nbgrader's DeduplicateIds leaves ``nbgrader: {}``, which CheckCellMetadata reads as schema 0."""
    from nbgrader.nbgraderformat import SchemaTooOldError
    from nbgrader.preprocessors import CheckCellMetadata, DeduplicateIds

    from dpgrader.preprocessors import SanitizeMetadata

    course = Course.from_repo(tmp_path, [ASSIGNMENT])
    course.generate_assignment(ASSIGNMENT)
    resources = {"nbgrader": {"notebook": SOURCE.stem, "assignment": ASSIGNMENT,
                              "db_url": f"sqlite:///{course.root / 'gradebook.db'}"}}
    plain, _ = DeduplicateIds().preprocess(duplicated(), resources)
    assert {} in [c.metadata.get("nbgrader") for c in plain.cells]
    with pytest.raises(SchemaTooOldError):  # reported as "old version of the nbgrader metadata format"
        CheckCellMetadata().preprocess(plain, resources)
    ours, _ = SanitizeMetadata().preprocess(duplicated(), resources)
    CheckCellMetadata().preprocess(ours, resources)
    ids = [c.metadata["nbgrader"]["grade_id"] for c in ours.cells if "nbgrader" in c.metadata]
    assert len(ids) == len(set(ids)) and "test_uniqueness" in ids
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_guard_puts_back_what_student_code_rebinds():
    """The snapshot behind the kernel guard, exercised in this process (no kernel)."""
    import builtins

    import numpy as np
    import pandas as pd

    from dpgrader.guard import Snapshot
    from dplib.testing import check_close

    user_ns = {"check_close": check_close, "answer": 42}
    snapshot = Snapshot(user_ns, {"check_close": check_close})
    originals = builtins.abs, np.allclose, pd.DataFrame.merge
    try:
        builtins.abs = lambda x: 0
        np.allclose = lambda *a, **k: True
        pd.DataFrame.merge = None
        user_ns["check_close"] = lambda *a, **k: None
        user_ns["answer"] = 43  # the student's own names are theirs
        np.brand_new_name = 1  # and so are new attributes
        restored = snapshot.restore()
    finally:
        builtins.abs, np.allclose, pd.DataFrame.merge = originals
        del np.brand_new_name
    assert {"builtins.abs", "numpy.allclose", "pandas.DataFrame.merge", "check_close"} <= set(restored)
    assert user_ns == {"check_close": check_close, "answer": 43}
    assert snapshot.restore() == [], "nothing left to restore"
