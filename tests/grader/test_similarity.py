"""dpgrader.similarity: copies of a classmate, of dplib and of the reference are found through renaming, layout,
reordering and padding; honest work is not reported; a comparison that cannot be made is a flag."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from datetime import datetime, timedelta

import nbformat
import numpy as np
import pytest

import dplib
from dpgrader.course import REPO_ROOT, format_timestamp
from dpgrader.similarity import (
    CLASSMATE, CLASSMATE_EVIDENCE, DPLIB, DPLIB_EVIDENCE, MIN_TOKENS, REFERENCE, REFERENCE_MIN_TOKENS, REFERENCE_THRESHOLD, THRESHOLD,
    UNCHECKED, cell_fingerprints, containment, copy_flags, find_matches, jaccard, minimum_sizes, normalize,
    report_html, solution_cells, statement_fingerprints, submission_times,
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

# DISGUISED again, padded with statements whose result nothing uses, as a copier hides a copy.
PADDED = '''import warnings

def laplace_mech(v, s, eps, rng=None):
    checked = []
    # my own checks
    if not (s >= 0 and s != float("inf")):
        raise ValueError("sensitivity has to be finite and >= 0")
    """Now epsilon."""
    checked.append(eps)
    if not (eps > 0 and eps != float("inf")):
        raise ValueError("epsilon has to be finite and > 0")
    pass
    g = np.random.default_rng(rng)   # the generator
    spare = len(str(v)) + 1
    spare2 = spare * 2
    b = s / eps
    v is None
    np.mean([1, 2])
    if np.ndim(v) == 0:
        return (float(v)
                + g.exponential(b) * g.choice([-1, 1]))
    out = np.array(v, dtype=float)
    sgn = g.choice([-1, 1], size=out.shape)
    return out + sgn * g.exponential(b, size=out.shape)


def _unused_helper(x):
    return x * 3'''

# dplib's laplace_mech with every helper (validators, the noise sampler, as_output) inlined in one body, renamed.
INLINED = '''import numbers

def laplace_mech(value, sensitivity, epsilon, rng=None):
    req = "a finite number >= 0"
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, numbers.Real | np.ndarray):
        raise ValueError(f"sensitivity must be {req}, got {sensitivity!r}")
    if isinstance(sensitivity, np.ndarray):
        if sensitivity.ndim != 0:
            raise ValueError(f"sensitivity must be a single number ({req}), got an array of shape {sensitivity.shape}")
        sensitivity = sensitivity.item()
    s = float(sensitivity)
    if not (math.isfinite(s) and s >= 0):
        raise ValueError(f"sensitivity must be {req}, got {sensitivity!r}")
    req2 = "a finite number > 0"
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real | np.ndarray):
        raise ValueError(f"epsilon must be {req2}, got {epsilon!r}")
    if isinstance(epsilon, np.ndarray):
        if epsilon.ndim != 0:
            raise ValueError(f"epsilon must be a single number ({req2}), got an array of shape {epsilon.shape}")
        epsilon = epsilon.item()
    e = float(epsilon)
    if not (math.isfinite(e) and e > 0):
        raise ValueError(f"epsilon must be {req2}, got {epsilon!r}")
    b = s / e
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"value must hold numbers, got dtype {arr.dtype}")
    arr = arr.astype(float, copy=False)
    if not np.isfinite(arr).all():
        raise ValueError("value must hold finite numbers (no NaN or inf)")
    gen = np.random.default_rng(rng)
    if b == 0.0:
        z = gen.laplace(0.0, b, size=arr.shape)
    else:
        st = gen.bit_generator.state
        uu = gen.random(arr.shape)
        z = np.subtract(2.0, uu, out=np.empty(arr.shape))
        z -= uu
        uu += uu
        np.minimum(z, uu, out=z)
        if not z.all():
            gen.bit_generator.state = st
            z = gen.laplace(0.0, b, size=arr.shape)
        else:
            np.log(z, out=z)
            z *= b
            uu -= 1.0
            z = np.copysign(z, uu, out=z)
    z += arr
    return z[()] if z.ndim == 0 else z'''


#: Variants that keep the reference's code (or another variant's) and change only the types it takes or returns, to
#: try the checks on numpy scalars, bools and lists (numpy_scalars_*, numpy_bools_*, ...; not numpy_global_*, which
#: are written independently), or only the line that makes the generator (rng_style_*, tests/helpers/rng_styles.py):
#: copies of the reference by construction, not independent answers.
SAME_CODE_OTHER_TYPES = re.compile(r"^(?:numpy_(?!global)|rng_style_)")


#: A draw from numpy's global generator or the random module: a right answer that ignores ``rng``, which loses only
#: the tests of the randomness contract (the rest of its code is as independent as any other right answer).
IGNORES_RNG = re.compile(r"\brandom\.(?!default_rng)[a-z]\w*\(|\bnp\.random\.(?!default_rng|Generator|PCG64|SeedSequence)"
                         r"[a-z]\w*\(|\.rvs\(")


#: A generator seeded once (the fixed_seeds variants: the reference's code with a seed, no independent answer).
SEEDED = re.compile(r"default_rng\(\d|\.seed\(")


def contract_tests(assignment: str) -> set[str]:
    """The tests of ``assignment`` that check the randomness contract (they call ``check_uses_rng``)."""
    notebook = nbformat.read(str(SOURCES[assignment]), as_version=4)
    return {cell.metadata["nbgrader"]["grade_id"] for cell in notebook.cells
            if cell.metadata.get("nbgrader", {}).get("grade") and "check_uses_rng" in cell.source}


def honest_variants(assignment: str) -> dict:
    """The right-but-different answers of tests/variant_cases/<assignment>.py, each written independently of the
    reference: ``full=`` only, no ``zero=``, or zero only on the randomness contract's tests for drawing from numpy's
    global generator or the random module."""
    contract = contract_tests(assignment)

    def right(variant) -> bool:
        codes = variant.replacements.values()
        return not variant.zero or (set(variant.zero) <= contract and any(IGNORES_RNG.search(code) for code in codes)
                                    and not any(SEEDED.search(code) for code in codes))

    return {v.name: v.replacements for v in variants_of(assignment)
            if v.full and right(v) and not SAME_CODE_OTHER_TYPES.match(v.name)}


def body_of(function) -> str:
    """The statements of a function, without its signature and docstring, as a student would paste them."""
    source = textwrap.dedent(inspect.getsource(function))
    lines = source.split("\n")
    tree = ast.parse(source).body[0]
    first = tree.body[1].lineno if isinstance(tree.body[0], ast.Expr) else tree.body[0].lineno
    return "\n".join(lines[first - 1:])


def of_kind(matches, kind) -> set:
    return {(m.student, m.other, m.grade_id) for m in matches if m.kind == kind}


def reference_code(grade_id: str, source=LAPLACE) -> str:
    return solution_cells(source)[grade_id]


# --- normalizing -------------------------------------------------------------------------------------------


def test_normalizing_forgets_names_layout_comments_docstrings_and_order():
    a = "def f(x, y):\n    '''doc'''\n    total = x + y  # sum\n    other = x * 2\n    return total - other"
    b = "def g(p, q):\n    o = p * 2\n    t = (p +\n         q)\n    return t - o"
    assert normalize(a) == normalize(b)
    assert normalize(a) != normalize(a.replace("x * 2", "x * 3"))


@pytest.mark.parametrize("padding", [
    "pass", "'''a docstring in the middle'''", "x is None", "len(str(x)) + 1", "print(x)", "np.mean([1, 2])",
    "x.copy()", "unused = x * 2", "unused = 1\n    unused2 = unused + 1", "log = []\n    log.append(x)",
    "def helper(z):\n        return z * 3", "import warnings", "scratch: int = 0", "count = 0\n    count += 1",
])
def test_statements_whose_result_nothing_uses_are_dropped(padding):
    base = "def f(x, y):\n    total = x + y\n    other = x * 2\n    return total - other"
    padded = base.replace("    other =", f"    {padding}\n    other =")
    assert normalize(padded, frozenset({"f"})) == normalize(base, frozenset({"f"}))


def test_statements_with_an_effect_on_what_is_returned_are_kept():
    base = "def f(x):\n    out = []\n    out.append(x)\n    rng.shuffle(out)\n    return out"
    assert "Expr" in normalize(base) and normalize(base) != normalize(base.replace("    out.append(x)\n", ""))
    assert normalize("def f(x):\n    self.items.append(x)") != normalize("def f(x):\n    pass")  # another object's
    # top-level names are what the tests call: kept unless the caller says which names are read
    top = "def f(x):\n    return x\n\ndef unused_helper():\n    return 1"
    assert normalize(top) != normalize("def f(x):\n    return x")
    assert normalize(top, frozenset({"f"})) == normalize("def f(x):\n    return x", frozenset({"f"}))
    assert normalize("def f():\n    a = 1\n    return eval('a')") != normalize("def f():\n    return eval('a')")


def test_a_cell_nested_thousands_of_levels_deep_is_fingerprinted_without_recursion():
    deep = "x = " + "+".join(["1"] * 2500)
    assert len(normalize(deep)) > 2 * 2500 and cell_fingerprints(deep)


# --- classmates ----------------------------------------------------------------------------------------------


def test_a_classmates_cell_renamed_reformatted_and_reordered_is_found():
    submissions = {
        "ada": notebook_with(LAPLACE, {"laplace_mech_solution": ORIGINAL}),
        "bo": notebook_with(LAPLACE, {"laplace_mech_solution": DISGUISED}),
        "cy": notebook_with(LAPLACE, {}),  # the reference
    }
    matches = find_matches(submissions, LAPLACE, "02_laplace")
    pairs = [m for m in matches if m.kind == CLASSMATE]
    assert {(m.student, m.other, m.grade_id) for m in pairs} == {
        ("ada", "bo", "laplace_mech_solution"), ("bo", "ada", "laplace_mech_solution")}
    assert all(m.score >= THRESHOLD for m in pairs) and pairs[0].score > 0.9
    assert {m.student for m in matches if m.kind != CLASSMATE} == {"ada", "bo", "cy"}, "their other cells are it"
    assert {m.student for m in matches if m.grade_id == "laplace_mech_solution" and m.kind != CLASSMATE} == {"cy"}
    (flag,) = copy_flags(pairs)[("bo", "02_laplace")]
    assert str(flag) == f"copy: laplace_mech_solution matches the submission of ada (similarity {pairs[0].score:.2f})"
    # formgrader's comment (a page a student may see) names no classmate
    assert str(flag.anonymous()) == f"copy: laplace_mech_solution matches another submission (similarity {pairs[0].score:.2f})"
    assert (flag.kind, flag.cell) == ("copy", "laplace_mech_solution")
    # with hand-in times only the later one is flagged; without them (or at the same time), both
    noon, later = datetime(2025, 3, 1, 12), datetime(2025, 3, 1, 14)
    flags = copy_flags(pairs, {"ada": noon, "bo": later})
    assert {key: tuple(map(str, found)) for key, found in flags.items()} == {("bo", "02_laplace"): (
        f"copy: laplace_mech_solution matches the earlier submission of ada (similarity {pairs[0].score:.2f})",)}
    assert "ada" not in str(flags["bo", "02_laplace"][0].anonymous())
    assert set(copy_flags(pairs, {"ada": later, "bo": noon})) == {("ada", "02_laplace")}
    assert set(copy_flags(pairs, {"ada": noon, "bo": noon})) == set(copy_flags(pairs, {"ada": noon})) == {
        ("ada", "02_laplace"), ("bo", "02_laplace")}


def test_the_same_small_change_to_the_reference_is_not_evidence_of_copying():
    """Two answers built on the reference that both name one temporary are alike by convergence, not by copying
    (an exercise this short leaves few ways to differ); two that share several statements of their own are reported."""
    reference = solution_cells(LAPLACE)["laplace_mech_solution"]
    one_temporary = reference.replace(
        "    noisy = value + rng.laplace(0.0, sensitivity / epsilon, size=value.shape)\n",
        "    scale = sensitivity / epsilon\n    noisy = value + rng.laplace(0.0, scale, size=value.shape)\n")
    own_checks_too = one_temporary.replace(
        "    if not (math.isfinite(sensitivity) and sensitivity >= 0):\n"
        "        raise ValueError(f\"sensitivity must be a finite number >= 0, got {sensitivity!r}\")",
        "    if not math.isfinite(sensitivity):\n        raise ValueError(f\"sensitivity must be finite, got {sensitivity!r}\")\n"
        "    elif sensitivity < 0:\n        raise ValueError(f\"sensitivity must be >= 0, got {sensitivity!r}\")",
    ).replace("    return noisy if noisy.ndim else float(noisy)", "    if noisy.ndim == 0:\n        return float(noisy)\n    return noisy")
    names = frozenset({"laplace_mech"})
    own = {code: cell_fingerprints(code, names) - cell_fingerprints(reference, names) for code in (one_temporary, own_checks_too)}
    assert 0 < len(own[one_temporary]) < CLASSMATE_EVIDENCE <= len(own[own_checks_too])
    for code, reported in ((one_temporary, False), (own_checks_too, True)):
        submissions = {student: notebook_with(LAPLACE, {"laplace_mech_solution": code}) for student in ("ada", "bo")}
        pairs = {(m.student, m.other) for m in find_matches(submissions, LAPLACE, "02_laplace") if m.kind == CLASSMATE}
        assert pairs == ({("ada", "bo"), ("bo", "ada")} if reported else set())


def test_a_classmates_cell_padded_with_unused_statements_is_found():
    """Issue 25: renamed, reordered and padded (bare expressions, a docstring, pass, dead assignments, an unused
    import and helper): the padding is dropped before fingerprinting, so the copy scores as DISGUISED does."""
    submissions = {"ada": notebook_with(LAPLACE, {"laplace_mech_solution": ORIGINAL}),
                   "bo": notebook_with(LAPLACE, {"laplace_mech_solution": PADDED})}
    pairs = [m for m in find_matches(submissions, LAPLACE, "02_laplace") if m.kind == CLASSMATE]
    assert {(m.student, m.other) for m in pairs} == {("ada", "bo"), ("bo", "ada")}
    names = frozenset({"laplace_mech"})
    assert cell_fingerprints(PADDED, names) == cell_fingerprints(DISGUISED, names)
    assert pairs[0].score > 0.9, pairs[0].score


# --- dplib -------------------------------------------------------------------------------------------------


def test_pasting_dplibs_body_is_flagged_as_copying_dplib():
    pasted = "def laplace_mech(value, sensitivity, epsilon, rng=None):\n" + textwrap.indent(
        body_of(dplib.laplace_mech), "    ") + "\n"
    pasted = pasted.replace("scale", "b").replace("noise", "z")  # and a little renaming
    submissions = {"dee": notebook_with(LAPLACE, {"laplace_mech_solution": pasted}), "cy": notebook_with(LAPLACE, {})}
    (match,) = [m for m in find_matches(submissions, LAPLACE, "02_laplace") if m.kind == DPLIB]
    assert (match.student, match.other, match.grade_id) == ("dee", "dplib.laplace_mech", "laplace_mech_solution")
    assert match.score >= 0.9 and "def laplace_noise" in match.other_code
    assert str(match.flag()).startswith("copy: laplace_mech_solution matches dplib's implementation dplib.laplace_mech")


@pytest.mark.parametrize("how", ["helpers pasted as functions of their own", "helpers inlined"])
def test_dplibs_implementation_is_found_whatever_its_helpers_are_called_or_wherever_they_are_inlined(how):
    """Issue 25: dplib's laplace_mech with its helpers (require_*, laplace_noise, as_output) pasted in and
    renamed, with nothing imported from dplib: the review sees nothing, copy detection must."""
    from dpgrader.simulation.copying import paste_dplib
    from dpgrader.review import review_notebook

    code = paste_dplib(reference_code("laplace_mech_solution"), np.random.default_rng(0)) if how.startswith(
        "helpers pasted") else INLINED
    assert "dplib" not in code and not re.search(r"\b(require_\w+|laplace_scale|laplace_noise|as_output)\b", code)
    notebook = notebook_with(LAPLACE, {"laplace_mech_solution": code})
    assert not [f for f in review_notebook(notebook, LAPLACE) if f.cell == "laplace_mech_solution"]
    (match,) = [m for m in find_matches({"dee": notebook}, LAPLACE, "02_laplace") if m.kind == DPLIB]
    assert (match.student, match.other) == ("dee", "dplib.laplace_mech") and match.score >= 0.8, match.score
    assert "def require_epsilon" in match.other_code and "def _as_real" in match.other_code


# --- the instructor's reference --------------------------------------------------------------------------------


def test_the_reference_solution_handed_in_is_reported_as_such_and_counted():
    """Issue 25: a leaked solution key, renamed, reordered and padded, and the key as it is, in the same class."""
    from dpgrader.simulation.copying import disguise
    from dpgrader.similarity.report import reference_counts

    key = {g: disguise(c, np.random.default_rng(i)) for i, (g, c) in enumerate(solution_cells(LAPLACE).items())}
    sizes = minimum_sizes(LAPLACE)
    submissions = {"ada": notebook_with(LAPLACE, key), "bo": nbformat.read(str(LAPLACE), as_version=4),
                   "cy": notebook_with(LAPLACE, {"laplace_mech_solution": ORIGINAL})}
    matches = find_matches(submissions, LAPLACE, "02_laplace")
    long = {g for g, n in sizes.items() if n >= REFERENCE_MIN_TOKENS}
    assert long == {"laplace_mech_solution", "noisy_average_solution"}
    assert of_kind(matches, REFERENCE) == {(s, "reference", g) for s in ("ada", "bo") for g in long} | {
        ("cy", "reference", "noisy_average_solution")}  # cy's other cells are the reference
    assert not of_kind(matches, CLASSMATE), "two copies of the reference are each reported as such, not as a pair"
    assert all(m.score == 1.0 for m in matches)
    assert tuple(map(str, copy_flags(matches)[("ada", "02_laplace")])) == tuple(
        f"copy: {g} matches the instructor's reference solution (similarity 1.00)" for g in sorted(long))
    assert reference_counts(matches) == (3, {"laplace_mech_solution": 2, "noisy_average_solution": 3})
    page = report_html("02_laplace", matches, sizes=sizes)
    assert ("3 submission(s) hold at least 80% of the reference solution of an exercise (laplace_mech_solution 2, "
            "noisy_average_solution 3)") in page


# --- honest work -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("assignment", sorted(SOURCES))
def test_honest_independent_solutions_are_not_reported(assignment):
    """The right-but-different answers of tests/variant_cases: no pair, no copy of dplib or of the reference; the
    reference itself is reported on exactly the exercises long enough (the variants' other cells are it, too)."""
    source = SOURCES[assignment]
    variants = honest_variants(assignment)
    assert variants, f"{assignment} has right-but-different variants"
    submissions = {name: notebook_with(source, replacements) for name, replacements in variants.items()}
    submissions["the_reference"] = nbformat.read(str(source), as_version=4)
    matches = find_matches(submissions, source, assignment)
    own = {(name, grade_id) for name, replacements in variants.items() for grade_id in replacements}
    assert not [m for m in matches if (m.student, m.grade_id) in own or (m.other, m.grade_id) in own]
    sizes = minimum_sizes(source)
    assert of_kind([m for m in matches if m.student == "the_reference"], REFERENCE) == {
        ("the_reference", "reference", g) for g, n in sizes.items() if n >= REFERENCE_MIN_TOKENS}


def test_the_thresholds_leave_a_margin_on_honest_work():
    """The numbers behind the thresholds, on every right-but-different answer of tests/variant_cases (exercises of
    MIN_TOKENS or more): independent answers hold at most 44% of the reference's fingerprints (the threshold is
    80%), share at most 8% with each other (70%), and at most 6 fingerprints with dplib that the reference does not
    have (10)."""
    from dpgrader.similarity.dplib_copies import library_for
    from dpgrader.similarity.matches import _top_level_names

    reference_share, pair, evidence = [], [], []
    for assignment, source in SOURCES.items():
        sizes, key = minimum_sizes(source), solution_cells(source)
        cells: dict[str, list[frozenset]] = {}
        for replacements in honest_variants(assignment).values():
            for grade_id, code in replacements.items():
                if sizes[grade_id] < MIN_TOKENS:
                    continue
                names = _top_level_names(key[grade_id])
                mine, reference = cell_fingerprints(code, names), cell_fingerprints(key[grade_id], names)
                reference_share.append(containment(reference, mine))
                pair += [jaccard(mine, other) for other in cells.get(grade_id, [])]
                cells.setdefault(grade_id, []).append(mine)
                library = library_for(code, key[grade_id])
                if library:
                    units = statement_fingerprints(code, names)
                    reference_units = statement_fingerprints(key[grade_id], names)
                    evidence += [len((mine & library[2]) - reference), len((units & library[3]) - reference_units)]
    assert len(reference_share) >= 30 and pair and evidence
    assert max(reference_share) <= REFERENCE_THRESHOLD - 0.3, max(reference_share)
    assert max(pair) <= THRESHOLD - 0.5, max(pair)
    assert max(evidence) <= DPLIB_EVIDENCE - 4, max(evidence)


def test_short_exercises_are_never_reported():
    sizes = minimum_sizes(LAPLACE)
    assert sizes["proportion_sensitivity_solution"] < MIN_TOKENS <= sizes["laplace_mech_solution"]
    assert MIN_TOKENS <= sizes["laplace_histogram_solution"] < REFERENCE_MIN_TOKENS
    same = {"proportion_sensitivity_solution": "def proportion_sensitivity(n):\n    return n ** -1.0",
            "laplace_tail_solution": "def laplace_tail(t, s, e):\n    return math.e ** (-(t * e / s))"}
    submissions = {"ada": notebook_with(LAPLACE, same), "bo": notebook_with(LAPLACE, same)}
    short = {g for g, n in sizes.items() if n < REFERENCE_MIN_TOKENS}
    matches = find_matches(submissions, LAPLACE, "02_laplace")
    assert matches and not [m for m in matches if m.grade_id in short], "the reference's short cells are not reported"


def test_the_report_shows_both_cells_escaped_side_by_side():
    submissions = {
        "ada": notebook_with(LAPLACE, {"laplace_mech_solution": ORIGINAL + "\n# <script>alert(1)</script>"}),
        "bo": notebook_with(LAPLACE, {"laplace_mech_solution": DISGUISED}),
    }
    matches = [m for m in find_matches(submissions, LAPLACE, "02_laplace") if m.kind == CLASSMATE]
    page = report_html("02_laplace", matches, sizes=minimum_sizes(LAPLACE))
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert page.count("<section>") == 1, "a pair is shown once"
    assert "generator.exponential" in page and "g.exponential" in page
    assert "proportion_sensitivity_solution" in page, "the exercises too small to compare are named"
    assert "No pair above the threshold" in report_html("02_laplace", [])
    assert "0 submission(s) hold" in page


# --- fail closed ----------------------------------------------------------------------------------------------


def test_a_submission_that_cannot_be_compared_is_flagged_not_skipped():
    deep = "def laplace_mech(value, sensitivity, epsilon, rng=None):\n    return " + "+".join(["1"] * 5000)
    odd = nbformat.read(str(LAPLACE), as_version=4)
    odd["cells"][3]["metadata"] = "not a dict"  # JSON, but not a notebook the comparison can read
    submissions = {"deep": notebook_with(LAPLACE, {"laplace_mech_solution": deep}), "odd": odd}
    matches = [m for m in find_matches(submissions, LAPLACE, "02_laplace") if m.kind == UNCHECKED]
    assert {(m.student, m.grade_id) for m in matches} == {("deep", "laplace_mech_solution"), ("odd", "")}
    flags = copy_flags(matches)
    assert str(flags["deep", "02_laplace"][0]).startswith(
        "copy check: could not compare laplace_mech_solution (RecursionError: maximum recursion depth exceeded")
    assert str(flags["odd", "02_laplace"][0]).startswith("copy check: could not compare this notebook (")
    assert all(str(f).endswith("a person must compare it") for found in flags.values() for f in found)
    assert "2 submission cell(s) could not be compared" in report_html("02_laplace", matches)


def test_a_similarity_report_that_fails_flags_every_submission_of_the_assignment(tmp_path, monkeypatch):
    """add_copy_flags: the grades are kept, and every submission of the assignment says why it was not compared."""
    from nbgrader.api import Gradebook

    import dpgrader.similarity
    from dpgrader.classroom import add_copy_flags
    from dpgrader.outcomes import Outcome, Status

    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}"):
        pass
    outcomes = [Outcome(s, a, Status.OK, "", 1.0, 1.0) for s in ("ada", "bo") for a in ("02_laplace", "03_other")]

    def fail(root, assignment):
        if assignment == "02_laplace":
            raise MemoryError("no room")
        return tmp_path / "x.html", []

    monkeypatch.setattr(dpgrader.similarity, "write_report", fail)
    flagged = {(o.student, o.assignment): (tuple(map(str, o.flags)), o.score) for o in add_copy_flags(tmp_path, outcomes)}
    expected = ("copy check: the similarity report of 02_laplace could not be made (MemoryError('no room')): a "
                "person must compare these submissions",)
    assert flagged == {("ada", "02_laplace"): (expected, 1.0), ("bo", "02_laplace"): (expected, 1.0),
                       ("ada", "03_other"): ((), 1.0), ("bo", "03_other"): ((), 1.0)}


