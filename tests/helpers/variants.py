"""Grade made-up submissions of an assignment, to prove what its hidden tests do.

A *variant* is the reference notebook with some solution cells replaced: a correct
answer written differently (a loop, another numpy call), a style of drawing randomness
(:mod:`helpers.rng_styles`), a classic mistake, or a delegation to dplib. Each assignment's variants live in ``tests/variant_cases/<assignment>.py``
(a list ``VARIANTS``). :func:`grade_assignment` grades them together with the reference
solution and the untouched release in one course folder with one ``nbgrader autograde``
run; ``tests/notebooks/test_pipeline.py`` and ``tests/notebooks/test_variants.py`` read the same run.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from dpgrader.course import REPO_ROOT, Course, notebooks_of
from helpers.checks import autograded_points


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


def mocking_source(functions: Iterable[str], magic: Mapping[str, object] | None = None) -> str:
    """The source of a solution cell that defines each of ``functions`` to return a ``MagicMock`` equal to everything.

    Its ``__eq__`` returns True, and every other magic method named in ``magic`` returns the value given
    there (``{"__lt__": True}``, ``{"__float__": 0.0}``), for the comparisons and conversions a test may try.
    Each function returns its one mock, made when the cell runs: a test must refuse it by its type, whoever
    made it. (A new mock per call cost seconds a test, not a different check: a MagicMock takes about a
    millisecond to build in a guarded kernel, and tests draw samples of 5,000 calls.)
    """
    returns = {"__eq__": True, **(magic or {})}
    spec = ", ".join(f"'{method}.return_value': {value!r}" for method, value in returns.items())
    definitions = [f"_{function}_answer = mock.MagicMock(**{{{spec}}})\n\n\n"
                   f"def {function}(*args, **kwargs):\n    return _{function}_answer" for function in functions]
    return "from unittest import mock\n\n" + "\n\n\n".join(definitions)


def mocks_that_equal_everything(functions: Iterable[str], magic: Mapping[str, object] | None = None, *,
                                also: Mapping[str, str] | None = None, zero: tuple[str, ...],
                                full: tuple[str, ...] = ()) -> Variant:
    """The variant whose answers are mocks that equal everything: the checks look at a value's exact type first.

    Each function's solution cell (``<function>_solution``) defines it as :func:`mocking_source` does, with
    ``magic``; ``also`` replaces further cells (a constant, or a cell that defines several functions).
    """
    replacements = {f"{function}_solution": mocking_source([function], magic) for function in functions}
    return Variant("mocks_that_equal_everything", {**replacements, **(also or {})}, full=full, zero=zero)


def requires_finite(name: str, bound: str) -> str:
    """Lines of a function body (indented once) that raise ValueError unless ``name`` is a finite number ``bound``.

    >>> print(requires_finite("epsilon", "> 0"), end="")
        if not (math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    """
    return (f"    if not (math.isfinite({name}) and {name} {bound}):\n"
            f'        raise ValueError(f"{name} must be a finite number {bound}, got {{{name}!r}}")\n')


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


def _source(assignment: str, repo: Path = REPO_ROOT) -> Path:
    (source,) = notebooks_of(repo / "source" / assignment)
    return source


def autograded_tests(assignment: str, repo: Path = REPO_ROOT) -> tuple[str, ...]:
    """The grade ids of the assignment's autograded test cells, in notebook order (read from source/)."""
    return tuple(autograded_points(_source(assignment, repo)))


def written_answers(assignment: str, repo: Path = REPO_ROOT) -> dict[str, float]:
    """``{grade_id: points}`` of the cells a person grades (answers in prose), read from source/."""
    return {
        meta["grade_id"]: float(meta["points"])
        for meta in (cell.metadata.get("nbgrader", {})
                     for cell in nbformat.read(str(_source(assignment, repo)), as_version=4).cells
                     if cell.cell_type != "code")
        if meta.get("grade") or meta.get("task")
    }


def variants_of(assignment: str) -> list[Variant]:
    """The variants declared in ``tests/variant_cases/<assignment>.py`` (none if there is no such file)."""
    try:
        module = importlib.import_module(f"variant_cases.{assignment}")
    except ModuleNotFoundError as error:
        if error.name != f"variant_cases.{assignment}":
            raise
        return []
    return list(module.VARIANTS)


@dataclass
class GradedAssignment:
    """One assignment graded once: the reference, the untouched release and every variant."""

    name: str
    course: Course
    release: Path
    variants: list[Variant]
    seconds_per_submission: float
    _feedback_ready: bool = field(default=False, repr=False)

    def feedback(self, student: str) -> dict[str, str]:
        """``{notebook: feedback page (HTML)}`` of a student, as ``nbgrader generate_feedback`` writes it.

        The first call runs ``generate_feedback`` once for every student of this grading run (no notebook is
        executed again: feedback reads the autograded notebooks and the gradebook); later calls read its pages.
        """
        if not self._feedback_ready:
            self.course.nbgrader("generate_feedback", self.name, "--force")
            self._feedback_ready = True
        folder = self.course.feedback(student, self.name)
        return {page.stem: page.read_text(encoding="utf-8") for page in sorted(folder.glob("*.html"))}

    def autograded(self, student: str) -> dict[str, nbformat.NotebookNode]:
        """``{notebook: autograded notebook}`` of a student (the notebooks as the grading run left them)."""
        return {path.stem: nbformat.read(str(path), as_version=4)
                for path in notebooks_of(self.course.autograded(student, self.name))}

    def scores(self, student: str) -> dict[str, tuple]:
        """``{grade_id: (score, max_score)}`` of a student's autograded cells."""
        (grades,) = self.course.grades(self.name, student).values()
        return {g.grade_id: (g.auto_score, g.max_score) for g in grades if not g.needs_manual_grade}


def grade_assignment(root: Path, assignment: str, variants: list[Variant] | None = None, pipeline: bool = True,
                     repo: Path = REPO_ROOT) -> GradedAssignment:
    """Generate the release and autograde, in one run, the variants (default: :func:`variants_of`) and,
    with ``pipeline``, the reference solution (student ``reference``) and the untouched release (``untouched``)."""
    variants = variants_of(assignment) if variants is None else variants
    course = Course.from_repo(Path(root), [assignment], repo=repo)
    release = course.generate_assignment(assignment)
    source = _source(assignment, repo)
    if pipeline:
        course.submit(assignment, "reference", [source])
        course.submit(assignment, "untouched", notebooks_of(release))
    for variant in variants:
        if pipeline and variant.name in ("reference", "untouched"):
            raise ValueError(f"{assignment}: the variant name {variant.name!r} is taken by the pipeline")
        folder = course.root / "submitted" / variant.name / assignment
        folder.mkdir(parents=True)
        nbformat.write(notebook_with(source, variant.replacements), str(folder / source.name))
    started = time.perf_counter()
    course.autograde(assignment)  # raises, with nbgrader's output, if the run does not complete
    seconds = (time.perf_counter() - started) / max(1, 2 * pipeline + len(variants))
    return GradedAssignment(assignment, course, release, variants, seconds)


def grade_variants(root: Path, assignment: str, variants: list[Variant], repo: Path = REPO_ROOT) -> dict[str, dict[str, tuple]]:
    """Autograde only the given variants of ``assignment``; return ``{variant: {grade_id: (score, max_score)}}``."""
    graded = grade_assignment(root, assignment, variants, pipeline=False, repo=repo)
    return {variant.name: graded.scores(variant.name) for variant in variants}


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
