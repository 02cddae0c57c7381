"""dpgrader.similarity: copies are found through renaming, layout and reordering; honest work is not paired."""

from __future__ import annotations

import inspect
import textwrap
from datetime import datetime, timedelta

import nbformat
import pytest

import dplib
from dpgrader.course import REPO_ROOT, format_timestamp
from dpgrader.similarity import (
    MIN_TOKENS, THRESHOLD, copy_flags, find_matches, minimum_sizes, normalize, report_html, submission_times,
)
from helpers.variants import notebook_with, variants_of

SOURCES = {p.parent.name: p for p in sorted((REPO_ROOT / "source").glob("*/*.ipynb"))}
LAPLACE = SOURCES["02_laplace"]

ORIGINAL = '''def laplace_mech(value, sensitivity, epsilon, rng=None):
    """value + Laplace noise."""
    if not (epsilon > 0 and epsilon != float("inf")):
        raise ValueError("epsilon must be a finite number > 0")
    if not (sensitivity >= 0 and sensitivity != float("inf")):
        raise ValueError("sensitivity must be a finite number >= 0")
    scale = sensitivity / epsilon
    generator = np.random.default_rng(rng)
    if np.ndim(value) == 0:
        return float(value) + generator.exponential(scale) * generator.choice([-1, 1])
    result = np.array(value, dtype=float)
    signs = generator.choice([-1, 1], size=result.shape)
    return result + signs * generator.exponential(scale, size=result.shape)'''

# The same code: names changed, statements swapped, comments added, reformatted, docstring gone.
DISGUISED = '''def laplace_mech(v, s, eps, rng=None):
    # my own checks
    if not (s >= 0 and s != float("inf")):
        raise ValueError("sensitivity has to be finite and >= 0")
    if not (eps > 0 and eps != float("inf")):
        raise ValueError("epsilon has to be finite and > 0")
    g = np.random.default_rng(rng)   # the generator
    b = s / eps
    if np.ndim(v) == 0:
        return (float(v)
                + g.exponential(b) * g.choice([-1, 1]))
    out = np.array(v, dtype=float)
    sgn = g.choice([-1, 1], size=out.shape)
    return out + sgn * g.exponential(b, size=out.shape)'''


def honest_variants(assignment: str) -> dict:
    """The variants of tests/variant_cases/<assignment>.py that are right but different (no test loses points)."""
    return {v.name: v.replacements for v in variants_of(assignment) if v.replacements and not v.zero}


def body_of(function) -> str:
    """The statements of a function, without its signature and docstring, as a student would paste them."""
    source = textwrap.dedent(inspect.getsource(function))
    lines = source.split("\n")
    tree = __import__("ast").parse(source).body[0]
    first = tree.body[1].lineno if isinstance(tree.body[0], __import__("ast").Expr) else tree.body[0].lineno
    return "\n".join(lines[first - 1:])


def test_normalizing_forgets_names_layout_comments_docstrings_and_order():
    a = "def f(x, y):\n    '''doc'''\n    total = x + y  # sum\n    other = x * 2\n    return total - other"
    b = "def g(p, q):\n    o = p * 2\n    t = (p +\n         q)\n    return t - o"
    assert normalize(a) == normalize(b)
    assert normalize(a) != normalize(a.replace("x * 2", "x * 3"))


def test_a_classmates_cell_renamed_reformatted_and_reordered_is_found():
    submissions = {
        "ada": notebook_with(LAPLACE, {"laplace_mech_solution": ORIGINAL}),
        "bo": notebook_with(LAPLACE, {"laplace_mech_solution": DISGUISED}),
        "cy": notebook_with(LAPLACE, {}),  # the reference
    }
    matches = find_matches(submissions, LAPLACE, "02_laplace")
    assert {(m.student, m.other, m.grade_id) for m in matches} == {
        ("ada", "bo", "laplace_mech_solution"), ("bo", "ada", "laplace_mech_solution")}
    assert all(m.score >= THRESHOLD for m in matches) and matches[0].score > 0.9
    assert copy_flags(matches)[("bo", "02_laplace")] == (
        f"copy: laplace_mech_solution matches the submission of ada (similarity {matches[0].score:.2f})",)
    # with hand-in times only the later one is flagged; without them (or at the same time), both
    noon, later = datetime(2025, 3, 1, 12), datetime(2025, 3, 1, 14)
    assert copy_flags(matches, {"ada": noon, "bo": later}) == {("bo", "02_laplace"): (
        f"copy: laplace_mech_solution matches the earlier submission of ada (similarity {matches[0].score:.2f})",)}
    assert set(copy_flags(matches, {"ada": later, "bo": noon})) == {("ada", "02_laplace")}
    assert set(copy_flags(matches, {"ada": noon, "bo": noon})) == set(copy_flags(matches, {"ada": noon})) == {
        ("ada", "02_laplace"), ("bo", "02_laplace")}


