"""A course folder on disk and the nbgrader commands an instructor runs in it.

Every command runs the real ``nbgrader`` command line of this Python environment, with
the environment's ``bin/`` first on ``PATH`` (nbgrader starts ``alembic`` as a
subprocess when it creates a gradebook). Each :class:`Course` has its own folder and
its own SQLite gradebook, so courses can be graded side by side without locking.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def format_timestamp(when: datetime) -> str:
    """A hand-in time as nbgrader writes it in ``submitted/<student>/<assignment>/timestamp.txt`` (UTC)."""
    return when.strftime("%Y-%m-%d %H:%M:%S.%f") + " UTC"


def assignments_in(source_dir: Path) -> list[str]:
    """Names of the assignment folders in ``source_dir`` (those holding a notebook), sorted."""
    return sorted(p.name for p in Path(source_dir).iterdir() if p.is_dir() and any(p.glob("*.ipynb")))


def notebooks_of(folder: Path) -> list[Path]:
    """The notebooks directly inside ``folder``, sorted."""
    return sorted(Path(folder).glob("*.ipynb"))


def nbgrader_env() -> dict[str, str]:
    """The environment for an nbgrader subprocess: this Python's bin/ first on PATH."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.setdefault("MPLBACKEND", "Agg")
    env["PYTHONWARNINGS"] = "ignore"  # nbgrader's own deprecation chatter; kernels are unaffected
    return env


@dataclass(frozen=True)
class CellGrade:
    """The grade of one graded cell of one submission."""

    grade_id: str
    score: float | None
    max_score: float
    auto_score: float | None
    needs_manual_grade: bool


class Course:
    """An nbgrader course folder: ``nbgrader_config.py``, ``source/``, ``release/``, ``submitted/``, ...

    Parameters
    ----------
    root : Path
        The folder; created if missing.
    """

    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    @classmethod
    def from_repo(cls, root: Path, assignments: list[str] | None = None, repo: Path = REPO_ROOT) -> Course:
        """A fresh course at ``root`` holding the repo's config and the given source assignments."""
        course = cls(root)
        shutil.copy2(repo / "nbgrader_config.py", course.root / "nbgrader_config.py")
        for name in assignments if assignments is not None else assignments_in(repo / "source"):
            shutil.copytree(repo / "source" / name, course.root / "source" / name)
        return course

    def nbgrader(self, *args: str, check: bool = True, timeout: float | None = 1800) -> subprocess.CompletedProcess:
        """Run ``nbgrader <args>`` in this course; raise with its output if it fails and ``check``."""
        command = [sys.executable, "-m", "nbgrader", *args]
        result = subprocess.run(
            command, cwd=self.root, env=nbgrader_env(), capture_output=True, text=True, timeout=timeout
        )
        if check and result.returncode != 0:
            raise RuntimeError(
                f"`nbgrader {' '.join(args)}` exited {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
            )
        return result

    def generate_assignment(self, assignment: str) -> Path:
        """Run ``nbgrader generate_assignment`` and return the release folder."""
        self.nbgrader("generate_assignment", assignment, "--force")
        return self.root / "release" / assignment

    def generate_assignments(self) -> list[Path]:
        """Release every assignment of ``source/`` in one ``nbgrader generate_assignment`` run; return the folders.

        One process instead of one per assignment: nbgrader takes seconds to start.
        """
        self.nbgrader("generate_assignment", "*", "--force")
        return [self.root / "release" / name for name in assignments_in(self.root / "source")]

    def submit(self, assignment: str, student: str, notebooks: list[Path]) -> Path:
        """Place notebooks where ``nbgrader autograde`` expects a student's submission."""
        folder = self.root / "submitted" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        for notebook in notebooks:
            shutil.copy2(notebook, folder / Path(notebook).name)
        return folder

    def autograde(self, assignment: str, *students: str, check: bool = True) -> subprocess.CompletedProcess:
        """Run ``nbgrader autograde`` for the given students (all submitted students if none)."""
        args = ["autograde", assignment, "--force", "--create"]
        for student in students:
            args.append(f"--student={student}")
        return self.nbgrader(*args, check=check)

    def grades(self, assignment: str, student: str) -> dict[str, list[CellGrade]]:
        """Per notebook, the grade of every graded cell of a student's autograded submission."""
        from nbgrader.api import Gradebook

        result: dict[str, list[CellGrade]] = {}
        with Gradebook(f"sqlite:///{self.root / 'gradebook.db'}") as gradebook:
            submission = gradebook.find_submission(assignment, student)
            for notebook in submission.notebooks:
                result[notebook.name] = [
                    CellGrade(
                        grade_id=grade.name,
                        score=grade.score,
                        max_score=grade.max_score,
                        auto_score=grade.auto_score,
                        needs_manual_grade=grade.needs_manual_grade,
                    )
                    for grade in sorted(notebook.grades, key=lambda g: g.name)
                ]
        return result
