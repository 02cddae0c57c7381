"""The grading run: one class graded on a pool of workers, one typed task and result per submission.

Modules, in the order a submission meets them:

- :mod:`.task` — :class:`~.task.GradingTask` (what a worker is asked to grade) and
  :class:`~.task.GradingResult` (what it answers): frozen values, JSON only across a process boundary.
- :mod:`.limits` — :class:`~.limits.GradingLimits`, every limit of a grading run in one place.
- :mod:`.run` — :func:`~.run.grade_class`: find the submissions, pre-flight, grade, merge, copy flags.
- :mod:`.intake` — what a submission may hold (regular files only), the one reading of a notebook.
- :mod:`.preflight` — each assignment's reference solution graded first; its run time sets the budget.
- :mod:`.pool` — worker processes, one task each at a time, results accepted from the right task only.
- :mod:`.worker` — ``python -m dpgrader.grading.worker``: one submission in a throwaway course folder.
- :mod:`.merge` — one result into the course's gradebook, folders and outcome.
"""
