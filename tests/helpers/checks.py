"""The checks the pipeline harness makes, as functions returning a list of problems (empty = fine).

Each check is a pure function of files or grades, so the harness (``tests/notebooks/test_pipeline.py``)
and the tests that prove the harness fails loudly (``tests/notebooks/test_harness_checks.py``) share them.
"""

from __future__ import annotations

import ast
import html
import inspect
import json
import re
from pathlib import Path

import nbformat

from dpgrader.course import CellGrade
from dpgrader.review.reading import visible_part
from helpers.secret_markers import MARKERS, secret_lines, unseen_hidden_test_lines

GRADE_ID = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)+")


def autograded_points(notebook: Path) -> dict[str, float]:
    """``{grade_id: points}`` of the autograded test cells of a notebook, from its nbgrader metadata."""
    cells = nbformat.read(str(notebook), as_version=4).cells
    return {
        meta["grade_id"]: float(meta["points"])
        for meta in (cell.metadata.get("nbgrader", {}) for cell in cells if cell.cell_type == "code")
        if meta.get("grade")
    }


def release_drift(generated: Path, committed: Path) -> list[str]:
    """Differences between a freshly generated release folder and the committed one."""
    if not committed.is_dir():
        return [f"{committed} is missing: run `make release` and commit it"]
    files = lambda root: {p.relative_to(root) for p in root.rglob("*") if p.is_file()}  # noqa: E731
    made, kept = files(generated), files(committed)
    problems = [f"only in the regenerated release: {p}" for p in sorted(made - kept)]
    problems += [f"only in the committed release: {p}" for p in sorted(kept - made)]
    problems += [
        f"{p} differs from what nbgrader generates from source/: run `make release`"
        for p in sorted(made & kept)
        if (generated / p).read_bytes() != (committed / p).read_bytes()
    ]
    return problems


def lost_points(grades: dict[str, list[CellGrade]]) -> list[str]:
    """Autograded cells that did not get full marks (for a reference submission)."""
    problems = []
    for notebook, cells in grades.items():
        autograded = [g for g in cells if not g.needs_manual_grade]
        if not autograded:
            problems.append(f"{notebook} has no autograded cell")
        problems += [
            f"{notebook}: {g.grade_id} scored {g.auto_score} of {g.max_score}" for g in autograded if g.auto_score != g.max_score
        ]
    return problems


def earned_points(grades: dict[str, list[CellGrade]]) -> list[str]:
    """Autograded cells that scored anything but 0 (for an untouched release)."""
    return [
        f"{notebook}: {g.grade_id} scored {g.auto_score}"
        for notebook, cells in grades.items()
        for g in cells
        if not g.needs_manual_grade and g.auto_score != 0
    ]


def _page_text(page: str) -> str:
    """The text a feedback page shows: its tags dropped, entities decoded (``&quot;`` is a quote)."""
    return html.unescape(re.sub(r"<[^>]*>", "", page))


def feedback_problems(autograded: nbformat.NotebookNode, page: str, source: nbformat.NotebookNode,
                      student: str = "") -> list[str]:
    """What a student's feedback page gets wrong: a failure message of the autograded notebook that the page
    does not show whole, a test that failed without a message the page fills in (an empty error box), or a
    line of a hidden test's code.

    A hidden-test line the student's own cells also hold is the student's, not a leak.
    """
    from dpgrader.preprocessors.feedback import NO_MESSAGE

    text, problems = _page_text(page), []
    for cell in autograded.cells:
        meta = cell.metadata.get("nbgrader", {})
        name = meta.get("grade_id") or "a cell without grade_id"
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.get("output_type") != "error":
                continue
            message = str(output.get("evalue", "")).strip()
            if message and message not in text:
                problems.append(f"{student}: {name}: the feedback does not show the failure message whole: {message!r}")
            elif not message and meta.get("grade") and f"{output.get('ename')}: {NO_MESSAGE}" not in text:
                problems.append(f"{student}: {name} failed with {output.get('ename')} and no message (an empty error box)")
    own = "\n".join(cell.source for cell in autograded.cells if cell.cell_type == "code" and not _is_graded(cell))
    problems += [f"{student}: the feedback shows a line of a hidden test: {line}"
                 for line in sorted(unseen_hidden_test_lines(source)) if line in text and line not in own]
    return problems


