"""Shared pytest set-up: a non-interactive matplotlib backend, the bundled datasets and graded assignments as fixtures."""

import atexit
import os
import sys

os.environ.setdefault("MPLBACKEND", "Agg")
# pytest-xdist runs one test process per core; a BLAS or OpenMP pool of one thread per core in each of them
# oversubscribes the cores, and OpenBLAS's threads spin while they wait: two test_reconstruction.py runs side by
# side took 12.3 s each with two threads, 4.4 s with one. One thread per process, as the grading sandbox's kernels
# have (set before numpy loads, and inherited by the servers and kernels the tests start).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import pytest  # noqa: E402

# dplib, nbgrader and the helpers are imported where they are used: the xdist controller, which runs no test,
# starts its workers about a second sooner without them.


_lost_group = pytest.StashKey[bool]()
LOST_GROUP = (
    "--dist loadgroup lost this test's xdist_group: this pytest and pytest-xdist do not work together "
    "(pytest-dev/pytest-xdist#1386) and every worker would grade the shared courses again; "
    "install the versions pyproject.toml asks for (`make clean-venv test`)"
)


def pytest_collection_finish(session):
    """Note the tests of a ``--dist loadgroup`` run that lost their ``xdist_group`` (pytest-xdist#1386).

    xdist groups a test by appending ``@<group>`` to its node id; when that silently fails, the
    groups are split across workers. Each such test then fails with :data:`LOST_GROUP`.
    """
    if getattr(session.config.option, "loadgroup", False):
        for item in session.items:
            if item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
                item.stash[_lost_group] = True


def pytest_configure(config):
    """Gradebooks made in the test processes (with nbgrader's API) skip the ``alembic`` subprocess, as commands do.

    (Not in pytest-xdist's controller, which makes none.)
    """
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    if hasattr(config, "workerinput"):
        atexit.register(_exit_without_finalizing)
    from dpgrader.gradebook import stamp_new_gradebooks_in_process

    stamp_new_gradebooks_in_process()


def _exit_without_finalizing():
    """End a pytest-xdist worker once every exit handler has run, without tearing its modules down.

    The worker has sent every report by then; freeing a test session's heap object by object took 1 to 3 s a
    worker, which the controller waited for (``execnet`` joins each worker's process). Handlers registered before
    this one (logging's, multiprocessing's, ``weakref.finalize``'s) would run after it: they are run here first.
    """
    atexit.unregister(_exit_without_finalizing)
    atexit._run_exitfuncs()  # the others, now (CPython runs them newest first, as at exit)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if item.stash.get(_lost_group, False):
        pytest.fail(LOST_GROUP, pytrace=False)


@pytest.fixture(scope="module")
def people():
    """The Adult train split with made-up PII."""
    from dplib.datasets import load_adult_with_pii

    return load_adult_with_pii()


@pytest.fixture(scope="module")
def voters():
    """The made-up public voter roll."""
    from dplib.datasets import load_voter_roll

    return load_voter_roll()


@pytest.fixture(scope="session")
def graded_assignment(tmp_path_factory):
    """``graded_assignment(name)``: the assignment graded once per test process, then shared.

    One course folder and one ``nbgrader autograde`` run per assignment grade the reference,
    the untouched release and every variant (:func:`helpers.variants.grade_assignment`); the
    tests only read the result. Tests that use it carry ``pytest.mark.xdist_group(name)``, so
    one worker grades each assignment.
    """
    from helpers.variants import grade_assignment

    graded = {}

    def grade(name: str):
        if name not in graded:
            graded[name] = grade_assignment(tmp_path_factory.mktemp(name), name)
        return graded[name]

    return grade


def pytest_terminal_summary(terminalreporter):
    """After the run: where the suite's time went, summed from pytest's own durations by package and by file.

    Every phase of every test (set-up, call, tear-down) counts, so a module-scoped fixture lands on the test that
    built it. With ``-n`` the times add up across workers: their sum is about workers x wall-clock time.
    """
    by_file: dict[str, float] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            duration, nodeid = getattr(report, "duration", None), getattr(report, "nodeid", "")
            if duration is not None and nodeid and getattr(report, "when", None):
                path = nodeid.split("::", 1)[0]
                by_file[path] = by_file.get(path, 0.0) + duration
    if not by_file:
        return
    by_package: dict[str, float] = {}
    for path, seconds in by_file.items():
        package = "/".join(path.split("/")[:2]) if path.startswith("tests/") else path.split("/")[0]
        by_package[package] = by_package.get(package, 0.0) + seconds
    total = sum(by_file.values())
    write = terminalreporter.write_line
    terminalreporter.section("time by package and by file (pytest's durations, summed)")
    for package, seconds in sorted(by_package.items(), key=lambda item: -item[1]):
        write(f"{seconds:9.1f} s {seconds / total:6.1%}  {package}")
    write("")
    for path, seconds in sorted(by_file.items(), key=lambda item: -item[1])[:25]:
        write(f"{seconds:9.1f} s {seconds / total:6.1%}  {path}")
    write(f"{total:9.1f} s in all")
