"""The grading run: one class graded on a pool of workers, one typed task and result per submission.

Modules, in the order a submission meets them:

- :mod:`.task` — :class:`~.task.GradingTask` (what a worker is asked to grade) and
  :class:`~.task.GradingResult` (what it answers): frozen values, JSON only across a process boundary.
- :mod:`.run` — :func:`~.run.grade_class`: find the submissions, pre-flight, grade, merge, copy flags.
- :mod:`.preflight` — each assignment's reference solution graded first; its run time sets the budget.
- :mod:`.pool` — worker processes, one task each at a time, results accepted from the right task only.
- :mod:`.worker` — ``python -m dpgrader.grading.worker``: one submission in a throwaway course folder.
- :mod:`.merge` — one result into the course's gradebook, folders and outcome.

What the layers below share with the run sits below it: :mod:`dpgrader.limits` (every limit, read by the
sandbox and the execute plug-in) and :mod:`dpgrader.intake` (what a submission may hold, the one reading of
a notebook, used by the review).
"""
