"""The repository published to students (scripts/make_student_repo.py) holds nothing from source/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers.secret_markers import MARKERS, secret_lines

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def student_repo(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("student") / "repo"
    subprocess.run([sys.executable, str(REPO / "scripts" / "make_student_repo.py"), str(target)], check=True, capture_output=True)
    return target


def files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_student_repo_has_what_students_run(student_repo):
    for name in ("README.md", "pyproject.toml", "environment.yml", "dplib/__init__.py", "dplib/testing/__init__.py", "course/syllabus.md"):
        assert (student_repo / name).is_file(), f"{name} is missing"
    for release in (REPO / "release").iterdir():
        if release.is_dir():
            assert (student_repo / "release" / release.name).is_dir(), f"release/{release.name} is missing"
    assert "Assignment List" in (student_repo / "README.md").read_text()


def test_student_repo_holds_nothing_from_source(student_repo):
    assert not (student_repo / "source").exists()
    assert not (student_repo / "dpgrader").exists(), "the grading tools stay with the instructor"
    assert not (student_repo / "course" / "instructor_guide.md").exists()
    source_bytes = {p.read_bytes() for p in files(REPO / "source")}
    copied = [p for p in files(student_repo) if p.read_bytes() in source_bytes]
    assert not copied, f"files identical to source/ files: {copied}"
    text = "\n".join(p.read_text(errors="replace") for p in files(student_repo))
    assert not [m for m in MARKERS if m in text], "solution / hidden-test markers in the student repository"
    secrets = secret_lines(sorted((REPO / "source").glob("*/*.ipynb")), min_length=20)
    assert secrets, "found no solution lines in source/: the check would prove nothing"
    # dplib is the library students always had (its own implementations, disabled by the tests): the
    # notebooks and lectures must not show a solution or a hidden test
    shown = [p for p in files(student_repo) if p.relative_to(student_repo).parts[0] != "dplib"]
    lines = {line.strip() for p in shown for line in p.read_text(errors="replace").replace("\\n", "\n").splitlines()}
    lines |= {line.strip().strip('",') for line in lines}
    leaked = sorted(secrets & lines)
    assert not leaked, f"solution or hidden-test lines in the student repository: {leaked[:5]}"


def test_student_repo_refuses_an_existing_folder(tmp_path):
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import make_student_repo
    finally:
        sys.path.remove(str(REPO / "scripts"))
    with pytest.raises(ValueError, match="target must be a new folder"):
        make_student_repo.build(tmp_path)
