"""Whom a match flags: the later of two classmates when the submission times tell them apart, always the
student for a copy of dplib or the reference, and a submission that could not be compared.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from dpgrader.course import Course
from dpgrader.outcomes import Flag
from dpgrader.similarity.matches import CLASSMATE, Match


def submission_times(root: Path | Course, assignment: str) -> dict[str, datetime]:
    """When each student handed in ``assignment``, from nbgrader's ``submitted/<student>/<assignment>/timestamp.txt``."""
    from nbgrader.utils import parse_utc

    times = {}
    course = root if isinstance(root, Course) else Course(root)
    for stamp in sorted(course.submitted().glob(f"*/{assignment}/timestamp.txt")):
        try:
            times[stamp.parent.parent.name] = parse_utc(stamp.read_text().strip())
        except (OSError, ValueError, TypeError, OverflowError):
            continue  # no usable time: the pair is flagged on both sides
    return times


def copy_flags(matches: list[Match], submitted_at: dict[str, datetime] | None = None) -> dict[tuple[str, str], tuple[Flag, ...]]:
    """``(student, assignment) -> review flags`` of the students in ``matches``.

    A pair of classmates flags only the one who handed in later when ``submitted_at`` (see
    :func:`submission_times`) tells the two apart; a match with dplib or the reference, and a
    submission that could not be compared, always flag the student.
    """
    times = submitted_at or {}
    flags: dict[tuple[str, str], list[Flag]] = {}
    for match in matches:
        first = handed_in_first(match.student, match.other, times) if match.kind == CLASSMATE else None
        if first == match.student:
            continue  # handed in first: likely the source; the pair is in the report
        flags.setdefault((match.student, match.assignment), []).append(match.flag(earlier=first == match.other))
    return {key: tuple(dict.fromkeys(value)) for key, value in flags.items()}


def handed_in_first(student: str, other: str, times: dict[str, datetime]) -> str | None:
    """Which of two students handed in first, or None if the times do not tell."""
    mine, theirs = times.get(student), times.get(other)
    if mine is None or theirs is None or mine == theirs:
        return None
    return student if mine < theirs else other
