"""Student ids: the one check every place an id enters the course makes (folders, gradebook, formgrader).

A student id becomes a folder name (``submitted/<id>/``), a glob nbgrader expands, a primary key of
the gradebook, part of a URL and text in formgrader's pages. An id taken from an inbound folder name
is written by the student, so it is hostile until checked: ``<img src=x onerror=...>`` is markup in a
page, ``x[1]`` a pattern, ``..`` a way out of ``submitted/``. Only ids made of ``[A-Za-z0-9._@-]``
(a login or an e-mail address), starting with a letter, a digit or ``_``, at most 128 characters
(the gradebook's column), are accepted; anything else is refused with a message naming the id.
"""

from __future__ import annotations

import re

#: The characters of a student id, and its length (nbgrader's ``Student.id`` column is ``String(128)``).
STUDENT_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._@-]{0,127}")


def valid_student_id(student_id: object) -> bool:
    """Whether ``student_id`` is an acceptable student id (see the module's docstring).

    A first ``.`` (a hidden folder, ``..``) or ``-`` (an option to a command line) is refused too.

    Examples
    --------
    >>> valid_student_id("ada.lovelace@example.org"), valid_student_id("bob_2")
    (True, True)
    >>> valid_student_id("<img src=x onerror=alert(1)>"), valid_student_id(".."), valid_student_id("x[1]")
    (False, False, False)
    """
    return isinstance(student_id, str) and STUDENT_ID.fullmatch(student_id) is not None


def require_student_id(student_id: object, name: str = "student id") -> str:
    """``student_id`` itself if it is acceptable (:func:`valid_student_id`), else :class:`ValueError`.

    Parameters
    ----------
    student_id : str
        The id to check: letters, digits and ``. _ @ -``, 1 to 128 characters, not starting with ``.`` or ``-``.
    name : str
        What the id is, for the message (``"student folder"``, ``"student id"``).

    Raises
    ------
    ValueError
        Naming ``name``, the allowed characters and the id received (its ``repr``: markup and control
        characters show as text).

    Examples
    --------
    >>> require_student_id("bob_2")
    'bob_2'
    >>> require_student_id("a b")
    Traceback (most recent call last):
    ...
    ValueError: student id must be 1 to 128 of the characters A-Z a-z 0-9 . _ @ - (not starting with . or -); got 'a b'
    """
    if not valid_student_id(student_id):
        raise ValueError(f"{name} must be 1 to 128 of the characters A-Z a-z 0-9 . _ @ - "
                         f"(not starting with . or -); got {student_id!r}")
    return student_id
