"""Generate the made-up people behind ``load_adult_with_pii`` and ``load_voter_roll``.

Run once (``python scripts/make_pii_data.py``, needs the ``data`` extra: Faker); the
output is committed to ``dplib/data/`` so every install sees the same people.

- Every Adult train row gets a unique made-up Name (matching its sex), an SSN, a Zip
  code from one made-up county (about 40 codes, some far more populous than others)
  and a date of birth that gives the row's ``age`` on ``dplib.datasets.CENSUS_DATE``.
- The voter roll lists about half of those people (a few have since moved to another
  Zip) plus made-up neighbours who are not in Adult, with Name, DOB, Zip and Party.
"""

from __future__ import annotations

import datetime as dt
import gzip
import io
from pathlib import Path

import numpy as np
import pandas as pd
from faker import Faker

from dplib.datasets import CENSUS_DATE, load_adult

SEED = 2024
N_ZIPS = 40
VOTER_SHARE = 0.5
MOVED_SHARE = 0.05
N_OTHER_VOTERS = 8_000
DATA_DIR = Path(__file__).resolve().parents[1] / "dplib" / "data"


def birth_dates(ages: np.ndarray, rng: np.random.Generator) -> list[dt.date]:
    """A date of birth for each age: born between age+1 years and age years before CENSUS_DATE."""
    dates = []
    for age, fraction in zip(ages, rng.random(len(ages))):
        latest = CENSUS_DATE.replace(year=CENSUS_DATE.year - int(age))
        earliest = CENSUS_DATE.replace(year=CENSUS_DATE.year - int(age) - 1) + dt.timedelta(days=1)
        span = (latest - earliest).days
        dates.append(earliest + dt.timedelta(days=int(fraction * (span + 1))))
    return dates


def county_zips(fake: Faker, rng: np.random.Generator) -> tuple[list[str], np.ndarray]:
    """Zip codes of one county and how populous each is (Zipf-like weights)."""
    first = int(fake.zipcode_in_state("OH")[:3]) * 100
    zips = [f"{first + i:05d}" for i in sorted(rng.choice(100, size=N_ZIPS, replace=False))]
    weights = 1.0 / np.arange(1, N_ZIPS + 1) ** 0.8
    rng.shuffle(weights)
    return zips, weights / weights.sum()


def unique_names(people: pd.DataFrame, sexes: pd.Series, taken: set[str], fake: Faker) -> dict[int, str]:
    """A fresh name for every later holder of a name already used, keyed by row.

    ``fake.unique`` keeps one set per method, so ``name_male`` and ``name_female`` can
    both return a unisex name ("Jordan Lee"). Drawn after everything else, so no other
    value changes.
    """
    seen: set[str] = set()
    renamed = {}
    for row, (name, sex) in enumerate(zip(people["Name"], sexes)):
        if name in seen:
            draw = fake.name_male if sex == "Male" else fake.name_female
            new = draw()
            while new in taken:
                new = draw()
            taken.add(new)
            renamed[row] = new
        seen.add(name)
    return renamed


def write_csv_gz(frame: pd.DataFrame, path: Path) -> None:
    """Write a gzip CSV byte-for-byte reproducibly (no timestamp in the header)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9, mtime=0) as handle:
        handle.write(frame.to_csv(index=False, lineterminator="\n").encode())
    path.write_bytes(buffer.getvalue())


def main() -> None:
    Faker.seed(SEED)
    fake = Faker("en_US")
    rng = np.random.default_rng(SEED)
    adult = load_adult(split="train", dropna=False)
    zips, weights = county_zips(fake, rng)

    names = [fake.unique.name_male() if sex == "Male" else fake.unique.name_female() for sex in adult["sex"]]
    people = pd.DataFrame(
        {
            "Name": names,
            "DOB": birth_dates(adult["age"].to_numpy(), rng),
            "SSN": [fake.unique.ssn() for _ in range(len(adult))],
            "Zip": rng.choice(zips, size=len(adult), p=weights),
        }
    )

    voters = people.sample(frac=VOTER_SHARE, random_state=rng.integers(2**32))[["Name", "DOB", "Zip"]].copy()
    voters["person"] = voters.index  # which Adult row each listed voter is, until names are made unique
    moved = rng.random(len(voters)) < MOVED_SHARE
    voters.loc[moved, "Zip"] = rng.choice(zips, size=int(moved.sum()), p=weights)
    other_ages = rng.choice(adult["age"].to_numpy(), size=N_OTHER_VOTERS)
    others = pd.DataFrame(
        {
            "Name": [fake.unique.name() for _ in range(N_OTHER_VOTERS)],
            "DOB": birth_dates(other_ages, rng),
            "Zip": rng.choice(zips, size=N_OTHER_VOTERS, p=weights),
        }
    )
    voters = pd.concat([voters, others], ignore_index=True)
    voters = voters.sample(frac=1.0, random_state=rng.integers(2**32)).reset_index(drop=True)
    voters["Party"] = rng.choice(["Democratic", "Republican", "Independent"], size=len(voters), p=[0.4, 0.4, 0.2])

    renamed = unique_names(people, adult["sex"], set(people["Name"]) | set(voters["Name"]), fake)
    people.loc[list(renamed), "Name"] = list(renamed.values())
    voters["Name"] = voters["person"].map(renamed).fillna(voters["Name"])
    voters = voters.drop(columns="person")

    write_csv_gz(people, DATA_DIR / "adult_pii.csv.gz")
    write_csv_gz(voters, DATA_DIR / "voter_roll.csv.gz")
    unique = (~people.duplicated(["Zip", "DOB"], keep=False)).mean()
    print(f"{len(people)} people, {len(voters)} voters; unique on Zip + DOB: {unique:.1%}")


if __name__ == "__main__":
    main()
