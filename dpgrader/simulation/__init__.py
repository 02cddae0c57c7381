"""A class simulation: 30 made-up students hand in every released assignment, and get graded.

    python -m dpgrader.simulation demo        # what `make demo` runs

builds a course folder (``demo/``) from the repository's ``source/``, hands each student
a made-up submission of every assignment in ``release/`` (correct, partial, empty, wrong,
broken and hostile ones, see :data:`KINDS`), grades the class with
:func:`dpgrader.classroom.grade_class`, and leaves ``demo/grades.csv``,
``demo/feedback/<student>/<assignment>/``, ``demo/grade_distribution.png`` and a summary:
per assignment, and per kind of submission (which shows the grading does what the
course promises: wrong, delegating and monkeypatching answers earn nothing, broken
notebooks are recorded, everybody else is graded).

Students are the first made-up people of :func:`dplib.datasets.load_adult_with_pii`.
Everything is seeded: the same command gives the same class.
The package holds :mod:`.submissions` (the kinds of student and their notebooks) and
:mod:`.demo` (building, grading and reporting the class, and the command line); the
names below are re-exported here.
"""

from dpgrader.simulation.demo import (
    MARKER,
    autograded_percent,
    build_class,
    kind_table,
    main,
    plot_distribution,
    run,
)
from dpgrader.simulation.submissions import KINDS, STUB, assign_kinds, make_submission, student_roster

__all__ = [
    "KINDS", "MARKER", "STUB", "student_roster", "assign_kinds", "make_submission", "build_class",
    "autograded_percent", "plot_distribution", "kind_table", "run", "main",
]
