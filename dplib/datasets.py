"""Datasets bundled with the course, read offline through ``importlib.resources``.

- UCI Adult (Becker & Kohavi, 1996; CC BY 4.0, https://doi.org/10.24432/C5XW20),
  shipped as gzip copies of the original ``adult.data`` and ``adult.test``.
- Made-up personal data for the linkage attack, generated once by
  ``scripts/make_pii_data.py`` (Faker, fixed seed) and shipped as files.
"""

from __future__ import annotations

import datetime as dt
from importlib import resources

import pandas as pd

__all__ = [
    "ADULT_COLUMNS",
    "CENSUS_DATE",
    "load_adult",
    "load_adult_with_pii",
    "load_voter_roll",
    "age_sex_categories",
]

#: Column names as in the UCI documentation (adult.names).
ADULT_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]

#: The day on which each made-up date of birth gives the person's Adult ``age``.
CENSUS_DATE = dt.date(1994, 7, 1)

_SPLIT_FILES = {"train": ["adult.data.gz"], "test": ["adult.test.gz"], "all": ["adult.data.gz", "adult.test.gz"]}


def _data_file(name: str):
    return resources.files("dplib").joinpath("data", name)


def _read_adult_file(name: str) -> pd.DataFrame:
    with _data_file(name).open("rb") as handle:
        frame = pd.read_csv(
            handle,
            compression="gzip",
            header=None,
            names=ADULT_COLUMNS,
            sep=",",
            skipinitialspace=True,
            na_values="?",
            comment="|",  # adult.test opens with the line "|1x3 Cross validator"
        )
    frame["income"] = frame["income"].str.rstrip(".")
    return frame


def load_adult(*, split: str = "all", dropna: bool = True) -> pd.DataFrame:
    """UCI Adult as a DataFrame.

    Parameters
    ----------
    split : {"all", "train", "test"}
        ``"train"`` is adult.data (32,561 rows), ``"test"`` adult.test (16,281 rows),
        ``"all"`` both, train first.
    dropna : bool
        Drop every row with a missing value (written ``?`` in the files).

    Returns
    -------
    pandas.DataFrame
        Columns as in the UCI documentation; ``income`` is ``"<=50K"`` or ``">50K"``
        in both splits; a fresh 0..n-1 index.

    Examples
    --------
    >>> len(load_adult())
    45222
    >>> len(load_adult(split="train", dropna=False))
    32561
    """
    if split not in _SPLIT_FILES:
        raise ValueError(f"split must be one of {sorted(_SPLIT_FILES)}, got {split!r}")
    frame = pd.concat([_read_adult_file(f) for f in _SPLIT_FILES[split]], ignore_index=True)
    if dropna:
        frame = frame.dropna().reset_index(drop=True)
    return frame


def load_adult_with_pii() -> pd.DataFrame:
    """The Adult train split (32,561 rows) with made-up ``Name``, ``DOB``, ``SSN`` and ``Zip``.

    The people are invented (Faker, fixed seed) and the same on every install. Each
    ``DOB`` gives the row's ``age`` on :data:`CENSUS_DATE`; ``Zip`` is a string.

    Examples
    --------
    >>> people = load_adult_with_pii()
    >>> people.shape
    (32561, 19)
    >>> list(people.columns[:4])
    ['Name', 'DOB', 'SSN', 'Zip']
    """
    pii = _read_people("adult_pii.csv.gz")
    return pd.concat([pii, load_adult(split="train", dropna=False)], axis=1)


def load_voter_roll() -> pd.DataFrame:
    """A public voter roll: ``Name``, ``DOB``, ``Zip``, ``Party`` of some Adult people and others.

    Examples
    --------
    >>> voters = load_voter_roll()
    >>> list(voters.columns)
    ['Name', 'DOB', 'Zip', 'Party']
    """
    return _read_people("voter_roll.csv.gz")


def _read_people(name: str) -> pd.DataFrame:
    with _data_file(name).open("rb") as handle:
        frame = pd.read_csv(handle, compression="gzip", dtype={"Zip": str, "SSN": str, "Name": str, "Party": str})
    frame["DOB"] = pd.to_datetime(frame["DOB"], format="%Y-%m-%d")
    return frame


def age_sex_categories(adult: pd.DataFrame | None = None) -> pd.Series:
    """Age x sex as 4 categories: ``2 * (age > median age) + (sex == "Male")``.

    On the 45,222 clean rows the median age is 37 and the counts are
    ``[8196, 14831, 6499, 15696]``.

    Examples
    --------
    >>> age_sex_categories().value_counts().sort_index().tolist()
    [8196, 14831, 6499, 15696]
    """
    adult = load_adult() if adult is None else adult
    age_binary = (adult["age"] > adult["age"].median()).astype(int)
    sex_binary = (adult["sex"] == "Male").astype(int)
    return (2 * age_binary + sex_binary).rename("age_sex")
