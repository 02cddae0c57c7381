"""The architecture as written in docs/architecture.md, checked against the code.

Every module of both packages is named in the document by its dotted name, and every dotted name
the document gives exists; the layers import only downwards; no private name is imported from
another module; dplib's modules stay textbook-sized.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "architecture.md"
PACKAGES = ("dplib", "dpgrader")
MAX_DPLIB_LINES = 320  # "about 300 lines": a module past this is cut by concept (docs/architecture.md)


def modules(package: str) -> dict[str, Path]:
    """Dotted name -> file of every module of ``package`` (a package is named by its ``__init__``)."""
    found = {}
    for path in sorted((REPO / package).rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every ``from module import names`` and ``import module`` of a file, resolved."""
    tree = ast.parse(path.read_text())
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    if path.name == "__init__.py":
        package = ".".join(path.relative_to(REPO).parts[:-1])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.append((base, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
    return found


ALL = {name: path for package in PACKAGES for name, path in modules(package).items()}


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_module_is_named_in_the_architecture(name):
    assert f"`{name}`" in DOC.read_text(), f"docs/architecture.md does not name `{name}`: add it to its package's table"


def test_every_dotted_name_the_architecture_gives_exists():
    named = set(re.findall(r"`((?:dplib|dpgrader)(?:\.\w+)+)`", DOC.read_text()))
    missing = []
    for name in sorted(named):
        if name in ALL or importlib.util.find_spec(name.rsplit(".", 1)[0]) is None:
            continue
        module, _, attribute = name.rpartition(".")
        if name not in ALL and not hasattr(importlib.import_module(module), attribute):
            missing.append(name)
    assert not missing, f"docs/architecture.md names what the code no longer has: {missing}"


def test_the_layers_import_only_downwards():
    """dplib imports nothing of dpgrader; the grading run imports nothing of the instructor's commands; the
    guard (inside the grading kernel) imports nothing of the grader but itself."""
    wrong = []
    for name, path in ALL.items():
        for module, _ in imports(path):
            if name.startswith("dplib") and module.startswith("dpgrader"):
                wrong.append((name, module))
            if name.startswith("dpgrader.grading") and module.startswith("dpgrader.classroom"):
                wrong.append((name, module))
            if name.startswith("dpgrader.guard") and module.startswith("dpgrader") and not module.startswith("dpgrader.guard"):
                wrong.append((name, module))
    assert not wrong, wrong


def test_no_private_name_is_imported_from_another_module():
    """A name with a leading underscore stays in its module (a private module, like ``dplib._validation``, may be
    imported inside its package)."""
    private = []
    for name, path in ALL.items():
        for module, names in imports(path):
            if not module.startswith(PACKAGES):
                continue
            for imported in names:
                if imported.startswith("_") and f"{module}.{imported}" not in ALL:
                    private.append(f"{name}: from {module} import {imported}")
    assert not private, private


@pytest.mark.parametrize("name", sorted(n for n in ALL if n.startswith("dplib")))
def test_every_dplib_module_is_textbook_sized(name):
    lines = len(ALL[name].read_text().splitlines())
    assert lines <= MAX_DPLIB_LINES, f"{name} has {lines} lines: cut it by concept (docs/architecture.md)"
