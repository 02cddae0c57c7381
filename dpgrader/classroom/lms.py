"""Grades out to a learning management system: the gradebook import file Canvas or Moodle documents.

``python -m dpgrader.classroom export --to canvas|moodle [--roster FILE]`` writes, from the same rows
as ``grades.csv`` (:func:`dpgrader.grading.export.export_grades`):

**Canvas** (Grades > Import; "How do I import grades in the Gradebook?",
https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807,
and the importer itself, instructure/canvas-lms ``app/models/gradebook_importer.rb``)::

    Student,ID,SIS User ID,SIS Login ID,Section,01_definition,02_laplace
    Points Possible,,,,,14,20
    "Lovelace, Ada",4711,S0001,ada,Section A,12,
    ...

The importer takes the first row as the header only if its columns are ``Student``, ``ID``, ``SIS
User ID``, ``SIS Login ID`` and ``Section`` in this order; each further column is an assignment
(matched by title, else created); a row whose first cell says ``Points Possible`` sets each
assignment's points. A student is matched by the Canvas user ``ID``, else the ``SIS User ID``, else
the ``SIS Login ID``, else by name (``Last, First`` or the full name). UTF-8, comma-separated.

**Moodle** (Grade administration > Import > CSV file; "Grade import",
https://docs.moodle.org/en/Grade_import, and ``grade/import/csv/classes/load_data.php``)::

    Email address,01_definition,02_laplace
    ada@example.edu,12,
    ...

One identifier column and one column per grade item. At import the instructor maps the identifier
column ("Map from") to the user field it holds ("Map to": ``useremail``, ``useridnumber`` or
``username``) and each assignment column to its grade item; the file's encoding is chosen there
(UTF-8 is the default). A user the identifier does not find stops the import.

In both files a cell is the assignment's score (after any late penalty, as in ``grades.csv``), and is
**empty while points await a person** (a written answer not graded yet, or a submission the grader
could not grade): Canvas takes an empty cell as no grade, and Moodle too (``''`` or ``-`` is "no
grade" for a column mapped to an existing grade item; create the grade items in Moodle first, since a
column imported as a *new* grade item keeps the empty value). A student who handed nothing in has
0, as in ``grades.csv``. Every text cell goes through :func:`dpgrader.safe_output.csv_field` (a
name like ``=HYPERLINK(...)`` is written ``'=HYPERLINK(...)``), and a name the Canvas importer would
read as its ``Points Possible`` row is replaced by the student's id.

**The roster** (``--roster FILE``) says who each gradebook student is in the LMS: a UTF-8 CSV file
(a byte-order mark, as Excel writes, is allowed) with a header and these columns, any order, only
``student_id`` required (:data:`ROSTER_FIELDS`)::

    student_id,name,canvas_id,sis_user_id,sis_login_id,section,email
    ada,"Lovelace, Ada",4711,S0001,ada,Section A,ada@example.edu

``student_id`` is the course's id (the gradebook's, the hub's user name); ``canvas_id`` the numeric
Canvas user id; ``sis_user_id`` / ``sis_login_id`` the institution's ids (Moodle's ``idnumber`` /
``username``). Without a roster, the gradebook says it: ``Last, First``, ``lms_user_id`` as the
Canvas id, the course id as the SIS login id, the student's e-mail.

A gradebook student the roster does not hold, or who lacks the identifier the LMS needs, is not
in the LMS file but **listed**: on the terminal and in ``<file>_missing.csv`` with every grade, so
no grade is lost (the command then exits 1). Roster students without a gradebook entry are left
out (their LMS grades are not touched) and counted.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dpgrader.course import Course
from dpgrader.grading.export import export_grades
from dpgrader.safe_output import csv_field

LMS = ("canvas", "moodle")
ROSTER_FIELDS = ("student_id", "name", "canvas_id", "sis_user_id", "sis_login_id", "section", "email")
CANVAS_STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_POINTS_ROW = "Points Possible"
#: Moodle's identifier column, by the user field it is mapped to at import: (header, roster column).
MOODLE_IDENTIFIERS = {"email": ("Email address", "email"), "idnumber": ("ID number", "sis_user_id"),
                      "username": ("Username", "sis_login_id")}
MISSING_FIELDS = ["student_id", "name", "reason"]


@dataclass(frozen=True)
class RosterEntry:
    """One student as the LMS knows them (every field but ``student_id`` may be empty)."""

    student_id: str
    name: str = ""
    canvas_id: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""
    email: str = ""


@dataclass(frozen=True)
class LmsExport:
    """What :func:`export_lms` wrote: the file, how many students and empty (pending) cells, who is missing."""

    lms: str
    path: Path
    students: int
    assignments: list[str]
    pending_cells: int
    missing: dict[str, str] = field(default_factory=dict)  # student id -> why they are not in the file
    missing_path: Path | None = None
    roster_only: list[str] = field(default_factory=list)  # roster students without a gradebook entry

    def summary(self) -> str:
        """Lines for the instructor's terminal (student ids are hostile: print them with ``say``)."""
        lines = [f"{self.lms}: {self.path} ({self.students} students, {len(self.assignments)} assignments; "
                 f"{self.pending_cells} cells left empty: points await a person)"]
        if self.roster_only:
            lines.append(f"{len(self.roster_only)} roster students have no gradebook entry and are left out: "
                         + ", ".join(self.roster_only))
        return "\n".join(lines)


