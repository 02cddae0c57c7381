"""The made-up submissions of the class simulation: kinds of student, and a notebook for each kind."""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from pathlib import Path

import nbformat
import numpy as np

from dpgrader.cells import grade_id_of, is_solution, is_test_cell
from dpgrader.simulation.copying import COPIERS, ENDINGS, honest_answer
from dpgrader.simulation.hostile import ATTACKS

# kind -> (share of submissions, what it is)
KINDS = {
    "correct": (0.34, "a correct answer written their own way (the reference rewritten, dpgrader.simulation.own_way.own_way)"),
    "partial": (0.22, "about half of the exercises solved"),
    "empty": (0.05, "the untouched release"),
    "wrong": (0.07, "every function returns 0"),
    "warnings": (0.05, "correct (their own way), but the functions emit warnings and print to stderr"),
    "messy": (0.05, "correct (their own way), with a test cell deleted, one copy-pasted without metadata, a solution "
                    "duplicated"),
    "delegates": (0.04, "calls dplib's own implementation"),
    "monkeypatch": (0.04, "wrong answers plus rebinding abs, numpy.allclose and check_close"),
    "infinite_loop": (0.03, "correct, with an infinite loop after one definition"),
    "kernel_dies": (0.03, "correct until an os._exit halfway"),
    "corrupted": (0.03, "a truncated .ipynb file"),
    "hostile": (0.06, "the untouched release plus one attack of dpgrader.simulation.hostile (sandboxed: earns 0)"),
    "missing": (0.05, "nothing submitted"),
    # copy detection (dpgrader.similarity, demo/similarity/<assignment>.html)
    "copies_classmate": (0.03, "a classmate's answers, renamed, reformatted and padded with unused statements"),
    "copies_dplib": (0.03, "dplib's own functions pasted in with their helpers, all renamed"),
    "leaked_key": (0.03, "the instructor's reference solution (a leaked key), renamed, reformatted and padded"),
}

STUB = "raise NotImplementedError()"


def student_roster(n: int) -> list[tuple[str, str, str]]:
    """``(student_id, first_name, last_name)`` of ``n`` made-up people (dplib's PII data set)."""
    from dplib.datasets import load_adult_with_pii

    roster, seen = [], set()
    for name in load_adult_with_pii()["Name"]:
        first, _, last = str(name).partition(" ")
        ascii_name = unicodedata.normalize("NFKD", f"{first}_{last}").encode("ascii", "ignore").decode()
        student_id = re.sub(r"[^a-z0-9_]", "", ascii_name.lower().replace(" ", "_"))
        if student_id and student_id not in seen:
            seen.add(student_id)
            roster.append((student_id, first, last))
        if len(roster) == n:
            break
    return roster


def assign_kinds(students: list[str], assignments: list[str], seed: int = 0) -> dict[tuple[str, str], str]:
    """The kind of every (student, assignment): each kind at least once, the rest drawn by share."""
    rng = np.random.default_rng(seed)
    pairs = [(s, a) for s in students for a in assignments]
    order = rng.permutation(len(pairs))
    names = list(KINDS)
    shares = np.array([KINDS[k][0] for k in names])
    drawn = rng.choice(len(names), size=len(pairs), p=shares / shares.sum())
    kinds = {pairs[i]: names[k] for i, k in zip(order, drawn)}
    for position, kind in zip(order, names):  # guarantee coverage
        kinds[pairs[position]] = kind
    return kinds


def _solution_code(source_cell_text: str) -> str:
    return "\n".join(line for line in source_cell_text.split("\n") if "BEGIN SOLUTION" not in line and "END SOLUTION" not in line)


def _defined_names(code: str) -> list[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names


def _wrong(stub: str, reference: str) -> str:
    """The stub with every ``raise NotImplementedError()`` turned into a wrong answer."""
    lines = []
    for line in stub.split("\n"):
        if line.strip() == STUB:
            indent = line[: len(line) - len(line.lstrip())]
            if indent:
                lines.append(f"{indent}return 0")
            else:
                lines += [f"{name} = 0" for name in _defined_names(reference)] or ["pass"]
        else:
            lines.append(line)
    return "\n".join(lines)


def make_submission(kind: str, release: Path, source: Path, rng: np.random.Generator) -> str | None:
    """The text of a made-up ``.ipynb`` of the given kind (None for ``missing``)."""
    if kind == "missing":
        return None
    notebook = nbformat.read(str(release), as_version=4)
    if kind == "empty":
        return nbformat.writes(notebook)
    if kind == "hostile":  # the attack finds its targets from inside the kernel, as a student would
        attack = ATTACKS[int(rng.integers(len(ATTACKS)))]
        cell = nbformat.v4.new_code_cell(attack.code())
        notebook.cells.insert(len(notebook.cells) if attack.last else min(2, len(notebook.cells)), cell)
        return nbformat.writes(notebook)
    reference = {grade_id_of(c): c.source for c in nbformat.read(str(source), as_version=4).cells if grade_id_of(c)}
    solutions = [c for c in notebook.cells if is_solution(c)]
    code_solutions = [c for c in solutions if c.cell_type == "code"]
    solve = set(range(len(code_solutions)))
    if kind == "partial":
        solve = set(rng.choice(len(code_solutions), size=max(1, len(code_solutions) // 2), replace=False).tolist())
    if kind in COPIERS:
        kind = "correct"  # rewritten by dpgrader.simulation.copying.copy_submissions once the whole class exists
    for index, cell in enumerate(code_solutions):
        answer = _solution_code(reference[grade_id_of(cell)])
        if kind in ("wrong", "monkeypatch"):
            cell.source = _wrong(cell.source, answer)
        elif kind == "delegates":
            import dplib

            names = [n for n in _defined_names(answer) if hasattr(dplib, n)]
            cell.source = "\n".join(f"{n} = dplib.{n}" for n in names) if names else cell.source
        elif index in solve:
            cell.source = honest_answer(kind, answer, rng)
    for cell in solutions:
        if cell.cell_type == "markdown" and kind not in ("partial",):
            cell.source = "Differential privacy bounds what any one person's data can change in the output."
    if kind == "monkeypatch" and code_solutions:
        code_solutions[0].source = (
            "import builtins\nimport numpy\nbuiltins.abs = lambda x: 0\nnumpy.allclose = lambda *a, **k: True\n"
            "numpy.isclose = lambda *a, **k: True\ncheck_close = lambda *a, **k: None\n" + code_solutions[0].source
        )
    if kind in ("infinite_loop", "kernel_dies") and code_solutions:
        victim = code_solutions[int(rng.integers(len(code_solutions)))]
        victim.source += ENDINGS[kind]
    if kind == "messy":
        tests = [c for c in notebook.cells if is_test_cell(c)]
        if len(tests) >= 2:
            first, second = rng.choice(len(tests), size=2, replace=False)
            del tests[int(second)].metadata["nbgrader"]  # copy-pasted into a fresh cell
            notebook.cells.remove(tests[int(first)])  # deleted
        if code_solutions:
            position = notebook.cells.index(code_solutions[0])
            duplicate = nbformat.from_dict(json.loads(json.dumps(code_solutions[0])))
            duplicate["id"] = f"copy{int(rng.integers(10**6)):06d}"
            notebook.cells.insert(position + 1, duplicate)
    text = nbformat.writes(notebook, version=4)
    if kind == "corrupted":
        return text[: len(text) // 3]
    return text
