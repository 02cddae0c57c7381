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

    The one place its layout is written down (as nbgrader's ``CourseDirectory.format_path`` does for
    nbgrader): every path of the course, and its gradebook's URL, is a method or property here.

    Parameters
    ----------
    root : Path
        The folder. Making a ``Course`` creates nothing: :meth:`from_repo` makes a new course's folder,
        and each writer the folder it writes in. Made once per run and passed on (two are equal when
        their folders are).
    """

    CONFIG = "nbgrader_config.py"
    GRADEBOOK = "gradebook.db"

    def __init__(self, root: Path | Course):
        self.root = Path(root.root if isinstance(root, Course) else root)

    def __eq__(self, other) -> bool:
        return isinstance(other, Course) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    def __repr__(self) -> str:
        return f"Course({str(self.root)!r})"

    # --- the layout ---------------------------------------------------------------------------------

    @property
    def config_file(self) -> Path:
        return self.root / self.CONFIG

    @property
    def gradebook(self) -> Path:
        return self.root / self.GRADEBOOK

    @property
    def gradebook_url(self) -> str:
        """The SQLAlchemy URL nbgrader's ``Gradebook`` opens."""
        return f"sqlite:///{self.gradebook}"

    def source(self, assignment: str = "") -> Path:
        """``source/<assignment>``: the instructor's notebooks (the reference solutions)."""
        return self.root / "source" / assignment

    def release(self, assignment: str = "") -> Path:
        return self.root / "release" / assignment

    def submitted(self, student: str = "", assignment: str = "") -> Path:
        return self.root / "submitted" / student / assignment

    def autograded(self, student: str = "", assignment: str = "") -> Path:
        return self.root / "autograded" / student / assignment

    def feedback(self, student: str = "", assignment: str = "") -> Path:
        return self.root / "feedback" / student / assignment

    @property
    def grading_logs(self) -> Path:
        """``autograded/grading_logs``: the workers' logs and the log of each submission not graded ``ok``."""
        return self.autograded() / "grading_logs"

    @property
    def outcomes_file(self) -> Path:
        """``autograded/grading_outcomes.csv``: one outcome per graded submission."""
        return self.autograded() / "grading_outcomes.csv"

    def similarity_report(self, assignment: str) -> Path:
        return self.root / "similarity" / f"{assignment}.html"

    def assignments(self) -> list[str]:
        """The assignments of ``source/`` (folders holding a notebook), sorted."""
        return assignments_in(self.source()) if self.source().is_dir() else []

    def config(self):
        """The course's nbgrader configuration (``nbgrader_config.py``, read as nbgrader reads it), rooted here."""
        from traitlets.config.loader import PyFileConfigLoader

        config = PyFileConfigLoader(self.CONFIG, path=str(self.root)).load_config()
        config.CourseDirectory.root = str(self.root)
        return config

    # --- nbgrader commands ----------------------------------------------------------------------------

    @classmethod
    def from_repo(cls, root: Path, assignments: list[str] | None = None, repo: Path = REPO_ROOT) -> Course:
        """A fresh course at ``root`` holding the repo's config and the given source assignments."""
        course = cls(root)
        course.root.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / cls.CONFIG, course.config_file)
        for name in assignments if assignments is not None else assignments_in(Path(repo) / "source"):
            shutil.copytree(Path(repo) / "source" / name, course.source(name))
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
        return self.release(assignment)

    def generate_assignments(self) -> list[Path]:
        """Release every assignment of ``source/`` in one ``nbgrader generate_assignment`` run; return the folders.

        One process instead of one per assignment: nbgrader takes seconds to start.
        """
        self.nbgrader("generate_assignment", "*", "--force")
        return [self.release(name) for name in self.assignments()]

    def submit(self, assignment: str, student: str, notebooks: list[Path]) -> Path:
        """Place notebooks where ``nbgrader autograde`` expects a student's submission."""
        folder = self.submitted(student, assignment)
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
        with Gradebook(self.gradebook_url) as gradebook:
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
