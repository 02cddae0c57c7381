"""What happened to a submission: one vocabulary (:class:`Status`), carried as fields end to end.

The sandbox and the nbgrader plug-ins *note* what they see while a notebook is graded
(:func:`note`: a limit was hit, a cell timed out, the kernel died); the grading worker
collects the notes of its task (:func:`take_notes`) and returns them as data; the class
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

import csv
from dataclasses import dataclass, field, fields
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


@dataclass(frozen=True)
class Flag:
    """Something a person must look at in a submission, whatever its score.

    Attributes
    ----------
    kind : str
        A short category: ``"dynamic code"``, ``"copy"``, ``"copy check"``, ``"review"``, ...
    reason : str
        What was found and why it matters, in a sentence (may name a classmate: the instructor's view).
    cell : str
        The cell's nbgrader ``grade_id`` (or ``"cell <n>"``), ``""`` for the whole submission.
    line : int
        Line in the cell (1-based); 0 when the flag is not about one line.
    anonymous_reason : str
        The reason naming no classmate, where ``reason`` names one (what formgrader's comment shows).
    """

    kind: str
    reason: str
    cell: str = ""
    line: int = 0
    anonymous_reason: str = ""

    def __str__(self) -> str:
        """``"kind: reason (cell, line n)"``: one line, control characters escaped (:func:`~dpgrader.safe_output.flag_text`)."""
        where = f" ({self.cell}, line {self.line})" if self.line else ""
        return flag_text(f"{self.kind}: {self.reason}{where}" if self.kind else f"{self.reason}{where}")

    def anonymous(self) -> Flag:
        """This flag without a classmate's name."""
        return Flag(self.kind, self.anonymous_reason or self.reason, self.cell, self.line)

    @classmethod
    def from_text(cls, text: str) -> Flag:
        """A flag read back from its text (``str(Flag.from_text(str(flag))) == str(flag)``)."""
        kind, _, reason = text.partition(": ")
        return cls(kind, reason) if reason else cls("", text)


# --- notes taken while grading, in the grading process ----------------------------------------------

_notes: list[tuple[Status, str]] = []


def note(status: Status, message: str) -> None:
    """Record that ``status`` applies to the notebook being graded now, with a message for the instructor."""
    _notes.append((Status(status), message))


_measured: dict[str, float] = {}


def measure(name: str, value: float) -> None:
    """Add ``value`` to the measurement ``name`` of the notebook being graded now (e.g. its kernels' CPU seconds)."""
    _measured[name] = _measured.get(name, 0.0) + float(value)


def take_measurements() -> dict[str, float]:
    """The measurements since the last call (and forget them)."""
    taken = dict(_measured)
    _measured.clear()
    return taken


def take_notes() -> list[tuple[Status, str]]:
    """The notes taken since the last call, oldest first (and forget them)."""
    taken = list(_notes)
    _notes.clear()
    return taken


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
        row = {f.name: getattr(self, f.name) for f in fields(self)}
        row["status"] = Status(self.status).value
        row["flags"] = "; ".join(str(flag) for flag in self.flags)
        return row


def read_outcomes(root: Path) -> dict[tuple[str, str], Outcome]:
    """The outcomes recorded in ``root/autograded/grading_outcomes.csv``, by (student, assignment)."""
    path = Course(root).outcomes_file
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
                seconds=float(row["seconds"] or 0), flags=tuple(Flag.from_text(f) for f in row["flags"].split("; ") if f),
                sandboxed=row.get("sandboxed", "True") == "True",
                kernel_cpu=float(row["kernel_cpu"]) if row.get("kernel_cpu") else None,
            )
            outcomes[outcome.student, outcome.assignment] = outcome
    return outcomes


def write_outcomes(root: Path, outcomes: list[Outcome]) -> Path:
    """Add (or replace) outcomes in ``autograded/grading_outcomes.csv``."""
    known = read_outcomes(root)
    known.update({(o.student, o.assignment): o for o in outcomes})
    path = Course(root).outcomes_file
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_csv(path, [f.name for f in fields(Outcome)], (known[key].row() for key in sorted(known)))
