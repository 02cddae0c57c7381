"""Honest and copied answers for the class simulation (``make demo``), to show what copy detection finds.

Honest students write their own code (:func:`~dpgrader.simulation.own_way.own_way` rewrites the
reference solution, the computation unchanged). :func:`copy_submissions` then makes the copiers, once every student
of the simulated class has a submission:

- a ``copies_classmate`` student takes the submission of one honest classmate (kind
  ``correct``) and disguises it (:func:`disguise`: local names changed, comments and blank
  lines added, layout redone, statements whose result nothing uses added, :func:`pad`);
- a ``copies_dplib`` student pastes dplib's own function of the same name into each exercise
  with every dplib helper it calls (``require_epsilon``, ``laplace_noise``, ...), all
  renamed (:func:`paste_dplib`): no ``import`` of dplib is left for the review to see;
- a ``leaked_key`` student hands in the instructor's reference solution, disguised the same way.

:mod:`dpgrader.similarity` must then report exactly those students, with their sources.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import json
import re
from datetime import timedelta
from pathlib import Path

import numpy as np

from dpgrader.cells import cell_source, grade_id_of, is_solution
from dpgrader.course import Course, format_timestamp
from dpgrader.simulation.own_way import own_way

OWN_WORK = ("correct", "partial", "warnings", "messy", "infinite_loop", "kernel_dies")
#: What the ``infinite_loop`` and ``kernel_dies`` kinds append to one of their answers.
ENDINGS = {"infinite_loop": "\nwhile True:\n    pass\n", "kernel_dies": "\nimport os\nos._exit(1)\n"}


def with_warnings(code: str, rng: np.random.Generator) -> str:
    """Code whose function bodies first warn, divide by zero in numpy and print to stderr.

    Each student's debugging lines carry numbers of their own, as real ones would.
    """
    out = []
    for line in code.split("\n"):
        out.append(line)
        match = re.match(r"(\s*)def \w+\(.*\):\s*$", line)
        if match:
            indent = match.group(1) + "    "
            n = int(rng.integers(2, 10**6))
            out.append(
                f"{indent}import sys, warnings, numpy; warnings.warn('checking my work', UserWarning, stacklevel={n % 3 + 1}); "
                f"numpy.log(numpy.zeros({n % 97 + 1})); print('debug', {n}, file=sys.stderr)"
            )
    return "\n".join(out)


def honest_answer(kind: str, answer: str, rng: np.random.Generator, rewrite: bool = True) -> str:
    """An honest student's answer of the given kind: the reference written their own way (``rewrite``, else as it
    is), with debugging lines for ``warnings``."""
    code = own_way(answer, rng) if rewrite else answer
    return with_warnings(code, rng) if kind == "warnings" else code


def _locals(function: ast.FunctionDef) -> set[str]:
    """Names a function assigns (not its parameters: tests call them by keyword)."""
    parameters = {a.arg for a in function.args.args + function.args.kwonlyargs + function.args.posonlyargs}
    assigned = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return assigned - parameters


def _renamed(tree: ast.Module, rng: np.random.Generator) -> ast.Module:
    styles = ("{}_value", "my_{}", "{}2", "tmp_{}")
    for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        mapping = {name: styles[int(rng.integers(len(styles)))].format(name) for name in sorted(_locals(function))}
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and node.id in mapping:
                node.id = mapping[node.id]
    return tree


def pad(tree: ast.Module, rng: np.random.Generator) -> ast.Module:
    """``tree`` with statements whose result nothing uses added to every function: the same program, more code.

    A bare ``x is None``, ``pass``, a string, ``note = type(x).__name__`` with ``note``
    never read, ``seen = []; seen.append(x)`` with ``seen`` never read.
    """
    counter = iter(range(1, 10**6))
    for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        parameters = [a.arg for a in function.args.args] or ["None"]
        chosen = parameters[int(rng.integers(len(parameters)))]
        k = next(counter)
        menu = [
            f"{chosen} is None",
            "pass",
            '"""The inputs are checked below."""',
            f"note_{k} = type({chosen}).__name__",
            f"seen_{k} = []\nseen_{k}.append({chosen} is None)",
        ]
        picks = rng.choice(len(menu), size=int(rng.integers(2, len(menu) + 1)), replace=False)
        first = 1 if function.body and isinstance(function.body[0], ast.Expr) and isinstance(
            function.body[0].value, ast.Constant) else 0
        for pick in sorted(picks.tolist(), reverse=True):
            position = int(rng.integers(first, len(function.body) + 1))
            function.body[position:position] = ast.parse(menu[pick]).body
    return tree


def disguise(code: str, rng: np.random.Generator) -> str:
    """A copied cell made to look different: local names changed, padding added (:func:`pad`), comments
    and blank lines added, layout redone."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    lines = ast.unparse(pad(_renamed(tree, rng), rng)).split("\n")
    out = ["# my solution"]
    for line in lines:
        stripped = line.strip()
        if stripped.startswith(("if ", "for ", "return ")) and rng.random() < 0.7:
            out.append(line[: len(line) - len(line.lstrip())] + "# " + stripped.split(" ")[0] + " step")
        out.append(line)
        if stripped.endswith(":") is False and rng.random() < 0.2:
            out.append("")
    return "\n".join(out)


