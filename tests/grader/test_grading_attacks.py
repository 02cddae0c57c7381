"""Hostile students against the real grading pipeline, sandbox on: every attack class of issue 11.

One course (01_definition), one class graded in one run of ``grade_class`` on two workers:
two honest students, and one attacker per entry of :data:`dpgrader.simulation.hostile.ATTACKS`
(each an untouched release plus one hostile cell, so she earns nothing honestly), plus
the channel attacks (a symlinked notebook, a symlinked student folder, student ids with
glob and shell characters). Asserted for the whole class at once:

- no attacker earns a mark (her score is exactly that of the untouched release: 0);
- every honest student's grade is exactly what it is without the attackers;
- every attacker gets the promised outcome (a limit hit is recorded, by status);
- nothing outside the scratch copies changed: the course's own files, ``dplib/``,
  site-packages and a throwaway ``$HOME`` hash the same before and after;
- nothing any attacker started is still running;
- no feedback page holds a line of a hidden test, reference solution or mark scheme.

And plain ``nbgrader autograde`` runs its kernel in the sandbox too (one attacker).
"""

from __future__ import annotations

import hashlib
import html
import os
import re
import site
import sys
from pathlib import Path

import nbformat
import psutil
import pytest
from nbgrader.api import MissingEntry
from helpers.checks import autograded_points
from helpers.classes import submit_class

from dpgrader import Course, notebooks_of
from dpgrader.classroom import grade_class
from dpgrader.simulation.own_way import own_way
from dpgrader.course import REPO_ROOT
from dpgrader.simulation.hostile import ATTACKS, frame_quoting_solution
from dpgrader.outcomes import Status
from dpgrader.preprocessors import secret_lines
from dpgrader.sandbox import bwrap_problem, kernel_packages

DPLIB_DIR = kernel_packages(sys.executable)["dplib"]

pytestmark = [pytest.mark.xdist_group("grading_attacks"), pytest.mark.pipeline]

ASSIGNMENT = "01_definition"
SOURCE = notebooks_of(REPO_ROOT / "source" / ASSIGNMENT)[0]
POINTS = autograded_points(SOURCE)
FULL = sum(POINTS.values())
PARTIAL = POINTS["test_uniqueness"] + POINTS["test_max_privacy_loss"]
SITE = Path(site.getsitepackages()[0]) if hasattr(site, "getsitepackages") else Path(sys.prefix)
SLEEP_MARKERS = ("4242", "4243", "4244")  # the sleep arguments of the daemon and fork-bomb attacks


def test_the_sandbox_runs_here_in_ci():
    """In CI a missing sandbox fails the suite instead of skipping the attack tests."""
    problem = bwrap_problem()
    assert problem is None, f"the grading sandbox cannot run: {problem} (apt-get install bubblewrap)"


def _stat_digest(folder: Path, skip=()) -> dict[str, str]:
    """Per path under ``folder``: a hash of its size, mode, mtime and content (content for files up to 1 MB)."""
    digests = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if relative.parts and relative.parts[0] in skip or "__pycache__" in relative.parts:
            continue
        info = path.lstat()
        digest = hashlib.sha256(f"{info.st_size}|{info.st_mode}|{info.st_mtime_ns}".encode())
        if path.is_file() and not path.is_symlink() and info.st_size < 2**20:
            digest.update(path.read_bytes())
        digests[str(relative)] = digest.hexdigest()
    return digests


def _release(course: Course) -> nbformat.NotebookNode:
    return nbformat.read(str(course.root / "release" / ASSIGNMENT / SOURCE.name), as_version=4)


def _with_cell(notebook, source: str, last: bool, copies: int = 1) -> nbformat.NotebookNode:
    for _ in range(copies):
        new = nbformat.v4.new_code_cell(source)
        if last:
            notebook.cells.append(new)
        else:
            notebook.cells.insert(2, new)  # after the title and the read-only imports
    return notebook


