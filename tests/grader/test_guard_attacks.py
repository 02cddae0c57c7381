"""Issue 12's in-kernel attacks, graded through the real pipeline: each loses its points or is flagged with its reason.

One nbgrader autograde run (``grade_variants``) grades every attacker of 01_definition; each
attacker pairs a wrong answer with one way of fooling the tests. Attacks the kernel guard
undoes must lose the wrong answer's points; attacks it cannot undo in the same kernel (a
float whose ``==`` is always true, editing the guard's snapshot found with ``gc``, copying
dplib's source) must raise the static review's flag with the right reason
(:mod:`dpgrader.review`). Every attacker is also flagged, whatever its score.
"""

from __future__ import annotations

import pytest

from dpgrader.course import REPO_ROOT, notebooks_of
from dpgrader.review import review_notebook
from helpers.checks import autograded_points
from helpers.variants import Variant, grade_variants, notebook_with

pytestmark = pytest.mark.xdist_group("guard_attacks")

ASSIGNMENT = "01_definition"
SOURCE = notebooks_of(REPO_ROOT / "source" / ASSIGNMENT)[0]
POINTS = autograded_points(SOURCE)
WRONG_UNIQUENESS = "def uniqueness(df, columns):\n    return 0.3\n"
WRONG_LOSS = "def max_privacy_loss(p_d, p_d_prime):\n    return 0.0\n"

