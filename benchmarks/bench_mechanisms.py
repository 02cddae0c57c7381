"""Speed of dplib's mechanisms against a bare numpy one-liner, a per-item Python loop and peers.

For each mechanism, on N = 10**6 items (or draws):

- ``dplib``: the library call, validation included, with one shared ``numpy.random.Generator``;
- ``numpy``: a bare one-liner doing the same thing with the same generator, no validation;
- ``loop``: a per-item Python loop (standard-library ``random``), timed on 10**4 items and scaled;
- ``diffprivlib`` / ``opendp``: the closest equivalent of each peer library, where one exists
  and the library imports (optional extra ``bench``: ``pip install -e '.[bench]'``). Both
  randomise one value per Python call, so they are timed on 10**4 items and scaled, like the
  loop; OpenDP's vector Laplace is timed on a 10**4 vector and scaled;
- ``uniforms``: drawing N uniforms with the same generator (``rng.random(N)``), the floor any
  vectorized mechanism pays.

Every time is the best of several ``timeit`` repeats (one call each); dplib, its one-liner and
the uniform baseline are timed in interleaved rounds, so a change in machine load hits all three. Targets: each dplib
mechanism within 1.5x of its numpy one-liner; ``laplace_mech`` and ``k_rand_resp`` within 8x of
drawing N uniforms.

Run: ``python benchmarks/bench_mechanisms.py`` (``--quick`` for fewer repeats, ``--check`` to
exit with status 1 when a target is missed, ``--csv PATH`` to save the table, ``--timer wall`` to
time the wall clock instead of this process's CPU time; every mechanism here runs on one thread,
so on an idle machine the two agree, and CPU time stays steady when other jobs share the cores).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import math
import random
import sys
import time
import timeit
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import softmax

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import dplib  # noqa: E402

N = 10**6
N_SLOW = 10**4
SEED = 0

SENSITIVITY, EPSILON = 2.0, 0.5  # Laplace scale 4
P_RR = 0.8  # rand_resp with p = q, so the peers' symmetric binary mechanisms are equivalent
ALPHA, BETA = 0.5, 0.5
K = 4
EPSILON_KRR = 1.0
SCORES = np.array([3.0, 1.0, 0.0, 2.0])  # "few scores"
EPSILON_EM, SENSITIVITY_EM = 1.0, 1.0

TIMERS = {"wall": time.perf_counter, "cpu": time.process_time}
TIMER = TIMERS["cpu"]

TARGET_VS_NUMPY = 1.5
TARGET_VS_UNIFORMS = {"laplace_mech": 8.0, "k_rand_resp": 8.0}


# --- peers, loaded only if present -----------------------------------------------------------


def load_diffprivlib_mechanisms():
    """``diffprivlib.mechanisms``, or the reason it cannot be had.

    diffprivlib's package ``__init__`` also imports its scikit-learn models, which break on
    newer scikit-learn releases; the mechanisms themselves do not need them, so on that
    ImportError the subpackage is loaded on its own.
    """
    if importlib.util.find_spec("diffprivlib") is None:
        return None, "not installed"
    try:
        return importlib.import_module("diffprivlib.mechanisms"), None
    except ImportError as error:
        for name in [m for m in sys.modules if m == "diffprivlib" or m.startswith("diffprivlib.")]:
            del sys.modules[name]
        spec = importlib.util.find_spec("diffprivlib")
        package = types.ModuleType("diffprivlib")
        package.__path__ = list(spec.submodule_search_locations)
        sys.modules["diffprivlib"] = package
        try:
            return importlib.import_module("diffprivlib.mechanisms"), None
        except Exception as second:  # noqa: BLE001 - any failure means: skip the column
            del sys.modules["diffprivlib"]
            return None, f"import failed: {error}; {second}"


def load_opendp():
    if importlib.util.find_spec("opendp") is None:
        return None, "not installed"
    try:
        dp = importlib.import_module("opendp.prelude")
        dp.enable_features("contrib")
        return dp, None
    except Exception as error:  # noqa: BLE001
        return None, f"import failed: {error}"


# --- the cases -----------------------------------------------------------------------------------


@dataclass
class Case:
    """One mechanism: callables that each process ``items`` items; slow ones are scaled to N."""

    name: str
    dplib: Callable[[], object]
    numpy: Callable[[], object]
    loop: Callable[[], object]
    diffprivlib: Callable[[], object] | None = None
    opendp: Callable[[], object] | None = None
    note: str = ""


def build_cases(dpl, dp) -> list[Case]:
    rng = np.random.default_rng(SEED)
    stdlib = random.Random(SEED)
    values = rng.normal(100.0, 10.0, N)
    bits = rng.integers(0, 2, N)
    image = rng.integers(0, 2, (1000, 1000))
    categories = rng.integers(0, K, N)
    values_slow, bits_slow = values[:N_SLOW].tolist(), bits[:N_SLOW].tolist()
    pixels_slow, categories_slow = image.ravel()[:N_SLOW].tolist(), categories[:N_SLOW].tolist()

    scale = SENSITIVITY / EPSILON
    p_krr, _ = dplib.krr_probabilities(K, EPSILON_KRR)
    exponents = EPSILON_EM * SCORES / (2 * SENSITIVITY_EM)
    probabilities = dplib.exponential_probabilities(SCORES, EPSILON_EM, SENSITIVITY_EM)
    indices = list(range(SCORES.size))
    weights = probabilities.tolist()
    exponents_list = exponents.tolist()
    u = stdlib.random

    def laplace_loop():
        # Lap(b) = b * ln(U1 / U2) for independent uniforms on (0, 1]
        return [v + scale * math.log((1.0 - u()) / (1.0 - u())) for v in values_slow]

    def gumbel_loop():
        out = []
        for _ in range(N_SLOW):
            noisy = [a - math.log(-math.log(1.0 - u() or 1e-300)) for a in exponents_list]
            out.append(max(range(len(noisy)), key=noisy.__getitem__))
        return out

    cases = [
        Case(
            "laplace_mech",
            lambda: dplib.laplace_mech(values, SENSITIVITY, EPSILON, rng=rng),
            lambda: values + rng.laplace(0.0, scale, values.shape),
            laplace_loop,
        ),
        Case(
            "coin_rr",
            lambda: dplib.coin_rr(bits, rng=rng),
            lambda: np.where(rng.random(N) < 0.5, bits, rng.random(N) < 0.5),
            lambda: [x if u() < 0.5 else int(u() < 0.5) for x in bits_slow],
        ),
        Case(
            "rand_resp",
            lambda: dplib.rand_resp(bits, P_RR, P_RR, rng=rng),
            lambda: np.where(bits == 1, (draw := rng.random(N)) < P_RR, draw >= P_RR),
            lambda: [int(u() < P_RR) if x else int(u() >= P_RR) for x in bits_slow],
            note=f"p = q = {P_RR}",
        ),
        Case(
            "privatize_image",
            lambda: dplib.privatize_image(image, ALPHA, BETA, rng=rng),
            lambda: np.where(rng.random(image.shape) < ALPHA, image, rng.random(image.shape) < BETA),
            lambda: [x if u() < ALPHA else int(u() < BETA) for x in pixels_slow],
            note="1000 x 1000 pixels",
        ),
        Case(
            "k_rand_resp",
            lambda: dplib.k_rand_resp(categories, K, EPSILON_KRR, rng=rng),
            lambda: np.where(rng.random(N) < p_krr, categories, (categories + rng.integers(1, K, N)) % K),
            lambda: [c if u() < p_krr else (c + stdlib.randrange(1, K)) % K for c in categories_slow],
            note=f"k = {K}",
        ),
        Case(
            "exponential_mechanism",
            lambda: dplib.exponential_mechanism(SCORES, EPSILON_EM, SENSITIVITY_EM, rng=rng, size=N),
            lambda: rng.choice(SCORES.size, size=N, p=softmax(EPSILON_EM * SCORES / (2 * SENSITIVITY_EM))),
            lambda: [stdlib.choices(indices, weights)[0] for _ in range(N_SLOW)],
            note=f"{SCORES.size} scores, size = N",
        ),
        Case(
            "report_noisy_max_gumbel",
            lambda: dplib.report_noisy_max_gumbel(SCORES, EPSILON_EM, SENSITIVITY_EM, rng=rng, size=N),
            lambda: np.argmax(EPSILON_EM * SCORES / (2 * SENSITIVITY_EM) + rng.gumbel(size=(N, SCORES.size)), axis=-1),
            gumbel_loop,
            note=f"{SCORES.size} scores, size = N",
        ),
    ]
    by_name = {case.name: case for case in cases}

    if dpl is not None:
        dpl_laplace = dpl.Laplace(epsilon=EPSILON, sensitivity=SENSITIVITY)
        dpl_coins = dpl.Binary(epsilon=dplib.COIN_RR_EPSILON, value0="0", value1="1")
        dpl_binary = dpl.Binary(epsilon=dplib.get_epsilon(P_RR, P_RR), value0="0", value1="1")
        dpl_exponential = dpl.Exponential(epsilon=EPSILON_EM, sensitivity=SENSITIVITY_EM, utility=SCORES.tolist(),
                                      monotonic=False)
        by_name["laplace_mech"].diffprivlib = lambda: [dpl_laplace.randomise(v) for v in values_slow]
        by_name["coin_rr"].diffprivlib = lambda: [dpl_coins.randomise(str(x)) for x in bits_slow]
        by_name["rand_resp"].diffprivlib = lambda: [dpl_binary.randomise(str(x)) for x in bits_slow]
        by_name["exponential_mechanism"].diffprivlib = lambda: [dpl_exponential.randomise() for _ in range(N_SLOW)]

    if dp is not None:
        dp_laplace = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                                           dp.l1_distance(T=float), scale=scale)
        dp_coins = dp.m.make_randomized_response_bool(prob=0.75)
        dp_binary = dp.m.make_randomized_response_bool(prob=P_RR)
        dp_k_ary = dp.m.make_randomized_response(categories=list(range(K)), prob=p_krr)
        dp_noisy_max = dp.m.make_noisy_max(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float),
                                        dp.max_divergence(), scale=2 * SENSITIVITY_EM / EPSILON_EM)
        scores_list = SCORES.tolist()
        by_name["laplace_mech"].opendp = lambda: dp_laplace(values_slow)
        by_name["coin_rr"].opendp = lambda: [dp_coins(bool(x)) for x in bits_slow]
        by_name["rand_resp"].opendp = lambda: [dp_binary(bool(x)) for x in bits_slow]
        by_name["k_rand_resp"].opendp = lambda: [dp_k_ary(c) for c in categories_slow]
        # OpenDP's noisy max: same task and epsilon; under max_divergence it adds exponential rather
        # than Gumbel noise (report-noisy-max, Permute-and-Flip), so the output distribution differs.
        by_name["exponential_mechanism"].opendp = lambda: [dp_noisy_max(scores_list) for _ in range(N_SLOW)]
        by_name["report_noisy_max_gumbel"].opendp = lambda: [dp_noisy_max(scores_list) for _ in range(N_SLOW)]

    return cases, rng


# --- timing --------------------------------------------------------------------------------------------


def best_of(function: Callable[[], object], repeat: int) -> float:
    """Best wall time of ``repeat`` single calls, in seconds (timeit disables the garbage collector)."""
    return min(timeit.repeat(function, number=1, repeat=repeat, timer=TIMER))


def best_interleaved(functions: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Best time of each function over ``repeat`` rounds that call every function once.

    Interleaving keeps the ratios fair when the machine's load changes during the run:
    dplib, its one-liner and the uniform baseline are timed side by side.
    """
    times = {name: math.inf for name in functions}
    for _ in range(repeat):
        for name, function in functions.items():
            times[name] = min(times[name], timeit.timeit(function, number=1, timer=TIMER))
    return times


