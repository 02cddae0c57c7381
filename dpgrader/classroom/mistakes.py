"""What the class got wrong: for every autograded test of an assignment, who failed it, and the mistake it targets.

Every test cell of the course targets one classic mistake and says which in its first
line, a docstring ("Check that ..."). After grading, :func:`class_mistakes` reads
the gradebook (nbgrader's API) and the grading outcomes of an assignment and counts, for
each test, the submissions that failed it among those that *ran*; the written answers are
counted as pending, graded or blank, never as failures. The page and the CSV are written
by :mod:`dpgrader.classroom.mistakes_page`.

Only the *visible* part of a test cell is ever read (:func:`visible_part`): its docstring
and the ``hint=`` strings students see. Nothing between ``### BEGIN HIDDEN TESTS`` and
``### END HIDDEN TESTS`` reaches the report.
"""

from __future__ import annotations

import ast
import math
import re
import textwrap
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dpgrader.cells import grade_id_of, is_grade, is_solution, visible_part
from dpgrader.course import Course
from dpgrader.outcomes import UNGRADED, ZERO, RowLabel, read_outcomes

NOT_RUN = (*UNGRADED, *ZERO)  # grades unknown (error, killed) or nothing ran (missing, unreadable, ...)
QUESTION_WIDTH = 220  # characters of a written answer's question shown


# --- what each cell targets, from the source notebook ----------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(text.split())


def docstring_line(code: str) -> str:
    r"""The docstring a cell opens with, on one line (``""`` if it has none).

    Examples
    --------
    >>> docstring_line("'''Check that f is\n   the identity.'''\nassert f(1) == 1")
    'Check that f is the identity.'
    """
    try:
        return _one_line(ast.get_docstring(ast.parse(code), clean=True) or "")
    except SyntaxError:  # a cell that does not parse on its own: its opening string literal, if any
        match = re.match(r'\s*(?:"""|\'\'\')(.*?)(?:"""|\'\'\')', code, re.DOTALL)
        return _one_line(match.group(1)) if match else ""


def hint_strings(code: str) -> tuple[str, ...]:
    r"""The constant ``hint="..."`` arguments of the calls in ``code``, in order (f-strings are skipped).

    Examples
    --------
    >>> hint_strings('check(x, 1, hint="Divide by n.")\ncheck(y, 2, hint=f"not {y}")')
    ('Divide by n.',)
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ()
    hints = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "hint" and isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, str):
                    hints.append(_one_line(keyword.value.value))
    return tuple(dict.fromkeys(h for h in hints if h))


def cell_lines(source_notebook: Path) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Per graded cell of a source notebook: ``(one line, hints)``, in notebook order.

    A test cell's line is its docstring and its hints the visible ``hint=`` strings; a
    written answer's line is its question (the last paragraph of the cell before it, the
    answer cell itself holds the model answer and is never read).
    """
    import nbformat

    cells = nbformat.read(str(source_notebook), as_version=4).cells
    lines = {}
    for index, cell in enumerate(cells):
        grade_id = grade_id_of(cell)
        if not is_grade(cell) or not grade_id:
            continue
        if is_solution(cell):
            before = cells[index - 1].source if index > 0 and cells[index - 1].cell_type == "markdown" else ""
            paragraphs = [p for p in re.split(r"\n\s*\n", before) if p.strip()]
            question = _one_line(paragraphs[-1]) if paragraphs else ""
            question = re.sub(r"^\*\*(Exercise [\w.]+)[^*]*\*\*\s*", r"\1: ", question)  # "**Exercise 9 (2 points).**"
            lines[grade_id] = (textwrap.shorten(question, QUESTION_WIDTH, placeholder=" ..."), ())
        else:
            visible = visible_part(cell.source)
            lines[grade_id] = (docstring_line(visible), hint_strings(visible))
    return lines


# --- what the gradebook says -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Mistake:
    """One autograded test: the mistake it targets, the students whose submission ran it, those who failed it.

    ``failed`` is the students whose autograder score for the test is below its points
    (nbgrader's own ``failed_tests``), whatever a manual score may have changed since.
    """

    notebook: str
    grade_id: str
    points: float
    line: str
    hints: tuple[str, ...] = ()
    ran: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()

    @property
    def share(self) -> float:
        """Failed / ran (NaN when no submission ran the test)."""
        return len(self.failed) / len(self.ran) if self.ran else math.nan


@dataclass(frozen=True)
class WrittenAnswer:
    """One answer graded by hand: its question, and how many are pending, graded, or left blank.

    Pending: written, waiting for a grader. Blank: unchanged from the release (nbgrader
    scores it 0 without asking anybody).
    """

    notebook: str
    grade_id: str
    points: float
    question: str
    pending: int = 0
    graded: int = 0
    blank: int = 0


@dataclass(frozen=True)
class ClassMistakes:
    """What one assignment's class got wrong.

    Attributes
    ----------
    mistakes : tuple of Mistake
        Every autograded test, most failed first (ties in notebook order).
    written : tuple of WrittenAnswer
        Every answer graded by hand, in notebook order.
    percents : dict
        student -> percent of the points graded so far (``grades.csv``'s
        ``percent_of_graded``: a pending answer is not a 0), for every submission with a
        graded point (left out: ``error`` and ``killed``, whose grades are unknown).
    ran : tuple of str
        The students whose submission ran.
    not_run : dict
        student -> status of every submission that did not run (:data:`NOT_RUN`); left out
        of every count.
    """

    assignment: str
    mistakes: tuple[Mistake, ...]
    written: tuple[WrittenAnswer, ...]
    percents: dict[str, float] = field(default_factory=dict)
    ran: tuple[str, ...] = ()
    not_run: dict[str, str] = field(default_factory=dict)


