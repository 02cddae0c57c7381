"""Flakiness audit: every reference notebook's tests, re-run hundreds of times, must never fail.

For each assignment in ``source/``, one kernel (set up like the autograder's: the grading
guard installed, then every cell of the reference notebook run once in order) re-runs all of
the notebook's autograded test cells ``--runs`` times (default 200). Before each run the
legacy global seeds change (``numpy.random.seed(run)``, ``random.seed(run)``); solutions drawing
from ``numpy.random.default_rng()`` (``rng=None``) get fresh OS entropy on every call anyway.
A run counts a *false failure* for every test cell that raises or writes to stderr (other than
what the course's ``IgnorePattern`` drops), which is exactly what nbgrader scores 0. Target:
zero false failures.

Statistical checks are designed for a false-failure probability of about 1e-6 each, so 200
runs of a dozen checks should fail with probability around 1e-3: any failure seen here is a
flaw to fix, not bad luck.

Run: ``python benchmarks/flakiness_audit.py`` (``--runs 200``, ``--assignment 02_laplace``,
``--jobs 2`` kernels side by side). Exits 1 if anything failed.
"""

from __future__ import annotations

import argparse
import os
import queue
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from jupyter_client.manager import KernelManager

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from dpgrader import assignments_in, notebooks_of  # noqa: E402
from dpgrader import guard  # noqa: E402
from dpgrader.preprocessors.source_notebook import _bound_names, _import_lines  # noqa: E402

RUN_TIMEOUT = 600  # seconds for one cell


@dataclass
class Audit:
    assignment: str
    tests: list[str]
    runs: int = 0
    failures: list[tuple[int, str, str]] = field(default_factory=list)
    seconds: float = 0.0
    setup_problem: str = ""


def _ignored_stderr() -> re.Pattern | None:
    """The course's ``IgnorePattern`` (stderr output the autograder drops before scoring), if enabled."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    if config.IgnorePattern.get("enabled") and config.IgnorePattern.get("pattern"):
        return re.compile(config.IgnorePattern.pattern)
    return None


IGNORED = _ignored_stderr()


def _execute(client, code: str) -> tuple[bool, str]:
    """Run ``code``; (failed, what) where failed means an error or stderr output, as nbgrader scores it."""
    problems: list[str] = []

    def hook(message):
        kind, content = message["msg_type"], message["content"]
        if kind == "error":
            problems.append(f"{content['ename']}: {content['evalue']}")
        elif kind == "stream" and content.get("name") == "stderr":
            if not (IGNORED and IGNORED.search(content["text"])):
                problems.append("stderr: " + content["text"].strip()[:300])

    reply = client.execute_interactive(code, timeout=RUN_TIMEOUT, output_hook=hook, allow_stdin=False)
    failed = reply["content"]["status"] != "ok" or bool(problems)
    return failed, " | ".join(problems) or reply["content"].get("evalue", "")


def audit(assignment: str, runs: int, progress) -> Audit:
    (path,) = notebooks_of(REPO / "source" / assignment)[:1]
    notebook = nbformat.read(str(path), as_version=4)
    meta = [cell.metadata.get("nbgrader", {}) for cell in notebook.cells]
    tests = [(m["grade_id"], c.source) for c, m in zip(notebook.cells, meta)
             if c.cell_type == "code" and m.get("grade") and not m.get("solution")]
    result = Audit(assignment, [name for name, _ in tests])
    imports = [line for c, m in zip(notebook.cells, meta) if c.cell_type == "code" and m.get("locked")
               and not m.get("grade") and not m.get("solution") for line in _import_lines(c.source)]
    keep_out = {name for c, m in zip(notebook.cells, meta) if m.get("solution") for name in _bound_names(c.source)}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"audit-{assignment}-") as cwd:
        manager = KernelManager(kernel_name="python3")
        manager.start_kernel(cwd=cwd, env={**os.environ, "MPLBACKEND": "Agg"}, extra_arguments=[],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = manager.client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=120)
            failed, what = _execute(client, guard.setup_code(imports, sorted(keep_out)))
            for cell in notebook.cells:
                if failed:
                    result.setup_problem = what
                    return result
                if cell.cell_type == "code":
                    failed, what = _execute(client, cell.source)
            for run in range(1, runs + 1):
                _execute(client, f"import numpy as _np, random as _random\n_np.random.seed({run}); _random.seed({run})")
                for name, source in tests:
                    failed, what = _execute(client, source)
                    if failed:
                        result.failures.append((run, name, what))
                result.runs = run
                progress.put(1)
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)
            result.seconds = time.perf_counter() - started
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--assignment", action="append", help="default: every assignment in source/")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="kernels side by side")
    args = parser.parse_args(argv)
    assignments = args.assignment or assignments_in(REPO / "source")

    from tqdm.auto import tqdm

    progress: queue.Queue = queue.Queue()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(audit, a, args.runs, progress) for a in assignments]
        with tqdm(total=args.runs * len(assignments), desc="test runs", unit="run") as bar:
            while not all(f.done() for f in futures):
                try:
                    bar.update(progress.get(timeout=1))
                except queue.Empty:
                    pass
            while not progress.empty():
                bar.update(progress.get())
        audits = [f.result() for f in futures]

    print(f"\n{'assignment':<26}{'test cells':>11}{'runs':>6}{'test executions':>17}{'false failures':>16}{'seconds':>9}")
    total = 0
    for a in audits:
        executions = a.runs * len(a.tests)
        print(f"{a.assignment:<26}{len(a.tests):>11}{a.runs:>6}{executions:>17}{len(a.failures):>16}{a.seconds:>9.0f}")
        total += len(a.failures)
    for a in audits:
        if a.setup_problem:
            print(f"\n{a.assignment}: the reference notebook did not run: {a.setup_problem}")
        for run, name, what in a.failures:
            print(f"\n{a.assignment} run {run}: {name} failed: {what}")
    problems = total + sum(bool(a.setup_problem) for a in audits)
    print(f"\n{'no false failure' if not problems else f'{problems} problems'} "
          f"in {sum(a.runs * len(a.tests) for a in audits)} test executions")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
