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
- **cells CPU**: the same notebooks run top to bottom in the same sandbox as a grading kernel (bubblewrap,
  the kernel's cgroup, single-threaded BLAS) but started cold, as a student's kernel starts (no zygote, no
  guard), counting the kernel's cgroup CPU from before its first cell to after its last (imports in the
  notebook's first cell included, kernel start-up excluded).
- **ratio**: grading CPU / cells CPU. Targets: ratio <= 1.15 at steady state (issue 40: >= 20 notebooks, 2 workers,
  worker start-up spread over the class); sandbox overhead <= 10% (issue 20).
- **engines** (``--engines``): the same class graded by the local pool and through a Dask
  scheduler on loopback (a ``dask scheduler`` and ``--workers`` ``dask worker`` processes started here,
  their start-up and CPU counted as the pool's are), sandbox on: notebooks per minute, CPU per notebook,
  the engine's overhead per task (Dask's CPU and wall per notebook over the pool's), the scaling from 1
  to 2 workers, and what a 10,000-student assignment needs at the measured rate.

Run: ``python benchmarks/bench_grading.py`` (``--students 6``, ``--workers 1 2``,
``--assignment 01_definition``, ``--engines``, ``--check`` to exit 1 when a target is missed).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from contextlib import ExitStack, contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dpgrader import Course, assignments_in, notebooks_of  # noqa: E402
from dpgrader.classroom import grade_class  # noqa: E402
from dpgrader.course import nbgrader_env  # noqa: E402

MOOC_STUDENTS = 10_000

TARGET_RATIO, TARGET_OVERHEAD = 1.15, 0.10  # issue 40: steady state (>= 20 notebooks, 2 workers)


def _cpu() -> float:
    """CPU seconds used so far by this process and every finished descendant (workers, kernels)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def cells_cpu(notebook: Path) -> float:
    """CPU seconds the notebook's cells take top to bottom in a cold sandboxed kernel (:func:`grading_profile.cells_cpu`).

    The same sandbox, cgroup and single-threaded BLAS as a grading kernel, but started as a student's kernel
    starts: no zygote (the notebook's imports count) and no guard; kernel start-up is left out.
    """
    from grading_profile import cells_cpu as measured

    with tempfile.TemporaryDirectory() as folder:
        return measured(notebook, Path(folder))[0]


def build(root: Path, assignments: list[str], students: int) -> Course:
    course = Course.from_repo(root, assignments, repo=REPO)
    for assignment in assignments:
        course.generate_assignment(assignment)
        for n in range(students):
            course.submit(assignment, f"student{n:02d}", notebooks_of(REPO / "source" / assignment))
    return course


@contextmanager
def loopback_cluster(folder: Path, workers: int):
    """A ``dask scheduler`` and ``workers`` ``dask worker`` processes (one thread each) on 127.0.0.1; yields its address.

    Stopped and waited for on exit, so their CPU lands in this process's ``RUSAGE_CHILDREN``.
    """
    dask, env = str(Path(sys.executable).parent / "dask"), {k: v for k, v in nbgrader_env().items() if k != "PYTHONWARNINGS"}
    folder.mkdir(parents=True, exist_ok=True)
    info = folder / "scheduler.json"
    scheduler = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                  "--scheduler-file", str(info)], env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while not info.exists():
        if scheduler.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("the Dask scheduler did not start")
        time.sleep(0.1)
    address = json.loads(info.read_text())["address"]
    started = [subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-dashboard",
                                 "--local-directory", str(folder / f"w{i}")], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True) for i in range(workers)]
    try:
        from distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(workers, timeout=300)
        yield address
    finally:
        for process in [*started, scheduler]:
            os.killpg(process.pid, signal.SIGTERM)
        for process in [*started, scheduler]:
            process.wait()


def engines(template: Course, scratch: Path, notebooks: int, worker_counts: list[int], feedback: bool) -> None:
    """The class graded by the local pool and through a loopback Dask scheduler, sandbox on; the table and the projection."""
    print(f"\n{'engine':>8}{'workers':>9}{'wall s':>8}{'nb/min':>8}{'CPU s/nb':>10}{'not ok':>8}")
    measured = {}
    for workers in worker_counts:
        for engine in ("local", "dask"):
            run = scratch / f"engine-{engine}-{workers}"
            shutil.copytree(template.root, run)
            cpu_before, started = _cpu(), time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if engine == "local":
                    outcomes = grade_class(run, workers=workers, feedback=feedback, progress=False)
                else:
                    with loopback_cluster(scratch / f"cluster-{workers}", workers) as address:
                        outcomes = grade_class(run, feedback=feedback, progress=False, scheduler=address)
            wall = time.perf_counter() - started
            kernels = sum(o.kernel_cpu or 0.0 for o in outcomes)
            cpu = (_cpu() - cpu_before + kernels) / notebooks
            measured[engine, workers] = (wall / notebooks, cpu)
            bad = sum(o.status != "ok" for o in outcomes)
            print(f"{engine:>8}{workers:>9}{wall:>8.1f}{60 * notebooks / wall:>8.1f}{cpu:>10.2f}{bad:>8}", flush=True)
    for workers in worker_counts:
        (local_wall, local_cpu), (dask_wall, dask_cpu) = measured["local", workers], measured["dask", workers]
        print(f"{workers} worker(s): Dask's overhead per task {dask_cpu - local_cpu:+.2f} CPU s, "
              f"{dask_wall - local_wall:+.2f} wall s (local pool {local_cpu:.2f} CPU s, {local_wall:.2f} wall s per notebook)")
    if {1, 2} <= set(worker_counts):
        for engine in ("local", "dask"):
            print(f"{engine}: 1 -> 2 workers, {measured[engine, 1][0] / measured[engine, 2][0]:.2f}x the notebooks per minute")
    cpu = measured["dask", max(worker_counts)][1]
    hours = MOOC_STUDENTS * cpu / 3600
    print(f"on paper: one assignment of {MOOC_STUDENTS:,} students (one notebook each) at {cpu:.2f} CPU s per notebook "
          f"is {hours:.1f} core-hours: 20 one-core workers for {hours / 20:.1f} h, 100 for {60 * hours / 100:.0f} min "
          f"(a notebook that runs longer than the reference scales these by its own ratio)")


def worker_start_cpu(scratch: Path) -> float:
    """CPU seconds a local pool worker takes to start (``python -m dpgrader.grading.worker`` until it is ready)."""
    from dpgrader.grading.worker import READY

    before = _cpu()
    process = subprocess.Popen([sys.executable, "-m", "dpgrader.grading.worker", str(scratch)], env=nbgrader_env(),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if process.stdout.readline().strip() != READY:
        raise RuntimeError("the grading worker did not start")
    process.stdin.close()
    process.wait()
    return _cpu() - before


@contextmanager
def class_steps(ledger):
    """The class-wide steps of a grading run charged to ``ledger`` (this process): review, merge, copy check, export."""
    from dpgrader.grading import export, flagging, merge, run
    from grading_profile import _timed, _wrap

    with ExitStack() as stack:  # each step's parts where the step calls them
        _wrap(stack, run, "bundles_for", _timed(ledger, "class: each assignment's bundle for the workers"))
        _wrap(stack, merge, "review", _timed(ledger, "class: review (syntax tree of each notebook)"))
        _wrap(stack, merge, "merge_submission", _timed(ledger, "class: merge into the gradebook"))
        _wrap(stack, flagging, "copy_check", _timed(ledger, "class: copy detection"))
        _wrap(stack, flagging, "comment_flags", _timed(ledger, "class: flags shown in formgrader"))
        _wrap(stack, export, "write_outcomes", _timed(ledger, "class: grading_outcomes.csv"))
        _wrap(stack, export, "grade_rows", _timed(ledger, "class: grade rows from the outcomes"))
        _wrap(stack, export, "write_grades", _timed(ledger, "class: grades.csv"))
        yield


def profile(assignments: list[str], students: int, workers: int) -> None:
    """Print where a notebook's grading time goes, step by step (see :mod:`grading_profile`)."""
    from grading_profile import Ledger, cells_cpu, instrumented, table

    from dpgrader.grading.bundle import assignment_bundle
    from dpgrader.grading.run import class_limits
    from dpgrader.grading.task import GradingTask
    from dpgrader.grading import worker
    from dpgrader.sandbox.zygote import Zygote

    with tempfile.TemporaryDirectory(prefix="bench-profile-") as scratch:
        scratch = Path(scratch)
        course = build(scratch / "course", assignments, students)
        limits = class_limits(course)
        cells, by_cell, replays, notebooks = 0.0, {}, 0.0, 0
        for assignment in assignments:
            for notebook in notebooks_of(REPO / "source" / assignment):
                total, per_cell, children = cells_cpu(notebook, notebook.parent)
                cells, replays = cells + total * students, replays + children * students
                by_cell.update({f"{assignment} {name}": seconds for name, seconds in per_cell.items()})
                notebooks += students
        ledger = Ledger()
        import nbgrader.converters  # noqa: F401  (a worker imports it before it is ready: not a task's cost)

        kernels = 0.0
        with instrumented(ledger), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for assignment in assignments:
                bundle = assignment_bundle(course, assignment)
                for n in range(students):
                    student = f"student{n:02d}"
                    task = GradingTask(course=course, assignment=assignment, student=student,
                                       submission=course.submitted(student, assignment), token=f"t{n}", limits=limits)
                    charged = sum(ledger.kernel.values())
                    result = worker.grade(task.packed(), bundle, scratch)
                    if result.status != "ok":
                        raise RuntimeError(f"{student}/{assignment}: {result.status} {result.messages}")
                    kernels += result.kernel_cpu or 0.0
                    ledger.kernel["kernel: shutdown and the rest"] += (result.kernel_cpu or 0.0) - (
                        sum(ledger.kernel.values()) - charged)
        Zygote.stop_all()
        ledger.grader["worker: start (imports nbgrader; once per worker)"] = worker_start_cpu(scratch) * workers
        ledger.calls["worker: start (imports nbgrader; once per worker)"] = workers
        run = scratch / "class"
        shutil.copytree(course.root, run)
        with class_steps(ledger), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grade_class(run, workers=workers, progress=False)
        print(f"\nprofile: {', '.join(assignments)}, {students} submissions each of the reference ({notebooks} notebooks), "
              f"graded one after another in this process as a worker grades them; class steps from a "
              f"grade_class run of the same class on {workers} workers")
        print(f"the cells' own CPU: {cells / notebooks:.3f} s per notebook (cold sandboxed kernel, single-threaded "
              f"BLAS, imports included; of it {replays / notebooks:.3f} s in check_is_random's forked replays)")
        for line in table(ledger, notebooks, cells / notebooks):
            print(line)
        print("\nthe cells, cold (the denominator), CPU s:")
        for name, seconds in sorted(by_cell.items(), key=lambda item: -item[1])[:10]:
            print(f"  {name:<60}{seconds:>8.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=6)
    parser.add_argument("--assignment", action="append", help="default: every assignment in source/")
    parser.add_argument("--workers", type=int, nargs="+", default=[2])
    parser.add_argument("--no-feedback", action="store_true")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--profile", action="store_true",
                        help="where a notebook's grading time goes, step by step (CPU s and share of the cells' own)")
    parser.add_argument("--engines", action="store_true",
                        help="compare the local pool with a loopback Dask scheduler (sandbox on) instead of sandbox on/off")
    args = parser.parse_args(argv)
    assignments = args.assignment or assignments_in(REPO / "source")
    if args.profile:
        profile(assignments, args.students, max(args.workers))
        return 0

    results = {}
    cells = {a: sum(cells_cpu(n) for n in notebooks_of(REPO / "source" / a)) for a in assignments}
    cells_per_notebook = sum(cells.values()) / sum(len(notebooks_of(REPO / "source" / a)) for a in assignments)
    print("cells CPU s per notebook: " + ", ".join(f"{a} {c:.2f}" for a, c in cells.items())
          + f"; mean {cells_per_notebook:.2f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as scratch:
        template = build(Path(scratch) / "template", assignments, args.students)
        notebooks = sum(len(notebooks_of(REPO / "source" / a)) for a in assignments) * args.students
        print(f"{len(assignments)} assignments x {args.students} students = {notebooks} submission notebooks; "
              f"{os.cpu_count()} cores")
        print(f"{'workers':>8}{'sandbox':>9}{'wall s':>8}{'wall s/nb':>11}{'CPU s/nb':>10}{'of it kernels':>15}"
              f"{'ratio to cells':>16}{'load before':>13}{'not ok':>8}")
        if args.engines:
            engines(template, Path(scratch), notebooks, args.workers, not args.no_feedback)
            return 0
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
