"""Regenerate ``release/`` from ``source/`` with nbgrader (``make release``).

Each assignment is generated in a throwaway course folder, so no gradebook is left in
the repository, and the result replaces ``release/<assignment>/``. nbgrader's output
is byte-identical across runs, so a test can check that release/ is in sync.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from dpgrader.course import REPO_ROOT, Course


def regenerate(assignment: str, repo: Path = REPO_ROOT) -> Path:
    """Regenerate ``release/<assignment>/`` in ``repo`` and return it."""
    target = Course(repo).release(assignment)
    with tempfile.TemporaryDirectory() as scratch:
        generated = Course.from_repo(Path(scratch), [assignment], repo=repo).generate_assignment(assignment)
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(generated, target)
    return target


def main(argv: list[str]) -> None:
    names = argv or Course(REPO_ROOT).assignments()
    for name in names:
        print(f"release/{name}/ <- source/{name}/")
        regenerate(name)


if __name__ == "__main__":
    main(sys.argv[1:])
