"""A catalogue of hostile submissions: what a student could try against the grader, as notebook code.

Shared by the attack tests (``tests/grader/test_grading_attacks.py``) and the class simulation
(``make demo``, :mod:`dpgrader.simulation`). Each :class:`Attack` is a code cell
added to an otherwise untouched release notebook (so the attacker earns nothing
honestly), plus the grading outcome the course promises for it. The code never raises
(each step is in ``try``), so an attack that fails leaves the notebook to be graded.

The code finds its targets as an attacker would (``dplib.__file__``, ``site``, the
course three folders above the working folder) unless the paths are given
(:meth:`Attack.code`): the tests give the real course and a throwaway ``$HOME``.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpgrader.outcomes import Status

# Prelude of every attack cell: where things are, and a helper that tries a step and says what happened.
PRELUDE = '''\
import os, sys, glob, site, pathlib
def _try(label, step):
    try:
        step()
        print("ATTACK", label, "succeeded")
    except BaseException as error:
        print("ATTACK", label, "failed:", type(error).__name__)
COURSE = pathlib.Path({course!r} or pathlib.Path.cwd().parents[2])
HOME = pathlib.Path({home!r} or os.path.expanduser("~"))
SITE = pathlib.Path({site!r} or site.getsitepackages()[0])
DPLIB = pathlib.Path({dplib!r} or pathlib.Path(__import__("dplib").__file__).parent)
'''


@dataclass(frozen=True)
class Attack:
    """One hostile submission: a code cell, what it tries, and the status the grader must record."""

    name: str
    what: str
    cell: str
    status: Status = Status.OK
    last: bool = False  # the cell goes at the end of the notebook (after the tests), not the top
    may_succeed: tuple[str, ...] = ()  # steps allowed to work inside the sandbox (their effect must not last)
    copies: int = 1  # the cell is handed in this many times in a row

    def code(self, course: str | None = None, home: str | None = None, site: str | None = None,
             dplib: str | None = None) -> str:
        """The cell's source, with the given target paths (None: found from inside the kernel)."""
        return PRELUDE.format(course=course, home=home, site=site, dplib=dplib) + self.cell


