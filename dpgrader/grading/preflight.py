"""The pre-flight check: before anyone is graded, each assignment's reference solution is.

A broken environment (a kernel that cannot import the course's packages, a library missing, a
guard that cannot be installed, limits too tight for the course) fails every test of every
student alike, and each of them would get 0 with nothing to say it is not their fault. So the
class grader first grades each assignment's source notebook, the reference solution, as a
submission, in the same sandbox and pipeline. Unless it earns every autograded point with an
``ok`` outcome, grading stops before any grade is written (:class:`PreflightFailed`), with one
line an instructor can act on: which cell, which error. Its run time also sets the wall-clock
budget of every submission of that assignment (:meth:`~dpgrader.limits.GradingLimits.time_budget`).
:func:`grade_plan` is the run's step that grades: the pre-flight (:func:`preflight`: the plan in, the plan
with its tasks' budgets out), then the class, on the same engine.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path

import nbformat

from dpgrader.cells import cell_name, grade_id_of, is_grade, points
from dpgrader.course import notebooks_of
from dpgrader.grading.engine import Engine
from dpgrader.grading.plan import Plan
from dpgrader.grading.task import AssignmentBundle, GradingResult, GradingTask
from dpgrader.outcomes import Status

PREFLIGHT_STUDENT = "reference-preflight"


class PreflightFailed(RuntimeError):
    """The reference solution of an assignment did not earn full marks: nobody is graded."""


def grade_plan(engine: Engine, plan: Plan,
               bundles: Mapping[str, AssignmentBundle]) -> Iterator[tuple[GradingTask, GradingResult]]:
    """Grade the plan's tasks on ``engine``, each assignment's reference solution first (:func:`preflight`); yield
    ``(task, result)`` for each task, as they finish. A plan without tasks sends nothing (the engine need not run)."""
    if not plan.tasks:
        return
    plan = preflight(engine, plan, bundles)
    tasks = {task.token: task for task in plan.tasks}
    for packed, result in engine.grade(plan.packed(), bundles):
        yield tasks[packed.token], result


def preflight(engine: Engine, plan: Plan, bundles: Mapping[str, AssignmentBundle]) -> Plan:
    """Grade each assignment's reference solution on ``engine`` first; return ``plan`` with the time budget it set.

    Raises :class:`PreflightFailed` (its log kept in ``grading_logs/``) if a reference solution does not
    earn full marks: no submission is sent.
    """
    first = {a: preflight_task(t, secrets.token_hex(16)) for a, t in {t.assignment: t for t in plan.tasks}.items()}
    budgets = {}
    for packed, result in engine.grade((task.packed() for task in first.values()), bundles):
        task = first[packed.assignment]
        problem = preflight_problem(task, result)
        if problem:
            log = task.course.grading_logs / f"preflight-{task.assignment}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(problem + "\n\n" + result.log)
            raise PreflightFailed(f"grading stopped before any grade was written: {problem} (log: {log})")
        budgets[task.assignment] = task.limits.time_budget(result.seconds)
    return replace(plan, tasks=tuple(replace(t, limits=budgets[t.assignment]) for t in plan.tasks))


def preflight_task(task: GradingTask, token: str) -> GradingTask:
    """A grading task for the reference solution of ``task``'s assignment: its source notebooks, handed in.

    It may run ``limits.preflight_seconds`` (the reference is not held to a submission's time budget).
    """
    return replace(task, student=PREFLIGHT_STUDENT, submission=task.course.source(task.assignment),
                   token=token, feedback=False, preflight=True)


def autograded_points(notebook: Path) -> dict[str, float]:
    """``{grade_id: points}`` of the autograded test cells of a source notebook."""
    cells = nbformat.read(str(notebook), as_version=4).cells
    return {grade_id_of(cell): points(cell) or 0.0 for cell in cells if cell.cell_type == "code" and is_grade(cell)}


def _first_error(autograded: dict[str, bytes]) -> str:
    """``"<cell>: <Error>: <message>"`` of the first code cell with an error in the graded notebooks, or ``""``."""
    for name, content in sorted(autograded.items()):
        notebook = Path(name)
        for index, cell in enumerate(nbformat.reads(content.decode(), as_version=4).cells):
            for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
                if output.get("output_type") == "error":
                    name = cell_name(cell, index)
                    evalue = " ".join(str(output.get("evalue", "")).split())[:240]
                    return f"{notebook.name}, {name}: {output.get('ename')}: {evalue}"
    return ""


def preflight_problem(task: GradingTask, result: GradingResult) -> str | None:
    """Why the reference solution's grading ``result`` shows a broken grader, in one line; None if it earned full marks."""
    assignment, status = task.assignment, result.status
    where = _first_error(result.autograded)
    if status != Status.OK:
        said = "; ".join(result.messages) or "no message"
        return (f"{assignment}: grading the reference solution ended with status {status} ({said[:400]})"
                + (f"; first error in {where}" if where else ""))
    earned = full = 0.0
    for notebook in notebooks_of(task.course.source(assignment)):
        points = autograded_points(notebook)
        graded = result.notebooks.get(notebook.stem)
        scores = graded.scores if graded else {}
        full += sum(points.values())
        earned += sum(float(scores[grade_id].auto_score or 0.0) for grade_id in points if grade_id in scores)
    if earned < full:
        return (f"{assignment}: the reference solution scores {earned:g}/{full:g} in the grading sandbox"
                + (f"; first error in {where}" if where else ""))
    return None
