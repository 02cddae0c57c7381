"""Grading a class: find the submissions, grade each on the worker pool, flag copies.

:func:`grade_class` is what ``python -m dpgrader.classroom grade`` runs; the results
of the workers are merged into the course by :mod:`dpgrader.grading.merge`.
"""

from __future__ import annotations

import csv
import os
import re
import secrets
import shutil
import tempfile
import warnings
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from dpgrader import sandbox
from dpgrader.course import Course, notebooks_of
from dpgrader.grading.export import export_grades
from dpgrader.intake import irregular_entry
from dpgrader.ids import valid_student_id
from dpgrader.limits import GradingLimits
from dpgrader.grading.merge import merge, record, remove_tree
from dpgrader.grading.pool import run_tasks
from dpgrader.grading.preflight import PreflightFailed, preflight_problem, preflight_task
from dpgrader.grading.bundle import assignment_bundle
from dpgrader.grading.task import AssignmentBundle, GradingResult, GradingTask
from dpgrader.outcomes import Effect, Flag, Outcome, Status, read_outcomes, write_outcomes
# After grading, copies found across the class (dpgrader.similarity, see add_copy_flags).
from dpgrader.grading.review_comments import comment_in_gradebook
from dpgrader.safe_output import one_line

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
    course = Course(root)
    wanted = set(assignments) if assignments else set(course.assignments())
    found, refused = [], []
    submitted = course.submitted()
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
            elif not valid_student_id(student):  # dpgrader.ids: markup, patterns, "..", spaces
                refused.append(Outcome(student, assignment, Status.REFUSED,
                                       "the student id is not 1 to 128 of A-Z a-z 0-9 . _ @ - (not starting with . or -): "
                                       "refused, rename the folder", 0.0))
            elif folder.is_dir():
                found.append((student, assignment))
    return found, refused


def ensure_assignments(course: Course, assignments) -> None:
    """Make sure the gradebook knows every assignment (``nbgrader generate_assignment`` if not)."""
    from nbgrader.api import Gradebook, MissingEntry

    missing = list(assignments)
    if course.gradebook.exists():
        missing = []
        with Gradebook(course.gradebook_url) as gradebook:
            for assignment in assignments:
                try:
                    if not gradebook.find_assignment(assignment).notebooks:
                        missing.append(assignment)
                except MissingEntry:
                    missing.append(assignment)
    for assignment in missing:
        course.nbgrader("generate_assignment", assignment, "--force")


def class_limits(course: Course, overrides: Mapping[str, float] | None = None) -> GradingLimits:
    """The limits of a grading run: the course's ``c.GradingLimits`` (``nbgrader_config.py``), then ``overrides``."""
    return GradingLimits.from_config(course.config()).replace(**dict(overrides or {}))


def _tasks(course: Course, submissions: list[tuple[str, str]], limits: GradingLimits, feedback: bool,
           sandboxed: bool) -> list[GradingTask]:
    """One task per submission, each with a random token; largest first."""
    tasks = [
        GradingTask(course=course.root, assignment=assignment, student=student,
                    submission=course.submitted(student, assignment), token=secrets.token_hex(16), limits=limits,
                    feedback=feedback, sandboxed=sandboxed)
        for student, assignment in submissions
    ]
    # Longest first (bigger notebooks run longer), so no worker is left with a long tail alone.
    return sorted(tasks, key=lambda task: -sum(p.stat().st_size for p in notebooks_of(task.submission)))


