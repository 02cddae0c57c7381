"""A tiny assignment for the tests of the grader's own mechanics (cluster, pre-flight, kernel start-up): cheap to grade.

The course's assignments take several seconds of cells each; a test that checks how grading is run (a worker
killed, a scheduler gone, a kernel that cannot start) and not what an assignment asks grades this one instead (its
reference: about half a CPU second of kernel time, where 01_definition's takes several). It has the structure of a
real one:
a read-only set-up cell importing ``dplib.testing`` and reading a course data set (a hidden test needs it, so a
kernel that cannot read dplib's data loses a point), solution cells with ``### BEGIN SOLUTION``, autograded test
cells with points and hidden tests, and a manually graded written answer.

:func:`tiny_repo` writes it, with the course's ``nbgrader_config.py``, as a repository for
:meth:`dpgrader.course.Course.from_repo`; :func:`unanswered` is what its release hands a student.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import nbformat

from dpgrader.course import REPO_ROOT

TINY = "99_tiny"

TEXT = '''%% markdown
# A tiny assignment

%% readonly id=setup_imports
import math
from dplib.datasets import load_voter_roll
from dplib.testing import check_close

voters = load_voter_roll()  # the course's data, read from dplib's folder as the assignments read it

%% solution id=double_solution
def double(x):
    """Twice x."""
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION

%% tests id=test_double points=1
"""Check that double doubles."""
check_close(double(2), 4)
### BEGIN HIDDEN TESTS
check_close(double(-1.5), -3.0)
check_close(double(len(voters)) / len(voters), 2.0)
### END HIDDEN TESTS

%% solution id=log_ratio_solution
def log_ratio(p, q):
    """The privacy loss ln(p / q) of one output."""
    ### BEGIN SOLUTION
    return math.log(p / q)
    ### END SOLUTION

%% tests id=test_log_ratio points=2
"""Check that log_ratio is the log of the ratio."""
check_close(log_ratio(math.e, 1.0), 1.0)
### BEGIN HIDDEN TESTS
check_close(log_ratio(0.25, 0.5), -math.log(2))
### END HIDDEN TESTS

%% answer id=written_loss points=1
Why is the privacy loss a logarithm?

=== BEGIN MARK SCHEME ===
Losses of independent releases add up.
=== END MARK SCHEME ===
'''

POINTS = {"test_double": 1, "test_log_ratio": 2}  # the autograded points; the written answer awaits a grader
SOLUTION = re.compile(r"### BEGIN SOLUTION\n.*?### END SOLUTION", re.S)


def nbauthor():
    """``scripts/nbauthor.py`` (a script, not a module of the package), loaded: the plain-text notebook format."""
    spec = importlib.util.spec_from_file_location("nbauthor", REPO_ROOT / "scripts" / "nbauthor.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tiny_notebook() -> nbformat.NotebookNode:
    """The tiny assignment's source: the reference solution, hidden tests included."""
    return nbauthor().text_to_notebook(TEXT)


def unanswered(notebook: nbformat.NotebookNode | None = None) -> nbformat.NotebookNode:
    """``notebook`` (default: the tiny source) as a student gets it: each solution a ``raise NotImplementedError()``.

    Hidden tests stay in (the grader puts the source's test cells back whatever a student hands in)."""
    notebook = nbformat.from_dict(notebook or tiny_notebook())
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = SOLUTION.sub("raise NotImplementedError()", cell.source)
    return notebook


def tiny_repo(folder: Path, name: str = TINY, notebook: nbformat.NotebookNode | None = None) -> Path:
    """``folder`` as a repository of one assignment ``name`` (default: :data:`TINY`, :func:`tiny_notebook`):
    the course's ``nbgrader_config.py`` and ``source/<name>/<name>.ipynb``."""
    folder = Path(folder)
    (folder / "source" / name).mkdir(parents=True, exist_ok=True)
    shutil.copy2(REPO_ROOT / "nbgrader_config.py", folder / "nbgrader_config.py")
    nbformat.write(notebook or tiny_notebook(), str(folder / "source" / name / f"{name}.ipynb"))
    return folder
