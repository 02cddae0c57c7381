"""The front door, dplib/__init__.py: what ``import dplib`` gives, and what it loads lazily."""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
import types

import dplib

LIBRARY_MODULES = sorted(
    info.name for info in pkgutil.iter_modules(dplib.__path__) if not info.name.startswith("_")
)


def test_every_name_the_docstring_promises_is_there():
    """Check that each ``name`` the package docstring lists is an attribute of dplib."""
    promised = set(re.findall(r"``([A-Za-z_][A-Za-z0-9_]*)``", dplib.__doc__))
    assert {"laplace_mech", "load_adult", "krr_error_vs_epsilon", "privacy_loss_per_output"} <= promised
    missing = sorted(name for name in promised if not hasattr(dplib, name))
    assert missing == []


def test_every_module_is_importable_by_its_own_name():
    """Check that dplib.<module> is the module of that name: no re-exported function shadows one."""
    assert {"privacy_loss", "laplace", "estimators", "kary_estimators", "widgets", "plotting", "testing"} <= set(
        LIBRARY_MODULES
    )
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
