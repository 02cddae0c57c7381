"""The front door, dplib/__init__.py: what ``import dplib`` gives, and what it loads lazily."""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
import types

from pathlib import Path

import dplib

REPO = Path(__file__).resolve().parents[2]
LIBRARY_MODULES = sorted(
    info.name for info in pkgutil.iter_modules(dplib.__path__) if not info.name.startswith("_")
)
ROLE_PACKAGES = ("mechanisms", "accounting", "estimation", "attacks", "auditing", "learning", "synthetic")
NOTEBOOKS = sorted(
    path for folder in ("source", "release", "course") for path in (REPO / folder).rglob("*.ipynb")
    if ".ipynb_checkpoints" not in path.parts
)


def test_every_name_the_docstring_promises_is_there():
    """Check that each ``name`` the package docstring lists is an attribute of dplib."""
    promised = set(re.findall(r"``([A-Za-z_][A-Za-z0-9_]*)``", dplib.__doc__))
    assert {"laplace_mech", "load_adult", "krr_error_vs_epsilon", "privacy_loss_per_output"} <= promised
    missing = sorted(name for name in promised if not hasattr(dplib, name))
    assert missing == []


def test_every_module_is_importable_by_its_own_name():
    """Check that dplib.<module> is the module of that name: no re-exported function shadows one."""
    assert {*ROLE_PACKAGES, "datasets", "figures", "images", "widgets", "plotting", "testing"} == set(LIBRARY_MODULES)
    for name in LIBRARY_MODULES:
        module = importlib.import_module(f"dplib.{name}")
        assert isinstance(getattr(dplib, name), types.ModuleType), f"dplib.{name} is not a module"
        assert getattr(dplib, name) is module


def test_reexports_are_the_modules_functions():
    """Check that every public name of a library module's __all__ is re-exported as the same object."""
    for name in LIBRARY_MODULES:
        if name in ("plotting", "widgets", "testing", "datasets"):
            continue  # loaded on first use, or re-exported in part (the loaders)
        module = importlib.import_module(f"dplib.{name}")
        for public in getattr(module, "__all__", []):
            assert getattr(dplib, public) is getattr(module, public), f"dplib.{public} is not dplib.{name}.{public}"


def test_import_is_light_and_the_heavy_modules_load_on_first_use():
    """Check that import dplib loads neither matplotlib, ipywidgets nor scipy.stats, and dplib.widgets does."""
    code = (
        "import sys, dplib\n"
        "heavy = ('matplotlib', 'ipywidgets', 'scipy.stats')\n"
        "print([m for m in heavy if m in sys.modules])\n"
        "dplib.widgets, dplib.plotting, dplib.testing\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert lines == ["[]", "['matplotlib', 'ipywidgets', 'scipy.stats']"]


def test_unknown_attribute_is_an_attribute_error():
    """Check that the lazy loader does not turn a typo into an import."""
    try:
        dplib.widget
    except AttributeError as error:
        assert "widget" in str(error)
    else:
        raise AssertionError("dplib.widget should not exist")


def test_the_role_packages_hold_every_module_of_the_library():
    """Check that dplib's top level is the role subpackages and the tools: no concept module lies flat beside them."""
    flat = sorted(path.stem for path in Path(dplib.__file__).parent.glob("*.py") if not path.stem.startswith("_"))
    assert flat == ["datasets", "figures", "images", "plotting"]


def test_every_former_module_name_is_its_new_module():
    """Check that ``import dplib.<former name>`` (the flat names of earlier terms) is the moved module, and that a
    role package named like a former module re-exports every public name of it."""
    assert len(dplib.FORMER_NAMES) == 27
    for former, name in dplib.FORMER_NAMES.items():
        module = importlib.import_module(name)
        assert importlib.import_module(f"dplib.{former}") is module, former
        assert getattr(dplib, former) is module, former
    for package, module in (("learning", "local_model"), ("synthetic", "sampling"), ("attacks", "linkage"),
                            ("auditing", "event_audit")):
        moved = importlib.import_module(f"dplib.{package}.{module}")
        public = [name for name, value in vars(moved).items() if not name.startswith("_")
                  and getattr(value, "__module__", moved.__name__) == moved.__name__ and not isinstance(value, types.ModuleType)]
        missing = [name for name in public if getattr(importlib.import_module(f"dplib.{package}"), name, None) is not getattr(moved, name)]
        assert public and not missing, f"dplib.{package} does not re-export {missing} of dplib.{package}.{module}"


def test_a_former_name_works_in_a_fresh_interpreter():
    """Check that ``import dplib.<former>`` and ``from dplib.<former> import ...`` work before dplib is imported."""
    code = ("import dplib.privacy_loss as p; from dplib.private_learning import CLIP_NORM, adult_design_matrices\n"
            "from dplib.learning import FEATURES, train_and_score\n"
            "print(p.__name__, adult_design_matrices.__module__, train_and_score.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["dplib.accounting.privacy_loss", "dplib.learning.logistic_model", "dplib.learning.local_model"]


def _dplib_references(code: str) -> tuple[set[str], set[tuple[str, str]]]:
    """The dotted ``dplib.a.b`` names a cell's code uses, and its ``from dplib.x import y`` pairs."""
    import ast

    lines = [line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))]
    tree = ast.parse("\n".join(lines))
    dotted, pairs = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "dplib":
            pairs |= {(node.module, alias.name) for alias in node.names if alias.name != "*"}
        elif isinstance(node, ast.Import):
            dotted |= {alias.name for alias in node.names if alias.name.split(".")[0] == "dplib"}
        elif isinstance(node, ast.Attribute):
            chain, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id == "dplib":
                dotted.add(".".join(["dplib", *reversed(chain)]))
    return dotted, pairs


def test_every_dplib_name_a_notebook_uses_resolves():
    """Check that every ``dplib.<path>`` and ``from dplib.<module> import <name>`` in the code of every notebook of
    source/, release/ and course/ still resolves: notebooks need no edit when the library is reorganized."""
    import nbformat

    assert len(NOTEBOOKS) >= 20
    unresolved, checked = [], 0
    for path in NOTEBOOKS:
        dotted, pairs = set(), set()
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                cell_dotted, cell_pairs = _dplib_references(cell.source)
                dotted, pairs = dotted | cell_dotted, pairs | cell_pairs
        for name in dotted:
            checked += 1
            parts, value = name.split("."), dplib
            for part in parts[1:]:
                value = getattr(value, part, None)
                if value is None:
                    unresolved.append(f"{path.relative_to(REPO)}: {name}")
                    break
        for module, attribute in pairs:
            checked += 1
            if not hasattr(importlib.import_module(module), attribute):
                unresolved.append(f"{path.relative_to(REPO)}: from {module} import {attribute}")
    assert checked > 200 and not unresolved, unresolved