def grade_class(
    root: Path,
    assignments: list[str] | None = None,
    students: list[str] | None = None,
    *,
    workers: int | None = None,
    feedback: bool = True,
    limits: Mapping[str, float] | None = None,
    progress: bool = True,
    csv_path: Path | None = None,
    sandboxed: bool = True,
    scheduler: str | None = None,
    tls=None,
    resume: bool = False,
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
    limits : mapping of str to float, optional
        Limits to change for this run, by :class:`~dpgrader.limits.GradingLimits` name
        (``{"submission_seconds": 600}``); the others are the course's (``c.GradingLimits`` in
        ``nbgrader_config.py``) or the defaults. Each submission's ``notebook_seconds`` is then set
        from its reference solution's grading time (``time_budget_factor``).
    csv_path : Path, optional
        Where to export the grades afterwards (default: ``root/grades.csv``).
    sandboxed : bool
        Run every kernel in :mod:`dpgrader.sandbox` (default). If bubblewrap cannot run,
        :class:`~dpgrader.sandbox.SandboxUnavailable` is raised before anything is
        graded; ``False`` grades unsandboxed (a warning; ``sandboxed=False`` in grades.csv).
    scheduler : str, optional
        Grade on the Dask cluster of this scheduler (``tls://host:8786``; ``tcp://`` on this machine
        only) instead of local worker processes (:mod:`dpgrader.grading.cluster`); each worker checks
        its own sandbox. ``tls`` is its ``distributed.security.Security`` (None: Dask's configuration).
    resume : bool
        Grade only the submissions without a grading outcome yet (or whose outcome is ``error``,
        ``worker_crashed`` or ``killed``): after a run that stopped midway. A recorded outcome counts only
        where the gradebook holds that submission's scores (:func:`graded_before`); an unreadable
        ``grading_outcomes.csv`` is set aside (a warning) and nothing of it trusted.

    Raises
    ------
    PreflightFailed
        If an assignment's reference solution, graded first in the same sandbox and pipeline,
        does not earn full marks (:mod:`dpgrader.grading.preflight`): nobody is graded, no
        grade is written, and the message says which cell failed with which error.
    ValueError
        If ``limits`` names an unknown limit or a value that is not positive.
    dpgrader.grading.cluster.ClusterLost
        If the scheduler cannot be reached, or stops answering midway: what was graded is merged,
        recorded and exported, and the message says how many are missing (``resume=True`` grades them).
    """
    from tqdm.auto import tqdm

    if sandboxed:
        os.environ.pop(sandbox.OPT_OUT_VARIABLE, None)
        if scheduler is None:  # on a cluster, each worker checks its own
            sandbox.require_sandbox()
        worker_env = {}
    else:
        warnings.warn("grading UNSANDBOXED (--no-sandbox): student code runs with the grader's rights",
                      RuntimeWarning, stacklevel=2)
        worker_env = {sandbox.OPT_OUT_VARIABLE: "1"}
    course = Course(Path(root).resolve())
    run_limits = class_limits(course, limits)
    submissions, refused = find_submissions(course.root, assignments, students)
    known = _readable_outcomes(course)
    if resume:
        done = graded_before(course, known)
        submissions = [(student, assignment) for student, assignment in submissions if (student, assignment) not in done]
        refused = [o for o in refused if (o.student, o.assignment) not in done]
    workers = workers or os.cpu_count() or 1
    outcomes: list[Outcome] = []
    scratch_base = Path(tempfile.mkdtemp(prefix="dplib-grading-"))  # 0700, unguessable
    tasks = _tasks(course, submissions, run_limits, feedback, sandboxed)
    # The pre-flight: each assignment's reference solution first, graded like a submission.
    first = [preflight_task(task, secrets.token_hex(16)) for task in {task.assignment: task for task in tasks}.values()]
    bundles: dict[str, AssignmentBundle] = {}
    bar = tqdm(total=len(tasks), desc=f"grading on {min(workers, len(tasks) or 1)} workers", unit="submission",
               disable=not progress)
    opened: list = []

    def setup() -> None:
        """While the workers start: the gradebook knows every assignment; each assignment's bundle for the workers."""
        from nbgrader.api import Gradebook

        ensure_assignments(course, sorted({a for _, a in submissions} | {o.assignment for o in refused}))
        bundles.update({a: assignment_bundle(course, a) for a in sorted({a for _, a in submissions})})
        opened.append(Gradebook(course.gradebook_url))

    def on_preflight(task: GradingTask, result: GradingResult) -> list[GradingTask]:
        """Stop if the reference did not earn full marks; else give its assignment's tasks their time budget."""
        problem = preflight_problem(task, result)
        if problem:
            log = course.grading_logs / f"preflight-{task.assignment}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(problem + "\n\n" + result.log)
            raise PreflightFailed(f"grading stopped before any grade was written: {problem} (log: {log})")
        budget = task.limits.time_budget(result.seconds)
        tasks[:] = [replace(t, limits=budget) if t.assignment == task.assignment else t for t in tasks]
        return list(tasks)  # no submission starts before every pre-flight is in

    def on_result(task: GradingTask, result: GradingResult) -> None:
        gradebook = opened[0]
        try:
            outcome = record(course, gradebook, task, result)
        except Exception as error:  # never let one submission stop the class
            gradebook.db.rollback()
            outcome = Outcome(task.student, task.assignment, Status.ERROR, f"could not record the result: {error!r}",
                              sandboxed=sandboxed)
        outcomes.append(outcome)
        with open(course.grading_logs / "graded_by.log", "a") as log:  # who graded what, for the instructor
            log.write(one_line(f"{task.student}/{task.assignment}: {outcome.status} by {result.worker or 'the grader'} "
                               f"in {result.seconds:.1f} s") + "\n")
        bar.set_postfix_str(one_line(f"{task.student}/{task.assignment}: {outcome.status}"), refresh=False)
        bar.update()

    course.grading_logs.mkdir(parents=True, exist_ok=True)
    lost = None
    try:
        if tasks and scheduler is not None:
            lost = _run_on_cluster(scheduler, tls, tasks, on_result, bundles.__getitem__, setup, first, on_preflight,
                                   bar)
        elif tasks:
            run_tasks(tasks, workers, scratch_base, on_result, bundles.__getitem__, setup, env=worker_env,
                      first=first, on_first=on_preflight)
        elif refused:
            setup()
        for outcome in refused:  # 0 points, recorded like any other outcome (after the pre-flight passed)
            if valid_student_id(outcome.student):  # a folder name that is no id stays out of the gradebook
                merge(opened[0], outcome.student, outcome.assignment, GradingResult("", outcome.status))
            outcomes.append(outcome)
        course.grading_logs.mkdir(parents=True, exist_ok=True)
        for log in scratch_base.glob("worker-*.log"):
            shutil.copy2(log, course.grading_logs / log.name)
    finally:
        bar.close()
        for gradebook in opened:
            gradebook.close()
        remove_tree(scratch_base)
    outcomes.sort(key=lambda o: (o.assignment, o.student))
    outcomes = add_copy_flags(course.root, outcomes)  # similarity reports and copy flags
    write_outcomes(course.root, outcomes)
    export_grades(course.root, csv_path or course.root / "grades.csv")
    if lost is not None:
        missing = len(tasks) + len(refused) - len(outcomes)
        raise type(lost)(f"{lost}: grading stopped; {len(outcomes)} submission(s) graded and kept, {missing} not "
                         "graded: run `grade --resume` to grade only those")
    return outcomes


def _readable_outcomes(course: Course) -> dict:
    """The outcomes recorded so far; a file that cannot be read is set aside (with a warning), never trusted."""
    try:
        return read_outcomes(course.root)
    except (ValueError, KeyError, TypeError, AttributeError, csv.Error, UnicodeDecodeError) as error:
        path = course.outcomes_file
        aside = path.with_name(f"{path.name}.unreadable-{secrets.token_hex(4)}")
        path.rename(aside)
        warnings.warn(f"{path} cannot be read ({type(error).__name__}: {one_line(str(error))[:200]}): set aside as "
                      f"{aside.name}; with --resume every submission is graded again", RuntimeWarning, stacklevel=3)
        return {}


def graded_before(course: Course, known: Mapping) -> set[tuple[str, str]]:
    """The ``(student, assignment)`` that ``grade --resume`` leaves alone: graded, by the gradebook's word.

    ``known`` are the rows of ``grading_outcomes.csv``, a file anyone may edit; a row counts only if its
    status is one of a graded submission and the gradebook holds that submission with a score (an
    autograder's or a person's) in at least one of its cells. Anything else (a row saying ``ok`` for a
    submission never merged, or merged ungraded) is graded again. A row is never a grade: grades come
    from the gradebook only.
    """
    from nbgrader.api import Gradebook, MissingEntry

    claimed = [key for key, outcome in known.items() if outcome.status.effect is not Effect.UNGRADED]
    if not claimed or not course.gradebook.exists():
        return set()
    done = set()
    with Gradebook(course.gradebook_url) as gradebook:
        for student, assignment in claimed:
            try:
                submission = gradebook.find_submission(assignment, student)
            except MissingEntry:
                continue
            grades = [grade for notebook in submission.notebooks for grade in notebook.grades]
            if grades and any(g.auto_score is not None or g.manual_score is not None for g in grades):
                done.add((student, assignment))
    return done


def _run_on_cluster(scheduler: str, tls, tasks, on_result, bundle_of, setup, first, on_first, bar):
    """Grade on the Dask cluster of ``scheduler``; return the :class:`ClusterLost` that stopped it, or None."""
    from dpgrader.grading.cluster import ClusterLost, connect, run_on_cluster

    client = connect(scheduler, tls)
    try:
        services = client.scheduler_info().get("services", {})
        dashboard = client.dashboard_link if "dashboard" in services else "none (the scheduler runs without one)"
        bar.write(f"grading on the Dask cluster at {scheduler}: {sum(client.nthreads().values())} worker thread(s); "
                  f"dashboard: {dashboard}")
        bar.set_description(f"grading on {scheduler}")
        run_on_cluster(client, tasks, on_result, bundle_of, setup, first, on_first)
    except ClusterLost as error:
        return error
    finally:
        client.close()
    return None


def add_copy_flags(root: Path, outcomes: list[Outcome]) -> list[Outcome]:
    """Write ``similarity/<assignment>.html`` for each graded assignment; add copy flags to the outcomes and formgrader.

    Fails closed: when an assignment's similarity report cannot be made, every submission of
    that assignment is flagged ``"copy check: ... could not be made (<error>)"`` (its grades
    are kept); a submission the report could not compare is flagged by the report itself.
    """
    from nbgrader.api import Gradebook

    from dpgrader.similarity import copy_flags, submission_times, write_report

    flags: dict = {}
    for assignment in sorted({o.assignment for o in outcomes}):
        try:
            flags.update(copy_flags(write_report(root, assignment)[1], submission_times(root, assignment)))
        except Exception as error:  # noqa: BLE001 -- the grades are kept; every submission is flagged with the reason
            failed = Flag("copy check", f"the similarity report of {assignment} could not be made ({error!r}): a "
                                        "person must compare these submissions")
            for outcome in outcomes:
                if outcome.assignment == assignment:
                    flags[outcome.student, assignment] = flags.get((outcome.student, assignment), ()) + (failed,)
    if flags:
        course = Course(root)
        with Gradebook(course.gradebook_url) as gradebook:
            for (student, assignment), found in flags.items():
                names = [p.stem for p in notebooks_of(course.source(assignment))]
                # feedback leaves review notes out (HideReviewNotes); the comment shows each flag naming no classmate
                comment_in_gradebook(gradebook, student, assignment, {name: found for name in sorted(names)[:1]})
    return [replace(o, flags=o.flags + flags.get((o.student, o.assignment), ())) for o in outcomes]