def test_pasting_dplibs_body_is_flagged_as_copying_dplib():
    pasted = "def laplace_mech(value, sensitivity, epsilon, rng=None):\n" + textwrap.indent(
        body_of(dplib.laplace_mech), "    ") + "\n"
    pasted = pasted.replace("scale", "b").replace("noise", "z")  # and a little renaming
    submissions = {"dee": notebook_with(LAPLACE, {"laplace_mech_solution": pasted}), "cy": notebook_with(LAPLACE, {})}
    (match,) = find_matches(submissions, LAPLACE, "02_laplace")
    assert (match.student, match.other, match.grade_id) == ("dee", "dplib.laplace_mech", "laplace_mech_solution")
    assert match.score >= 0.9 and "_laplace_noise" in match.other_code
    assert match.flag().startswith("copy: laplace_mech_solution matches dplib's implementation dplib.laplace_mech")


@pytest.mark.parametrize("assignment", ["01_definition", "02_laplace", "03_randomized_response", "04_generalized_rr",
                                        "05_estimation", "06_exponential_fairness"])
def test_honest_independent_solutions_are_not_paired(assignment):
    source = SOURCES[assignment]
    variants = honest_variants(assignment)
    assert variants, "each assignment has right-but-different variants"
    submissions = {name: notebook_with(source, replacements) for name, replacements in variants.items()}
    submissions["reference"] = nbformat.read(str(source), as_version=4)
    assert find_matches(submissions, source, assignment) == []


def test_one_line_exercises_are_never_reported():
    sizes = minimum_sizes(LAPLACE)
    assert sizes["proportion_sensitivity_solution"] < MIN_TOKENS <= sizes["laplace_mech_solution"]
    same = {"proportion_sensitivity_solution": "def proportion_sensitivity(n):\n    return n ** -1.0",
            "laplace_tail_solution": "def laplace_tail(t, s, e):\n    return math.e ** (-(t * e / s))"}
    submissions = {"ada": notebook_with(LAPLACE, same), "bo": notebook_with(LAPLACE, same)}
    assert find_matches(submissions, LAPLACE, "02_laplace") == []


def test_the_report_shows_both_cells_escaped_side_by_side():
    submissions = {
        "ada": notebook_with(LAPLACE, {"laplace_mech_solution": ORIGINAL + "\n# <script>alert(1)</script>"}),
        "bo": notebook_with(LAPLACE, {"laplace_mech_solution": DISGUISED}),
    }
    matches = find_matches(submissions, LAPLACE, "02_laplace")
    page = report_html("02_laplace", matches, sizes=minimum_sizes(LAPLACE))
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert page.count("<section>") == 1, "a pair is shown once"
    assert "generator.exponential" in page and "g.exponential" in page
    assert "proportion_sensitivity_solution" in page, "the exercises too small to compare are named"
    assert "No pair above the threshold" in report_html("02_laplace", [])


# --- the demo's copiers (dpgrader.copying) ------------------------------------------------------------


