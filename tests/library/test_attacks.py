"""Tests for dplib.attacks.linkage: uniqueness, the linkage attack and the differencing attack.

Small hand-made frames pin down the exact semantics (duplicates are not unique, ambiguous
matches on either side are dropped); the bundled made-up PII shows the attacks at scale.
"""

import numpy as np
import pandas as pd
import pytest

import dplib
from dplib.attacks import linkage as attacks_module
from dplib.attacks.linkage import differencing_attack, reidentify, uniqueness


# --- uniqueness -------------------------------------------------------------------------------


def test_uniqueness_counts_every_duplicate_as_not_unique():
    table = pd.DataFrame({"zip": [1, 1, 2, 3], "age": [30, 30, 40, 50]})
    assert uniqueness(table, ["zip", "age"]) == 0.5  # not 0.75: both copies of (1, 30) are shared


def test_uniqueness_examples():
    assert uniqueness(pd.DataFrame({"a": [1, 1, 1, 2]}), ["a"]) == 0.25
    assert uniqueness(pd.DataFrame({"a": [1, 2, 3]}), ["a"]) == 1.0
    assert uniqueness(pd.DataFrame({"a": [7, 7]}), ["a"]) == 0.0
    assert uniqueness(pd.DataFrame({"a": [5]}), ["a"]) == 1.0
    assert isinstance(uniqueness(pd.DataFrame({"a": [1, 2]}), ["a"]), float)


def test_uniqueness_grows_with_more_columns():
    table = pd.DataFrame({"zip": [1, 1, 1, 2], "sex": ["F", "M", "M", "F"], "dob": [1, 2, 3, 1]})
    assert uniqueness(table, ["zip"]) == 0.25
    assert uniqueness(table, ["zip", "sex"]) == 0.5
    assert uniqueness(table, ["zip", "sex", "dob"]) == 1.0


def test_uniqueness_accepts_a_single_column_name_and_treats_missing_values_as_values():
    assert uniqueness(pd.DataFrame({"a": [1, 2, 2]}), "a") == pytest.approx(1 / 3)
    assert uniqueness(pd.DataFrame({"a": [np.nan, np.nan, 1.0]}), ["a"]) == pytest.approx(1 / 3)


def test_uniqueness_on_zip_and_date_of_birth(people):
    assert uniqueness(people, ["Zip", "DOB"]) > 0.5
    assert uniqueness(people, ["Zip"]) == 0.0
    assert uniqueness(people, ["Zip", "DOB"]) > uniqueness(people, ["Zip", "age"])


@pytest.mark.parametrize(
    ("columns", "message"),
    [([], "columns must name at least one column"),
     (["zip", "nope"], r"columns names columns that are not in the table: \['nope'\]")],
)
def test_uniqueness_validation(columns, message):
    with pytest.raises(ValueError, match=message):
        uniqueness(pd.DataFrame({"zip": [1, 2]}), columns)


def test_uniqueness_rejects_an_empty_table():
    with pytest.raises(ValueError, match="df must have at least one row"):
        uniqueness(pd.DataFrame({"zip": []}), ["zip"])


# --- reidentify -------------------------------------------------------------------------------------


def test_reidentify_docstring_example():
    deid = pd.DataFrame({"Zip": ["01", "01", "02"], "DOB": [1, 2, 3], "income": ["a", "b", "c"]})
    voters = pd.DataFrame({"Name": ["Ann", "Bob", "Cy"], "Zip": ["01", "02", "02"], "DOB": [1, 3, 3]})
    result = reidentify(deid, voters, ["Zip", "DOB"])
    assert result.index.tolist() == [0]
    assert result.loc[0, "Name"] == "Ann" and result.loc[0, "income"] == "a"
    assert list(result.columns) == ["Zip", "DOB", "income", "Name"]


def test_reidentify_drops_ambiguous_matches_on_either_side():
    deid = pd.DataFrame(
        {"zip": [1, 1, 2, 3, 4], "dob": [10, 10, 20, 30, 40], "secret": ["s0", "s1", "s2", "s3", "s4"]},
        index=[100, 101, 102, 103, 104],
    )
    aux = pd.DataFrame({"Name": ["Ann", "Bob", "Cy", "Di", "Ed"], "zip": [1, 2, 2, 3, 9], "dob": [10, 20, 20, 30, 90]})
    result = reidentify(deid, aux, ["zip", "dob"])
    # (1, 10): two de-identified rows -> dropped although one voter matches.
    # (2, 20): one de-identified row, two voters -> dropped.
    # (3, 30): unique on both sides -> Di.  (4, 40): no voter -> dropped.
    assert result.index.tolist() == [103]
    assert result.loc[103, "Name"] == "Di" and result.loc[103, "secret"] == "s3"


