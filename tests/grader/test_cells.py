"""dpgrader.cells: nbgrader's cell metadata and the hidden-test region, read in one place.

The hidden region is checked against nbgrader's own ``ClearHiddenTests`` on every cell nbgrader
releases, and on the cells it refuses (unterminated, nested) against the rule that no hidden line
is ever visible. The metadata predicates are checked against :mod:`nbgrader.utils`.
"""

from __future__ import annotations

import itertools

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_output

from dpgrader.cells import (
    HIDDEN_TESTS,
    SECRET_REGIONS,
    LineKind,
    cell_name,
    cell_source,
    grade_id_of,
    hidden_test_region,
    is_grade,
    is_instructor_cell,
    is_locked,
    is_read_only,
    is_solution,
    is_task,
    is_test_cell,
    mark_lines,
    nbgrader_metadata,
    points,
    visible_lines,
    visible_part,
)

BEGIN, END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"

# Cells nbgrader releases: its ClearHiddenTests and visible_part must agree on every one.
RELEASABLE = {
    "one region": f"check(f(1))\n{BEGIN}\ncheck(f(2))\n{END}\nprint('done')",
    "two regions": f"a()\n{BEGIN}\nsecret_one()\n{END}\nb()\n{BEGIN}\nsecret_two()\n{END}\nc()",
    "indented markers": f"def test():\n    a()\n    {BEGIN}\n    secret()\n    {END}\n    b()\ntest()",
    "crlf": f"a()\r\n{BEGIN}\r\nsecret()\r\n{END}\r\nb()",
    "marker in a string": f'print("{BEGIN[4:]}")\nsecret()\nprint("{END[4:]}")\nb()',
    "stray end": f"a()\n{END}\nb()",
    "no region": "a()\n\nb()  ",
    "lowercase is no marker": "a()\n### begin hidden tests\nb()\n### end hidden tests",
    "region at the end": f"a()\n{BEGIN}\nsecret()\n{END}",
}


def released(source: str) -> str:
    """The cell as nbgrader's ``ClearHiddenTests`` releases it."""
    from nbgrader.preprocessors import ClearHiddenTests

    cell = new_code_cell(source, metadata={"nbgrader": {"grade": True, "solution": False, "grade_id": "t", "points": 1}})
    ClearHiddenTests()._remove_hidden_test_region(cell)
    return cell.source


@pytest.mark.parametrize("name", sorted(RELEASABLE))
def test_visible_part_is_the_cell_nbgrader_releases(name):
    assert visible_part(RELEASABLE[name]) == released(RELEASABLE[name])


def test_no_hidden_line_survives_in_the_visible_part():
    for name, source in RELEASABLE.items():
        visible = visible_part(source)
        assert "secret" not in visible, name
        assert BEGIN not in visible and END not in visible, name


def test_two_regions_are_both_hidden_and_what_is_between_them_visible():
    source = RELEASABLE["two regions"]
    assert visible_part(source) == "a()\nb()\nc()"
    assert hidden_test_region(source) == "secret_one()\nsecret_two()"


def test_indented_markers_are_markers_and_their_region_hidden():
    assert visible_part(RELEASABLE["indented markers"]) == "def test():\n    a()\n    b()\ntest()"


def test_crlf_cells_are_cut_at_newline_keeping_the_carriage_return_as_nbgrader_does():
    assert visible_part(RELEASABLE["crlf"]) == "a()\r\nb()"
    assert visible_lines(RELEASABLE["crlf"], drop_hidden=True) == ["a()", "b()"]


def test_a_marker_inside_a_string_is_a_marker_as_for_nbgrader():
    # nbgrader matches a marker anywhere in a line: the release hides what follows it, so must we
    assert visible_part(RELEASABLE["marker in a string"]) == "b()"


def test_lowercase_markers_are_not_markers_because_nbgrader_releases_them():
    assert visible_part(RELEASABLE["lowercase is no marker"]) == RELEASABLE["lowercase is no marker"]


