"""The class grader writes, byte for byte, what it wrote before its route was rewritten (issue 38).

One small class (:mod:`helpers.golden_class`: 8 students, 2 assignments, every kind of outcome the
grader meets in a class: full marks, written answers pending, review flags, a copy of a classmate
and of the reference, a dead kernel, a timed-out cell, an unreadable and a missing notebook, two
refused submissions) is graded once through the command line. Every file it writes (grades.csv,
grading_outcomes.csv, graded and feedback notebooks, similarity reports, mistakes pages and CSVs,
the logs), the gradebook's rows and what the command printed are compared with the goldens in
``tests/grader/golden_class.json`` (the text of each file, the SHA-256 of a large one), captured from the code before the rewrite (volatile parts
normalised: times, durations, CPU seconds, worker ids, temporary paths, the project folder in tracebacks).

Intended changes, applied here and nowhere else:

- ``grading_outcomes.csv`` has one more column, ``flag_fields``: each flag's fields (kind, reason,
  cell, line, anonymous reason), so that ``export`` and ``--resume`` read the flags back whole
  instead of parsing their text. The other columns are compared as they were.
- Feedback pages are no longer parsed and written out again by BeautifulSoup (nbconvert's pass, half of a page's
  export; issue 40) unless an image lacks ``alt``: each page is compared after that pass, which makes it the page
  captured.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from dpgrader.outcomes import Flag
from helpers.golden_class import as_kept, build_golden_class, grade_golden_class, read_golden, snapshot

pytestmark = [pytest.mark.pipeline, pytest.mark.xdist_group("golden_class")]

GOLDEN = read_golden()


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    course = build_golden_class(tmp_path_factory.mktemp("golden") / "class")
    return snapshot(course, *grade_golden_class(course))


def _without_flag_fields(text: str) -> tuple[str, list[tuple[str, list]]]:
    """``grading_outcomes.csv`` without its ``flag_fields`` column, and each row's flags text and fields."""
    rows = list(csv.reader(io.StringIO(text)))
    column = rows[0].index("flag_fields")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    flags = []
    for index, row in enumerate(rows):
        if index:
            flags.append((row[rows[0].index("flags")], json.loads(row[column]) if row[column] else []))
        writer.writerow(row[:column] + row[column + 1:])
    return out.getvalue(), flags


def test_the_grader_writes_the_same_files(written):
    assert sorted(written) == sorted(GOLDEN)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_each_file_is_what_it_was(written, name, tmp_path):
    got = written.get(name)
    assert got is not None, f"{name} was not written"
    if name == "autograded/grading_outcomes.csv":
        got, flags = _without_flag_fields(got)
        for text, fields in flags:  # the fields are the flags the text shows, whole
            assert "; ".join(str(Flag.from_fields(f)) for f in fields) == text.lstrip("'")
    if as_kept(name, got, GOLDEN) != GOLDEN[name]:
        (tmp_path / "written").write_text(got)
        pytest.fail(f"{name} differs from its golden in tests/grader/golden_class.json (written: {tmp_path / 'written'})")
