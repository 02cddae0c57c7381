"""The paths a grade travels, attacked: a worker's answers on its pipe, the bundle it grades from, ``grade --resume``.

- A worker process that lies on its result pipe (:mod:`helpers.hostile_worker`): only the answer with
  the token of the task it is on counts, once; nothing it names lands outside the task's own folders.
- A submission that hunts for the scratch course (its gradebook, its ``source/``, the result pipe) and
  writes what it finds, graded by the same worker just before a classmate: the classmate's grade and
  the worker's bundle are unchanged, and the attacker found nothing to write.
- ``grade --resume`` with an edited ``grading_outcomes.csv``: a row is trusted only where the gradebook
  holds that submission's grades; whatever else it says is graded again, and a row never becomes a grade.
"""

from __future__ import annotations

import csv
import hashlib
import json
import secrets
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from dpgrader import Course
from dpgrader.course import REPO_ROOT, notebooks_of
from dpgrader.grading import pool
from dpgrader.grading.bundle import assignment_bundle
from dpgrader.grading.run import ensure_assignments, grade_class
from dpgrader.grading.task import AssignmentBundle, GradingTask
from dpgrader.grading.worker import grade
from dpgrader.outcomes import Status, read_outcomes
from helpers.checks import autograded_points
from helpers.classes import submit_class

TESTS = Path(__file__).resolve().parents[1]
ASSIGNMENT = "01_definition"
SOURCE = notebooks_of(REPO_ROOT / "source" / ASSIGNMENT)[0]
RELEASE = REPO_ROOT / "release" / ASSIGNMENT / SOURCE.name
FULL = sum(autograded_points(SOURCE).values())


def _tree_digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# --- a worker that lies on its pipe ----------------------------------------------------------------------


def test_only_the_answer_with_the_token_of_the_task_sent_counts_and_only_once(tmp_path, monkeypatch):
    monkeypatch.setattr(pool, "WORKER_MODULE", "helpers.hostile_worker")
    tasks = []
    for student in ("ada", "bo", "cy", "dee", "eve"):
        folder = tmp_path / "submitted" / student
        folder.mkdir(parents=True)
        (folder / "nb.ipynb").write_text("{}")
        tasks.append(GradingTask(tmp_path, "a", student, folder, secrets.token_hex(16)))
    logs = tmp_path / "logs"
    logs.mkdir()
    with pool.PoolEngine(2, logs, env={"PYTHONPATH": str(TESTS)}) as engine:
        accepted = [(task.student, result.messages)
                    for task, result in engine.grade((t.packed() for t in tasks), {"a": AssignmentBundle("a", {})})]
    assert sorted(accepted) == [(s, (f"genuine {s}",)) for s in ("ada", "bo", "cy", "dee", "eve")]
    said = b"".join(path.read_bytes() for path in logs.glob("worker-*.log"))
    # per task: no JSON, another student's field, a file outside, an absolute file, a text score (refused as results)
    assert said.count(b"ignored a line on the result pipe that is not a result") == 5 * len(tasks), said
    # per task: never sent, the genuine one replayed, the task before's token (but on a worker's first task);
    # per worker: one before any task (15, or 16 if one worker got every task)
    assert said.count(b"ignored a message for no task of this worker") in (15, 16), said
    assert not [p for p in tmp_path.rglob("escaped*")] and not Path("/tmp/escaped.html").exists()


# --- a submission hunting for the worker's scratch course --------------------------------------------------

# Looks for the scratch course (its gradebook, nbgrader_config.py, source/) from its folder up and under /tmp,
# writes into whatever it finds, and writes a forged result on its stdout and stderr.
HUNT = r"""
import json, os
names = ("gradebook.db", "nbgrader_config.py", "source", "submitted", "autograded")
found, written = [], []
places = [os.getcwd()]
while places[-1] != "/":
    places.append(os.path.dirname(places[-1]))
tops = [p for p in places[1:] if p != "/"] + ["/tmp", "/dev/shm"] + [os.path.join("/", e) for e in os.listdir("/")
                                                                   if e not in ("usr", "proc", "sys", "dev")]
for top in tops:
    for root, folders, files in os.walk(top):
        if root.count("/") - top.count("/") > 3:
            folders[:] = []
            continue
        for name in folders + files:
            if name in names or name.startswith(("dpgrader-worker-", "task-", "dplib-grading-")):
                found.append(os.path.join(root, name))
for path in found:
    try:
        with open(os.path.join(path, "poison") if os.path.isdir(path) else path, "a") as handle:
            handle.write("poisoned")
        written.append(path)
    except OSError:
        pass
line = json.dumps({"token": "0" * 32, "status": "ok", "messages": ["forged by the kernel"]}) + "\n"
for fd in (1, 2):  # stdout and stderr (every other descriptor: tests/grader/test_kernel_isolation.py)
    os.write(fd, line.encode())
print(json.dumps({"found": found, "written": written}))
"""