def _small_class(tmp_path, assignment: str):
    """Four honest students (the reference), a partial and a warnings one, two copiers, written like the demo's."""
    import shutil

    import numpy as np

    from dpgrader import simulation
    from dpgrader.copying import copy_submissions

    source, release = SOURCES[assignment], REPO_ROOT / "release" / assignment / SOURCES[assignment].name
    (tmp_path / "source" / assignment).mkdir(parents=True)
    shutil.copy(source, tmp_path / "source" / assignment)
    names = ["correct"] * 4 + ["partial", "warnings", "warnings", "copies_classmate", "copies_dplib", "delegates"]
    kinds = {(f"s{i}", assignment): kind for i, kind in enumerate(names)}
    texts, rng = {}, np.random.default_rng(1)
    for i, ((student, _), kind) in enumerate(kinds.items()):
        texts[student, assignment, release.name] = text = simulation.make_submission(kind, release, source, rng)
        folder = tmp_path / "submitted" / student / assignment
        folder.mkdir(parents=True)
        (folder / release.name).write_text(text)
        (folder / "timestamp.txt").write_text(format_timestamp(datetime(2025, 3, 1, 12, 0) + timedelta(minutes=7 * i)))
    return kinds, copy_submissions(tmp_path, kinds, texts, np.random.default_rng(2))


@pytest.mark.parametrize("assignment", sorted(SOURCES))
def test_the_demo_copiers_are_found_and_nobody_else(tmp_path, assignment):
    from dpgrader.review import review_flags
    from dpgrader.similarity import write_report

    kinds, sources = _small_class(tmp_path, assignment)
    page, matches = write_report(tmp_path, assignment)
    copier = next(s for (s, _), k in kinds.items() if k == "copies_classmate")
    pasted = next(s for (s, _), k in kinds.items() if k == "copies_dplib")
    author = sources[copier, assignment]
    assert kinds[author, assignment] == "correct" and sources[pasted, assignment] == "dplib"
    pairs = {(m.student, m.other.split(".")[0]) for m in matches}
    assert pairs == {(copier, author), (author, copier), (pasted, "dplib")}
    flags = copy_flags(matches, submission_times(tmp_path, assignment))  # the author handed in first
    assert set(flags) == {(copier, assignment), (pasted, assignment)}
    assert all(f"matches the earlier submission of {author} (" in flag for flag in flags[copier, assignment])
    assert f"{author} handed in first" in page.read_text()
    assert page == tmp_path / "similarity" / f"{assignment}.html" and copier in page.read_text()
    for student in (author, copier):  # the author's own way of writing raises no review flag
        assert review_flags(tmp_path / "submitted" / student / assignment / SOURCES[assignment].name,
                            SOURCES[assignment]) == ()


HONEST = ("correct", "partial", "empty", "wrong", "warnings", "messy", "infinite_loop", "corrupted", "missing")


@pytest.mark.pipeline
def test_the_demo_class_flags_its_copiers_and_no_honest_student(tmp_path):
    """The class `make demo` grades (same roster, kinds and seed), every assignment: copy flags name exactly
    the copiers, and no honest student gets a copy or review flag."""
    from dpgrader.review import review_flags
    from dpgrader.simulation import build_class
    from dpgrader.similarity import submission_times, write_report

    course, kinds = build_class(tmp_path / "demo", progress=False)
    flagged: dict = {}
    classmate_pairs = set()
    for assignment in sorted({a for _, a in kinds}):
        _, matches = write_report(course.root, assignment)
        flagged.update(copy_flags(matches, submission_times(course.root, assignment)))
        classmate_pairs |= {(m.student, m.other, assignment) for m in matches if not m.other.startswith("dplib.")}
    copiers = {key for key, kind in kinds.items() if kind in ("copies_classmate", "copies_dplib")}
    copied = {(s, a) for s, _, a in classmate_pairs if kinds[s, a] in HONEST}  # the classmates whose work was taken
    assert copiers and copied and copiers <= set(flagged)
    assert not {key for key in flagged if kinds[key] in HONEST}  # neither those nor any other honest student
    # besides the copiers, only students who handed in the same tampering code as another are flagged
    assert {kinds[key] for key in set(flagged) - copiers} <= {"monkeypatch"}
    review = {key: review_flags(path, SOURCES[key[1]])
              for key in kinds if kinds[key] in HONEST
              for path in (course.root / "submitted" / key[0] / key[1]).glob("*.ipynb")}
    assert review and not {key: found for key, found in review.items() if found}