def test_an_unterminated_region_hides_everything_to_the_end_of_the_cell():
    from nbgrader.preprocessors import ClearHiddenTests

    source = f"a()\n{BEGIN}\nsecret()\nmore_secret()"
    with pytest.raises(RuntimeError):  # nbgrader refuses to release it; we fail closed
        ClearHiddenTests()._remove_hidden_test_region(new_code_cell(source))
    assert visible_part(source) == "a()"
    assert hidden_test_region(source) == "secret()\nmore_secret()"


def test_a_nested_region_stays_hidden_until_its_own_end_marker():
    source = f"a()\n{BEGIN}\nouter()\n  {BEGIN}\ninner()\n  {END}\nstill_hidden()\n{END}\nb()"
    assert visible_part(source) == "a()\nb()"
    assert "still_hidden()" in hidden_test_region(source)


def test_a_line_with_both_markers_opens_a_region():
    source = f"a()\n# {BEGIN[4:]} ... {END[4:]}\nsecret()\n{END}\nb()"
    assert visible_part(source) == "a()\nb()"


def test_mark_lines_names_every_line():
    kinds = [m.kind for m in mark_lines(f"a\n{BEGIN}\nb\n{BEGIN}\nc\n{END}\nd\n{END}\ne\n{END}")]
    assert kinds == [LineKind.VISIBLE, LineKind.OPEN, LineKind.HIDDEN, LineKind.MARKER, LineKind.HIDDEN,
                     LineKind.MARKER, LineKind.HIDDEN, LineKind.MARKER, LineKind.VISIBLE, LineKind.MARKER]


def test_secret_regions_nest_across_kinds():
    source = f"{BEGIN}\n### BEGIN SOLUTION\nanswer()\n### END SOLUTION\nafter_solution()\n{END}\nvisible()"
    kinds = {line: kind for line, kind in mark_lines(source, SECRET_REGIONS)}
    assert kinds["answer()"] is kinds["after_solution()"] is LineKind.HIDDEN
    assert kinds["visible()"] is LineKind.VISIBLE
    assert mark_lines(source)[2].kind is LineKind.HIDDEN, "the default regions are the hidden tests alone"
    assert mark_lines("x\n### BEGIN SOLUTION\ny", (HIDDEN_TESTS,))[2].kind is LineKind.VISIBLE


def test_an_end_marker_of_an_outer_region_does_not_close_the_inner_one():
    source = f"### BEGIN SOLUTION\n{BEGIN}\nsecret()\n### END SOLUTION\nstill_secret()\n{END}\n### END SOLUTION\nb()"
    assert [line for line, kind in mark_lines(source, SECRET_REGIONS) if kind is LineKind.VISIBLE] == ["b()"]


def test_visible_lines_drop_blank_lines_and_trailing_spaces():
    assert visible_lines("a()  \n\n   \nb()") == ["a()", "b()"]
    assert visible_lines(f"a()\n{BEGIN}\ns()\n{END}") == ["a()", BEGIN, "s()", END], "markers kept unless asked"
    assert visible_lines(f"a()\n{BEGIN}\ns()\n{END}", drop_hidden=True) == ["a()"]


def test_the_feedback_review_and_mistakes_read_the_one_parser():
    import dpgrader.cells
    from dpgrader.classroom import mistakes
    from dpgrader.review import reading as review_cells

    assert review_cells.visible_part is mistakes.visible_part is dpgrader.cells.visible_part


@pytest.mark.parametrize("source, expected", [
    (f"a()\n{BEGIN}\nsecret()", "a()\n# hidden"),  # unterminated
    (f"a()\n    {BEGIN}\nsecret()\n    {END}\nb()", "a()\n    # hidden\nb()"),  # the placeholder keeps the indent
    (f"{BEGIN}\none()\n{END}\nb()\n{BEGIN}\ntwo()\n{END}", "# hidden\nb()\n# hidden"),  # one per region
    (f"{BEGIN}\n{BEGIN}\ninner()\n{END}\nouter()\n{END}\nb()", "# hidden\nb()"),  # nested: one, all hidden
])
def test_feedback_replaces_each_hidden_region_by_one_placeholder(source, expected):
    from dpgrader.preprocessors import HideHiddenTests

    cell = new_code_cell(source, metadata={"nbgrader": {"grade": True, "solution": False, "grade_id": "t", "points": 1}})
    cell.outputs = [new_output("stream", name="stdout", text="printed\n")]
    hide = HideHiddenTests(placeholder="# hidden")
    cell, _ = hide.preprocess_cell(cell, {}, 0)
    assert cell.source == expected


