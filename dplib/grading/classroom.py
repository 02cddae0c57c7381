"""Grade a whole class with one command, and know why every grade is what it is.

Instructor commands, run in the course folder (the one holding ``nbgrader_config.py``)::

    python -m dplib.grading.classroom grade      # autograde every submission, feedback, grades.csv
    python -m dplib.grading.classroom export     # grades.csv again (e.g. after manual grading)
    python -m dplib.grading.classroom feedback   # regenerate feedback (e.g. after manual grading)

``grade`` finds every ``submitted/<student>/<assignment>/``, autogrades each one in its
own throwaway course folder (see :mod:`dplib.grading.worker`) on as many worker
processes as the machine has cores, and merges the results into the course's
``gradebook.db`` from this one process: SQLite never sees two writers, and a submission
that kills its kernel, loops forever or deletes the files around it harms only its own
grade (code that goes after the instructor's files by absolute path needs an OS-level
sandbox: run the graders as a separate user or in a container). Each submission ends with
an :class:`Outcome`: ``ok``,
``timed_out`` (a cell was interrupted), ``kernel_died`` / ``kernel_unresponsive``
(tests before that point keep their points), ``missing`` / ``unreadable`` (0 points),
``error`` / ``killed`` (not graded: flagged ``needs_manual_grade`` in the gradebook).
Outcomes are kept in ``autograded/grading_outcomes.csv`` and joined into ``grades.csv``,
with *review flags*: code patterns (rebinding builtins, killing the kernel, touching
files, delegating to dplib, ...) worth a human look, whatever the score.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import selectors
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import deque
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from dplib.grading.course import Course, assignments_in, nbgrader_env
from dplib.grading.worker import STATUS_ORDER

OUTCOMES_FILE = Path("autograded") / "grading_outcomes.csv"
GRADE_FIELDS = [
    "student_id", "first_name", "last_name", "assignment", "score", "max_score", "percent",
    "needs_manual_grade", "status", "message", "flags",
]
UNGRADED = ("error", "killed")  # statuses whose grades are unknown, not zero


@dataclass(frozen=True)
class Outcome:
    """What happened to one student's submission of one assignment."""

    student: str
    assignment: str
    status: str
    message: str = ""
    score: float | None = None
    max_score: float | None = None
    seconds: float = 0.0
    flags: tuple[str, ...] = field(default=())

    def row(self) -> dict:
        row = asdict(self)
        row["flags"] = "; ".join(self.flags)
        return row


# --- review flags -----------------------------------------------------------------------------------
# issue 12: the syntax-tree review (dplib.grading.review) replaces the regular expressions; copies are
# found across the class after grading (dplib.grading.similarity, see grade_class).
from dplib.grading.review import comment_in_gradebook, review_flags  # noqa: E402


# --- the class ----------------------------------------------------------------------------------------


def find_submissions(root: Path, assignments=None, students=None) -> list[tuple[str, str]]:
    """``(student, assignment)`` of every submission folder in ``root/submitted``, sorted."""
    root = Path(root)
    wanted = set(assignments) if assignments else set(assignments_in(root / "source"))
    found = []
    for folder in sorted((root / "submitted").glob("*/*")):
        student, assignment = folder.parent.name, folder.name
        if folder.is_dir() and assignment in wanted and (not students or student in students):
            found.append((student, assignment))
    return found


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


