"""The nbgrader exchange round trip with the course's own ``nbgrader_config.py``, no browser.

An instructor's course folder and a student's folder share a temporary exchange:
release_assignment -> fetch_assignment -> submit -> collect -> autograde -> generate_feedback
-> release_feedback -> fetch_feedback, each through nbgrader's real command line. It failed
when ``CourseDirectory.ignore`` held ``*.txt``: collect dropped ``timestamp.txt`` and
release_feedback crashed. The feedback's math must be MathML (it renders offline), not ``$...$``.
"""

from __future__ import annotations

import getpass
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dpgrader import Course
from dpgrader.course import REPO_ROOT, nbgrader_env

ASSIGNMENT = "02_laplace"
COURSE_ID = "dp-course"


def student_nbgrader(folder: Path, exchange: Path, *args: str) -> subprocess.CompletedProcess:
    """``nbgrader <args> --course dp-course --Exchange.root=<exchange>`` run in a student's folder."""
    command = [sys.executable, "-m", "nbgrader", *args, f"--course={COURSE_ID}", f"--Exchange.root={exchange}"]
    result = subprocess.run(command, cwd=folder, env=nbgrader_env(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"`nbgrader {' '.join(args)}` failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.mark.pipeline
def test_exchange_round_trip_with_the_course_config(tmp_path):
    exchange = tmp_path / "exchange"
    exchange.mkdir(mode=0o1777)
    course = Course.from_repo(tmp_path / "course", [ASSIGNMENT])
    with open(course.root / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.Exchange.root = {str(exchange)!r}\n")
    student_home = tmp_path / "student"
    student_home.mkdir()
    outputs = []

    # instructor: register and release
    outputs.append(course.nbgrader("generate_assignment", ASSIGNMENT, "--force"))
    outputs.append(course.nbgrader("release_assignment", ASSIGNMENT))
    # student: fetch, fill in (the reference solution), submit
    outputs.append(student_nbgrader(student_home, exchange, "fetch_assignment", ASSIGNMENT))
    fetched = student_home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert fetched.exists(), f"fetch_assignment did not create {fetched}"
    fetched.write_bytes((REPO_ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes())
    outputs.append(student_nbgrader(student_home, exchange, "submit", ASSIGNMENT))
    # instructor: the student on the roster (the course's collect takes no one else), collect keeps the
    # timestamp, autograde, feedback, release it
    student = getpass.getuser()
    outputs.append(course.nbgrader("db", "student", "add", student))
    outputs.append(course.nbgrader("collect", ASSIGNMENT))
    submitted = course.root / "submitted" / student / ASSIGNMENT
    assert (submitted / "timestamp.txt").is_file(), f"collect dropped timestamp.txt: {sorted(p.name for p in submitted.iterdir())}"
    outputs.append(course.autograde(ASSIGNMENT))
    outputs.append(course.nbgrader("generate_feedback", ASSIGNMENT, "--force"))
    outputs.append(course.nbgrader("release_feedback", ASSIGNMENT))
    # student: fetch the feedback
    outputs.append(student_nbgrader(student_home, exchange, "fetch_feedback", ASSIGNMENT))
    feedback = sorted((student_home / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}.html"))
    assert len(feedback) == 1, f"fetch_feedback brought {feedback}"

    page = feedback[0].read_text()
    assert re.search(r"Score: \d", page), "the feedback shows no score"
    assert "<math" in page and "MathML" in page, "the feedback's math was not converted to MathML"
    # the lecture text's formulas, e.g. $\varepsilon$, no longer appear as raw LaTeX outside <math>
    text_outside_math = re.sub(r"<math.*?</math>|<script.*?</script>|<style.*?</style>", "", page, flags=re.DOTALL)
    assert "$$" not in text_outside_math, "a display formula was left as raw LaTeX"
    raw = re.findall(r"\$[^$<>\n]{0,40}\\(?:varepsilon|epsilon|frac|ln|Pr)[^$<>\n]{0,40}\$", text_outside_math)
    assert not raw, f"raw LaTeX left in the feedback: {raw[:3]}"

    everything = "\n".join(o.stdout + o.stderr for o in outputs)
    assert "is not absolute" not in everything, "nbgrader warned that the course root is not absolute"


@pytest.mark.pipeline
def test_formgrader_lists_registered_assignments_as_released_or_draft(tmp_path):
    """Check that registered assignments carry their points in formgrader; "draft" means "not released yet"."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    exchange = tmp_path / "exchange"
    exchange.mkdir(mode=0o1777)
    course = Course.from_repo(tmp_path / "course", ["01_definition", ASSIGNMENT])
    for name in ("01_definition", ASSIGNMENT):
        course.nbgrader("generate_assignment", name, "--force", f"--Exchange.root={exchange}")
    course.nbgrader("release_assignment", ASSIGNMENT, f"--Exchange.root={exchange}")

    config = Config(PyFileConfigLoader("nbgrader_config.py", path=str(course.root)).load_config())
    config.Exchange.root = str(exchange)
    api = NbGraderAPI(CourseDirectory(config=config), config=config)
    status = {a["name"]: a for a in api.get_assignments()}
    assert status[ASSIGNMENT]["status"] == "released"
    assert status["01_definition"]["status"] == "draft"
    for name in ("01_definition", ASSIGNMENT):
        assert status[name]["id"] is not None, f"{name} is not in the gradebook"
        assert status[name]["max_score"] > 0, f"{name} shows no points"
