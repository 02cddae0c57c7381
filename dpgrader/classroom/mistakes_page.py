"""The instructor's page of what the class got wrong, and a CSV of the same numbers (see :mod:`.mistakes`).

``mistakes/<assignment>.html`` and ``mistakes/<assignment>.csv`` next to ``grades.csv``:
the tests sorted by how many submissions failed them, each with its one-line mistake and
the students who failed it (folded away, for the instructor), the written answers with
how many are pending, and figures of the failure rates and the grade distribution
(matplotlib, embedded as PNG: the page is one file). With ``labels`` (a group per student,
e.g. the demo's kind of student) a third figure shows which group failed which test.

The page may be shared: it holds no hidden-test code. Its lines come from the visible part
of each test cell, and :func:`check_no_hidden_code` refuses to write a page that quotes
any line of a hidden test, reference solution or mark scheme of the source notebooks.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from dplib.figures import PALETTE, alt_text, describe

from dpgrader.classroom.mistakes import ClassMistakes, Mistake, class_mistakes, graded_assignments
from dpgrader.course import Course, notebooks_of
from dpgrader.preprocessors.mathml import text_to_html
from dpgrader.safe_output import write_csv

# The page runs no script and loads nothing: its figures are data: URIs, its style inline.
CONTENT_SECURITY_POLICY = ("<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; img-src data:; "
                           "style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'\">")
CSV_FIELDS = ["assignment", "notebook", "grade_id", "cell", "points", "ran", "not_run", "failed", "failed_percent",
              "pending", "graded", "blank", "line"]


# --- figures ---------------------------------------------------------------------------------------------


def plot_failure_rates(mistakes: tuple[Mistake, ...], ax):
    """Horizontal bars: the share of the submissions that ran each test and failed it, most failed on top."""
    shown = [m for m in mistakes if m.ran]
    positions = np.arange(len(shown))[::-1]
    shares = [100 * m.share for m in shown]
    ax.barh(positions, shares, color=PALETTE[3])
    for y, mistake, share in zip(positions, shown, shares):
        ax.text(share + 1, y, f"{len(mistake.failed)}/{len(mistake.ran)}", va="center", fontsize=8)
    ax.set_yticks(positions, [m.grade_id for m in shown], fontsize=8)
    ax.set_xlim(0, 110)
    ax.set_xlabel("submissions that failed the test (% of those that ran)")
    ax.set_title("failure rate per test")
    return describe(ax, "failure rate per test", f"Horizontal bars for {len(shown)} tests, most failed on top: the share "
                    "of the submissions that ran each test and failed it, " + ", ".join(
                        f"{m.grade_id} {share:.0f}%" for m, share in zip(shown, shares)) + ".")


def plot_grade_distribution(percents: Mapping[str, float], ax):
    """Histogram of the submissions' grades (percent of the points graded so far)."""
    ax.hist(list(percents.values()), bins=np.linspace(0, 100, 11), color=PALETTE[0], edgecolor="white")
    ax.set_xlim(0, 100)
    ax.set_xlabel("grade (% of the points graded so far: pending answers left out)")
    ax.set_ylabel("submissions")
    ax.set_title(f"grade distribution ({len(percents)} graded)")
    grades = np.asarray(list(percents.values()), dtype=float)
    median = f", median {np.median(grades):.0f}%" if grades.size else ""
    return describe(ax, "grade distribution", f"A histogram of the grades of {grades.size} submissions in steps of "
                    f"10% of the points graded so far{median}.")