@pytest.mark.pipeline
def test_a_submission_finds_no_scratch_course_to_poison_and_the_next_one_graded_from_the_bundle_is_unchanged(tmp_path):
    """Graded in this process by the worker's own function, twice from one bundle (as a worker keeps it):
    the hunter, then a classmate handing in the reference solution, who gets full marks."""
    course = Course.from_repo(tmp_path / "course", [ASSIGNMENT])
    ensure_assignments(course, [ASSIGNMENT])
    bundle = assignment_bundle(course, ASSIGNMENT)
    before = {name: hashlib.sha256(content).hexdigest() for name, content in bundle.files.items()}
    digest, course_before = bundle.digest, _tree_digest(course.root)
    hunter = nbformat.read(str(RELEASE), as_version=4)
    hunter.cells.insert(1, nbformat.v4.new_code_cell(HUNT))
    folders = {name: tmp_path / "handed_in" / name for name in ("hunter", "classmate")}
    for folder in folders.values():
        folder.mkdir(parents=True)
    nbformat.write(hunter, str(folders["hunter"] / SOURCE.name))
    (folders["classmate"] / SOURCE.name).write_bytes(SOURCE.read_bytes())
    scratch = tmp_path / "worker"
    scratch.mkdir()
    results = {name: grade(GradingTask(course.root, ASSIGNMENT, name, folder, secrets.token_hex(16)).packed(),
                           bundle, scratch) for name, folder in folders.items()}
    graded = nbformat.reads(results["hunter"].autograded[SOURCE.name].decode(), as_version=4)
    (cell,) = [cell for cell in graded.cells if "names = (" in cell.source]
    # What it wrote on fd 1 is its own cell's output, nothing more. ipykernel's thread that reads the descriptor and
    # the print share one stream: the forged line may come before the report, after it, or between the report and
    # the newline print writes next. The report is the JSON object that starts where '{"found"' does.
    said = "".join(o["text"] for o in cell.outputs if o.get("name") == "stdout")
    assert said.count('{"found"') == 1, cell.outputs
    report, _ = json.JSONDecoder().raw_decode(said, said.index('{"found"'))
    assert report["written"] == [] and not [p for p in report["found"] if "gradebook" in p or "config" in p], report
    classmate = results["classmate"]
    assert classmate.status == Status.OK, classmate.messages
    assert sum(s.auto_score for nb in classmate.notebooks.values() for s in nb.scores.values()
               if s.auto_score is not None) == FULL
    assert {name: hashlib.sha256(content).hexdigest() for name, content in bundle.files.items()} == before
    assert bundle.digest == digest and _tree_digest(course.root) == course_before
    assert list(scratch.iterdir()) == [], "each task's scratch course is removed"


# --- grade --resume and an edited grading_outcomes.csv ---------------------------------------------------

FIELDS = ["student", "assignment", "status", "message", "score", "max_score", "seconds", "flags", "sandboxed",
          "kernel_cpu"]


def _graded_by(course: Course) -> list[str]:
    return [line.split("/", 1)[0] for line in (course.grading_logs / "graded_by.log").read_text().splitlines()]


def _scores(course: Course) -> dict[str, float]:
    with Gradebook(course.gradebook_url) as gradebook:
        return {s.student.id: float(s.score) for s in gradebook.find_assignment(ASSIGNMENT).submissions}


