"""The flags of a grading run: each submission reviewed, copies found across the class, all shown in formgrader.

On typed values:

- :func:`review` — the review flags of one submission, by notebook (:func:`~dpgrader.review.review_flags`,
  against the instructor's notebook), taken by :func:`~dpgrader.grading.merge.record`;
- :func:`flag_copies`, the step of :func:`~dpgrader.grading.run.run_grading` after every result is recorded:
  :func:`copy_check` — ``similarity/<assignment>.html`` for each graded assignment, and the copy flags it
  gives added to the outcomes (:mod:`dpgrader.similarity`) — then :func:`comment_flags` — every flag of a
  submission, review and copy alike, shown once in formgrader
  (:func:`~dpgrader.review.comment_in_gradebook`), from the flags in memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from dpgrader.course import Course, notebooks_of
from dpgrader.grading.task import GradingTask
from dpgrader.outcomes import Flag, FlagKind, Outcome
# Review flags: a syntax-tree review of every submission (dpgrader.review).
from dpgrader.grading.review_comments import comment_in_gradebook
from dpgrader.review import review_flags

Flags = dict[str, tuple[Flag, ...]]  # notebook name (no suffix) -> its flags


@dataclass(frozen=True)
class Graded:
    """A submission's outcome and its flags by notebook (what formgrader shows on each notebook)."""

    outcome: Outcome
    notebooks: Flags = field(default_factory=dict)


def review(task: GradingTask) -> Flags:
    """The review flags of each notebook of ``task``'s submission, reviewed against the instructor's notebook."""
    flags = {}
    for notebook in notebooks_of(task.submission):
        instructor = task.course.source(task.assignment) / notebook.name
        flags[notebook.stem] = review_flags(notebook, instructor if instructor.exists() else None)
    return flags


def copy_check(course: Course, graded: list[Graded]) -> list[Graded]:
    """Write ``similarity/<assignment>.html`` for each graded assignment; add the copy flags it gives.

    A copy flag goes on the outcome and on the assignment's first notebook. Fails closed: when an
    assignment's similarity report cannot be made, every submission of that assignment is flagged
    ``"copy check: ... could not be made (<error>)"`` (its grades are kept); a submission the report
    could not compare is flagged by the report itself.
    """
    from dpgrader.similarity import copy_flags, submission_times, write_report

    flags: dict = {}
    for assignment in sorted({g.outcome.assignment for g in graded}):
        try:
            flags.update(copy_flags(write_report(course, assignment)[1], submission_times(course, assignment)))
        except Exception as error:  # noqa: BLE001 -- the grades are kept; every submission is flagged with the reason
            failed = Flag(FlagKind.COPY_CHECK, f"the similarity report of {assignment} could not be made ({error!r}): "
                                               "a person must compare these submissions")
            for g in graded:
                if g.outcome.assignment == assignment:
                    flags[g.outcome.student, assignment] = flags.get((g.outcome.student, assignment), ()) + (failed,)
    checked = []
    for g in graded:
        found = flags.get((g.outcome.student, g.outcome.assignment), ())
        if found:
            first = sorted(p.stem for p in notebooks_of(course.source(g.outcome.assignment)))[:1]
            notebooks = {**g.notebooks, **{name: g.notebooks.get(name, ()) + found for name in first}}
            g = Graded(replace(g.outcome, flags=g.outcome.flags + found), notebooks)
        checked.append(g)
    return checked


def comment_flags(course: Course, graded: Iterable[Graded]) -> int:
    """Show each submission's flags in formgrader (flagged, and a comment naming no classmate); return how many."""
    from nbgrader.api import Gradebook

    graded = [g for g in graded if any(g.notebooks.values())]
    if not graded:
        return 0
    with Gradebook(course.gradebook_url) as gradebook:
        # feedback leaves review notes out (HideReviewNotes); the comment shows each flag naming no classmate
        return sum(comment_in_gradebook(gradebook, g.outcome.student, g.outcome.assignment, g.notebooks)
                   for g in graded)


def flag_copies(course: Course, graded: list[Graded]) -> list[Graded]:
    """The copy check (:func:`copy_check`), then every flag shown in formgrader (:func:`comment_flags`); ``graded``
    with the copy flags."""
    graded = copy_check(course, graded)
    comment_flags(course, graded)
    return graded


def add_copy_flags(root: Path, outcomes: list[Outcome]) -> list[Outcome]:
    """:func:`flag_copies` for ``outcomes`` of the course at ``root``: the outcomes with copy flags."""
    return [g.outcome for g in flag_copies(Course(root), [Graded(outcome) for outcome in outcomes])]
