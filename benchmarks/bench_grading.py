"""Grading throughput: seconds per submission notebook with 1 and 2 workers, and the speed-up.

A throwaway course holds every assignment of ``source/`` (or those given with
``--assignment``) and ``--students`` copies of each reference notebook (the slowest kind of
submission: every test runs to the end). The class is graded with
``dplib.grading.classroom.grade_class`` (autograde, merge into one gradebook, feedback,
grades.csv) once per worker count, each time from a fresh copy of the course, and the wall
time is divided by the number of submission notebooks. Worker start-up (importing nbgrader,
a few seconds) is included: it is what an instructor waits for. The CPU seconds per notebook
(grading process, workers and kernels together) do not depend on what else runs on the
machine: on an idle machine, wall time per notebook is about that divided by the workers.

Targets: <= 4 s per submission notebook; >= 1.8x speed-up with 2 workers on 2 cores.

Run: ``python benchmarks/bench_grading.py`` (``--students 6``, ``--workers 1 2``,
``--assignment 01_definition``, ``--check`` to exit 1 when a target is missed). The machine
load is printed: other jobs on the same cores slow grading down and hide the speed-up.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from dplib.grading import Course, assignments_in, notebooks_of  # noqa: E402
from dplib.grading.classroom import grade_class  # noqa: E402

TARGET_SECONDS, TARGET_SPEEDUP = 4.0, 1.8


def _cpu() -> float:
    """CPU seconds used so far by this process and every finished descendant (workers, kernels)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def build(root: Path, assignments: list[str], students: int) -> Course:
    course = Course.from_repo(root, assignments, repo=REPO)
    for assignment in assignments:
        course.generate_assignment(assignment)
        for n in range(students):
            course.submit(assignment, f"student{n:02d}", notebooks_of(REPO / "source" / assignment))
    return course


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=6)
    parser.add_argument("--assignment", action="append", help="default: every assignment in source/")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-feedback", action="store_true")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    assignments = args.assignment or assignments_in(REPO / "source")

    with tempfile.TemporaryDirectory(prefix="bench-grading-") as scratch:
        template = build(Path(scratch) / "template", assignments, args.students)
        notebooks = sum(len(notebooks_of(REPO / "source" / a)) for a in assignments) * args.students
        print(f"{len(assignments)} assignments x {args.students} students = {notebooks} submission notebooks; "
              f"{os.cpu_count()} cores")
        print(f"{'workers':>8}{'seconds':>10}{'s/notebook':>12}{'speed-up':>10}{'CPU s/notebook':>16}"
              f"{'load before':>13}{'not ok':>8}")
        seconds = {}
        for workers in args.workers:
            run = Path(scratch) / f"run-{workers}"
            shutil.copytree(template.root, run)
            load = os.getloadavg()[0]
            cpu_before = _cpu()
            started = time.perf_counter()
            outcomes = grade_class(run, workers=workers, feedback=not args.no_feedback, progress=False)
            seconds[workers] = time.perf_counter() - started
            cpu = (_cpu() - cpu_before) / notebooks
            bad = sum(o.status != "ok" for o in outcomes)
            speedup = seconds[args.workers[0]] / seconds[workers]
            print(f"{workers:>8}{seconds[workers]:>10.1f}{seconds[workers] / notebooks:>12.2f}{speedup:>9.2f}x"
                  f"{cpu:>16.2f}{load:>13.2f}{bad:>8}", flush=True)
    best = min(seconds.values()) / notebooks
    speedup = seconds[min(seconds)] / seconds[max(seconds)] if len(seconds) > 1 else 1.0
    print(f"\nbest {best:.2f} s per submission notebook (target <= {TARGET_SECONDS}); "
          f"speed-up {speedup:.2f}x with {max(seconds)} workers over {min(seconds)} (target >= {TARGET_SPEEDUP})")
    return 1 if args.check and (best > TARGET_SECONDS or (len(seconds) > 1 and speedup < TARGET_SPEEDUP)) else 0


if __name__ == "__main__":
    sys.exit(main())
