"""The test suite's reading of the secret markers (tests/helpers/secret_markers.py) agrees with the grader's (dpgrader.cells)
on every source notebook, and with what nbgrader releases: two readings written apart, so a test of the scrubbing
does not read the secrets with the code it tests."""

from __future__ import annotations

import nbformat
import pytest

from dpgrader.cells import hidden_test_region
from dpgrader.course import REPO_ROOT, notebooks_of
from helpers.secret_markers import MARKERS, hidden_test_lines, marked_lines, not_shown, secret_lines

SOURCES = [notebook for folder in sorted((REPO_ROOT / "source").iterdir()) if folder.is_dir()
           for notebook in notebooks_of(folder)]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.parent.name)
def test_hidden_tests_read_as_the_grader_reads_them(source):
    notebook = nbformat.read(str(source), as_version=4)
    grader = [line.strip() for cell in notebook.cells for line in hidden_test_region(cell.source).splitlines()]
    assert grader, f"{source.name} has no hidden tests"
    assert hidden_test_lines(notebook, min_length=0) == grader


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.parent.name)
def test_secret_lines_are_what_the_release_takes_out(source):
    """Every distinctive secret line of a source notebook is missing from its release, and a visible line is no
    secret."""
    release = REPO_ROOT / "release" / source.parent.name / source.name
    secrets = secret_lines(source)
    assert len(secrets) >= 5, f"{source.name}: the reading found almost no secret"
    released = {line.strip() for cell in nbformat.read(str(release), as_version=4).cells for line in cell.source.splitlines()}
    assert not secrets & released, f"{source.name}: lines read as secret are lines of the release"
    assert not_shown(secrets, release), f"{source.name}: every secret line is a part of a line of the release"
    visible = {line for line, region in marked_lines(source) if region is None}
    assert not secrets & visible
    assert not any(marker in line for line, _ in marked_lines(source) for marker in MARKERS)
