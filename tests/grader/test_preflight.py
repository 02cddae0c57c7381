"""Grading fails closed: a broken environment stops grading before any grade is written.

Each course here is broken the way a real one breaks (a library the kernel cannot import; a
grading guard that cannot be installed). Two honest students hand in the reference solution; the
class grader must grade neither of them, write no grade and no ``grades.csv``, and say in one
line which cell failed with which error. The command line exits non-zero with that line. The broken courses
are of the tiny assignment of ``helpers.tiny_assignment`` (what is tested is how a broken environment stops
the run, not what the cells compute).
"""

from __future__ import annotations

import subprocess
from dataclasses import replace
import sys

import nbformat
import pytest
from nbgrader.api import Gradebook, MissingEntry

from dpgrader import Course, notebooks_of
from dpgrader.classroom import grade_class
from dpgrader.limits import GradingLimits
from dpgrader.grading.preflight import PreflightFailed, preflight_problem
from dpgrader.grading.task import CellScore, GradingResult, GradingTask, NotebookResult
from dpgrader.course import REPO_ROOT, nbgrader_env
from dpgrader.outcomes import Status, TaskNotes
from dpgrader.preprocessors import GuardedExecute
from helpers.tiny_assignment import TINY, tiny_repo

pytestmark = pytest.mark.pipeline

ASSIGNMENT = "01_definition"
SOURCE = notebooks_of(REPO_ROOT / "source" / ASSIGNMENT)[0]
STUDENTS = ("ada", "bea")


def _broken_course(tmp_path, *, import_line: str = "", config_line: str = "") -> Course:
    """A course of the tiny assignment whose first test cell needs ``import_line``, or whose config ends with
    ``config_line``."""
    course = Course.from_repo(tmp_path / "course", [TINY], repo=tiny_repo(tmp_path / "repo"))
    source = course.root / "source" / TINY / f"{TINY}.ipynb"
    if import_line:
        notebook = nbformat.read(str(source), as_version=4)
        test = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_double")
        test.source = test.source.replace('"""\n', '"""\n' + import_line + "\n", 1)
        nbformat.write(notebook, str(source))
    if config_line:
        with open(course.root / "nbgrader_config.py", "a") as config:
            config.write("\n" + config_line + "\n")
    course.generate_assignment(TINY)
    for student in STUDENTS:
        folder = course.root / "submitted" / student / TINY
        folder.mkdir(parents=True)
        nbformat.write(nbformat.read(str(source), as_version=4), str(folder / source.name))
    return course


def _nothing_was_written(course: Course) -> None:
    assert not (course.root / "grades.csv").exists()
    assert not (course.root / "autograded" / "grading_outcomes.csv").exists()
    assert not [p for p in (course.root / "autograded").glob("*/*") if p.parent.name != "grading_logs"]
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        for student in STUDENTS:
            with pytest.raises(MissingEntry):
                gradebook.find_submission(TINY, student)


def test_a_library_the_kernel_cannot_import_stops_grading_with_the_cell_and_the_error(tmp_path):
    course = _broken_course(tmp_path, import_line="import no_such_course_library")
    with pytest.raises(PreflightFailed) as stopped:
        grade_class(course.root, workers=2, progress=False)
    said = str(stopped.value)
    assert said.startswith("grading stopped before any grade was written: 99_tiny: the reference solution scores 2/3 "
                           "in the grading sandbox; first error in 99_tiny.ipynb, test_double: ModuleNotFoundError: "
                           "No module named 'no_such_course_library' (log: "), said
    assert "\n" not in said
    _nothing_was_written(course)
    # the command line: exit 2, that one line on stderr, nothing on the grades
    run = subprocess.run([sys.executable, "-m", "dpgrader.classroom", "--course", str(course.root), "grade"],
                         capture_output=True, text=True, env=nbgrader_env(), timeout=600)
    assert run.returncode == 2, run.stderr[-2000:]
    assert "error: grading stopped before any grade was written" in run.stderr
    assert "no_such_course_library" in run.stderr.strip().splitlines()[-1]
    _nothing_was_written(course)


def test_a_guard_that_cannot_be_installed_is_an_error_never_ok(tmp_path):
    course = _broken_course(tmp_path, config_line='c.GuardedExecute.preload = ["no_such_module_for_the_guard"]')
    with pytest.raises(PreflightFailed, match=r"status error \(99_tiny: the grading guard could not "
                                              r"be installed \(ModuleNotFoundError: No module named "
                                              r"'no_such_module_for_the_guard'\)"):
        grade_class(course.root, workers=1, progress=False)
    _nothing_was_written(course)
    log = course.root / "autograded" / "grading_logs" / f"preflight-{TINY}.log"
    assert "Traceback" in log.read_text() and "no_such_module_for_the_guard" in log.read_text()


class _FailingKernel:
    """A kernel client whose every execution fails, as a kernel that cannot import the guard does."""

    def execute(self, code, **kwargs):
        return "msg-1"


def test_the_guard_failing_in_one_notebook_makes_it_an_error_and_runs_nothing(monkeypatch):
    executor = GuardedExecute()
    executor._notebook, executor._stopped = "x.ipynb", None
    executor.kc = _FailingKernel()
    reply = {"content": {"status": "error", "ename": "ImportError", "evalue": "cannot import dplib",
                         "traceback": ["Traceback", "ImportError: cannot import dplib"]}}
    monkeypatch.setattr(executor, "wait_for_reply", lambda msg_id: reply)
    notes = TaskNotes()
    with notes.collecting():
        executor._run_silently("install the guard")
    assert notes.notes == [(Status.ERROR, "x.ipynb: the grading guard could not be installed (ImportError: "
                                           "cannot import dplib): not graded, see the log")]
    cell = nbformat.v4.new_code_cell("print('student code')")
    executor._guard_code = None
    graded, _ = executor.preprocess_cell(cell, {}, 3)
    assert graded.outputs[0]["ename"] == "CellNotRun" and "guard could not be installed" in graded.outputs[0]["evalue"]


def _scored(points: dict[str, float]) -> GradingResult:
    return GradingResult("t", Status.OK, notebooks={
        SOURCE.stem: NotebookResult({g: CellScore(p, False) for g, p in points.items()})})


def test_a_reference_that_earns_full_marks_passes_and_sets_the_budget(tmp_path):
    course = Course.from_repo(tmp_path / "course", [ASSIGNMENT])
    task = GradingTask(course.root, ASSIGNMENT, "reference-preflight", course.source(ASSIGNMENT), "t", preflight=True)
    assert preflight_problem(task, _scored({"test_uniqueness": 2.0})) is not None  # the other tests' points are missing
    from helpers.checks import autograded_points
    assert preflight_problem(task, _scored(autograded_points(SOURCE))) is None
    limits = GradingLimits(time_budget_factor=10, min_notebook_seconds=30)
    assert limits.time_budget(2.0).notebook_seconds == 30.0 and limits.time_budget(12.0).notebook_seconds == 120.0
    assert task.timeout == limits.preflight_seconds and replace(task, preflight=False).timeout == limits.submission_seconds
