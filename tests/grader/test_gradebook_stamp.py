"""A new gradebook is stamped with nbgrader's schema revision read in-process, not by an ``alembic`` subprocess."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import nbgrader.api
import pytest

import dpgrader.gradebook
from dpgrader.course import Course
from dpgrader.gradebook import schema_head, stamp_new_gradebooks_in_process
from helpers.tiny_assignment import TINY, tiny_repo


def _stamp(gradebook: Path) -> list[tuple[str]]:
    with sqlite3.connect(gradebook) as db:
        return db.execute("SELECT version_num FROM alembic_version").fetchall()


@pytest.mark.pipeline  # runs `alembic heads`
def test_the_revision_read_in_process_is_the_one_the_alembic_command_prints(monkeypatch):
    stamp_new_gradebooks_in_process()
    in_process = schema_head()
    monkeypatch.setattr(dpgrader.gradebook, "schema_head", lambda: 1 / 0)  # fall back to nbgrader's own way
    from_the_command = nbgrader.api.get_alembic_version()  # runs `alembic heads`
    assert in_process == from_the_command and len(in_process) == 12, (in_process, from_the_command)


def test_installing_twice_keeps_one_layer():
    stamp_new_gradebooks_in_process()
    first = nbgrader.api.get_alembic_version
    stamp_new_gradebooks_in_process()
    assert nbgrader.api.get_alembic_version.__wrapped__ is first.__wrapped__
    assert nbgrader.api.get_alembic_version.__wrapped__.__module__ == "nbgrader.api"


@pytest.mark.pipeline  # one nbgrader command
def test_an_nbgrader_command_makes_a_stamped_gradebook_without_running_alembic(tmp_path):
    """The course's nbgrader_config.py installs the in-process stamp: an ``alembic`` that only leaves a mark is never run."""
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    mark = tmp_path / "alembic_ran"
    (fake_bin / "alembic").write_text(f"#!/bin/sh\ntouch '{mark}'\nexit 1\n")
    (fake_bin / "alembic").chmod(0o755)
    repo = tiny_repo(tmp_path / "repo")
    course = Course.from_repo(tmp_path / "course", [TINY], repo=repo)
    env = {**os.environ, "PATH": os.pathsep.join([str(fake_bin), "/usr/bin", "/bin"]), "PYTHONWARNINGS": "ignore"}
    result = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", TINY, "--force"],
                            cwd=course.root, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert not mark.exists(), "nbgrader ran `alembic` to stamp the new gradebook"
    assert _stamp(course.root / Course.GRADEBOOK) == [(schema_head(),)]
