"""Export and summary: one typed :class:`GradeRow` per student and assignment, rendered to ``grades.csv`` and a summary.

The rows are built from the gradebook (the scores, the points pending) and the :class:`~dpgrader.outcomes.Outcome`
of each submission, as the grading run holds them (:func:`grade_rows`); they become text only in
``grades.csv`` (:func:`write_grades`) and the summary (:func:`summarize`). :func:`export_run` is the last step
of a grading run: its outcomes and those known before into ``grading_outcomes.csv``, then the rows into
``grades.csv``.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from dpgrader.course import Course
from dpgrader.outcomes import Flag, Outcome, RowLabel, Status, read_outcomes, write_outcomes
from dpgrader.safe_output import one_line, write_csv

GRADE_FIELDS = [
    "student_id", "first_name", "last_name", "assignment", "score", "max_score", "points_pending",
    "percent_of_graded", "needs_manual_grade", "status", "message", "flags", "sandboxed",
]


@dataclass(frozen=True)
class GradeRow:
    """One student's grade of one assignment, with the grading outcome (a row of ``grades.csv``).

    ``percent_of_graded`` is None while nothing is graded; ``sandboxed`` is None where no outcome
    exists (not submitted, or graded by nbgrader alone).
    """

    student_id: str
    first_name: str
    last_name: str
    assignment: str
    score: float
    max_score: float
    points_pending: float
    percent_of_graded: float | None
    needs_manual_grade: bool
    status: Status | RowLabel
    message: str = ""
    flags: tuple[Flag, ...] = ()
    sandboxed: bool | None = None

    @property
    def severity(self) -> int:
        """The status's severity; a row label (no outcome) after every status."""
        return self.status.severity if isinstance(self.status, Status) else 1 << 30

    def csv_row(self) -> dict:
        """The row as ``grades.csv`` writes it."""
        return {
            "student_id": self.student_id, "first_name": self.first_name, "last_name": self.last_name,
            "assignment": self.assignment, "score": self.score, "max_score": self.max_score,
            "points_pending": self.points_pending,
            "percent_of_graded": "" if self.percent_of_graded is None else self.percent_of_graded,
            "needs_manual_grade": self.needs_manual_grade, "status": self.status.value, "message": self.message,
            "flags": flags_text(self.flags), "sandboxed": "" if self.sandboxed is None else self.sandboxed,
        }


def flags_text(flags: Iterable[Flag]) -> str:
    """Flags as one cell of ``grades.csv`` and one line of the summary."""
    return "; ".join(str(flag) for flag in flags)


def grade_rows(course: Course, outcomes: Mapping[tuple[str, str], Outcome]) -> list[GradeRow]:
    """One row per student and assignment of the gradebook, with its outcome (``outcomes``, by (student, assignment)).

    ``points_pending`` are the points of cells awaiting a person (written answers not graded
    yet; every cell of a submission the grader could not grade). ``percent_of_graded`` is the
    score over the points graded so far (``max_score - points_pending``), None while nothing
    is graded: a pending answer is never counted as 0.
    """
    from nbgrader.api import Gradebook, MissingEntry

    rows = []
    with Gradebook(course.gradebook_url) as gradebook:
        assignments = sorted(gradebook.assignments, key=lambda a: a.name)
        for assignment in assignments:
            for student in sorted(gradebook.students, key=lambda s: s.id):
                outcome = outcomes.get((student.id, assignment.name))
                pending = 0.0
                try:
                    submission = gradebook.find_submission(assignment.name, student.id)
                except MissingEntry:
                    score, needs, status, message = 0.0, False, RowLabel.NOT_SUBMITTED, ""
                else:
                    pending = sum(float(grade.max_score) for notebook in submission.notebooks for grade in notebook.grades
                                  if grade.needs_manual_grade and grade.manual_score is None)
                    score = submission.score - (submission.late_submission_penalty or 0.0)
                    needs = bool(submission.needs_manual_grade)
                    status = outcome.status if outcome else RowLabel.GRADED_BY_NBGRADER
                    message = outcome.message if outcome else ""
                maximum = float(assignment.max_score)
                graded = maximum - pending
                rows.append(GradeRow(
                    student.id, student.first_name or "", student.last_name or "", assignment.name,
                    round(float(score), 2), maximum, round(pending, 2),
                    round(100 * float(score) / graded, 1) if graded > 0 else None, needs, status, message,
                    outcome.flags if outcome else (), outcome.sandboxed if outcome else None,
                ))
    return rows


