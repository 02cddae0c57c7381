"""dpgrader.review: every way of tampering issue 12 lists is flagged with its reason; honest code never is."""

from __future__ import annotations

import ast
import copy
from pathlib import Path

import nbformat
import numpy as np
import pytest

from dpgrader import simulation
from dpgrader.course import REPO_ROOT
from dpgrader.review import Flag, constant_value, review_flags, review_notebook, student_cells

SOURCES = sorted((REPO_ROOT / "source").glob("*/*.ipynb"))
SOURCE = REPO_ROOT / "source" / "02_laplace" / "02_laplace.ipynb"
HONEST_KINDS = ("correct", "partial", "warnings")


def submission(code: str, grade_id: str = "laplace_mech_solution", source: Path = SOURCE) -> nbformat.NotebookNode:
    notebook = nbformat.read(str(source), as_version=4)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            cell.source = code
            return notebook
    raise KeyError(grade_id)


def flags_of(code: str, **kwargs) -> list[Flag]:
    notebook = submission(code, **kwargs)
    return [f for f in review_notebook(notebook, SOURCE) if f.cell == kwargs.get("grade_id", "laplace_mech_solution")]


def assert_flagged(code: str, kind: str, words: str) -> None:
    found = flags_of(code)
    assert any(f.kind == kind and words in f.reason for f in found), f"expected {kind!r} with {words!r}, got {found}"


# --- honest work --------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.parent.name)
def test_reference_solutions_raise_no_flag(source):
    """Every code cell of every reference notebook (solutions and the narrative cells a student may edit)."""
    assert student_cells(source), "the review must see the solution cells"
    assert review_notebook(source) == ()
    assert review_notebook(source, source) == ()


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.parent.name)
@pytest.mark.parametrize("kind", HONEST_KINDS)
def test_honest_demo_students_raise_no_flag(source, kind):
    release = REPO_ROOT / "release" / source.parent.name / source.name
    if not release.exists():
        pytest.skip(f"{source.parent.name} has no release yet")
    for seed in range(3):
        text = simulation.make_submission(kind, release, source, np.random.default_rng(seed))
        assert review_notebook(nbformat.reads(text, as_version=4), source) == ()


@pytest.mark.parametrize("code", [
    "import sys\nprint('debug', file=sys.stderr)\nx = sys.float_info.epsilon",
    "import os\npath = os.path.join('a', 'b')",
    "from os import path as p\nq = p.basename('a/b')",
    "import numpy.testing as t\nt.assert_allclose(1.0, 1.0)",
    "class Budget:\n    def __init__(self, epsilon):\n        self.epsilon = epsilon",
    "text = f'epsilon {1.0:.2f}' + ' and more'",
    "with np.errstate(divide='ignore'):\n    y = np.log(0.0)",
    "df = pd.DataFrame({'a': [1]})\ncsv_text = df.to_csv()",
    "result = check_close(1.0, 1.0)",
    "import time\nstarted = time.perf_counter()\nelapsed = time.perf_counter() - started",  # a wall clock: no CPU count
])
def test_honest_idioms_raise_no_flag(code):
    assert flags_of(code) == []


# --- dynamic code and copies of dplib ------------------------------------------------------------------


@pytest.mark.parametrize("code, kind, words", [
    ("import inspect\nexec(inspect.getsource(dplib.laplace_mech))", "dynamic code", "exec"),
    ("import inspect\nexec(inspect.getsource(dplib.laplace_mech))", "introspection", "inspect.getsource"),
    ("f = eval('lambda x: x')", "dynamic code", "eval"),
    ("code = compile('x = 1', 'x', 'exec')", "dynamic code", "compile"),
    ("m = __import__('o' + 's')\nm.system('ls')", "process control", "os.system"),
    ("import importlib\nm = importlib.import_module('sys')", "introspection", "importlib"),
    ("name = 'lap' + 'lace_mech'\nlaplace_mech = getattr(dplib, name)", "delegates to dplib", "laplace_mech"),
    ("n = input()\nf = getattr(np, n)", "dynamic code", "getattr with a computed attribute name"),
    ("setattr(np, 'allclose', lambda *a, **k: True)", "tampering", "numpy.allclose"),
    ("globals()['check_close'] = print", "dynamic code", "globals()"),
    ("vars(dplib.testing)['check_close'] = print", "tampering", "dplib.testing"),
    ("X = type('X', (float,), {})", "dynamic code", "type(name, bases, namespace)"),
])
def test_dynamic_code_is_flagged(code, kind, words):
    assert_flagged(code, kind, words)


