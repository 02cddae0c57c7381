"""Tests for dplib.datasets: the bundled UCI Adult files and the made-up people.

Every fact listed in shared/data/adult/README.md is reproduced here, the shipped
copies are checked byte for byte against the published checksums, and the loaders
are run from an unrelated working directory (they read through importlib.resources).
"""

import datetime as dt
import gzip
import hashlib
import inspect
from importlib import resources

import numpy as np
import pandas as pd
import pytest

import dplib
from dplib import datasets
from dplib.attacks.linkage import uniqueness
from dplib.datasets import (
    ADULT_COLUMNS,
    CENSUS_DATE,
    age_sex_categories,
    load_adult,
    load_adult_with_pii,
    load_voter_roll,
)

DATA = resources.files("dplib").joinpath("data")


@pytest.fixture(scope="module")
def adult():
    return load_adult()


@pytest.fixture(scope="module")
def raw_train_split():
    return load_adult(split="train", dropna=False)


@pytest.fixture(scope="module")
def raw_test_split():
    return load_adult(split="test", dropna=False)


# --- the shipped files ----------------------------------------------------------------------------


def read_sums(name: str) -> dict[str, str]:
    lines = DATA.joinpath(name).read_text().splitlines()
    return {line.split()[1]: line.split()[0] for line in lines if line.strip()}


@pytest.mark.parametrize("original", ["adult.data", "adult.test"])
def test_shipped_files_match_the_published_checksums(original):
    raw = gzip.decompress(DATA.joinpath(f"{original}.gz").read_bytes())
    assert hashlib.sha256(raw).hexdigest() == read_sums("SHA256SUMS")[original]
    assert hashlib.md5(raw).hexdigest() == read_sums("MD5SUMS")[original]


def test_checksum_files_hold_the_values_published_loaders_check():
    md5 = read_sums("MD5SUMS")
    assert md5["adult.data"].startswith("5d7c39d7") and md5["adult.test"].startswith("35238206")
    assert set(read_sums("SHA256SUMS")) == {"adult.data", "adult.test"}


def test_data_readme_gives_the_attribution():
    readme = DATA.joinpath("README.md").read_text()
    assert "CC BY 4.0" in readme and "10.24432/C5XW20" in readme and "make_pii_data.py" in readme


# --- load_adult -------------------------------------------------------------------------------------


def test_clean_train_and_test_has_45222_rows(adult):
    assert len(adult) == 45_222
    assert list(adult.columns) == ADULT_COLUMNS
    assert not adult.isna().any().any()
    assert adult.index.equals(pd.RangeIndex(45_222))


def test_train_split_raw_has_32561_rows(raw_train_split):
    assert len(raw_train_split) == 32_561
    assert raw_train_split.isna().any(axis=1).sum() > 0  # missing values kept, as NaN
    assert not (raw_train_split.astype(str) == "?").any().any()


def test_test_split_raw_has_16281_rows(raw_test_split):
    assert len(raw_test_split) == 16_281
    assert len(load_adult(dropna=False)) == 32_561 + 16_281


def test_sales_count_in_train(raw_train_split):
    assert (raw_train_split["occupation"] == "Sales").sum() == 3_650


def test_age_40_or_more_in_train(raw_train_split):
    assert (raw_train_split["age"] >= 40).sum() == 14_237


def test_median_age_of_the_clean_rows(adult):
    assert adult["age"].median() == 37


def test_labels_are_normalised_in_both_splits(raw_train_split, raw_test_split):
    assert set(raw_train_split["income"]) == {"<=50K", ">50K"}
    assert set(raw_test_split["income"]) == {"<=50K", ">50K"}  # adult.test writes "<=50K." and ">50K."
    assert not raw_test_split["income"].str.endswith(".").any()


def test_values_have_no_leading_spaces(adult):
    for column in ["workclass", "education", "sex", "native-country", "income"]:
        assert not adult[column].str.startswith(" ").any(), column
    assert set(adult["sex"]) == {"Male", "Female"}


def test_numeric_columns_are_numbers(adult):
    for column in ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]:
        assert pd.api.types.is_integer_dtype(adult[column]), column


def test_clean_train_split(raw_train_split):
    clean = load_adult(split="train")
    assert len(clean) == len(raw_train_split.dropna())
    assert clean.index.equals(pd.RangeIndex(len(clean)))


def test_load_adult_rejects_an_unknown_split():
    with pytest.raises(ValueError, match=r"split must be one of \['all', 'test', 'train'\], got 'validation'"):
        load_adult(split="validation")


def test_load_adult_returns_a_fresh_frame_each_time():
    first = load_adult(split="test")
    first.loc[0, "age"] = -1
    assert load_adult(split="test").loc[0, "age"] != -1


