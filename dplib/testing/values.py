"""What a student's function returned, checked for its type and copied before any test compares it.

A test that compares a student's value with ``==``, ``<`` or ``bool()`` lets that value decide the
outcome: an object whose ``__eq__`` always says True (``unittest.mock.MagicMock``, a float subclass)
passes ``assert result == True``, and ``float()`` of a MagicMock is 1.0. So every check here first
looks at the *exact* type of what it was given (never ``isinstance``, which a subclass with lying
methods passes), accepts only

- real numbers: ``int``, ``float``, ``bool`` and numpy's integer, float and bool scalars;
- ``list`` and ``tuple`` of accepted values (a subclass, e.g. a named tuple, is read through
  ``list``'s and ``tuple``'s own methods, never its own), ``numpy.ndarray`` of numbers or bools (an
  object array only if every entry is accepted), ``pandas.Series`` and ``pandas.DataFrame`` holding them;
- strings and ``None`` where a test compares labels (:func:`check_equal`, :func:`check_frame`),

and then works on a plain copy it made itself (a ``float``, ``bool``, ``numpy.ndarray`` or
``DataFrame``): the student's object is never asked anything. Anything else fails the test with a
message naming the type, e.g. ``satisfies_dp(...): expected a bool, got MagicMock.``
"""

from __future__ import annotations

import builtins
import datetime

import numpy as np
import pandas as pd

import dplib.testing as _testing

# References taken at import time, out of reach of later monkeypatching.
_type, _len, _float, _bool, _int, _str = builtins.type, builtins.len, builtins.float, builtins.bool, builtins.int, builtins.str
_list, _tuple, _map, _set, _frozenset = builtins.list, builtins.tuple, builtins.map, builtins.set, builtins.frozenset
_issubclass, _range = builtins.issubclass, builtins.range
_list_len, _list_item, _tuple_len, _tuple_item = list.__len__, list.__getitem__, tuple.__len__, tuple.__getitem__
_array, _empty, _isfinite, _isinstance = np.array, np.empty, np.isfinite, builtins.isinstance
_ndarray, _DataFrame, _Series, _Index = np.ndarray, pd.DataFrame, pd.Series, pd.Index
_CategoricalDtype, _from_codes, _Timestamp = pd.CategoricalDtype, pd.Categorical.from_codes, pd.Timestamp

#: Exact types of real numbers: Python's and numpy's integer, float and bool scalars (not complex, not timedelta).
REAL_TYPES = _frozenset(
    {int, float, bool}
    | {kind for kind in np.sctypeDict.values() if np.dtype(kind).kind in "biuf"}
)
_BOOL_TYPES = _frozenset({bool, np.bool_})
#: Exact types a label may have (a column name, a category, a cell of a text column).
LABEL_TYPES = REAL_TYPES | {str, type(None), type(pd.NA), type(pd.NaT), _Timestamp, datetime.date, datetime.datetime,
                            np.datetime64}
_NUMERIC_KINDS = "biuf"


def _fail(message: str, hint: str):
    raise AssertionError(f"{message}{' ' + hint if hint else ''}")


def _type_name(value) -> str:
    return _type(value).__name__


def _items(value) -> list | None:
    """The items of a list or tuple (or of a subclass, read with the base class's methods), else None."""
    kind = _type(value)
    if _issubclass(kind, list):
        return [_list_item(value, i) for i in _range(_list_len(value))] if kind is not list else value
    if _issubclass(kind, _tuple):
        return [_tuple_item(value, i) for i in _range(_tuple_len(value))]
    return None


def plain_array(value, name: str, hint: str, expected: str = "numbers") -> np.ndarray:
    """A new numpy array of numbers or bools holding ``value``, whose every part has an accepted exact type."""
    kind = _type(value)
    if kind in REAL_TYPES:
        return _array(value)
    if kind is _ndarray:
        if value.dtype.kind in _NUMERIC_KINDS:
            return _array(value, copy=True)
        if value.dtype.kind == "O":
            items = [plain_array(item, name, hint, expected) for item in value.ravel().tolist()]
            return _stack(items, value.shape, name, hint)
        _fail(f"{name}: expected {expected}, got an array of {value.dtype}.", hint)
    items = _items(value)
    if items is not None:
        if _set(_map(_type, items)) <= REAL_TYPES:  # the common case, without a Python loop per entry
            return _array(items)
        items = [plain_array(item, name, hint, expected) for item in items]
        return _stack(items, (_len(items),), name, hint)
    if kind is _Series or kind is _DataFrame:
        return plain_array(value.to_numpy(), name, hint, expected)
    _fail(f"{name}: expected {expected}, got {_type_name(value)}.", hint)


