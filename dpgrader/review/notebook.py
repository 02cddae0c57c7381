"""The entry points: review a notebook, give its flags as strings, show them in formgrader."""

from __future__ import annotations

from dpgrader.review.reading import instructor_code, parse_cell, read_notebook, student_cells
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
    A notebook nbformat cannot read (:func:`dpgrader.intake.read_notebook`) gives ``()``: the
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
