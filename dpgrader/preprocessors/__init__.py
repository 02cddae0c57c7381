"""nbgrader preprocessors that make autograding survive real submissions, and feedback safe to hand back.

``nbgrader_config.py`` puts them in nbgrader's pipelines by dotted name (nbconvert imports
a preprocessor given as a string):

- sanitize (before anything runs): :class:`SanitizeMetadata` replaces nbgrader's
  ``DeduplicateIds``, :class:`RestoreCells` replaces ``OverwriteCells``;
- autograde: :class:`GuardedExecute` replaces ``Execute``, :class:`AllOrNothingTests`
  runs before ``SaveAutoGrades``;
- autograde, last: :class:`NeutralizeActiveContent` makes every output, Markdown and raw cell of the
  autograded notebook inert (formgrader renders that file);
- feedback: :class:`HideReviewNotes` right after ``GetGrades`` (review flags stay in
  formgrader), :class:`HideHiddenTests`, then :class:`NeutralizeActiveContent` again.

Why, as measured on nbgrader 0.9.6 (see the tests in ``tests/grader/test_grading_failure_modes.py``):

- ``DeduplicateIds`` turns the metadata of a duplicated cell into ``{}`` instead of removing
  it. With ``add_missing_cells`` the submission then fails with ``KeyError: 'grade_id'``;
  without it, ``CheckCellMetadata`` raises ``SchemaTooOldError`` (the misleading "old
  metadata format" message of nbgrader#1083), which aborts the grading of *everybody*.
- ``OverwriteCells.add_missing_cells`` raises ``KeyError`` when the cell before a missing
  test cell is missing too (a student who deleted an exercise with its tests, or
  submitted an empty notebook), and never restores a deleted read-only (set-up) cell.
- A dead kernel (``os._exit``, ``exit()``, a crash) discards the whole notebook, also the
  tests that had already passed; a kernel that ignores the interrupt after a timeout
  does the same.
- A test cell whose output holds an ``execute_result`` is scored by that number (nbgrader's
  partial credit), even when an assertion failed after it: a student's function can call
  ``sys.displayhook(2.0)`` to award itself the points.
- Feedback HTML shows the full test cells, hidden tests included, and IPython tracebacks
  quote the lines of the failing (hidden) code.

The plug-ins live in :mod:`.sanitize`, :mod:`.execute`, :mod:`.feedback` and :mod:`.active_content` (what they share
in :mod:`.source_notebook`; the feedback's secret scrubber in :mod:`.scrubber`, its traceback frames in
:mod:`.tracebacks`); this package re-exports them under the dotted names
``nbgrader_config.py`` uses.
"""

from dpgrader.preprocessors.active_content import NeutralizeActiveContent, clean_html  # noqa: F401
from dpgrader.preprocessors.execute import AllOrNothingTests, GuardedExecute
from dpgrader.preprocessors.feedback import (  # noqa: F401 (tests and nbgrader_config.py use them)
    FEEDBACK_TEMPLATE_DIRS,
    GetGradesWithPending,
    HideHiddenTests,
    HideReviewNotes,
    NamedFeedbackExporter,
)
from dpgrader.preprocessors.scrubber import (  # noqa: F401 (tests use them)
    MIN_SECRET_LENGTH,
    SECRET_REGIONS,
    message_secrets,
    quotes_secret,
    scrub,
    secret_lines,
)
from dpgrader.preprocessors.tracebacks import raised_by_the_tests, student_frames  # noqa: F401
from dpgrader.preprocessors.sanitize import RestoreCells, SanitizeMetadata

__all__ = ["SanitizeMetadata", "RestoreCells", "GuardedExecute", "AllOrNothingTests", "HideHiddenTests", "HideReviewNotes",
           "GetGradesWithPending", "NeutralizeActiveContent"]
