"""Tests for dplib._validation (one check per kind of parameter) and dplib._arrays.

Every message names the parameter, the allowed range and the value received.
"""

import math

import numpy as np
import pytest

from dplib._arrays import as_output
from dplib._validation import (
    require_binary,
    require_categories,
    require_epsilon,
    require_finite,
    require_k,
    require_nonnegative,
    require_numeric_array,
    require_open_probability,
    require_positive_int,
    require_probability,
    require_probability_vector,
    require_sensitivity,
)

NOT_NUMBERS = [True, False, np.bool_(True), "1", None, [1.0], (1.0,), {"x": 1}, 1 + 0j]


# --- scalars ------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [1e-300, 0.5, 1, 3, np.float32(2.0), np.int64(4), np.array(0.1), 1e300])
def test_require_epsilon_accepts_positive_finite_numbers(value):
    result = require_epsilon(value)
    assert type(result) is float and result == float(value)


@pytest.mark.parametrize("value", [0, 0.0, -0.0, -1, math.nan, math.inf, -math.inf, np.float64("nan"), *NOT_NUMBERS])
def test_require_epsilon_rejects(value):
    with pytest.raises(ValueError, match="^epsilon must be a finite number > 0, got "):
        require_epsilon(value)


def test_require_epsilon_message_shows_the_value_and_the_custom_name():
    with pytest.raises(ValueError, match=r"^epsilon must be a finite number > 0, got -1$"):
        require_epsilon(-1)
    with pytest.raises(ValueError, match=r"^epsilons must be a finite number > 0, got nan$"):
        require_epsilon(math.nan, "epsilons")
    with pytest.raises(ValueError, match=r"^epsilon must be a single number \(a finite number > 0\), got an array of shape \(3,\)$"):
        require_epsilon(np.ones(3))


@pytest.mark.parametrize("value", [0, 0.0, 2, 1e-9, np.float64(3.5)])
def test_require_sensitivity_accepts(value):
    assert require_sensitivity(value) == float(value)


@pytest.mark.parametrize("value", [-1, -1e-300, math.nan, math.inf, *NOT_NUMBERS])
def test_require_sensitivity_rejects(value):
    with pytest.raises(ValueError, match="^sensitivity must be a finite number >= 0, got "):
        require_sensitivity(value)


def test_require_nonnegative_uses_the_given_name():
    assert require_nonnegative(0, "t") == 0.0
    with pytest.raises(ValueError, match="^t must be a finite number >= 0, got -2$"):
        require_nonnegative(-2, "t")


@pytest.mark.parametrize("value", [0, 1, 0.0, 1.0, 0.5, np.float64(0.25), np.array(0.75)])
def test_require_probability_accepts_the_closed_interval(value):
    assert require_probability(value, "p") == float(value)


@pytest.mark.parametrize("value", [-0.1, 1.0000001, math.nan, math.inf, *NOT_NUMBERS])
def test_require_probability_rejects(value):
    with pytest.raises(ValueError, match=r"^q must be a probability in \[0, 1\], got "):
        require_probability(value, "q")


@pytest.mark.parametrize("value", [1e-12, 0.5, 1 - 1e-12])
def test_require_open_probability_accepts_the_open_interval(value):
    assert require_open_probability(value, "alpha") == value


@pytest.mark.parametrize("value", [0, 1, 0.0, 1.0, -0.5, 2, math.nan, *NOT_NUMBERS])
def test_require_open_probability_rejects(value):
    with pytest.raises(ValueError, match="^alpha must be a number strictly between 0 and 1, got "):
        require_open_probability(value, "alpha")


@pytest.mark.parametrize("value", [0, -5, 1e308, np.float64(-2.5), np.int8(3)])
def test_require_finite_accepts(value):
    assert require_finite(value, "lower") == float(value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, *NOT_NUMBERS])
def test_require_finite_rejects(value):
    with pytest.raises(ValueError, match="^lower must be a finite number, got "):
        require_finite(value, "lower")


@pytest.mark.parametrize(("value", "expected"), [(1, 1), (5, 5), (5.0, 5), (np.int64(7), 7), (np.float64(2.0), 2), (10**20, 10**20)])
def test_require_positive_int_accepts_integers_and_integral_floats(value, expected):
    result = require_positive_int(value, "n")
    assert type(result) is int and result == expected


@pytest.mark.parametrize("value", [0, -1, 2.5, math.nan, math.inf, True, False, np.bool_(True), "3", None, [3], 3 + 0j])
def test_require_positive_int_rejects(value):
    with pytest.raises(ValueError, match="^n must be an integer >= 1, got "):
        require_positive_int(value, "n")


def test_require_positive_int_minimum():
    assert require_positive_int(0, "size", minimum=0) == 0
    with pytest.raises(ValueError, match="^size must be an integer >= 0, got -1$"):
        require_positive_int(-1, "size", minimum=0)
    with pytest.raises(ValueError, match="^trials must be an integer >= 2, got 1$"):
        require_positive_int(1, "trials", minimum=2)


