"""Copy detection: solution cells that match dplib's own implementation, or a classmate's cell.

Each solution cell is reduced to a sequence of syntax-tree tokens that forgets what copying
changes cheaply (the method of MOSS, Schleimer, Wilkerson & Aiken, "Winnowing: local
algorithms for document fingerprinting", SIGMOD 2003, applied to syntax trees as JPlag does):

- **names**: every identifier (variables, arguments, function names) becomes ``V``;
  attribute names (``rng.laplace``) and numbers stay, strings become ``S``;
- **layout, comments, docstrings**: gone with the parse (docstrings are dropped);
- **statement order**: the statements of every block are sorted by their own tokens, so
  swapping two independent lines changes nothing.

The token sequence is cut into k-grams (:data:`K` tokens), hashed, and *winnowed* (the
smallest hash of every window of :data:`WINDOW` k-grams is kept, MOSS's guarantee: any
shared run of ``K + WINDOW - 1`` tokens is seen). The similarity of two cells is the
Jaccard index of their fingerprint sets; for dplib, the *containment* of the student's
fingerprints in dplib's (a pasted body sits inside dplib's function with its validation).

**Minimum size.** An exercise whose reference solution has fewer than
:data:`MIN_TOKENS` tokens (a one-line formula such as ``return 1.0 / n``) is never
reported: everybody writes the same line. :func:`minimum_sizes` lists each exercise's size.

**Common sources.** Two cells that are both built on the instructor's reference solution
(each holds at least :data:`BUILT_ON` of its fingerprints) are compared only on what each
*added* to it: the published solution (which the demo's honest students hand in) says
nothing about the two students, lines of their own that are alike do. Two cells no closer
to each other than to the reference are not reported either. Two copies of the same dplib
function are each reported as copying dplib, not as a pair.

**Who copied whom.** Code cannot tell; the hand-in times can hint. The report shows every
pair; :func:`copy_flags` flags only the later of two students when nbgrader's
``timestamp.txt`` says who handed in first (both when it does not), so the classmate whose
work was taken is not flagged for it. The reviewer decides.

The package holds :mod:`.fingerprints` (normalizing and winnowing), :mod:`.matches` (what is
compared, the matches and the flags) and :mod:`.report` (the HTML page); the names below are
re-exported here.
"""

from dpgrader.similarity.fingerprints import K, WINDOW, containment, fingerprints, jaccard, normalize
from dpgrader.similarity.matches import (
    BUILT_ON,
    MIN_TOKENS,
    THRESHOLD,
    Match,
    copy_flags,
    course_matches,
    dplib_source,
    find_matches,
    minimum_sizes,
    solution_cells,
    submission_times,
)
from dpgrader.similarity.report import report_html, write_report

__all__ = ["Match", "normalize", "fingerprints", "jaccard", "containment", "find_matches", "course_matches",
           "minimum_sizes", "solution_cells", "dplib_source", "report_html", "write_report", "copy_flags",
           "submission_times", "K", "WINDOW", "MIN_TOKENS", "THRESHOLD", "BUILT_ON"]
