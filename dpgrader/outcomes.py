"""What happened to a submission: one vocabulary (:class:`Status`), carried as fields end to end.

The sandbox and the nbgrader plug-ins *note* what they see while a notebook is graded
(:func:`note`: a limit was hit, a cell timed out, the kernel died); the grading worker
collects the notes of its task (:func:`take_notes`) and returns them as data; the class
grader records one :class:`Outcome` per submission in ``autograded/grading_outcomes.csv``
and ``grades.csv``. Nothing is found again by reading log lines or exception names.
Notes live in the grading process: student code runs in a sandboxed kernel and cannot
reach them.
"""

from __future__ import annotations

import csv
from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from pathlib import Path

from dpgrader.safe_output import from_csv_field, write_csv

OUTCOMES_FILE = Path("autograded") / "grading_outcomes.csv"


class Status(str, Enum):
    """Outcome of one submission, from best to worst (a submission gets the worst that applies)."""

    OK = "ok"
    TIMED_OUT = "timed_out"  # a cell ran past c.Execute.timeout and was interrupted
    TIME_BUDGET = "time_budget"  # the notebook used up its wall-clock budget: the later cells were not run
    OUTPUT_LIMIT = "output_limit"  # a cell or the notebook printed too much: output truncated
    PROCESS_LIMIT = "process_limit"  # it tried to start more processes than allowed
    FILE_LIMIT = "file_limit"  # it tried to write a file larger than allowed
    DISK_LIMIT = "disk_limit"  # it filled its work folder (bytes or files): the later cells were not run
    KERNEL_UNRESPONSIVE = "kernel_unresponsive"
    KERNEL_DIED = "kernel_died"
    MEMORY_LIMIT = "memory_limit"  # the kernel (or something it started) ran out of its memory
    CPU_LIMIT = "cpu_limit"  # the kernel used up its CPU seconds
    MISSING = "missing"
    UNREADABLE = "unreadable"
    TOO_LARGE = "too_large"  # refused before running: notebook too big or too many cells
    REFUSED = "refused"  # refused before running: a symlink, or a student id that is not a plain name
    ERROR = "error"  # not graded (nbgrader, the guard or an import failed): grades unknown, flagged for a person
    KILLED = "killed"  # not graded (past the submission time limit): grades unknown
    # rows of grades.csv for which there is no grading outcome
    NOT_SUBMITTED = "not submitted"
    GRADED_BY_NBGRADER = "graded by nbgrader"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @classmethod
    def worst(cls, *statuses: Status) -> Status:
        """The worst of ``statuses`` (OK if none)."""
        order = list(cls)
        return max((cls(s) for s in statuses), key=order.index, default=cls.OK)


UNGRADED = (Status.ERROR, Status.KILLED)  # grades unknown, not zero
ZERO = (Status.MISSING, Status.UNREADABLE, Status.TOO_LARGE, Status.REFUSED)  # nothing ran: 0 points


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
    flags: tuple[str, ...] = field(default=())
    sandboxed: bool = True
    kernel_cpu: float | None = None  # CPU seconds of the sandboxed kernels (their cgroup), where measured

    def row(self) -> dict:
        row = asdict(self)
        row["status"] = Status(self.status).value
        row["flags"] = "; ".join(self.flags)
        return row


def read_outcomes(root: Path) -> dict[tuple[str, str], Outcome]:
    """The outcomes recorded in ``root/autograded/grading_outcomes.csv``, by (student, assignment)."""
    path = Path(root) / OUTCOMES_FILE
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
                seconds=float(row["seconds"] or 0), flags=tuple(f for f in row["flags"].split("; ") if f),
                sandboxed=row.get("sandboxed", "True") == "True",
                kernel_cpu=float(row["kernel_cpu"]) if row.get("kernel_cpu") else None,
            )
            outcomes[outcome.student, outcome.assignment] = outcome
    return outcomes


def write_outcomes(root: Path, outcomes: list[Outcome]) -> Path:
    """Add (or replace) outcomes in ``autograded/grading_outcomes.csv``."""
    known = read_outcomes(root)
    known.update({(o.student, o.assignment): o for o in outcomes})
    path = Path(root) / OUTCOMES_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_csv(path, [f.name for f in fields(Outcome)], (known[key].row() for key in sorted(known)))
