"""A Dask worker plugin that makes its worker answer some tasks with forged results, for the cluster tests.

Registered on a test cluster, it replaces, in each worker process, the function a task's grading calls
(:func:`dpgrader.grading.worker.grade`, looked up at each task) by one that grades honestly, but for the
students named ``mallory_*``, whose result is forged as a worker that lies would forge it:

- ``mallory_replay``: the token of another task (the first this worker saw, or one never sent);
- ``mallory_paths``: a graded notebook named outside the result's folder;
- ``mallory_fields``: the seconds it took as text.

Unregistering it puts the honest function back.
"""

from __future__ import annotations

import secrets
from dataclasses import replace

from distributed import WorkerPlugin

from dpgrader.grading.task import GradingResult
from dpgrader.outcomes import Status


class ForgeResults(WorkerPlugin):
    name = "test-forge-results"

    def setup(self, worker) -> None:
        from dpgrader.grading import worker as module

        honest = getattr(module, "honest_grade_for_tests", module.grade)
        module.honest_grade_for_tests = honest
        seen: list[str] = []

        def forged(task, bundle, scratch_base=None):
            seen.append(task.token)
            if not task.student.startswith("mallory_"):
                return honest(task, bundle, scratch_base)
            result = GradingResult(task.token, Status.OK, ("forged",))
            if task.student == "mallory_replay":
                return replace(result, token=seen[0] if seen[0] != task.token else secrets.token_hex(16))
            if task.student == "mallory_paths":
                return replace(result, autograded={"../../escaped.ipynb": b"{}"})
            return replace(result, seconds="forever")

        module.grade = forged

    def teardown(self, worker) -> None:
        from dpgrader.grading import worker as module

        module.grade = getattr(module, "honest_grade_for_tests", module.grade)
