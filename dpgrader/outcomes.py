"""What happened to a submission: one vocabulary (:class:`Status`), carried as fields end to end.

The sandbox and the nbgrader plug-ins *note* what they see while a notebook is graded
(:func:`note`: a limit was hit, a cell timed out, the kernel died) to the collector of the
task being graded (:class:`TaskNotes`, one per task), which the worker returns as data; the class
grader records one :class:`Outcome` per submission in ``autograded/grading_outcomes.csv``
and ``grades.csv``. Nothing is found again by reading log lines or exception names.
Notes live in the grading process: student code runs in a sandboxed kernel and cannot
reach them.

A status says how bad it is itself (:attr:`Status.severity`, a number, not its place in the
class) and what it means for the grade (:attr:`Status.effect`). What a person must look at,
whatever the score, is a :class:`Flag`: a value with its kind, reason and the cell it concerns,
made text only when written to a CSV file or a page.
"""

from __future__ import annotations

import contextlib
import contextvars
import csv
import json
from dataclasses import dataclass, field, fields
from collections.abc import Iterable
from enum import Enum
from pathlib import Path

from dpgrader.course import Course
from dpgrader.safe_output import flag_text, from_csv_field, write_csv

class Effect(str, Enum):
    """What an outcome means for the grade."""

    SCORED = "scored"  # the cells that ran were scored; the others score 0
    ZERO = "zero"  # nothing ran: every autograded cell scores 0
    UNGRADED = "ungraded"  # not graded: grades unknown, not zero; a person must look


class Status(str, Enum):
    """Outcome of one submission; a submission gets the most severe that applies (:meth:`worst`).

    Each member is ``(value, severity, effect, meaning)``. Severity orders outcomes explicitly:
    a new status takes the number its harm deserves, wherever it is written in the class.
    """

    OK = "ok", 0, Effect.SCORED, "graded; nothing went wrong"
    TIMED_OUT = "timed_out", 10, Effect.SCORED, "a cell ran past its time limit and was interrupted"
    TIME_BUDGET = "time_budget", 20, Effect.SCORED, "the notebook used up its time budget: the later cells were not run"
    OUTPUT_LIMIT = "output_limit", 30, Effect.SCORED, "a cell or the notebook printed too much: output truncated"
    PROCESS_LIMIT = "process_limit", 40, Effect.SCORED, "it tried to start more processes than allowed"
    FILE_LIMIT = "file_limit", 50, Effect.SCORED, "it tried to write a file larger than allowed"
    DISK_LIMIT = "disk_limit", 60, Effect.SCORED, "it filled its work folder (bytes or files): the later cells were not run"
    KERNEL_UNRESPONSIVE = "kernel_unresponsive", 70, Effect.SCORED, "the kernel stopped answering: the later cells were not run"
    KERNEL_DIED = "kernel_died", 80, Effect.SCORED, "the kernel died: the later cells were not run"
    MEMORY_LIMIT = "memory_limit", 90, Effect.SCORED, "the kernel (or something it started) ran out of its memory"
    CPU_LIMIT = "cpu_limit", 100, Effect.SCORED, "the kernel used up its CPU seconds"
    MISSING = "missing", 110, Effect.ZERO, "no notebook was handed in"
    UNREADABLE = "unreadable", 120, Effect.ZERO, "a notebook nbformat cannot read: it scores 0"
    TOO_LARGE = "too_large", 130, Effect.ZERO, "refused before running: notebook too big or too many cells"
    REFUSED = "refused", 140, Effect.ZERO, "refused before running: a link in the submission, or an id that is not a plain name"
    ERROR = "error", 150, Effect.UNGRADED, "not graded (nbgrader, the guard or an import failed): a person must look"
    WORKER_CRASHED = "worker_crashed", 155, Effect.UNGRADED, "not graded: it stopped every grading worker it was tried on"
    KILLED = "killed", 160, Effect.UNGRADED, "not graded: past the submission time limit"

    def __new__(cls, value: str, severity: int, effect: Effect, meaning: str):
        member = str.__new__(cls, value)
        member._value_ = value
        member.severity, member.effect, member.meaning = severity, effect, meaning
        return member

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @classmethod
    def worst(cls, *statuses: Status | str) -> Status:
        """The most severe of ``statuses`` (OK if none)."""
        return max((cls(s) for s in statuses), key=lambda status: status.severity, default=cls.OK)


