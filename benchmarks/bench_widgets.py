"""Update time of the lecture explorers (one module per lecture under dplib/widgets/), headless.

One update is everything between a control's value change and the new PNG in the
explorer's ``Image`` widget: recompute the view from dplib's pure functions, move the
artists, render (cached background + changed artists), encode the PNG. In a notebook
the kernel then sends those bytes to the browser; that part is not timed here.

For each explorer and each of its sliders, the control is moved through ``--updates``
values (default 30) spread over its range, as a lecturer dragging it would, after one
untimed warm-up move. Reported: median, 90th percentile and maximum per update.
Target: median <= 100 ms for every explorer and slider on the course's 2-core machine.

Run: ``python benchmarks/bench_widgets.py`` (``--check`` exits with status 1 when a
target is missed, ``--csv PATH`` saves the table, ``--timer cpu`` times this process's
CPU time instead of the wall clock when other jobs share the machine).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from dplib.widgets.approximate_dp import CompositionExplorer  # noqa: E402
from dplib.widgets.auditing import AuditExplorer  # noqa: E402
from dplib.widgets.composition import AveragingExplorer  # noqa: E402
from dplib.widgets.estimation import EstimationExplorer  # noqa: E402
from dplib.widgets.fairness import FairnessExplorer  # noqa: E402
from dplib.widgets.laplace import LaplaceExplorer  # noqa: E402
from dplib.widgets.private_learning import PrivateLearningExplorer  # noqa: E402
from dplib.widgets.randomized_response import ImageExplorer  # noqa: E402
from dplib.widgets.synthetic_data import SyntheticDataExplorer  # noqa: E402

TARGET_MEDIAN_MS = 100.0


def sweep(slider, count: int) -> list:
    """``count`` values over the slider's range, log-spaced for a log slider, on its step grid, there and back."""
    if hasattr(slider, "base"):  # FloatLogSlider: min and max are exponents
        exponents = np.linspace(slider.min, slider.max, count)
        values = [float(np.round(slider.base**e, 4)) for e in exponents]
    else:
        raw = np.linspace(slider.min, slider.max, count)
        values = [type(slider.value)(np.round(v / slider.step) * slider.step) for v in raw]
    half = (count + 1) // 2
    return (values[::2] + values[1::2][::-1])[:count] if count > 2 else values[:half]


def time_updates(explorer, control: str, count: int, clock) -> np.ndarray:
    slider = explorer.controls[control]
    values = sweep(slider, count)
    slider.value = values[-1]  # warm-up, untimed
    times = []
    for value in values:
        start = clock()
        slider.value = value
        times.append(clock() - start)
    return np.array(times) * 1000.0


def cases():
    """(name, factory, controls to sweep) per explorer; a new lecture's explorer adds one line here."""
    yield "LaplaceExplorer", lambda: LaplaceExplorer(value=19815.0), ["epsilon", "sensitivity"]
    yield "ImageExplorer", ImageExplorer, ["alpha", "beta"]
    yield "EstimationExplorer", EstimationExplorer, ["epsilon", "n"]
    yield "FairnessExplorer", FairnessExplorer, ["epsilon", "Blue size", "Red base rate"]
    yield "AveragingExplorer", AveragingExplorer, ["k"]
    yield "CompositionExplorer", CompositionExplorer, ["epsilon", "k"]
    yield "PrivateLearningExplorer", PrivateLearningExplorer, ["steps", "noise_multiplier", "clip_norm"]
    yield "SyntheticDataExplorer", SyntheticDataExplorer, ["epsilon"]
    yield "AuditExplorer", AuditExplorer, ["claimed", "runs"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=30, help="timed updates per slider (default 30)")
    parser.add_argument("--timer", choices=["wall", "cpu"], default="wall")
    parser.add_argument("--csv", type=Path, help="save the table here")
    parser.add_argument("--check", action="store_true", help="exit 1 when a median exceeds the target")
    args = parser.parse_args(argv)
    clock = time.perf_counter if args.timer == "wall" else time.process_time

    rows = []
    for name, make, controls in cases():
        start = time.perf_counter()
        explorer = make()
        first_ms = (time.perf_counter() - start) * 1000.0
        for control in controls:
            ms = time_updates(explorer, control, args.updates, clock)
            rows.append(
                {
                    "explorer": name,
                    "control": control,
                    "updates": ms.size,
                    "median_ms": np.median(ms),
                    "p90_ms": np.percentile(ms, 90),
                    "max_ms": ms.max(),
                    "first_draw_ms": first_ms,
                    "meets_target": np.median(ms) <= TARGET_MEDIAN_MS,
                }
            )
    table = pd.DataFrame(rows)
    print(f"Explorer update time ({args.timer} clock, {args.updates} updates per slider; "
          f"target median <= {TARGET_MEDIAN_MS:.0f} ms; load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores)")
    print(table.to_string(index=False, float_format=lambda v: f"{v:8.1f}"))
    if args.csv:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.csv, index=False)
    missed = table[~table["meets_target"]]
    if args.check and len(missed):
        print(f"missed the target: {missed[['explorer', 'control']].to_dict('records')}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