def _stack(items: list, shape: tuple, name: str, hint: str) -> np.ndarray:
    """Arrays of one shape stacked into an array whose leading axes are ``shape``."""
    if not items:
        return _empty(shape)
    inner = items[0].shape
    if any(item.shape != inner for item in items):
        _fail(f"{name}: expected numbers in a regular shape, got a ragged sequence.", hint)
    return _array(items).reshape(shape + inner)


def check_array(actual, *, name: str = "result", shape: tuple | None = None, dtype=float, hint: str = "") -> np.ndarray:
    """Return a new numpy array of ``actual``'s numbers after checking their types (and ``shape``).

    ``dtype=None`` keeps integers and bools as they are (for indices and 0/1 answers).

    Examples
    --------
    >>> check_array([1, 2.5], name="counts")
    array([1. , 2.5])
    >>> check_array(np.zeros((2, 3)), shape=(2, 3)).shape
    (2, 3)
    >>> check_array(np.zeros(3), name="noise", shape=(20_000,))
    Traceback (most recent call last):
    ...
    AssertionError: noise: expected shape (20000,), got shape (3,).
    >>> from unittest import mock
    >>> check_array(mock.MagicMock(), name="laplace_mech(...)")
    Traceback (most recent call last):
    ...
    AssertionError: laplace_mech(...): expected numbers, got MagicMock.
    """
    with _testing.quiet():
        values = plain_array(actual, name, hint)
        if shape is not None and values.shape != _tuple(shape):
            _fail(f"{name}: expected shape {_tuple(shape)}, got shape {values.shape}.", hint)
        return values if dtype is None else values.astype(dtype)


def check_number(actual, *, name: str = "result", finite: bool = False, hint: str = "") -> float:
    """Return ``actual`` as a plain float after checking that it is one real number (and finite).

    Examples
    --------
    >>> check_number(np.float32(0.5))
    0.5
    >>> check_number(3, name="index")
    3.0
    >>> check_number([0.5], name="epsilon")
    Traceback (most recent call last):
    ...
    AssertionError: epsilon: expected a single number, got shape (1,).
    >>> check_number(float("inf"), name="sigma", finite=True)
    Traceback (most recent call last):
    ...
    AssertionError: sigma: expected a finite number, got inf.
    """
    with _testing.quiet():
        value = plain_array(actual, name, hint, expected="a single number")
        if value.shape != ():
            _fail(f"{name}: expected a single number, got shape {value.shape}.", hint)
        number = _float(value)
        if finite and not _isfinite(number):
            _fail(f"{name}: expected a finite number, got {number}.", hint)
        return number


def check_bool(actual, expected: bool | None = None, *, name: str = "result", hint: str = "") -> bool:
    """Return ``actual`` as a plain bool after checking that it is one (and equals ``expected``).

    ``bool`` and ``numpy.bool_`` are accepted (also as a 0-d array); a number, a string or an object
    claiming to equal True is not.

    Examples
    --------
    >>> check_bool(np.bool_(True), True, name="satisfies_dp(...)")
    True
    >>> check_bool(1, name="satisfies_dp(...)")
    Traceback (most recent call last):
    ...
    AssertionError: satisfies_dp(...): expected a bool (True or False), got int.
    >>> check_bool(False, True, name="satisfies_dp(p, q, ln 3)", hint="Use <=.")
    Traceback (most recent call last):
    ...
    AssertionError: satisfies_dp(p, q, ln 3): expected True, got False. Use <=.
    """
    kind = _type(actual)
    if kind is _ndarray and actual.shape == () and actual.dtype.kind == "b":
        value = _bool(actual)
    elif kind in _BOOL_TYPES:
        value = _bool(actual)
    else:
        _fail(f"{name}: expected a bool (True or False), got {_type_name(actual)}.", hint)
    if expected is not None and value is not _bool(expected):
        _fail(f"{name}: expected {_bool(expected)}, got {value}.", hint)
    return value


def _plain(value, name: str, hint: str):
    """``value`` rebuilt from plain Python objects: numbers, strings, None, tuples (lists become tuples)."""
    kind = _type(value)
    if kind in REAL_TYPES:
        return value.item() if kind not in (int, float, bool) else value
    if kind in LABEL_TYPES:
        return value
    items = _items(value)
    if items is not None:
        return _tuple(_plain(item, name, hint) for item in items)
    if kind is _ndarray:
        return _plain(plain_array(value, name, hint).tolist(), name, hint)
    _fail(f"{name}: expected numbers, strings or tuples of them, got {_type_name(value)}.", hint)


