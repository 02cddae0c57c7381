"""The first step of a grading run, planning: find the submissions, one task per submission, packed as it is sent.

:func:`plan_run` is the step: :func:`find_submissions` lists ``submitted/<student>/<assignment>/``
(never globbed) and refuses, unread, a submission holding anything but plain files or under an id
nbgrader would read as a pattern; each submission found becomes one
:class:`~dpgrader.grading.task.GradingTask` (largest first; with ``--resume``, not those the gradebook
holds graded already), and :meth:`Plan.packed` gives them as a worker gets them.
"""

from __future__ import annotations

import csv
import re
import secrets
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from dpgrader.course import Course, notebooks_of
from dpgrader.intake import irregular_entry
from dpgrader.limits import GradingLimits
from dpgrader.grading.task import GradingTask, PackedTask
from dpgrader.ids import valid_student_id
from dpgrader.outcomes import Effect, Outcome, Status, read_outcomes
from dpgrader.safe_output import one_line

# Characters nbgrader reads as a glob pattern in a student id (``x[1]`` would grade ``x1``).
PATTERN_CHARACTERS = re.compile(r"[*?\[\]\x00-\x1f]")


# --- 1. find ---------------------------------------------------------------------------------------------


class Submission(NamedTuple):
    """One submission folder to grade: ``submitted/<student>/<assignment>``."""

    student: str
    assignment: str


def find_submissions(course: Course, assignments=None, students=None) -> tuple[list[Submission], list[Outcome]]:
    """Every submission folder in ``course``'s ``submitted/``, sorted, and the refused ones.

    Folders are listed, never globbed: a student id is a name, not a pattern. Refused (with
    a :data:`~dpgrader.outcomes.Status.REFUSED` outcome, 0 points): a submission whose tree holds
    anything but plain files and folders (:func:`~dpgrader.intake.irregular_entry`: a link
    anywhere, a hard link, a device, a FIFO), and a student id nbgrader would read as a pattern.
    """
    course = course if isinstance(course, Course) else Course(course)
    wanted = set(assignments) if assignments else set(course.assignments())
    found, refused = [], []
    submitted = course.submitted()
    for student_dir in sorted(submitted.iterdir()) if submitted.is_dir() else []:
        student = student_dir.name
        if students and student not in students:
            continue
        for folder in sorted(student_dir.iterdir()) if student_dir.is_dir() else []:
            assignment = folder.name
            if assignment not in wanted:
                continue
            if not (folder.is_dir() or folder.is_symlink()):
                continue  # a stray file, not a submission
            irregular = irregular_entry(folder) if not student_dir.is_symlink() else "the student folder is a symbolic link"
            if irregular:
                refused.append(Outcome(student, assignment, Status.REFUSED,
                                       f"{irregular}: a submission holds regular files only; refused, it scores 0", 0.0))
            elif not valid_student_id(student):  # dpgrader.ids: markup, patterns, "..", spaces
                refused.append(Outcome(student, assignment, Status.REFUSED,
                                       "the student id is not 1 to 128 of A-Z a-z 0-9 . _ @ - (not starting with . or -): "
                                       "refused, rename the folder", 0.0))
            elif folder.is_dir():
                found.append(Submission(student, assignment))
    return found, refused


def ensure_assignments(course: Course, assignments) -> None:
    """Make sure the gradebook knows every assignment (``nbgrader generate_assignment`` if not)."""
    from nbgrader.api import Gradebook, MissingEntry

    missing = list(assignments)
    if course.gradebook.exists():
        missing = []
        with Gradebook(course.gradebook_url) as gradebook:
            for assignment in assignments:
                try:
                    if not gradebook.find_assignment(assignment).notebooks:
                        missing.append(assignment)
                except MissingEntry:
                    missing.append(assignment)
    for assignment in missing:
        course.nbgrader("generate_assignment", assignment, "--force")