def test_delegation_is_flagged_in_every_form():
    for code in ("laplace_mech = dplib.laplace_mech", "from dplib import laplace_mech",
                 "from dplib.mechanisms.laplace import laplace_mech as laplace_mech",
                 "def laplace_mech(value, sensitivity, epsilon, rng=None):\n"
                 "    return dplib.laplace_mech(value, sensitivity, epsilon, rng)"):
        assert_flagged(code, "delegates to dplib", "laplace_mech is dplib's own")


# --- introspection, process control, the shell ----------------------------------------------------------


@pytest.mark.parametrize("code, kind, words", [
    ("import sys, linecache\nf = sys._getframe(2)\nline = linecache.getline(f.f_code.co_filename, f.f_lineno)",
     "introspection", "sys._getframe"),
    ("import sys, linecache\nf = sys._getframe(2)", "introspection", "the test that calls it"),
    ("import linecache\nlinecache.getlines('x')", "introspection", "linecache"),
    ("import sys as s\nx = s\nx._getframe(1)", "introspection", "sys._getframe"),
    ("import sys\nframe = getattr(sys, '_get' + 'frame')(1)", "introspection", "sys._getframe"),
    ("import sys\nsys.settrace(lambda *a: None)", "introspection", "sys.settrace"),
    ("import sys\nsys.setprofile(lambda *a: None)", "introspection", "sys.setprofile"),
    ("import threading\nthreading.settrace(print)", "introspection", "threads"),
    ("from threading import Timer as T\nT(1, print).start()", "introspection", "threading.Timer"),
    ("import signal as _sg\n_sg.setitimer(_sg.ITIMER_REAL, 0.1)", "introspection", "signal.setitimer"),
    ("import gc\nobjects = gc.get_objects()", "introspection", "gc"),
    ("import ctypes", "introspection", "ctypes"),
    ("import subprocess\nsubprocess.run(['ls'])", "introspection", "subprocess"),
    ("import multiprocessing", "introspection", "multiprocessing"),
    ("from IPython.core.interactiveshell import InteractiveShell\nInteractiveShell.showtraceback = print",
     "introspection", "IPython"),
    ("from ipykernel.ipkernel import IPythonKernel\nIPythonKernel.do_execute = print", "introspection", "ipykernel"),
    ("import jupyter_client", "introspection", "jupyter_client"),
    ("import builtins\nbuiltins.abs = lambda x: 0", "introspection", "builtins"),
    ("import pickle", "introspection", "pickle"),
    ("import os\nos._exit(0)", "process control", "kills the kernel"),
    ("import os as o\no.kill(o.getppid(), 9)", "process control", "os.kill"),
    ("exit()", "process control", "stops the kernel"),
    ("get_ipython().set_custom_exc((Exception,), print)", "introspection", "get_ipython"),
    ("shell = globals()['get_' + 'ipython']()", "introspection", "'get_ipython' in pieces"),
    ("g = getattr(__builtins__, 'get_' + 'ipython')", "introspection", "get_ipython"),
    ("code = In[-1]", "introspection", "the hidden tests' included"),
    ("%load_ext autoreload", "dynamic code", "loads an IPython extension"),
    ("!ls ../../../", "process control", "runs a shell command (!ls ../../../)"),
    ("import sys\nsys.modules['dplib.testing'].check_close = print", "tampering", "dplib.testing.check_close"),
    ("import sys\nloaded = sys.modules", "introspection", "sys.modules"),
    ("import sys\nsys.stderr = open('/dev/null', 'w')", "process control", "replaces sys.stderr"),
    # what tells check_is_random's replay (a forked copy) from the real run: CPU clocks, process statistics
    ("import time\nfresh = time.process_time() < 0.1", "introspection", "reads a CPU clock (time.process_time)"),
    ("from time import thread_time_ns as t\nx = t()", "introspection", "time.thread_time_ns"),
    ("import time\nx = time.clock_gettime(time.CLOCK_PROCESS_CPUTIME_ID)", "introspection", "time.clock_gettime"),
    ("import os\nx = os.times().user", "introspection", "reads process statistics (os.times)"),
    ("import os\nPID = os.getpid()", "introspection", "reads process statistics (os.getpid)"),
    ("import resource\nu = resource.getrusage(resource.RUSAGE_SELF).ru_utime", "introspection", "resource usage"),
    ("import psutil\nn = psutil.Process().num_threads()", "introspection", "psutil"),
    ("from pathlib import Path\nstat = Path('/proc/self/stat').read_text()", "introspection", "'/proc/'"),
    ("import mmap\nshared = mmap.mmap(-1, 4096)", "introspection", "memory shared across a fork"),
])
def test_introspection_and_process_control_are_flagged(code, kind, words):
    assert_flagged(code, kind, words)