# The student tricks of issue 25 (the grader's second round), each a release with some cells replaced or
# added: what each must earn at most, and the reason she must be flagged with (None: no flag needed).
WRONG = {
    "uniqueness_solution": "def uniqueness(df, columns):\n    return 0.5",
    "max_privacy_loss_solution": "def max_privacy_loss(p_d, p_d_prime):\n    return math.log(3)",
    "satisfies_dp_solution": "def satisfies_dp(p_d, p_d_prime, epsilon):\n    return True",
}
GC_EDIT = """
import gc
noop = lambda *args, **kwargs: None
for thing in gc.get_objects():
    if type(thing).__name__ == "Snapshot" and "check_close" in getattr(thing, "names", {}):
        thing.names["check_close"] = noop
check_close = noop
"""
RENAMED_REFERENCE = {  # the reference renamed, reordered and padded with statements whose value is unused
    "reidentify_solution": (
        "def reidentify(released_rows, register, link_on):\n"
        "    unused = 'padding'\n"
        "    link_on = list(link_on)\n"
        "    pass\n"
        "    names = register.loc[~register.duplicated(link_on, keep=False), link_on + ['Name']]\n"
        "    len(names)\n"
        "    single = released_rows[~released_rows.duplicated(link_on, keep=False)]\n"
        "    return single.merge(names, on=link_on, how='inner')\n"),
    "max_privacy_loss_solution": (
        "def max_privacy_loss(first, second):\n"
        "    first = np.asarray(first, dtype=float)\n"
        "    'a padding string'\n"
        "    second = np.asarray(second, dtype=float)\n"
        "    seen = (first > 0) | (second > 0)\n"
        "    if ((first[seen] == 0) | (second[seen] == 0)).any():\n"
        "        return math.inf\n"
        "    gaps = np.abs(np.log(first[seen]) - np.log(second[seen]))\n"
        "    return float(gaps.max(initial=0.0))\n"),
}
TRICKS = {
    # (3) a syntax tree too deep for a recursive review, hiding a gc edit of the guard's snapshot (which turns
    # check_close into a no-op: no defence inside the kernel stops that, the review's flag does)
    "review_bomb_gc": ({**WRONG}, ["total = " + "+".join(["1"] * 450) + "\n" + GC_EDIT], None, "gc"),
    # (4) a value that says it equals anything
    "mock_value": ({"satisfies_dp_solution": "from unittest.mock import MagicMock\n"
                    "def satisfies_dp(p_d, p_d_prime, epsilon):\n"
                    "    return MagicMock(**{'__eq__.return_value': True, '__bool__.return_value': True})"},
                   [], 0.0, "fake value"),
    # (5) the shared data changed in place, and an answer right for the changed data only
    "mutates_data": ({"differencing_attack_solution": "def differencing_attack(df, name):\n    return name != 'Bob'"},
                     ["people.loc[:, 'income'] = '>50K'"], 0.0, None),
    # (6) the answer computed by a dplib helper of the switched-off function
    "delegates_helper": ({"max_privacy_loss_solution":
                          "def max_privacy_loss(p_d, p_d_prime):\n"
                          "    losses = dplib.privacy_loss_per_output(p_d, p_d_prime)\n"
                          "    return float(np.abs(losses[~np.isnan(losses)]).max(initial=0.0))"},
                         [], 0.0, None),
    # (7) dplib's implementation with its private helpers pasted inline and renamed
    "inlines_dplib": ({"max_privacy_loss_solution":
                       "def check_numbers(values, label):\n"
                       "    arr = np.asarray(values)\n"
                       "    if arr.dtype.kind not in 'biuf':\n"
                       "        raise ValueError(f'{label} must hold numbers, got dtype {arr.dtype}')\n"
                       "    arr = arr.astype(float, copy=False)\n"
                       "    if not np.isfinite(arr).all():\n"
                       "        raise ValueError(f'{label} must hold finite numbers (no NaN or inf)')\n"
                       "    if arr.ndim != 1 or arr.size == 0:\n"
                       "        raise ValueError(f'{label} must be a non-empty 1-D array, got shape {arr.shape}')\n"
                       "    if (arr < 0).any() or (arr > 1 + 1e-12).any():\n"
                       "        raise ValueError(f'{label} must hold probabilities in [0, 1]')\n"
                       "    return arr\n"
                       "def max_privacy_loss(a, b):\n"
                       "    a, b = check_numbers(a, 'p_d'), check_numbers(b, 'p_d_prime')\n"
                       "    if a.shape != b.shape:\n"
                       "        raise ValueError(f'p_d and p_d_prime must cover the same outputs, got lengths {a.size} and {b.size}')\n"
                       "    with np.errstate(divide='ignore', invalid='ignore'):\n"
                       "        per_output = np.log(a) - np.log(b)\n"
                       "    per_output = np.abs(per_output[~np.isnan(per_output)])\n"
                       "    return float(per_output.max(initial=0.0))"},
                      [], None, "dplib"),
    # (7) a leaked key: the reference, renamed and padded, handed in by two students
    "key_holder_1": (RENAMED_REFERENCE, [], None, "instructor's reference"),
    "key_holder_2": (RENAMED_REFERENCE, [], None, "instructor's reference"),
}
HONEST_MAGICS = ["%matplotlib inline", "%timeit -n 1 -r 1 uniqueness(released, ['Zip'])", "!pip list"]