def class_limits(course: Course, overrides: Mapping[str, float] | None = None) -> GradingLimits:
    """The limits of a grading run: the course's ``c.GradingLimits`` (``nbgrader_config.py``), then ``overrides``."""
    return GradingLimits.from_config(course.config()).replace(**dict(overrides or {}))


# --- 2. plan ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What a run grades: the tasks (largest first), the submissions refused unread, the outcomes known before."""

    tasks: tuple[GradingTask, ...]
    refused: tuple[Outcome, ...]
    known: dict  # (student, assignment) -> Outcome, from grading_outcomes.csv

    @property
    def assignments(self) -> list[str]:
        """The assignments the run touches, sorted."""
        return sorted({t.assignment for t in self.tasks} | {o.assignment for o in self.refused})

    def packed(self) -> Iterator[PackedTask]:
        """Each task as a worker gets it, its files read as it is sent (:meth:`~dpgrader.grading.task.GradingTask.packed`)."""
        return (task.packed() for task in self.tasks)


def plan_run(course: Course, assignments: list[str] | None, students: list[str] | None, limits: GradingLimits, *,
             feedback: bool, sandboxed: bool, resume: bool) -> Plan:
    """The submissions of ``course`` (:func:`find_submissions`), one task each with a random token, largest first.

    With ``resume``, only those not graded yet (:func:`graded_before`), refused ones included.
    """
    submissions, refused = find_submissions(course, assignments, students)
    known = _readable_outcomes(course)
    if resume:
        done = graded_before(course, known)
        submissions = [s for s in submissions if tuple(s) not in done]
        refused = [o for o in refused if (o.student, o.assignment) not in done]
    tasks = [
        GradingTask(course=course, assignment=assignment, student=student,
                    submission=course.submitted(student, assignment), token=secrets.token_hex(16), limits=limits,
                    feedback=feedback, sandboxed=sandboxed)
        for student, assignment in submissions
    ]
    # Longest first (bigger notebooks run longer), so no worker is left with a long tail alone.
    tasks.sort(key=lambda task: -sum(p.stat().st_size for p in notebooks_of(task.submission)))
    return Plan(tuple(tasks), tuple(refused), known)


def _readable_outcomes(course: Course) -> dict:
    """The outcomes recorded so far; a file that cannot be read is set aside (with a warning), never trusted."""
    try:
        return read_outcomes(course)
    except (ValueError, KeyError, TypeError, AttributeError, csv.Error, UnicodeDecodeError) as error:
        path = course.outcomes_file
        aside = path.with_name(f"{path.name}.unreadable-{secrets.token_hex(4)}")
        path.rename(aside)
        warnings.warn(f"{path} cannot be read ({type(error).__name__}: {one_line(str(error))[:200]}): set aside as "
                      f"{aside.name}; with --resume every submission is graded again", RuntimeWarning, stacklevel=3)
        return {}


def graded_before(course: Course, known: Mapping) -> set[tuple[str, str]]:
    """The ``(student, assignment)`` that ``grade --resume`` leaves alone: graded, by the gradebook's word.

    ``known`` are the rows of ``grading_outcomes.csv``, a file anyone may edit; a row counts only if its
    status is one of a graded submission and the gradebook holds that submission with a score (an
    autograder's or a person's) in at least one of its cells. Anything else (a row saying ``ok`` for a
    submission never merged, or merged ungraded) is graded again. A row is never a grade: grades come
    from the gradebook only.
    """
    from nbgrader.api import Gradebook, MissingEntry

    claimed = [key for key, outcome in known.items() if outcome.status.effect is not Effect.UNGRADED]
    if not claimed or not course.gradebook.exists():
        return set()
    done = set()
    with Gradebook(course.gradebook_url) as gradebook:
        for student, assignment in claimed:
            try:
                submission = gradebook.find_submission(assignment, student)
            except MissingEntry:
                continue
            grades = [grade for notebook in submission.notebooks for grade in notebook.grades]
            if grades and any(g.auto_score is not None or g.manual_score is not None for g in grades):
                done.add((student, assignment))
    return done