# --- dunders, fake values -------------------------------------------------------------------------------


@pytest.mark.parametrize("code, words", [
    ("check_close.__kwdefaults__['atol'] = 1e9", "__kwdefaults__"),
    ("check_close.__defaults__ = (1e9,)", "__defaults__"),
    ("dplib.laplace_mech.__code__ = (lambda *a: 0).__code__", "__code__"),
    ("g = check_close.__globals__", "__globals__"),
    ("subs = ().__class__.__base__.__subclasses__()", "__subclasses__"),
    ("b = (1).__class__.__mro__", "__mro__"),
    ("x = print.__self__", "__self__"),
    ("d = np.__dict__", "__dict__"),
    ("c = (lambda: 0).__closure__", "__closure__"),
    ("f = getattr(check_close, '__kw' + 'defaults__')", "__kwdefaults__"),
    ("h = getattr(check_close, '__wrapped__', check_close)\nh.__kwdefaults__.update(atol=1e9)", "__kwdefaults__"),
])
def test_dunder_access_is_flagged(code, words):
    assert_flagged(code, "dunder access", words)


@pytest.mark.parametrize("code, words", [
    ("class Always(float):\n    def __eq__(self, other):\n        return True", "subclasses builtins.float"),
    ("class Always(float):\n    def __eq__(self, other):\n        return True", "defines __eq__"),
    ("class A(np.float64):\n    pass", "subclasses numpy.float64"),
    ("class A(np.ndarray):\n    pass", "subclasses numpy.ndarray"),
    ("F = float\nclass A(F):\n    pass", "subclasses builtins.float"),
    ("class A:\n    def __bool__(self):\n        return True", "defines __bool__"),
    ("class A:\n    def __float__(self):\n        return 0.0", "defines __float__"),
    ("class A:\n    def __hash__(self):\n        return 0", "defines __hash__"),
    ("class A:\n    def __array__(self, dtype=None):\n        return np.zeros(3)", "defines __array__"),
    ("class A:\n    def __getattr__(self, name):\n        return 0", "defines __getattr__"),
    ("class A:\n    __class__ = property(lambda self: float)", "special method by assignment"),
    ("class A:\n    __eq__ = lambda self, other: True", "special method by assignment"),
])
def test_fake_values_are_flagged(code, words):
    assert_flagged(code, "fake value", words)


# --- files, the tests themselves -----------------------------------------------------------------------------