UNGRADED = tuple(s for s in Status if s.effect is Effect.UNGRADED)  # grades unknown, not zero
ZERO = tuple(s for s in Status if s.effect is Effect.ZERO)  # nothing ran: 0 points


class RowLabel(str, Enum):
    """What ``grades.csv`` says in its status column where no grading outcome exists (not outcomes)."""

    NOT_SUBMITTED = "not submitted"
    GRADED_BY_NBGRADER = "graded by nbgrader"  # graded before the class grader kept outcomes, or by nbgrader alone

    def __str__(self) -> str:
        return self.value


class FlagKind(str, Enum):
    """What a :class:`Flag` is about: each kind a member, its text what ``grades.csv`` and formgrader show."""

    PROCESS_CONTROL = "process control"
    INTROSPECTION = "introspection"
    DUNDER_ACCESS = "dunder access"
    DYNAMIC_CODE = "dynamic code"
    FAKE_VALUE = "fake value"
    WRITES_FILES = "writes files"
    FILES = "files"
    TAMPERING = "tampering"
    DELEGATES = "delegates to dplib"
    REVIEW = "review"  # the review could not finish a cell or notebook
    COPY = "copy"  # dpgrader.similarity found a match
    COPY_CHECK = "copy check"  # the similarity report could not compare a submission
    UNSPECIFIED = ""  # only in a grading_outcomes.csv written before flags kept their fields

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


@dataclass(frozen=True)
class Flag:
    """Something a person must look at in a submission, whatever its score.

    Attributes
    ----------
    kind : FlagKind
        What it is about (a kind's text is accepted and made the member; any other text is a ``ValueError``).
    reason : str
        What was found and why it matters, in a sentence (may name a classmate: the instructor's view).
    cell : str
        The cell's nbgrader ``grade_id`` (or ``"cell <n>"``), ``""`` for the whole submission.
    line : int
        Line in the cell (1-based); 0 when the flag is not about one line.
    anonymous_reason : str
        The reason naming no classmate, where ``reason`` names one (what formgrader's comment shows).
    """

    kind: FlagKind
    reason: str
    cell: str = ""
    line: int = 0
    anonymous_reason: str = ""

    def __post_init__(self):
        object.__setattr__(self, "kind", FlagKind(self.kind))

    def __str__(self) -> str:
        """``"kind: reason (cell, line n)"``: one line, control characters escaped (:func:`~dpgrader.safe_output.flag_text`)."""
        where = f" ({self.cell}, line {self.line})" if self.line else ""
        return flag_text(f"{self.kind}: {self.reason}{where}" if self.kind else f"{self.reason}{where}")

    def anonymous(self) -> Flag:
        """This flag without a classmate's name."""
        return Flag(self.kind, self.anonymous_reason or self.reason, self.cell, self.line)

    def fields(self) -> list:
        """``[kind, reason, cell, line, anonymous_reason]``: what :meth:`from_fields` makes the flag again."""
        return [self.kind.value, self.reason, self.cell, self.line, self.anonymous_reason]

    @classmethod
    def from_fields(cls, values: list) -> Flag:
        kind, reason, cell, line, anonymous_reason = values
        if not (isinstance(reason, str) and isinstance(cell, str) and isinstance(anonymous_reason, str)
                and isinstance(line, int) and not isinstance(line, bool)):
            raise TypeError(f"a flag's fields are text, text, text, a whole number, text; got {values!r}")
        return cls(kind, reason, cell, line, anonymous_reason)

    @classmethod
    def from_text(cls, text: str) -> Flag:
        """A flag of an older ``grading_outcomes.csv`` (flags as text only): its kind and reason, if it has a kind."""
        kind, _, reason = text.partition(": ")
        known = {k.value for k in FlagKind}
        return cls(kind, reason) if reason and kind in known else cls(FlagKind.UNSPECIFIED, text)


# --- notes taken while grading, by the collector of the task being graded ---------------------------------