def _is_graded(cell) -> bool:
    """Whether a cell is graded by nbgrader (a test cell or a graded answer)."""
    return bool(cell.metadata.get("nbgrader", {}).get("grade"))


def _released_text(release: Path) -> str:
    parts = []
    for path in sorted(p for p in release.rglob("*") if p.is_file()):
        text = path.read_text(errors="replace")
        if path.suffix == ".ipynb":
            text = "\n".join(cell.source for cell in nbformat.reads(text, as_version=4).cells)
        parts.append(text)
    return "\n".join(parts)


def leaks(source_notebooks: list[Path], release: Path) -> list[str]:
    """Markers, solution lines, hidden-test lines or mark-scheme lines that reached the release."""
    text = _released_text(release)
    problems = [f"the release contains '{marker}'" for marker in MARKERS if marker in text]
    released_lines = {line.strip() for line in text.splitlines()}
    for source in source_notebooks:
        leaked = sorted(secret_lines(nbformat.read(str(source), as_version=4)) & released_lines)
        problems += [f"the release shows a line of a solution or hidden test of {source.name}: {line}" for line in leaked]
    return problems


def source_problems(notebooks: list[Path]) -> list[str]:
    """Stored outputs, invalid notebooks, and grade ids that are duplicated or not descriptive."""
    problems, seen = [], {}
    for path in notebooks:
        raw = json.loads(path.read_text())
        notebook = nbformat.reads(path.read_text(), as_version=4)
        nbformat.validate(notebook)
        if any(c["cell_type"] == "code" and (c["outputs"] or c["execution_count"] is not None) for c in raw["cells"]):
            problems.append(f"{path.name} stores outputs: clear them")
        for cell in notebook.cells:
            meta = cell.metadata.get("nbgrader")
            if not meta:
                continue
            grade_id = meta["grade_id"]
            if not GRADE_ID.fullmatch(grade_id) or "cell" in grade_id:
                problems.append(f"{path.name}: grade_id {grade_id!r} should be snake_case words saying what the cell is")
            if grade_id in seen:
                problems.append(f"grade_id {grade_id!r} is used twice ({seen[grade_id]} and {path.name})")
            seen[grade_id] = path.name
            if meta.get("grade") and cell.cell_type == "code" and not cell.source.lstrip().startswith('"""Check that'):
                problems.append(f'{path.name}: test cell {grade_id} should open with a one-line """Check that ..."""')
    return problems


def _returns_a_value(function: ast.FunctionDef) -> bool:
    return any(isinstance(node, ast.Return) and node.value is not None for node in ast.walk(function))


def _value_returning_names(cells) -> set[str]:
    """Functions a test cell may call whose result is not None: dplib.testing's and the notebook's own."""
    import dplib.testing

    names = {
        name
        for name in dir(dplib.testing)
        if callable(function := getattr(dplib.testing, name)) and inspect.isfunction(function)
        and inspect.signature(function).return_annotation not in (None, "None")
    }
    for cell in cells:
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                (names.add if _returns_a_value(node) else names.discard)(node.name)
    return names


def partial_credit_endings(notebook: Path) -> list[str]:
    """Test cells whose last statement shows a value: nbgrader would read it as partial credit.

    nbgrader scores a test cell that ends in an expression by the number it displays (and stops
    ``nbgrader validate`` with "partial credit cannot be greater than maximum points" when the
    number is larger), so a value-returning check such as ``check_number`` must not end a cell,
    in source/ or in the release, where the hidden tests after it are cut.
    """
    cells = nbformat.read(str(notebook), as_version=4).cells
    returning = _value_returning_names(cells)
    problems = []
    for cell in cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("grade"):
            continue
        unmarked = "\n".join(line for line in cell.source.splitlines() if "HIDDEN TESTS" not in line)
        for version, text in (("", unmarked), (" (as released)", visible_part(cell.source))):
            body = ast.parse(text).body
            last = body[-1] if body else None
            if isinstance(last, ast.Expr) and not (
                isinstance(last.value, ast.Call) and isinstance(last.value.func, ast.Name) and last.value.func.id not in returning
            ):
                problems.append(
                    f"{notebook.name}: test cell {meta['grade_id']}{version} ends in an expression that shows a value "
                    f"(line {last.lineno}); nbgrader reads a shown number as partial credit: bind it or end with a statement"
                )
    return problems
