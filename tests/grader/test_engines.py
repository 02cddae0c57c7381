"""Every grading engine passes the same tests: the local pool, Dask, and a serial in-process one (issue 38).

An engine takes packed tasks and yields ``(task, result)`` pairs (:class:`dpgrader.grading.engine.Engine`);
deadlines, tokens and ``killed`` results are written once, in the engine base. The tasks here are
tiny and purpose-made (:mod:`helpers.toy_grading`: no nbgrader, no kernel), so what is tested is
the engine: each task answered once with its own result and its assignment's bundle, a task past
its time limit killed while the others are graded, a grader that fails costs one task, an answer
with a token of no task is never a grade. The serial engine (:mod:`helpers.serial_engine`) is the
proof that a third engine is one class.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import pytest

from dpgrader.limits import GradingLimits
from dpgrader.grading.task import AssignmentBundle, PackedTask
from dpgrader.outcomes import UNGRADED, Status
from helpers.serial_engine import SerialEngine
from helpers.toy_grading import GRADER

pytestmark = pytest.mark.xdist_group("engines")  # each engine started once, by one xdist worker

TESTS = Path(__file__).resolve().parents[1]
BUNDLES = {name: AssignmentBundle(name, {"note.txt": f"the bundle of {name}".encode()}) for name in ("a1", "a2")}


def _task(student: str, do: str, assignment: str = "a1", seconds: float = 60.0) -> PackedTask:
    limits = GradingLimits().replace(submission_seconds=seconds)
    return PackedTask(assignment, student, secrets.token_hex(16), limits, {"do.txt": do.encode()}, feedback=False,
                      sandboxed=False)


@pytest.fixture(scope="module", params=[pytest.param("pool", marks=pytest.mark.pipeline),
                                        pytest.param("dask", marks=pytest.mark.pipeline), "serial"])
def engine(request, tmp_path_factory):
    """The engine, started once for the module's tests (the pool and Dask with two workers each)."""
    cluster = None
    if request.param == "pool":
        from dpgrader.grading.pool import PoolEngine

        engine = PoolEngine(2, env={"PYTHONPATH": str(TESTS)}, grader=GRADER)
    elif request.param == "dask":
        from dpgrader.grading.cluster import DaskEngine
        from helpers.dask_cluster import DaskProcesses

        cluster = DaskProcesses(tmp_path_factory.mktemp("dask"))
        cluster.start_scheduler()
        for name in ("w1", "w2"):
            cluster.start_worker(name)
        cluster.wait_for_workers(2)
        engine = DaskEngine(cluster.address, grader=GRADER)
    else:
        engine = SerialEngine(GRADER)
    try:
        with engine:
            yield engine
    finally:
        if cluster is not None:
            cluster.stop()


def _grade(engine, tasks) -> dict[str, tuple]:
    """``student -> (status, messages)`` of every pair the engine yields; each task exactly once."""
    pairs = list(engine.grade(iter(tasks), BUNDLES))
    assert sorted(task.token for task, _ in pairs) == sorted(task.token for task in tasks), "a task not answered once"
    assert all(result.token == task.token for task, result in pairs)
    return {task.student: (result.status, result.messages) for task, result in pairs}


def test_every_task_is_answered_once_with_its_own_result_and_bundle(engine):
    tasks = [_task(f"s{i}", "ok", "a1" if i % 2 else "a2") for i in range(6)]
    got = _grade(engine, tasks)
    assert got == {t.student: (Status.OK, (f"graded {t.student} with the bundle of {t.assignment}",)) for t in tasks}


def test_a_task_past_its_time_limit_is_killed_and_the_others_are_graded(engine):
    started = time.monotonic()
    got = _grade(engine, [_task("slow", "sleep 60", seconds=1), _task("quick", "ok"), _task("next", "ok", "a2")])
    assert got["slow"] == (Status.KILLED, ("grading took longer than 1 s and was stopped",))
    assert got["quick"][0] is got["next"][0] is Status.OK
    assert time.monotonic() - started < 45, "the slow task was not stopped at its deadline"


def test_a_grader_that_fails_costs_that_task_only(engine):
    got = _grade(engine, [_task("broken", "raise"), *[_task(f"after{i}", "ok") for i in range(3)]])
    assert got["broken"][0] in UNGRADED and not any("graded broken" in m for m in got["broken"][1])
    assert all(got[f"after{i}"] == (Status.OK, (f"graded after{i} with the bundle of a1",)) for i in range(3))


def test_an_answer_with_the_token_of_no_task_is_never_a_grade(engine):
    got = _grade(engine, [_task("liar", "forge", seconds=4), _task("honest", "ok")])
    assert got["liar"][0] in UNGRADED and not any("forged" in m for m in got["liar"][1])
    assert got["honest"][0] is Status.OK
