"""What a grading worker is asked (:class:`GradingTask`) and what it answers (:class:`GradingResult`).

Both are frozen values. They become JSON only to cross a process boundary (the worker's pipe,
:meth:`GradingTask.to_json`, :meth:`GradingResult.from_json`), and text only in exports and
pages. Paths travel as strings in JSON and are :class:`~pathlib.Path` everywhere else.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from dpgrader.grading.limits import GradingLimits
from dpgrader.outcomes import Status


@dataclass(frozen=True)
class GradingTask:
    """One submission to grade, in a scratch course folder of its own.

    Attributes
    ----------
    course : Path
        The instructor's course folder (read only: ``nbgrader_config.py`` and ``source/<assignment>``).
    assignment, student : str
        Whose submission of what.
    submission : Path
        The folder handed in (``submitted/<student>/<assignment>``, or a copy of the reference solution).
    scratch : Path
        A private, unguessable folder the class grader made; the worker builds the throwaway course in it.
    template_db : Path
        A copy of the course's gradebook for the scratch course.
    token : str
        Random; a worker's answer counts only if it echoes it.
    limits : GradingLimits
        Every limit of this submission's grading (its time budget set from the pre-flight).
    feedback : bool
        Also generate the feedback page.
    sandboxed : bool
        Every kernel in the sandbox (``False``: the instructor opted out).
    preflight : bool
        This is the reference solution, graded before anyone (:mod:`dpgrader.grading.preflight`).
    """

    course: Path
    assignment: str
    student: str
    submission: Path
    scratch: Path
    template_db: Path
    token: str
    limits: GradingLimits = field(default_factory=GradingLimits)
    feedback: bool = True
    sandboxed: bool = True
    preflight: bool = False

    @property
    def timeout(self) -> float:
        """Seconds after which this task's worker and kernels are killed (status ``killed``)."""
        return self.limits.preflight_seconds if self.preflight else self.limits.submission_seconds

    def with_limits(self, **changes: float) -> GradingTask:
        """This task with some limits changed (``task.with_limits(notebook_seconds=120)``)."""
        return replace(self, limits=self.limits.replace(**changes))

    def to_json(self) -> str:
        """One line of JSON for the worker's stdin."""
        fields = {name: str(value) if isinstance(value, Path) else value for name, value in asdict(self).items()}
        return json.dumps(fields)

    @classmethod
    def from_json(cls, line: str | bytes) -> GradingTask:
        """The task of one line of JSON (:meth:`to_json`); ``ValueError`` if it is not one."""
        fields = json.loads(line)
        paths = {name: Path(fields[name]) for name in ("course", "submission", "scratch", "template_db")}
        return cls(**{**fields, **paths, "limits": GradingLimits(**fields.get("limits", {}))})


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
    """What grading one task gave: its status, messages, nbgrader's scores and what was measured.

    Attributes
    ----------
    token : str
        The task's token (the pool accepts a result only with the token of the task sent).
    status : Status
        The outcome (:meth:`~dpgrader.outcomes.Status.worst` of everything noted while grading).
    messages : tuple of str
        For the instructor, in order: why a notebook was refused, why the kernel died, ...
    notebooks : dict of str to NotebookResult
        By notebook name: empty when nothing was graded.
    timestamp : str or None
        The submission's hand-in time as the gradebook has it (ISO 8601).
    autograded, feedback : Path or None
        The graded notebooks and the feedback pages, in the scratch course.
    seconds : float
        Wall-clock seconds the worker spent on the task.
    kernel_cpu : float or None
        CPU seconds of the sandboxed kernels (their cgroup), where measured.
    log : str
        The end of nbgrader's log (kept for the instructor when the status is not ``ok``).
    """

    token: str
    status: Status
    messages: tuple[str, ...] = ()
    notebooks: dict[str, NotebookResult] = field(default_factory=dict)
    timestamp: str | None = None
    autograded: Path | None = None
    feedback: Path | None = None
    seconds: float = 0.0
    kernel_cpu: float | None = None
    log: str = ""

    @classmethod
    def failed(cls, task: GradingTask, status: Status, message: str, seconds: float = 0.0) -> GradingResult:
        """The result of a task that was not graded (its worker crashed or was killed)."""
        return cls(task.token, Status(status), (message,), seconds=seconds)

    def to_json(self) -> str:
        """One line of JSON for the worker's stdout."""
        fields = asdict(self)
        fields["autograded"] = str(self.autograded) if self.autograded else None
        fields["feedback"] = str(self.feedback) if self.feedback else None
        return json.dumps(fields)

    @classmethod
    def from_json(cls, line: str | bytes) -> GradingResult:
        """The result of one line of JSON (:meth:`to_json`); ``ValueError`` or ``TypeError`` if it is not one."""
        fields = json.loads(line)
        if not isinstance(fields, dict):
            raise ValueError("a grading result is a JSON object")
        notebooks = {
            name: NotebookResult({grade_id: CellScore(**score) for grade_id, score in notebook["scores"].items()},
                                 dict(notebook["comments"]), notebook["late_penalty"])
            for name, notebook in fields.pop("notebooks", {}).items()
        }
        paths = {name: Path(fields[name]) if fields.get(name) else None for name in ("autograded", "feedback")}
        return cls(**{**fields, **paths, "status": Status(fields["status"]), "messages": tuple(fields["messages"]),
                      "notebooks": notebooks})
