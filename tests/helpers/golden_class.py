"""A small made-up class graded end to end, and everything the class grader writes, as comparable text.

:func:`build_golden_class` makes the class (8 students, 2 assignments) with chosen kinds of
submission (:data:`KINDS`), so that one grading run meets what the class grader handles: full
marks, written answers pending, review flags, a copy of a classmate and a leaked key, a kernel
that dies, a cell that times out, a corrupted notebook, a missing one, a submission with a link
(refused) and a folder whose name is no student id (refused). :func:`snapshot` reads back every
file the grader wrote (and the gradebook's rows) with the volatile parts (times, durations, CPU
seconds, process ids, temporary paths, the project folder) replaced by placeholders.

``python tests/helpers/golden_class.py <folder>`` grades the class into ``<folder>`` and writes
the snapshot to ``tests/grader/golden_class.json`` (the goldens that
``tests/grader/test_golden_class.py`` compares with: each file's text, or the SHA-256 of a large
one; run it on the code whose outputs are the reference).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import sys
from pathlib import Path

ASSIGNMENTS = ["01_definition", "02_laplace"]
N_STUDENTS = 8
KINDS = {
    ("kenneth_gonzalez", "01_definition"): "correct",
    ("peter_blake", "01_definition"): "partial",
    ("mark_moss", "01_definition"): "copies_classmate",
    ("joseph_gilbert", "01_definition"): "kernel_dies",
    ("kimberly_rivera", "01_definition"): "corrupted",
    ("patricia_camacho", "01_definition"): "monkeypatch",
    ("monica_middleton", "01_definition"): "delegates",
    ("matthew_schmidt", "01_definition"): "missing",
    ("kenneth_gonzalez", "02_laplace"): "correct",
    ("peter_blake", "02_laplace"): "infinite_loop",
    ("mark_moss", "02_laplace"): "empty",
    ("joseph_gilbert", "02_laplace"): "leaked_key",
}
GOLDEN = Path(__file__).resolve().parents[1] / "grader" / "golden_class"
INPUTS = ("source", "release", "submitted", "nbgrader_config.py", "gradebook.db", ".dplib-demo")


def build_golden_class(target: Path):
    """The class of :data:`KINDS` at ``target``, ungraded; plus two submissions refused before grading."""
    from dpgrader.simulation.demo import build_class

    course, _ = build_class(target, N_STUDENTS, ASSIGNMENTS, seed=0, cell_timeout=5, progress=False, kinds=KINDS)
    linked = course.submitted("patricia_camacho", "02_laplace")
    linked.mkdir(parents=True)
    (linked / "data.csv").symlink_to("/etc/hostname")
    (linked / "02_laplace.ipynb").write_text((course.release("02_laplace") / "02_laplace.ipynb").read_text())
    no_id = course.submitted("not an id", "01_definition")
    no_id.mkdir(parents=True)
    (no_id / "01_definition.ipynb").write_text((course.release("01_definition") / "01_definition.ipynb").read_text())
    return course


def grade_golden_class(course, workers: int = 2) -> tuple[int, str]:
    """``python -m dpgrader.classroom grade`` on the class: its exit code and what it printed."""
    from dpgrader.classroom import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["--course", str(course.root), "grade", "--workers", str(workers)])
    return code, printed.getvalue()


_VOLATILE = [
    (re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z| UTC)?"), "<TIME>"),
    (re.compile(r"/tmp/[^\s\"'<>)]*"), "<TMP>"),
    (re.compile(r"in \d+\.\d s\b"), "in <S> s"),
    (re.compile(r"by [\w.-]+:\d+ in"), "by <WORKER> in"),
]


PROJECT = Path(__file__).resolve().parents[2]  # where dplib's files are, in tracebacks through them


def normalised(text: str, root: Path) -> str:
    """``text`` with the course and project folders, times, temporary paths and durations replaced by placeholders."""
    text = text.replace(str(root), "<COURSE>").replace(str(PROJECT), "<PROJECT>")
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


def _outcomes_csv(text: str) -> str:
    """``grading_outcomes.csv`` without its measured columns (seconds, kernel_cpu)."""
    import csv

    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0]
    volatile = {header.index(name) for name in ("seconds", "kernel_cpu")}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for index, row in enumerate(rows):
        writer.writerow(["<MEASURED>" if i in volatile and index else v for i, v in enumerate(row)])
    return out.getvalue()


def _notebook(text: str) -> str:
    """A graded notebook without its execution times, adjacent prints to one stream merged into one output
    (how a cell's prints reach the kernel's output in pieces depends on timing, not on the grader)."""
    notebook = json.loads(text)
    for cell in notebook.get("cells", []):
        cell.get("metadata", {}).pop("execution", None)
        if any(o.get("ename") in KERNEL_GONE for o in cell.get("outputs", [])):
            cell["execution_count"] = None  # numbered only if the kernel said it started the cell before it died
        merged = []
        for output in cell.get("outputs", []):
            previous = merged[-1] if merged else None
            if (output.get("output_type") == "stream" and previous is not None
                    and previous.get("output_type") == "stream" and previous.get("name") == output.get("name")):
                previous["text"] = _lines("".join(_text(previous) + _text(output)))
            else:
                merged.append(output)
        if "outputs" in cell:
            cell["outputs"] = merged
    return json.dumps(notebook, indent=1, sort_keys=True)


KERNEL_GONE = ("DeadKernelError", "UnresponsiveKernelError")


def _text(output: dict) -> list[str]:
    text = output.get("text", "")
    return [text] if isinstance(text, str) else list(text)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _feedback(text: str) -> str:
    """A feedback page as nbconvert's BeautifulSoup pass writes it, with adjacent stream outputs of one name merged,
    and no input prompt's number (the cell the kernel died in is numbered or not by timing; see :func:`_notebook`).

    The goldens were captured when every page went through that pass (parsed and written out again: entities,
    attribute quoting). Pages now skip it unless an image lacks ``alt`` (issue 40): the same page once parsed.
    """
    from bs4 import BeautifulSoup

    text = str(BeautifulSoup(text, features="html.parser"))
    text = re.sub(r'(<div class="prompt input_prompt">In\W\[)\d+(\]:</div>)', '\\1\u00a0\\2', text)  # as unnumbered
    previous = None
    while previous != text:
        previous = text
        text = re.sub(r"(output_stream (output_\w+) output_text\">\n<pre>(?:(?!</pre>).)*?)"
                      r"</pre>\n</div>\n</div>\n<div class=\"output_area\">\n<div class=\"prompt\"></div>\n"
                      r"<div class=\"output_subarea output_stream \2 output_text\">\n<pre>",
                      r"\1", text, count=0, flags=re.S)
    return text


def gradebook_rows(course) -> str:
    """Every submission in the gradebook: its cells' scores, comments and flags, as JSON."""
    from nbgrader.api import Gradebook

    rows = []
    with Gradebook(course.gradebook_url) as gradebook:
        for assignment in sorted(gradebook.assignments, key=lambda a: a.name):
            for submission in sorted(assignment.submissions, key=lambda s: s.student.id):
                notebooks = {}
                for notebook in sorted(submission.notebooks, key=lambda n: n.name):
                    notebooks[notebook.name] = {
                        "flagged": notebook.flagged, "late_penalty": notebook.late_submission_penalty,
                        "grades": {g.name: [g.auto_score, g.manual_score, g.needs_manual_grade]
                                   for g in sorted(notebook.grades, key=lambda g: g.name)},
                        "comments": {c.name: [c.auto_comment, c.manual_comment]
                                     for c in sorted(notebook.comments, key=lambda c: c.name)},
                    }
                rows.append({"student": submission.student.id, "assignment": assignment.name,
                             "timestamp": str(submission.timestamp), "notebooks": notebooks})
    return json.dumps(rows, indent=1, sort_keys=True)