# --- the demo's copiers (dpgrader.simulation.copying) ------------------------------------------------------------

COPIERS = ("copies_classmate", "copies_dplib", "leaked_key")


def _small_class(tmp_path, assignment: str):
    """Four honest students (their own way), a partial and two warnings ones, three copiers, written like the demo's."""
    import shutil

    from dpgrader import simulation
    from dpgrader.simulation.copying import copy_submissions

    source, release = SOURCES[assignment], REPO_ROOT / "release" / assignment / SOURCES[assignment].name
    (tmp_path / "source" / assignment).mkdir(parents=True)
    shutil.copy(source, tmp_path / "source" / assignment)
    names = ["correct"] * 4 + ["partial", "warnings", "warnings", *COPIERS, "delegates"]
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
    copier, pasted, leaked = (next(s for (s, _), k in kinds.items() if k == kind) for kind in COPIERS)
    author = sources[copier, assignment]
    assert kinds[author, assignment] == "correct" and sources[pasted, assignment] == "dplib"
    assert sources[leaked, assignment] == "reference"
    long = any(n >= REFERENCE_MIN_TOKENS for n in minimum_sizes(SOURCES[assignment]).values())
    assert {(m.student, m.kind, m.other.split(".")[0]) for m in matches if m.kind != REFERENCE} == {
        (copier, CLASSMATE, author), (author, CLASSMATE, copier), (pasted, DPLIB, "dplib")}
    assert {m.student for m in matches if m.kind == REFERENCE} == ({leaked} if long else set())
    flags = copy_flags(matches, submission_times(tmp_path, assignment))  # the author handed in first
    assert set(flags) == {(copier, assignment), (pasted, assignment)} | ({(leaked, assignment)} if long else set())
    assert all(f"matches the earlier submission of {author} (" in str(flag) for flag in flags[copier, assignment])
    assert f"{author} handed in first" in page.read_text()
    assert page == tmp_path / "similarity" / f"{assignment}.html" and copier in page.read_text()
    for student in (author, copier, leaked):  # an honest author's own way and a disguise raise no review flag
        assert review_flags(tmp_path / "submitted" / student / assignment / SOURCES[assignment].name,
                            SOURCES[assignment]) == ()


