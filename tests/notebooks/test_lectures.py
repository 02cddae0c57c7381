"""Every lecture notebook in course/ runs top to bottom, stores no outputs, and shows its explorer."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]
COURSE = REPO / "course"
LECTURES = sorted(COURSE.glob("*.ipynb"))
# An assignment is a folder source/<name>/ holding <name>.ipynb (as tests/notebooks/test_pipeline.py finds them).
ASSIGNMENTS = sorted(path.parent.name for path in (REPO / "source").glob("*/*.ipynb") if path.stem == path.parent.name)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def kernel_env() -> dict[str, str]:
    """The environment a lecturer's kernel has: the inline matplotlib backend, not the tests' Agg."""
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)
    return env


def test_one_lecture_per_assignment():
    """Check that course/ has one lecture notebook per assignment in source/, named like it."""
    assert len(ASSIGNMENTS) >= 6, f"expected the course's assignments in source/, found {ASSIGNMENTS}"
    assert [p.stem for p in LECTURES] == ASSIGNMENTS


@pytest.mark.parametrize("path", LECTURES, ids=[p.stem for p in LECTURES])
def test_lecture_is_clean_source(path):
    """Check that a lecture stores no outputs and has objectives, questions and a summary."""
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name} stores outputs"
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    for heading in ("Learning objectives", "## Questions to ask the class", "## Summary"):
        assert heading in markdown, f"{path.name} lacks {heading!r}"
    assert "usetex" not in json.dumps(notebook), "plots must not need LaTeX"


@pytest.mark.lecture
@pytest.mark.parametrize("path", LECTURES, ids=[p.stem for p in LECTURES])
def test_lecture_executes(path, tmp_path):
    """Check that a lecture runs top to bottom without errors and displays a dplib explorer."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute(env=kernel_env())
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors, f"{path.name}: {errors[0].ename}: {errors[0].evalue}"
    widget_outputs = [o for o in outputs if WIDGET_VIEW in o.get("data", {})]
    assert widget_outputs, f"{path.name} displays no widget"
    explorer_cells = [c for c in notebook.cells if c.cell_type == "code" and "Explorer(" in c.source]
    assert explorer_cells and any(
        WIDGET_VIEW in o.get("data", {}) for c in explorer_cells for o in c.outputs
    ), f"{path.name}: the explorer cell displays no widget"


# --------------------------------------------------------------------------- syllabus and guide

SYLLABUS = COURSE / "syllabus.md"
GUIDE = COURSE / "instructor_guide.md"


def graded_points(notebook_path: Path) -> tuple[float, float]:
    """(autograded, graded by hand) points of an nbgrader source notebook."""
    auto = manual = 0.0
    for cell in nbformat.read(notebook_path, as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            auto += meta.get("points", 0)
        elif meta.get("grade") or meta.get("task"):
            manual += meta.get("points", 0)
    return auto, manual


def test_syllabus_covers_every_assignment_with_its_points():
    """Check that the syllabus lists each assignment with the point totals of its source notebook."""
    text = SYLLABUS.read_text()
    for name in ASSIGNMENTS:
        assert f"]({name}.ipynb)" in text, f"the syllabus does not link the lecture {name}.ipynb"
        auto, manual = graded_points(REPO / "source" / name / f"{name}.ipynb")
        heading = f"`{name}` — {auto + manual:g} points ({auto:g} autograded, {manual:g} by hand)"
        assert heading in text, f"syllabus out of date for {name}: expected the heading {heading!r}"


@pytest.mark.parametrize("page", [SYLLABUS, GUIDE], ids=lambda p: p.name)
def test_course_pages_links_resolve(page):
    """Check that every relative link of the syllabus and the instructor guide points at a file."""
    targets = re.findall(r"\]\(([^)#\s]+)\)", page.read_text())
    relative = [t for t in targets if "://" not in t]
    assert relative, f"{page.name} links nothing"
    for target in relative:
        assert (page.parent / target).exists(), f"{page.name} links {target}, which does not exist"


def test_instructor_guide_covers_the_workflow():
    """Check that the guide links the authoring doc and names the grading commands and generated files."""
    text = GUIDE.read_text()
    assert "](../docs/authoring.md)" in text
    for command in ("nbgrader autograde", "nbgrader generate_feedback", "nbgrader export", "make release",
                    "scripts/make_pii_data.py", "git-pull?repo=", "nbgrader.server_extensions.formgrader"):
        assert command in text, f"the instructor guide does not mention {command!r}"
