"""Grading a class: find the submissions, grade each on the worker pool, flag copies.

:func:`grade_class` is what ``python -m dpgrader.classroom grade`` runs; the results
of the workers are merged into the course by :mod:`dpgrader.classroom.merge`.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
import warnings
from pathlib import Path

from dpgrader import sandbox
from dpgrader.classroom.export import export_grades
from dpgrader.classroom.merge import _record, _rmtree, merge
from dpgrader.classroom.preflight import PreflightFailed, preflight_problem, preflight_task, time_budget
from dpgrader.course import Course, assignments_in
from dpgrader.intake import irregular_entry
from dpgrader.outcomes import Outcome, Status, write_outcomes
from dpgrader.pool import run_tasks
# After grading, copies found across the class (dpgrader.similarity, see add_copy_flags).
from dpgrader.review import comment_in_gradebook
from dpgrader.safe_output import flag_text, one_line

# Characters nbgrader reads as a glob pattern in a student id (``x[1]`` would grade ``x1``).
PATTERN_CHARACTERS = re.compile(r"[*?\[\]\x00-\x1f]")


# --- the class ----------------------------------------------------------------------------------------


def find_submissions(root: Path, assignments=None, students=None) -> tuple[list[tuple[str, str]], list[Outcome]]:
    """``(student, assignment)`` of every submission folder in ``root/submitted``, sorted, and the refused ones.

    Folders are listed, never globbed: a student id is a name, not a pattern. Refused (with
    a :data:`~dpgrader.outcomes.Status.REFUSED` outcome, 0 points): a submission whose tree holds
    anything but plain files and folders (:func:`~dpgrader.intake.irregular_entry`: a link
    anywhere, a hard link, a device, a FIFO), and a student id nbgrader would read as a pattern.
    """
    root = Path(root)
    wanted = set(assignments) if assignments else set(assignments_in(root / "source"))
    found, refused = [], []
    submitted = root / "submitted"
    for student_dir in sorted(submitted.iterdir()) if submitted.is_dir() else []:
        student = student_dir.name
        if students and student not in students:
            continue
        for folder in sorted(student_dir.iterdir()) if student_dir.is_dir() else []:
            assignment = folder.name
            if assignment not in wanted:
                continue
            if not (folder.is_dir() or folder.is_symlink()):
                continue  # a stray file, not a submission
            irregular = irregular_entry(folder) if not student_dir.is_symlink() else "the student folder is a symbolic link"
            if irregular:
                refused.append(Outcome(student, assignment, Status.REFUSED,
                                       f"{irregular}: a submission holds regular files only; refused, it scores 0", 0.0))
            elif PATTERN_CHARACTERS.search(student):
                refused.append(Outcome(student, assignment, Status.REFUSED,
                                       "the student id has characters nbgrader reads as a pattern (*?[]): refused, "
                                       "rename the folder", 0.0))
            elif folder.is_dir():
                found.append((student, assignment))
    return found, refused


def ensure_assignments(course: Course, assignments) -> None:
    """Make sure the gradebook knows every assignment (``nbgrader generate_assignment`` if not)."""
    from nbgrader.api import Gradebook, MissingEntry

    missing = list(assignments)
    if (course.root / "gradebook.db").exists():
        missing = []
        with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
            for assignment in assignments:
                try:
                    if not gradebook.find_assignment(assignment).notebooks:
                        missing.append(assignment)
                except MissingEntry:
                    missing.append(assignment)
    for assignment in missing:
        course.nbgrader("generate_assignment", assignment, "--force")




def grade_class(
    root: Path,
    assignments: list[str] | None = None,
    students: list[str] | None = None,
    *,
    workers: int | None = None,
    feedback: bool = True,
    submission_timeout: float = 1800.0,
    progress: bool = True,
    csv_path: Path | None = None,
    sandboxed: bool = True,
    time_budget_factor: float = 10.0,
) -> list[Outcome]:
    """Autograde every submission of ``root`` (a course folder) in parallel; return one outcome per submission.

    Parameters
    ----------
    root : Path
        The course folder: ``nbgrader_config.py``, ``source/``, ``submitted/``.
    assignments, students : list of str, optional
        Restrict to these (default: every assignment in ``source/``, every student).
    workers : int, optional
        Worker processes (default: the number of cores).
    feedback : bool
        Also generate each graded submission's feedback into ``feedback/``.
    submission_timeout : float
        Seconds after which the grading of one submission is stopped (its worker and
        kernels killed). Cells have their own, shorter limit (``c.Execute.timeout``).
    csv_path : Path, optional
        Where to export the grades afterwards (default: ``root/grades.csv``).
    sandboxed : bool
        Run every kernel in :mod:`dpgrader.sandbox` (default). If bubblewrap cannot run,
        :class:`~dpgrader.sandbox.SandboxUnavailable` is raised before anything is
        graded; ``False`` grades unsandboxed (a warning; ``sandboxed=False`` in grades.csv).
    time_budget_factor : float
        Each submission's cells get this many times the reference solution's grading time
        (at least :data:`~dpgrader.classroom.preflight.MIN_TIME_BUDGET` s); past it, the later
        cells are not run (status ``time_budget``).

    Raises
    ------
    PreflightFailed
        If an assignment's reference solution, graded first in the same sandbox and pipeline,
        does not earn full marks (:mod:`dpgrader.classroom.preflight`): nobody is graded, no
        grade is written, and the message says which cell failed with which error.
    """
    from tqdm.auto import tqdm

    if sandboxed:
        os.environ.pop(sandbox.OPT_OUT_VARIABLE, None)
        sandbox.require_sandbox()
        worker_env = {}
    else:
        warnings.warn("grading UNSANDBOXED (--no-sandbox): student code runs with the grader's rights",
                      RuntimeWarning, stacklevel=2)
        worker_env = {sandbox.OPT_OUT_VARIABLE: "1"}
    course = Course(root)
    root = course.root.resolve()
    submissions, refused = find_submissions(root, assignments, students)
    workers = workers or os.cpu_count() or 1
    outcomes: list[Outcome] = []
    scratch_base = Path(tempfile.mkdtemp(prefix="dplib-grading-"))  # 0700, unguessable
    template = scratch_base / "template.db"
    tasks = [
        {
            "course": str(root), "assignment": assignment, "student": student, "feedback": feedback,
            "template_db": str(template), "submission": str(root / "submitted" / student / assignment),
            # one private, unguessable folder per submission, made here by the grader
            "scratch": str(Path(tempfile.mkdtemp(prefix="task-", dir=scratch_base)) / "course"),
            "token": secrets.token_hex(16), "sandboxed": sandboxed,
        }
        for student, assignment in submissions
    ]
    # Longest first (bigger notebooks run longer), so no worker is left with a long tail alone.
    tasks.sort(key=lambda task: -sum(p.stat().st_size for p in Path(task["submission"]).glob("*.ipynb")))
    # The pre-flight: each assignment's reference solution first, graded like a submission.
    first = [
        preflight_task({**task, "scratch": str(Path(tempfile.mkdtemp(prefix="task-", dir=scratch_base)) / "course"),
                        "token": secrets.token_hex(16)},
                       Path(tempfile.mkdtemp(prefix="reference-", dir=scratch_base)) / task["assignment"])
        for task in {task["assignment"]: task for task in tasks}.values()
    ]
    bar = tqdm(total=len(tasks), desc=f"grading on {min(workers, len(tasks) or 1)} workers", unit="submission",
               disable=not progress)
    opened: list = []

    def setup() -> None:
        """While the workers start: the gradebook knows every assignment; a template copy for the workers."""
        from nbgrader.api import Gradebook

        ensure_assignments(course, sorted({a for _, a in submissions} | {o.assignment for o in refused}))
        shutil.copy2(root / "gradebook.db", template)
        opened.append(Gradebook(f"sqlite:///{root / 'gradebook.db'}"))

    def on_preflight(task: dict, result: dict) -> None:
        problem = preflight_problem(root, task, result)
        _rmtree(Path(task["scratch"]).parent)
        if problem:
            log = Path(root) / "autograded" / "grading_logs" / f"preflight-{task['assignment']}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(problem + "\n\n" + str(result.get("log", "")))
            raise PreflightFailed(f"grading stopped before any grade was written: {problem} (log: {log})")
        budget = time_budget(float(result.get("seconds", 0.0)), time_budget_factor)
        for student_task in tasks:
            if student_task["assignment"] == task["assignment"]:
                student_task["time_budget"] = budget

    def on_result(task: dict, result: dict) -> None:
        student, assignment = task["student"], task["assignment"]
        result = {**result, "student": student, "assignment": assignment}
        gradebook = opened[0]
        try:
            outcome = _record(root, gradebook, task, result, feedback)
        except Exception as error:  # never let one submission stop the class
            gradebook.db.rollback()
            outcome = Outcome(student, assignment, Status.ERROR, f"could not record the result: {error!r}",
                              sandboxed=sandboxed)
        outcomes.append(outcome)
        _rmtree(Path(task["scratch"]).parent)
        bar.set_postfix_str(one_line(f"{student}/{assignment}: {outcome.status}"), refresh=False)
        bar.update()

    try:
        if tasks:
            run_tasks(tasks, workers, scratch_base, submission_timeout, on_result, setup, env=worker_env,
                      first=first, on_first=on_preflight)
        elif refused:
            setup()
        for outcome in refused:  # 0 points, recorded like any other outcome (after the pre-flight passed)
            merge(opened[0], {"student": outcome.student, "assignment": outcome.assignment, "status": outcome.status})
            outcomes.append(outcome)
        logs = root / "autograded" / "grading_logs"
        logs.mkdir(parents=True, exist_ok=True)
        for log in scratch_base.glob("worker-*.log"):
            shutil.copy2(log, logs / log.name)
    finally:
        bar.close()
        for gradebook in opened:
            gradebook.close()
        _rmtree(scratch_base)
    outcomes.sort(key=lambda o: (o.assignment, o.student))
    outcomes = add_copy_flags(root, outcomes)  # similarity reports and copy flags
    write_outcomes(root, outcomes)
    export_grades(root, csv_path or root / "grades.csv")
    return outcomes


def add_copy_flags(root: Path, outcomes: list[Outcome]) -> list[Outcome]:
    """Write ``similarity/<assignment>.html`` for each graded assignment; add copy flags to the outcomes and formgrader.

    Fails closed: when an assignment's similarity report cannot be made, every submission of
    that assignment is flagged ``"copy check: ... could not be made (<error>)"`` (its grades
    are kept); a submission the report could not compare is flagged by the report itself.
    """
    from dataclasses import replace

    from nbgrader.api import Gradebook

    from dpgrader.similarity import copy_flags, submission_times, write_report

    flags: dict = {}
    for assignment in sorted({o.assignment for o in outcomes}):
        try:
            flags.update(copy_flags(write_report(root, assignment)[1], submission_times(root, assignment)))
        except Exception as error:  # noqa: BLE001 -- the grades are kept; every submission is flagged with the reason
            failed = flag_text(f"copy check: the similarity report of {assignment} could not be made ({error!r}): a "
                               "person must compare these submissions")
            for outcome in outcomes:
                if outcome.assignment == assignment:
                    flags[outcome.student, assignment] = flags.get((outcome.student, assignment), ()) + (failed,)
    if flags:
        with Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gradebook:
            for (student, assignment), found in flags.items():
                names = [p.stem for p in (Path(root) / "source" / assignment).glob("*.ipynb")]
                # feedback leaves review notes out (HideReviewNotes); should one reach a student, it names no classmate
                hidden = [re.sub(r" matches the (earlier )?submission of .*? \(",
                                 lambda m: f" matches {'an earlier' if m[1] else 'another'} submission (", f) for f in found]
                comment_in_gradebook(gradebook, student, assignment, {name: hidden for name in sorted(names)[:1]})
    return [replace(o, flags=o.flags + flags.get((o.student, o.assignment), ())) for o in outcomes]

