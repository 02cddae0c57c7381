"""Input validators shared by every dplib function: one helper per kind of parameter.

They are named ``require_<kind>``: the word ``check_*`` belongs to the test checks of
:mod:`dplib.testing`. The module is private (``dplib._validation``: nothing a notebook imports),
its functions are public to the modules of dplib, which all import them. A validator of one
module's own parameters lives in that module under the same prefix (``require_domain`` in
:mod:`dplib.synthetic.marginals`), public when another module imports it, ``_require_*`` when not.

Each helper returns the value in the form the caller needs (a float, an int, an
array) and raises ``ValueError`` whose message names the parameter, the allowed
range and the value received, e.g. ``epsilon must be a finite number > 0, got -1``.
Checks are O(1) for scalars and one vectorized pass for arrays, so validation never
dominates the cost of a mechanism.
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def _as_real(value, name: str, requirement: str) -> float:
    if type(value) is float:  # the common case, without the abstract-class checks below (hot in audits' loops)
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real | np.ndarray):
        raise ValueError(f"{name} must be {requirement}, got {value!r}")
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise ValueError(f"{name} must be a single number ({requirement}), got an array of shape {value.shape}")
        value = value.item()
    return float(value)


def require_epsilon(epsilon, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float; it must be finite and > 0."""
    requirement = "a finite number > 0"
    value = _as_real(epsilon, name, requirement)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be {requirement}, got {epsilon!r}")
    return value


def require_sensitivity(sensitivity, name: str = "sensitivity") -> float:
    """Return ``sensitivity`` as a float; it must be finite and >= 0."""
    requirement = "a finite number >= 0"
    value = _as_real(sensitivity, name, requirement)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be {requirement}, got {sensitivity!r}")
    return value


def require_probability(probability, name: str) -> float:
    """Return ``probability`` as a float; it must lie in [0, 1]."""
    requirement = "a probability in [0, 1]"
    value = _as_real(probability, name, requirement)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be {requirement}, got {probability!r}")
    return value


def require_open_probability(probability, name: str) -> float:
    """Return ``probability`` as a float; it must lie strictly between 0 and 1."""
    requirement = "a number strictly between 0 and 1"
    value = _as_real(probability, name, requirement)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be {requirement}, got {probability!r}")
    return value


def require_finite(value, name: str) -> float:
    """Return ``value`` as a float; it must be a finite number."""
    requirement = "a finite number"
    result = _as_real(value, name, requirement)
    if not math.isfinite(result):
        raise ValueError(f"{name} must be {requirement}, got {value!r}")
    return result


def require_nonnegative(value, name: str) -> float:
    """Return ``value`` as a float; it must be finite and >= 0."""
    return require_sensitivity(value, name)


def require_positive_int(value, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int; it must be an integer >= ``minimum``."""
    if type(value) is int and value >= minimum:  # the common case, without the abstract-class checks below
        return value
    requirement = f"an integer >= {minimum}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, bool) or not (isinstance(value, numbers.Real) and float(value).is_integer()):
            raise ValueError(f"{name} must be {requirement}, got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be {requirement}, got {value!r}")
    return int(value)


def require_k(k, name: str = "k") -> int:
    """Return the number of categories ``k`` as an int; it must be an integer >= 2."""
    return require_positive_int(k, name, minimum=2)


def require_numeric_array(values, name: str) -> np.ndarray:
    """Return ``values`` as a float array with no NaN or infinity."""
    array = np.asarray(values)
    if array.dtype.kind not in "biuf":  # bool, int, unsigned, float: not complex, object or text
        raise ValueError(f"{name} must hold numbers, got dtype {array.dtype}")
    array = array.astype(float, copy=False)
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must hold finite numbers (no NaN or inf)")
    return array


def require_binary(values, name: str = "x") -> np.ndarray:
    """Return ``values`` as an array of 0/1 ints; anything else is an error."""
    array = np.asarray(values)
    if array.dtype == bool:
        return array.astype(np.int8)
    if array.dtype == object or not np.issubdtype(array.dtype, np.number):
        raise ValueError(f"{name} must hold only 0 and 1, got dtype {array.dtype}")
    if array.size and not ((array == 0) | (array == 1)).all():
        bad = array[(array != 0) & (array != 1)].flat[0].item()  # a plain number reads better than np.float64(...)
        raise ValueError(f"{name} must hold only 0 and 1, got {bad!r}")
    return array.astype(np.int8, copy=False)


def require_categories(categories, k: int, name: str = "categories") -> np.ndarray:
    """Return ``categories`` as an int array; every entry must be an integer in 0..k-1."""
    array = np.asarray(categories)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise ValueError(f"{name} must hold integers in 0..{k - 1}, got dtype {array.dtype}")
    if np.issubdtype(array.dtype, np.floating):
        if array.size and not (np.isfinite(array).all() and (array == np.round(array)).all()):
            raise ValueError(f"{name} must hold integers in 0..{k - 1}, got non-integer values")
        array = array.astype(np.int64)
    if array.size:
        low, high = array.min(), array.max()
        if low < 0 or high >= k:
            bad = (low if low < 0 else high).item()
            raise ValueError(f"{name} must hold integers in 0..{k - 1}, got {bad!r}")
    return array


def require_probability_vector(probabilities, name: str) -> np.ndarray:
    """Return a 1-D float array of probabilities (entries in [0, 1])."""
    array = require_numeric_array(probabilities, name)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {array.shape}")
    if (array < 0).any() or (array > 1 + 1e-12).any():
        raise ValueError(f"{name} must hold probabilities in [0, 1]")
    return array
