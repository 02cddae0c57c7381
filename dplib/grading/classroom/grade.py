"""Grade a whole class with one command, and know why every grade is what it is.

Instructor commands, run in the course folder (the one holding ``nbgrader_config.py``)::

    python -m dplib.grading.classroom grade      # autograde every submission, feedback, grades.csv
    python -m dplib.grading.classroom export     # grades.csv again (e.g. after manual grading)
    python -m dplib.grading.classroom feedback   # regenerate feedback (e.g. after manual grading)

``grade`` finds every ``submitted/<student>/<assignment>/``, autogrades each one in its
own private scratch course folder on a pool of worker processes (:mod:`dplib.grading.pool`,
:mod:`dplib.grading.worker`), every kernel in the bubblewrap sandbox
(:mod:`dplib.grading.sandbox`: the kernel sees its own copy of the submission and the
libraries, nothing else), and merges the results into the course's ``gradebook.db`` from
this one process. Each submission ends with an :class:`~dplib.grading.outcomes.Outcome`
whose :class:`~dplib.grading.outcomes.Status` says what happened (``ok``, ``timed_out``,
a limit hit, ``kernel_died``, ``missing``, ``refused``, ``error`` / ``killed`` = not graded,
...). Outcomes are kept in ``autograded/grading_outcomes.csv`` and joined into
``grades.csv``, with *review flags*: what the syntax-tree review (:mod:`dplib.grading.review`)
and copy detection (:mod:`dplib.grading.similarity`) found worth a human look, whatever the score.
``--no-sandbox`` grades where bubblewrap cannot run (unsafe; ``sandboxed=False`` rows).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import secrets
import shutil
import statistics
import sys
import tempfile
import warnings
from pathlib import Path

from dplib.grading import sandbox
from dplib.grading.course import Course, assignments_in
from dplib.grading.outcomes import OUTCOMES_FILE, UNGRADED, Outcome, Status, read_outcomes, write_outcomes
from dplib.grading.pool import run_tasks
# Review flags: a syntax-tree review of every submission (dplib.grading.review) and, after grading,
# copies found across the class (dplib.grading.similarity, see add_copy_flags).
from dplib.grading.review import comment_in_gradebook, review_flags

GRADE_FIELDS = [
    "student_id", "first_name", "last_name", "assignment", "score", "max_score", "percent",
    "needs_manual_grade", "status", "message", "flags", "sandboxed",
]
# Characters nbgrader reads as a glob pattern in a student id (``x[1]`` would grade ``x1``).
PATTERN_CHARACTERS = re.compile(r"[*?\[\]\x00-\x1f]")


# --- the class ----------------------------------------------------------------------------------------


def find_submissions(root: Path, assignments=None, students=None) -> tuple[list[tuple[str, str]], list[Outcome]]:
    """``(student, assignment)`` of every submission folder in ``root/submitted``, sorted, and the refused ones.

    Folders are listed, never globbed: a student id is a name, not a pattern. Refused (with
    a :data:`~dplib.grading.outcomes.Status.REFUSED` outcome, 0 points): a student or
    submission folder that is a symlink, and a student id nbgrader would read as a pattern.
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
            if student_dir.is_symlink() or folder.is_symlink():
                refused.append(Outcome(student, assignment, Status.REFUSED,
                                       "the submission folder is a symlink: refused, it scores 0", 0.0))
            elif folder.is_dir() and any(entry.is_symlink() for entry in folder.iterdir()):
                refused.append(Outcome(student, assignment, Status.REFUSED,
                                       "the submission holds a symlink: refused, it scores 0", 0.0))
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


def _rmtree(path: Path) -> None:
    def make_writable(function, target, _):
        os.chmod(target, 0o700)
        function(target)

    if path.exists():
        shutil.rmtree(path, onerror=make_writable)


def _copy_back(source: str | None, target: Path, keep=None) -> None:
    """Replace ``target`` by the regular files of ``source`` (no symlinks; only names ``keep`` accepts, if given)."""
    _rmtree(target)
    if source and Path(source).is_dir():
        target.mkdir(parents=True, exist_ok=True)
        for item in sorted(Path(source).iterdir()):
            if item.is_file() and not item.is_symlink() and (keep is None or keep(item.name)):
                shutil.copy2(item, target / item.name)