def _ordered(names, order: list[str]) -> list[str]:
    position = {name: i for i, name in enumerate(order)}
    return sorted(names, key=lambda n: (position.get(n, len(order)), n))


def class_mistakes(root: Path | Course, assignment: str, outcomes: Mapping | None = None) -> ClassMistakes:
    """Read the gradebook and grading outcomes of ``root`` (a course folder) for ``assignment``.

    Raises
    ------
    nbgrader.api.MissingEntry
        If the gradebook does not know ``assignment``.
    """
    from nbgrader.api import Gradebook

    course = root if isinstance(root, Course) else Course(root)
    outcomes = read_outcomes(course) if outcomes is None else outcomes  # a grading run passes those it holds
    with Gradebook(course.gradebook_url) as gradebook:
        found = gradebook.find_assignment(assignment)
        cells = []  # (notebook, grade_id, points, written?)
        lines: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {}
        for notebook in sorted(found.notebooks, key=lambda n: n.name):
            source = course.source(assignment) / f"{notebook.name}.ipynb"
            known = cell_lines(source) if source.exists() else {}
            lines.update({(notebook.name, g): v for g, v in known.items()})
            solutions = {c.name for c in notebook.solution_cells}
            for name in _ordered([c.name for c in notebook.grade_cells], list(known)):
                cell = next(c for c in notebook.grade_cells if c.name == name)
                cells.append((notebook.name, name, float(cell.max_score), name in solutions))
        ran: dict[tuple[str, str], list[str]] = {(n, g): [] for n, g, _, _ in cells}
        failed: dict[tuple[str, str], list[str]] = {(n, g): [] for n, g, _, _ in cells}
        written: dict[tuple[str, str], Counter] = {(n, g): Counter() for n, g, _, w in cells if w}
        percents, everyone_ran, not_run = {}, [], {}
        for submission in sorted(found.submissions, key=lambda s: s.student.id):
            student = submission.student.id
            outcome = outcomes.get((student, assignment))
            status = outcome.status if outcome else RowLabel.GRADED_BY_NBGRADER
            graded_points = float(submission.max_score) - _pending_points(submission)
            if status not in UNGRADED and graded_points > 0:
                score = submission.score - (submission.late_submission_penalty or 0.0)
                percents[student] = 100 * float(score) / graded_points
            if status in NOT_RUN:
                not_run[student] = status.value
                continue
            everyone_ran.append(student)
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    key = (notebook.name, grade.name)
                    if key in written:
                        written[key][_written_state(grade)] += 1
                    elif key in ran and grade.auto_score is not None:
                        ran[key].append(student)
                        if grade.auto_score < grade.max_score:
                            failed[key].append(student)
    missing = ("(no source notebook: the test's line is unknown)", ())
    mistakes = [
        Mistake(n, g, p, *lines.get((n, g), missing), ran=tuple(ran[n, g]), failed=tuple(failed[n, g]))
        for n, g, p, w in cells if not w
    ]
    order = {id(m): i for i, m in enumerate(mistakes)}
    mistakes.sort(key=lambda m: (-(m.share if m.ran else -1.0), order[id(m)]))
    answers = tuple(
        WrittenAnswer(n, g, p, lines.get((n, g), missing)[0], **{k: written[n, g][k] for k in ("pending", "graded", "blank")})
        for n, g, p, w in cells if w
    )
    return ClassMistakes(assignment, tuple(mistakes), answers, percents, tuple(everyone_ran), not_run)


def _pending_points(submission) -> float:
    """Points of the cells awaiting a person (as ``grades.csv``'s ``points_pending``)."""
    return sum(float(grade.max_score) for notebook in submission.notebooks for grade in notebook.grades
               if grade.needs_manual_grade and grade.manual_score is None)


def _written_state(grade) -> str:
    """``graded`` (a manual score), ``pending`` (waits for a grader) or ``blank`` (unchanged: 0 from nbgrader)."""
    if grade.manual_score is not None:
        return "graded"
    if grade.needs_manual_grade or grade.auto_score is None:
        return "pending"
    return "blank"


def graded_assignments(root: Path | Course) -> list[str]:
    """The assignments of the gradebook of ``root`` with at least one submission, sorted."""
    from nbgrader.api import Gradebook

    with Gradebook((root if isinstance(root, Course) else Course(root)).gradebook_url) as gradebook:
        return sorted(a.name for a in gradebook.assignments if a.num_submissions)


# --- in words --------------------------------------------------------------------------------------------


def most_common(reports: list[ClassMistakes], n: int = 3) -> list[tuple[str, Mistake]]:
    """The ``n`` tests failed by the largest share of the submissions that ran them, across assignments."""
    ranked = [(r.assignment, m) for r in reports for m in r.mistakes if m.ran]
    ranked.sort(key=lambda am: (-am[1].share, -len(am[1].failed), am[0], am[1].grade_id))
    return ranked[:n]


def describe(mistake: Mistake) -> str:
    """``share (failed/ran) grade_id: line`` on one line."""
    return f"{100 * mistake.share:.0f}% ({len(mistake.failed)}/{len(mistake.ran)}) {mistake.grade_id}: {mistake.line}"


def summarize_mistakes(reports: list[ClassMistakes], n: int = 3) -> str:
    """Plain text: the ``n`` most common mistakes of the class, with their failure rates."""
    top = most_common(reports, n)
    if not top:
        return "most common mistakes: no test ran"
    lines = ["most common mistakes (share of the submissions that ran the test):"]
    lines += [f"  {assignment}: {describe(mistake)}" for assignment, mistake in top]
    return "\n".join(lines)
