"""The pure checks of the course's collect (dpgrader.exchange): names, times, the tree walk, the copy, the owners file."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta

import pytest

from dpgrader.exchange import (
    OwnersUnavailable,
    Refused,
    copy_snapshot,
    owner_name,
    parse_inbound_name,
    read_owners_file,
    recorded_time,
    require_not_future,
    snapshot,
)
from dpgrader.exchange.inbound import MAX_ENTRIES, ignored, require_student_id

NOW = datetime(2026, 11, 27, 4, 0, 0)


@pytest.mark.parametrize("student", ["alice", "a.b_c-d@uni.edu", "S123", "x"])
def test_plain_ids_are_accepted(student):
    assert require_student_id(student) == student


@pytest.mark.parametrize("student", ["<img src=x onerror=alert(1)>", "alice smith", "", ".", "..", ".hidden", "-rf",
                                     "a/b", "alice\nbob", "al*", "a" * 129, "élodie", "a;b", "=HYPERLINK(1)"])
def test_ids_with_markup_spaces_or_patterns_are_refused(student):
    with pytest.raises(Refused, match="is not 1 to 128 of letters, digits"):
        require_student_id(student)


def test_an_inbound_name_is_read_strictly():
    name = parse_inbound_name("alice+01_definition+2026-11-27 03:59:00.123456 UTC+Ab-_9")
    assert (name.student, name.assignment, name.claimed) == ("alice", "01_definition", datetime(2026, 11, 27, 3, 59, 0, 123456))
    assert parse_inbound_name("bob+02_laplace+2026-11-27 03:59:00.000000 UTC").student == "bob"  # no random part
    with pytest.raises(Refused, match="is not <student>"):
        parse_inbound_name("alice+01_definition")
    with pytest.raises(Refused, match="is not <student>"):
        parse_inbound_name("al+ice+01_definition+2026-11-27 03:59:00 UTC+x")
    with pytest.raises(Refused, match="is not a time"):
        parse_inbound_name("alice+01_definition+yesterday+x")
    with pytest.raises(Refused, match="is not 1 to 128 of letters"):
        parse_inbound_name("alice smith+01_definition+2026-11-27 03:59:00 UTC+x")


def test_a_time_ahead_of_the_clock_is_refused_past_the_tolerance_only():
    tolerance = timedelta(seconds=120)
    require_not_future(NOW - timedelta(days=3000), NOW, tolerance)  # backdated: allowed, never trusted
    require_not_future(NOW + timedelta(seconds=120), NOW, tolerance)
    with pytest.raises(Refused, match="later than now"):
        require_not_future(NOW + timedelta(seconds=121), NOW, tolerance)
    with pytest.raises(Refused, match="2027-11-27 04:00:00, later than now"):
        require_not_future(NOW + timedelta(days=365), NOW, tolerance)


def make_submission(folder):
    folder.mkdir()
    (folder / "a.ipynb").write_text("{}")
    (folder / "sub").mkdir()
    (folder / "sub" / "data.csv").write_text("x\n1\n")
    (folder / "timestamp.txt").write_text("2020-01-01 00:00:00.000000 UTC")
    return folder


def test_the_walk_lists_plain_files_and_takes_the_newest_ctime(tmp_path):
    folder = make_submission(tmp_path / "s")
    taken = snapshot(folder)
    assert [e.path for e in taken.entries] == ["a.ipynb", "sub", "sub/data.csv", "timestamp.txt"]
    assert taken.owner == os.getuid()
    newest = max(os.lstat(p).st_ctime for p in [folder, *folder.rglob("*")])
    assert abs(taken.changed - datetime.utcfromtimestamp(newest)) < timedelta(microseconds=2)
    os.utime(folder / "a.ipynb", (0, 0))  # a student can set mtime back; ctime moves forward
    assert snapshot(folder).changed >= taken.changed


@pytest.mark.parametrize("make, what", [
    (lambda f, t: os.symlink("/etc/passwd", f / "sub" / "x.ipynb"), "'sub/x.ipynb' is a symbolic link"),
    (lambda f, t: os.link(t / "outside", f / "b.ipynb"), "'b.ipynb' is a hard link"),
    (lambda f, t: os.mkfifo(f / "sub" / "pipe"), "'sub/pipe' is a FIFO"),
    (lambda f, t: os.symlink(t, f / "sub" / "dir"), "'sub/dir' is a symbolic link"),
])
def test_the_walk_refuses_links_hard_links_and_fifos_anywhere(tmp_path, make, what):
    folder = make_submission(tmp_path / "s")
    (tmp_path / "outside").write_text("secret")
    make(folder, tmp_path)
    with pytest.raises(Refused, match=what):
        snapshot(folder)


def test_the_walk_refuses_a_linked_folder_and_too_many_entries(tmp_path):
    make_submission(tmp_path / "s")
    os.symlink(tmp_path / "s", tmp_path / "link")
    with pytest.raises(Refused, match="the submission folder is a symbolic link"):
        snapshot(tmp_path / "link")
    many = tmp_path / "many"
    many.mkdir()
    for i in range(MAX_ENTRIES + 1):
        (many / f"{i}").mkdir()
    with pytest.raises(Refused, match=f"more than {MAX_ENTRIES}"):
        snapshot(many)


def test_the_walk_refuses_an_entry_of_another_owner(tmp_path):
    folder = make_submission(tmp_path / "s")
    os.chown(folder / "a.ipynb", 4242, 4242)  # the suite runs as root
    with pytest.raises(Refused, match="'a.ipynb' belongs to uid 4242"):
        snapshot(folder)


def test_the_copy_takes_the_snapshot_and_leaves_out_ignored_names(tmp_path):
    folder = make_submission(tmp_path / "s")
    (folder / ".ipynb_checkpoints").mkdir()
    (folder / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_text("{}")
    copied = copy_snapshot(folder, snapshot(folder), tmp_path / "out", [".ipynb_checkpoints", ".*"])
    assert copied == ["a.ipynb", "sub/data.csv", "timestamp.txt"]
    assert (tmp_path / "out" / "sub" / "data.csv").read_text() == "x\n1\n"
    assert not (tmp_path / "out" / ".ipynb_checkpoints").exists()
    assert ignored("x/.hidden/y", [".*"]) and not ignored("x/y.ipynb", [".*"])


@pytest.mark.parametrize("swap", ["link", "other file", "linked folder"])
def test_a_file_swapped_after_the_walk_is_refused_not_followed(tmp_path, swap):
    folder = make_submission(tmp_path / "s")
    (tmp_path / "secret.ipynb").write_text("SOLUTION")
    taken = snapshot(folder)
    if swap == "link":
        os.remove(folder / "a.ipynb")
        os.symlink(tmp_path / "secret.ipynb", folder / "a.ipynb")
    elif swap == "other file":
        (folder / "new").write_text("{} ")  # another inode (a file removed first may leave its number free)
        os.replace(folder / "new", folder / "a.ipynb")
    else:
        os.rename(folder / "sub", tmp_path / "sub-moved")
        (tmp_path / "sub-moved" / "data.csv").unlink()
        os.symlink(tmp_path, folder / "sub")
        (tmp_path / "data.csv").write_text("SOLUTION")
    with pytest.raises(Refused, match="changed while it was collected"):
        copy_snapshot(folder, taken, tmp_path / "out")
    assert not any("SOLUTION" in p.read_text() for p in (tmp_path / "out").rglob("*") if p.is_file())


def test_the_owners_file_maps_uids_and_must_be_the_hubs_alone(tmp_path):
    owners = tmp_path / "passwd"
    owners.write_text("alice:x:100001:100::/home/jovyan:/bin/bash\nbob:x:100002:100::/h:/bin/sh\n"
                      "eve:x:100002:100::/h:/bin/sh\nnot a line\n")
    os.chmod(owners, 0o644)
    mapping = read_owners_file(owners)
    assert owner_name(100001, mapping) == "alice"
    assert owner_name(100002, mapping) is None  # two names for one uid: nobody
    assert owner_name(5, mapping) is None
    os.chmod(owners, 0o666)
    with pytest.raises(OwnersUnavailable, match="writable by group or others"):
        read_owners_file(owners)
    os.chmod(owners, 0o644)
    os.chown(owners, 100001, 100)
    with pytest.raises(OwnersUnavailable, match="belongs to uid 100001, a user it names"):
        read_owners_file(owners)
    with pytest.raises(OwnersUnavailable, match="cannot be read"):
        read_owners_file(tmp_path / "missing")
    assert owner_name(0) == "root"  # the system's database without a file


def test_the_recorded_time_is_read_from_the_ledger_only(tmp_path):
    assert recorded_time(tmp_path) is None
    (tmp_path / "timestamp.txt").write_text("2020-01-01 00:00:00 UTC")
    assert recorded_time(tmp_path) is None  # the student's file is never the course's record
    (tmp_path / ".collected.json").write_text(json.dumps({"trusted_time": "2026-11-27T04:00:00.5"}))
    assert recorded_time(tmp_path) == datetime(2026, 11, 27, 4, 0, 0, 500000)


@pytest.fixture
def alembic_on_path(monkeypatch):
    """nbgrader creates a gradebook by running ``alembic``, from this environment's ``bin/``."""
    from dpgrader.course import nbgrader_env

    monkeypatch.setenv("PATH", nbgrader_env()["PATH"])


