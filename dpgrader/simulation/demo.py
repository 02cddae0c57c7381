"""A class simulation: 30 made-up students hand in every released assignment, and get graded.

Building the class (:func:`build_class`), grading it and reporting (:func:`run`), and the
command line (:func:`main`, ``python -m dpgrader.simulation``); the package
:mod:`dpgrader.simulation` says what the simulation shows. The report includes what the
class got wrong (``demo/mistakes/<assignment>.html``, :mod:`dpgrader.classroom.mistakes`),
each student labelled with their kind: the page shows which kind failed which test.
"""

from __future__ import annotations

import argparse
import shutil
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from dpgrader.course import REPO_ROOT, Course, assignments_in, format_timestamp, notebooks_of
from dpgrader.simulation.submissions import KINDS, assign_kinds, make_submission, student_roster

MARKER = ".dplib-demo"  # marks a folder this module created (and may delete)
HAND_IN_START = datetime(2025, 3, 1, 12, 0)  # the first possible hand-in time (UTC)


def build_class(target: Path, n_students: int = 30, assignments: list[str] | None = None, seed: int = 0,
                cell_timeout: int | None = 5, repo: Path = REPO_ROOT, progress: bool = True,
                kinds: dict[tuple[str, str], str] | None = None) -> tuple[Course, dict]:
    """A fresh course at ``target`` with every student's submissions; return it and the kinds handed in.

    ``kinds`` chooses the kind of each ``(student, assignment)`` of the roster's first ``n_students``
    (default: drawn by :func:`~dpgrader.simulation.submissions.assign_kinds`, every kind at least once).
    """
    from nbgrader.api import Gradebook
    from tqdm.auto import tqdm

    target = Path(target).resolve()
    if target.exists():
        if not (target / MARKER).exists() and any(target.iterdir()):
            raise FileExistsError(f"{target} exists and was not made by this simulation: choose another folder")
        shutil.rmtree(target)
    repo_course = Course(repo)  # the repository is laid out as a course: source/, release/
    names = assignments or [a for a in assignments_in(repo_course.release()) if repo_course.source(a).is_dir()]
    course = Course.from_repo(target, names, repo=repo)
    (course.root / MARKER).write_text("made by python -m dpgrader.simulation; deleted and rebuilt on every run\n")
    if cell_timeout:
        with open(course.config_file, "a") as config:
            config.write(f"\n# The simulation: a shorter per-cell limit, so its infinite loops cost little.\n"
                         f"c.GradingLimits.cell_seconds = {int(cell_timeout)}\n")
    if progress:
        print(f"releasing {len(names)} assignments ...", flush=True)
    course.generate_assignments()
    roster = student_roster(n_students)
    with Gradebook(course.gradebook_url) as gradebook:
        for student_id, first, last in roster:
            gradebook.update_or_create_student(student_id, first_name=first, last_name=last)
    kinds = dict(kinds) if kinds is not None else assign_kinds([s for s, _, _ in roster], names, seed)
    rng = np.random.default_rng(seed + 1)
    texts = {}  # copiers need their classmate's text (see _copy_submissions)
    hand_in = np.random.default_rng(seed + 3)  # hand-in times spread over two days
    for (student, assignment), kind in tqdm(sorted(kinds.items()), desc="writing submissions", disable=not progress):
        submitted_at = HAND_IN_START + timedelta(minutes=int(hand_in.integers(48 * 60)))
        for release in notebooks_of(course.release(assignment)):
            text = make_submission(kind, release, repo_course.source(assignment) / release.name, rng)
            texts[student, assignment, release.name] = text
            if text is None:
                continue
            folder = course.submitted(student, assignment)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / release.name).write_text(text)
            (folder / "timestamp.txt").write_text(format_timestamp(submitted_at))
    from dpgrader.simulation.copying import copy_submissions

    copy_submissions(course.root, kinds, texts, np.random.default_rng(seed + 2))
    return course, kinds


def autograded_percent(root: Path) -> dict[tuple[str, str], float]:
    """Per (student, assignment): percent of the *autograded* points earned (written answers left out)."""
    from nbgrader.api import Gradebook

    result = {}
    with Gradebook(Course(root).gradebook_url) as gradebook:
        for assignment in gradebook.assignments:
            for submission in assignment.submissions:
                earned = maximum = 0.0
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        if grade.cell.cell_type == "code":  # test cells; written answers are markdown
                            earned += grade.auto_score or 0.0
                            maximum += grade.max_score
                result[submission.student.id, assignment.name] = 100 * earned / maximum if maximum else 0.0
    return result


