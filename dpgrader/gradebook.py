"""New nbgrader gradebooks, stamped with their schema revision without starting a process.

nbgrader stamps every new gradebook with the newest revision of its database schema, and learns that
revision by running the ``alembic heads`` command (``nbgrader.api.get_alembic_version``): a second Python
that imports alembic and SQLAlchemy, about 1.8 CPU s for each new gradebook (each course's first command,
each grading run's template gradebook). The revision is a constant of the installed nbgrader.
:func:`schema_head` reads it in this process from the same migration scripts, with alembic's own
``ScriptDirectory``, as the command does: about 0.15 s once per process, then nothing.

:func:`stamp_new_gradebooks_in_process` puts it in nbgrader's place. ``nbgrader_config.py`` calls it, so
every ``nbgrader`` command and formgrader use it, and so does this package wherever it makes a gradebook.
Should the scripts hold more than one head, nbgrader's own command decides, as before.
"""

from __future__ import annotations

import functools


@functools.cache
def schema_head() -> str:
    """The revision ``alembic heads`` prints first for nbgrader's migration scripts (e.g. ``'e43177bfe90b'``)."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    config = Config()
    config.set_main_option("script_location", ALEMBIC_DIR)
    return ScriptDirectory.from_config(config).get_current_head()  # raises when there are several heads


def stamp_new_gradebooks_in_process() -> None:
    """Make ``nbgrader.api`` read the schema revision of a new gradebook with :func:`schema_head` (idempotent)."""
    import nbgrader.api

    asked_alembic = getattr(nbgrader.api.get_alembic_version, "__wrapped__", nbgrader.api.get_alembic_version)

    @functools.wraps(asked_alembic)
    def schema_revision() -> str:
        try:
            return schema_head()
        except Exception:  # several heads, or scripts alembic cannot read: nbgrader's own way decides
            return asked_alembic()

    nbgrader.api.get_alembic_version = schema_revision