def course_with_inbound(tmp_path, roster=(), extra_config=""):
    """A course (its nbgrader_config.py, a gradebook with ``roster``) and an exchange with an inbound folder."""
    from nbgrader.api import Gradebook

    from dpgrader import Course

    course = Course.from_repo(tmp_path / "course", [])
    with open(course.config_file, "a") as config:
        config.write(f"\nc.Exchange.root = {str(tmp_path / 'exchange')!r}\n{extra_config}\n")
    with Gradebook(course.gradebook_url, "dp-course") as gradebook:
        for student in roster:
            gradebook.add_student(student)
    inbound = tmp_path / "exchange" / "dp-course" / "inbound"
    inbound.mkdir(parents=True)
    os.chmod(tmp_path / "exchange", 0o1777)
    return course, inbound


def hand_in(inbound, folder, text="{}"):
    (inbound / folder).mkdir()
    (inbound / folder / "01_definition.ipynb").write_text(text)


@pytest.mark.pipeline  # nbgrader makes a gradebook (alembic): seconds each
def test_an_empty_roster_refuses_everyone_with_the_setting_to_change(tmp_path, alembic_on_path):
    from dpgrader.exchange import collect_assignment
    from dpgrader.safe_output import from_csv_field

    course, inbound = course_with_inbound(tmp_path)
    hand_in(inbound, "root+01_definition+2026-01-01 00:00:00.000000 UTC+a")
    hand_in(inbound, "=HYPERLINK(1)+01_definition+2026-01-01 00:00:00.000000 UTC+b")
    hand_in(inbound, "root+02_laplace+2026-01-01 00:00:00.000000 UTC+c")  # another assignment: not looked at
    report = collect_assignment(course.root, "01_definition")
    reasons = {r.folder.split("+")[0]: r.reason for r in report.refused}
    assert "set c.CourseCollect.require_roster = False" in reasons["root"]
    assert "is not 1 to 128 of letters, digits" in reasons["=HYPERLINK(1)"]
    assert len(report.refused) == 2 and not report.collected and not course.submitted().exists()
    text = (course.root / "collect_refused.csv").read_text()
    assert "'=HYPERLINK(1)+01_definition" in text  # a spreadsheet shows it as text
    import csv
    rows = list(csv.DictReader(text.splitlines()))
    assert {from_csv_field(r["inbound_folder"]).split("+")[0] for r in rows} == {"root", "=HYPERLINK(1)"}


