"""Peak memory increase of ``region_log_volume`` (the region part of bench_memory.py).

For each estimator, a fresh subprocess loads X, fits, takes the ``ru_maxrss``
baseline, runs ``region_log_volume`` on n rows and reports the peak increase over
the baseline, next to the output size and the ``working_memory`` budget.
Before batching, ``CVQRRegressor.region_log_volume`` copied each row 128 times
(n_samples Monte-Carlo points): about 12 GB per million rows of
(1 + d) float64 columns plus the autograd graphs of all of them at once.

Run::

    OMP_NUM_THREADS=1 python benchmarks/bench_memory_regions.py --n 100000

This is a benchmark, never a test.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import subprocess
import sys
import time

CHILD = r"""
import json, resource, sys, time, warnings
import numpy as np
import sklearn
warnings.simplefilter("ignore")
from sklearn_iclr26.conformal import (
    BonferroniBoxRegressor, CVQRRegressor, EllipsoidRegressor)
name, n, wm, n_mc = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
rng = np.random.RandomState(0)
X_fit = rng.normal(size=(2000, 4))
y_fit = X_fit[:, :2] + rng.normal(size=(2000, 2)) * (0.5 + np.abs(X_fit[:, 2:3]))
X = rng.normal(size=(n, 4))
est = {
    "CVQRRegressor": lambda: CVQRRegressor(
        max_iter=5, residual_estimator=None, random_state=0
    ),
    "EllipsoidRegressor(local)": lambda: EllipsoidRegressor(
        covariance="local", random_state=0),
    "BonferroniBoxRegressor": lambda: BonferroniBoxRegressor(random_state=0),
}[name]().fit(X_fit, y_fit)
kwargs = {"n_samples": n_mc} if name == "CVQRRegressor" else {}
est.region_log_volume(X[:10], **kwargs)  # warm-up (lazy imports, allocator)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
with sklearn.config_context(working_memory=wm):
    out = est.region_log_volume(X, **kwargs)
elapsed = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({
    "estimator": name, "n": n, "working_memory_mib": wm,
    "increase_mib": (peak - base) / 1024, "output_mib": out.nbytes / 2**20,
    "seconds": round(elapsed, 1), "finite": bool(np.isfinite(out).all()),
}))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--working-memory", type=float, default=64.0)
    parser.add_argument("--n-mc", type=int, default=128)
    parser.add_argument(
        "--estimators",
        nargs="+",
        default=[
            "BonferroniBoxRegressor",
            "EllipsoidRegressor(local)",
            "CVQRRegressor",
        ],
    )
    args = parser.parse_args()
    print(
        "| estimator | n | working_memory (MiB) | peak increase (MiB) | "
        "output (MiB) | bound 2 x wm + output | time (s) |"
    )
    print("|---|---|---|---|---|---|---|")
    for name in args.estimators:
        t = time.perf_counter()
        res = subprocess.run(
            [
                sys.executable,
                "-c",
                CHILD,
                name,
                str(args.n),
                str(args.working_memory),
                str(args.n_mc),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(res.stdout.strip().splitlines()[-1])
        bound = 2 * r["working_memory_mib"] + r["output_mib"]
        print(
            f"| {r['estimator']} | {r['n']} | {r['working_memory_mib']:.0f} | "
            f"{r['increase_mib']:.1f} | {r['output_mib']:.2f} | {bound:.0f} | "
            f"{r['seconds']} (wall {time.perf_counter() - t:.0f}) |",
            flush=True,
        )


if __name__ == "__main__":
    main()