def label_shares(report: ClassMistakes, labels: Mapping[str, str]) -> tuple[list[str], np.ndarray, list[int]]:
    """Per label (rows) and test (columns, as in ``report``): the share of that label's submissions that failed it.

    Returns the labels (fewest failures first), the matrix (NaN where no submission of
    the label ran the test) and each label's number of submissions that ran.
    """
    tests = [m for m in report.mistakes if m.ran]
    names = sorted({labels[s] for s in report.ran if s in labels})
    shares = np.full((len(names), len(tests)), math.nan)
    for i, name in enumerate(names):
        for j, mistake in enumerate(tests):
            ran = [s for s in mistake.ran if labels.get(s) == name]
            if ran:
                shares[i, j] = sum(labels.get(s) == name for s in mistake.failed) / len(ran)
    counts = [sum(labels.get(s) == name for s in report.ran) for name in names]
    order = sorted(range(len(names)), key=lambda i: (np.nanmean(shares[i]) if len(tests) else 0.0, names[i]))
    return [names[i] for i in order], shares[order], [counts[i] for i in order]


def plot_label_shares(report: ClassMistakes, labels: Mapping[str, str], ax):
    """A grid: rows are labels, columns the tests (most failed left); the darker, the more of the label failed."""
    names, shares, counts = label_shares(report, labels)
    tests = [m.grade_id for m in report.mistakes if m.ran]
    ax.imshow(np.nan_to_num(shares, nan=0.0), cmap="Reds", vmin=0, vmax=1, aspect="auto")
    for i in range(len(names)):
        for j in range(len(tests)):
            if not math.isnan(shares[i, j]):
                ax.text(j, i, f"{100 * shares[i, j]:.0f}", ha="center", va="center", fontsize=7,
                        color="white" if shares[i, j] > 0.6 else "black")
    ax.set_xticks(range(len(tests)), tests, rotation=40, ha="right", fontsize=8)
    ax.set_yticks(range(len(names)), [f"{n} ({c})" for n, c in zip(names, counts)], fontsize=8)
    ax.set_title("% of each group's submissions that failed each test")
    return describe(ax, "failures per group", f"A grid of {len(names)} groups by {len(tests)} tests; each square gives, as "
                    "a number and a shade of red, the percentage of the group's submissions that failed the test.")