@pytest.mark.pipeline  # nbgrader makes a gradebook (alembic): seconds each
def test_without_the_roster_the_owner_still_decides_and_the_newest_true_time_wins(tmp_path, alembic_on_path):
    import time

    from dpgrader.exchange import collect_assignment

    course, inbound = course_with_inbound(tmp_path, extra_config="c.CourseCollect.require_roster = False")
    hand_in(inbound, "root+01_definition+2026-01-01 00:00:00.000000 UTC+late-name", "NEWER")
    time.sleep(0.02)
    hand_in(inbound, "root+01_definition+2020-01-01 00:00:00.000000 UTC+early-name", "NEWEST")
    hand_in(inbound, "nobody+01_definition+2026-01-01 00:00:00.000000 UTC+x")  # belongs to root, named for nobody
    report = collect_assignment(course.root, "01_definition")
    assert list(report.collected) == ["root"]
    assert (course.submitted("root", "01_definition") / "01_definition.ipynb").read_text() == "NEWEST"
    assert [r.reason for r in report.refused] == [
        "the folder is named for 'nobody' but belongs to 'root' (uid 0) (your own uid too: do all users share one? "
        "see deploy/README.md, 'Who handed in, on Kubernetes')"]
    assert not course.submitted("nobody").exists()


@pytest.mark.pipeline  # nbgrader makes a gradebook (alembic): seconds each
def test_a_folder_the_collect_cannot_read_is_refused_and_the_others_collected(tmp_path, alembic_on_path):
    from dpgrader.exchange import collect_assignment

    course, inbound = course_with_inbound(tmp_path, roster=["root"])
    hand_in(inbound, "root+01_definition+2026-01-01 00:00:00.000000 UTC+ok", "OK")
    hand_in(inbound, "root+01_definition+2026-01-01 00:00:01.000000 UTC+ghost")
    (inbound / "root+01_definition+2026-01-01 00:00:01.000000 UTC+ghost" / "sub").mkdir()
    os.chmod(inbound / "root+01_definition+2026-01-01 00:00:01.000000 UTC+ghost", 0o000)
    import unittest.mock

    real_scandir = os.scandir

    def denied(path):  # root reads mode 000: make the walk meet what the instructor's user would
        if "ghost" in str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    with unittest.mock.patch("dpgrader.exchange.inbound.os.scandir", denied):
        report = collect_assignment(course.root, "01_definition")
    assert [r.reason for r in report.refused] == [
        "the collect cannot read '" + str(inbound / "root+01_definition+2026-01-01 00:00:01.000000 UTC+ghost")
        + "': Permission denied"]
    assert (course.submitted("root", "01_definition") / "01_definition.ipynb").read_text() == "OK"