class _Worker:
    """One ``python -m dplib.grading.worker`` process and the task it is on."""

    def __init__(self, index: int, log_dir: Path):
        env = nbgrader_env()
        env.pop("PYTHONWARNINGS", None)  # kernels inherit it: students' warnings must be real
        self.log = open(log_dir / f"worker-{index}.log", "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-W", "ignore", "-m", "dplib.grading.worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env, start_new_session=True,
        )
        self.buffer = b""
        self.ready = False
        self.task: dict | None = None
        self.deadline = float("inf")

    @property
    def fd(self) -> int:
        return self.proc.stdout.fileno()

    def send(self, task: dict, timeout: float) -> None:
        self.task, self.deadline = task, time.monotonic() + timeout
        self.proc.stdin.write((json.dumps(task) + "\n").encode())
        self.proc.stdin.flush()

    def messages(self) -> list[dict] | None:
        """Messages now readable; None when the worker is gone."""
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            return None
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        return [json.loads(line) for line in lines if line.strip()]

    def kill(self) -> None:
        """Kill the worker and everything it started (its kernels run in their own sessions)."""
        import psutil

        try:
            processes = psutil.Process(self.proc.pid).children(recursive=True) + [psutil.Process(self.proc.pid)]
        except psutil.NoSuchProcess:
            processes = []
        for process in processes:
            try:
                process.kill()
            except psutil.NoSuchProcess:
                pass
        self.proc.wait()
        self.close()

    def stop(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except (subprocess.TimeoutExpired, OSError):
            self.kill()
        self.close()

    def close(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout, self.log):
            try:
                stream.close()
            except OSError:
                pass


def run_tasks(tasks: list[dict], workers: int, log_dir: Path, submission_timeout: float, on_result, setup=None) -> None:
    """Run ``tasks`` on ``workers`` worker processes; call ``on_result(task, result)`` for each, in this process.

    ``setup()``, if given, runs once the workers are starting (they take seconds to import
    nbgrader), before any task is sent. A worker that exceeds ``submission_timeout`` on one
    task, or dies, is killed with its kernels and replaced; its task gets a ``killed`` /
    ``error`` result.
    """
    pending = deque(tasks)
    pool: list[_Worker] = []
    selector = selectors.DefaultSelector()
    startup_failures = 0

    def spawn(index: int) -> _Worker:
        worker = _Worker(index, log_dir)
        selector.register(worker.fd, selectors.EVENT_READ, worker)
        return worker

    def retire(worker: _Worker, result: dict | None) -> None:
        """Kill ``worker``, report its task's ``result``, and replace it if work is left."""
        selector.unregister(worker.fd)
        worker.kill()
        task, worker.task, worker.deadline = worker.task, None, float("inf")
        if task is not None and result is not None:
            on_result(task, result)
        if pending:
            index = pool.index(worker)
            pool[index] = spawn(index)

    try:
        pool.extend(spawn(i) for i in range(max(1, min(workers, len(tasks)))))
        if setup is not None:
            setup()
        while pending or any(w.task is not None for w in pool):
            for worker in pool:
                if worker.ready and worker.task is None and pending:
                    worker.send(pending.popleft(), submission_timeout)
            wait = min([w.deadline for w in pool if w.task is not None], default=time.monotonic() + 5)
            for key, _ in selector.select(timeout=max(0.05, wait - time.monotonic())):
                worker: _Worker = key.data
                messages = worker.messages()
                if messages is None:  # the worker process itself died
                    if not worker.ready:
                        startup_failures += 1
                        if startup_failures > 2 * len(pool):
                            raise RuntimeError(f"grading workers die at start-up: see the logs in {log_dir}")
                    retire(worker, {"status": "error", "messages": ["the grading worker crashed"]})
                    continue
                for message in messages:
                    if message.get("ready"):
                        worker.ready = True
                    elif worker.task is not None:
                        task, worker.task, worker.deadline = worker.task, None, float("inf")
                        on_result(task, message)
            now = time.monotonic()
            for worker in list(pool):
                if worker.task is not None and now > worker.deadline:
                    retire(worker, {
                        "status": "killed",
                        "messages": [f"grading took longer than {submission_timeout:.0f} s and was stopped"],
                        "seconds": submission_timeout,
                    })
    finally:
        for worker in pool:
            try:
                selector.unregister(worker.fd)
            except (KeyError, ValueError):
                pass
            try:
                worker.proc.stdin.close()  # all at once: they exit side by side
            except OSError:
                pass
        for worker in pool:
            worker.stop()
        selector.close()


def _rmtree(path: Path) -> None:
    def make_writable(function, target, _):
        os.chmod(target, 0o700)
        function(target)

    if path.exists():
        shutil.rmtree(path, onerror=make_writable)


def _copy_back(source: str | None, target: Path) -> None:
    _rmtree(target)
    if source and Path(source).is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, target)


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
    score, maximum = merge(gradebook, result)
    _copy_back(result.get("autograded"), root / "autograded" / student / assignment)
    if feedback:
        _copy_back(result.get("feedback"), root / "feedback" / student / assignment)
    flags: tuple[str, ...] = ()
    by_notebook = {}  # issue 12: review against the instructor's notebook; flags shown in formgrader
    for notebook in sorted(Path(task["submission"]).glob("*.ipynb")):
        instructor = root / "source" / assignment / notebook.name
        by_notebook[notebook.stem] = review_flags(notebook, instructor if instructor.exists() else None)
        flags += by_notebook[notebook.stem]
    comment_in_gradebook(gradebook, student, assignment, by_notebook)
    return Outcome(
        student, assignment, result.get("status", "error"), " | ".join(result.get("messages", [])),
        None if result.get("status") in UNGRADED else score, maximum,
        round(float(result.get("seconds", 0.0)), 2), tuple(dict.fromkeys(flags)),
    )


def read_outcomes(root: Path) -> dict[tuple[str, str], Outcome]:
    path = Path(root) / OUTCOMES_FILE
    if not path.exists():
        return {}
    outcomes = {}
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            outcome = Outcome(
                student=row["student"], assignment=row["assignment"], status=row["status"], message=row["message"],
                score=float(row["score"]) if row["score"] else None,
                max_score=float(row["max_score"]) if row["max_score"] else None,
                seconds=float(row["seconds"] or 0), flags=tuple(f for f in row["flags"].split("; ") if f),
            )
            outcomes[outcome.student, outcome.assignment] = outcome
    return outcomes