@pytest.mark.parametrize("code, kind, words", [
    ("open('x.txt', 'w').write('1')", "writes files", "mode 'w'"),
    ("open('x.txt', mode='a')", "writes files", "mode 'a'"),
    ("m = 'w'\nopen('x', m)", "writes files", "mode 'w'"),
    ("open('../../../gradebook.db', 'rb')", "files", "for reading"),
    ("from pathlib import Path\nPath('x').write_text('1')", "writes files", "write_text"),
    ("from pathlib import Path\np = Path('x')\np.write_bytes(b'1')", "writes files", "write_bytes"),
    ("np.save('x.npy', np.zeros(2))", "writes files", "numpy.save"),
    ("pd.DataFrame({'a': [1]}).to_csv('x.csv')", "writes files", "to_csv"),
    ("import shutil\nshutil.rmtree('../..')", "writes files", "shutil"),
    ("import os\nos.remove('x')", "files", "os.remove"),
    ("check_close = lambda *a, **k: None", "tampering", "rebinds the test helper check_close"),
    ("def disabled(*f):\n    pass", "tampering", "rebinds the test helper disabled"),
    ("from contextlib import nullcontext as quiet", "tampering", "rebinds the test helper quiet"),
    ("def substituted(namespace, **names):\n    return names", "tampering", "rebinds the test helper substituted"),
    ("delegation_closure = tuple", "tampering", "rebinds the test helper delegation_closure"),
    ("import dplib.testing as t\nt.check_close = print", "tampering", "dplib.testing"),
    ("t = dplib.testing\nt.DEFAULT_FALSE_FAILURE = 0", "tampering", "dplib.testing"),
    ("t = getattr(dplib, 'test' + 'ing')", "tampering", "dplib.testing"),
    ("from dpgrader import guard\nguard.restore = print", "tampering", "dpgrader"),
    ("from dplib.testing import check_close", "tampering", "imports check_close from dplib.testing"),
    ("from dplib.mechanisms.laplace import *", "delegates to dplib", "imports every function of dplib.mechanisms.laplace"),
    ("np.allclose = lambda *a, **k: True", "tampering", "replaces numpy.allclose"),
    ("math.inf = 7.0", "tampering", "replaces math.inf"),
    ("pd.Series.__eq__ = lambda a, b: True", "tampering", "replaces pandas.Series.__eq__"),
])
def test_file_writes_and_tampering_with_the_tests_are_flagged(code, kind, words):
    assert_flagged(code, kind, words)


# --- which cells, what comes out --------------------------------------------------------------------------


def test_only_the_students_cells_are_reviewed_and_fake_locks_do_not_hide_code():
    notebook = submission("def laplace_mech(value, sensitivity, epsilon, rng=None):\n    return value")
    test_cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_laplace_mech_scale")
    test_cell.source += "\nimport gc"  # instructor cells are restored from the gradebook: not the student's code
    assert review_notebook(notebook, SOURCE) == ()
    forged = copy.deepcopy(test_cell)
    forged.source = "import ctypes"
    forged.metadata.nbgrader.update(grade_id="my_own_cell", locked=True, solution=False)
    notebook.cells.insert(3, forged)  # a student-made cell claiming to be locked
    # an id the gradebook does not know: nbgrader grades the cell as ordinary code, cell 3 (SanitizeMetadata)
    assert [(f.cell, f.reason[:15]) for f in review_notebook(notebook, SOURCE)] == [("cell 3", "uses ctypes (wr")]
    assert [f.cell for f in review_notebook(notebook)] == [], "without the instructor's notebook, metadata is trusted"
    added = nbformat.v4.new_code_cell("import gc")
    notebook.cells.append(added)
    assert review_notebook(notebook)[-1].cell == f"cell {len(notebook.cells) - 1}"


def test_review_flags_gives_kind_reason_strings(tmp_path):
    path = tmp_path / "n.ipynb"
    nbformat.write(submission("import sys\nf = sys._getframe(2)"), str(path))
    (flag,) = map(str, review_flags(path, SOURCE))
    assert flag.startswith("introspection: reads the callers' frames with sys._getframe")
    assert flag.endswith("(laplace_mech_solution, line 2)") and ";" not in flag
    (tmp_path / "bad.ipynb").write_text("{not json")
    assert review_flags(tmp_path / "bad.ipynb") == ()


def test_flags_are_frozen_and_located():
    (flag,) = flags_of("x = 1\nimport gc")
    assert (flag.cell, flag.line, flag.kind) == ("laplace_mech_solution", 2, "introspection")
    with pytest.raises(AttributeError):
        flag.line = 3


@pytest.mark.parametrize("expression, value", [
    ("'get_' + 'ipython'", "get_ipython"),
    ("'nohtypi_teg'[::-1]", "get_ipython"),
    ("''.join(['get', '_', 'ipython'])", "get_ipython"),
    ("f'{\"get\"}_ipython'", "get_ipython"),
    ("'%s_ipython' % 'get'", "get_ipython"),
    ("chr(95) * 2 + 'code' + '_' * 2", "__code__"),
    ("'get-ipython'.replace('-', '_')", "get_ipython"),
    ("name", None),
    ("'a' * 10**9", None),
])
def test_constant_string_expressions_are_evaluated(expression, value):
    assert constant_value(ast.parse(expression, mode="eval").body) == value