def _tricked(course: Course, replacements: dict[str, str], cells: list[str]) -> nbformat.NotebookNode:
    notebook = _release(course)
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in replacements:
            cell.source = replacements[grade_id]
    for code in reversed(cells):
        notebook.cells.insert(4, nbformat.v4.new_code_cell(code))  # after the read-only imports and data
    return notebook


def _partial(course: Course) -> nbformat.NotebookNode:
    reference = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
                 for c in nbformat.read(str(SOURCE), as_version=4).cells}
    notebook = _release(course)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") in ("uniqueness_solution", "max_privacy_loss_solution"):
            cell.source = reference[cell.metadata["nbgrader"]["grade_id"]]
    return notebook


def _frame_quoter(course: Course) -> nbformat.NotebookNode:
    notebook = _release(course)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "max_privacy_loss_solution":
            cell.source = frame_quoting_solution("max_privacy_loss", "p_d, p_d_prime")
    return notebook


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    base = tmp_path_factory.mktemp("attacks")
    home = base / "home"
    (home / ".config").mkdir(parents=True)
    (home / ".config" / "marker").write_text("the grader's home\n")
    course = Course.from_repo(base / "course", [ASSIGNMENT])
    with open(course.root / "nbgrader_config.py", "a") as config:
        config.write("\nc.GradingLimits.cell_seconds = 60\n")
    course.generate_assignment(ASSIGNMENT)
    targets = {"course": str(course.root), "home": str(home), "site": str(SITE), "dplib": str(DPLIB_DIR)}
    students = {
        "ada": nbformat.read(str(SOURCE), as_version=4),  # honest: the reference
        "bob": _partial(course),  # honest: two exercises
        "$(touch pwned)": nbformat.read(str(SOURCE), as_version=4),  # shell characters: not an id, refused, nothing run
        "frame_quoter": _frame_quoter(course),
    }
    for attack in ATTACKS:
        students[f"attacker_{attack.name}"] = _with_cell(_release(course), attack.code(**targets), attack.last, attack.copies)
    for name, (replacements, cells, _, _) in TRICKS.items():
        students[name] = _tricked(course, replacements, cells)
    honest = nbformat.read(str(SOURCE), as_version=4)  # her own answers, with magics an honest student uses
    for index, cell in enumerate(honest.cells):
        if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "code":
            cell.source = own_way(cell.source, rng=index)
    for code in HONEST_MAGICS:
        honest.cells.insert(4, nbformat.v4.new_code_cell(code))
    students["honest_magics"] = honest
    too_many = _release(course)
    too_many.cells += [nbformat.v4.new_code_cell("pass") for _ in range(1200)]
    students["too_many_cells"] = too_many
    submit_class(course, ASSIGNMENT, students, SOURCE.name)
    # channel attacks: a notebook symlinked to the instructor's source, a folder symlinked to ada's
    (course.root / "submitted" / "symlinked_notebook" / ASSIGNMENT).mkdir(parents=True)
    (course.root / "submitted" / "symlinked_notebook" / ASSIGNMENT / SOURCE.name).symlink_to(
        course.root / "source" / ASSIGNMENT / SOURCE.name)
    (course.root / "submitted" / "symlinked_folder").mkdir()
    (course.root / "submitted" / "symlinked_folder" / ASSIGNMENT).symlink_to(course.root / "submitted" / "ada" / ASSIGNMENT)
    # links and special files anywhere in the tree, and a package beside the notebook that would shadow dplib
    nested = course.root / "submitted" / "nested_symlink" / ASSIGNMENT
    (nested / "data").mkdir(parents=True)
    nbformat.write(_release(course), str(nested / SOURCE.name))
    (nested / "data" / "environ").symlink_to("/proc/self/environ")
    hardlinked = course.root / "submitted" / "hard_link" / ASSIGNMENT
    hardlinked.mkdir(parents=True)
    os.link(course.root / "source" / ASSIGNMENT / SOURCE.name, hardlinked / "answers.ipynb")
    nbformat.write(_release(course), str(hardlinked / SOURCE.name))
    fifo = course.root / "submitted" / "fifo" / ASSIGNMENT
    fifo.mkdir(parents=True)
    nbformat.write(_release(course), str(fifo / SOURCE.name))
    os.mkfifo(fifo / "pipe")
    shadow = course.root / "submitted" / "shadows_dplib" / ASSIGNMENT
    (shadow / "dplib" / "testing").mkdir(parents=True)
    nbformat.write(_release(course), str(shadow / SOURCE.name))
    (shadow / "dplib" / "__init__.py").write_text("def __getattr__(name):\n    return lambda *a, **k: None\n")
    (shadow / "dplib" / "testing" / "__init__.py").write_text(
        "import contextlib\nquiet = disabled = substituted = lambda *a, **k: contextlib.nullcontext()\n"
        "def __getattr__(name):\n    return lambda *a, **k: None\n")
    # a glob character: nbgrader would read x[1] as a pattern matching x1
    submit_class(course, ASSIGNMENT, {"x[1]": _release(course), "x1": nbformat.read(str(SOURCE), as_version=4)}, SOURCE.name)

    protected = {
        "course": lambda: _stat_digest(course.root, skip=("autograded", "feedback", "similarity", "gradebook.db", "grades.csv")),
        "dplib": lambda: _stat_digest(DPLIB_DIR),
        "site-packages": lambda: _stat_digest(SITE),
        "home": lambda: _stat_digest(home),
    }
    before = {name: digest() for name, digest in protected.items()}
    old_home = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        # the slow_cells attacker sleeps 55 s in each of three cells (under the 60 s cell limit): the budget stops her
        outcomes = grade_class(course.root, workers=2, progress=False, limits={"time_budget_factor": 3})
    finally:
        os.environ["HOME"] = old_home or ""
    after = {name: digest() for name, digest in protected.items()}
    return course, {(o.student, o.assignment): o for o in outcomes}, before, after


