"""Copy detection: solution cells that match a classmate's cell, dplib's own implementation, or the instructor's
reference solution.

Each solution cell is reduced to a sequence of syntax-tree tokens that forgets what copying
changes cheaply (the method of MOSS, Schleimer, Wilkerson & Aiken, "Winnowing: local
algorithms for document fingerprinting", SIGMOD 2003, applied to syntax trees as JPlag does):

- **names**: every identifier (variables, arguments, function names) becomes ``V``;
  attribute names (``rng.laplace``) and numbers stay, strings and f-strings become ``S``;
- **layout, comments, docstrings**: gone with the parse;
- **statement order**: the statements of every block are sorted by their own tokens, so
  swapping two independent lines changes nothing;
- **padding**: statements whose result nothing uses are dropped first
  (:func:`unused_statements`): bare expressions (``len(x)``, ``x is None``, docstrings),
  ``pass``, assignments, functions and imports whose names nothing else reads (repeated until
  nothing changes), but not calls that change an object (``values.append(x)``).

The token sequence is cut into k-grams (:data:`K` tokens), hashed, and *winnowed* (the
smallest hash of every window of :data:`WINDOW` k-grams is kept, MOSS's guarantee: any
shared run of ``K + WINDOW - 1`` tokens is seen); each top-level function is fingerprinted
on its own (:func:`cell_fingerprints`). The similarity of two cells is the Jaccard index of
their fingerprint sets. Tokens are made with explicit stacks: no cell is too deep.

**dplib.** A cell is compared with dplib's function of the same name *and every dplib
function it calls* (:func:`dplib_functions`: ``laplace_mech`` brings ``laplace_scale``,
``require_epsilon``, ``_as_real``, ``laplace_noise``, ``as_output``), by the containment of
the cell's fingerprints in theirs, in sequence and statement by statement
(:func:`statement_fingerprints`: a helper pasted under another name, or inlined into the
body, keeps its statements). It is reported at :data:`THRESHOLD`, when it is closer to dplib
than to the reference and holds at least :data:`DPLIB_EVIDENCE` fingerprints of dplib's that
the reference does not have (honest answers: at most 6; a pasted ``laplace_mech`` 105).

**The reference.** A cell holding :data:`REFERENCE_THRESHOLD` of the reference solution's
fingerprints, on an exercise whose reference has :data:`REFERENCE_MIN_TOKENS` tokens or
more, is reported as a copy of the instructor's reference, and the report counts such
submissions per exercise: a leaked solution key handed in by many shows up. Measured on the
right-but-different answers of ``tests/variant_cases``, independent answers hold at most 44%
of the reference (on exercises of :data:`MIN_TOKENS` tokens or more); the disguised key 100%.
Shorter exercises (two or three lines) are left out: independent answers converge there
(in ``tests/variant_cases`` two of them are the reference's very tokens).

**Minimum size.** An exercise whose reference solution has fewer than
:data:`MIN_TOKENS` tokens (a one-line formula such as ``return 1.0 / n``) is never
compared: everybody writes the same line. :func:`minimum_sizes` lists each exercise's size.

**Common sources.** Two cells that are both built on the instructor's reference solution
(each holds at least :data:`BUILT_ON` of its fingerprints) are compared only on what each
*added* to it, and only when they share at least :data:`CLASSMATE_EVIDENCE` fingerprints of
their own (on a short exercise independent answers converge on the same small change: the
honest students of ``make demo`` share up to 16; every copier of a classmate shares at
least 26 on some exercise of each assignment, which ``tests/grader/test_similarity.py`` checks). Each copy of the reference itself is reported as such; two cells no closer
to each other than to the reference are not reported either. Two copies of the same dplib
function are each reported as copying dplib, not as a pair.

**Who copied whom.** Code cannot tell; the hand-in times can hint. The report shows every
pair; :func:`copy_flags` flags only the later of two students when nbgrader's
``timestamp.txt`` says who handed in first (both when it does not), so the classmate whose
work was taken is not flagged for it. The reviewer decides.

**Fail closed.** A submission or cell that cannot be compared (a cell too deep for the
parser, a notebook that is JSON but not a notebook) is an :data:`UNCHECKED` match, flagged
``"copy check: could not compare ..."``; when a whole report fails,
:func:`dpgrader.classroom.add_copy_flags` flags every submission of the assignment.

The package holds :mod:`.unused_code` (the statements dropped first), :mod:`.winnowing`
(normalizing and winnowing), :mod:`.dplib_copies` (dplib's implementation with its helpers),
:mod:`.matches` (what is compared, and the matches), :mod:`.flags` (whom a match flags) and
:mod:`.report` (the HTML page); the names below are re-exported here.
"""

from dpgrader.similarity.winnowing import (
    K,
    UNIT_MIN_TOKENS,
    WINDOW,
    cell_fingerprints,
    containment,
    fingerprints,
    jaccard,
    normalize,
    statement_fingerprints,
    statement_units,
)
from dpgrader.similarity.matches import (
    BUILT_ON,
    CLASSMATE,
    CLASSMATE_EVIDENCE,
    DPLIB,
    DPLIB_EVIDENCE,
    MIN_TOKENS,
    REFERENCE,
    REFERENCE_MIN_TOKENS,
    REFERENCE_THRESHOLD,
    THRESHOLD,
    UNCHECKED,
    Match,
    course_matches,
    find_matches,
    minimum_sizes,
    solution_cells,
)
from dpgrader.similarity.dplib_copies import dplib_functions, dplib_source
from dpgrader.similarity.flags import copy_flags, submission_times
from dpgrader.similarity.report import report_html, write_report
from dpgrader.similarity.unused_code import unused_statements

__all__ = ["Match", "normalize", "fingerprints", "cell_fingerprints", "statement_units", "statement_fingerprints",
           "unused_statements", "jaccard", "containment", "find_matches", "course_matches", "minimum_sizes",
           "solution_cells", "dplib_source", "dplib_functions", "report_html", "write_report", "copy_flags",
           "submission_times", "K", "WINDOW", "UNIT_MIN_TOKENS", "MIN_TOKENS", "THRESHOLD", "BUILT_ON",
           "REFERENCE_MIN_TOKENS", "REFERENCE_THRESHOLD", "DPLIB_EVIDENCE", "CLASSMATE_EVIDENCE",
           "CLASSMATE", "DPLIB", "REFERENCE", "UNCHECKED"]
