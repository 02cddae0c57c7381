"""The course's randomness contract, graded: one variant per way of drawing randomness, built from the reference.

The contract (``docs/authoring.md``, "Randomness"): every function with an ``rng`` argument draws all its random
numbers from one generator, made at its top with ``rng = np.random.default_rng(rng)``. :func:`rng_style_variants`
rewrites that line in every solution cell of an assignment that holds it into each of :data:`STYLES`, and expects:

- ``fresh_per_call`` (the line as it is) and ``fallback`` (``if rng is None: rng = np.random.default_rng()``): full
  marks;
- ``module_level_unseeded`` and ``module_level_seeded`` (``_RNG = np.random.default_rng()`` or ``(0)`` created once
  when the cell runs, used when ``rng`` is None): 0 on the tests that call ``check_is_random`` on those functions,
  full marks elsewhere;
- ``global_generator`` and ``random_module`` (``rng`` ignored; every number drawn through a generator seeded from
  numpy's global generator, or from the ``random`` module, on every call: what ``np.random.laplace`` or
  ``random.gauss`` do, with the methods the reference calls): 0 on the tests that call ``check_uses_rng`` (or
  compare two calls given generators of the same seed), full marks elsewhere.
"""

from __future__ import annotations

import re

import nbformat

from dpgrader.course import REPO_ROOT, notebooks_of
from helpers.variants import Variant, autograded_tests

HONEST = ("fresh_per_call", "fallback")
MODULE_LEVEL = ("module_level_unseeded", "module_level_seeded")
IGNORES_RNG = ("global_generator", "random_module")
STYLES = HONEST + MODULE_LEVEL + IGNORES_RNG

_LINE = re.compile(r"^(?P<indent>[ \t]+)rng = np\.random\.default_rng\(rng\)[ \t]*$", re.M)
_PREAMBLE = {
    "module_level_unseeded": "_RNG = np.random.default_rng()  # created once, when this cell runs\n\n",
    "module_level_seeded": "_RNG = np.random.default_rng(0)  # created once, when this cell runs\n\n",
    "random_module": "import random\n\n",
}
_REPLACEMENT = {
    "fresh_per_call": "{indent}rng = np.random.default_rng(rng)",
    "fallback": "{indent}if rng is None:\n{indent}    rng = np.random.default_rng()",
    "module_level_unseeded": "{indent}if rng is None:\n{indent}    rng = _RNG",
    "module_level_seeded": "{indent}if rng is None:\n{indent}    rng = _RNG",
    "global_generator": "{indent}rng = np.random.default_rng(np.random.randint(2**63 - 1))  # numpy's global generator; rng ignored",
    "random_module": "{indent}rng = np.random.default_rng(random.getrandbits(64))  # the random module; rng ignored",
}


def restyled(source: str, style: str) -> str:
    """``source`` with each ``rng = np.random.default_rng(rng)`` line written in ``style`` (one of :data:`STYLES`)."""
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}: expected one of {STYLES}")
    rewritten = _LINE.sub(lambda match: _REPLACEMENT[style].format(indent=match.group("indent")), source)
    return _PREAMBLE.get(style, "") + rewritten


def rng_cells(assignment: str) -> dict[str, str]:
    """``{grade_id: source}`` of the assignment's solution cells that make their generator with the contract's line."""
    (source,) = notebooks_of(REPO_ROOT / "source" / assignment)
    notebook = nbformat.read(str(source), as_version=4)
    cells = {cell.metadata["nbgrader"]["grade_id"]: cell.source for cell in notebook.cells
             if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution") and _LINE.search(cell.source)}
    if not cells:
        raise ValueError(f"{assignment}: no solution cell makes its generator with rng = np.random.default_rng(rng)")
    return cells


def rng_style_variants(assignment: str, *, is_random: tuple[str, ...], uses_rng: tuple[str, ...]) -> list[Variant]:
    """One variant per style of :data:`STYLES`, every rng-taking solution cell of ``assignment`` rewritten in it.

    ``is_random`` names the tests a generator created once at module level fails (they call ``check_is_random`` on
    a rewritten function), ``uses_rng`` those a function that ignores ``rng`` fails (``check_uses_rng``, or two calls
    given generators of the same seed compared); each style keeps full marks on every other test.
    """
    tests = autograded_tests(assignment)
    unknown = sorted(set(is_random + uses_rng) - set(tests))
    if unknown:
        raise ValueError(f"{assignment}: {unknown} are not tests of the assignment")
    cells = rng_cells(assignment)
    variants = []
    for style in STYLES:
        zero = is_random if style in MODULE_LEVEL else uses_rng if style in IGNORES_RNG else ()
        variants.append(Variant(
            f"rng_style_{style}",
            {grade_id: restyled(source, style) for grade_id, source in cells.items()},
            full=tuple(test for test in tests if test not in zero),
            zero=tuple(zero),
            note=f"the randomness contract, written {style.replace('_', ' ')}",
        ))
    return variants