def _score(course: Course, student: str) -> float:
    (grades,) = course.grades(ASSIGNMENT, student).values()
    return sum(g.auto_score or 0.0 for g in grades if g.grade_id in POINTS)


def test_honest_students_get_exactly_their_grade(attacked):
    course, outcomes, _, _ = attacked
    assert _score(course, "ada") == FULL and outcomes["ada", ASSIGNMENT].status == Status.OK
    assert _score(course, "bob") == PARTIAL and outcomes["bob", ASSIGNMENT].status == Status.OK
    assert _score(course, "x1") == FULL and outcomes["x1", ASSIGNMENT].status == Status.OK
    shell = outcomes["$(touch pwned)", ASSIGNMENT]
    assert shell.status == Status.REFUSED and "rename the folder" in shell.message, shell  # dpgrader.ids
    assert not list(course.root.rglob("pwned"))
    assert all(o.sandboxed for o in outcomes.values())


@pytest.mark.parametrize("student", list(TRICKS))
def test_a_trick_earns_nothing_or_is_flagged_with_the_reason(attacked, student):
    course, outcomes, _, _ = attacked
    _, _, at_most, reason = TRICKS[student]
    outcome = outcomes[student, ASSIGNMENT]
    assert outcome.status == Status.OK, outcome
    if at_most is not None:
        assert _score(course, student) <= at_most, (student, course.grades(ASSIGNMENT, student))
    if reason is not None:
        assert any(reason in str(flag) for flag in outcome.flags), outcome.flags