def test_require_k():
    assert require_k(2) == 2 and require_k(10.0) == 10
    for bad in (1, 0, 2.5, True, "2"):
        with pytest.raises(ValueError, match="^k must be an integer >= 2, got "):
            require_k(bad)
    with pytest.raises(ValueError, match=r"^len\(true_counts\) must be an integer >= 2, got 1$"):
        require_k(1, "len(true_counts)")


# --- arrays -------------------------------------------------------------------------------------


def test_require_numeric_array():
    result = require_numeric_array([1, 2, 3], "values")
    assert result.dtype == float and result.tolist() == [1.0, 2.0, 3.0]
    assert require_numeric_array([True, False], "values").tolist() == [1.0, 0.0]
    assert require_numeric_array(5, "values").shape == ()
    assert require_numeric_array(np.zeros((2, 3), dtype=np.int16), "values").shape == (2, 3)
    assert require_numeric_array([], "values").shape == (0,)


def test_require_numeric_array_does_not_copy_floats():
    values = np.arange(3.0)
    assert require_numeric_array(values, "values") is values


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (["a"], r"^values must hold numbers, got dtype <U1$"),
        ([1, None], "^values must hold numbers, got dtype object$"),
        ([1.0, math.nan], r"^values must hold finite numbers \(no NaN or inf\)$"),
        ([math.inf], "values must hold finite numbers"),
        ([1 + 1j], r"^values must hold numbers, got dtype complex128$"),
        (np.array(["2020-01-01"], dtype="datetime64[D]"), "values must hold numbers, got dtype datetime64"),
    ],
)
def test_require_numeric_array_rejects(values, message):
    with pytest.raises(ValueError, match=message):
        require_numeric_array(values, "values")


def test_require_numeric_array_rejects_ragged_input_with_a_value_error():
    with pytest.raises(ValueError):
        require_numeric_array([[1], [1, 2]], "values")


def test_require_binary():
    assert require_binary([0, 1, 1]).dtype == np.int8
    assert require_binary([True, False]).tolist() == [1, 0]
    assert require_binary([0.0, 1.0]).tolist() == [0, 1]
    assert require_binary(1).shape == ()
    assert require_binary([]).shape == (0,)
    assert require_binary(np.ones((2, 2), dtype=np.uint8)).shape == (2, 2)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([0, 2], r"^x must hold only 0 and 1, got 2$"),
        ([0.5], r"^x must hold only 0 and 1, got 0\.5$"),
        ([-1], r"^x must hold only 0 and 1, got -1$"),
        ([math.nan], r"^x must hold only 0 and 1, got nan$"),
        (["1"], r"^x must hold only 0 and 1, got dtype <U1$"),
        ([None], r"^x must hold only 0 and 1, got dtype object$"),
    ],
)
def test_require_binary_rejects(values, message):
    with pytest.raises(ValueError, match=message):
        require_binary(values)


def test_require_binary_uses_the_given_name():
    with pytest.raises(ValueError, match="^responses must hold only 0 and 1"):
        require_binary([3], "responses")


def test_require_categories():
    assert require_categories([0, 1, 2], 3).tolist() == [0, 1, 2]
    assert require_categories([0.0, 2.0], 3).dtype == np.int64
    assert require_categories(1, 2).shape == ()
    assert require_categories([], 2).shape == (0,)
    assert require_categories(np.array([[0, 1]], dtype=np.uint8), 2).shape == (1, 2)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([3], r"^categories must hold integers in 0\.\.2, got 3$"),
        ([-1, 5], r"^categories must hold integers in 0\.\.2, got -1$"),
        ([1.5], r"^categories must hold integers in 0\.\.2, got non-integer values$"),
        ([math.nan], "got non-integer values"),
        ([True], r"^categories must hold integers in 0\.\.2, got dtype bool$"),
        (["a"], "got dtype <U1"),
    ],
)
def test_require_categories_rejects(values, message):
    with pytest.raises(ValueError, match=message):
        require_categories(values, 3)


def test_require_probability_vector():
    assert require_probability_vector([0.5, 0.5], "p_d").tolist() == [0.5, 0.5]
    assert require_probability_vector([1 + 1e-13, 0.0], "p_d")[0] > 1  # rounding slack
    for bad, message in [
        ([[0.5, 0.5]], r"^p_d must be a non-empty 1-D array, got shape \(1, 2\)$"),
        ([], r"^p_d must be a non-empty 1-D array, got shape \(0,\)$"),
        ([-0.1, 1.1], r"^p_d must hold probabilities in \[0, 1\]$"),
        ([1.1], r"^p_d must hold probabilities in \[0, 1\]$"),
        ([math.nan], "^p_d must hold finite numbers"),
    ]:
        with pytest.raises(ValueError, match=message):
            require_probability_vector(bad, "p_d")


# --- dplib._arrays -----------------------------------------------------------------------------------


def test_as_output_unwraps_zero_dimensional_arrays_only():
    scalar = as_output(np.array(3.5))
    assert not isinstance(scalar, np.ndarray) and scalar == 3.5 and isinstance(scalar, np.floating)
    array = np.array([1, 2])
    assert as_output(array) is array
    empty = np.empty((0,))
    assert as_output(empty) is empty