def _without_docstring(function: ast.FunctionDef) -> ast.FunctionDef:
    if function.body and isinstance(function.body[0], ast.Expr) and isinstance(function.body[0].value, ast.Constant):
        function.body = function.body[1:] or [ast.Pass()]
    function.returns = None
    for argument in ast.walk(function.args):
        if isinstance(argument, ast.arg):
            argument.annotation = None
    return function


def paste_dplib(code: str, rng: np.random.Generator) -> str:
    """Each function of the cell replaced by dplib's own, pasted with every dplib helper it calls, all renamed.

    The helpers (``require_epsilon``, ``laplace_noise``, ...) become functions of the cell
    with made-up names; the modules they use are imported; nothing is imported from dplib.
    """
    from dpgrader.similarity import dplib_functions

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    pieces, imports = [], {}
    for node in tree.body:
        functions = dplib_functions(node.name) if isinstance(node, ast.FunctionDef) else {}
        if not functions:
            pieces.append(node)
            continue
        helpers = {key.rsplit(".", 1)[1]: f"helper_{int(rng.integers(10**4))}_{i}" for i, key in enumerate(functions)}
        helpers[node.name] = node.name
        for key, text in functions.items():
            module, name = key.rsplit(".", 1)
            function = _without_docstring(ast.parse(text).body[0])
            namespace = vars(importlib.import_module(module))
            for used in sorted({n.id for n in ast.walk(function) if isinstance(n, ast.Name)} - set(helpers)):
                value = namespace.get(used, builtins.__dict__.get(used))
                if inspect.ismodule(value):
                    imports[used] = f"import {value.__name__}" + (f" as {used}" if used != value.__name__ else "")
                elif used in namespace and not inspect.isfunction(value):
                    imports[used] = f"{used} = {value!r}" if _is_literal(value) else f"from {module} import {used}"
            for inner in ast.walk(function):
                if isinstance(inner, ast.Name) and inner.id in helpers:
                    inner.id = helpers[inner.id]
            function.name = helpers[name]
            if name == node.name:
                function.args = node.args  # the exercise's signature, as released
            pieces.append(function)
    header = [line for _, line in sorted(imports.items())]
    return "\n".join(header + [""] + [ast.unparse(_renamed(ast.Module([p], []), rng)) for p in pieces])


def _is_literal(value) -> bool:
    try:
        return ast.literal_eval(repr(value)) == value
    except (ValueError, SyntaxError, TypeError):
        return False


def _solution_cells(notebook: dict) -> list[dict]:
    return [c for c in notebook.get("cells", []) if c.get("cell_type") == "code" and is_solution(c)]


def _hand_in_after(author: Path, copier: Path, delay: timedelta = timedelta(hours=2)) -> None:
    """The copier hands in ``delay`` after the author (their ``timestamp.txt``), as one who copies finished work."""
    from nbgrader.utils import parse_utc

    stamp = author / "timestamp.txt"
    if stamp.exists():
        (copier / "timestamp.txt").write_text(format_timestamp(parse_utc(stamp.read_text().strip()) + delay))


COPIERS = ("copies_classmate", "copies_dplib", "leaked_key")
#: How far below the detection thresholds an honest student's answer is drawn (see :func:`independent_answers`).
MARGIN = 0.1
#: How many times an answer is drawn again at most.
ATTEMPTS = 40


