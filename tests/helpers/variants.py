"""Grade made-up submissions of an assignment, to prove what its hidden tests do.

A *variant* is the reference notebook with some solution cells replaced: a correct
answer written differently (a loop, the ``random`` module), a classic mistake, or a
delegation to dplib. All variants of an assignment are graded in one course folder
with one ``nbgrader autograde`` run, and the scores come back per test cell.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from dplib.grading.course import REPO_ROOT, Course, notebooks_of


@dataclass(frozen=True)
class Variant:
    """A made-up submission: ``replacements`` maps a solution cell's grade_id to its new source.

    ``full`` lists test grade_ids that must keep full marks, ``zero`` those that must score 0.
    """

    name: str
    replacements: dict[str, str]
    full: tuple[str, ...] = ()
    zero: tuple[str, ...] = ()
    note: str = field(default="", compare=False)


def notebook_with(source: Path, replacements: dict[str, str]) -> nbformat.NotebookNode:
    """The notebook at ``source`` with the cells named in ``replacements`` given new sources."""
    notebook = nbformat.read(str(source), as_version=4)
    unused = set(replacements)
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in replacements:
            cell.source = replacements[grade_id]
            unused.discard(grade_id)
    if unused:
        raise KeyError(f"no cells with grade_id {sorted(unused)} in {source}")
    return notebook


def grade_variants(root: Path, assignment: str, variants: list[Variant], repo: Path = REPO_ROOT) -> dict[str, dict[str, tuple]]:
    """Autograde every variant of ``assignment``; return ``{variant: {grade_id: (score, max_score)}}``."""
    course = Course.from_repo(Path(root), [assignment], repo=repo)
    course.generate_assignment(assignment)
    (source,) = notebooks_of(repo / "source" / assignment)
    for variant in variants:
        folder = course.root / "submitted" / variant.name / assignment
        folder.mkdir(parents=True)
        nbformat.write(notebook_with(source, variant.replacements), str(folder / source.name))
    course.autograde(assignment)
    scores = {}
    for variant in variants:
        (grades,) = course.grades(assignment, variant.name).values()
        scores[variant.name] = {g.grade_id: (g.auto_score, g.max_score) for g in grades if not g.needs_manual_grade}
    return scores


def unmet_expectations(variant: Variant, scores: dict[str, tuple]) -> list[str]:
    """Human-readable list of the variant's expectations that its scores break (empty when all hold)."""
    problems = []
    for grade_id in variant.full:
        score, maximum = scores[grade_id]
        if score != maximum:
            problems.append(f"{variant.name}: {grade_id} should keep full marks, got {score}/{maximum}")
    for grade_id in variant.zero:
        score, maximum = scores[grade_id]
        if score != 0:
            problems.append(f"{variant.name}: {grade_id} should score 0, got {score}/{maximum}")
    return problems
