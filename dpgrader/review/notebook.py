"""The entry points: review a notebook, give its flags as strings, show them in formgrader."""

from __future__ import annotations

from dpgrader.review.cells import instructor_code, parse_cell, read_notebook, student_cells
from dpgrader.review.reviewer import Reviewer
from dpgrader.review.rules import Flag


def review_notebook(notebook, instructor=None) -> tuple[Flag, ...]:
    """Every :class:`Flag` of the cells the student wrote, in notebook order.

    Parameters
    ----------
    notebook : nbformat.NotebookNode, dict, str or Path
        The submitted notebook.
    instructor : same types, optional
        The assignment's source (or release) notebook: its read-only cells' imports tell
        what ``np``, ``dplib``, ``check_close`` ... are, and only cells it has as
        read-only or test cells are left out of the review (a student cannot hide code
        by giving a cell fake ``locked`` metadata).

    A cell the review cannot finish (the parser or the walk raises, e.g. ``MemoryError``
    on a gigantic expression) gets a ``"review"`` flag saying so (:func:`unfinished`), and
    the review goes on with the next cell: a cell is never passed over in silence.
    """
    notebook = read_notebook(notebook)
    instructor = read_notebook(instructor) if instructor is not None else None
    reviewer = Reviewer()
    for code in instructor_code(notebook, instructor):
        tree = parse_cell(code)
        if tree is not None:
            reviewer.bind_imports(tree)
    for name, code, solution in student_cells(notebook, instructor):
        try:
            tree = parse_cell(code)
            if tree is not None:
                reviewer.review(name, tree, solution)
        except Exception as error:  # noqa: BLE001 -- turned into a flag, never dropped (fail closed)
            reviewer.flags.append(unfinished(name, error))
    unique = dict.fromkeys(reviewer.flags)
    return tuple(unique)


def unfinished(cell: str, error: BaseException) -> Flag:
    """The flag of a cell the review could not finish: which error stopped it, and that a person must read it."""
    message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    message = message if len(message) <= 160 else message[:157] + "..."
    return Flag("review", f"could not finish ({message}): a person must read this cell", cell, 1)


def review_flags(notebook_path, instructor=None) -> tuple[Flag, ...]:
    """The review flags of a notebook, each once.

    ``str(flag)`` is what ``grades.csv``, the class summary and formgrader show
    (``"kind: reason (cell, line n)"``, one line, control characters escaped).
    A notebook nbformat cannot read (:func:`dpgrader.grading.intake.read_notebook`) gives ``()``: the
    grader reports it as unreadable. A review that fails for any
    other reason gives one ``"review: could not finish (...)"`` flag: a person must read
    the notebook (fail closed).
    """
    try:
        notebook = read_notebook(notebook_path)
    except (OSError, ValueError):  # not a file, or UnreadableNotebook (a ValueError): graded as unreadable
        return ()
    try:
        flags = review_notebook(notebook, instructor)
    except Exception as error:  # noqa: BLE001 -- turned into a flag, never dropped (fail closed)
        message = str(unfinished("", error).reason).replace("this cell", "this notebook")
        return (Flag("review", message),)
    return tuple(dict.fromkeys(flags))


REVIEW_HEADING = "**Automatic review** (for the instructor to check; not a grade):"


def comment_in_gradebook(gradebook, student: str, assignment: str, flags_by_notebook: dict[str, tuple[Flag, ...]]) -> int:
    """Show review flags in formgrader: flag the submitted notebook and comment on its first solution cell.

    Formgrader's comment is a place a student may see (released feedback): each flag is shown
    :meth:`~dpgrader.outcomes.Flag.anonymous`, naming no classmate.

    Each notebook with flags gets nbgrader's ``flagged`` mark (formgrader lists it) and an
    automatic comment on its first solution cell, starting with :data:`REVIEW_HEADING`
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