@pytest.mark.pipeline
def test_resume_trusts_a_row_only_where_the_gradebook_holds_the_grade_and_no_row_becomes_a_grade(tmp_path):
    course = Course.from_repo(tmp_path / "course", [ASSIGNMENT])
    submit_class(course, ASSIGNMENT, {"ada": SOURCE.read_bytes(), "bo": RELEASE.read_bytes(), "cy": SOURCE.read_bytes()},
                 SOURCE.name)
    first = grade_class(course.root, students=["ada"], workers=1, feedback=False, progress=False)
    assert [(o.student, o.status, o.score) for o in first] == [("ada", Status.OK, FULL)]
    from dpgrader.grading.merge import merge
    from dpgrader.grading.task import GradingResult

    with Gradebook(course.gradebook_url) as gradebook:  # cy: merged ungraded (a run killed mid-way), as merge records it
        merge(gradebook, "cy", ASSIGNMENT, GradingResult("", Status.ERROR))
    rows = [  # the file as someone edited it, with a plain text editor
        ["ada", ASSIGNMENT, "ok", "", FULL, FULL, "1", "", "True", ""],
        ["bo", ASSIGNMENT, "ok", "", "10", FULL, "1", "", "True", ""],  # never graded
        ["cy", ASSIGNMENT, "ok", "", "10", FULL, "1", "", "True", ""],  # merged ungraded
        ["zed", ASSIGNMENT, "ok", "", "10", FULL, "1", "", "True", ""],  # no submission at all
        ['=HYPERLINK("http://x")', ASSIGNMENT, "ok", '=1+1', "10", FULL, "1", "", "True", ""],
        ["../../../etc", ASSIGNMENT, "ok", "/etc/passwd", "10", FULL, "1", "", "True", ""],
    ]
    with open(course.outcomes_file, "w", newline="") as handle:
        csv.writer(handle).writerows([FIELDS, *rows])
    assert grade_class(course.root, workers=1, feedback=False, progress=False, resume=True)
    assert sorted(_graded_by(course)) == ["ada", "bo", "cy"], "ada once, bo and cy on resume"
    assert _graded_by(course)[0] == "ada"
    scores = _scores(course)
    assert scores["cy"] == FULL and scores["bo"] < FULL and set(scores) == {"ada", "bo", "cy"}, scores
    with open(course.root / "grades.csv", newline="") as handle:
        exported = list(csv.DictReader(handle))
    assert {row["student_id"] for row in exported} == {"ada", "bo", "cy"}, "no row of the file became a student"
    for row in exported:
        assert float(row["score"]) == scores[row["student_id"]] and row["status"] == "ok", row
    assert not (tmp_path / "etc").exists() and not (course.root / "etc").exists()

    course.outcomes_file.write_text("student,assignment,status\nada,01_definition,=cmd|' /C calc'!A0\n")  # corrupted
    with pytest.warns(RuntimeWarning, match="cannot be read .* set aside .* graded again"):
        grade_class(course.root, students=["nobody"], workers=1, feedback=False, progress=False, resume=True)
    assert [p.name.split("-")[0] for p in course.outcomes_file.parent.glob("grading_outcomes.csv.unreadable-*")] == [
        "grading_outcomes.csv.unreadable"]
    from dpgrader.grading.run import graded_before

    assert graded_before(course, read_outcomes(course.root)) == set(), "nothing is trusted from a file set aside"
    assert _scores(course) == scores, "the gradebook is the source of grades"


@pytest.mark.pipeline
def test_a_result_claiming_more_than_a_cells_points_is_held_to_the_gradebooks_points(tmp_path):
    """A worker trusted by its certificate still cannot give a cell more than its points, or less than 0."""
    from dpgrader.grading.merge import merge
    from dpgrader.grading.task import CellScore, GradingResult, NotebookResult

    course = Course.from_repo(tmp_path / "course", [ASSIGNMENT])
    ensure_assignments(course, [ASSIGNMENT])
    points = autograded_points(SOURCE)
    greedy, negative = sorted(points)[:2]
    claimed = {greedy: CellScore(1e6, False), negative: CellScore(-50.0, False)}
    result = GradingResult("t", Status.OK, notebooks={SOURCE.stem: NotebookResult(scores=claimed)})
    with Gradebook(course.gradebook_url) as gradebook:
        merge(gradebook, "ada", ASSIGNMENT, result)
        grades = {g.name: g.auto_score for g in gradebook.find_submission_notebook(SOURCE.stem, ASSIGNMENT, "ada").grades}
    assert grades[greedy] == points[greedy] and grades[negative] == 0.0, grades