def merge(gradebook, result: dict) -> tuple[float, float]:
    """Write one worker result into the course gradebook; return the submission's (score, max_score).

    Autograder scores come from the result; a manual score already in the gradebook is
    kept (and keeps the cell flagged for review, as nbgrader does). Unreadable or missing
    notebooks score 0; a submission that could not be graded gets no score and is
    flagged ``needs_manual_grade``.
    """
    student, assignment = result["student"], result["assignment"]
    gradebook.update_or_create_student(student)
    extra = {"timestamp": result["timestamp"]} if result.get("timestamp") else {}
    with warnings.catch_warnings():  # nbgrader's add_submission trips SQLAlchemy's autoflush warning
        warnings.simplefilter("ignore")
        submission = gradebook.update_or_create_submission(assignment, student, **extra)
    graded = result.get("grades") or {}
    for notebook in submission.notebooks:
        scores = graded.get(notebook.name)
        for grade in notebook.grades:
            if scores is not None and grade.name in scores:
                grade.auto_score, needs_review = scores[grade.name]
                grade.needs_manual_grade = bool(needs_review) or grade.manual_score is not None
            elif result["status"] in UNGRADED:
                grade.auto_score, grade.needs_manual_grade = None, True
            else:  # a notebook nbgrader found missing, or an unreadable one
                grade.auto_score = 0.0
                grade.needs_manual_grade = grade.manual_score is not None
        comments = (result.get("comments") or {}).get(notebook.name, {})
        for comment in notebook.comments:
            comment.auto_comment = comments.get(comment.name)
        notebook.late_submission_penalty = (result.get("penalties") or {}).get(notebook.name)
    gradebook.db.commit()
    return float(submission.score - (submission.late_submission_penalty or 0.0)), float(submission.max_score)


def _record(root: Path, gradebook, task: dict, result: dict, feedback: bool) -> Outcome:
    """Merge one result into the course: gradebook, autograded/ and feedback/ folders; return its outcome."""
    student, assignment = task["student"], task["assignment"]
    status = Status(result.get("status", Status.ERROR))
    score, maximum = merge(gradebook, {**result, "status": status})
    # Back into the course: the graded notebooks and the submission's own files, nothing the kernel made.
    submitted = {p.name for p in Path(task["submission"]).iterdir()}
    _copy_back(result.get("autograded"), root / "autograded" / student / assignment,
               keep=lambda name: name.endswith(".ipynb") or name in submitted)
    if feedback:
        _copy_back(result.get("feedback"), root / "feedback" / student / assignment,
                   keep=lambda name: name.endswith(".html"))
    flags: tuple[str, ...] = ()
    by_notebook = {}  # reviewed against the instructor's notebook; the flags are shown in formgrader
    for notebook in sorted(Path(task["submission"]).glob("*.ipynb")):
        instructor = root / "source" / assignment / notebook.name
        by_notebook[notebook.stem] = review_flags(notebook, instructor if instructor.exists() else None)
        flags += by_notebook[notebook.stem]
    comment_in_gradebook(gradebook, student, assignment, by_notebook)
    return Outcome(
        student, assignment, status, " | ".join(result.get("messages", [])),
        None if status in UNGRADED else score, maximum,
        round(float(result.get("seconds", 0.0)), 2), tuple(dict.fromkeys(flags)), task["sandboxed"],
    )


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
        Run every kernel in :mod:`dplib.grading.sandbox` (default). If bubblewrap cannot run,
        :class:`~dplib.grading.sandbox.SandboxUnavailable` is raised before anything is
        graded; ``False`` grades unsandboxed (a warning; ``sandboxed=False`` in grades.csv).
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
    bar = tqdm(total=len(tasks), desc=f"grading on {min(workers, len(tasks) or 1)} workers", unit="submission",
               disable=not progress)
    opened: list = []

    def setup() -> None:
        """While the workers start: the gradebook knows every assignment; a template copy for the workers."""
        from nbgrader.api import Gradebook

        ensure_assignments(course, sorted({a for _, a in submissions} | {o.assignment for o in refused}))
        shutil.copy2(root / "gradebook.db", template)
        opened.append(Gradebook(f"sqlite:///{root / 'gradebook.db'}"))
        for outcome in refused:  # 0 points, recorded like any other outcome
            merge(opened[0], {"student": outcome.student, "assignment": outcome.assignment, "status": outcome.status})
            outcomes.append(outcome)

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
        bar.set_postfix_str(f"{student}/{assignment}: {outcome.status}", refresh=False)
        bar.update()

    try:
        if tasks:
            run_tasks(tasks, workers, scratch_base, submission_timeout, on_result, setup, env=worker_env)
        elif refused:
            setup()
        bar.close()
        logs = root / "autograded" / "grading_logs"
        logs.mkdir(parents=True, exist_ok=True)
        for log in scratch_base.glob("worker-*.log"):
            shutil.copy2(log, logs / log.name)
    finally:
        for gradebook in opened:
            gradebook.close()
        _rmtree(scratch_base)
    outcomes.sort(key=lambda o: (o.assignment, o.student))
    outcomes = add_copy_flags(root, outcomes)  # similarity reports and copy flags
    write_outcomes(root, outcomes)
    export_grades(root, csv_path or root / "grades.csv")
    return outcomes


