"""What a grading worker is asked and what it answers, as frozen values.

- :class:`GradingTask` — one submission to grade, as the class grader knows it (where its files are).
- :class:`PackedTask` — the same task as a worker receives it: the submission's files as bytes and
  no path of the instructor's, so a worker needs no shared filesystem and sees nobody else's work.
- :class:`AssignmentBundle` — what every task of one assignment needs (``nbgrader_config.py``, the
  assignment's ``source/`` folder, a gradebook that knows the assignment and no student), sent once.
- :class:`GradingResult` — what grading gave: status, messages, scores, measurements, and the graded
  notebooks and feedback pages as bytes, for the one gradebook writer to merge.

They become JSON only to cross a process boundary (``to_bytes`` / ``from_bytes``: file contents in
base64), and text only in exports and pages.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path, PurePosixPath

from dpgrader.course import Course
from dpgrader.intake import graded_files
from dpgrader.limits import GradingLimits
from dpgrader.outcomes import Status

Files = dict[str, bytes]  # relative path ("source/01_definition/01_definition.ipynb") -> content


def _encode(files: Files) -> dict[str, str]:
    return {name: base64.b64encode(content).decode("ascii") for name, content in sorted(files.items())}


def _decode(files: dict[str, str]) -> Files:
    decoded = {name: base64.b64decode(content, validate=True) for name, content in files.items()}
    for name in decoded:
        path = PurePosixPath(name)
        if path.is_absolute() or ".." in path.parts or not path.parts:
            raise ValueError(f"a file of a task or result must be a relative path inside it, got {name!r}")
    return decoded


@dataclass(frozen=True)
class GradingTask:
    """One submission to grade, on the instructor's side.

    Attributes
    ----------
    course : Course
        The instructor's course (a folder given is made a :class:`~dpgrader.course.Course`).
    assignment, student : str
        Whose submission of what.
    submission : Path
        The folder handed in (``submitted/<student>/<assignment>``, or a copy of the reference solution).
    token : str
        Random; a worker's answer counts only if it echoes it, and only once.
    limits : GradingLimits
        Every limit of this submission's grading (its time budget set from the pre-flight).
    feedback : bool
        Also generate the feedback page.
    sandboxed : bool
        Every kernel in the sandbox (``False``: the instructor opted out).
    preflight : bool
        This is the reference solution, graded before anyone (:mod:`dpgrader.grading.preflight`).
    """

    course: Course
    assignment: str
    student: str
    submission: Path
    token: str
    limits: GradingLimits = field(default_factory=GradingLimits)
    feedback: bool = True
    sandboxed: bool = True
    preflight: bool = False

    def __post_init__(self):
        if not isinstance(self.course, Course):
            object.__setattr__(self, "course", Course(self.course))

    @property
    def timeout(self) -> float:
        """Seconds after which this task's worker and kernels are killed (status ``killed``)."""
        return self.limits.preflight_seconds if self.preflight else self.limits.submission_seconds

    def with_limits(self, **changes: float) -> GradingTask:
        """This task with some limits changed (``task.with_limits(notebook_seconds=120)``)."""
        return replace(self, limits=self.limits.replace(**changes))

    def packed(self) -> PackedTask:
        """The task as a worker gets it: the submission's graded files read now, regular files only.

        A pre-flight's files are the instructor's source notebooks: a hard link to one (a student's
        refused submission may make it) does not keep it out.
        """
        files = graded_files(self.submission, hard_links=self.preflight)
        return PackedTask(self.assignment, self.student, self.token, self.limits, files, self.feedback,
                          self.sandboxed, self.preflight)


@dataclass(frozen=True)
class PackedTask:
    """A task as a worker receives it: no path of the instructor's, the submission's files as bytes.

    ``files`` are the notebooks and ``timestamp.txt`` handed in, by name
    (:func:`~dpgrader.intake.graded_files`).
    """

    assignment: str
    student: str
    token: str
    limits: GradingLimits
    files: Files
    feedback: bool = True
    sandboxed: bool = True
    preflight: bool = False

    @property
    def timeout(self) -> float:
        """Seconds after which this task's worker and kernels are stopped (status ``killed``)."""
        return self.limits.preflight_seconds if self.preflight else self.limits.submission_seconds

    def to_bytes(self) -> bytes:
        fields = {**asdict(self), "files": _encode(self.files)}
        return json.dumps(fields).encode()

    @classmethod
    def from_bytes(cls, data: bytes | str) -> PackedTask:
        """The task of :meth:`to_bytes`; ``ValueError``, ``TypeError`` or ``KeyError`` if it is not one."""
        fields = json.loads(data)
        return cls(**{**fields, "limits": GradingLimits(**fields["limits"]), "files": _decode(fields["files"])})


@dataclass(frozen=True)
class AssignmentBundle:
    """What every task of one assignment needs, by path in the worker's scratch course.

    ``nbgrader_config.py``, every regular file of ``source/<assignment>/``, and ``gradebook.db``: a
    gradebook that knows this assignment (its notebooks, cells and due date) and no student.
    """

    assignment: str
    files: Files

    @property
    def digest(self) -> str:
        """A name for this content (a worker keeps bundles it has seen by digest)."""
        hasher = hashlib.sha256(self.assignment.encode())
        for name, content in sorted(self.files.items()):
            hasher.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
        return hasher.hexdigest()

    def to_bytes(self) -> bytes:
        return json.dumps({"assignment": self.assignment, "files": _encode(self.files)}).encode()

    @classmethod
    def from_bytes(cls, data: bytes | str) -> AssignmentBundle:
        fields = json.loads(data)
        return cls(fields["assignment"], _decode(fields["files"]))