def independent_answers(root: Path, kinds: dict, texts: dict, rng: np.random.Generator,
                        references: dict | None = None) -> dict[tuple[str, str, str], int]:
    """Draw again the answers of honest students that came out like the reference or an earlier classmate's.

    :func:`own_way` draws from a handful of rewrites: on a short exercise two students can
    draw the same ones, which independent students, each with their own style and API
    choices, do not do on exercises long enough to compare (the right-but-different answers
    of ``tests/variant_cases`` share at most 8% of their fingerprints with one another, and at
    most 44% of the reference's). So an answer of an ``OWN_WORK`` student that copy detection
    (:mod:`dpgrader.similarity`, with thresholds :data:`MARGIN` lower) would report against the
    reference or an earlier classmate is drawn again, at most :data:`ATTEMPTS` times. An
    exercise too short for that many ways of writing it (below
    :data:`~dpgrader.similarity.REFERENCE_MIN_TOKENS`) is then answered with the reference, the
    answer independent students converge on there. Writes the notebooks back; returns
    ``{(student, assignment, grade_id): draws}`` of the answers drawn again (``-1``: the reference).
    """
    from dpgrader import similarity
    from dpgrader.similarity.matches import explained_by_common_source

    redrawn: dict[tuple[str, str, str], int] = {}
    groups: dict[tuple[str, str], list[str]] = {}
    for (student, assignment, name), text in sorted(texts.items()):
        if text is not None and kinds[student, assignment] in OWN_WORK:
            groups.setdefault((assignment, name), []).append(student)
    for (assignment, name), students in sorted(groups.items()):
        source = Path((references or {}).get((assignment, name), Course(root).source(assignment) / name))
        key = similarity.solution_cells(source)
        sizes = similarity.minimum_sizes(source)
        exported = {g: frozenset(_top_names(code)) for g, code in key.items()}
        reference = {g: similarity.cell_fingerprints(code, exported[g]) for g, code in key.items()}
        earlier: dict[str, list[frozenset]] = {}

        def alike(grade_id: str, prints: frozenset) -> bool:
            ref = reference[grade_id]
            if sizes[grade_id] >= similarity.REFERENCE_MIN_TOKENS and similarity.containment(
                    ref, prints) >= similarity.REFERENCE_THRESHOLD - MARGIN:
                return True
            threshold = similarity.THRESHOLD - MARGIN
            return any(similarity.jaccard(prints, other) >= threshold and not explained_by_common_source(
                prints, other, ref, frozenset(), similarity.jaccard(prints, other), threshold) for other in earlier.get(grade_id, []))

        for student in students:
            kind, notebook = kinds[student, assignment], json.loads(texts[student, assignment, name])
            last = {grade_id_of(c): c for c in _solution_cells(notebook)}
            changed = False
            for grade_id, cell in sorted(last.items()):
                if grade_id not in key or sizes.get(grade_id, 0) < similarity.MIN_TOKENS or "NotImplementedError" in cell_source(cell):
                    continue
                ending = next((e for e in ENDINGS.values() if cell_source(cell).endswith(e)), "")
                draws = 0
                while alike(grade_id, similarity.cell_fingerprints(cell_source(cell), exported[grade_id])):
                    if draws == ATTEMPTS:
                        if sizes[grade_id] < similarity.REFERENCE_MIN_TOKENS:
                            cell["source"], draws = honest_answer(kind, key[grade_id], rng, rewrite=False) + ending, -1
                        break
                    draws += 1
                    cell["source"] = honest_answer(kind, key[grade_id], rng) + ending
                if draws:
                    redrawn[student, assignment, grade_id], changed = draws, True
                earlier.setdefault(grade_id, []).append(similarity.cell_fingerprints(cell_source(cell), exported[grade_id]))
            if changed:
                texts[student, assignment, name] = json.dumps(notebook)
                (Course(root).submitted(student, assignment) / name).write_text(json.dumps(notebook, indent=1))
    return redrawn


def _top_names(code: str) -> set[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))} | {
        t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}


def copy_submissions(root: Path, kinds: dict, texts: dict, rng: np.random.Generator,
                     references: dict | None = None) -> dict[tuple[str, str], str]:
    """Rewrite the copiers' submissions in ``root/submitted``; return ``{(copier, assignment): source}``.

    First, honest answers that came out alike are drawn again (:func:`independent_answers`).

    ``kinds`` maps ``(student, assignment)`` to a kind of :data:`dpgrader.simulation.KINDS`;
    ``texts`` maps ``(student, assignment, notebook name)`` to the notebook text already written.
    The source is a classmate's id, ``"dplib"`` or ``"reference"``. ``references`` maps
    ``(assignment, notebook name)`` to the source notebook (default: ``root/source/...``).
    A ``copies_classmate`` student with no honest classmate left to copy keeps their own answers.
    """
    from dpgrader.similarity.matches import without_solution_markers

    course = Course(root)
    independent_answers(course.root, kinds, texts, rng, references)
    sources: dict[tuple[str, str], str] = {}
    for (student, assignment, name), text in sorted(texts.items()):
        kind = kinds[student, assignment]
        if text is None or kind not in COPIERS:
            continue
        notebook = json.loads(text)
        if kind == "copies_dplib":
            for cell in _solution_cells(notebook):
                cell["source"] = paste_dplib(cell_source(cell), rng)
            sources[student, assignment] = "dplib"
        elif kind == "leaked_key":
            source = (references or {}).get((assignment, name), course.source(assignment) / name)
            key = {grade_id_of(c): cell_source(c) for c in _solution_cells(json.loads(Path(source).read_text()))}
            for cell in _solution_cells(notebook):
                answer = key.get(grade_id_of(cell))
                if answer is not None:
                    cell["source"] = disguise(without_solution_markers(answer), rng)
            sources[student, assignment] = "reference"
        else:
            taken = set(sources.values())
            honest = sorted(s for (s, a), k in kinds.items() if a == assignment and k == "correct" and s not in taken
                            and texts.get((s, a, name)))
            if not honest:
                continue
            author = honest[int(rng.integers(len(honest)))]
            notebook = json.loads(texts[author, assignment, name])
            for cell in _solution_cells(notebook):
                cell["source"] = disguise(cell_source(cell), rng)
            sources[student, assignment] = author
            _hand_in_after(course.submitted(author, assignment), course.submitted(student, assignment))
        (course.submitted(student, assignment) / name).write_text(json.dumps(notebook, indent=1))
    return sources


__all__ = ["own_way", "honest_answer", "with_warnings", "independent_answers", "disguise", "pad", "paste_dplib",
           "copy_submissions", "COPIERS", "OWN_WORK", "ENDINGS"]
