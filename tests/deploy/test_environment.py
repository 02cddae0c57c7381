"""environment.yml (conda) and pyproject.toml (pip) must describe the same environment.

The conda list, minus ``python``, ``pip`` and the ``pip:`` sub-list, must equal the
package's dependencies plus its ``test`` extra: same names and the same version
specifiers, in any order and with any spacing. The ``pip:`` sub-list installs the
package itself, so ``import dplib`` works in the conda environment too.
"""

import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENT = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?P<specifiers>.*?)\s*$")


def parse(requirement: str) -> tuple[str, frozenset[str]]:
    """``"NumPy >= 1.26, <3"`` -> ``("numpy", {">=1.26", "<3"})``: PEP 503 name, whitespace-free specifiers."""
    match = REQUIREMENT.match(requirement)
    assert match, f"cannot parse requirement {requirement!r}"
    name = re.sub(r"[-_.]+", "-", match["name"]).lower()
    specifiers = frozenset(s.replace(" ", "") for s in match["specifiers"].split(",") if s.strip())
    return name, specifiers


def as_mapping(requirements) -> dict[str, frozenset[str]]:
    parsed = [parse(r) for r in requirements]
    names = [name for name, _ in parsed]
    assert len(names) == len(set(names)), f"a package is listed twice: {sorted(names)}"
    return dict(parsed)


@pytest.fixture(scope="module")
def environment() -> dict:
    return yaml.safe_load((ROOT / "environment.yml").read_text())


@pytest.fixture(scope="module")
def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def split_conda(dependencies) -> tuple[list[str], list[str], list[str]]:
    """(python and pip entries, the other conda packages, the pip sub-list)."""
    tools, packages, pip_list = [], [], []
    for entry in dependencies:
        if isinstance(entry, dict):
            assert set(entry) == {"pip"}, f"unexpected mapping in dependencies: {entry}"
            pip_list.extend(entry["pip"])
        elif parse(entry)[0] in {"python", "pip"}:
            tools.append(entry)
        else:
            packages.append(entry)
    return tools, packages, pip_list


def test_parse_is_order_and_whitespace_insensitive():
    assert parse("NumPy >= 1.26, <3") == parse("numpy<3,>=1.26")
    assert parse("scikit_learn>=1.4") == ("scikit-learn", frozenset({">=1.4"}))
    assert parse("pip") == ("pip", frozenset())


def test_environment_file_shape(environment):
    assert environment["name"] == "dp-course"
    assert "conda-forge" in environment["channels"]
    assert isinstance(environment["dependencies"], list)


def test_conda_packages_equal_dependencies_plus_the_test_extra(environment, project):
    _, packages, _ = split_conda(environment["dependencies"])
    expected = as_mapping([*project["dependencies"], *project["optional-dependencies"]["test"]])
    actual = as_mapping(packages)
    missing = {name: sorted(spec) for name, spec in expected.items() if name not in actual}
    extra = {name: sorted(spec) for name, spec in actual.items() if name not in expected}
    different = {name: (sorted(actual[name]), sorted(expected[name]))
                 for name in expected.keys() & actual.keys() if actual[name] != expected[name]}
    assert not missing, f"in pyproject.toml but not in environment.yml: {missing}"
    assert not extra, f"in environment.yml but not in pyproject.toml: {extra}"
    assert not different, f"version specifiers differ (environment.yml, pyproject.toml): {different}"


def test_conda_python_matches_requires_python(environment, project):
    tools, _, _ = split_conda(environment["dependencies"])
    python = dict(parse(t) for t in tools)
    assert "python" in python and "pip" in python
    assert python["python"] == parse("python" + project["requires-python"])[1]


def test_pip_sub_list_installs_the_package_itself(environment):
    _, _, pip_list = split_conda(environment["dependencies"])
    normalised = [re.sub(r"\s+", " ", entry.strip()) for entry in pip_list]
    assert any(entry in {"-e .", "."} or entry.startswith(("-e .[", ".[")) for entry in normalised), pip_list


def test_the_package_is_the_one_pyproject_builds(project):
    assert project["name"] == "dplib"
    assert (ROOT / "dplib" / "__init__.py").is_file()
