"""Every limit of a grading run in one place: :class:`GradingLimits`.

Set in the course's ``nbgrader_config.py`` (``c.GradingLimits.cell_seconds = 60``), overridden on
the command line (``python -m dpgrader.classroom grade --limit cell_seconds=30``), and read
everywhere else: the class grader and its pool (submission and pre-flight seconds, the time
budget), the worker (notebook size), the execute preprocessor (cell and notebook time, cells,
output) and the sandbox (memory, processes, CPU, files, disk). A worker receives the limits in
its :class:`~dpgrader.grading.task.GradingTask` and hands them to nbgrader's configuration as
``c.GradingLimits``, where the preprocessors and the kernel manager read them
(:meth:`GradingLimits.from_config`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace

GiB, MiB = 1 << 30, 1 << 20
SECTION = "GradingLimits"  # the name of the section in nbgrader_config.py: c.GradingLimits.<limit>
#: Where these limits were set before they were gathered here: such a setting stops the run with its new name.
FORMER_SETTINGS = {
    ("Execute", "timeout"): "cell_seconds",
    ("GuardedExecute", "timeout"): "cell_seconds",
    ("GuardedExecute", "time_budget"): "notebook_seconds",
    ("GuardedExecute", "max_cells"): "cells",
    ("GuardedExecute", "max_notebook_bytes"): "notebook_bytes",
    ("GuardedExecute", "max_output_bytes_per_cell"): "output_bytes_per_cell",
    ("GuardedExecute", "max_output_bytes"): "output_bytes",
    ("SandboxedKernelManager", "memory_limit"): "memory_bytes",
    ("SandboxedKernelManager", "process_limit"): "processes",
    ("SandboxedKernelManager", "file_size_limit"): "file_bytes",
    ("SandboxedKernelManager", "cpu_limit"): "cpu_seconds",
    ("SandboxedKernelManager", "cpu_cores"): "cpu_cores",
    ("SandboxedKernelManager", "work_bytes"): "work_bytes",
    ("SandboxedKernelManager", "work_files"): "work_files",
}


def limit(default: float, description: str):
    """A field of :class:`GradingLimits`: its default and what it limits (shown by ``--help`` and the docs)."""
    return field(default=default, metadata={"description": description})


@dataclass(frozen=True)
class GradingLimits:
    """The limits one submission is graded under; every value positive.

    Time is the kernel's time: a wait for a CPU held by others is given back
    (:mod:`dpgrader.preprocessors.execute`). A limit that is hit becomes the submission's
    :class:`~dpgrader.outcomes.Status` (``timed_out``, ``time_budget``, ``memory_limit``, ...).
    """

    cell_seconds: float = limit(60.0, "Seconds one cell may run; past it the cell is interrupted (timed_out).")
    notebook_seconds: float = limit(
        900.0, "Seconds for all the cells of one notebook; the later cells are not run (time_budget). The class "
               "grader sets it to time_budget_factor times the reference solution's grading time.")
    time_budget_factor: float = limit(
        10.0, "A submission's notebook_seconds: this many times its reference solution's grading time.")
    min_notebook_seconds: float = limit(30.0, "The least notebook_seconds the time budget gives (start-up included).")
    submission_seconds: float = limit(
        1800.0, "Seconds for grading one submission; past it its worker and kernels are killed (killed).")
    preflight_seconds: float = limit(600.0, "Seconds for grading a reference solution in the pre-flight.")
    memory_bytes: int = limit(2 * GiB, "Bytes of memory for the kernel and all it starts (memory_limit).")
    processes: int = limit(64, "Processes and threads the kernel may have at once (process_limit).")
    cpu_seconds: int = limit(600, "CPU seconds of the kernel process, per notebook (cpu_limit).")
    cpu_cores: float = limit(1.0, "Cores the kernel and all it starts may use at once (its cgroup's CPU cap).")
    file_bytes: int = limit(256 * MiB, "Largest file the kernel may write (file_limit).")
    work_bytes: int = limit(256 * MiB, "Bytes the kernel may write in its work folder, and as much again in /tmp "
                                       "(disk_limit).")
    work_files: int = limit(2000, "Files and folders the kernel may create in its work folder and /tmp (disk_limit).")
    notebook_bytes: int = limit(16 * MiB, "Largest notebook file graded; a larger one is refused unread (too_large).")
    cells: int = limit(1000, "Most cells a notebook may have; with more it is refused (too_large).")
    output_bytes_per_cell: int = limit(2 * MiB, "Output kept per cell; the rest is dropped (output_limit).")
    output_bytes: int = limit(16 * MiB, "Output kept per notebook; the rest is dropped (output_limit).")

    def __post_init__(self):
        for name, value in asdict(self).items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"GradingLimits.{name} must be a positive number, got {value!r}")

    def replace(self, **changes: float) -> GradingLimits:
        """These limits with ``changes``; an unknown name is a ``ValueError`` naming it."""
        unknown = sorted(set(changes) - set(names()))
        if unknown:
            raise ValueError(f"unknown grading limit {', '.join(unknown)}; the limits are: {', '.join(names())}")
        typed = {name: _as_type(name, value) for name, value in changes.items()}
        return replace(self, **typed)

    def time_budget(self, reference_seconds: float) -> GradingLimits:
        """These limits with ``notebook_seconds`` set from the reference solution's grading time.

        ``notebook_seconds = max(min_notebook_seconds, time_budget_factor * reference_seconds)``.
        """
        seconds = max(self.min_notebook_seconds, self.time_budget_factor * float(reference_seconds))
        return replace(self, notebook_seconds=seconds)

    @classmethod
    def from_config(cls, config) -> GradingLimits:
        """The limits set in a traitlets ``config`` (``c.GradingLimits.<name>``), defaults for the rest.

        Raises ``ValueError`` for a limit set where it used to be (``c.Execute.timeout``, ...), naming
        its ``c.GradingLimits`` name: a limit silently ignored would grade with another than the course's.
        """
        if config is None:
            return cls()
        former = [f"c.{section}.{name} (now c.{SECTION}.{new})" for (section, name), new in FORMER_SETTINGS.items()
                  if section in config and name in config[section]]
        if former:
            raise ValueError("grading limits are set in c.GradingLimits only; move " + ", ".join(former))
        return cls().replace(**dict(config.get(SECTION, {})))

    def to_config(self, config) -> None:
        """Write these limits into a traitlets ``config`` (its ``c.GradingLimits`` section)."""
        for name, value in asdict(self).items():
            config[SECTION][name] = value


def names() -> list[str]:
    """The names of the limits, in order."""
    return [f.name for f in fields(GradingLimits)]


def describe() -> list[tuple[str, object, str]]:
    """``(name, default, description)`` of every limit (the table of the README and ``--help``)."""
    return [(f.name, f.default, f.metadata["description"]) for f in fields(GradingLimits)]


def parse_override(text: str) -> tuple[str, float]:
    """``"cell_seconds=30"`` as ``("cell_seconds", 30.0)``; a ``ValueError`` naming what is wrong."""
    name, equals, value = text.partition("=")
    name = name.strip()
    if not equals or name not in names():
        raise ValueError(f"--limit takes NAME=VALUE with NAME one of {', '.join(names())}; got {text!r}")
    try:
        return name, _as_type(name, float(value))
    except ValueError:
        raise ValueError(f"--limit {name}: {value!r} is not a number") from None


def _as_type(name: str, value) -> float:
    """``value`` as the type of the limit ``name`` (bytes, counts and CPU seconds are whole numbers)."""
    kind = GradingLimits.__dataclass_fields__[name].type
    return int(value) if kind == "int" and float(value) == int(value) else float(value) if kind == "float" else value
