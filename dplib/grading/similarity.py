"""Copy detection: solution cells that match dplib's own implementation, or a classmate's cell.

Each solution cell is reduced to a sequence of syntax-tree tokens that forgets what copying
changes cheaply (the method of MOSS, Schleimer, Wilkerson & Aiken, "Winnowing: local
algorithms for document fingerprinting", SIGMOD 2003, applied to syntax trees as JPlag does):

- **names**: every identifier (variables, arguments, function names) becomes ``V``;
  attribute names (``rng.laplace``) and numbers stay, strings become ``S``;
- **layout, comments, docstrings**: gone with the parse (docstrings are dropped);
- **statement order**: the statements of every block are sorted by their own tokens, so
  swapping two independent lines changes nothing.

The token sequence is cut into k-grams (:data:`K` tokens), hashed, and *winnowed* (the
smallest hash of every window of :data:`WINDOW` k-grams is kept, MOSS's guarantee: any
shared run of ``K + WINDOW - 1`` tokens is seen). The similarity of two cells is the
Jaccard index of their fingerprint sets; for dplib, the *containment* of the student's
fingerprints in dplib's (a pasted body sits inside dplib's function with its validation).

**Minimum size.** An exercise whose reference solution has fewer than
:data:`MIN_TOKENS` tokens (a one-line formula such as ``return 1.0 / n``) is never
reported: everybody writes the same line. :func:`minimum_sizes` lists each exercise's size.

**Common sources.** Two cells that both contain the instructor's reference solution nearly
whole (perhaps with lines of their own), or are no closer to each other than to it, are not
reported against each other: both may come from the published solution (and the demo's
honest students hand in the reference), so it says nothing about the two students. Two
copies of the same dplib function are each reported as copying dplib, not as a pair.
"""

from __future__ import annotations

import ast
import hashlib
import html
import inspect
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from dplib.grading.review.cells import _parse, _read, student_cells

K = 10  # tokens per k-gram
WINDOW = 4  # k-grams per winnowing window
MIN_TOKENS = 40  # exercises whose reference solution is shorter are never reported
THRESHOLD = 0.7  # similarity from which a pair is reported
_SKIP = (ast.Load, ast.Store, ast.Del, ast.alias, ast.arguments, ast.keyword, ast.comprehension)


# --- normalizing --------------------------------------------------------------------------------------


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _tokens(node: ast.AST) -> list[str]:
    """Pre-order tokens of a syntax tree, names forgotten, every block's statements sorted."""
    if isinstance(node, (ast.Name, ast.arg)):
        return ["V"]
    if isinstance(node, ast.Constant):
        value = node.value
        return ["S"] if isinstance(value, (str, bytes)) else [f"C:{value!r}"]
    out = [] if isinstance(node, _SKIP) else [type(node).__name__]
    if isinstance(node, ast.Attribute):
        out.append(f".{node.attr}")
    for field, value in ast.iter_fields(node):
        if isinstance(value, list) and value and all(isinstance(v, ast.stmt) for v in value):
            statements = sorted((_tokens(v) for v in value if not _is_docstring(v)), key=" ".join)
            out.append("{")
            for statement in statements:
                out += statement
            out.append("}")
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    out += _tokens(item)
        elif isinstance(value, ast.AST):
            out += _tokens(value)
        elif field == "op":
            out.append(type(value).__name__)
    return out


def normalize(code: str) -> list[str]:
    """The normalized token sequence of a cell (empty if it does not parse)."""
    tree = _parse(code) if isinstance(code, str) else code
    if tree is None:
        return []
    return _tokens(tree)[1:]  # without the Module token


def fingerprints(tokens: list[str], k: int = K, window: int = WINDOW) -> frozenset[int]:
    """Winnowed hashes of the token k-grams (all of them for a sequence shorter than one window)."""
    if not tokens:
        return frozenset()
    grams = [" ".join(tokens[i: i + k]) for i in range(max(1, len(tokens) - k + 1))]
    hashes = [int.from_bytes(hashlib.blake2b(g.encode(), digest_size=8).digest(), "big") for g in grams]
    if len(hashes) <= window:
        return frozenset(hashes)
    return frozenset(min(hashes[i: i + window]) for i in range(len(hashes) - window + 1))


def jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def containment(a: frozenset, b: frozenset) -> float:
    """Share of ``a``'s fingerprints found in ``b``."""
    return len(a & b) / len(a) if a else 0.0


# --- what to compare ------------------------------------------------------------------------------------


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

    def flag(self) -> str:
        """The review flag of ``student`` (``"kind: reason"``)."""
        what = "dplib's implementation" if self.other.startswith("dplib.") else "the submission of"
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

    Both contain the reference solution nearly whole (perhaps with lines of their own), or
    are no closer to each other than to it; or both are copies of dplib's function (each
    reported as such).
    """
    if reference and containment(reference, a) >= threshold and containment(reference, b) >= threshold:
        return True
    if reference and score <= min(jaccard(a, reference), jaccard(b, reference)):
        return True
    return bool(library) and containment(a, library) >= threshold and containment(b, library) >= threshold


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


# --- the report -------------------------------------------------------------------------------------------


def report_html(assignment: str, matches: list[Match], threshold: float = THRESHOLD,
                sizes: dict[str, int] | None = None) -> str:
    """A self-contained HTML page: every reported pair, the two cells side by side (escaped)."""
    rows = []
    shown = set()
    for match in sorted(matches, key=lambda m: (-m.score, m.grade_id, m.student, m.other)):
        key = (match.grade_id, *sorted((match.student, match.other)))
        if key in shown:
            continue
        shown.add(key)
        rows.append(
            f"<section><h2>{html.escape(match.grade_id)}: {html.escape(match.student)} and "
            f"{html.escape(match.other)} <span class=score>similarity {match.score:.2f}</span></h2>"
            f"<div class=pair><div><h3>{html.escape(match.student)}</h3><pre>{html.escape(match.code)}</pre></div>"
            f"<div><h3>{html.escape(match.other)}</h3><pre>{html.escape(match.other_code)}</pre></div></div></section>"
        )
    small = ", ".join(html.escape(n) for n, s in sorted((sizes or {}).items()) if s < MIN_TOKENS)
    return (
        "<!DOCTYPE html><html><head><meta charset=utf-8>"
        f"<title>Similarity report: {html.escape(assignment)}</title><style>"
        "body{font-family:sans-serif;margin:2em}pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:90%}"
        ".pair{display:grid;grid-template-columns:1fr 1fr;gap:1em}.score{color:#a00;font-weight:normal}"
        f"</style></head><body><h1>Similarity report: {html.escape(assignment)}</h1>"
        f"<p>{len(rows)} pair(s) of solution cells with a similarity of at least {threshold:.2f} (winnowed "
        "syntax-tree fingerprints: renaming, layout, comments, docstrings and statement order do not count). "
        "A match is a reason to look, not a verdict. Exercises too small to tell copies apart"
        f"{': ' + small if small else ''} are not compared.</p>"
        + ("".join(rows) or "<p>No pair above the threshold.</p>")
        + "</body></html>"
    )


def write_report(root: Path, assignment: str, target: Path | None = None, **kwargs) -> tuple[Path, list[Match]]:
    """Write ``<root>/similarity/<assignment>.html``; return its path and the matches."""
    root = Path(root)
    matches = course_matches(root, assignment, **kwargs)
    sizes: dict[str, int] = {}
    for source in sorted((root / "source" / assignment).glob("*.ipynb")):
        sizes.update(minimum_sizes(source))
    target = Path(target or root / "similarity" / f"{assignment}.html")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(report_html(assignment, matches, kwargs.get("threshold", THRESHOLD), sizes))
    return target, matches


def copy_flags(matches: list[Match]) -> dict[tuple[str, str], tuple[str, ...]]:
    """``(student, assignment) -> review flags`` of every student in ``matches``."""
    flags: dict[tuple[str, str], list[str]] = {}
    for match in matches:
        flags.setdefault((match.student, match.assignment), []).append(match.flag())
    return {key: tuple(dict.fromkeys(value)) for key, value in flags.items()}


__all__ = ["Match", "normalize", "fingerprints", "find_matches", "course_matches", "minimum_sizes",
           "report_html", "write_report", "copy_flags", "K", "WINDOW", "MIN_TOKENS", "THRESHOLD"]
