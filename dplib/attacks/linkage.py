"""Why removing names is not anonymisation: uniqueness, linkage and differencing attacks."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

__all__ = ["uniqueness", "reidentify", "differencing_attack"]


def _require_columns(df: pd.DataFrame, columns: Sequence[str], name: str) -> list[str]:
    if isinstance(columns, str):
        columns = [columns]
    columns = list(columns)
    if not columns:
        raise ValueError(f"{name} must name at least one column")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{name} names columns that are not in the table: {missing}")
    return columns


def uniqueness(df: pd.DataFrame, columns: Sequence[str]) -> float:
    """Fraction of rows whose values in ``columns`` are shared with no other row.

    Examples
    --------
    >>> table = pd.DataFrame({"zip": [1, 1, 2, 3], "age": [30, 30, 40, 50]})
    >>> uniqueness(table, ["zip", "age"])
    0.5
    """
    columns = _require_columns(df, columns, "columns")
    if len(df) == 0:
        raise ValueError("df must have at least one row")
    return float((~df.duplicated(columns, keep=False)).mean())


def reidentify(deidentified: pd.DataFrame, auxiliary: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Link de-identified rows to names through quasi-identifiers (a linkage attack).

    A row is re-identified when its ``keys`` are unique in ``deidentified`` and match
    exactly one row of ``auxiliary``; ambiguous matches are dropped.

    Returns
    -------
    pandas.DataFrame
        The re-identified rows of ``deidentified`` (index kept) with the matching
        auxiliary row's ``Name`` attached.

    Examples
    --------
    >>> deid = pd.DataFrame({"Zip": ["01", "01", "02"], "DOB": [1, 2, 3], "income": ["a", "b", "c"]})
    >>> voters = pd.DataFrame({"Name": ["Ann", "Bob", "Cy"], "Zip": ["01", "02", "02"], "DOB": [1, 3, 3]})
    >>> reidentify(deid, voters, ["Zip", "DOB"])
      Zip  DOB income Name
    0  01    1      a  Ann
    """
    keys = _require_columns(deidentified, keys, "keys")
    _require_columns(auxiliary, [*keys, "Name"], "keys")
    unique_rows = deidentified[~deidentified.duplicated(keys, keep=False)]
    unique_names = auxiliary.loc[~auxiliary.duplicated(keys, keep=False), [*keys, "Name"]]
    index_name = unique_rows.index.name or "index"
    linked = unique_rows.reset_index(names=index_name).merge(unique_names, on=keys, how="inner")
    return linked.set_index(index_name).rename_axis(unique_rows.index.name)


def differencing_attack(df: pd.DataFrame, name: str) -> bool:
    """Learn whether ``name`` earns >50K from two innocent-looking counts.

    ``count(income == ">50K")`` over everybody minus the same count over everybody
    but ``name`` is exactly that person's answer.

    Examples
    --------
    >>> people = pd.DataFrame({"Name": ["Ann", "Bob"], "income": [">50K", "<=50K"]})
    >>> differencing_attack(people, "Ann"), differencing_attack(people, "Bob")
    (True, False)
    """
    _require_columns(df, ["Name", "income"], "df")
    matches = int((df["Name"] == name).sum())
    if matches != 1:
        raise ValueError(f"name must match exactly one row, got {name!r} matching {matches}")
    rich = df["income"] == ">50K"
    count_everyone = int(rich.sum())
    count_without = int(rich[df["Name"] != name].sum())
    return count_everyone - count_without == 1
