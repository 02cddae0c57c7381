"""The grading run's typed spine: one task, one result, explicit severity, flags as values.

What crosses the worker's pipe is a :class:`GradingTask` or a :class:`GradingResult` turned into JSON
and back, equal to itself; a status is decided from typed problems, never from message text. The limits
the task carries are tested in ``test_limits.py``.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import nbformat
import pytest

from dpgrader import Course, sandbox
from dpgrader.course import REPO_ROOT
from dpgrader.limits import GradingLimits
from dpgrader.grading.task import AssignmentBundle, CellScore, GradingResult, GradingTask, NotebookResult, PackedTask
from dpgrader.grading.worker import grade, prepare
from dpgrader.outcomes import UNGRADED, ZERO, Effect, Flag, RowLabel, Status

ASSIGNMENT = "01_definition"
SOURCE = REPO_ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"


def _task(tmp_path: Path, **changes) -> GradingTask:
    course = Course.from_repo(tmp_path / "course", [ASSIGNMENT])
    submission = tmp_path / "handed_in"
    submission.mkdir(exist_ok=True)
    return dataclasses.replace(GradingTask(course.root, ASSIGNMENT, "ada", submission, "t0k3n"), **changes)


BUNDLE = AssignmentBundle(ASSIGNMENT, {"nbgrader_config.py": b"c = get_config()\n"})  # nothing here reaches nbgrader


# --- what crosses the pipe ----------------------------------------------------------------------------


def test_a_task_crosses_the_pipe_unchanged_and_carries_only_the_files_graded(tmp_path):
    task = _task(tmp_path).with_limits(notebook_seconds=42.5, memory_bytes=1 << 29)
    _write(task.submission, "a.ipynb", "{}")
    _write(task.submission, "timestamp.txt", "2026-11-26 01:00:00.000000 UTC")
    _write(task.submission, "numpy.py", "raise SystemExit")  # never reaches a worker
    (task.submission / "data").mkdir()
    (task.submission / "link.ipynb").symlink_to(SOURCE)
    packed = task.packed()
    assert set(packed.files) == {"a.ipynb", "timestamp.txt"}
    back = PackedTask.from_bytes(packed.to_bytes())
    assert back == packed and isinstance(back.limits, GradingLimits) and back.limits.notebook_seconds == 42.5
    assert str(tmp_path) not in packed.to_bytes().decode(), "no path of the instructor's travels"
    assert task.timeout == task.limits.submission_seconds
    assert dataclasses.replace(task, preflight=True).timeout == task.limits.preflight_seconds


def test_a_hard_link_is_left_out_of_a_students_task_not_out_of_the_reference(tmp_path):
    """A student's hard link to the instructor's notebook is refused; the notebook it points at, now with two links,
    is still the reference the pre-flight grades."""
    task = _task(tmp_path)
    source = Course(task.course).source(ASSIGNMENT) / SOURCE.name
    os.link(source, task.submission / "answers.ipynb")
    assert task.packed().files == {}
    reference = dataclasses.replace(task, submission=source.parent, preflight=True).packed()
    assert reference.files == {SOURCE.name: source.read_bytes()}


def test_a_result_crosses_the_pipe_unchanged(tmp_path):
    result = GradingResult(
        "t0k3n", Status.TIMED_OUT, ("ex1 timed out after 60 s",),
        {"nb": NotebookResult({"test_a": CellScore(2.0, False), "answer": CellScore(None, True)}, {"answer": None}, 1.5)},
        "2026-11-26T01:00:00", {"nb.ipynb": b"{}"}, {"nb.html": b"<html>\xff"}, 3.25, 1.5, "log", "host:1")
    back = GradingResult.from_bytes(result.to_bytes())
    assert back == result and back.status is Status.TIMED_OUT and back.feedback["nb.html"] == b"<html>\xff"
    assert back.notebooks["nb"].scores["answer"] == CellScore(None, True)
    assert AssignmentBundle.from_bytes(BUNDLE.to_bytes()) == BUNDLE and len(BUNDLE.digest) == 64


@pytest.mark.parametrize("line", ['[1, 2]', '"ok"', '{"token": "t"}', '{"token": "t", "status": "great"}', "not json",
                                  '{"token": "t", "status": "ok", "messages": [], "autograded": {"../x": ""}}',
                                  '{"token": "t", "status": "ok", "messages": [], "feedback": {"/etc/x": ""}}',
                                  '{"token": "t", "status": "ok", "messages": [], "student": "bo"}',
                                  '{"token": "t", "status": "ok", "messages": [], "seconds": "1e9"}',
                                  '{"token": "t", "status": "ok", "messages": [1]}',
                                  '{"token": 7, "status": "ok", "messages": []}',
                                  '{"token": "t", "status": "ok", "messages": [], "notebooks": {"nb": {"scores": {"a": '
                                  '{"auto_score": NaN, "needs_manual_grade": false}}, "comments": {}, "late_penalty": null}}}',
                                  '{"token": "t", "status": "ok", "messages": [], "notebooks": {"nb": {"scores": {"a": '
                                  '{"auto_score": "2", "needs_manual_grade": false}}, "comments": {}, "late_penalty": null}}}',
                                  '{"token": "t", "status": "ok", "messages": [], "notebooks": {"nb": []}}'])
def test_a_line_that_is_not_a_result_is_refused(line):
    with pytest.raises((ValueError, TypeError, KeyError)):
        GradingResult.from_bytes(line)


def test_tasks_and_results_are_frozen(tmp_path):
    with pytest.raises(dataclasses.FrozenInstanceError):
        _task(tmp_path).student = "bo"
    with pytest.raises(dataclasses.FrozenInstanceError):
        GradingResult("t", Status.OK).status = Status.ERROR


# --- a status from typed problems, not from message text ----------------------------------------------


def _write(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text)


@pytest.mark.parametrize(("handed_in", "status"), [
    ({}, Status.MISSING),
    ({"a.ipynb": "{ not json"}, Status.UNREADABLE),
    ({"a.ipynb": "x" * 4096}, Status.TOO_LARGE),
    ({"a.ipynb": "{ not json", "b.ipynb": "x" * 4096}, Status.TOO_LARGE),
])
def test_a_submission_with_nothing_gradable_gets_its_status_from_what_was_found(tmp_path, handed_in, status):
    """Nothing here names a status in a message the worker reads back: a refused notebook is a typed problem."""
    task = _task(tmp_path).with_limits(notebook_bytes=2048)
    for name, text in handed_in.items():
        _write(task.submission, name, text)
    result = grade(task.packed(), BUNDLE, tmp_path)
    assert (result.status, result.token) == (status, "t0k3n"), result
    assert len(result.messages) == max(1, len(handed_in)) and not result.notebooks and result.worker
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("task-")], "the scratch course is removed"


def test_prepare_names_each_notebook_left_out_with_its_status(tmp_path):
    task = _task(tmp_path).with_limits(notebook_bytes=2048)
    _write(task.submission, "big.ipynb", "x" * 4096)
    _write(task.submission, "broken.ipynb", "[1, 2]")
    nbformat.write(nbformat.read(str(SOURCE), as_version=4), str(task.submission / "fine.ipynb"))
    problems = prepare(task.with_limits(notebook_bytes=1 << 24).packed(), BUNDLE, Course(tmp_path / "one"))
    assert [status for status, _ in problems] == [Status.UNREADABLE, Status.UNREADABLE]  # big, broken; fine is kept
    problems = prepare(task.packed(), BUNDLE, Course(tmp_path / "two"))  # fine.ipynb is larger than 2048 bytes too
    assert [status for status, _ in problems] == [Status.TOO_LARGE, Status.TOO_LARGE, Status.UNREADABLE]
    assert any(message.startswith("big.ipynb is larger than 2048 bytes") for _, message in problems)
    with pytest.raises(ValueError, match="bundle of 02_laplace"):
        prepare(task.packed(), AssignmentBundle("02_laplace", {}), Course(tmp_path / "three"))


def test_a_task_is_graded_sandboxed_whatever_the_workers_environment_says(tmp_path, monkeypatch):
    monkeypatch.setenv(sandbox.OPT_OUT_VARIABLE, "1")  # a worker started with the opt-out
    grade(_task(tmp_path).packed(), BUNDLE, tmp_path)
    assert sandbox.OPT_OUT_VARIABLE not in os.environ


# --- severity and flags ---------------------------------------------------------------------------------


def test_severity_is_explicit_and_decides_the_worst():
    severities = [status.severity for status in Status]
    assert len(set(severities)) == len(severities), "two outcomes may not be equally bad"
    for first in Status:
        for second in Status:
            assert Status.worst(first, second).severity == max(first.severity, second.severity)
    assert Status.worst() is Status.OK and Status.OK.severity == min(severities)
    assert UNGRADED == (Status.ERROR, Status.WORKER_CRASHED, Status.KILLED)
    assert ZERO == (Status.MISSING, Status.UNREADABLE, Status.TOO_LARGE, Status.REFUSED)
    assert all(status.effect in Effect and status.meaning for status in Status)


def test_row_labels_are_not_outcomes():
    assert not set(RowLabel) & set(Status)
    for label in RowLabel:
        with pytest.raises(ValueError):
            Status(label.value)


def test_a_flag_is_a_value_made_text_only_for_people():
    flag = Flag("introspection", "reads the callers' frames; twice", "ex1", 3)
    assert str(flag) == "introspection: reads the callers' frames, twice (ex1, line 3)"  # one line, no ";"
    assert str(Flag.from_text(str(flag))) == str(flag)
    copy = Flag("copy", "ex1 matches the submission of ada (similarity 0.93)", "ex1",
                anonymous_reason="ex1 matches another submission (similarity 0.93)")
    assert "ada" in str(copy) and "ada" not in str(copy.anonymous())
    assert Flag("review", "no classmate here").anonymous() == Flag("review", "no classmate here")
