"""Review flags shown in formgrader: the submitted notebook flagged, a comment on its first solution cell.

The review (:mod:`dpgrader.review`) finds the flags and writes nothing; this is where the grading run puts them
in the gradebook.
"""

from __future__ import annotations

from dpgrader.outcomes import Flag
from dpgrader.review import REVIEW_HEADING


def comment_in_gradebook(gradebook, student: str, assignment: str, flags_by_notebook: dict[str, tuple[Flag, ...]]) -> int:
    """Show review flags in formgrader: flag the submitted notebook and comment on its first solution cell.

    Formgrader's comment is a place a student may see (released feedback): each flag is shown
    :meth:`~dpgrader.outcomes.Flag.anonymous`, naming no classmate.

    Each notebook with flags gets nbgrader's ``flagged`` mark (formgrader lists it) and an
    automatic comment on its first solution cell, starting with :data:`~dpgrader.review.notebook.REVIEW_HEADING`
    (formgrader shows it in that cell's comment box), listing ``flags`` (every flag of the
    notebook, review and copy alike: an earlier automatic review section is replaced, never read
    back). A comment a grader wrote by hand is never touched. Returns the number of notebooks commented on.
    """
    from nbgrader.api import MissingEntry

    done = 0
    for notebook_name, flags in flags_by_notebook.items():
        if not flags:
            continue
        try:
            notebook = gradebook.find_submission_notebook(notebook_name, assignment, student)
        except MissingEntry:
            continue
        notebook.flagged = True
        order = {cell.name: i for i, cell in enumerate(notebook.notebook.source_cells)}
        comments = sorted(notebook.comments, key=lambda c: order.get(c.name, 1 << 30))
        if comments:
            comment = comments[0]
            previous = (comment.auto_comment or "").partition(REVIEW_HEADING)[0].rstrip()  # nbgrader's own comment
            text = REVIEW_HEADING + "\n" + "\n".join(f"- {flag}" for flag in dict.fromkeys(str(f.anonymous()) for f in flags))
            comment.auto_comment = f"{previous}\n\n{text}".strip() if previous and previous != "No response." else text
        done += 1
    gradebook.db.commit()
    return done