def test_honest_magics_keep_full_marks_and_raise_no_flag(attacked):
    course, outcomes, _, _ = attacked
    outcome = outcomes["honest_magics", ASSIGNMENT]
    assert outcome.status == Status.OK and _score(course, "honest_magics") == FULL, outcome
    assert outcome.flags == (), outcome.flags


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_an_attacker_earns_nothing_and_gets_the_promised_outcome(attacked, attack):
    course, outcomes, _, _ = attacked
    outcome = outcomes[f"attacker_{attack.name}", ASSIGNMENT]
    assert _score(course, f"attacker_{attack.name}") == 0.0, outcome
    assert outcome.status == attack.status, outcome
    autograded = nbformat.read(str(course.root / "autograded" / outcome.student / ASSIGNMENT / SOURCE.name), 4)
    said = "".join(o.get("text", "") for c in autograded.cells if c.cell_type == "code" for o in c.outputs)
    succeeded = set(re.findall(r"ATTACK (.+) succeeded", said))
    assert succeeded <= set(attack.may_succeed), said[:2000]


def test_channel_attacks_are_refused_clearly(attacked):
    course, outcomes, _, _ = attacked
    for student in ("symlinked_notebook", "symlinked_folder", "x[1]"):
        outcome = outcomes[student, ASSIGNMENT]
        assert outcome.status in (Status.REFUSED, Status.MISSING), outcome
        if student == "x[1]":  # no student id: recorded as refused, never in the gradebook
            with pytest.raises(MissingEntry):
                _score(course, student)
        else:
            assert _score(course, student) == 0.0
    assert "symbolic link" in outcomes["symlinked_folder", ASSIGNMENT].message
    assert "A-Z a-z 0-9 . _ @ -" in outcomes["x[1]", ASSIGNMENT].message
    assert outcomes["too_many_cells", ASSIGNMENT].status == Status.TOO_LARGE
    assert _score(course, "too_many_cells") == 0.0


def test_links_and_special_files_anywhere_are_refused_and_nothing_beside_the_notebook_is_imported(attacked):
    course, outcomes, _, _ = attacked
    for student, said in (("nested_symlink", "data/environ is a symbolic link"),
                          ("hard_link", "answers.ipynb is a hard link"), ("fifo", "pipe is a FIFO")):
        outcome = outcomes[student, ASSIGNMENT]
        assert outcome.status == Status.REFUSED and said in outcome.message, outcome
        assert _score(course, student) == 0.0
        assert not (course.root / "feedback" / student).exists()
    shadow = outcomes["shadows_dplib", ASSIGNMENT]  # her dplib/ never reached the kernel: graded as the release is
    assert shadow.status == Status.OK and _score(course, "shadows_dplib") == 0.0, shadow
    autograded = course.root / "autograded" / "shadows_dplib" / ASSIGNMENT
    assert sorted(p.name for p in autograded.iterdir()) == [SOURCE.name]


