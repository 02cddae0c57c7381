""""Fake value" flags only what can fake a value (issue 29, item 7).

Every check of :mod:`dplib.testing` copies a student's value by its exact type before comparing it,
so a student's object is never asked ``<``, ``len`` or ``in`` by a check; what a test asks an object
directly is equality, hashing, truth, a conversion, its type or an attribute. The review flagged any
class defining one of 28 special methods, ``__len__``, ``__contains__`` and ``__lt__`` included: an
honest helper class with a length was "fake value". Now only
:data:`~dpgrader.review.rules.FAKE_VALUE_METHODS` are, and every hostile case flagged before still is.
"""

from __future__ import annotations

import nbformat
import numpy as np
import pytest

from dpgrader.course import REPO_ROOT
from dpgrader.simulation.hostile import ATTACKS, frame_quoting_solution
from dpgrader.review import review_notebook
from dpgrader.review import reviewer as reviewer_module
from dpgrader.review.rules import FAKE_VALUE_METHODS, HONEST_METHODS
from helpers.variants import notebook_with, variants_of

SOURCES = {p.parent.name: p for p in sorted((REPO_ROOT / "source").glob("*/*.ipynb"))}
LAPLACE = SOURCES["02_laplace"]
EXPONENTIAL = SOURCES["06_exponential_fairness"]

#: The methods every class was flagged for before issue 29 (``LYING_METHODS``).
BEFORE = {
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__float__", "__int__",
    "__index__", "__complex__", "__abs__", "__round__", "__hash__", "__contains__", "__len__", "__array__",
    "__array_ufunc__", "__array_function__", "__array_priority__", "__sub__", "__rsub__", "__neg__",
    "__instancecheck__", "__subclasscheck__", "__getattr__", "__getattribute__", "__del__",
}

# Honest answers built on helper classes: a container of noise draws (length, membership, iteration, a repr)
# and candidates sorted by score (ordering for sorting). Both compute what the reference computes.
LAPLACE_WITH_A_CONTAINER = '''import math


class Draws:
    """Laplace noise draws of one call, kept for inspection."""

    def __init__(self, generator, scale, shape):
        self.values = generator.laplace(0.0, scale, size=shape)

    def __len__(self):
        return int(np.size(self.values))

    def __contains__(self, value):
        return value in self.values

    def __iter__(self):
        return iter(np.ravel(self.values))

    def __repr__(self):
        return f"Draws({len(self)} values)"


def laplace_mech(value, sensitivity, epsilon, rng=None):
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if not (math.isfinite(sensitivity) and sensitivity >= 0):
        raise ValueError(f"sensitivity must be a finite number >= 0, got {sensitivity!r}")
    draws = Draws(np.random.default_rng(rng), sensitivity / epsilon, np.shape(value))
    noisy = np.asarray(value, dtype=float) + draws.values
    return float(noisy) if np.ndim(value) == 0 else noisy
'''

SORTED_CANDIDATES = '''class Candidate:
    """One option and its noisy score, sortable by score."""

    def __init__(self, index, noisy_score):
        self.index, self.noisy_score = index, noisy_score

    def __lt__(self, other):
        return self.noisy_score < other.noisy_score

    def __le__(self, other):
        return self.noisy_score <= other.noisy_score

    def __repr__(self):
        return f"Candidate({self.index}, {self.noisy_score:.3f})"

    def __len__(self):
        return 1


def best_of(scores):
    return sorted(Candidate(i, s) for i, s in enumerate(scores))[-1].index
'''


def _with_cell(source, grade_id: str, code: str) -> nbformat.NotebookNode:
    return notebook_with(source, {grade_id: code})


