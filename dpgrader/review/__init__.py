"""Static review of a submission: code worth a person's look, found in its syntax tree.

Student code and the hidden tests share one kernel, so whatever the kernel guard
(:mod:`dpgrader.guard`) cannot undo has to be seen by a person. This module reads
the cells a student wrote (nbgrader solution cells, and cells without nbgrader
metadata, i.e. cells the student added) with :mod:`ast`, never the read-only and test
cells of the instructor, and returns one :class:`Flag` per suspicious construct, with
a specific reason:

- **dynamic code**: ``exec``, ``eval``, ``compile``, ``__import__``, ``importlib``,
  ``getattr``/``setattr``/``delattr`` with a computed name, ``globals()``/``locals()``/``vars()``;
- **introspection and process control**: any use of ``gc``, ``inspect``, ``ctypes``,
  ``threading``, ``signal``, ``subprocess``, ``multiprocessing``, ``IPython``,
  ``ipykernel``, ``jupyter_client``, ``builtins``, ``linecache``, ``pickle``, ...; of
  ``sys`` and ``os`` beyond a few harmless attributes (``sys.stderr``, ``os.path.join``);
  the IPython shell (``get_ipython``, ``In``/``Out``, magics and ``!`` commands but the harmless
  ones of :mod:`.magics`: ``%matplotlib inline``, ``%timeit`` (whose code is reviewed), ``!pip list``, ...);
- **dunder access**: ``__code__``, ``__kwdefaults__``, ``__globals__``, ``__class__``, ...;
- **fake values**: classes that subclass a number or array type, or define what a
  test asks an object directly: equality and hashing, truth, conversions to numbers and arrays,
  its type or any attribute (``__eq__``, ``__hash__``, ``__bool__``, ``__float__``, ``__array__``,
  ``__getattr__``, ..., :data:`~dpgrader.review.rules.FAKE_VALUE_METHODS`); not what honest helper classes
  define (``__len__``, ``__contains__``, ``__iter__``, ordering for sorting, ``__repr__``), which no
  check calls on a student's object; ``unittest.mock``;
  special methods passed by keyword (``SimpleNamespace(__eq__=...)``), set with ``setattr``
  or assignment, or put in a ``type(...)`` namespace; ``numbers.Real.register``;
- **file writes**: ``open(..., "w")``, ``Path.write_text``, ``np.save``, ``to_csv``, ``shutil``;
- **the tests themselves**: ``dplib.testing``, ``dpgrader``, rebinding a test helper
  (``check_close = ...``), replacing a library attribute (``np.allclose = ...``);
- **delegation**: an exercise answered with dplib's own function of the same name.

Names are resolved, not matched as text: ``import signal as _sg; _sg.setitimer``,
``from os import path as p``, ``x = sys; x._getframe``, ``getattr(sys, "_get" + "frame")``
and ``"get_" + "ipython"`` are all seen for what they are (constant string expressions
are evaluated). Honest code raises no flag: every reference solution of ``source/`` and
every honest student of ``make demo`` is reviewed in ``tests/grader/test_review.py``.

:func:`review_flags` gives the flags of a notebook as ``"kind: reason"`` strings for
``grades.csv`` and the class summary; the grading run puts them in formgrader
(:func:`dpgrader.grading.review_comments.comment_in_gradebook`): the review writes nothing.

**Fail closed.** A review that cannot finish is a flag, never an empty list: a cell the
parser gives up on (a 5,000-term sum raises ``RecursionError`` in :func:`ast.parse`, as in
the kernel's ``compile``) or the walk fails on gets ``"review: could not finish (<error>):
a person must read this cell"``, and the other cells are still reviewed. The walk and the
name resolution use explicit stacks, never recursion, so no depth a student writes reaches
Python's recursion limit. Only a notebook that is not JSON is left to the grader (its
``unreadable`` status).

The review is cut in seven modules: :mod:`.rules` (what is suspicious, and :class:`Flag`),
:mod:`.resolver` (aliases and constant strings), :mod:`.cells` (which cells are the
student's), :mod:`.magics` (IPython magics and shell commands), :mod:`.checks` and
:mod:`.reviewer` (the checks and the walk over the syntax tree), :mod:`.notebook` (the
entry points re-exported here).
"""

from dpgrader.review.reading import parse_cell, student_cells
from dpgrader.review.notebook import REVIEW_HEADING, review_flags, review_notebook, unfinished  # noqa: F401
from dpgrader.review.resolver import constant_value
from dpgrader.review.rules import Flag

__all__ = ["Flag", "review_notebook", "review_flags", "student_cells", "parse_cell", "constant_value"]
