"""Grade a whole class with one command, and know why every grade is what it is.

Instructor commands, run in the course folder (the one holding ``nbgrader_config.py``)::

    python -m dpgrader.classroom collect A  # the exchange's submissions of A, checked (dpgrader.exchange)
    python -m dpgrader.classroom grade      # autograde every submission, feedback, grades.csv
    python -m dpgrader.classroom export     # grades.csv again (e.g. after manual grading)
    python -m dpgrader.classroom export --to canvas|moodle [--roster FILE]  # the LMS's import file (.lms)
    python -m dpgrader.classroom feedback   # regenerate feedback (e.g. after manual grading)
    python -m dpgrader.classroom mistakes   # what the class got wrong (also written after grade)

``grade`` finds every ``submitted/<student>/<assignment>/``, autogrades each one in its
own private scratch course folder on a pool of worker processes (:mod:`dpgrader.grading.pool`,
:mod:`dpgrader.grading.worker`), every kernel in the bubblewrap sandbox
(:mod:`dpgrader.sandbox`: the kernel sees its own copy of the submission and the
libraries, nothing else), and merges the results into the course's ``gradebook.db`` from
this one process. Each submission ends with an :class:`~dpgrader.outcomes.Outcome`
whose :class:`~dpgrader.outcomes.Status` says what happened (``ok``, ``timed_out``,
a limit hit, ``kernel_died``, ``missing``, ``refused``, ``error`` / ``killed`` = not graded,
...). Outcomes are kept in ``autograded/grading_outcomes.csv`` and joined into
``grades.csv``, with *review flags*: what the syntax-tree review (:mod:`dpgrader.review`)
and copy detection (:mod:`dpgrader.similarity`) found worth a human look, whatever the score.
``--no-sandbox`` grades where bubblewrap cannot run (unsafe; ``sandboxed=False`` rows).
After grading, ``mistakes/<assignment>.html`` and ``.csv`` next to ``grades.csv`` say what
the class got wrong: every autograded test, how many of the submissions that ran failed it,
the mistake it targets (the test's docstring and visible hints, never hidden-test code) and
who made it; the written answers still pending; figures of both (:mod:`.mistakes`,
:mod:`.mistakes_page`).
The package holds :mod:`.grade` (grading a class), :mod:`.merge` (one result into the
gradebook), :mod:`.export` (``grades.csv``, feedback, summary), :mod:`.mistakes` and
:mod:`.mistakes_page` (what the class got wrong) and :mod:`.cli` (the command line); the
names below are re-exported here.
"""

from dpgrader.classroom.cli import main
from dpgrader.grading.export import GRADE_FIELDS, GradeRow, export_grades, regenerate_feedback, summarize
from dpgrader.grading.flagging import add_copy_flags
from dpgrader.grading.run import PATTERN_CHARACTERS, ensure_assignments, find_submissions, grade_class, run_grading
from dpgrader.grading.merge import merge
from dpgrader.classroom.mistakes import ClassMistakes, Mistake, WrittenAnswer, class_mistakes, summarize_mistakes
from dpgrader.classroom.mistakes_page import mistakes_html, write_mistakes
from dpgrader.outcomes import UNGRADED, Outcome, Status, read_outcomes, write_outcomes
from dpgrader.grading.review_comments import comment_in_gradebook
from dpgrader.review import review_flags

__all__ = [
    "grade_class", "run_grading", "GradeRow", "export_grades", "regenerate_feedback", "summarize", "main", "find_submissions",
    "ensure_assignments", "add_copy_flags", "merge", "GRADE_FIELDS", "PATTERN_CHARACTERS",
    "UNGRADED", "Outcome", "Status", "read_outcomes", "write_outcomes", "comment_in_gradebook", "review_flags",
    "ClassMistakes", "Mistake", "WrittenAnswer", "class_mistakes", "summarize_mistakes", "mistakes_html", "write_mistakes",
]
