"""Build the repository to publish to students: what they run, never what grades them.

    .venv/bin/python scripts/make_student_repo.py build/student-repo     (or: make student-repo)

It holds ``release/`` (the student versions), ``course/`` (lectures and syllabus, without the
instructor guide), the ``dplib`` package without ``dpgrader`` (the instructor's grading tools),
``pyproject.toml`` and ``environment.yml`` to install it, and a student README. Never ``source/``
(reference solutions, hidden tests, mark schemes), tests, gradebooks or feedback. Publish that
folder as its own git repository (the commands are printed) and point nbgitpuller links at it.
``tests/deploy/test_student_repo.py`` checks the output holds no file of source/ and no solution or
hidden-test text.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", "*.egg-info")

README = """# Differential privacy, hands-on: student materials

Lecture notebooks (`course/`), the assignments to fill in (`release/<assignment>/<assignment>.ipynb`)
and `dplib`, the helper package they import.

## Set up (once)

```bash
python3 -m venv .venv && .venv/bin/pip install -e .   # or: conda env create -f environment.yml && conda activate dp-course
.venv/bin/jupyter lab
```

On the course's JupyterHub all of this is installed already.

To export a notebook to HTML that a screen reader can read (figures with their descriptions, readable contrast):
`jupyter nbconvert --to html --template dp_course --TemplateExporter.extra_template_basedirs=course/nbconvert <notebook>`.

## Work on an assignment

Open `release/<assignment>/<assignment>.ipynb`, fill in every `YOUR CODE HERE` / `YOUR ANSWER HERE`,
run the tests under each exercise, and hand the notebook in the way your instructor says. On the
course's JupyterHub use *Nbgrader -> Assignment List*: **Fetch** the assignment, work in the copy it
makes in your home folder, **Validate**, then **Submit**; later **Fetch Feedback**. From a terminal:
`nbgrader fetch_assignment 02_laplace --course dp-course`, `nbgrader submit 02_laplace --course dp-course`
(the hub sets `Exchange.root`; elsewhere add `--Exchange.root=<the folder your instructor gives>`).
"""


def build(target: Path) -> Path:
    """Write the student repository into ``target`` (which must not exist yet) and return it."""
    target = Path(target)
    if target.exists():
        raise ValueError(f"target must be a new folder, got existing {target}")
    shutil.copytree(REPO / "release", target / "release", ignore=IGNORE)
    shutil.copytree(REPO / "course", target / "course", ignore=shutil.ignore_patterns("instructor_guide.md", "__pycache__", ".ipynb_checkpoints"))
    shutil.copytree(REPO / "dplib", target / "dplib", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "environment.yml"):
        shutil.copy2(REPO / name, target / name)
    (target / "README.md").write_text(README)
    (target / ".gitignore").write_text(".venv/\n__pycache__/\n*.egg-info/\n.ipynb_checkpoints/\n")
    return target


def main(argv: list[str]) -> None:
    target = Path(argv[0] if argv else "build/student-repo")
    build(target)
    print(f"student repository written to {target}/ (release/, course/, dplib/, install files; no source/)")
    print(f"publish it: cd {target} && git init -b main && git add . && git commit -m 'Student materials' && git remote add origin <url> && git push -u origin main")


if __name__ == "__main__":
    main(sys.argv[1:])