@dataclass(frozen=True)
class CellScore:
    """The autograder's score of one graded cell."""

    auto_score: float | None
    needs_manual_grade: bool


@dataclass(frozen=True)
class NotebookResult:
    """What nbgrader recorded for one notebook of a submission."""

    scores: dict[str, CellScore] = field(default_factory=dict)  # by grade_id
    comments: dict[str, str | None] = field(default_factory=dict)  # automatic comments, by grade_id
    late_penalty: float | None = None


@dataclass(frozen=True)
class GradingResult:
    """What grading one task gave: its status, messages, nbgrader's scores, what was measured, the files made.

    Attributes
    ----------
    token : str
        The task's token (a result is accepted only with the token of the task sent, and only once).
    status : Status
        The outcome (:meth:`~dpgrader.outcomes.Status.worst` of everything noted while grading).
    messages : tuple of str
        For the instructor, in order: why a notebook was refused, why the kernel died, ...
    notebooks : dict of str to NotebookResult
        By notebook name: empty when nothing was graded.
    timestamp : str or None
        The submission's hand-in time as the gradebook has it (ISO 8601).
    autograded, feedback : dict of str to bytes
        The graded notebooks and the feedback pages, by file name.
    seconds : float
        Wall-clock seconds the worker spent on the task.
    kernel_cpu : float or None
        CPU seconds of the sandboxed kernels (their cgroup), where measured.
    log : str
        The end of nbgrader's log (kept for the instructor when the status is not ``ok``).
    worker : str
        Which worker graded it (a host and process, or a Dask worker's address).
    """

    token: str
    status: Status
    messages: tuple[str, ...] = ()
    notebooks: dict[str, NotebookResult] = field(default_factory=dict)
    timestamp: str | None = None
    autograded: Files = field(default_factory=dict)
    feedback: Files = field(default_factory=dict)
    seconds: float = 0.0
    kernel_cpu: float | None = None
    log: str = ""
    worker: str = ""

    @classmethod
    def failed(cls, task: GradingTask | PackedTask, status: Status, message: str, seconds: float = 0.0,
               worker: str = "") -> GradingResult:
        """The result of a task that was not graded (its worker crashed or was killed, the engine failed)."""
        return cls(task.token, Status(status), (message,), seconds=seconds, worker=worker)

    def to_bytes(self) -> bytes:
        fields = {**asdict(self), "autograded": _encode(self.autograded), "feedback": _encode(self.feedback)}
        return json.dumps(fields).encode()

    @classmethod
    def from_bytes(cls, data: bytes | str) -> GradingResult:
        """The result of :meth:`to_bytes`; ``ValueError``, ``TypeError`` or ``KeyError`` if it is not one."""
        fields = json.loads(data)
        if not isinstance(fields, dict):
            raise ValueError("a grading result is a JSON object")
        _check_types(fields)
        notebooks = {
            name: NotebookResult({grade_id: CellScore(**score) for grade_id, score in notebook["scores"].items()},
                                 dict(notebook["comments"]), notebook["late_penalty"])
            for name, notebook in fields.pop("notebooks", {}).items()
        }
        return cls(**{**fields, "status": Status(fields["status"]), "messages": tuple(fields["messages"]),
                      "notebooks": notebooks, "autograded": _decode(fields.get("autograded", {})),
                      "feedback": _decode(fields.get("feedback", {}))})


def _number(value, optional: bool = False) -> bool:
    if value is None:
        return optional
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_types(fields: dict) -> None:
    """``TypeError`` unless every field of a result's JSON has its type: scores finite numbers, texts strings, ..."""
    texts = all(isinstance(fields.get(name, ""), str) for name in ("token", "status", "log", "worker"))
    messages = fields.get("messages")
    ok = (texts and isinstance(messages, list) and all(isinstance(m, str) for m in messages)
          and isinstance(fields.get("timestamp"), (str, type(None)))
          and _number(fields.get("seconds", 0.0)) and _number(fields.get("kernel_cpu"), optional=True)
          and all(isinstance(fields.get(name, {}), dict) for name in ("notebooks", "autograded", "feedback")))
    for notebook in (fields.get("notebooks") or {}).values() if ok else ():
        scores, comments = (notebook.get("scores"), notebook.get("comments")) if isinstance(notebook, dict) else (0, 0)
        ok = (isinstance(scores, dict) and isinstance(comments, dict)
              and _number(notebook.get("late_penalty"), optional=True)
              and all(isinstance(score, dict) and _number(score.get("auto_score"), optional=True)
                      and isinstance(score.get("needs_manual_grade"), bool) for score in scores.values())
              and all(isinstance(comment, (str, type(None))) for comment in comments.values()))
        if not ok:
            break
    if not ok:
        raise TypeError("a grading result's fields must have their types (finite numbers for scores and seconds, "
                        "text for messages)")


def write_files(files: Files, folder: Path) -> None:
    """Write ``files`` (relative paths, checked by :meth:`from_bytes`) under ``folder``."""
    for name, content in files.items():
        path = Path(folder) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def read_files(folder: Path, keep=None) -> Files:
    """The regular files directly in ``folder`` (no link followed), by name; only names ``keep`` accepts, if given."""
    folder = Path(folder)
    if not folder.is_dir():
        return {}
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())
            if path.is_file() and not path.is_symlink() and (keep is None or keep(path.name))}