def figure_png(draw, size: tuple[float, float]) -> str:
    """A figure drawn by ``draw(ax)`` as an ``<img>``: a base64 PNG (matplotlib's Agg backend) and its alt text."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=size)
    draw(figure.add_subplot())
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    png = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="{html.escape(alt_text(figure))}" src="data:image/png;base64,{png}">'


# --- the page and the CSV --------------------------------------------------------------------------------


def _not_run_text(report: ClassMistakes, labels: Mapping[str, str]) -> tuple[str, str]:
    """The sentence on submissions that did not run, and who they are (folded away)."""
    if not report.not_run:
        return "every submission ran", ""
    counts: dict[str, int] = {}
    for status in report.not_run.values():
        counts[status] = counts.get(status, 0) + 1
    statuses = ", ".join(f"{html.escape(status)} {n}" for status, n in sorted(counts.items()))
    who = ", ".join(f"{_who(s, labels)}: {html.escape(report.not_run[s])}" for s in sorted(report.not_run))
    return (f"{len(report.not_run)} did not run and are left out of the counts ({statuses})",
            f"<details class=names><summary>submissions that did not run</summary>{who}</details>")


def counted(number: int, noun: str) -> str:
    """``1 student``, ``2 students``: a count with its noun in the right number.

    >>> counted(1, "student"), counted(0, "student"), counted(12, "submission")
    ('1 student', '0 students', '12 submissions')
    """
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _who(student: str, labels: Mapping[str, str]) -> str:
    label = f" <span class=label>({html.escape(labels[student])})</span>" if student in labels else ""
    return f"{html.escape(student)}{label}"


def _mistake_row(rank: int, mistake: Mistake, labels: Mapping[str, str], names: bool) -> str:
    share = f"{100 * mistake.share:.0f}%" if mistake.ran else "-"
    hints = "".join(f"<li>{html.escape(h)}</li>" for h in mistake.hints)
    students = ""
    if names and mistake.failed:
        students = (f"<details class=names><summary>{counted(len(mistake.failed), 'student')}</summary>"
                    + ", ".join(_who(s, labels) for s in mistake.failed) + "</details>")
    return (
        f"<tr><td>{rank}</td><td><code>{html.escape(mistake.grade_id)}</code><br><small>"
        f"{html.escape(mistake.notebook)}, {mistake.points:g} points</small></td>"
        f"<td class=num><b>{share}</b><br><small>{len(mistake.failed)} of {len(mistake.ran)}</small></td>"
        f"<td>{text_to_html(mistake.line) or '<i>the test cell has no docstring</i>'}"
        f"{f'<ul class=hints>{hints}</ul>' if hints else ''}</td><td>{students}</td></tr>"
    )


def mistakes_html(report: ClassMistakes, labels: Mapping[str, str] | None = None, names: bool = True) -> str:
    """A self-contained HTML page of what the class got wrong in one assignment (every text escaped).

    Parameters
    ----------
    report : ClassMistakes
        What :func:`~dpgrader.classroom.mistakes.class_mistakes` read.
    labels : mapping, optional
        student -> group (a tutorial group, the demo's kind of student): shown beside each
        name, and as a figure of which group failed which test.
    names : bool
        List the students who failed each test (folded away); ``False`` for a page to share.
    """
    labels = labels or {}
    assignment = html.escape(report.assignment)
    not_run, not_run_names = _not_run_text(report, labels)
    tests = [m for m in report.mistakes if m.ran]
    figures = []
    if tests:
        figures.append(figure_png(lambda ax: plot_failure_rates(report.mistakes, ax), (6.5, 1.2 + 0.32 * len(tests))))
    if report.percents:
        figures.append(figure_png(lambda ax: plot_grade_distribution(report.percents, ax), (5, 3.4)))
    grid = ""
    if labels and tests and any(s in labels for s in report.ran):
        rows = len(label_shares(report, labels)[0])
        grid = figure_png(lambda ax: plot_label_shares(report, labels, ax), (max(6.5, 1.6 + 0.62 * len(tests)), 1.8 + 0.3 * rows))
    images = "".join(figures)
    rows = "".join(_mistake_row(rank, m, labels, names) for rank, m in enumerate(report.mistakes, start=1))
    written = "".join(
        f"<tr><td><code>{html.escape(w.grade_id)}</code><br><small>{w.points:g} points</small></td>"
        f"<td>{text_to_html(w.question)}</td><td class=num>{w.pending}</td><td class=num>{w.graded}</td>"
        f"<td class=num>{w.blank}</td></tr>"
        for w in report.written
    )
    return (
        f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8>{CONTENT_SECURITY_POLICY}"
        f"<title>What the class got wrong: {assignment}</title><style>"
        "body{font-family:sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse;width:100%}"
        "td,th{border-bottom:1px solid #ddd;padding:.4em;vertical-align:top;text-align:left}"
        ".num{text-align:right;white-space:nowrap}.hints{margin:.3em 0 0;color:#555;font-size:85%}"
        ".label{color:#595959}.figures img{max-width:49%;vertical-align:top}.grid img{max-width:100%}"
        "details.names summary{cursor:pointer;color:#06c}"
        f"</style></head><body><main><h1>What the class got wrong: {assignment}</h1>"
        f"<p>{counted(len(report.ran), 'submission')} ran; {not_run}. A test is failed when the autograder gave it less "
        "than its points. Each line is the test's own docstring (what it checks: the mistake is not doing that), "
        f"with the hints students see; hidden tests are never shown.</p>{not_run_names if names else ''}"
        f"<div class=figures>{images}</div>"
        + (f"<div class=grid>{grid}</div>" if grid else "")
        + "<h2>Autograded tests, most failed first</h2>"
        "<table><tr><th>#</th><th>test</th><th class=num>failed</th><th style=width:45%>the mistake it targets</th>"
        f"<th>who</th></tr>{rows or '<tr><td colspan=5>No autograded test.</td></tr>'}</table>"
        + ("<h2>Written answers (graded by hand, not failures)</h2><table><tr><th>answer</th><th>question</th>"
           f"<th class=num>pending</th><th class=num>graded</th><th class=num>blank</th></tr>{written}</table>"
           if report.written else "")
        + "</main></body></html>"
    )


def report_rows(report: ClassMistakes) -> list[dict]:
    """The page's numbers, one row per graded cell (columns :data:`CSV_FIELDS`)."""
    common = {"assignment": report.assignment, "not_run": len(report.not_run)}
    rows = [
        {**common, "notebook": m.notebook, "grade_id": m.grade_id, "cell": "test", "points": m.points,
         "ran": len(m.ran), "failed": len(m.failed),
         "failed_percent": round(100 * m.share, 1) if m.ran else "", "pending": "", "graded": "", "blank": "",
         "line": m.line}
        for m in report.mistakes
    ]
    rows += [
        {**common, "notebook": w.notebook, "grade_id": w.grade_id, "cell": "written answer", "points": w.points,
         "ran": len(report.ran), "failed": "", "failed_percent": "", "pending": w.pending, "graded": w.graded,
         "blank": w.blank, "line": w.question}
        for w in report.written
    ]
    return rows


def check_no_hidden_code(page: str, source_folder: Path) -> None:
    """Raise if ``page`` quotes a line of a hidden test, reference solution or mark scheme of ``source_folder``.

    The secret lines are the feedback's (:func:`dpgrader.preprocessors.feedback.secret_lines`);
    the page is read as text (unescaped, without its embedded images).
    """
    import nbformat

    from dpgrader.preprocessors.scrubber import secret_lines

    sources = [c.source for nb in notebooks_of(source_folder)
               for c in nbformat.read(str(nb), as_version=4).cells]
    text = html.unescape(re.sub(r'src="data:image/png;base64,[^"]*"', "", page))
    quoted = sorted(line for line in secret_lines(sources) if line in text)
    if quoted:
        raise RuntimeError(f"the mistakes page of {Path(source_folder).name} would quote {len(quoted)} line(s) of "
                           "hidden tests or solutions: not written")


def write_assignment_mistakes(course: Course, assignment: str, folder: Path, labels: Mapping[str, str] | None = None,
                 names: bool = True, outcomes: Mapping | None = None) -> tuple[Path, ClassMistakes]:
    """Write ``<folder>/<assignment>.html`` and ``.csv``; return the page's path and what it shows."""
    report = class_mistakes(course, assignment, outcomes)
    page = mistakes_html(report, labels, names)
    check_no_hidden_code(page, course.source(assignment))
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{assignment}.html"
    target.write_text(page)
    write_csv(folder / f"{assignment}.csv", CSV_FIELDS, report_rows(report))  # no field a spreadsheet runs
    return target, report


def write_mistakes(root: Path | Course, assignments: list[str] | None = None, folder: Path | None = None,
                  labels: Mapping[tuple[str, str], str] | None = None, names: bool = True,
                  outcomes: Mapping | None = None) -> dict[str, tuple[Path, ClassMistakes]]:
    """Write the page and CSV of every graded assignment (or of ``assignments``) into ``folder``.

    Parameters
    ----------
    root : Path or Course
        The course (``gradebook.db``, ``source/``, ``autograded/grading_outcomes.csv``).
    assignments : list of str, optional
        Default: every assignment of the gradebook with a submission.
    folder : Path, optional
        Default: ``<root>/mistakes`` (next to ``grades.csv``).
    labels : mapping, optional
        ``(student, assignment) -> group``, shown on the pages (see :func:`mistakes_html`).
    names : bool
        List who failed each test (``False``: pages to share).
    outcomes : mapping, optional
        ``(student, assignment) -> Outcome``, as a grading run holds them (default: read from
        ``grading_outcomes.csv``).
    """
    course = root if isinstance(root, Course) else Course(root)
    folder = Path(folder or course.root / "mistakes")
    written = {}
    for assignment in assignments or graded_assignments(course):
        these = {s: label for (s, a), label in (labels or {}).items() if a == assignment}
        written[assignment] = write_assignment_mistakes(course, assignment, folder, these, names, outcomes)
    return written