def write_outcomes(root: Path, outcomes: list[Outcome]) -> Path:
    """Add (or replace) outcomes in ``autograded/grading_outcomes.csv``."""
    known = read_outcomes(root)
    known.update({(o.student, o.assignment): o for o in outcomes})
    path = Path(root) / OUTCOMES_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=[f.name for f in fields(Outcome)])
        writer.writeheader()
        writer.writerows(known[key].row() for key in sorted(known))
    return path


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
    """
    from tqdm.auto import tqdm

    course = Course(root)
    root = course.root.resolve()
    submissions = find_submissions(root, assignments, students)
    workers = workers or os.cpu_count() or 1
    outcomes: list[Outcome] = []
    scratch_base = Path(tempfile.mkdtemp(prefix="dplib-grading-"))
    template = scratch_base / "template.db"
    tasks = [
        {
            "course": str(root), "assignment": assignment, "student": student, "feedback": feedback,
            "template_db": str(template), "submission": str(root / "submitted" / student / assignment),
            # one private folder per submission; the course sits one level down, so that
            # `rm -rf ../../../..` from the notebook's folder still hits nobody else's files
            "scratch": str(scratch_base / f"{n:05d}" / "course"),
        }
        for n, (student, assignment) in enumerate(submissions)
    ]
    # Longest first (bigger notebooks run longer), so no worker is left with a long tail alone.
    tasks.sort(key=lambda task: -sum(p.stat().st_size for p in Path(task["submission"]).glob("*.ipynb")))
    bar = tqdm(total=len(tasks), desc=f"grading on {min(workers, len(tasks) or 1)} workers", unit="submission",
               disable=not progress)
    opened: list = []

    def setup() -> None:
        """While the workers start: the gradebook knows every assignment; a template copy for the workers."""
        from nbgrader.api import Gradebook

        ensure_assignments(course, sorted({a for _, a in submissions}))
        shutil.copy2(root / "gradebook.db", template)
        opened.append(Gradebook(f"sqlite:///{root / 'gradebook.db'}"))

    def on_result(task: dict, result: dict) -> None:
        student, assignment = task["student"], task["assignment"]
        result = {**result, "student": student, "assignment": assignment}
        gradebook = opened[0]
        try:
            outcome = _record(root, gradebook, task, result, feedback)
        except Exception as error:  # never let one submission stop the class
            gradebook.db.rollback()
            outcome = Outcome(student, assignment, "error", f"could not record the result: {error!r}")
        outcomes.append(outcome)
        _rmtree(Path(task["scratch"]).parent)
        bar.set_postfix_str(f"{student}/{assignment}: {outcome.status}", refresh=False)
        bar.update()

    try:
        if tasks:
            run_tasks(tasks, workers, scratch_base, submission_timeout, on_result, setup)
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
    outcomes = add_copy_flags(root, outcomes)  # issue 12: similarity reports and copy flags
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
                    score, needs, status, message = 0.0, False, "not submitted", ""
                else:
                    score = submission.score - (submission.late_submission_penalty or 0.0)
                    needs = bool(submission.needs_manual_grade)
                    status = outcome.status if outcome else "graded by nbgrader"
                    message = outcome.message if outcome else ""
                maximum = float(assignment.max_score)
                rows.append({
                    "student_id": student.id, "first_name": student.first_name or "", "last_name": student.last_name or "",
                    "assignment": assignment.name, "score": round(float(score), 2), "max_score": maximum,
                    "percent": round(100 * float(score) / maximum, 1) if maximum else 0.0,
                    "needs_manual_grade": needs, "status": status, "message": message,
                    "flags": "; ".join(outcome.flags) if outcome else "",
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
        order = {s: i for i, s in enumerate(STATUS_ORDER)}
        status_text = ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: order.get(kv[0], 99)))
        lines.append(
            f"{assignment:<26}{len(group):>9}{statistics.mean(percents):>8.1f}{statistics.median(percents):>10.1f}  {status_text}"
        )
    flagged = [r for r in rows if r["flags"]]
    if flagged:
        lines.append("")
        lines.append(f"{len(flagged)} submissions flagged for review:")
        lines += [f"  {r['student_id']}/{r['assignment']}: {r['flags']}" for r in flagged]
    problems = [r for r in rows if r["status"] not in ("ok", "not submitted", "graded by nbgrader")]
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
    export = commands.add_parser("export", help="write grades.csv from the gradebook")
    export.add_argument("--csv", type=Path, default=None, help="grades CSV (default: <course>/grades.csv)")
    feedback = commands.add_parser("feedback", help="regenerate feedback for every autograded submission")
    feedback.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    args = parser.parse_args(argv)

    if args.command == "grade":
        grade_class(
            args.course, args.assignment, args.student, workers=args.workers, feedback=not args.no_feedback,
            submission_timeout=args.submission_timeout, csv_path=args.csv,
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
