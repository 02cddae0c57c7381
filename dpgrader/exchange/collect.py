"""The course's ``nbgrader collect``: only what a student truly handed in, at the time the course saw it.

nbgrader 0.9's own collect trusts the exchange: a folder ``alice+01_definition+<a year ahead>+x``
made by Mallory wins over Alice's real submission with a warning only; a symbolic link in a
submission is followed with the instructor's rights (``shutil.copytree``); and the hand-in time
that orders submissions and sets late penalties is the student's own ``timestamp.txt``.

:class:`CourseCollect` replaces it (``c.ExchangeFactory.collect`` in the course's
``nbgrader_config.py``, so ``nbgrader collect``, formgrader's button and ``python -m
dpgrader.classroom collect`` all run it). An inbound folder is collected only if

1. its name is ``<student>+<assignment>+<time>+<random>`` with a plain student id
   (:func:`dpgrader.ids.valid_student_id`) and a time not in the future;
2. the student is on the course's roster (the gradebook's students; ``c.CourseCollect.require_roster``);
3. the folder belongs to that student (``lstat``'s uid, named by the system or by
   ``c.CourseCollect.owners_file``; ``c.ExchangeCollect.check_owner = False`` turns this off, unsafely);
4. its whole tree is plain folders and plain files with one link each, all the folder owner's,
   within nbgrader's ``max_file_size`` and ``max_dir_size``, checked before anything is copied,
   then copied without following any link and checked again after the copy.

The time recorded is the newest ``st_ctime`` of the folder and its files (set by the kernel at each
change; a student can make it later, never earlier): it picks the newest of a student's inbound
folders, decides whether a re-collect (``--update``) replaces the copy (only by a newer one), and is
written as ``submitted/<student>/<assignment>/timestamp.txt``, which nbgrader's late penalty and
the copy detection read. What the student claimed stays in ``.collected.json`` beside it, as
information. Every refused folder is logged with its reason and appended to
``<course>/collect_refused.csv``; then the collect fails (``nbgrader collect`` exits 1).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from traitlets import Bool, Float, Unicode

from dpgrader.course import format_timestamp
from dpgrader.exchange.inbound import (
    InboundName,
    Refused,
    Snapshot,
    copy_snapshot,
    ignored,
    parse_inbound_name,
    require_not_future,
    snapshot,
)
from dpgrader.exchange.owners import OwnersUnavailable, owner_name, read_owners_file
from dpgrader.safe_output import csv_row, one_line

#: What the course records beside each collected submission (ignored by nbgrader's copies: ``.*``).
LEDGER = ".collected.json"
#: The report of refused inbound folders, in the course folder (appended to by every collect).
REFUSED_REPORT = "collect_refused.csv"
REPORT_FIELDS = ["collected_at", "assignment", "inbound_folder", "student_claimed", "owner", "reason"]


@dataclass(frozen=True)
class Candidate:
    """An inbound folder that passed every check before the copy."""

    folder: str
    name: InboundName
    taken: Snapshot


@dataclass(frozen=True)
class Refusal:
    """An inbound folder the collect refused, and why."""

    folder: str
    student: str
    owner: str
    reason: str


@dataclass
class CollectReport:
    """What one collect did: per student the submission collected, kept, or refused folders."""

    collected: dict[str, datetime] = field(default_factory=dict)  # student -> trusted time written
    kept: dict[str, str] = field(default_factory=dict)  # student -> why the copy already there stays
    refused: list[Refusal] = field(default_factory=list)


def recorded_time(submission: Path) -> datetime | None:
    """The trusted time the course's collect recorded for ``submitted/<student>/<assignment>``, or None."""
    try:
        ledger = json.loads((Path(submission) / LEDGER).read_text())
        return datetime.fromisoformat(ledger["trusted_time"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


class CourseCollect(ExchangeCollect):
    """nbgrader's exchange collect, collecting only submissions the course can vouch for (see the module)."""

    require_roster = Bool(
        True, help="Collect only students on the gradebook's roster (nbgrader db student add / import). "
                   "With an empty roster every submission is refused; False collects any student id "
                   "whose folder they own.").tag(config=True)
    future_seconds = Float(
        120.0, help="How far ahead of this machine's clock the time in an inbound folder's name may be "
                    "(clock skew between machines) before the folder is refused.").tag(config=True)
    owners_file = Unicode(
        "", help="A file in /etc/passwd format naming the uid of every user (the hub writes it on "
                 "Kubernetes, see deploy/README.md); empty: the system's user database.").tag(config=True)

    # --- choosing what to collect ------------------------------------------------------------------

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        self.report = CollectReport()
        self.now = datetime.now(timezone.utc).replace(tzinfo=None)
        try:
            self.owners = read_owners_file(Path(self.owners_file)) if self.owners_file else None
        except OwnersUnavailable as error:
            self.fail(str(error))
        if not self.check_owner:
            self.log.warning("c.ExchangeCollect.check_owner is False: anyone may hand in as anyone (see deploy/README.md)")
        from nbgrader.api import Gradebook, MissingEntry

        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gradebook:
            try:
                self.duedate = gradebook.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                self.duedate = None
            self.roster = {student.id for student in gradebook.students}
        candidates: dict[str, list[Candidate]] = {}
        for folder in sorted(os.listdir(self.inbound_path)):
            parts = folder.split("+")
            if len(parts) < 2 or parts[1] != self.coursedir.assignment_id:
                continue  # another assignment's
            if self.coursedir.student_id not in ("", "*") and parts[0] != self.coursedir.student_id:
                continue
            try:
                candidate = self.judge(folder)
            except Refused as error:
                self.refuse(folder, str(error))
                continue
            candidates.setdefault(candidate.name.student, []).append(candidate)
        self.src_records = [self.choose(found) for _, found in sorted(candidates.items())]

    def judge(self, folder: str) -> Candidate:
        """The inbound ``folder`` as a :class:`Candidate`, or :class:`Refused` with the first reason."""
        name = parse_inbound_name(folder)
        require_not_future(name.claimed, self.now, timedelta(seconds=self.future_seconds))
        if self.require_roster and not self.roster:
            raise Refused("the gradebook has no students: add the class (nbgrader db student import) "
                          "or set c.CourseCollect.require_roster = False")
        if self.require_roster and name.student not in self.roster:
            raise Refused(f"{name.student!r} is not a student of the gradebook")
        try:
            taken = snapshot(Path(self.inbound_path) / folder)
        except OSError as error:  # a folder of mode 000, or one removed meanwhile: refused, the others collected
            raise Refused(f"the collect cannot read {error.filename or folder!r}: {error.strerror}") from None
        if self.check_owner:
            owner = owner_name(taken.owner, self.owners)
            if owner != name.student:
                shared = (" (your own uid too: do all users share one? see deploy/README.md, "
                          "'Who handed in, on Kubernetes')" if taken.owner == os.getuid() else "")
                raise Refused(f"the folder is named for {name.student!r} but belongs to "
                              f"{owner!r} (uid {taken.owner}){shared}" if owner else
                              f"the folder is named for {name.student!r} but belongs to uid {taken.owner}, no known user")
        kept = [e for e in taken.entries if not e.is_dir and not ignored(e.path, self.coursedir.ignore)]
        too_large = [e.path for e in kept if e.size > 1000 * self.coursedir.max_file_size]
        if too_large:
            raise Refused(f"{too_large[0]!r} is larger than c.CourseDirectory.max_file_size ({self.coursedir.max_file_size} kB)")
        if sum(e.size for e in kept) > 1000 * self.coursedir.max_dir_size:
            raise Refused(f"the submission is larger than c.CourseDirectory.max_dir_size ({self.coursedir.max_dir_size} kB)")
        return Candidate(folder, name, taken)

    def choose(self, found: list[Candidate]) -> Candidate:
        """The newest of one student's candidates by trusted time (with ``--before-duedate``: the newest before it, if any)."""
        ordered = sorted(found, key=lambda c: (c.taken.changed, c.folder), reverse=True)
        if self.before_duedate and self.duedate is not None:
            before = [c for c in ordered if c.taken.changed <= self.duedate]
            return (before or ordered)[0]
        return ordered[0]

    def refuse(self, folder: str, reason: str, student: str | None = None) -> None:
        """Record and log a refused inbound ``folder``."""
        try:
            owner_uid = os.lstat(Path(self.inbound_path) / folder).st_uid
            owner = owner_name(owner_uid, self.owners) or f"uid {owner_uid}"
        except OSError:
            owner = "unknown"
        refusal = Refusal(folder, student or folder.split("+")[0], owner, reason)
        self.report.refused.append(refusal)
        self.log.error("Refused %s (owner %s): %s", one_line(folder), one_line(owner), one_line(reason))

    # --- copying -----------------------------------------------------------------------------------

    def init_dest(self):
        pass

    def copy_files(self):
        assignment = self.coursedir.assignment_id
        for candidate in self.src_records:
            student = candidate.name.student
            destination = Path(self.coursedir.format_path(self.coursedir.submitted_directory, student, assignment))
            if os.path.lexists(destination):
                existing = recorded_time(destination)
                if not self.update:
                    self.keep(student, "already collected; --update replaces it with a newer submission")
                    continue
                if existing is None:
                    self.keep(student, f"{destination} was not collected by the course's collect "
                                       "(no .collected.json): move it away to collect again")
                    continue
                if candidate.taken.changed <= existing:
                    self.keep(student, f"no newer submission (the copy's time {existing:%Y-%m-%d %H:%M:%S} UTC)")
                    continue
            try:
                self.install(candidate, destination)
            except OSError as error:  # unreadable or gone between the checks and the copy
                error = Refused(f"the collect cannot read it: {error.strerror}")
                self.refuse(candidate.folder, str(error), student)
                with suppress(OSError):
                    destination.parent.rmdir()
                continue
            except Refused as error:
                self.refuse(candidate.folder, str(error), student)
                with suppress(OSError):
                    destination.parent.rmdir()  # the student's folder, if this collect made it and it stayed empty
                continue
            self.report.collected[student] = candidate.taken.changed
            self.log.info("Collected %s %s, handed in %s UTC", student, assignment, f"{candidate.taken.changed:%Y-%m-%d %H:%M:%S}")
        self.write_report()
        if self.report.refused:
            self.fail(f"{len(self.report.refused)} inbound submission(s) of {assignment} refused: "
                      f"see the reasons above and {Path(self.coursedir.root) / REFUSED_REPORT}")

    def keep(self, student: str, why: str) -> None:
        self.report.kept[student] = why
        self.log.info("Kept the copy of %s %s: %s", student, self.coursedir.assignment_id, why)

    def install(self, candidate: Candidate, destination: Path) -> None:
        """Copy ``candidate`` into a staging folder, check nothing changed, record it, then put it in place."""
        source = Path(self.inbound_path) / candidate.folder
        destination.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".collect-", dir=destination.parent))
        try:
            copied = copy_snapshot(source, candidate.taken, staging / "new", self.coursedir.ignore)
            if snapshot(source) != candidate.taken:
                raise Refused("the submission changed while it was collected")
            claimed_txt = (staging / "new" / "timestamp.txt").read_text(errors="replace")[:100] if "timestamp.txt" in copied else None
            (staging / "new" / "timestamp.txt").write_text(format_timestamp(candidate.taken.changed))
            ledger = {
                "student": candidate.name.student,
                "assignment": candidate.name.assignment,
                "trusted_time": candidate.taken.changed.isoformat(),
                "trusted_time_source": "newest st_ctime of the inbound folder and its files (UTC)",
                "collected_at": self.now.isoformat(),
                "inbound_folder": candidate.folder,
                "owner_uid": candidate.taken.owner,
                "claimed_time_in_name": candidate.name.claimed.isoformat(),
                "claimed_timestamp_txt": claimed_txt,
                "files": copied,
            }
            (staging / "new" / LEDGER).write_text(json.dumps(ledger, indent=1) + "\n")
            if os.path.lexists(destination):
                os.rename(destination, staging / "old")
            os.rename(staging / "new", destination)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def write_report(self) -> None:
        """Append this collect's refusals to ``<course>/collect_refused.csv`` (spreadsheet-safe fields)."""
        if not self.report.refused:
            return
        path = Path(self.coursedir.root) / REFUSED_REPORT
        new = not path.exists()
        with open(path, "a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=REPORT_FIELDS)
            if new:
                writer.writeheader()
            for refusal in self.report.refused:
                writer.writerow(csv_row({
                    "collected_at": self.now.isoformat(timespec="seconds"), "assignment": self.coursedir.assignment_id,
                    "inbound_folder": one_line(refusal.folder), "student_claimed": one_line(refusal.student),
                    "owner": one_line(refusal.owner), "reason": one_line(refusal.reason),
                }))


def collect_assignment(root: Path, assignment: str, student: str | None = None, update: bool = False,
                       before_duedate: bool = False, exchange_root: Path | None = None) -> CollectReport:
    """Run :class:`CourseCollect` on ``assignment`` of the course at ``root`` with the course's configuration.

    Returns the :class:`CollectReport` (refusals included); raises ``nbgrader.exchange.ExchangeError``
    when the collect cannot run at all (no exchange, no course in it, an owners file it cannot trust).
    """
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange import ExchangeError

    from dpgrader.course import Course

    config = Course(Path(root).resolve()).config()
    config.CourseDirectory.assignment_id = assignment
    if student:
        config.CourseDirectory.student_id = student
    if exchange_root is not None:
        config.Exchange.root = str(exchange_root)
    config.ExchangeCollect.update = update or bool(config.ExchangeCollect.get("update", False))
    config.ExchangeCollect.before_duedate = before_duedate or bool(config.ExchangeCollect.get("before_duedate", False))
    collector = CourseCollect(coursedir=CourseDirectory(config=config), config=config)
    try:
        collector.start()
    except ExchangeError:
        report = getattr(collector, "report", None)
        if report is None or not report.refused:
            raise
        return report
    return collector.report
