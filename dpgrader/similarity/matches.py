"""Which solution cells match dplib's implementation or a classmate's, and whom to flag (see :mod:`dpgrader.similarity`)."""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from datetime import datetime
from itertools import combinations
from pathlib import Path

from dpgrader.review.cells import _parse, _read, student_cells
from dpgrader.similarity.fingerprints import containment, fingerprints, jaccard, normalize

MIN_TOKENS = 40  # exercises whose reference solution is shorter are never reported
THRESHOLD = 0.7  # similarity from which a pair is reported
BUILT_ON = 0.5  # share of the reference's fingerprints from which a cell counts as built on it


def solution_cells(notebook, instructor=None) -> dict[str, str]:
    """``grade_id -> code`` of the notebook's code solution cells (solution markers removed)."""
    return {
        name: "\n".join(line for line in code.split("\n") if "### BEGIN SOLUTION" not in line and "### END SOLUTION" not in line)
        for name, code, solution in student_cells(notebook, instructor) if solution
    }


def _defined_functions(code: str) -> list[str]:
    tree = _parse(code)
    return [n.name for n in (tree.body if tree else []) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def dplib_source(code: str) -> tuple[str, str] | None:
    """``(name, source)`` of the dplib function a solution cell implements, or None."""
    import dplib

    for name in _defined_functions(code):
        function = getattr(dplib, name, None)
        if inspect.isfunction(function):
            try:
                return f"dplib.{name}", inspect.getsource(function)
            except (OSError, TypeError):
                continue
    return None


def minimum_sizes(source) -> dict[str, int]:
    """``grade_id -> normalized tokens`` of the reference solution of every exercise of ``source``.

    Exercises below :data:`MIN_TOKENS` are never reported as copies.
    """
    return {name: len(normalize(code)) for name, code in solution_cells(source).items()}


@dataclass(frozen=True)
class Match:
    """A solution cell that matches another submission's, or dplib's implementation.

    ``other`` is a student id, or ``dplib.<function>``; ``score`` is in [0, 1].
    """

    assignment: str
    grade_id: str
    student: str
    other: str
    score: float
    code: str
    other_code: str

    def flag(self, earlier: bool = False) -> str:
        """The review flag of ``student`` (``"kind: reason"``); ``earlier``: the other handed in first."""
        if self.other.startswith("dplib."):
            return f"copy: {self.grade_id} matches dplib's implementation {self.other} (similarity {self.score:.2f})"
        what = "the earlier submission of" if earlier else "the submission of"
        return f"copy: {self.grade_id} matches {what} {self.other} (similarity {self.score:.2f})"


def find_matches(submissions: dict[str, object], source, assignment: str = "", threshold: float = THRESHOLD,
                 min_tokens: int = MIN_TOKENS) -> list[Match]:
    """Pairs of solution cells above ``threshold``, and cells that copy dplib's implementation.

    Parameters
    ----------
    submissions : dict
        ``student -> notebook`` (path, dict or nbformat node) of one assignment notebook.
    source : path or notebook
        The instructor's source notebook (reference solutions, read-only cells).
    threshold : float
        Jaccard similarity (classmates) or containment (dplib) from which a cell is reported.
    min_tokens : int
        Exercises whose reference solution has fewer normalized tokens are skipped.
    """
    references = {name: fingerprints(normalize(code)) for name, code in solution_cells(source).items()}
    sizes = minimum_sizes(source)
    cells: dict[str, dict[str, tuple[str, frozenset]]] = {}
    for student, notebook in submissions.items():
        try:
            found = solution_cells(notebook, source)
        except Exception:  # unreadable: the grader reports it
            continue
        cells[student] = {name: (code, fingerprints(normalize(code))) for name, code in found.items()
                          if sizes.get(name, 0) >= min_tokens and len(normalize(code)) >= min_tokens}
    matches = []
    dplib_prints: dict[str, tuple[str, str, frozenset]] = {}
    for student in sorted(cells):
        for grade_id, (code, prints) in sorted(cells[student].items()):
            if grade_id not in dplib_prints:
                found = dplib_source(code) or dplib_source(solution_cells(source).get(grade_id, ""))
                dplib_prints[grade_id] = (found[0], found[1], fingerprints(normalize(found[1]))) if found else None
            if dplib_prints[grade_id] is None:
                continue
            name, library_code, library = dplib_prints[grade_id]
            score = containment(prints, library)
            if score >= threshold and score > containment(prints, references.get(grade_id, frozenset())):
                matches.append(Match(assignment, grade_id, student, name, round(score, 3), code, library_code))
    for first, second in combinations(sorted(cells), 2):
        for grade_id in sorted(set(cells[first]) & set(cells[second])):
            (code_a, a), (code_b, b) = cells[first][grade_id], cells[second][grade_id]
            score = jaccard(a, b)
            if score >= threshold and not _common_source(a, b, references.get(grade_id, frozenset()),
                                                         (dplib_prints.get(grade_id) or (None, None, frozenset()))[2],
                                                         score, threshold):
                matches.append(Match(assignment, grade_id, first, second, round(score, 3), code_a, code_b))
                matches.append(Match(assignment, grade_id, second, first, round(score, 3), code_b, code_a))
    return matches


def _common_source(a: frozenset, b: frozenset, reference: frozenset, library: frozenset, score: float,
                   threshold: float) -> bool:
    """Whether what two cells share is explained by a source both had: the reference solution or dplib.

    Both are copies of dplib's function (each reported as such); or both are built on the
    reference and what each added to it is not alike; or they are no closer to each other than
    to the reference.
    """
    if library and containment(a, library) >= threshold and containment(b, library) >= threshold:
        return True
    if reference and containment(reference, a) >= BUILT_ON and containment(reference, b) >= BUILT_ON:
        return jaccard(a - reference, b - reference) < threshold
    return bool(reference) and score <= min(jaccard(a, reference), jaccard(b, reference))


def course_matches(root: Path, assignment: str, **kwargs) -> list[Match]:
    """:func:`find_matches` over every ``submitted/<student>/<assignment>/*.ipynb`` of a course folder."""
    root = Path(root)
    matches = []
    for source in sorted((root / "source" / assignment).glob("*.ipynb")):
        submissions = {p.parent.parent.name: p for p in sorted((root / "submitted").glob(f"*/{assignment}/{source.name}"))}
        readable = {}
        for student, path in submissions.items():
            try:
                readable[student] = _read(path)
            except Exception:
                continue
        matches += find_matches(readable, source, assignment, **kwargs)
    return matches


def submission_times(root: Path, assignment: str) -> dict[str, datetime]:
    """When each student handed in ``assignment``, from nbgrader's ``submitted/<student>/<assignment>/timestamp.txt``."""
    from nbgrader.utils import parse_utc

    times = {}
    for stamp in sorted(Path(root).glob(f"submitted/*/{assignment}/timestamp.txt")):
        try:
            times[stamp.parent.parent.name] = parse_utc(stamp.read_text().strip())
        except (OSError, ValueError, TypeError, OverflowError):
            continue  # no usable time: the pair is flagged on both sides
    return times


def copy_flags(matches: list[Match], submitted_at: dict[str, datetime] | None = None) -> dict[tuple[str, str], tuple[str, ...]]:
    """``(student, assignment) -> review flags`` of the students in ``matches``.

    A pair of classmates flags only the one who handed in later when ``submitted_at`` (see
    :func:`submission_times`) tells the two apart; a match with dplib always flags the student.
    """
    times = submitted_at or {}
    flags: dict[tuple[str, str], list[str]] = {}
    for match in matches:
        first = None if match.other.startswith("dplib.") else _handed_in_first(match.student, match.other, times)
        if first == match.student:
            continue  # handed in first: likely the source; the pair is in the report
        flags.setdefault((match.student, match.assignment), []).append(match.flag(earlier=first == match.other))
    return {key: tuple(dict.fromkeys(value)) for key, value in flags.items()}


def _handed_in_first(student: str, other: str, times: dict[str, datetime]) -> str | None:
    """Which of two students handed in first, or None if the times do not tell."""
    mine, theirs = times.get(student), times.get(other)
    if mine is None or theirs is None or mine == theirs:
        return None
    return student if mine < theirs else other
