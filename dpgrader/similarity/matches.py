"""Which solution cells match dplib's implementation, the instructor's reference or a classmate's
(see :mod:`dpgrader.similarity`; whom a match flags: :mod:`.flags`; dplib's side: :mod:`.dplib_copies`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from pathlib import Path

from dpgrader.course import Course, notebooks_of
from dpgrader.outcomes import Flag
from dpgrader.review.reading import parse_cell, read_notebook, student_cells
from dpgrader.similarity.dplib_copies import library_for
from dpgrader.similarity.winnowing import cell_prints, containment, jaccard

MIN_TOKENS = 40  # exercises whose reference solution is shorter are never reported
THRESHOLD = 0.7  # similarity from which a pair (or a copy of dplib) is reported
BUILT_ON = 0.5  # share of the reference's fingerprints from which a cell counts as built on it
REFERENCE_MIN_TOKENS = 60  # exercises whose reference is shorter are never reported as copies of it
REFERENCE_THRESHOLD = 0.8  # share of the reference's fingerprints in a cell from which it is reported
DPLIB_EVIDENCE = 10  # fingerprints a copy of dplib shares with dplib and not with the reference, at least
#: Fingerprints two cells built on the reference must share beyond it (a few statements of their own).
#: A short exercise leaves independent answers few ways to differ from the reference: honest students of
#: ``make demo`` share up to 16 beyond it (08's totals table, 09's noisy_gradient_descent); every copier of a
#: classmate shares at least 26 on some exercise of each assignment (3 to 64 per exercise).
CLASSMATE_EVIDENCE = 20

#: What a :class:`Match` is with: a classmate's cell, dplib's implementation, the instructor's
#: reference solution; or a submission the comparison could not finish (``UNCHECKED``).
CLASSMATE, DPLIB, REFERENCE, UNCHECKED = "classmate", "dplib", "reference", "unchecked"


def without_solution_markers(code: str) -> str:
    """``code`` without its ``### BEGIN SOLUTION`` and ``### END SOLUTION`` lines (what is between them is kept)."""
    return "\n".join(line for line in code.split("\n") if "### BEGIN SOLUTION" not in line and "### END SOLUTION" not in line)


def solution_cells(notebook, instructor=None) -> dict[str, str]:
    """``grade_id -> code`` of the notebook's code solution cells (solution markers removed).

    With ``instructor``, the cells are those nbgrader grades (:func:`dpgrader.review.reading`),
    and an exercise whose solution cell lost its nbgrader metadata (removed, or its ``grade_id``
    edited: nbgrader grades the cell as ordinary code, and the tests still call its functions) is
    the last cell without metadata that defines a name the instructor's solution cell defines.
    """
    instructor = read_notebook(instructor) if instructor is not None else None  # read once
    cells = student_cells(notebook, instructor)
    found = {name: without_solution_markers(code) for name, code, solution in cells if solution}
    if instructor is None:
        return found
    taken: set[str] = set()
    for grade_id, reference in solution_cells(instructor).items():
        wanted = _top_level_names(reference)
        if grade_id in found or not wanted:
            continue
        for name, code, _ in reversed(cells):
            if name.startswith("cell ") and name not in taken and wanted & _safe_names(code):
                found[grade_id] = without_solution_markers(code)
                taken.add(name)
                break
    return found


def _safe_names(code: str) -> frozenset[str]:
    """:func:`_top_level_names`, or none for a cell the parser gives up on (it is not taken for an exercise)."""
    try:
        return _top_level_names(code)
    except Exception:  # noqa: BLE001 -- e.g. RecursionError: such a cell is reported where it is compared
        return frozenset()


@lru_cache(maxsize=4096)  # a class hands in many identical cells; the names are a frozenset
def _top_level_names(code: str) -> frozenset[str]:
    """Names a cell defines at its top level (the names the tests call)."""
    tree = parse_cell(code)
    names = set()
    for node in tree.body if tree else []:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return frozenset(names)


@lru_cache(maxsize=4096)
def _read_names(code: str) -> frozenset[str]:
    """Names a cell reads (so a helper another cell calls is not taken for padding)."""
    tree = parse_cell(code)
    return frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)) \
        if tree else frozenset()


def minimum_sizes(source) -> dict[str, int]:
    """``grade_id -> normalized tokens`` of the reference solution of every exercise of ``source``.

    Exercises below :data:`MIN_TOKENS` are never reported as copies; below
    :data:`REFERENCE_MIN_TOKENS`, never as copies of the reference.
    """
    return {name: cell_prints(code, _top_level_names(code)).tokens for name, code in solution_cells(source).items()}


