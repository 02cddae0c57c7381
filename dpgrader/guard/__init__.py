"""Kernel-side guard: every cell of an autograded notebook starts from untouched libraries.

Student code and hidden tests share one kernel, so a solution cell can rebind what a
test relies on: ``builtins.abs = lambda x: 0`` silently turns ``numpy.allclose`` into
"always true", ``check_close = lambda *a, **k: None`` turns a test into a no-op,
``math.inf = 7.0`` or ``pd.Series.__eq__ = ...`` change what a test expects.
:class:`dpgrader.preprocessors.GuardedExecute` installs this guard in every kernel
nbgrader starts for autograding, before the notebook's first cell runs, i.e. before
any student code. The guard then

- takes a snapshot of ``builtins`` and of every module of the trusted packages
  (numpy, scipy, pandas, math, dplib, ...), including the classes they define;
- binds the names the notebook's read-only cells import (``np``, ``check_close``, ...);
- before every cell, puts back whatever student code rebound or deleted among those, and
  removes an attribute added to a trusted class that hides one it inherits
  (``pd.Series.__eq__ = ...``; other new names are left alone, and nothing is restored
  inside a cell). Only the namespaces whose CPython dict version tag moved are compared
  entry by entry (:mod:`.dict_versions`), so a restore costs about 0.3 ms;
- when a ``dplib.testing.disabled(...)`` or ``quiet()`` block ends, i.e. right after
  a test called the student's function, does the same, so a function that patches
  ``sorted`` when called cannot fool the asserts that follow it;
- after every cell, removes IPython hooks a student could use to hide a failing test:
  custom exception handlers, input and AST transformers and event callbacks defined in
  the notebook, and instance-level replacements of the shell's run/traceback methods.

Hardened against in-kernel tampering (see :class:`KernelGuard`): before every cell and after every
``disabled``/``quiet`` block it also puts back the code, defaults and keyword defaults of
dplib's functions (the test helpers' tolerances), removes trace and profile hooks
(``sys.settrace``, ``threading.settrace``), timers and their signal handlers, stops threads
the notebook started, puts back ``sys.stdout``/``stderr``/``displayhook``/``excepthook`` and
undoes class- or instance-level patches of the shell, the kernel and its session (e.g.
``InteractiveShell.showtraceback``, ``IPythonKernel.do_execute``, ``Session.send``). When a
test calls the student's function, the cells' source is first dropped from ``linecache``, so
``sys._getframe`` plus ``linecache`` cannot read the test's expected values.

What it does not do: undo mutations of data (a test should build its own data rather
than trust a notebook global), or stop code that attacks the guard itself or the
files of the course (that needs an OS-level sandbox). The classroom tool flags such
code for review (:func:`dpgrader.review.review_flags`).

The package holds :mod:`.snapshot` (the libraries' state and its restore), :mod:`.hooks`
(the shell's and the kernel's hooks) and :mod:`.installer` (install, restore, the code run
in the kernel); the names below are re-exported here.
"""

from dpgrader.guard.hooks import KernelGuard, ShellGuard  # noqa: F401 (re-exported)
from dpgrader.guard.installer import PRELOADED, forget_cell_sources, install, restore, setup_code  # noqa: F401
from dpgrader.guard.snapshot import TRUSTED_PACKAGES, Snapshot

__all__ = ["TRUSTED_PACKAGES", "Snapshot", "KernelGuard", "install", "restore", "setup_code"]