def test_a_leaked_key_in_an_assignment_without_a_long_exercise_is_beyond_the_reference_check():
    """06_exponential_fairness has no exercise of REFERENCE_MIN_TOKENS: a copy of its key cannot be told from
    independent answers, which converge on exercises that short (the limit the demo test allows for)."""
    assert max(minimum_sizes(SOURCES["06_exponential_fairness"]).values()) < REFERENCE_MIN_TOKENS
    assert all(max(minimum_sizes(source).values()) >= REFERENCE_MIN_TOKENS
               for name, source in SOURCES.items() if name != "06_exponential_fairness")


HONEST = ("correct", "partial", "empty", "wrong", "warnings", "messy", "infinite_loop", "corrupted", "missing")


@pytest.mark.pipeline
def test_the_demo_class_flags_its_copiers_and_no_honest_student(tmp_path):
    """The class `make demo` grades (same roster, kinds and seed), every assignment: copy flags name exactly the
    copiers (a leaked key wherever an exercise is long enough to tell), and no honest student gets a copy or review flag."""
    from dpgrader.review import review_flags
    from dpgrader.simulation import build_class
    from dpgrader.similarity import submission_times, write_report

    course, kinds = build_class(tmp_path / "demo", progress=False)
    flagged: dict = {}
    classmate_pairs, reference_copies = set(), set()
    for assignment in sorted({a for _, a in kinds}):
        _, matches = write_report(course.root, assignment)
        flagged.update(copy_flags(matches, submission_times(course.root, assignment)))
        classmate_pairs |= {(m.student, m.other, assignment) for m in matches if m.kind == CLASSMATE}
        reference_copies |= {(m.student, assignment) for m in matches if m.kind == REFERENCE}
    long = {a for a in SOURCES if max(minimum_sizes(SOURCES[a]).values()) >= REFERENCE_MIN_TOKENS}
    copiers = {key for key, kind in kinds.items() if kind in COPIERS and (kind != "leaked_key" or key[1] in long)}
    leaked = {key for key, kind in kinds.items() if kind == "leaked_key" and key[1] in long}
    copied = {(s, a) for s, _, a in classmate_pairs if kinds[s, a] in HONEST}  # the classmates whose work was taken
    assert copiers and copied and leaked and copiers <= set(flagged) and leaked <= reference_copies
    assert not {key for key in flagged if kinds[key] in HONEST}  # neither those nor any other honest student
    # besides the copiers, only students who handed in the same tampering code as another are flagged
    assert {kinds[key] for key in set(flagged) - copiers} <= {"monkeypatch", "leaked_key"}
    review = {key: review_flags(path, SOURCES[key[1]])
              for key in kinds if kinds[key] in HONEST
              for path in (course.root / "submitted" / key[0] / key[1]).glob("*.ipynb")}
    assert review and not {key: found for key, found in review.items() if found}