@dataclass(frozen=True)
class Match:
    """A solution cell that matches another submission's, dplib's implementation or the instructor's reference.

    ``kind`` is :data:`CLASSMATE` (``other`` is a student id), :data:`DPLIB` (``other`` is
    ``dplib.<function>``), :data:`REFERENCE` (``other`` is ``"reference"``) or
    :data:`UNCHECKED` (the comparison of ``student``'s cell ``grade_id`` could not be made;
    ``other`` says why); ``score`` is in [0, 1].
    """

    assignment: str
    grade_id: str
    student: str
    other: str
    score: float
    code: str
    other_code: str
    kind: str = CLASSMATE

    def flag(self, earlier: bool = False) -> Flag:
        """The review flag of ``student``; ``earlier``: the other handed in first.

        A classmate's name is in :attr:`~dpgrader.outcomes.Flag.reason` (the instructor's view), never in
        its :attr:`~dpgrader.outcomes.Flag.anonymous_reason` (formgrader's comment, which a student may see).
        """
        similarity = f"(similarity {self.score:.2f})"
        if self.kind == DPLIB:
            return Flag("copy", f"{self.grade_id} matches dplib's implementation {self.other} {similarity}", self.grade_id)
        if self.kind == REFERENCE:
            return Flag("copy", f"{self.grade_id} matches the instructor's reference solution {similarity}", self.grade_id)
        if self.kind == UNCHECKED:
            return Flag("copy check", f"could not compare {self.grade_id or 'this notebook'} ({self.other}): a person "
                                      "must compare it", self.grade_id)
        named = "the earlier submission of" if earlier else "the submission of"
        unnamed = "an earlier submission" if earlier else "another submission"
        return Flag("copy", f"{self.grade_id} matches {named} {self.other} {similarity}", self.grade_id,
                    anonymous_reason=f"{self.grade_id} matches {unnamed} {similarity}")


def _unchecked(assignment: str, grade_id: str, student: str, error: BaseException, code: str = "") -> Match:
    message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    message = message if len(message) <= 160 else message[:157] + "..."
    return Match(assignment, grade_id, student, message, 0.0, code, "", UNCHECKED)


def find_matches(submissions: dict[str, object], source, assignment: str = "", threshold: float = THRESHOLD,
                 min_tokens: int = MIN_TOKENS, reference_threshold: float = REFERENCE_THRESHOLD,
                 reference_min_tokens: int = REFERENCE_MIN_TOKENS) -> list[Match]:
    """Pairs of solution cells above ``threshold``, and cells that copy dplib's implementation or the reference.

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
    reference_threshold, reference_min_tokens : float, int
        A cell holding at least ``reference_threshold`` of the reference's fingerprints, on an
        exercise whose reference has at least ``reference_min_tokens`` tokens, is a copy of it.

    A submission (or one of its cells) that cannot be compared gives an :data:`UNCHECKED`
    match with the reason, never silence. Errors in the instructor's notebook or in dplib
    propagate: the whole comparison could not be made.
    """
    source = read_notebook(source)  # read once; an unreadable instructor's notebook propagates
    reference_code = solution_cells(source)
    exported = {name: _top_level_names(code) for name, code in reference_code.items()}
    reference_prints = {name: cell_prints(code, exported[name]) for name, code in reference_code.items()}
    references = {name: prints.fingerprints for name, prints in reference_prints.items()}
    reference_units = {name: prints.statement_fingerprints for name, prints in reference_prints.items()}
    sizes = minimum_sizes(source)
    matches: list[Match] = []
    cells: dict[str, dict[str, tuple[str, frozenset]]] = {}
    units: dict[tuple[str, str], frozenset] = {}
    for student, notebook in submissions.items():
        try:
            notebook = read_notebook(notebook)
            found = solution_cells(notebook, source)
            everything = {name: code for name, code, _ in student_cells(notebook, source)}
        except Exception as error:  # noqa: BLE001 -- an UNCHECKED match, never dropped (fail closed)
            matches.append(_unchecked(assignment, "", student, error))
            continue
        cells[student] = {}
        read: dict[str, frozenset[str]] = {}
        for name, code in everything.items():
            try:
                read[name] = _read_names(code)
            except Exception:  # noqa: BLE001 -- a cell too deep to parse reads nothing we know of; if it is a
                read[name] = frozenset()  # solution cell, it is reported UNCHECKED below
        for grade_id, code in found.items():
            if sizes.get(grade_id, 0) < min_tokens:
                continue
            try:
                elsewhere = frozenset().union(*[names for n, names in read.items() if n != grade_id])
                names = exported.get(grade_id, frozenset()) | elsewhere
                prints = cell_prints(code, names)
                if prints.tokens >= min_tokens:
                    cells[student][grade_id] = (code, prints.fingerprints)
                    units[student, grade_id] = prints.statement_fingerprints
            except Exception as error:  # noqa: BLE001 -- e.g. RecursionError in the parser: UNCHECKED
                matches.append(_unchecked(assignment, grade_id, student, error, code))
    libraries = {grade_id: library_for(code, reference_code.get(grade_id, "")) for grade_id, code in reference_code.items()}
    for student in sorted(cells):
        for grade_id, (code, prints) in sorted(cells[student].items()):
            reference = references.get(grade_id, frozenset())
            if sizes.get(grade_id, 0) >= reference_min_tokens:
                score = containment(reference, prints)
                if score >= reference_threshold:
                    matches.append(Match(assignment, grade_id, student, REFERENCE, round(score, 3), code,
                                         reference_code[grade_id], REFERENCE))
                    continue
            library = libraries.get(grade_id) or library_for(code, "")
            if library is None:
                continue
            name, library_code, library_prints, library_units = library
            # in sequence (a pasted body) or statement by statement (helpers inlined or split off)
            score = max(_dplib_score(prints, library_prints, reference),
                        _dplib_score(units[student, grade_id], library_units, reference_units.get(grade_id, frozenset())))
            if score >= threshold:
                matches.append(Match(assignment, grade_id, student, name, round(score, 3), code, library_code, DPLIB))
    for first, second in combinations(sorted(cells), 2):
        for grade_id in sorted(set(cells[first]) & set(cells[second])):
            (code_a, a), (code_b, b) = cells[first][grade_id], cells[second][grade_id]
            score = jaccard(a, b)
            library = libraries.get(grade_id)
            if score >= threshold and not explained_by_common_source(a, b, references.get(grade_id, frozenset()),
                                                         library[2] if library else frozenset(), score, threshold):
                matches.append(Match(assignment, grade_id, first, second, round(score, 3), code_a, code_b))
                matches.append(Match(assignment, grade_id, second, first, round(score, 3), code_b, code_a))
    return matches