# attacker -> (solution cell, its code, the test that must score 0 (None: flag only), flag kind, words in the reason)
ATTACKS = {
    "patches_showtraceback_and_do_execute": (
        "uniqueness_solution",
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "from ipykernel.ipkernel import IPythonKernel\n"
        "InteractiveShell.showtraceback = lambda self, *a, **k: None\n"
        "InteractiveShell._showtraceback = lambda self, *a, **k: None\n"
        "_do_execute = IPythonKernel.do_execute\n"
        "async def _quiet_execute(self, *args, **kwargs):\n"
        "    reply = await _do_execute(self, *args, **kwargs)\n"
        "    if reply.get('status') == 'error':\n"
        "        reply = {'status': 'ok', 'execution_count': reply.get('execution_count'),\n"
        "                 'user_expressions': {}, 'payload': []}\n"
        "    return reply\n"
        "IPythonKernel.do_execute = _quiet_execute\n" + WRONG_UNIQUENESS,
        "test_uniqueness", "introspection", "IPython",
    ),
    "filters_session_send": (
        "uniqueness_solution",
        "from jupyter_client.session import Session\n"
        "_send = Session.send\n"
        "def _filtered(self, stream, msg_or_type, content=None, *args, **kwargs):\n"
        "    kind = msg_or_type if isinstance(msg_or_type, str) else msg_or_type['header']['msg_type']\n"
        "    if kind == 'error':\n"
        "        return None\n"
        "    if kind == 'execute_reply' and content is not None and content.get('status') == 'error':\n"
        "        content = {'status': 'ok', 'execution_count': content.get('execution_count'),\n"
        "                   'user_expressions': {}, 'payload': []}\n"
        "    return _send(self, stream, msg_or_type, content, *args, **kwargs)\n"
        "Session.send = _filtered\n" + WRONG_UNIQUENESS,
        "test_uniqueness", "introspection", "jupyter_client",
    ),
    "reads_the_test_with_getframe_and_linecache": (
        "uniqueness_solution",
        "import ast, linecache, sys\n"
        "def uniqueness(df, columns):\n"
        "    frame = sys._getframe(1)\n"
        "    while frame is not None and not linecache.getlines(frame.f_code.co_filename):\n"
        "        frame = frame.f_back\n"
        "    if frame is None:\n"
        "        return 0.3\n"
        "    lines = linecache.getlines(frame.f_code.co_filename)\n"
        "    target = lines[frame.f_lineno - 1].split('=')[0].strip()\n"
        "    for node in ast.walk(ast.parse(''.join(lines))):\n"
        "        if (isinstance(node, ast.Call) and getattr(node.func, 'id', '') == 'check_close'\n"
        "                and getattr(node.args[0], 'id', '') == target):\n"
        "            return eval(ast.unparse(node.args[1]), frame.f_globals)\n"
        "    return 0.3\n",
        "test_uniqueness", "introspection", "sys._getframe",
    ),
    "settrace_rewrites_the_helpers": (
        "uniqueness_solution",
        "import sys\n"
        "def _tracer(frame, event, arg):\n"
        "    if event == 'call' and frame.f_code.co_name == 'check_close':\n"
        "        sys.modules['dplib.testing']._allclose = lambda *a, **k: True\n"
        "    return None\n"
        "sys.settrace(_tracer)\n" + WRONG_UNIQUENESS,
        "test_uniqueness", "introspection", "sys.settrace",
    ),
    "edits_the_helpers_kwdefaults": (
        "uniqueness_solution",
        "_helper = getattr(check_close, '__wrapped__', check_close)\n"
        "_helper.__kwdefaults__.update(rtol=1e9, atol=1e9)\n" + WRONG_UNIQUENESS,
        "test_uniqueness", "dunder access", "__kwdefaults__",
    ),
    "repatches_from_a_thread": (
        "uniqueness_solution",
        "import threading, time\n"
        "def _repatch():\n"
        "    while True:\n"
        "        globals()['check_close'] = lambda *a, **k: None\n"
        "        try:\n"
        "            dplib.testing.check_close.__code__ = (lambda *a, **k: None).__code__\n"
        "        except ValueError:\n"
        "            pass\n"
        "        time.sleep(0)\n"
        "threading.Thread(target=_repatch, daemon=True).start()\n" + WRONG_UNIQUENESS,
        "test_uniqueness", "introspection", "threads",
    ),
    "repatches_from_a_timer_signal": (
        "uniqueness_solution",
        "import signal as _sg\n"
        "def _handler(signum, frame):\n"
        "    globals()['check_close'] = lambda *a, **k: None\n"
        "    try:\n"
        "        dplib.testing.check_close.__code__ = (lambda *a, **k: None).__code__\n"
        "    except ValueError:\n"
        "        pass\n"
        "_sg.signal(_sg.SIGALRM, _handler)\n"
        "_sg.setitimer(_sg.ITIMER_REAL, 0.001, 0.001)\n" + WRONG_UNIQUENESS,
        "test_uniqueness", "introspection", "signal.setitimer",
    ),
    "spells_get_ipython_in_pieces": (
        "uniqueness_solution",
        "_shell = globals()['get_' + 'ipython']()\n"
        "_shell.set_custom_exc((Exception,), lambda *a, **k: None)\n" + WRONG_UNIQUENESS,
        "test_uniqueness", "introspection", "'get_ipython' in pieces",
    ),
    # The guard cannot undo these in the kernel: the static review is the fallback.
    "float_whose_eq_is_always_true": (
        "satisfies_dp_solution",
        "class _Yes(float):\n"
        "    def __eq__(self, other):\n"
        "        return True\n"
        "    def __bool__(self):\n"
        "        return False\n"
        "def satisfies_dp(p_d, p_d_prime, epsilon):\n"
        "    return _Yes(0.0)\n",
        None, "fake value", "defines __eq__",
    ),
    "edits_the_guard_snapshot_found_with_gc": (
        "max_privacy_loss_solution",
        "import gc\n"
        "for _obj in gc.get_objects():\n"
        "    if type(_obj).__name__ == 'Snapshot':\n"
        "        _obj.names['check_close'] = lambda *a, **k: None\n" + WRONG_LOSS,
        None, "introspection", "walks live objects with gc",
    ),
    "execs_dplibs_source": (
        "uniqueness_solution",
        "import inspect\nexec(inspect.getsource(dplib.uniqueness))\n",
        None, "dynamic code", "exec",
    ),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    variants = [Variant("reference", {})] + [
        Variant(name, {grade_id: code}) for name, (grade_id, code, *_rest) in ATTACKS.items()
    ]
    return grade_variants(tmp_path_factory.mktemp("guard_attacks"), ASSIGNMENT, variants)


@pytest.mark.pipeline
def test_the_reference_keeps_full_marks_under_the_hardened_guard(graded):
    assert {g: s for g, (s, _) in graded["reference"].items() if g in POINTS} == POINTS


@pytest.mark.pipeline
@pytest.mark.parametrize("attacker", [a for a, case in ATTACKS.items() if case[2]])
def test_an_attack_the_guard_undoes_loses_its_points(graded, attacker):
    _, _, zero, _, _ = ATTACKS[attacker]
    scores = graded[attacker]
    assert scores[zero][0] == 0, f"{attacker} kept {scores[zero]} on {zero}"
    # satisfies_dp's test calls the student's max_privacy_loss (issue 12 item 4, the content helper's scope)
    spared = {zero, "test_satisfies_dp"} if zero == "test_max_privacy_loss" else {zero}
    others = {g: s for g, (s, _) in scores.items() if g in POINTS and g not in spared}
    assert others == {g: p for g, p in POINTS.items() if g not in spared}, "the other exercises are untouched"


@pytest.mark.parametrize("attacker", list(ATTACKS))
def test_every_attack_is_flagged_with_its_reason(attacker):
    grade_id, code, _, kind, words = ATTACKS[attacker]
    flags = review_notebook(notebook_with(SOURCE, {grade_id: code}), SOURCE)
    assert any(f.kind == kind and words in f.reason and f.cell == grade_id for f in flags), flags
