"""The course installs and grades from any folder: a path with a space and non-ASCII letters (issue 39).

A new user cloned into ``~/dp course`` and both README commands failed at once (``make: /home/ana/dp:
No such file or directory``): the Makefile wrote ``$(CURDIR)`` paths unquoted. The first test reads
what ``make`` would run for every target from such a folder (``make -n``, cheap); the second copies
this checkout's tracked files into one, runs ``make install`` there for real and grades one reference
notebook with the class grader (sandbox, nbgrader, the gradebook), all from that path: 4 to 5 minutes
on a loaded 2-core machine (239 s measured: make install 197 s, mostly pip unpacking and compiling ~200
packages; grading 42 s, the reference solution's pre-flight run included).
"""

from __future__ import annotations

import csv
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from dpgrader import notebooks_of

REPO = Path(__file__).resolve().parents[2]
FOLDER = "dp course ä"  # a space and a non-ASCII letter, as "~/dp course" on a German machine
TARGETS = ["install", "lab", "test", "test-fast", "release", "bench", "demo", "hub-install", "hub", "hub-down", "student-repo"]
ASSIGNMENT = "01_definition"


def tracked_copy(target: Path) -> Path:
    """The files ``git`` tracks in this checkout (as they are now), copied to ``target``: a fresh clone's tree."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = REPO / name
        if source.is_file():  # a file deleted in the work tree but still in the index is left out
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def test_every_make_target_keeps_a_path_with_a_space_whole(tmp_path):
    root = tmp_path / FOLDER
    needed = ["Makefile", "pyproject.toml", "scripts/jupyterlab_overrides.json", "deploy/jupyterhub/package-lock.json",
              *(path.relative_to(REPO).as_posix() for path in sorted((REPO / "course" / "nbconvert").rglob("*"))
                if path.is_file())]  # what the venv targets depend on (the course's nbconvert template)
    for name in needed:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, root / name)
    printed = subprocess.run(["make", "-n", "-B", *TARGETS], cwd=root, capture_output=True, text=True, check=True).stdout
    head = str(root).split(" ")[0]  # what an unquoted path is cut to: ".../dp"
    commands = [shlex.split(line.lstrip("@")) for line in printed.splitlines() if line.strip()]
    for words in commands:
        for word in words:
            assert head not in word or str(root) in word, f"{word!r} is a path cut at a space: {shlex.join(words)}"
    whole = [word for words in commands for word in words if str(root) in word]
    assert len(whole) >= len(TARGETS), printed  # every target runs something from this folder's environment
    assert any(words[0] == f"{root}/.venv/bin/python" for words in commands)
    assert any(words[0] == f"{root}/.venv-hub/bin/python" for words in commands)


@pytest.mark.pipeline
def test_make_install_and_grading_work_from_a_path_with_a_space(tmp_path):
    root = tracked_copy(tmp_path / FOLDER / "repo")
    started = time.monotonic()
    install = subprocess.run(["make", "install"], cwd=root, capture_output=True, text=True, timeout=1500)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    installed = time.monotonic() - started
    print(f"\nmake install took {installed:.0f} s")
    python = root / ".venv" / "bin" / "python"
    assert (root / ".venv" / ".installed").is_file()
    shown = subprocess.run([str(root / ".venv" / "bin" / "jupyter"), "--version"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "jupyterlab" in shown.stdout, shown.stderr  # a script: its shebang holds the path

    course = tmp_path / FOLDER / "kurs ü"  # the course folder, also with a space and a non-ASCII letter
    course.mkdir()
    shutil.copy2(root / "nbgrader_config.py", course / "nbgrader_config.py")
    shutil.copytree(root / "source" / ASSIGNMENT, course / "source" / ASSIGNMENT)
    (reference,) = notebooks_of(root / "source" / ASSIGNMENT)
    (course / "submitted" / "ana" / ASSIGNMENT).mkdir(parents=True)
    shutil.copy2(reference, course / "submitted" / "ana" / ASSIGNMENT / reference.name)
    graded = subprocess.run([str(python), "-m", "dpgrader.classroom", "grade", "--workers", "1", "--no-feedback"],
                            cwd=course, capture_output=True, text=True, timeout=900, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    with open(course / "grades.csv", newline="", encoding="utf-8") as handle:
        (row,) = list(csv.DictReader(handle))
    assert (row["student_id"], row["status"], row["sandboxed"]) == ("ana", "ok", "True")
    assert float(row["score"]) == float(row["max_score"]) - float(row["points_pending"]) > 0  # every autograded point
    print(f"grading took {time.monotonic() - started - installed:.0f} s")