def _solution_ids(source) -> list[str]:
    cells = nbformat.read(str(source), as_version=4).cells
    return [c.metadata["nbgrader"]["grade_id"] for c in cells
            if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")]


def test_the_methods_that_fake_a_value_and_the_honest_ones_are_apart():
    assert not FAKE_VALUE_METHODS & HONEST_METHODS
    assert {"__eq__", "__ne__", "__hash__", "__bool__", "__float__", "__int__", "__index__", "__complex__",
            "__array__", "__array_ufunc__", "__array_function__"} <= FAKE_VALUE_METHODS
    assert {"__len__", "__contains__", "__iter__", "__lt__", "__repr__"} <= HONEST_METHODS


def test_honest_helper_classes_raise_no_flag():
    """The honest variants: before issue 29, each was flagged "fake value" (``__len__``, ``__contains__``, ``__lt__``)."""
    container = _with_cell(LAPLACE, "laplace_mech_solution", LAPLACE_WITH_A_CONTAINER)
    first = _solution_ids(EXPONENTIAL)[0]
    original = next(c.source for c in nbformat.read(str(EXPONENTIAL), as_version=4).cells
                    if c.metadata.get("nbgrader", {}).get("grade_id") == first)
    sorting = _with_cell(EXPONENTIAL, first, SORTED_CANDIDATES + "\n\n" + original)
    assert review_notebook(container, LAPLACE) == ()
    assert review_notebook(sorting, EXPONENTIAL) == ()


def test_the_honest_helper_class_computes_what_the_reference_computes():
    """The container variant is a right answer, not only an unflagged one: same shapes, Laplace noise of b = s/eps."""
    namespace = {"np": np}
    exec(LAPLACE_WITH_A_CONTAINER, namespace)  # noqa: S102 -- our own test code
    laplace_mech = namespace["laplace_mech"]
    assert isinstance(laplace_mech(1.0, 1.0, 1.0, rng=0), float) and laplace_mech(np.zeros((3, 4)), 1.0, 1.0, 0).shape == (3, 4)
    noise = laplace_mech(np.zeros(200_000), 2.0, 0.5, rng=7)
    assert abs(noise.mean()) < 6 * np.sqrt(2 * 4.0**2 / 200_000)  # Var = 2 b^2 with b = 4: a 6-sigma bound
    assert abs(np.mean(np.abs(noise)) - 4.0) < 6 * 4.0 / np.sqrt(200_000)  # E|X| = b, sd(|X|) = b
    namespace = {}
    exec(SORTED_CANDIDATES, namespace)  # noqa: S102
    assert namespace["best_of"]([0.3, 2.5, -1.0]) == 1


@pytest.mark.parametrize("method", sorted(HONEST_METHODS))
def test_an_honest_special_method_raises_no_flag(method):
    code = f"class Helper:\n    def {method}(self, *args):\n        return 0\n\n\ndef laplace_mech(value, sensitivity, epsilon, rng=None):\n    return value"
    assert [f for f in review_notebook(_with_cell(LAPLACE, "laplace_mech_solution", code), LAPLACE)
            if f.kind == "fake value"] == []


@pytest.mark.parametrize("method", sorted(FAKE_VALUE_METHODS))
def test_a_method_that_fakes_a_value_is_flagged_however_it_is_given(method):
    """Defined in a class, set on a class or an object, passed as a keyword, put in a type(...) namespace."""
    ways = {
        "def": f"class Fake:\n    def {method}(self, *args):\n        return True",
        "class body": f"class Fake:\n    {method} = lambda self, *args: True",
        "setattr": f"class Fake:\n    pass\nsetattr(Fake, '{method}', lambda self, *args: True)",
        "keyword": f"from types import SimpleNamespace\nx = SimpleNamespace({method}=lambda *args: True)",
        "type()": f"Fake = type('Fake', (), {{'{method}': lambda self, *args: True}})",
    }
    for way, code in ways.items():
        flags = review_notebook(_with_cell(LAPLACE, "laplace_mech_solution", code), LAPLACE)
        assert any(f.kind == "fake value" and method in f.reason for f in flags), (way, flags)


def test_a_finalizer_is_flagged_as_code_that_runs_out_of_order():
    code = "class Later:\n    def __del__(self):\n        print('after the tests')"
    flags = review_notebook(_with_cell(LAPLACE, "laplace_mech_solution", code), LAPLACE)
    assert [(f.kind, f.reason) for f in flags] == [
        ("dynamic code", "class Later runs code when an object is collected (__del__): after the guard has checked")]


def _hostile_cases() -> dict[str, tuple]:
    """Every hostile submission the project knows: the demo's attacks and every variant of tests/variant_cases."""
    release = REPO_ROOT / "release" / "01_definition" / "01_definition.ipynb"
    source01 = SOURCES["01_definition"]
    cases = {}
    for attack in ATTACKS:
        notebook = nbformat.read(str(release), as_version=4)
        notebook.cells.insert(1, nbformat.v4.new_code_cell(attack.code()))
        cases[f"attack {attack.name}"] = (notebook, source01)
    cases["frame quoter"] = (_with_cell(source01, "max_privacy_loss_solution",
                                        frame_quoting_solution("max_privacy_loss", "p_d, p_d_prime")), source01)
    for assignment, source in SOURCES.items():
        for variant in variants_of(assignment):
            cases[f"{assignment} {variant.name}"] = (notebook_with(source, variant.replacements), source)
    return cases


def test_every_hostile_case_flagged_before_is_flagged_now(monkeypatch):
    """The demo's attacks (dpgrader.simulation.hostile) and every variant of tests/variant_cases that names a method whose
    treatment changed, reviewed with the methods flagged before issue 29 and with FAKE_VALUE_METHODS: the same
    submissions are flagged, and each "fake value" flag of before is still a "fake value" flag."""
    changed = BEFORE ^ FAKE_VALUE_METHODS  # the review of code naming none of these is the same as before
    cases = {name: (notebook, source) for name, (notebook, source) in _hostile_cases().items()
             if any(method in cell.source for cell in notebook.cells for method in changed)}
    assert len(cases) >= 4, sorted(cases)  # the mocks of 05, 08, 09 and 10 told to answer __lt__, at least
    now = {name: review_notebook(notebook, source) for name, (notebook, source) in cases.items()}
    monkeypatch.setattr(reviewer_module, "FAKE_VALUE_METHODS", frozenset(BEFORE))
    before = {name: review_notebook(notebook, source) for name, (notebook, source) in cases.items()}
    assert {name for name, flags in before.items() if flags}, "the hostile cases are flagged"
    assert {name for name, flags in now.items() if flags} == {name for name, flags in before.items() if flags}
    for name in cases:
        faked_before = {(f.cell, f.line) for f in before[name] if f.kind == "fake value"}
        faked_now = {(f.cell, f.line) for f in now[name] if f.kind == "fake value"}
        assert faked_before == faked_now, (name, before[name], now[name])