def run(repeat: int, slow_repeat: int) -> tuple[pd.DataFrame, dict[str, str]]:
    dpl, dpl_reason = load_diffprivlib_mechanisms()
    dp, dp_reason = load_opendp()
    cases, rng = build_cases(dpl, dp)
    scale_up = N / N_SLOW
    rows = []
    for case in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # peers' deprecation notices must not clutter the table
            fast = best_interleaved({"dplib": case.dplib, "numpy": case.numpy, "uniforms": lambda: rng.random(N)}, repeat)
            loop_time = best_of(case.loop, slow_repeat) * scale_up
            dpl_time = best_of(case.diffprivlib, slow_repeat) * scale_up if case.diffprivlib else math.nan
            dp_time = best_of(case.opendp, slow_repeat) * scale_up if case.opendp else math.nan
        rows.append(
            {
                "mechanism": case.name,
                "dplib_ms": 1e3 * fast["dplib"],
                "numpy_ms": 1e3 * fast["numpy"],
                "loop_ms": 1e3 * loop_time,
                "diffprivlib_ms": 1e3 * dpl_time,
                "opendp_ms": 1e3 * dp_time,
                "uniforms_ms": 1e3 * fast["uniforms"],
                "dplib/numpy": fast["dplib"] / fast["numpy"],
                "dplib/loop": fast["dplib"] / loop_time,
                "dplib/uniforms": fast["dplib"] / fast["uniforms"],
                "note": case.note,
            }
        )
    table = pd.DataFrame(rows).set_index("mechanism")
    missing = {}
    if dpl is None:
        missing["diffprivlib"] = dpl_reason
    if dp is None:
        missing["opendp"] = dp_reason
    return table, missing


