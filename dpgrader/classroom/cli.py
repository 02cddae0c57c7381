"""Grade a whole class with one command, and know why every grade is what it is.

The command line, ``python -m dpgrader.classroom grade|export|feedback`` (see the
package :mod:`dpgrader.classroom`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dpgrader.classroom.export import export_grades, regenerate_feedback, summarize
from dpgrader.classroom.grade import grade_class
from dpgrader.outcomes import OUTCOMES_FILE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpgrader.classroom", description=__doc__.split("\n")[0])
    parser.add_argument("--course", type=Path, default=Path("."), help="the course folder (default: .)")
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="autograde every submission, generate feedback, export grades.csv")
    grade.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    grade.add_argument("--student", action="append", help="only this student (repeatable)")
    grade.add_argument("--workers", type=int, default=None, help="worker processes (default: number of cores)")
    grade.add_argument("--no-feedback", action="store_true", help="skip feedback generation")
    grade.add_argument("--submission-timeout", type=float, default=1800.0, help="seconds per submission (default 1800)")
    grade.add_argument("--csv", type=Path, default=None, help="grades CSV (default: <course>/grades.csv)")
    grade.add_argument("--no-sandbox", action="store_true",
                       help="grade without the bubblewrap sandbox (unsafe; marked sandboxed=False in grades.csv)")
    export = commands.add_parser("export", help="write grades.csv from the gradebook")
    export.add_argument("--csv", type=Path, default=None, help="grades CSV (default: <course>/grades.csv)")
    feedback = commands.add_parser("feedback", help="regenerate feedback for every autograded submission")
    feedback.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    args = parser.parse_args(argv)

    if args.command == "grade":
        grade_class(
            args.course, args.assignment, args.student, workers=args.workers, feedback=not args.no_feedback,
            submission_timeout=args.submission_timeout, csv_path=args.csv, sandboxed=not args.no_sandbox,
        )
        print(summarize(export_grades(args.course)))
        print(f"\ngrades: {args.csv or args.course / 'grades.csv'}; outcomes: {args.course / OUTCOMES_FILE}")
    elif args.command == "export":
        path = args.csv or args.course / "grades.csv"
        print(summarize(export_grades(args.course, path)))
        print(f"\ngrades: {path}")
    else:
        failed = [name for name, ok in regenerate_feedback(args.course, args.assignment).items() if not ok]
        print("feedback regenerated" + (f"; failed for {failed}" if failed else ""))
        return 1 if failed else 0
    return 0
