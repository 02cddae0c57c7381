"""Every CSV field and every line printed is safe (issue 29, item 8).

A notebook named ``=HYPERLINK(...)`` put a field starting with ``=`` into ``grades.csv`` (a formula when
the file is opened in a spreadsheet), and escape sequences quoted back in a review flag reached the
instructor's terminal raw (``ESC ]0;...BEL`` retitles the window, ``ESC [2J`` clears the screen).
:mod:`dpgrader.safe_output` neutralizes both; the last test grades such a class through the command line.
"""

from __future__ import annotations

import csv

import nbformat
import pytest

from dpgrader import Course, notebooks_of
from dpgrader.classroom.cli import main
from dpgrader.grading.export import GradeRow, summarize
from dpgrader.course import REPO_ROOT
from dpgrader.outcomes import Flag, Outcome, Status, read_outcomes, write_outcomes
from dpgrader.review import review_flags
from dpgrader.safe_output import FORMULA_START, csv_field, flag_text, from_csv_field, one_line, terminal_text

ASSIGNMENT = "01_definition"
SOURCE = notebooks_of(REPO_ROOT / "source" / ASSIGNMENT)[0]
TITLE, CLEAR = "\x1b]0;owned\x07", "\x1b[2J"
CONTROLS = ["\x1b", "\x07", "\r", "\x08", "\x00", "\x7f", "\x9b", "\u202e", "\u2066"]  # C0, DEL, C1 (CSI), bidi


# --- the functions ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["=HYPERLINK(\"http://x\",\"y\")", "+1+2", "-2+3", "@SUM(A1:A2)", "\tx", "\r=1", "'=1"])
def test_a_field_a_spreadsheet_would_run_gets_a_quote_and_reads_back_unchanged(text):
    field = csv_field(text)
    assert field == "'" + text and from_csv_field(field) == text


@pytest.mark.parametrize("value", ["-1.5", "+3", "-2e-5", "12", "ok", "a=b", "", -1.5, 3, None, True])
def test_numbers_and_plain_text_are_left_as_they_are(value):
    assert csv_field(value) == value
    assert not isinstance(value, str) or from_csv_field(value) == value


@pytest.mark.parametrize("control", CONTROLS)
def test_control_characters_are_escaped_for_the_terminal_and_in_flags(control):
    text = f"before{control}after"
    assert control not in terminal_text(text) and control not in flag_text(text) and control not in one_line(text)
    assert terminal_text(text).startswith("before\\") and terminal_text(text).endswith("after")
    assert terminal_text("line one\n\tline two") == "line one\n\tline two"  # layout is kept on the terminal
    assert one_line("a\nb") == "a\\x0ab" and flag_text("a; b\nc") == "a, b\\x0ac"  # a flag is one line, no ";"


def test_the_summary_holds_no_control_character_and_no_forged_line():
    rows = [GradeRow(f"x{CLEAR}", "", "", ASSIGNMENT, 7.0, 14.0, 0.0, 50.0, False, Status.OK,
                     flags=(Flag("tampering", TITLE),)),
            GradeRow("y", "", "", ASSIGNMENT, 0.0, 14.0, 0.0, None, False, Status.UNREADABLE,
                     message=f"bad\ny/{ASSIGNMENT}: ok\u202e")]
    text = summarize(rows)
    assert not any(control in text for control in CONTROLS)
    assert len(text.splitlines()) == 8 and "\\x1b]0,owned\\x07" in text and "bad\\x0ay/" in text  # a flag has no ";"