class TaskNotes:
    """What the sandbox and the nbgrader plug-ins noted while one task was graded: the collector of that task.

    The grading worker makes one per task and grades inside :meth:`collecting`; :func:`note` and
    :func:`measure_kernel_cpu`, called deep in the sandbox and the preprocessors, reach the
    collector of the task being graded in this thread (a context variable: two tasks graded side by
    side in one process, as on a Dask worker's threads, each have their own).

    Attributes
    ----------
    notes : list of (Status, str)
        In order: the status that applies and a message for the instructor.
    kernel_cpu : float or None
        CPU seconds of the sandboxed kernels (their cgroups and the zygote's imports), None if not measured.
    """

    def __init__(self):
        self.notes: list[tuple[Status, str]] = []
        self.kernel_cpu: float | None = None

    def note(self, status: Status, message: str) -> None:
        self.notes.append((Status(status), message))

    def add_kernel_cpu(self, seconds: float) -> None:
        self.kernel_cpu = (self.kernel_cpu or 0.0) + float(seconds)

    @contextlib.contextmanager
    def collecting(self):
        """Within this block, :func:`note` and :func:`measure_kernel_cpu` (in this thread) reach this collector."""
        token = _collector.set(self)
        try:
            yield self
        finally:
            _collector.reset(token)


_collector: contextvars.ContextVar[TaskNotes | None] = contextvars.ContextVar("dpgrader_task_notes", default=None)


def note(status: Status, message: str) -> None:
    """Record that ``status`` applies to the notebook being graded now, with a message for the instructor.

    Outside a task being graded (no :meth:`TaskNotes.collecting`), there is nobody to tell: nothing is kept.
    """
    collector = _collector.get()
    if collector is not None:
        collector.note(status, message)


def measure_kernel_cpu(seconds: float) -> None:
    """Add ``seconds`` to the CPU seconds of the kernels of the task being graded now."""
    collector = _collector.get()
    if collector is not None:
        collector.add_kernel_cpu(seconds)


# --- outcomes of a class ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What happened to one student's submission of one assignment."""

    student: str
    assignment: str
    status: Status
    message: str = ""
    score: float | None = None
    max_score: float | None = None
    seconds: float = 0.0
    flags: tuple[Flag, ...] = field(default=())
    sandboxed: bool = True
    kernel_cpu: float | None = None  # CPU seconds of the sandboxed kernels (their cgroup), where measured

    def row(self) -> dict:
        """The outcome as a row of ``grading_outcomes.csv``: ``flags`` as people read them, ``flag_fields`` to read back."""
        row = {f.name: getattr(self, f.name) for f in fields(self)}
        row["status"] = Status(self.status).value
        row["flags"] = "; ".join(str(flag) for flag in self.flags)
        row["flag_fields"] = json.dumps([flag.fields() for flag in self.flags]) if self.flags else ""
        return row


OUTCOME_FIELDS = [f.name for f in fields(Outcome)] + ["flag_fields"]


def _flags(row: dict) -> tuple[Flag, ...]:
    """The flags of a row: from ``flag_fields``; a row of an older file has only their text."""
    if row.get("flag_fields"):
        values = json.loads(row["flag_fields"])
        if not isinstance(values, list) or not all(isinstance(v, list) and len(v) == 5 for v in values):
            raise ValueError("flag_fields must be a JSON list of [kind, reason, cell, line, anonymous_reason]")
        return tuple(Flag.from_fields(v) for v in values)
    return tuple(Flag.from_text(f) for f in row["flags"].split("; ") if f)


def _course(root: Path | Course) -> Course:
    return root if isinstance(root, Course) else Course(root)


def read_outcomes(root: Path | Course) -> dict[tuple[str, str], Outcome]:
    """The outcomes recorded in ``autograded/grading_outcomes.csv`` of a course, by (student, assignment)."""
    path = _course(root).outcomes_file
    if not path.exists():
        return {}
    outcomes = {}
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            row = {key: from_csv_field(value) for key, value in row.items()}  # as written by write_outcomes
            outcome = Outcome(
                student=row["student"], assignment=row["assignment"], status=Status(row["status"]),
                message=row["message"],
                score=float(row["score"]) if row["score"] else None,
                max_score=float(row["max_score"]) if row["max_score"] else None,
                seconds=float(row["seconds"] or 0), flags=_flags(row),
                sandboxed=row.get("sandboxed", "True") == "True",
                kernel_cpu=float(row["kernel_cpu"]) if row.get("kernel_cpu") else None,
            )
            outcomes[outcome.student, outcome.assignment] = outcome
    return outcomes


def write_outcomes(root: Path | Course, outcomes: Iterable[Outcome], *, replace_all: bool = False) -> Path:
    """Add (or replace) outcomes in ``autograded/grading_outcomes.csv``; with ``replace_all``, write only ``outcomes``."""
    course = _course(root)
    known = {} if replace_all else read_outcomes(course)
    known.update({(o.student, o.assignment): o for o in outcomes})
    path = course.outcomes_file
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_csv(path, OUTCOME_FIELDS, (known[key].row() for key in sorted(known)))