# --- metadata --------------------------------------------------------------------------------------------

FLAGS = ("grade", "solution", "locked", "task")


def all_metadata():
    """Every combination of the four flags, each True, False or absent."""
    for values in itertools.product((True, False, None), repeat=len(FLAGS)):
        yield {flag: value for flag, value in zip(FLAGS, values) if value is not None}


def test_the_predicates_answer_as_nbgrader_utils_does():
    from nbgrader import utils

    for meta in all_metadata():
        cell = new_code_cell("x = 1", metadata={"nbgrader": dict(meta, grade_id="c")})
        assert is_grade(cell) == bool(utils.is_grade(cell)), meta
        assert is_solution(cell) == bool(utils.is_solution(cell)), meta
        assert is_task(cell) == bool(utils.is_task(cell)), meta
        assert is_locked(cell) == bool(utils.is_locked(cell)), meta
    bare = new_code_cell("x = 1")
    assert (is_grade(bare), is_solution(bare), is_locked(bare)) == (utils.is_grade(bare), utils.is_solution(bare),
                                                                   utils.is_locked(bare)) == (False, False, False)


def test_the_reviews_instructor_cell_is_locked_and_not_a_solution():
    for meta in all_metadata():
        cell = {"cell_type": "code", "metadata": {"nbgrader": meta}, "source": ""}
        assert is_instructor_cell(cell) == (bool(meta.get("locked")) and not meta.get("solution")), meta
        assert is_read_only(cell) == (is_instructor_cell(cell) and not meta.get("grade")), meta
        assert is_test_cell(cell) == (bool(meta.get("grade")) and not meta.get("solution")), meta


def test_a_test_cell_is_a_code_cell():
    markdown = new_markdown_cell("x", metadata={"nbgrader": {"grade": True, "solution": False}})
    assert is_grade(markdown) and not is_test_cell(markdown)


@pytest.mark.parametrize("metadata", [{}, {"nbgrader": None}, {"nbgrader": "grade"}, {"nbgrader": ["grade_id"]},
                                      {"nbgrader": 3}])
def test_missing_or_malformed_metadata_reads_as_none(metadata):
    cell = {"cell_type": "code", "metadata": metadata, "source": "x"}
    assert nbgrader_metadata(cell) == {}
    assert grade_id_of(cell) is None and points(cell) is None
    assert not (is_grade(cell) or is_solution(cell) or is_locked(cell) or is_test_cell(cell))
    assert cell_name(cell, 4) == "cell 4"


def test_a_cell_whose_metadata_is_not_a_dict_is_not_read_as_a_cell_without_metadata():
    assert nbgrader_metadata({"cell_type": "code"}) == nbgrader_metadata({"metadata": None}) == {}
    with pytest.raises(TypeError, match="metadata is a str"):  # the review and the copy check flag it (fail closed)
        nbgrader_metadata({"cell_type": "code", "metadata": "x"})


def test_metadata_is_the_cells_own_dict():
    cell = new_code_cell("x", metadata={"nbgrader": {"grade_id": "ex1", "points": 2, "grade": True}})
    nbgrader_metadata(cell)["comment"] = "seen"
    assert cell.metadata.nbgrader["comment"] == "seen"
    assert (grade_id_of(cell), cell_name(cell, 7), points(cell)) == ("ex1", "ex1", 2.0)


def test_cell_source_joins_a_list_of_lines():
    assert cell_source({"source": ["a\n", "b"]}) == "a\nb"
    assert cell_source({"source": "a\nb"}) == "a\nb"
    assert cell_source({}) == ""