def test_the_outcomes_file_neutralizes_formulas_and_reads_back_exactly(tmp_path):
    outcome = Outcome("=2+5", ASSIGNMENT, Status.UNREADABLE, '=HYPERLINK("x","y").ipynb is not a readable notebook',
                      0.0, 14.0, 1.5, (Flag.from_text("-x flag"), Flag("tampering", "@y", "cell 2", 3)), True, -1.5)
    write_outcomes(tmp_path, [outcome])
    with open(tmp_path / "autograded" / "grading_outcomes.csv", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["student"] == "'=2+5" and row["message"].startswith("'=") and row["flags"] == "'-x flag; tampering: @y (cell 2, line 3)"
    assert row["kernel_cpu"] == "-1.5"
    (read,) = read_outcomes(tmp_path).values()
    assert read == outcome  # every field of every flag too (flag_fields), not only their text


def test_a_review_flag_quoting_escape_sequences_is_one_escaped_line(tmp_path):
    notebook = nbformat.read(str(SOURCE), as_version=4)
    notebook.cells.insert(2, nbformat.v4.new_code_cell(f"!echo {TITLE}{CLEAR}; ls"))
    nbformat.write(notebook, str(tmp_path / "n.ipynb"))
    (flag,) = map(str, review_flags(tmp_path / "n.ipynb", SOURCE))
    assert flag.startswith("process control: runs a shell command (!echo \\x1b]0,owned\\x07\\x1b[2J, ls)")
    assert not any(control in flag for control in CONTROLS) and ";" not in flag


# --- a class graded through the command line ----------------------------------------------------------------------


@pytest.mark.pipeline
def test_a_hostile_class_graded_from_the_command_line_writes_safe_csv_and_prints_no_escape(tmp_path, capfd):
    """The student ``eve`` hands in her notebook with a shell command quoting escape sequences, and a second notebook
    named ``=HYPERLINK("x","y").ipynb`` (a path cannot hold the ``//`` of a URL); the student folders ``=2+5`` and
    ``evil<ESC>[2J`` are refused (not ids, :mod:`dpgrader.ids`) and written to the CSV files all the same. Graded with ``python -m dpgrader.classroom grade`` (sandbox on): no field of grades.csv, of the
    outcomes or of the mistakes CSV starts with a formula character, and nothing printed holds an ESC or a BEL."""
    course = Course.from_repo(tmp_path / "course", [ASSIGNMENT])
    release = course.generate_assignment(ASSIGNMENT)
    notebook = nbformat.read(str(notebooks_of(release)[0]), as_version=4)
    notebook.cells.insert(2, nbformat.v4.new_code_cell(f"!echo {TITLE}{CLEAR} > /dev/null"))
    folder = course.root / "submitted" / "eve" / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(notebook, str(folder / SOURCE.name))
    (folder / '=HYPERLINK("x","y").ipynb').write_text("=1+1")  # not JSON: graded 0 as unreadable, named in the message
    for student in ("=2+5", f"evil{CLEAR}"):
        refused = course.root / "submitted" / student / ASSIGNMENT
        refused.mkdir(parents=True)
        nbformat.write(notebook, str(refused / SOURCE.name))
    main(["--course", str(course.root), "grade", "--workers", "2"])
    printed = capfd.readouterr()
    assert "\x1b" not in printed.out + printed.err and "\x07" not in printed.out + printed.err
    assert "runs a shell command (!echo \\x1b]0,owned\\x07\\x1b[2J" in printed.out, printed.out  # quoted, escaped

    files = [course.root / "grades.csv", course.root / "autograded" / "grading_outcomes.csv",
             *sorted((course.root / "mistakes").glob("*.csv"))]
    assert len(files) == 3
    fields = []
    for path in files:
        with open(path, newline="") as handle:
            fields += [field for row in csv.reader(handle) for field in row]
    assert not [field for field in fields if field.startswith(FORMULA_START)]
    with open(course.root / "grades.csv", newline="") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    hostile = rows["eve"]
    assert {"'=2+5", f"evil{CLEAR}", "=2+5"}.isdisjoint(rows), "a folder name that is no id never enters the gradebook"
    with open(course.root / "autograded" / "grading_outcomes.csv", newline="") as handle:
        outcomes = {row["student"]: row for row in csv.DictReader(handle)}
    # Refused, and recorded: a formula neutralized, an escape sequence kept as data (printed escaped, checked above).
    assert outcomes["'=2+5"]["status"] == outcomes[f"evil{CLEAR}"]["status"] == Status.REFUSED
    assert hostile["message"].startswith("'=HYPERLINK(\"x\",\"y\").ipynb is not a readable notebook")
    assert "runs a shell command (!echo \\x1b]0,owned\\x07\\x1b[2J" in hostile["flags"]
    assert not any(control in row[key] for row in rows.values() for key in ("flags", "message") for control in CONTROLS)