def check_equal(actual, expected, *, name: str = "result", hint: str = "") -> None:
    """Assert ``actual`` equals ``expected`` exactly: numbers, strings, None and lists or tuples of them.

    Numbers compare by value (``1 == 1.0 == np.int64(1)``); lists and tuples compare alike.

    Examples
    --------
    >>> check_equal(np.int64(1), 1, name="above_threshold(...)")
    >>> check_equal([("Ann", ">50K")], [("Ann", ">50K")])
    >>> check_equal(-1, 2, name="above_threshold([...], 0, 1.3)", hint="The first query above is index 2.")
    Traceback (most recent call last):
    ...
    AssertionError: above_threshold([...], 0, 1.3): expected 2, got -1. The first query above is index 2.
    """
    with _testing.quiet():
        got, want = _plain(actual, name, hint), _plain(expected, "expected", "")
        if not _bool(got == want):
            _fail(f"{name}: expected {want!r}, got {got!r}.", hint)


def _plain_labels(values, name: str, hint: str, what: str) -> list:
    """The entries of ``values`` (an array or index) as a list, each of an accepted exact type."""
    items = values.tolist()
    for item in items:
        if _type(item) not in LABEL_TYPES:
            _fail(f"{name}: expected numbers or strings in {what}, got {_type_name(item)}.", hint)
    return items


def _plain_column(column, name: str, hint: str, label):
    """A new array (or Categorical) holding a DataFrame column's values, each of an accepted exact type."""
    dtype = column.dtype
    if _type(dtype) is _CategoricalDtype:
        categories = _plain_labels(dtype.categories, name, hint, f"the categories of column {label!r}")
        codes = _array(column.cat.codes.to_numpy(), dtype=np.int64, copy=True)
        return _from_codes(codes, categories=_Index(categories), ordered=_bool(dtype.ordered))
    if _isinstance(dtype, np.dtype) and dtype.kind in _NUMERIC_KINDS + "Mm":
        return _array(column.to_numpy(), copy=True)
    values = column.to_numpy(dtype=object)
    return _array(_plain_labels(values, name, hint, f"column {label!r}"), dtype=object)


def check_frame(actual, *, name: str = "result", columns=(), hint: str = "") -> pd.DataFrame:
    """Return a new DataFrame of ``actual``'s values after checking its type, its labels and its cells.

    Column and index labels and every cell must be numbers, strings, dates or None; ``columns``
    lists columns the frame must have. The copy keeps the column order, the index (and its name)
    and categorical columns.

    Examples
    --------
    >>> frame = check_frame(pd.DataFrame({"Name": ["Ann"], "income": [">50K"]}), columns=["Name"])
    >>> frame.to_dict("list")
    {'Name': ['Ann'], 'income': ['>50K']}
    >>> check_frame({"Name": ["Ann"]}, name="reidentify(...)")
    Traceback (most recent call last):
    ...
    AssertionError: reidentify(...): expected a DataFrame, got dict.
    >>> check_frame(pd.DataFrame({"Name": ["Ann"]}), name="reidentify(...)", columns=["Name", "income"])
    Traceback (most recent call last):
    ...
    AssertionError: reidentify(...): columns missing: ['income'].
    """
    if _type(actual) is not _DataFrame:
        _fail(f"{name}: expected a DataFrame, got {_type_name(actual)}.", hint)
    with _testing.quiet():
        labels = _plain_labels(actual.columns, name, hint, "the column names")
        missing = [column for column in columns if column not in labels]
        if missing:
            _fail(f"{name}: columns missing: {missing}.", hint)
        index = actual.index
        index_name = index.name
        if _type(index_name) not in LABEL_TYPES:
            _fail(f"{name}: expected a number or a string as the index name, got {_type_name(index_name)}.", hint)
        new_index = _Index(_plain_labels(index, name, hint, "the index"), name=index_name, tupleize_cols=False)
        data = {position: _plain_column(actual.iloc[:, position], name, hint, label)
                for position, label in enumerate(labels)}
        frame = _DataFrame(data, index=new_index)
        frame.columns = _Index(labels, tupleize_cols=False)
        return frame


_asarray, _hash_rows = np.asarray, pd.util.hash_pandas_object  # taken at import, like the references above


def fingerprint(value, what: str, hint: str = "") -> tuple:
    """What two results of a randomized function are compared by, bit for bit: a plain array, or the row hashes and
    column names of a checked DataFrame (:func:`check_frame`)."""
    if _type(value) is _DataFrame:
        frame = check_frame(value, name=what, hint=hint)
        return _asarray(_hash_rows(frame, index=True).to_numpy()), _asarray(frame.columns.astype(str).to_numpy())
    return (plain_array(value, what, hint),)