def add_copy_flags(root: Path, outcomes: list[Outcome]) -> list[Outcome]:
    """Write ``similarity/<assignment>.html`` for each graded assignment; add copy flags to the outcomes and formgrader."""
    from dataclasses import replace

    from nbgrader.api import Gradebook

    from dplib.grading.similarity import copy_flags, write_report

    flags: dict = {}
    for assignment in sorted({o.assignment for o in outcomes}):
        try:
            flags.update(copy_flags(write_report(root, assignment)[1]))
        except Exception as error:  # a report that fails must not lose the grades
            print(f"similarity report of {assignment} failed: {error!r}", file=sys.stderr)
    if flags:
        with Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gradebook:
            for (student, assignment), found in flags.items():
                names = [p.stem for p in (Path(root) / "source" / assignment).glob("*.ipynb")]
                # the comment may reach the student's feedback: it does not name the classmate
                hidden = [f.split(" matches the submission of ")[0] + " matches another submission" + f[f.rindex(" ("):]
                          if " matches the submission of " in f else f for f in found]
                comment_in_gradebook(gradebook, student, assignment, {name: hidden for name in sorted(names)[:1]})
    return [replace(o, flags=o.flags + flags.get((o.student, o.assignment), ())) for o in outcomes]


def export_grades(root: Path, path: Path | None = None) -> list[dict]:
    """One row per student and assignment of the gradebook, with the grading outcome; written as CSV if ``path``."""
    from nbgrader.api import Gradebook, MissingEntry

    root = Path(root)
    outcomes = read_outcomes(root)
    rows = []
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        assignments = sorted(gradebook.assignments, key=lambda a: a.name)
        for assignment in assignments:
            for student in sorted(gradebook.students, key=lambda s: s.id):
                outcome = outcomes.get((student.id, assignment.name))
                try:
                    submission = gradebook.find_submission(assignment.name, student.id)
                except MissingEntry:
                    score, needs, status, message = 0.0, False, Status.NOT_SUBMITTED, ""
                else:
                    score = submission.score - (submission.late_submission_penalty or 0.0)
                    needs = bool(submission.needs_manual_grade)
                    status = outcome.status if outcome else Status.GRADED_BY_NBGRADER
                    message = outcome.message if outcome else ""
                maximum = float(assignment.max_score)
                rows.append({
                    "student_id": student.id, "first_name": student.first_name or "", "last_name": student.last_name or "",
                    "assignment": assignment.name, "score": round(float(score), 2), "max_score": maximum,
                    "percent": round(100 * float(score) / maximum, 1) if maximum else 0.0,
                    "needs_manual_grade": needs, "status": Status(status).value, "message": message,
                    "flags": "; ".join(outcome.flags) if outcome else "",
                    "sandboxed": outcome.sandboxed if outcome else "",
                })
    if path is not None:
        with open(path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=GRADE_FIELDS)
            writer.writeheader()
            writer.writerows(rows)
    return rows