ATTACKS = (
    Attack("forge_grades", "write the course gradebook: own score up, a classmate's to 0", '''\
import sqlite3
def forge():
    db = sqlite3.connect(str(COURSE / "gradebook.db"))
    db.execute("UPDATE grade SET auto_score = 100, extra_credit = 100")
    db.commit()
_try("forge gradebook", forge)
def template():
    for path in glob.glob("/tmp/dplib-grading-*/template.db") + [str(COURSE.parent.parent / "template.db")]:
        open(path, "ab").write(b"x")
_try("rewrite template.db", template)
'''),
    Attack("read_solutions", "read source/ and run the reference solutions; read a classmate's submission", '''\
import json
def steal():
    for path in glob.glob(str(COURSE / "source" / "*" / "*.ipynb")):
        for cell in json.load(open(path))["cells"]:
            if cell["cell_type"] == "code" and (cell["metadata"].get("nbgrader") or {}).get("solution"):
                exec("".join(cell["source"]), globals())
    if not glob.glob(str(COURSE / "source" / "*" / "*.ipynb")):
        raise FileNotFoundError("no source notebooks in sight")
_try("exec reference solutions", steal)
def classmates():
    found = glob.glob(str(COURSE / "submitted" / "*" / "*" / "*.ipynb"))
    if not found:
        raise FileNotFoundError("no submissions in sight")
    open(found[0]).read()
_try("read a classmate's notebook", classmates)
'''),
    Attack("persist", "plant code for later students: dplib, site-packages, $HOME, nbgrader_config.py", '''\
_try("append to dplib/testing/checks.py", lambda: open(DPLIB / "testing" / "checks.py", "a").write("\\n# planted\\n"))
_try("drop a .pth file", lambda: open(SITE / "zz_planted.pth", "w").write("import os\\n"))
_try("drop sitecustomize.py", lambda: open(SITE / "sitecustomize.py", "w").write("# planted\\n"))
def startup():
    folder = HOME / ".ipython" / "profile_default" / "startup"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "00-planted.py").write_text("# planted\\n")
_try("IPython startup file in $HOME", startup)
_try("edit nbgrader_config.py", lambda: open(COURSE / "nbgrader_config.py", "a").write("\\n# planted\\n"))
''', may_succeed=("IPython startup file in $HOME",)),  # sandboxed, $HOME is in the kernel's private /tmp
    Attack("forge_result", "write a forged result line into every pipe of the grader's processes", '''\
import json
def forge():
    written = 0
    for fd in glob.glob("/proc/[0-9]*/fd/*"):
        if fd.split("/")[2] == str(os.getpid()):
            continue  # its own pipes (ipykernel's output capture) lead nowhere
        try:
            if os.readlink(fd).startswith("pipe:"):
                with open(fd, "w") as pipe:
                    pipe.write(json.dumps({"status": "ok", "grades": {}, "student": "x"}) + "\\n")
                    written += 1
        except OSError:
            pass
    if not written:
        raise PermissionError("no pipe of the grader in sight")
_try("forge a worker result", forge)
_try("see the grader's processes", lambda: [1 for p in glob.glob("/proc/[0-9]*/cmdline")
                                              if b"dpgrader.grading.worker" in open(p, "rb").read()][0])
'''),
    Attack("escape_scratch", "pre-create the next submissions' scratch folders; fill the disk outside", '''\
def precreate():
    made = 0
    for base in glob.glob("/tmp/dplib-grading-*"):
        for n in range(50):
            os.makedirs(os.path.join(base, f"task-planted{n}", "course"), exist_ok=True)
            made += 1
    if not made:
        raise FileNotFoundError("no scratch folder in sight")
_try("pre-create scratch folders", precreate)
_try("write 1 MB outside the work folder", lambda: open(COURSE.parent / "planted.bin", "wb").write(b"x" * 2**20))
''', may_succeed=("pre-create scratch folders",)),  # sandboxed, they land in the kernel's private /tmp
    Attack("daemon", "start processes that outlive grading (setsid, double fork)", '''\
import subprocess
_try("setsid daemon", lambda: subprocess.Popen(["setsid", "sh", "-c", "exec sleep 4242"]))
def double_fork():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", "4243"])
        os._exit(0)
_try("double-fork daemon", double_fork)
''', may_succeed=("setsid daemon", "double-fork daemon")),
    Attack("fork_bomb", "start hundreds of processes", '''\
import subprocess
children = []
def bomb():
    for _ in range(300):
        children.append(subprocess.Popen(["sleep", "4244"]))
_try("start 300 processes", bomb)
print("started", len(children))
''', Status.PROCESS_LIMIT),
    Attack("memory_hog", "allocate 3 GiB", '''\
import numpy
def hog():
    global hog_array
    hog_array = numpy.ones(3 * 2**30 // 8)
_try("allocate 3 GiB", hog)
''', Status.MEMORY_LIMIT),
    Attack("big_file", "write eleven 200 MB files in the work folder", '''\
def big():
    for n in range(11):
        with open(f"planted-big-{n}.bin", "wb") as handle:
            for _ in range(200):
                handle.write(b"x" * 2**20)
_try("write 11 x 200 MB", big)
''', Status.DISK_LIMIT),
    Attack("many_files", "create 20,000 files in the work folder", '''\
def many():
    os.makedirs("planted", exist_ok=True)
    for n in range(20000):
        open(f"planted/{n}.txt", "w").close()
_try("create 20,000 files", many)
''', Status.DISK_LIMIT, may_succeed=("create 20,000 files",)),  # in its own tmpfs; the notebook is stopped
    Attack("slow_cells", "three cells that each sleep just under the per-cell timeout", '''\
import time
time.sleep(55)
''', Status.TIME_BUDGET, copies=3),
    Attack("flood_output", "print 30 MB on one line", '''\
print("x" * (30 * 2**20))
''', Status.OUTPUT_LIMIT),
    Attack("network", "open a network connection", '''\
import socket
_try("connect out", lambda: socket.create_connection(("1.1.1.1", 53), timeout=3))
'''),
    Attack("leak_tests", "print the input history, a course file and frames into its own feedback", '''\
print(In)
print(_ih[-3:])
_try("print a source notebook", lambda: print(open(glob.glob(str(COURSE / "source" / "*" / "*.ipynb"))[0]).read()))
''', last=True),
)

BY_NAME = {attack.name: attack for attack in ATTACKS}


def frame_quoting_solution(function: str, arguments: str) -> str:
    """A solution cell whose function raises an error quoting the calling (test) frame's code."""
    return (
        "import inspect\n"
        f"def {function}({arguments}):\n"
        "    caller = inspect.stack()[1]\n"
        "    raise ValueError('called from: ' + ''.join(caller.code_context or []) + "
        "' | ' + ''.join(inspect.getsourcelines(caller.frame)[0]))\n"
    )