def test_a_test_cell_pasted_without_metadata_is_the_instructors_code_not_the_students():
    """Check that a verbatim copy of a test cell (metadata lost in copy-paste) raises no flag, though it uses test helpers."""
    source = REPO_ROOT / "source" / "05_estimation" / "05_estimation.ipynb"
    notebook = nbformat.read(str(source), as_version=4)
    test_cell = next(c for c in notebook.cells if "substituted(" in c.source and c.metadata.get("nbgrader", {}).get("grade"))
    notebook.cells.append(nbformat.v4.new_code_cell(test_cell.source))
    assert review_flags(notebook, source) == ()
    notebook.cells[-1] = nbformat.v4.new_code_cell("from dplib.testing import substituted\nsubstituted(globals(), x=1)")
    assert review_flags(notebook, source), "a student's own use of the test helpers must still be flagged"


# --- a review that cannot finish says so (fail closed) -----------------------------------------------------


@pytest.mark.parametrize("terms", [450, 2500])
def test_a_deep_expression_is_walked_to_the_end(terms):
    """Check that a 450- or 2500-term ``1+1+...+1`` (as deep as Python parses) does not stop the review before ``import gc``."""
    found = flags_of("x = " + "+".join(["1"] * terms) + "\nimport gc")
    assert [(f.kind, f.line) for f in found] == [("introspection", 2)]
    assert "gc" in found[0].reason


def test_deep_chains_and_pieces_are_resolved_without_recursion():
    assert_flagged("name = " + " + ".join(repr(c) for c in "get_ipython" * 40), "introspection", "'get_ipython' in pieces")
    assert_flagged("import sys\nx = sys" + ".a" * 900 + "\nf = sys._getframe(1)", "introspection", "sys._getframe")
    assert_flagged("x = a" + "().b" * 900 + "\nimport gc", "introspection", "gc")


def test_a_cell_too_deep_to_parse_is_flagged_with_the_reason(tmp_path):
    """Python's own parser gives up on a 5000-term sum (RecursionError): the kernel cannot compile it either, but the
    review never takes a cell it could not read for a cell without code."""
    code = "x = " + "+".join(["1"] * 5000)
    (flag,) = flags_of(code)
    assert (flag.kind, flag.cell) == ("review", "laplace_mech_solution")
    assert flag.reason.startswith("could not finish (RecursionError: maximum recursion depth exceeded")
    assert flag.reason.endswith("a person must read this cell")
    path = tmp_path / "deep.ipynb"
    nbformat.write(submission(code + "\nimport gc"), str(path))
    assert str(review_flags(path, SOURCE)[0]).startswith("review: could not finish (RecursionError")


def test_a_crash_of_the_reviewer_is_a_flag_and_the_other_cells_are_still_reviewed(monkeypatch):
    from dpgrader.review import reviewer

    visit_call = reviewer.Reviewer.visit_Call

    def crash(self, node):
        if isinstance(node.func, ast.Name) and node.func.id == "crash_the_review":
            raise RuntimeError("boom")
        return visit_call(self, node)

    monkeypatch.setattr(reviewer.Reviewer, "visit_Call", crash)
    notebook = submission("x = crash_the_review(1)")
    notebook.cells.append(nbformat.v4.new_code_cell("import gc"))
    found = review_notebook(notebook, SOURCE)
    assert [(f.cell, f.kind, f.reason) for f in found] == [
        ("laplace_mech_solution", "review", "could not finish (RuntimeError: boom): a person must read this cell"),
        (f"cell {len(notebook.cells) - 1}", "introspection", found[1].reason),
    ]