def read_roster(path: Path) -> dict[str, RosterEntry]:
    """The roster file ``path`` (see the module), by student id; ``ValueError`` naming the file and line if malformed."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        header = [name.strip() for name in reader.fieldnames or []]
        unknown = sorted(set(header) - set(ROSTER_FIELDS))
        if "student_id" not in header or unknown:
            raise ValueError(f"roster {path}: the header must name student_id and only {', '.join(ROSTER_FIELDS)}"
                             + (f"; unknown column(s): {', '.join(unknown)}" if unknown else ""))
        reader.fieldnames = header
        roster: dict[str, RosterEntry] = {}
        for row in reader:
            entry = RosterEntry(**{key: (value or "").strip() for key, value in row.items() if key in ROSTER_FIELDS})
            where = f"roster {path}, line {reader.line_num}"
            if not entry.student_id:
                raise ValueError(f"{where}: student_id is empty")
            if entry.student_id in roster:
                raise ValueError(f"{where}: student_id {entry.student_id!r} is listed twice")
            if entry.canvas_id and not entry.canvas_id.isdigit():
                raise ValueError(f"{where}: canvas_id {entry.canvas_id!r} is not a Canvas user id (digits)")
            roster[entry.student_id] = entry
    return roster


def roster_from_gradebook(root: Path) -> dict[str, RosterEntry]:
    """The roster the gradebook itself gives: ``Last, First``, ``lms_user_id``, the course id as SIS login, e-mail."""
    from nbgrader.api import Gradebook

    with Gradebook(Course(root).gradebook_url) as gradebook:
        return {
            student.id: RosterEntry(
                student_id=student.id,
                name=", ".join(part for part in (student.last_name, student.first_name) if part),
                canvas_id=student.lms_user_id if (student.lms_user_id or "").isdigit() else "",
                sis_login_id=student.id, email=student.email or "",
            )
            for student in gradebook.students
        }


def export_lms(root: Path, lms: str, path: Path | None = None, roster: dict[str, RosterEntry] | None = None,
               moodle_id: str = "email") -> LmsExport:
    """Write the gradebook as the import file of ``lms`` (``"canvas"`` or ``"moodle"``); see the module.

    Parameters
    ----------
    root : Path
        The course folder.
    lms : str
        ``"canvas"`` or ``"moodle"``.
    path : Path, optional
        The file to write (default: ``<root>/grades_<lms>.csv``); the missing students go next to it,
        in ``<stem>_missing.csv`` (removed if nobody is missing).
    roster : dict, optional
        From :func:`read_roster`; default :func:`roster_from_gradebook`.
    moodle_id : str
        Moodle's identifier column: ``"email"``, ``"idnumber"`` (the roster's ``sis_user_id``) or
        ``"username"`` (its ``sis_login_id``).
    """
    if lms not in LMS:
        raise ValueError(f"lms must be one of {', '.join(LMS)}, not {lms!r}")
    if moodle_id not in MOODLE_IDENTIFIERS:
        raise ValueError(f"moodle_id must be one of {', '.join(MOODLE_IDENTIFIERS)}, not {moodle_id!r}")
    root = Path(root)
    path = Path(path) if path is not None else root / f"grades_{lms}.csv"
    rows = export_grades(root)
    roster = roster if roster is not None else roster_from_gradebook(root)
    assignments = sorted({row.assignment for row in rows})
    points = {row.assignment: row.max_score for row in rows}
    cells: dict[str, dict[str, str]] = {}
    names = {row.student_id: ", ".join(part for part in (row.last_name, row.first_name) if part) for row in rows}
    for row in rows:
        cells.setdefault(row.student_id, {})[row.assignment] = (
            "" if float(row.points_pending) > 0 else number(row.score))
    pending = 0
    missing: dict[str, str] = {}
    body = []
    for student in sorted(cells):
        entry = roster.get(student)
        reason = _why_missing(entry, lms, moodle_id)
        if reason:
            missing[student] = reason
            continue
        scores = [cells[student].get(name, "") for name in assignments]
        pending += scores.count("")
        if lms == "canvas":
            body.append([_canvas_name(entry), entry.canvas_id, entry.sis_user_id, entry.sis_login_id, entry.section, *scores])
        else:
            body.append([getattr(entry, MOODLE_IDENTIFIERS[moodle_id][1]), *scores])
    if lms == "canvas":
        head = [CANVAS_STUDENT_COLUMNS + assignments,
                [CANVAS_POINTS_ROW, "", "", "", "", *(number(points[name]) for name in assignments)]]
    else:
        head = [[MOODLE_IDENTIFIERS[moodle_id][0], *assignments]]
    write_rows(path, head + body)
    missing_path = path.with_name(f"{path.stem}_missing.csv")
    if missing:
        write_rows(missing_path, [MISSING_FIELDS + assignments] + [
            [student, (roster.get(student) or RosterEntry(student)).name or names[student], reason,
             *(cells[student].get(name, "") for name in assignments)] for student, reason in missing.items()])
    else:
        missing_path.unlink(missing_ok=True)
    return LmsExport(lms=lms, path=path, students=len(body), assignments=assignments, pending_cells=pending,
                     missing=missing, missing_path=missing_path if missing else None,
                     roster_only=sorted(set(roster) - set(cells)))


def _why_missing(entry: RosterEntry | None, lms: str, moodle_id: str) -> str:
    """Why a gradebook student cannot be written to the LMS file ('' if they can)."""
    if entry is None:
        return "not in the roster"
    if lms == "canvas" and not (entry.canvas_id or entry.sis_user_id or entry.sis_login_id):
        return "no canvas_id, sis_user_id or sis_login_id in the roster (Canvas would match by name only)"
    if lms == "moodle" and not getattr(entry, MOODLE_IDENTIFIERS[moodle_id][1]):
        return f"no {MOODLE_IDENTIFIERS[moodle_id][1]} in the roster (Moodle's {MOODLE_IDENTIFIERS[moodle_id][0]})"
    return ""


def _canvas_name(entry: RosterEntry) -> str:
    """The ``Student`` cell: the name, unless Canvas's importer would take the row for its ``Points Possible`` row."""
    if not entry.name or re.search(r"points\s+possible", entry.name, re.IGNORECASE):
        return entry.student_id  # an id holds no space (dpgrader.ids)
    return entry.name


def number(value: float | str) -> str:
    """A score as the LMS reads it: at most two decimals, no trailing zeros (``12.0`` -> ``"12"``, ``2.5`` -> ``"2.5"``)."""
    text = f"{float(value):.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def write_rows(path: Path, rows: Iterable[Sequence[object]]) -> Path:
    """Write ``rows`` to the CSV file ``path``: UTF-8 without a byte-order mark, every cell through ``csv_field``."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([csv_field(cell) for cell in row] for row in rows)
    return Path(path)


__all__ = ["LMS", "ROSTER_FIELDS", "RosterEntry", "LmsExport", "read_roster", "roster_from_gradebook", "export_lms"]