def write_grades(rows: Iterable[GradeRow], path: Path) -> Path:
    """``grades.csv``: every field as :func:`dpgrader.safe_output.csv_field` makes it (a spreadsheet shows text,
    never runs a formula)."""
    return write_csv(path, GRADE_FIELDS, (row.csv_row() for row in rows))


def export_run(course: Course, known: Mapping[tuple[str, str], Outcome], outcomes: Iterable[Outcome],
               path: Path) -> tuple[dict, list[GradeRow]]:
    """A run's ``outcomes`` over those ``known`` before into ``grading_outcomes.csv``, and the rows into ``grades.csv``
    at ``path``; return every outcome recorded (by (student, assignment)) and the rows."""
    recorded = {**known, **{(o.student, o.assignment): o for o in outcomes}}
    write_outcomes(course, recorded.values(), replace_all=True)
    rows = grade_rows(course, recorded)
    write_grades(rows, path)
    return recorded, rows


def export_grades(root: Path | Course, path: Path | None = None) -> list[GradeRow]:
    """The rows of a course from its gradebook and ``grading_outcomes.csv`` (``export``, after manual grading);
    written to ``path`` if given."""
    course = root if isinstance(root, Course) else Course(root)
    rows = grade_rows(course, read_outcomes(course))
    if path is not None:
        write_grades(rows, path)
    return rows


def regenerate_feedback(root: Path, assignments: list[str] | None = None) -> dict[str, bool]:
    """``nbgrader generate_feedback --force`` for each assignment (hidden tests stay hidden: see nbgrader_config.py)."""
    course = Course(root)
    names = assignments or sorted({p.parent.name for p in course.autograded().glob("*/*/*.ipynb")})
    return {name: course.nbgrader("generate_feedback", name, "--force", check=False).returncode == 0 for name in names}


def summarize(rows: list[GradeRow]) -> str:
    """A plain-text table: per assignment, submissions, mean and median percent of the graded points, and outcomes.

    Every value from a submission (ids, flags, messages) is one line, its control characters escaped
    (:func:`dpgrader.safe_output.one_line`): the summary is printed to the instructor's terminal.
    """
    lines = [f"{'assignment':<26}{'students':>9}{'mean %':>8}{'median %':>10}  outcomes   (% of the points graded so far)"]
    by_assignment: dict[str, list[GradeRow]] = {}
    for row in rows:
        by_assignment.setdefault(row.assignment, []).append(row)
    for assignment, group in sorted(by_assignment.items()):
        percents = [r.percent_of_graded for r in group if r.percent_of_graded is not None] or [0.0]
        counts: dict[Status | RowLabel, list] = {}
        for row in group:
            counts.setdefault(row.status, []).append(row)
        # the least severe first; labels (not submitted, ...) last
        status_text = ", ".join(f"{status.value} {len(them)}" for status, them in
                                sorted(counts.items(), key=lambda kv: kv[1][0].severity))
        lines.append(
            f"{one_line(assignment):<26}{len(group):>9}{statistics.mean(percents):>8.1f}{statistics.median(percents):>10.1f}  {status_text}"
        )
    flagged = [r for r in rows if r.flags]
    if flagged:
        lines.append("")
        lines.append(f"{len(flagged)} submissions flagged for review:")
        lines += [one_line(f"  {r.student_id}/{r.assignment}: {flags_text(r.flags)}") for r in flagged]
    problems = [r for r in rows if isinstance(r.status, Status) and r.status is not Status.OK]
    if problems:
        lines.append("")
        lines.append(f"{len(problems)} submissions with a grading outcome other than ok:")
        lines += [one_line(f"  {r.student_id}/{r.assignment}: {r.status.value}: {r.message}") for r in problems]
    return "\n".join(lines)