def plot_distribution(rows: list, path: Path) -> Path:
    """Histogram of each student's overall percent, and every assignment's spread; saved as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    totals: dict[str, list[float]] = {}
    per_assignment: dict[str, list[float]] = {}
    for row in rows:
        totals.setdefault(row.student_id, [0.0, 0.0])
        totals[row.student_id][0] += float(row.score)
        totals[row.student_id][1] += float(row.max_score)
        if row.percent_of_graded is not None:  # None while nothing of the submission is graded
            per_assignment.setdefault(row.assignment, []).append(row.percent_of_graded)
    overall = [100 * s / m for s, m in totals.values() if m]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [1, 1.6]})
    left.hist(overall, bins=np.linspace(0, 100, 11), color="tab:blue", edgecolor="white")
    left.set_xlabel("overall score (% of all points, before manual grading)")
    left.set_ylabel("students")
    left.set_title(f"{len(overall)} students")
    names = sorted(per_assignment)
    right.boxplot([per_assignment[n] for n in names], showfliers=False)
    for i, name in enumerate(names, start=1):
        jitter = np.random.default_rng(i).uniform(-0.15, 0.15, len(per_assignment[name]))
        right.scatter(i + jitter, per_assignment[name], s=10, alpha=0.6, color="tab:orange")
    right.set_xticks(range(1, len(names) + 1), names, rotation=20, ha="right")
    right.set_ylabel("score (% of the points graded so far)")
    right.set_ylim(-5, 105)
    right.set_title("per assignment")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def kind_table(kinds: dict, percents: dict, outcomes: dict) -> str:
    """Per kind of submission: count, mean autograded percent, and grading outcomes."""
    lines = [f"{'kind of submission':<16}{'n':>4}{'autograded %':>14}  outcomes   ({'what it is'})"]
    for kind, (_, what) in KINDS.items():
        pairs = [p for p, k in kinds.items() if k == kind]
        if not pairs:
            continue
        values = [percents.get(p, 0.0) for p in pairs]
        counts: dict[str, int] = {}
        for pair in pairs:
            status = outcomes[pair].status if pair in outcomes else "not submitted"
            counts[status] = counts.get(status, 0) + 1
        text = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        lines.append(f"{kind:<16}{len(pairs):>4}{np.mean(values):>14.1f}  {text}   ({what})")
    return "\n".join(lines)


def run(target: Path, n_students: int = 30, workers: int | None = None, seed: int = 0, cell_timeout: int = 5,
        assignments: list[str] | None = None) -> list:
    """Build the class, grade it, write grades.csv, feedback and the plot, print the summary."""
    from dpgrader.classroom import run_grading, summarize, summarize_mistakes, write_mistakes

    started = time.perf_counter()
    course, kinds = build_class(target, n_students, assignments, seed, cell_timeout)
    graded = time.perf_counter()
    run = run_grading(course, workers=workers)
    outcomes, rows = run.outcomes, run.rows
    seconds = time.perf_counter() - graded
    plot = plot_distribution(rows, course.root / "grade_distribution.png")
    percents = autograded_percent(course.root)
    mistakes = write_mistakes(course.root, labels=kinds)  # each student labelled with their kind
    print()
    print(summarize(rows))
    print()
    print(kind_table(kinds, percents, {(o.student, o.assignment): o for o in outcomes}))
    print()
    print(summarize_mistakes([report for _, report in mistakes.values()]))
    print()
    sandboxed = all(o.sandboxed for o in outcomes)
    print(f"sandbox: {'on (bubblewrap): every kernel saw only its own copy' if sandboxed else 'OFF'}")
    print(f"{len(outcomes)} submission notebooks graded in {seconds:.0f} s "
          f"({seconds / max(1, len(outcomes)):.1f} s each, set-up {graded - started:.0f} s)")
    print(f"grades:   {course.root / 'grades.csv'}")
    print(f"feedback: {course.feedback()}/<student>/<assignment>/")
    print(f"plot:     {plot}")
    print(f"copies:   {course.similarity_report('<assignment>')}")
    print(f"mistakes: {course.root / 'mistakes'}/<assignment>.html and .csv (what the class got wrong, by kind)")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpgrader.simulation", description=__doc__.split("\n")[0])
    parser.add_argument("target", type=Path, nargs="?", default=Path("demo"), help="the course folder to create (default: demo)")
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--workers", type=int, default=None, help="grading processes (default: number of cores)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cell-timeout", type=int, default=5,
                        help="per-cell time limit in the simulated course (s; the course's own is 60)")
    parser.add_argument("--assignment", action="append", help="only this assignment (repeatable; default: all released)")
    args = parser.parse_args(argv)
    run(args.target, args.students, args.workers, args.seed, args.cell_timeout, args.assignment)
    return 0

