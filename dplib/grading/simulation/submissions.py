"""A class simulation: 30 made-up students hand in every released assignment, and get graded.

    python -m dplib.grading.simulation demo        # what `make demo` runs

builds a course folder (``demo/``) from the repository's ``source/``, hands each student
a made-up submission of every assignment in ``release/`` (correct, partial, empty, wrong,
broken and hostile ones, see :data:`KINDS`), grades the class with
:func:`dplib.grading.classroom.grade_class`, and leaves ``demo/grades.csv``,
``demo/feedback/<student>/<assignment>/``, ``demo/grade_distribution.png`` and a summary:
per assignment, and per kind of submission (which shows the grading does what the
course promises: wrong, delegating and monkeypatching answers earn nothing, broken
notebooks are recorded, everybody else is graded).

Students are the first made-up people of :func:`dplib.datasets.load_adult_with_pii`.
Everything is seeded: the same command gives the same class.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import sys
import time
import unicodedata
from pathlib import Path

import nbformat
import numpy as np

from dplib.grading.course import REPO_ROOT, Course, assignments_in, notebooks_of
from dplib.grading.hostile import ATTACKS

# kind -> (share of submissions, what it is)
KINDS = {
    "correct": (0.34, "the reference solution"),
    "partial": (0.22, "about half of the exercises solved"),
    "empty": (0.05, "the untouched release"),
    "wrong": (0.07, "every function returns 0"),
    "warnings": (0.05, "correct, but the functions emit warnings and print to stderr"),
    "messy": (0.05, "correct, with a test cell deleted, one copy-pasted without metadata, a solution duplicated"),
    "delegates": (0.04, "calls dplib's own implementation"),
    "monkeypatch": (0.04, "wrong answers plus rebinding abs, numpy.allclose and check_close"),
    "infinite_loop": (0.03, "correct, with an infinite loop after one definition"),
    "kernel_dies": (0.03, "correct until an os._exit halfway"),
    "corrupted": (0.03, "a truncated .ipynb file"),
    "hostile": (0.06, "the untouched release plus one attack of dplib.grading.hostile (sandboxed: earns 0)"),
    "missing": (0.05, "nothing submitted"),
    # copy detection (dplib.grading.similarity, demo/similarity/<assignment>.html)
    "copies_classmate": (0.03, "a classmate's answers (written their own way), renamed and reformatted"),
    "copies_dplib": (0.03, "dplib's own functions pasted in, renamed"),
}
MARKER = ".dplib-demo"  # marks a folder this module created (and may delete)
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


def _grade_id(cell) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


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


def _with_warnings(code: str) -> str:
    """Reference code whose function bodies first warn, divide by zero in numpy and print to stderr."""
    out = []
    for line in code.split("\n"):
        out.append(line)
        match = re.match(r"(\s*)def \w+\(.*\):\s*$", line)
        if match:
            indent = match.group(1) + "    "
            out.append(
                f"{indent}import sys, warnings, numpy; warnings.warn('checking my work', UserWarning); "
                f"numpy.log(numpy.zeros(1)); print('debug', file=sys.stderr)"
            )
    # the docstring must stay first for readability only; Python accepts statements before it
    return "\n".join(out)


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
    reference = {_grade_id(c): c.source for c in nbformat.read(str(source), as_version=4).cells if _grade_id(c)}
    solutions = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("solution")]
    code_solutions = [c for c in solutions if c.cell_type == "code"]
    solve = set(range(len(code_solutions)))
    if kind == "partial":
        solve = set(rng.choice(len(code_solutions), size=max(1, len(code_solutions) // 2), replace=False).tolist())
    if kind in ("copies_classmate", "copies_dplib"):
        kind = "correct"  # rewritten by dplib.grading.copying.copy_submissions once the whole class exists
    for index, cell in enumerate(code_solutions):
        answer = _solution_code(reference[_grade_id(cell)])
        if kind in ("wrong", "monkeypatch"):
            cell.source = _wrong(cell.source, answer)
        elif kind == "delegates":
            import dplib

            names = [n for n in _defined_names(answer) if hasattr(dplib, n)]
            cell.source = "\n".join(f"{n} = dplib.{n}" for n in names) if names else cell.source
        elif index in solve:
            cell.source = _with_warnings(answer) if kind == "warnings" else answer
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
        victim.source += "\nwhile True:\n    pass\n" if kind == "infinite_loop" else "\nimport os\nos._exit(1)\n"
    if kind == "messy":
        tests = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"
                 and not c.metadata["nbgrader"].get("solution")]
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


def build_class(target: Path, n_students: int = 30, assignments: list[str] | None = None, seed: int = 0,
                cell_timeout: int | None = 5, repo: Path = REPO_ROOT, progress: bool = True) -> tuple[Course, dict]:
    """A fresh course at ``target`` with every student's submissions; return it and the kinds handed in."""
    from nbgrader.api import Gradebook
    from tqdm.auto import tqdm

    target = Path(target)
    if target.exists():
        if not (target / MARKER).exists() and any(target.iterdir()):
            raise FileExistsError(f"{target} exists and was not made by this simulation: choose another folder")
        shutil.rmtree(target)
    names = assignments or [a for a in assignments_in(repo / "release") if (repo / "source" / a).is_dir()]
    course = Course.from_repo(target, names, repo=repo)
    (course.root / MARKER).write_text("made by python -m dplib.grading.simulation; deleted and rebuilt on every run\n")
    if cell_timeout:
        with open(course.root / "nbgrader_config.py", "a") as config:
            config.write(f"\n# The simulation: a shorter per-cell limit, so its infinite loops cost little.\n"
                         f"c.Execute.timeout = {int(cell_timeout)}\n")
    for name in tqdm(names, desc="releasing assignments", disable=not progress):
        course.generate_assignment(name)
    roster = student_roster(n_students)
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}") as gradebook:
        for student_id, first, last in roster:
            gradebook.update_or_create_student(student_id, first_name=first, last_name=last)
    kinds = assign_kinds([s for s, _, _ in roster], names, seed)
    rng = np.random.default_rng(seed + 1)
    texts = {}  # copiers need their classmate's text (see _copy_submissions)
    for (student, assignment), kind in tqdm(sorted(kinds.items()), desc="writing submissions", disable=not progress):
        for release in notebooks_of(course.root / "release" / assignment):
            text = make_submission(kind, release, repo / "source" / assignment / release.name, rng)
            texts[student, assignment, release.name] = text
            if text is None:
                continue
            folder = course.root / "submitted" / student / assignment
            folder.mkdir(parents=True, exist_ok=True)
            (folder / release.name).write_text(text)
            (folder / "timestamp.txt").write_text("2025-03-01 12:00:00.000000 UTC")
    from dplib.grading.copying import copy_submissions

    copy_submissions(course.root, kinds, texts, np.random.default_rng(seed + 2))
    return course, kinds


