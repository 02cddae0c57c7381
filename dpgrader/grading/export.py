"""Export and summary: ``grades.csv`` from the gradebook, regenerated feedback, a plain-text summary."""

from __future__ import annotations

import statistics
from pathlib import Path

from dpgrader.course import Course
from dpgrader.outcomes import RowLabel, Status, read_outcomes
from dpgrader.safe_output import one_line, write_csv

GRADE_FIELDS = [
    "student_id", "first_name", "last_name", "assignment", "score", "max_score", "points_pending",
    "percent_of_graded", "needs_manual_grade", "status", "message", "flags", "sandboxed",
]


def export_grades(root: Path, path: Path | None = None) -> list[dict]:
    """One row per student and assignment of the gradebook, with the grading outcome; written as CSV if ``path``.

    ``points_pending`` are the points of cells awaiting a person (written answers not graded
    yet; every cell of a submission the grader could not grade). ``percent_of_graded`` is the
    score over the points graded so far (``max_score - points_pending``), empty while nothing
    is graded: a pending answer is never counted as 0. Every field is written as
    :func:`dpgrader.safe_output.csv_field` makes it: a spreadsheet shows text, never runs a formula.
    """
    from nbgrader.api import Gradebook, MissingEntry

    course = Course(root)
    outcomes = read_outcomes(course.root)
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
                rows.append({
                    "student_id": student.id, "first_name": student.first_name or "", "last_name": student.last_name or "",
                    "assignment": assignment.name, "score": round(float(score), 2), "max_score": maximum,
                    "points_pending": round(pending, 2),
                    "percent_of_graded": round(100 * float(score) / graded, 1) if graded > 0 else "",
                    "needs_manual_grade": needs, "status": status.value, "message": message,
                    "flags": "; ".join(str(flag) for flag in outcome.flags) if outcome else "",
                    "sandboxed": outcome.sandboxed if outcome else "",
                })
    if path is not None:
        write_csv(path, GRADE_FIELDS, rows)
    return rows


def regenerate_feedback(root: Path, assignments: list[str] | None = None) -> dict[str, bool]:
    """``nbgrader generate_feedback --force`` for each assignment (hidden tests stay hidden: see nbgrader_config.py)."""
    course = Course(root)
    names = assignments or sorted({p.parent.name for p in course.autograded().glob("*/*/*.ipynb")})
    return {name: course.nbgrader("generate_feedback", name, "--force", check=False).returncode == 0 for name in names}


def summarize(rows: list[dict]) -> str:
    """A plain-text table: per assignment, submissions, mean and median percent of the graded points, and outcomes.

    Every value from a submission (ids, flags, messages) is one line, its control characters escaped
    (:func:`dpgrader.safe_output.one_line`): the summary is printed to the instructor's terminal.
    """
    lines = [f"{'assignment':<26}{'students':>9}{'mean %':>8}{'median %':>10}  outcomes   (% of the points graded so far)"]
    by_assignment: dict[str, list[dict]] = {}
    for row in rows:
        by_assignment.setdefault(row["assignment"], []).append(row)
    for assignment, group in sorted(by_assignment.items()):
        percents = [float(r["percent_of_graded"]) for r in group if r["percent_of_graded"] != ""] or [0.0]
        counts: dict[str, int] = {}
        for row in group:
            counts[row["status"]] = counts.get(row["status"], 0) + 1
        order = {s.value: s.severity for s in Status}  # the least severe first; labels (not submitted, ...) last
        status_text = ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: order.get(kv[0], 1 << 30)))
        lines.append(
            f"{one_line(assignment):<26}{len(group):>9}{statistics.mean(percents):>8.1f}{statistics.median(percents):>10.1f}  {status_text}"
        )
    flagged = [r for r in rows if r["flags"]]
    if flagged:
        lines.append("")
        lines.append(f"{len(flagged)} submissions flagged for review:")
        lines += [one_line(f"  {r['student_id']}/{r['assignment']}: {r['flags']}") for r in flagged]
    problems = [r for r in rows if r["status"] not in (Status.OK, *RowLabel)]
    if problems:
        lines.append("")
        lines.append(f"{len(problems)} submissions with a grading outcome other than ok:")
        lines += [one_line(f"  {r['student_id']}/{r['assignment']}: {r['status']}: {r['message']}") for r in problems]
    return "\n".join(lines)
