"""Grading cost: CPU and wall seconds per submission notebook, sandbox on and off, against the cells' own CPU.

A throwaway course holds every assignment of ``source/`` (or those given with
``--assignment``) and ``--students`` copies of each reference notebook (the slowest kind of
submission: every test runs to the end). The class is graded with
``dpgrader.classroom.grade_class`` (pre-flight, autograde, merge into one gradebook, feedback,
grades.csv) once per worker count and sandbox mode, each time from a fresh copy of the course.

What is counted, per submission notebook:

- **grading CPU**: this process and every process it waited for (the workers, and unsandboxed
  kernels), plus the sandboxed kernels' CPU read from each kernel's own cgroup (``cpuacct``; a
  sandboxed kernel is reaped inside its PID namespace, so no ``rusage`` sees it), and that of the
  zygotes they are forked from (their imports and forks, from the zygote's own cgroup). Worker start-up
  and the pre-flight (each assignment's reference graded once first) are included: they are part
  of what grading a class costs.
- **cells CPU**: the same notebooks run top to bottom in a plain kernel, counting the kernel's
  CPU from before its first cell to after its last (imports in the notebook's first cell
  included, kernel start-up excluded).
- **ratio**: grading CPU / cells CPU. Targets (issue 20): ratio <= 1.5; sandbox overhead <= 10%.

Run: ``python benchmarks/bench_grading.py`` (``--students 6``, ``--workers 1 2``,
``--assignment 01_definition``, ``--check`` to exit 1 when a target is missed).
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

TARGET_RATIO, TARGET_OVERHEAD = 1.5, 0.10


def _cpu() -> float:
    """CPU seconds used so far by this process and every finished descendant (workers, kernels)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


PROBE = "import resource as _r\n_u = _r.getrusage(_r.RUSAGE_SELF)\nprint(_u.ru_utime + _u.ru_stime)"


def cells_cpu(notebook: Path) -> float:
    """CPU seconds a plain kernel spends on the notebook's cells, top to bottom (errors allowed)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(str(notebook), as_version=4)
    nb.cells = [nbformat.v4.new_code_cell(PROBE), *nb.cells, nbformat.v4.new_code_cell(PROBE)]
    with tempfile.TemporaryDirectory() as folder:
        NotebookClient(nb, timeout=600, allow_errors=True, resources={"metadata": {"path": folder}}).execute()
    before, after = (float(nb.cells[i].outputs[0]["text"]) for i in (0, -1))
    return after - before


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
    cells = {a: sum(cells_cpu(n) for n in notebooks_of(REPO / "source" / a)) for a in assignments}
    cells_per_notebook = sum(cells.values()) / sum(len(notebooks_of(REPO / "source" / a)) for a in assignments)
    print("cells CPU s per notebook: " + ", ".join(f"{a} {c:.2f}" for a, c in cells.items())
          + f"; mean {cells_per_notebook:.2f}")
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as scratch:
        template = build(Path(scratch) / "template", assignments, args.students)
        notebooks = sum(len(notebooks_of(REPO / "source" / a)) for a in assignments) * args.students
        print(f"{len(assignments)} assignments x {args.students} students = {notebooks} submission notebooks; "
              f"{os.cpu_count()} cores")
        print(f"{'workers':>8}{'sandbox':>9}{'wall s':>8}{'wall s/nb':>11}{'CPU s/nb':>10}{'of it kernels':>15}"
              f"{'ratio to cells':>16}{'load before':>13}{'not ok':>8}")
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
                kernels = sum(o.kernel_cpu or 0.0 for o in outcomes) / notebooks if sandboxed else float("nan")
                cpu = (_cpu() - cpu_before) / notebooks + (kernels if sandboxed else 0.0)
                results[workers, sandboxed] = (wall, cpu)
                bad = sum(o.status != "ok" for o in outcomes)
                print(f"{workers:>8}{'on' if sandboxed else 'off':>9}{wall * notebooks:>8.1f}{wall:>11.2f}"
                      f"{cpu:>10.2f}{kernels:>15.2f}{cpu / cells_per_notebook:>16.2f}{load:>13.2f}{bad:>8}", flush=True)
    failed = False
    for workers in args.workers:
        (on_wall, on_cpu), (off_wall, off_cpu) = results[workers, True], results[workers, False]
        cpu_overhead = on_cpu / off_cpu - 1
        print(f"\n{workers} workers: sandbox on {on_cpu:.2f} CPU s per notebook = {on_cpu / cells_per_notebook:.2f}x "
              f"the cells' own (target <= {TARGET_RATIO}); sandbox overhead {100 * cpu_overhead:+.0f}% CPU, "
              f"{100 * (on_wall / off_wall - 1):+.0f}% wall (target <= {100 * TARGET_OVERHEAD:.0f}%)")
        failed |= on_cpu / cells_per_notebook > TARGET_RATIO or cpu_overhead > TARGET_OVERHEAD
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