def _dplib_score(mine: frozenset, library: frozenset, reference: frozenset) -> float:
    """How much of a cell is dplib's: the share of its fingerprints in dplib's, if that is more than its share in
    the reference and at least :data:`DPLIB_EVIDENCE` of them are dplib's and not the reference's; else 0.

    The reference solutions are close to dplib's functions (they compute the same thing):
    an honest answer that drifts from the reference shares a few lines with dplib by chance
    (at most 6 fingerprints on the right-but-different answers of ``tests/variant_cases`` and
    the honest students of ``make demo``); a copy of dplib brings dozens (a pasted
    ``laplace_mech`` with its helpers 105, inlined 25).
    """
    score = containment(mine, library)
    return score if score > containment(mine, reference) and len((mine & library) - reference) >= DPLIB_EVIDENCE else 0.0


def explained_by_common_source(a: frozenset, b: frozenset, reference: frozenset, library: frozenset, score: float,
                                threshold: float) -> bool:
    """Whether what two cells share is explained by a source both had: the reference solution or dplib.

    Both are copies of dplib's function (each reported as such); or both are built on the
    reference and what each added to it is not alike, or too little to tell (fewer than
    :data:`CLASSMATE_EVIDENCE` fingerprints; copies of the reference itself are reported as
    such); or they are no closer to each other than to the reference.
    """
    if library and containment(a, library) >= threshold and containment(b, library) >= threshold:
        return True
    if reference and containment(reference, a) >= BUILT_ON and containment(reference, b) >= BUILT_ON:
        own_a, own_b = a - reference, b - reference
        return jaccard(own_a, own_b) < threshold or len(own_a & own_b) < CLASSMATE_EVIDENCE
    return bool(reference) and score <= min(jaccard(a, reference), jaccard(b, reference))


def course_matches(root: Path | Course, assignment: str, **kwargs) -> list[Match]:
    """:func:`find_matches` over every ``submitted/<student>/<assignment>/*.ipynb`` of a course folder.

    A notebook nbformat cannot read (:func:`dpgrader.intake.read_notebook`) is left out: the grader
    reports it as unreadable. Every other one is compared as nbgrader grades it (format 4).
    """
    course = root if isinstance(root, Course) else Course(root)
    matches = []
    for source in notebooks_of(course.source(assignment)):
        submissions = {p.parent.parent.name: p for p in sorted(course.submitted().glob(f"*/{assignment}/{source.name}"))}
        readable = {}
        for student, path in submissions.items():
            try:
                readable[student] = read_notebook(path)
            except (OSError, ValueError):  # not a file, or UnreadableNotebook: the grader reports it
                continue
        matches += find_matches(readable, source, assignment, **kwargs)
    return matches


