"""Tests for dplib.testing.rng_contract: every function with an rng argument draws all its randomness from it.

Each style of drawing randomness gets the outcome the course promises (docs/authoring.md, "Randomness"):
``rng = np.random.default_rng(rng)`` and its fallback form pass, numpy's global generator, the random module, a
generator of the function's own and a function that ignores rng fail, with a message that quotes the contract.
"""

import copy
import random

import numpy as np
import pandas as pd
import pytest

import dplib
from dplib.testing import check_is_random, check_uses_rng
from dplib.testing import rng_contract

CONTRACT = "Every function with an rng argument draws all its random numbers from one generator"


def fresh(values, rng=None):
    rng = np.random.default_rng(rng)
    return values + rng.laplace(size=np.shape(values))


def fallback(values, rng=None):
    if rng is None:
        rng = np.random.default_rng()
    return values + rng.laplace(size=np.shape(values))


_MODULE_RNG = np.random.default_rng()


def module_level(values, rng=None):
    if rng is None:
        rng = _MODULE_RNG
    return values + rng.laplace(size=np.shape(values))


def test_honest_styles_pass():
    check_uses_rng(fresh, np.zeros(100), what="fresh")
    check_uses_rng(fallback, 10.0, what="fallback")
    check_uses_rng(lambda values, rng=None: dplib.laplace_mech(values, 1.0, 1.0, rng=rng), np.zeros(100), what="dplib")
    check_uses_rng(lambda rng=None: pd.DataFrame({"a": np.random.default_rng(rng).integers(0, 2, 100)}), what="frame")
    check_uses_rng(lambda x, rng=None: dplib.coin_rr(x, rng=rng), 1, calls=73, what="one coin")


def test_a_module_level_generator_passes_this_check_and_fails_check_is_random():
    check_uses_rng(module_level, np.zeros(100), what="module level")
    with pytest.raises(AssertionError, match="seeded or created once"):
        check_is_random(module_level, np.zeros(100), what="module level")


@pytest.mark.parametrize("draw", [
    lambda values, rng=None: values + np.random.laplace(size=np.shape(values)),
    lambda values, rng=None: values + np.array([random.gauss(0, 1) for _ in values]),
    lambda values, rng=None: values + np.random.default_rng().laplace(size=np.shape(values)),
    # Half its noise from rng, half from numpy's global generator: not all from one generator.
    lambda values, rng=None: values + np.random.default_rng(rng).laplace(size=len(values)) + np.random.normal(size=len(values)),
], ids=["numpy global", "random module", "a generator of its own", "partly global"])
def test_randomness_from_elsewhere_fails_with_the_contract(draw):
    with pytest.raises(AssertionError, match="run twice, each time with a new rng=np.random.default_rng") as raised:
        check_uses_rng(draw, np.zeros(100), what="noise", hint="Draw from rng.")
    assert CONTRACT in str(raised.value) and str(raised.value).endswith("Draw from rng.")


def test_a_function_that_ignores_rng_deterministically_fails():
    seeded_inside = lambda values, rng=None: values + np.random.default_rng(0).laplace(size=np.shape(values))  # noqa: E731
    for function in (seeded_inside, lambda values, rng=None: values + 1.0):
        with pytest.raises(AssertionError, match=r"returned the same values: it ignores rng") as raised:
            check_uses_rng(function, np.zeros(100), what="noise")
        assert CONTRACT in str(raised.value)


def test_a_discrete_output_is_compared_over_calls():
    # One call of one coin agrees for two seeds with probability 5/8; 73 calls in a row with probability < 1e-9.
    check_uses_rng(lambda x, rng=None: dplib.coin_rr(x, rng=rng), 1, calls=73, what="one coin")
    with pytest.raises(AssertionError, match="it ignores rng"):
        check_uses_rng(lambda x, rng=None: dplib.coin_rr(x, rng=0), 1, calls=73, what="one coin")


def test_each_call_gets_fresh_copies_of_the_arguments():
    def in_place(values, rng=None):
        values += np.random.default_rng(rng).laplace(size=values.shape)  # mutates its argument
        return values

    values = np.zeros(100)
    check_uses_rng(in_place, values, what="in place")
    assert not values.any()


def test_it_refuses_its_own_arguments():
    with pytest.raises(ValueError, match="calls must be an integer >= 1"):
        check_uses_rng(fresh, np.zeros(3), what="x", calls=0)
    with pytest.raises(TypeError, match="passes rng itself"):
        check_uses_rng(fresh, np.zeros(3), what="x", rng=np.random.default_rng())


def test_values_are_checked_for_their_type_first():
    from unittest import mock
    with pytest.raises(AssertionError, match="expected numbers, got MagicMock"):
        check_uses_rng(lambda rng=None: mock.MagicMock(), what="mock")


def test_the_calls_write_nothing_to_stderr(capfd):
    def noisy(values, rng=None):
        import sys
        import warnings
        warnings.warn("student warning")
        print("to stderr", file=sys.stderr)
        return fresh(values, rng)

    check_uses_rng(noisy, np.zeros(100), what="noisy")
    assert capfd.readouterr().err == ""


def test_defaults_and_saved_references_survive_a_student_cell(monkeypatch):
    inner = check_uses_rng.__wrapped__
    monkeypatch.setattr(inner, "__kwdefaults__", {"calls": 1, "hint": "", "what": "x"})
    monkeypatch.setattr(np.random, "default_rng", lambda seed=None: np.random.Generator(np.random.PCG64(0)))
    monkeypatch.setattr(copy, "deepcopy", lambda value, memo=None: value)
    with pytest.raises(AssertionError, match="it ignores rng"):
        check_uses_rng(lambda values, rng=None: values + 1.0, np.zeros(10), what="noise")


# --- the six styles of tests/helpers/rng_styles.py, on 02's reference laplace_mech -----------------------------------

@pytest.mark.parametrize("style", ["fresh_per_call", "fallback", "module_level_unseeded", "module_level_seeded",
                                   "global_generator", "random_module"])
def test_each_style_gets_the_outcome_the_contract_promises(style):
    import math

    from helpers.rng_styles import HONEST, IGNORES_RNG, MODULE_LEVEL, restyled, rng_cells

    namespace = {"np": np, "math": math}
    exec(restyled(rng_cells("02_laplace")["laplace_mech_solution"], style), namespace)  # noqa: S102
    laplace_mech = namespace["laplace_mech"]

    def outcome(check):
        try:
            check(laplace_mech, np.zeros(100), 2.0, 0.5, what="laplace_mech")
        except AssertionError:
            return "fails"
        return "passes"

    assert (outcome(check_is_random), outcome(check_uses_rng)) == {
        **dict.fromkeys(HONEST, ("passes", "passes")),
        **dict.fromkeys(MODULE_LEVEL, ("fails", "passes")),
        **dict.fromkeys(IGNORES_RNG, ("passes", "fails")),
    }[style]