def snapshot(course, code: int, printed: str) -> dict[str, str]:
    """Every file the grading run wrote in the course (and its exit code, output and gradebook), normalised."""
    root = course.root
    files = {"exit_code.txt": f"{code}\n", "printed.txt": normalised(printed, root),
             "gradebook.json": gradebook_rows(course)}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_dir() or relative.split("/")[0] in INPUTS or relative.endswith(".png"):
            continue
        if re.fullmatch(r"autograded/grading_logs/worker-\d+\.log", relative):
            files[relative] = "<WORKER LOG>"  # the worker processes' own chatter
            continue
        if relative.startswith("autograded/grading_logs/") and relative != "autograded/grading_logs/graded_by.log":
            files[relative] = "<NBGRADER LOG>"  # nbgrader's log of a submission not graded ok: times throughout
            continue
        text = path.read_text()
        if relative == "autograded/grading_outcomes.csv":
            text = _outcomes_csv(text)
        elif relative.endswith(".ipynb"):
            text = _notebook(text)
        elif relative.startswith("feedback/") and relative.endswith(".html"):
            text = _feedback(text)
        if relative == "autograded/grading_logs/graded_by.log":
            text = "".join(sorted(text.splitlines(keepends=True)))  # workers finish in any order
        files[relative] = normalised(text, root)
    return files


GOLDEN_FILE = GOLDEN.with_suffix(".json")
LARGEST_KEPT = 16_000  # characters: a larger file is kept as the SHA-256 of its normalised text


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def write_golden(files: dict[str, str], path: Path = GOLDEN_FILE) -> None:
    """The goldens: each file's normalised text, or its :func:`digest` when longer than :data:`LARGEST_KEPT`."""
    kept = {name: text if len(text) <= LARGEST_KEPT else digest(text) for name, text in sorted(files.items())}
    path.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")


def read_golden(path: Path = GOLDEN_FILE) -> dict[str, str]:
    return json.loads(path.read_text())


def as_kept(name: str, text: str, golden: dict[str, str]) -> str:
    """``text`` as the goldens keep file ``name``: itself, or its digest where they keep a digest."""
    return digest(text) if golden.get(name, "").startswith("sha256:") else text


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    os.environ.setdefault("MPLBACKEND", "Agg")
    target = Path(sys.argv[1]).resolve()
    course = build_golden_class(target)
    code, printed = grade_golden_class(course)
    target = Path(sys.argv[2]) if len(sys.argv) > 2 else GOLDEN_FILE
    write_golden(snapshot(course, code, printed), target)
    print(f"exit {code}; {len(read_golden(target))} files")