def test_the_remembered_prints_of_a_cell_are_those_its_parse_gives():
    """cell_prints (one parse, remembered by source) gives what normalize, units and statement_units give a fresh
    parse, for every solution cell of every source notebook and every variant's replacement, with the names the
    cell reads as exported (and, for the source cells, with none); asked twice, the same object."""
    from dpgrader.review.reading import parse_cell
    from dpgrader.similarity.winnowing import cell_prints, fingerprints, normalize, statement_units, units

    sources = [cell.source for path in sorted((REPO_ROOT / "source").glob("*/*.ipynb"))
               for cell in nbformat.read(str(path), as_version=4).cells
               if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution")]
    replacements = [code for folder in sorted((REPO_ROOT / "source").iterdir()) if folder.is_dir()
                    for variant in variants_of(folder.name) for code in variant.replacements.values()]
    checked = 0
    for code in dict.fromkeys(sources + replacements):
        tree = parse_cell(code)
        names = frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name)) if tree else frozenset()
        for exported in (None, names) if code in sources else (names,):
            prints = cell_prints(code, exported)
            fresh = parse_cell(code)
            assert prints.tokens == len(normalize(fresh, exported)), code
            assert prints.fingerprints == frozenset().union(*[fingerprints(u) for u in units(fresh, exported)]), code
            assert prints.statement_fingerprints == frozenset().union(
                *[fingerprints(u) for u in statement_units(fresh, exported)]), code
            assert cell_prints(code, exported) is prints
            checked += 1
    assert checked > 400, checked
