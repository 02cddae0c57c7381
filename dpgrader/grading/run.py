"""Grading a class, as the list of its steps.

:func:`grade_class` is what ``python -m dpgrader.classroom grade`` runs; :func:`run_grading` reads as
its steps, each a function of typed values (nothing calls back into the run):

1. **plan** (:func:`~dpgrader.grading.plan.plan_run`): the submissions found, those refused unread, one
   :class:`~dpgrader.grading.task.GradingTask` per submission, largest first (``--resume``: those not graded
   yet), packed as a worker gets them (:meth:`~dpgrader.grading.plan.Plan.packed`);
2. **grade on an engine** (:func:`~dpgrader.grading.preflight.grade_plan`): the pre-flight first, each
   assignment's reference solution graded on the same engine, the plan's tasks getting their time budget from
   it (:func:`~dpgrader.grading.preflight.preflight`); then the submissions' files as bytes to the workers
   (:meth:`~dpgrader.grading.engine.Engine.grade`), ``(task, result)`` pairs back;
3. **record** (:func:`~dpgrader.grading.merge.record`): each result reviewed and merged into the gradebook and
   the course's folders, as an outcome with its review flags;
4. **flag copies** (:func:`~dpgrader.grading.flagging.flag_copies`): the copy check, then every flag shown in
   formgrader;
5. **export** (:func:`~dpgrader.grading.export.export_run`): ``grading_outcomes.csv`` and ``grades.csv`` from
   the outcomes in memory; the command line then **reports** (the summary, the mistakes pages).
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dpgrader import sandbox
from dpgrader.course import Course
from dpgrader.grading.bundle import assignment_bundle
from dpgrader.grading.engine import Engine
from dpgrader.grading.export import GradeRow, export_run
from dpgrader.grading.flagging import Graded, flag_copies
from dpgrader.grading.merge import record, record_refused
from dpgrader.grading.plan import (  # noqa: F401 -- the first step, re-exported with the run
    PATTERN_CHARACTERS, Plan, Submission, class_limits, ensure_assignments, find_submissions, graded_before, plan_run,
)
from dpgrader.grading.preflight import grade_plan
from dpgrader.grading.task import AssignmentBundle
from dpgrader.outcomes import Outcome
from dpgrader.safe_output import one_line


def bundles_for(course: Course, plan: Plan) -> dict[str, AssignmentBundle]:
    """The gradebook knows every assignment of the run; each graded assignment's bundle for the workers."""
    ensure_assignments(course, plan.assignments)
    return {a: assignment_bundle(course, a) for a in sorted({t.assignment for t in plan.tasks})}


# --- the run ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GradingRun:
    """What a run gave: the outcome of each submission it graded, every outcome recorded (``grading_outcomes.csv``),
    and every row of ``grades.csv``."""

    outcomes: list[Outcome]
    recorded: dict  # (student, assignment) -> Outcome
    rows: list[GradeRow]


def grade_class(root: Path, assignments: list[str] | None = None, students: list[str] | None = None,
                **options) -> list[Outcome]:
    """Autograde every submission of ``root`` (a course folder) in parallel; return one outcome per submission.

    The outcomes of :func:`run_grading` (the same parameters).
    """
    return run_grading(root, assignments, students, **options).outcomes


def run_grading(
    root: Path | Course,
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
    engine: Engine | None = None,
) -> GradingRun:
    """Autograde every submission of a course on an engine; write ``grades.csv``; return the outcomes and rows.

    Parameters
    ----------
    root : Path or Course
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
    engine : Engine, optional
        Grade on this engine (default: the Dask cluster of ``scheduler``, else ``workers`` local processes).

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
    from nbgrader.api import Gradebook
    from tqdm.auto import tqdm

    from dpgrader.grading.cluster import ClusterLost

    worker_env = sandbox_for(sandboxed, scheduler)
    course = root if isinstance(root, Course) else Course(Path(root).resolve())
    plan = plan_run(course, assignments, students, class_limits(course, limits), feedback=feedback,
                    sandboxed=sandboxed, resume=resume)
    engine = engine or default_engine(scheduler, tls, workers, len(plan.tasks) + len({t.assignment for t in plan.tasks}),
                                      worker_env)
    graded: list[Graded] = []
    bundles: dict[str, AssignmentBundle] = {}
    lost = None
    course.grading_logs.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as run:
        if plan.tasks:
            run.enter_context(engine)  # the workers start (they take seconds) ...
        if plan.tasks or plan.refused:
            bundles = bundles_for(course, plan)  # ... while the gradebook learns the assignments
            gradebook = run.enter_context(Gradebook(course.gradebook_url))
        bar = run.enter_context(tqdm(total=len(plan.tasks), desc=f"grading on {engine.description}",
                                     unit="submission", disable=not progress))
        try:
            for task, result in grade_plan(engine, plan, bundles):  # the pre-flight first, then the class
                graded.append(record(gradebook, task, result))
                bar.set_postfix_str(one_line(f"{task.student}/{task.assignment}: {graded[-1].outcome.status}"),
                                    refresh=False)
                bar.update()
        except ClusterLost as error:
            lost = error
        graded += [record_refused(gradebook, outcome) for outcome in plan.refused]  # after the pre-flight passed
        if plan.tasks:
            engine.keep_logs(course.grading_logs)
    graded = flag_copies(course, sorted(graded, key=lambda g: (g.outcome.assignment, g.outcome.student)))
    outcomes = [g.outcome for g in graded]
    recorded, rows = export_run(course, plan.known, outcomes, csv_path or course.root / "grades.csv")
    if lost is not None:
        missing = len(plan.tasks) + len(plan.refused) - len(outcomes)
        raise type(lost)(f"{lost}: grading stopped; {len(outcomes)} submission(s) graded and kept, {missing} not "
                         "graded: run `grade --resume` to grade only those")
    return GradingRun(outcomes, recorded, rows)


def sandbox_for(sandboxed: bool, scheduler: str | None) -> dict[str, str]:
    """Check the sandbox (or warn that it is off); the environment the local workers get."""
    if sandboxed:
        os.environ.pop(sandbox.OPT_OUT_VARIABLE, None)
        if scheduler is None:  # on a cluster, each worker checks its own
            sandbox.require_sandbox()
        return {}
    warnings.warn("grading UNSANDBOXED (--no-sandbox): student code runs with the grader's rights",
                  RuntimeWarning, stacklevel=3)
    return {sandbox.OPT_OUT_VARIABLE: "1"}


def default_engine(scheduler: str | None, tls, workers: int | None, tasks: int, env: dict) -> Engine:
    """The Dask cluster of ``scheduler``, or local worker processes (at most one per task)."""
    if scheduler is not None:
        from dpgrader.grading.cluster import DaskEngine

        return DaskEngine(scheduler, tls)
    from dpgrader.grading.pool import PoolEngine

    return PoolEngine(min(workers or os.cpu_count() or 1, max(1, tasks)), env=env)


