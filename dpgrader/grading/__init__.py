"""The grading run: one class graded on an engine of workers, one typed task and result per submission.

Modules, in the order a submission meets them:

- :mod:`.run` — :func:`~.run.run_grading` (``grade_class``): the run as the list of its steps.
- :mod:`.plan` — :func:`~.plan.plan_run`: find the submissions (regular files only, ids not patterns), one task
  per submission, packed as it is sent.
- :mod:`.task` — :class:`~.task.GradingTask` (what a worker is asked to grade) and
  :class:`~.task.GradingResult` (what it answers): frozen values, JSON only across a process boundary.
- :mod:`.preflight` — :func:`~.preflight.grade_plan`: each assignment's reference solution graded first (its run
  time sets the budget), then the class, on one engine.
- :mod:`.engine` — :class:`~.engine.Engine`: packed tasks in, ``(task, result)`` pairs out; deadlines,
  tokens and ``killed`` results written once. :mod:`.pool` (local worker processes) and
  :mod:`.cluster` (Dask) are engines.
- :mod:`.worker` — ``python -m dpgrader.grading.worker``: one submission in a throwaway course folder.
- :mod:`.flagging` — the review of each submission, copies across the class, the flags in formgrader.
- :mod:`.merge` — :func:`~.merge.record`: one result reviewed, then merged into the course's gradebook, folders
  and outcome.
- :mod:`.export` — one :class:`~.export.GradeRow` per student and assignment: ``grades.csv``, the summary.

What the layers below share with the run sits below it: :mod:`dpgrader.limits` (every limit, read by the
sandbox and the execute plug-in) and :mod:`dpgrader.intake` (what a submission may hold, the one reading of
a notebook, used by the review).
"""