def test_a_notebook_that_fills_its_folder_or_outlasts_its_budget_is_stopped_with_its_own_status(attacked):
    course, outcomes, _, _ = attacked
    assert "filled its work folder" in outcomes["attacker_big_file", ASSIGNMENT].message
    assert "created" in outcomes["attacker_many_files", ASSIGNMENT].message
    slow = outcomes["attacker_slow_cells", ASSIGNMENT]
    assert "time budget of" in slow.message and slow.seconds < 3 * 55, slow  # cut short, not three full cells


def test_nothing_outside_the_scratch_copies_changed(attacked):
    _, _, before, after = attacked
    for name in ("course", "dplib", "site-packages"):
        changed = {path for path in before[name].keys() | after[name].keys() if before[name].get(path) != after[name].get(path)}
        assert changed == set(), (name, sorted(changed)[:10])
    # $HOME: the grader itself may add its caches (jupyter, matplotlib); nothing there may change or be planted
    home_before, home_after = before["home"], after["home"]
    assert {path: home_after.get(path) for path in home_before} == home_before
    assert not [path for path in home_after if "planted" in path]
    assert not list(Path("/tmp").glob("dplib-grading-*/task-planted*"))


def test_nothing_an_attacker_started_still_runs(attacked):
    started = [p for p in psutil.process_iter(["pid", "cmdline"])
               if p.info["cmdline"] and p.info["cmdline"][0] == "sleep" and p.info["cmdline"][-1] in SLEEP_MARKERS]
    # The kernel kills a PID namespace's processes asynchronously when its sandbox ends: allow it 10 s
    # (the daemons would sleep for over an hour).
    _, alive = psutil.wait_procs(started, timeout=10)
    assert [p.info for p in alive] == []


def test_feedback_quotes_no_hidden_test_solution_or_mark_scheme(attacked):
    course, _, _, _ = attacked
    secrets = secret_lines([c.source for c in nbformat.read(str(SOURCE), as_version=4).cells])
    assert len(secrets) > 20
    pages = sorted((course.root / "feedback").glob(f"*/{ASSIGNMENT}/*.html"))
    leakers = [p for p in pages if p.parts[-3] in ("attacker_leak_tests", "frame_quoter")]
    assert len(leakers) == 2
    for page in pages:
        text = html.unescape(page.read_text())
        quoted = [line for line in secrets if line in text]
        assert quoted == [], (page, quoted[:3])
    assert "output line(s) removed" in html.unescape(leakers[0].read_text() + leakers[1].read_text())


def test_feedback_shows_figures_and_exercise_names(attacked):
    course, _, _, _ = attacked
    page = (course.root / "feedback" / "ada" / ASSIGNMENT / f"{SOURCE.stem}.html").read_text()
    assert page.count("data:image/png;base64") >= 1
    assert ">Tests of uniqueness</a>" in page and ">Test cell</a>" not in page


def test_plain_nbgrader_autograde_is_sandboxed_too(tmp_path):
    course = Course.from_repo(tmp_path / "course", [ASSIGNMENT])
    course.generate_assignment(ASSIGNMENT)
    release = nbformat.read(str(course.root / "release" / ASSIGNMENT / SOURCE.name), as_version=4)
    attack = next(a for a in ATTACKS if a.name == "read_solutions")
    forge = next(a for a in ATTACKS if a.name == "forge_grades")
    notebook = _with_cell(release, attack.code(course=str(course.root)) + "\n" + forge.cell, last=False)
    submit_class(course, ASSIGNMENT, {"mallory": notebook}, SOURCE.name)
    source_before = _stat_digest(course.root / "source")
    log = course.autograde(ASSIGNMENT).stderr
    assert "Started the grading zygote" in log and "from scratch" not in log  # the kernel was forked
    assert _score(course, "mallory") == 0.0
    assert _stat_digest(course.root / "source") == source_before
    graded = nbformat.read(str(course.root / "autograded" / "mallory" / ASSIGNMENT / SOURCE.name), as_version=4)
    said = "".join(o.get("text", "") for c in graded.cells if c.cell_type == "code" for o in c.outputs)
    assert "exec reference solutions failed" in said and "forge gradebook failed" in said
