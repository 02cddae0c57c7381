"""Grade a whole class with one command, and know why every grade is what it is.

The command line, ``python -m dpgrader.classroom collect|grade|export|feedback|mistakes`` (see the
package :mod:`dpgrader.classroom`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from dpgrader.grading.cluster import ClusterLost, security
from dpgrader.grading.export import export_grades, regenerate_feedback, summarize
from dpgrader.limits import describe, parse_override
from dpgrader.grading.run import run_grading
from dpgrader.classroom.lms import LMS, MOODLE_IDENTIFIERS, ROSTER_FIELDS, export_lms, read_roster
from dpgrader.classroom.mistakes import summarize_mistakes
from dpgrader.classroom.mistakes_page import write_mistakes
from dpgrader.grading.preflight import PreflightFailed
from dpgrader.course import Course, nbgrader_env
from dpgrader.exchange import collect_assignment
from dpgrader.outcomes import UNGRADED
from dpgrader.safe_output import terminal_text
from dpgrader.sandbox import KernelPackagesMissing, SandboxUnavailable


def say(*parts: object, file=None) -> None:
    """Print to the instructor's terminal: text from submissions (ids, flags, messages, file names, errors) holds
    no control character the terminal would obey (:func:`dpgrader.safe_output.terminal_text`)."""
    print(terminal_text(" ".join(str(part) for part in parts)), file=file or sys.stdout)


def limit_override(text: str) -> tuple[str, float]:
    """``--limit NAME=VALUE`` read (argparse shows the ``ValueError``'s message as the usage error)."""
    try:
        return parse_override(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def use_this_environment() -> None:
    """Put this Python's ``bin/`` first on ``PATH``: nbgrader opens a gradebook by running ``alembic``.

    ``.venv/bin/python -m dpgrader.classroom ...`` then works without activating the environment,
    from any folder (one whose path holds a space too).
    """
    if os.environ.get("PATH", "").split(os.pathsep)[0] != str(Path(sys.executable).parent):
        os.environ["PATH"] = nbgrader_env()["PATH"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpgrader.classroom", description=__doc__.split("\n")[0])
    parser.add_argument("--course", type=Path, default=Path("."), help="the course folder (default: .)")
    commands = parser.add_subparsers(dest="command", required=True)
    collect = commands.add_parser("collect", help="collect an assignment from the exchange: only submissions each student "
                                                  "truly handed in (exits 1 if any was refused; see collect_refused.csv)")
    collect.add_argument("assignment", help="the assignment to collect")
    collect.add_argument("--student", default=None, help="only this student")
    collect.add_argument("--update", action="store_true", help="replace a collected submission by a newer one")
    collect.add_argument("--before-duedate", action="store_true",
                         help="the newest submission before the due date (the newest if none was)")
    collect.add_argument("--exchange", type=Path, default=None, help="the exchange root (default: c.Exchange.root)")
    grade = commands.add_parser("grade", help="autograde every submission, generate feedback, export grades.csv")
    grade.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    grade.add_argument("--student", action="append", help="only this student (repeatable)")
    grade.add_argument("--workers", type=int, default=None, help="worker processes (default: number of cores)")
    grade.add_argument("--no-feedback", action="store_true", help="skip feedback generation")
    grade.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE", type=limit_override,
                       help="change one grading limit for this run (repeatable); the limits, their defaults and "
                            "meaning: " + "; ".join(f"{name} ({default})" for name, default, _ in describe())
                            + ". Set them for the course with c.GradingLimits.<name> in nbgrader_config.py")
    grade.add_argument("--submission-timeout", type=float, default=None,
                       help="seconds per submission: the same as --limit submission_seconds=...")
    grade.add_argument("--csv", type=Path, default=None, help="grades CSV (default: <course>/grades.csv)")
    grade.add_argument("--time-budget-factor", type=float, default=None,
                       help="each notebook's cells may run this many times as long as the reference solution's: "
                            "the same as --limit time_budget_factor=...")
    grade.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="grade on the Dask cluster of this scheduler (tls://host:8786; tcp:// only on this machine) "
                            "instead of local worker processes; see deploy/README.md")
    grade.add_argument("--tls-ca-file", type=Path, default=None, help="the cluster's CA certificate (TLS)")
    grade.add_argument("--tls-cert", type=Path, default=None, help="this client's certificate (TLS)")
    grade.add_argument("--tls-key", type=Path, default=None, help="this client's private key (TLS)")
    grade.add_argument("--resume", action="store_true",
                       help="grade only the submissions without an outcome yet (after a run that stopped midway)")
    grade.add_argument("--no-sandbox", action="store_true",
                       help="grade without the bubblewrap sandbox (unsafe; marked sandboxed=False in grades.csv)")
    export = commands.add_parser("export", help="write grades.csv from the gradebook, or the import file of Canvas or "
                                                "Moodle (exits 1 if a student could not be written: see <file>_missing.csv)")
    export.add_argument("--csv", type=Path, default=None,
                        help="the file to write (default: <course>/grades.csv, or grades_<lms>.csv with --to)")
    export.add_argument("--to", choices=LMS, default=None,
                        help="the gradebook import file of this LMS instead of grades.csv (see dpgrader.classroom.lms)")
    export.add_argument("--roster", type=Path, default=None,
                        help="who each student is in the LMS: a CSV with the columns " + ", ".join(ROSTER_FIELDS)
                             + " (only student_id required; default: the gradebook's names, lms_user_id and e-mails)")
    export.add_argument("--moodle-id", choices=list(MOODLE_IDENTIFIERS), default="email",
                        help="Moodle's identifier column (default: email; idnumber = the roster's sis_user_id, "
                             "username = its sis_login_id); map it to the same user field at import")
    feedback = commands.add_parser("feedback", help="regenerate feedback for every autograded submission")
    feedback.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    mistakes = commands.add_parser("mistakes", help="what the class got wrong: a page and a CSV per graded assignment")
    mistakes.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    mistakes.add_argument("--folder", type=Path, default=None, help="where to write them (default: <course>/mistakes)")
    mistakes.add_argument("--no-names", action="store_true", help="leave out who failed each test (a page to share)")
    args = parser.parse_args(argv)
    use_this_environment()

    if args.command == "collect":
        return run_collect(args)
    if args.command == "grade":
        limits = dict(args.limit)
        for name, value in (("submission_seconds", args.submission_timeout), ("time_budget_factor", args.time_budget_factor)):
            if value is not None:
                limits[name] = value
        try:
            tls = security(args.tls_ca_file, args.tls_cert, args.tls_key) if args.scheduler else None
            course = Course(Path(args.course).resolve())
            run = run_grading(
                course, args.assignment, args.student, workers=args.workers, feedback=not args.no_feedback,
                limits=limits, csv_path=args.csv, sandboxed=not args.no_sandbox, scheduler=args.scheduler, tls=tls,
                resume=args.resume,
            )
        except ClusterLost as error:
            say(f"error: {error}", file=sys.stderr)
            return 3
        except (PreflightFailed, SandboxUnavailable, KernelPackagesMissing, ValueError) as error:
            say(f"error: {error}", file=sys.stderr)
            return 2
        say(summarize(run.rows))  # the rows of grades.csv, as the run built them
        grades = args.csv or args.course / "grades.csv"
        shown = {name: args.course / path.relative_to(course.root)  # as the instructor named the course folder
                 for name, path in (("outcomes", course.outcomes_file), ("log", course.grading_logs / "graded_by.log"))}
        say(f"\ngrades: {grades}; outcomes: {shown['outcomes']}; who graded what: {shown['log']}")
        reported = report_mistakes(course, args.assignment, Path(grades).parent / "mistakes", outcomes=run.recorded)
        ungraded = [o for o in run.outcomes if o.status in UNGRADED]
        if ungraded:  # fail closed: a submission the grader could not grade is not a quiet success
            say(f"error: {len(ungraded)} submission(s) could not be graded (status error or killed): "
                "see the messages above and autograded/grading_logs/", file=sys.stderr)
            return 1
        return reported
    elif args.command == "export" and (args.to or args.roster):
        return run_lms_export(args)
    elif args.command == "export":
        path = args.csv or args.course / "grades.csv"
        say(summarize(export_grades(args.course, path)))
        say(f"\ngrades: {path}")
    elif args.command == "mistakes":
        return report_mistakes(args.course, args.assignment, args.folder or args.course / "mistakes", not args.no_names)
    else:
        failed = [name for name, ok in regenerate_feedback(args.course, args.assignment).items() if not ok]
        say("feedback regenerated" + (f"; failed for {failed}" if failed else ""))
        return 1 if failed else 0
    return 0


def run_collect(args: argparse.Namespace) -> int:
    """``collect``: run the course's collect, print what it collected, kept and refused; 1 if anything was refused."""
    from nbgrader.exchange import ExchangeError

    try:
        report = collect_assignment(args.course, args.assignment, args.student, update=args.update,
                                    before_duedate=args.before_duedate, exchange_root=args.exchange)
    except ExchangeError as error:
        say(f"error: {error}", file=sys.stderr)
        return 2
    for student, when in sorted(report.collected.items()):
        say(f"collected {student}: handed in {when:%Y-%m-%d %H:%M:%S} UTC")
    for student, why in sorted(report.kept.items()):
        say(f"kept {student}: {why}")
    for refusal in report.refused:
        say(f"REFUSED {refusal.folder!r} (owner {refusal.owner}): {refusal.reason}", file=sys.stderr)
    if report.refused:
        say(f"error: {len(report.refused)} inbound submission(s) refused: listed in "
            f"{Path(args.course) / 'collect_refused.csv'}", file=sys.stderr)
        return 1
    if not report.collected and not report.kept:
        say(f"no submission of {args.assignment} to collect")
    return 0


def run_lms_export(args: argparse.Namespace) -> int:
    """``export --to canvas|moodle``: write the LMS's import file; list the students it could not hold; 1 if any."""
    if not args.to:
        say("error: --roster is for --to canvas or --to moodle", file=sys.stderr)
        return 2
    try:
        roster = read_roster(args.roster) if args.roster else None
        export = export_lms(args.course, args.to, args.csv, roster, moodle_id=args.moodle_id)
    except (OSError, ValueError) as error:
        say(f"error: {error}", file=sys.stderr)
        return 2
    say(export.summary())
    for student, reason in export.missing.items():
        say(f"MISSING {student}: {reason}", file=sys.stderr)
    if export.missing:
        say(f"error: {len(export.missing)} student(s) are not in {export.path}: their grades are in "
            f"{export.missing_path}; add them to the roster and export again", file=sys.stderr)
        return 1
    return 0


def report_mistakes(root: Path | Course, assignments: list[str] | None, folder: Path, names: bool = True,
                    outcomes=None) -> int:
    """Write the mistakes page and CSV of each graded assignment (or of ``assignments``); print where, and the top 3.

    ``outcomes``: those a grading run holds (default: read from ``grading_outcomes.csv``)."""
    try:
        written = write_mistakes(root, assignments, folder, names=names, outcomes=outcomes)
    except Exception as error:  # the grades are written already: say why the report is missing, and fail
        say(f"\nthe mistakes report could not be written: {error!r}", file=sys.stderr)
        return 1
    say()
    say(summarize_mistakes([report for _, report in written.values()]))
    say(f"mistakes: {folder}/<assignment>.html and .csv, for " + (", ".join(written) or "no graded assignment"))
    return 0