def test_reidentify_keeps_the_index_and_its_name():
    deid = pd.DataFrame({"k": [1, 2]}, index=pd.Index(["r1", "r2"], name="record"))
    aux = pd.DataFrame({"Name": ["Ann", "Bob"], "k": [2, 1]})
    result = reidentify(deid, aux, "k")
    assert result.index.name == "record"
    assert result.loc["r1", "Name"] == "Bob" and result.loc["r2", "Name"] == "Ann"


def test_reidentify_with_no_match_is_empty():
    deid = pd.DataFrame({"k": [1, 2]})
    result = reidentify(deid, pd.DataFrame({"Name": ["Ann"], "k": [3]}), ["k"])
    assert len(result) == 0 and "Name" in result.columns


def test_reidentify_validation():
    deid = pd.DataFrame({"k": [1]})
    with pytest.raises(ValueError, match=r"keys names columns that are not in the table: \['z'\]"):
        reidentify(deid, pd.DataFrame({"Name": ["Ann"], "k": [1], "z": [1]}), ["z"])
    with pytest.raises(ValueError, match=r"keys names columns that are not in the table: \['Name'\]"):
        reidentify(deid, pd.DataFrame({"k": [1]}), ["k"])
    with pytest.raises(ValueError, match="keys must name at least one column"):
        reidentify(deid, pd.DataFrame({"Name": ["Ann"], "k": [1]}), [])


def test_reidentify_links_the_bundled_data(people, voters):
    deidentified = people.drop(columns=["Name", "SSN"])
    linked = reidentify(deidentified, voters, ["Zip", "DOB"])
    assert len(linked) > 0.3 * len(people)
    assert linked.index.is_unique
    # Every link is unique on both sides ...
    assert not deidentified.loc[linked.index].duplicated(["Zip", "DOB"]).any()
    assert (deidentified.groupby(["Zip", "DOB"]).size().loc[list(zip(linked["Zip"], linked["DOB"]))] == 1).all()
    assert (voters.groupby(["Zip", "DOB"]).size().loc[list(zip(linked["Zip"], linked["DOB"]))] == 1).all()
    # ... and almost always names the right person (a few voters moved or are namesakes by birth date).
    correct = (linked["Name"] == people.loc[linked.index, "Name"]).mean()
    assert correct > 0.9


# --- differencing_attack -------------------------------------------------------------------------------


def test_differencing_attack_small_frame():
    frame = pd.DataFrame({"Name": ["Ann", "Bob", "Cy", "Di"], "income": [">50K", "<=50K", ">50K", "<=50K"]})
    assert differencing_attack(frame, "Ann") is True
    assert differencing_attack(frame, "Bob") is False
    assert differencing_attack(frame, "Cy") is True
    assert differencing_attack(frame, "Di") is False


def test_differencing_attack_alone_in_the_table():
    assert differencing_attack(pd.DataFrame({"Name": ["Ann"], "income": [">50K"]}), "Ann") is True
    assert differencing_attack(pd.DataFrame({"Name": ["Ann"], "income": ["<=50K"]}), "Ann") is False


def test_differencing_attack_on_the_bundled_people(people):
    rng = np.random.default_rng(0)
    rows = np.r_[np.arange(10), rng.choice(len(people), size=20, replace=False)]
    for row in rows:
        name, income = people.loc[row, "Name"], people.loc[row, "income"]
        assert differencing_attack(people, name) == (income == ">50K"), name


@pytest.mark.parametrize("name", ["Nobody Atall", "Ann"])
def test_differencing_attack_needs_exactly_one_match(name):
    frame = pd.DataFrame({"Name": ["Ann", "Ann", "Bob"], "income": [">50K", "<=50K", ">50K"]})
    with pytest.raises(ValueError, match=f"name must match exactly one row, got '{name}' matching [02]"):
        differencing_attack(frame, name)


def test_differencing_attack_needs_name_and_income_columns():
    with pytest.raises(ValueError, match=r"df names columns that are not in the table: \['income'\]"):
        differencing_attack(pd.DataFrame({"Name": ["Ann"]}), "Ann")


def test_reexported_from_the_package():
    for name in attacks_module.__all__:
        assert getattr(dplib, name) is getattr(attacks_module, name)