def check_targets(table: pd.DataFrame) -> list[str]:
    misses = [
        f"{name}: {ratio:.2f}x its numpy one-liner (target {TARGET_VS_NUMPY}x)"
        for name, ratio in table["dplib/numpy"].items()
        if ratio > TARGET_VS_NUMPY
    ]
    misses += [
        f"{name}: {table.loc[name, 'dplib/uniforms']:.2f}x drawing N uniforms (target {limit}x)"
        for name, limit in TARGET_VS_UNIFORMS.items()
        if table.loc[name, "dplib/uniforms"] > limit
    ]
    return misses


def format_table(table: pd.DataFrame) -> str:
    shown = table.copy()
    for column in [c for c in shown.columns if c.endswith("_ms")]:
        shown[column] = shown[column].map(lambda t: "-" if math.isnan(t) else f"{t:,.1f}")
    for column in ["dplib/numpy", "dplib/uniforms"]:
        shown[column] = shown[column].map(lambda r: f"{r:.2f}")
    shown["dplib/loop"] = shown["dplib/loop"].map(lambda r: f"{r:.4f}")
    return shown.to_string()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (noisier numbers)")
    parser.add_argument("--check", action="store_true", help="exit with status 1 if a target is missed")
    parser.add_argument("--csv", type=Path, help="also write the table to this CSV file")
    parser.add_argument("--timer", choices=sorted(TIMERS), default="cpu",
                        help="this process's CPU time (default: steady when other jobs share the cores) or the wall clock")
    args = parser.parse_args(argv)
    global TIMER
    TIMER = TIMERS[args.timer]
    repeat, slow_repeat = (3, 1) if args.quick else (9, 3)

    table, missing = run(repeat, slow_repeat)
    print(f"N = {N:,} items per call (loops and peers timed on {N_SLOW:,} and scaled); best of {repeat} "
          f"({slow_repeat} for the slow columns), {args.timer} time; numpy {np.__version__}, Python {sys.version.split()[0]}")
    print(format_table(table))
    for library, reason in missing.items():
        print(f"{library}: skipped ({reason})")
    print("-: no equivalent mechanism in that library, or the library is not available")
    misses = check_targets(table)
    if misses:
        print("Targets missed:\n  " + "\n  ".join(misses))
    else:
        print(f"All targets met: every dplib mechanism within {TARGET_VS_NUMPY}x of its numpy one-liner; "
              + ", ".join(f"{name} within {limit}x of drawing N uniforms" for name, limit in TARGET_VS_UNIFORMS.items())
              + ".")
    if args.csv:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.csv)
    return 1 if (misses and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