# --- age_sex_categories ---------------------------------------------------------------------------


def test_age_sex_categories_counts(adult):
    categories = age_sex_categories()
    assert categories.name == "age_sex"
    assert len(categories) == 45_222
    assert categories.value_counts().sort_index().tolist() == [8196, 14831, 6499, 15696]
    pd.testing.assert_series_equal(age_sex_categories(adult), categories)


def test_age_sex_categories_formula():
    frame = pd.DataFrame({"age": [20, 30, 40, 50, 60], "sex": ["Male", "Female", "Male", "Female", "Male"]})
    # median 40: age_binary = age > 40
    assert age_sex_categories(frame).tolist() == [1, 0, 1, 2, 3]


# --- made-up people -------------------------------------------------------------------------------------


def test_pii_has_one_person_per_train_row(people, raw_train_split):
    assert len(people) == 32_561
    assert list(people.columns[:4]) == ["Name", "DOB", "SSN", "Zip"]
    pd.testing.assert_frame_equal(people[ADULT_COLUMNS], raw_train_split)


def test_pii_names_and_ssns_are_unique(people):
    assert people["Name"].is_unique
    assert people["SSN"].is_unique
    assert people["SSN"].str.fullmatch(r"\d{3}-\d{2}-\d{4}").all()


def test_pii_date_of_birth_gives_the_age_on_the_census_date(people):
    dob = people["DOB"]
    assert pd.api.types.is_datetime64_any_dtype(dob)
    before_birthday = (dob.dt.month > CENSUS_DATE.month) | (
        (dob.dt.month == CENSUS_DATE.month) & (dob.dt.day > CENSUS_DATE.day)
    )
    age_on_census_date = CENSUS_DATE.year - dob.dt.year - before_birthday.astype(int)
    np.testing.assert_array_equal(age_on_census_date.to_numpy(), people["age"].to_numpy())
    assert CENSUS_DATE == dt.date(1994, 7, 1)


def test_pii_zip_codes_are_five_digit_strings(people, voters):
    for frame in (people, voters):
        assert pd.api.types.is_string_dtype(frame["Zip"])
        assert frame["Zip"].str.fullmatch(r"\d{5}").all()


def test_most_people_are_unique_on_zip_and_date_of_birth(people):
    assert uniqueness(people, ["Zip", "DOB"]) > 0.5


def test_voter_roll_overlaps_the_people_partially_and_lists_others(people, voters):
    assert list(voters.columns) == ["Name", "DOB", "Zip", "Party"]
    assert pd.api.types.is_datetime64_any_dtype(voters["DOB"])
    key = ["Name", "DOB"]
    in_adult = voters.merge(people[key], on=key, how="left", indicator=True)["_merge"] == "both"
    assert 0 < in_adult.sum() < len(people)  # some of the people, not all
    assert (~in_adult).sum() > 0  # and people who are not in Adult
    assert set(voters["Party"]) == {"Democratic", "Republican", "Independent"}


def test_pii_is_the_same_on_every_load(people):
    pd.testing.assert_frame_equal(load_adult_with_pii().head(100), people.head(100))
    assert people.loc[0, "Name"] == load_adult_with_pii().loc[0, "Name"]


@pytest.mark.parametrize("loader", [load_adult_with_pii, load_voter_roll, lambda: load_adult(split="train", dropna=False)])
def test_a_changed_frame_never_reaches_the_next_load(loader):
    """Hidden tests reload the data they compare against: what a notebook cell did to its copy must not show."""
    changed = loader()
    column = changed.columns[-1]
    original = changed[column].copy()
    changed.loc[:, column] = changed[column].iloc[0]  # in place, as `people.loc[:, "income"] = ">50K"` in a cell
    reloaded = loader()
    assert reloaded is not changed
    pd.testing.assert_series_equal(reloaded[column], original)


# --- working directory independence ----------------------------------------------------------------


def test_loaders_work_from_another_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert len(load_adult(split="test", dropna=False)) == 16_281
    assert len(load_adult_with_pii()) == 32_561
    assert len(load_voter_roll()) > 0
    assert age_sex_categories().size == 45_222
    assert list(tmp_path.iterdir()) == []  # and write nothing there


def test_loaders_read_package_data_through_importlib_resources():
    source = inspect.getsource(datasets)
    assert "resources.files(" in source
    assert "__file__" not in source and "Path(" not in source and "getcwd" not in source


def test_reexported_from_the_package():
    assert dplib.datasets is datasets
    for name in datasets.__all__:
        assert hasattr(datasets, name)