def test_review_flags_fails_closed_but_leaves_unreadable_notebooks_to_the_grader(monkeypatch, tmp_path):
    from dpgrader.review import notebook as entry

    path = tmp_path / "n.ipynb"
    nbformat.write(submission("x = 1"), str(path))
    monkeypatch.setattr(entry, "review_notebook", lambda *a: (_ for _ in ()).throw(MemoryError()))
    assert tuple(map(str, review_flags(path, SOURCE))) == (
        "review: could not finish (MemoryError): a person must read this notebook",)
    for text in ("{not json", "[1, 2]", "\xff\xfe"):
        (tmp_path / "bad.ipynb").write_text(text, errors="surrogateescape")
        assert review_flags(tmp_path / "bad.ipynb", SOURCE) == ()
    # JSON but not a notebook nbformat (and so nbgrader) can read: graded as unreadable, not reviewed
    for text in ('{"cells": 5}', '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": 5}'):
        (tmp_path / "odd.ipynb").write_text(text)
        assert review_flags(tmp_path / "odd.ipynb", SOURCE) == ()


@pytest.mark.parametrize("code", [
    "x = " + " * ".join(["999999999"] * 1000),  # an integer of 30,000 digits: str() of it raises in Python 3.11
    "x = '%*d' % (10**9, 1)",
    "x = '%0999999999d' % 1",
    "x = '{:{}}'.format(1, 10**9)",
    "s = 'a' * 1000\nt = (s + s + s + s + s + s + s + s).replace('a', 'b' * 1000)",
])
def test_constant_expressions_too_big_to_build_are_not_built(code):
    import time

    started = time.perf_counter()
    assert flags_of(code + "\nimport gc")[-1].reason.startswith("walks live objects with gc")
    assert time.perf_counter() - started < 2


# --- fake values: mocks and special methods set from outside a class ---------------------------------------


@pytest.mark.parametrize("code, words", [
    ("from unittest.mock import MagicMock\nx = MagicMock()", "unittest.mock"),
    ("from unittest import mock\nx = mock.Mock(return_value=1.0)", "unittest.mock"),
    ("import unittest.mock as um\nwith um.patch('numpy.allclose', return_value=True):\n    pass", "unittest.mock"),
    ("import unittest\nx = unittest.mock.MagicMock()", "unittest.mock.MagicMock"),
    ("from unittest.mock import *", "unittest.mock"),
    ("import mock\nx = mock.MagicMock()", "the mock package"),
    ("import types\nx = types.SimpleNamespace(__eq__=lambda a, b: True)", "passes __eq__ as a keyword argument"),
    ("from types import SimpleNamespace as NS\nx = NS(**{'__float__': lambda s: 0.5})", "passes __float__"),
    ("x = make(__bool__=lambda s: True)", "passes __bool__"),
    ("m.configure_mock(**{'__eq__.return_value': True})", "configure_mock"),
    ("class A:\n    pass\nsetattr(A, '__eq__', lambda a, b: True)", "__eq__ with setattr"),
    ("class A:\n    pass\nname = '__' + 'bool__'\nsetattr(A, name, lambda s: True)", "__bool__ with setattr"),
    ("class A:\n    pass\nA.__float__ = lambda s: 0.5", "sets the special method __float__"),
    ("X = type('X', (), {'__eq__': lambda a, b: True})", "builds a class whose __eq__"),
    ("import numbers\nclass F:\n    pass\nnumbers.Real.register(F)", "registers a class with numbers.Real"),
])
def test_mocks_and_special_methods_set_from_outside_are_fake_values(code, words):
    assert_flagged(code, "fake value", words)


def test_honest_namespaces_and_dataclasses_are_not_fake_values():
    for code in ("import types\nconfig = types.SimpleNamespace(epsilon=1.0, delta=1e-6)",
                 "from dataclasses import dataclass\n@dataclass\nclass Budget:\n    epsilon: float",
                 "import unittest\nname = unittest.__name__"):
        assert flags_of(code) == []


# --- IPython magics: the honest ones pass, the rest is flagged --------------------------------------------

HONEST_MAGICS = [
    "%matplotlib inline", "%matplotlib widget", "%matplotlib", "%time total = sum(range(10))",
    "%timeit sum(range(10))", "%timeit -n 10 -r 3 sum(range(10))", "result = %timeit -o -q sum(range(10))",
    "%%time\ntotal = sum(range(10))\n", "%%timeit -n 5 values = list(range(10))\nsum(values)\n",
    "%config InlineBackend.figure_format = 'retina'", "%precision 3", "%precision %.2f", "%who", "%whos",
    "%who int float", "%pwd", "%lsmagic", "%autosave 60", "!pip list", "!pip show numpy scipy", "!pip freeze",
    "!python -m pip list", "packages = !pip list", "%pip list", "%pip show numpy", "np.random.default_rng?",
    "np.random.default_rng??", "%timeit -v timing sum(range(10))",
]