def regenerate_feedback(root: Path, assignments: list[str] | None = None) -> dict[str, bool]:
    """``nbgrader generate_feedback --force`` for each assignment (hidden tests stay hidden: see nbgrader_config.py)."""
    course = Course(root)
    names = assignments or sorted({p.parent.name for p in (course.root / "autograded").glob("*/*/*.ipynb")})
    return {name: course.nbgrader("generate_feedback", name, "--force", check=False).returncode == 0 for name in names}


def summarize(rows: list[dict]) -> str:
    """A plain-text table: per assignment, submissions, mean and median percent, and outcomes."""
    lines = [f"{'assignment':<26}{'students':>9}{'mean %':>8}{'median %':>10}  outcomes"]
    by_assignment: dict[str, list[dict]] = {}
    for row in rows:
        by_assignment.setdefault(row["assignment"], []).append(row)
    for assignment, group in sorted(by_assignment.items()):
        percents = [float(r["percent"]) for r in group]
        counts: dict[str, int] = {}
        for row in group:
            counts[row["status"]] = counts.get(row["status"], 0) + 1
        order = {s.value: i for i, s in enumerate(Status)}
        status_text = ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: order.get(kv[0], 99)))
        lines.append(
            f"{assignment:<26}{len(group):>9}{statistics.mean(percents):>8.1f}{statistics.median(percents):>10.1f}  {status_text}"
        )
    flagged = [r for r in rows if r["flags"]]
    if flagged:
        lines.append("")
        lines.append(f"{len(flagged)} submissions flagged for review:")
        lines += [f"  {r['student_id']}/{r['assignment']}: {r['flags']}" for r in flagged]
    problems = [r for r in rows if r["status"] not in (Status.OK, Status.NOT_SUBMITTED, Status.GRADED_BY_NBGRADER)]
    if problems:
        lines.append("")
        lines.append(f"{len(problems)} submissions with a grading outcome other than ok:")
        lines += [f"  {r['student_id']}/{r['assignment']}: {r['status']}: {r['message']}" for r in problems]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dplib.grading.classroom", description=__doc__.split("\n")[0])
    parser.add_argument("--course", type=Path, default=Path("."), help="the course folder (default: .)")
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="autograde every submission, generate feedback, export grades.csv")
    grade.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    grade.add_argument("--student", action="append", help="only this student (repeatable)")
    grade.add_argument("--workers", type=int, default=None, help="worker processes (default: number of cores)")
    grade.add_argument("--no-feedback", action="store_true", help="skip feedback generation")
    grade.add_argument("--submission-timeout", type=float, default=1800.0, help="seconds per submission (default 1800)")
    grade.add_argument("--csv", type=Path, default=None, help="grades CSV (default: <course>/grades.csv)")
    grade.add_argument("--no-sandbox", action="store_true",
                       help="grade without the bubblewrap sandbox (unsafe; marked sandboxed=False in grades.csv)")
    export = commands.add_parser("export", help="write grades.csv from the gradebook")
    export.add_argument("--csv", type=Path, default=None, help="grades CSV (default: <course>/grades.csv)")
    feedback = commands.add_parser("feedback", help="regenerate feedback for every autograded submission")
    feedback.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    args = parser.parse_args(argv)

    if args.command == "grade":
        grade_class(
            args.course, args.assignment, args.student, workers=args.workers, feedback=not args.no_feedback,
            submission_timeout=args.submission_timeout, csv_path=args.csv, sandboxed=not args.no_sandbox,
        )
        print(summarize(export_grades(args.course)))
        print(f"\ngrades: {args.csv or args.course / 'grades.csv'}; outcomes: {args.course / OUTCOMES_FILE}")
    elif args.command == "export":
        path = args.csv or args.course / "grades.csv"
        print(summarize(export_grades(args.course, path)))
        print(f"\ngrades: {path}")
    else:
        failed = [name for name, ok in regenerate_feedback(args.course, args.assignment).items() if not ok]
        print("feedback regenerated" + (f"; failed for {failed}" if failed else ""))
        return 1 if failed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