def autograded_percent(root: Path) -> dict[tuple[str, str], float]:
    """Per (student, assignment): percent of the *autograded* points earned (written answers left out)."""
    from nbgrader.api import Gradebook

    result = {}
    with Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gradebook:
        for assignment in gradebook.assignments:
            for submission in assignment.submissions:
                earned = maximum = 0.0
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        if grade.cell.cell_type == "code":  # test cells; written answers are markdown
                            earned += grade.auto_score or 0.0
                            maximum += grade.max_score
                result[submission.student.id, assignment.name] = 100 * earned / maximum if maximum else 0.0
    return result


def plot_distribution(rows: list[dict], path: Path) -> Path:
    """Histogram of each student's overall percent, and every assignment's spread; saved as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    totals: dict[str, list[float]] = {}
    per_assignment: dict[str, list[float]] = {}
    for row in rows:
        totals.setdefault(row["student_id"], [0.0, 0.0])
        totals[row["student_id"]][0] += float(row["score"])
        totals[row["student_id"]][1] += float(row["max_score"])
        per_assignment.setdefault(row["assignment"], []).append(float(row["percent"]))
    overall = [100 * s / m for s, m in totals.values() if m]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [1, 1.6]})
    left.hist(overall, bins=np.linspace(0, 100, 11), color="tab:blue", edgecolor="white")
    left.set_xlabel("overall score (% of all points, before manual grading)")
    left.set_ylabel("students")
    left.set_title(f"{len(overall)} students")
    names = sorted(per_assignment)
    right.boxplot([per_assignment[n] for n in names], showfliers=False)
    for i, name in enumerate(names, start=1):
        jitter = np.random.default_rng(i).uniform(-0.15, 0.15, len(per_assignment[name]))
        right.scatter(i + jitter, per_assignment[name], s=10, alpha=0.6, color="tab:orange")
    right.set_xticks(range(1, len(names) + 1), names, rotation=20, ha="right")
    right.set_ylabel("score (%)")
    right.set_ylim(-5, 105)
    right.set_title("per assignment")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def kind_table(kinds: dict, percents: dict, outcomes: dict) -> str:
    """Per kind of submission: count, mean autograded percent, and grading outcomes."""
    lines = [f"{'kind of submission':<16}{'n':>4}{'autograded %':>14}  outcomes   ({'what it is'})"]
    for kind, (_, what) in KINDS.items():
        pairs = [p for p, k in kinds.items() if k == kind]
        if not pairs:
            continue
        values = [percents.get(p, 0.0) for p in pairs]
        counts: dict[str, int] = {}
        for pair in pairs:
            status = outcomes[pair].status if pair in outcomes else "not submitted"
            counts[status] = counts.get(status, 0) + 1
        text = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        lines.append(f"{kind:<16}{len(pairs):>4}{np.mean(values):>14.1f}  {text}   ({what})")
    return "\n".join(lines)


def run(target: Path, n_students: int = 30, workers: int | None = None, seed: int = 0, cell_timeout: int = 5,
        assignments: list[str] | None = None) -> list[dict]:
    """Build the class, grade it, write grades.csv, feedback and the plot, print the summary."""
    from dplib.grading.classroom import export_grades, grade_class, summarize

    started = time.perf_counter()
    course, kinds = build_class(target, n_students, assignments, seed, cell_timeout)
    graded = time.perf_counter()
    outcomes = grade_class(course.root, workers=workers)
    seconds = time.perf_counter() - graded
    rows = export_grades(course.root, course.root / "grades.csv")
    plot = plot_distribution(rows, course.root / "grade_distribution.png")
    percents = autograded_percent(course.root)
    print()
    print(summarize(rows))
    print()
    print(kind_table(kinds, percents, {(o.student, o.assignment): o for o in outcomes}))
    print()
    sandboxed = all(o.sandboxed for o in outcomes)
    print(f"sandbox: {'on (bubblewrap): every kernel saw only its own copy' if sandboxed else 'OFF'}")
    print(f"{len(outcomes)} submission notebooks graded in {seconds:.0f} s "
          f"({seconds / max(1, len(outcomes)):.1f} s each, set-up {graded - started:.0f} s)")
    print(f"grades:   {course.root / 'grades.csv'}")
    print(f"feedback: {course.root / 'feedback'}/<student>/<assignment>/")
    print(f"plot:     {plot}")
    print(f"copies:   {course.root / 'similarity'}/<assignment>.html")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dplib.grading.simulation", description=__doc__.split("\n")[0])
    parser.add_argument("target", type=Path, nargs="?", default=Path("demo"), help="the course folder to create (default: demo)")
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--workers", type=int, default=None, help="grading processes (default: number of cores)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cell-timeout", type=int, default=5,
                        help="per-cell time limit in the simulated course (s; the course's own is 60)")
    parser.add_argument("--assignment", action="append", help="only this assignment (repeatable; default: all released)")
    args = parser.parse_args(argv)
    run(args.target, args.students, args.workers, args.seed, args.cell_timeout, args.assignment)
    return 0


if __name__ == "__main__":
    sys.exit(main())