@pytest.mark.parametrize("code", HONEST_MAGICS)
def test_honest_magics_raise_no_flag(code):
    assert flags_of(code) == []


def test_a_notebook_with_every_honest_magic_raises_no_flag():
    """The reference notebook with each honest magic in a cell of its own (added by the student) and in solution cells."""
    notebook = nbformat.read(str(SOURCE), as_version=4)
    notebook.cells[1:1] = [nbformat.v4.new_code_cell(code) for code in HONEST_MAGICS]
    solution = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "laplace_mech_solution")
    solution.source = "%matplotlib inline\n" + solution.source + "\n%timeit laplace_mech(1.0, 1.0, 1.0)\n"
    assert review_notebook(notebook, SOURCE) == ()


@pytest.mark.parametrize("code, kind, words", [
    ("%history -g", "introspection", "reads every cell's code"),
    ("%hist -n", "introspection", "reads every cell's code"),
    ("%run helper.py", "dynamic code", "%run helper.py"),
    ("%load solution.py", "dynamic code", "%load solution.py"),
    ("%rerun 1-3", "dynamic code", "runs earlier cells again"),
    ("%reset -f", "tampering", "deletes the notebook's names"),
    ("%env SECRET=1", "process control", "environment variables"),
    ("%store results", "writes files", "outlives the kernel"),
    ("%load_ext autoreload\n%autoreload 2", "dynamic code", "%autoreload 2"),
    ("%%bash\nls ../..\n", "process control", "%%bash"),
    ("%%writefile answer.py\nx = 1\n", "writes files", "%%writefile answer.py"),
    ("%pip install requests", "process control", "%pip install requests"),
    ("!ls ../../..", "process control", "!ls ../../.."),
    ("!pip list; cat ../gradebook.db", "process control", "runs a shell command"),
    ("!pip show {__import__('os').getcwd()}", "process control", "runs a shell command"),
    ("files = !ls", "process control", "!ls"),
    ("%xmode Minimal", "tampering", "how errors are reported"),
    ("%matplotlib module://my_backend", "dynamic code", "module://"),
    ("%config InlineBackend.figure_format = __import__('os').getcwd()", "dynamic code", "runs its argument as code"),
    ("%config IPCompleter.evaluation = 'unsafe'", "dynamic code", "%config IPCompleter"),
    ("%precision {__import__('gc')}", "introspection", "%precision"),
    ("%cd ..", "files", "working directory"),
    ("%timeit import gc", "introspection", "gc"),
    ("%time x = globals()", "dynamic code", "globals()"),
    ("%%time\nimport ctypes\n", "introspection", "ctypes"),
    ("%%timeit import inspect\nx = 1\n", "introspection", "inspect"),
    ("%timeit -v check_close sum([1])", "tampering", "rebinds the test helper check_close"),
    ("%%time\n%%time\nx = 1\n", "review", "a person must read this cell"),
    ("%timeit -x f()", "introspection", "arguments the review cannot read"),
    ("%%javascript\nalert(1)\n", "tampering", "JavaScript"),
    ("%some_new_magic x", "introspection", "does not know to be harmless"),
    ("get_ipython().run_line_magic('matplotlib', mode)", "introspection", "get_ipython"),
    ("ip = get_ipython()\nip.run_line_magic('matplotlib', 'inline')", "introspection", "get_ipython"),
])
def test_dangerous_magics_are_flagged(code, kind, words):
    assert_flagged(code, kind, words)


def test_the_code_of_a_timing_magic_is_located_on_its_cell_line():
    (flag,) = flags_of("x = 1\n%time y = sum([1])\n%timeit import gc")
    assert (flag.line, flag.kind) == (3, "introspection")
    (flag,) = flags_of("%%time\nx = 1\nimport gc\n")
    assert (flag.line, flag.kind) == (3, "introspection")
