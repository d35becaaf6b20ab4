"""Speed of GeodesicCATERegressor: fit + predict against econml's T/X-learners,
and the optimal-transport share of the run time as n grows.

Data: the covariate-shift generator of ``causal_reproduction.py`` (d = 5,
40 % treated, shift m_c = 1.1) at n in {500, 2000, 5000, 20000}; outcome model
``LGBMRegressor(n_estimators=100, num_leaves=15, n_jobs=1)`` for every
learner. For the G-learner (default parameters: K = 3, keep = 1,
max_ot_samples = 5000): total fit + predict time, the time of the transport
plan alone (exact EMD with POT, and our Sinkhorn, on the same, possibly
subsampled, units), and the ratio to econml's ``TLearner`` / ``XLearner`` on
the same data and base models. Writes ``benchmarks/results/bench_cate.txt``.

Usage: ``python benchmarks/bench_cate.py [--n 500 2000 5000 20000]``;
``SKLEARN_ICLR26_QUICK=1`` runs n = 500, 2000.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np

from sklearn_iclr26.causal import GeodesicCATERegressor, TLearnerRegressor
from sklearn_iclr26.causal._ot import emd_plan, sinkhorn_plan, sqeuclidean_cost

OUT = Path(__file__).resolve().parent / "results" / "bench_cate.txt"


def lgbm():
    from lightgbm import LGBMRegressor

    return LGBMRegressor(n_estimators=100, num_leaves=15, verbose=-1, n_jobs=1)


def data(n, seed=0):
    rng = np.random.RandomState(seed)
    t = (rng.uniform(size=n) < 0.4).astype(int)
    X = rng.normal(size=(n, 5))
    X[t == 1, :2] += 1.1
    y = np.sin(2 * X[:, 0]) + t * (1 + X[:, 0]) + rng.normal(scale=0.5, size=n)
    return X, y, t


def timed(func):
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def run_size(n, TLearner, XLearner):
    X, y, t = data(n)
    g = GeodesicCATERegressor(lgbm(), random_state=0)
    t_g = timed(lambda: g.fit(X, y, treatment=t).predict(X))
    # the transport plan on the same units as in fit (subsampled above 5000)
    Z = (X - X.mean(0)) / X.std(0)
    rows = np.flatnonzero(t == 0)
    cols = np.flatnonzero(t == 1)
    if n > g.max_ot_samples:
        rng = np.random.RandomState(0)
        m0 = round(g.max_ot_samples * len(rows) / n)
        rows = rng.choice(rows, m0, replace=False)
        cols = rng.choice(cols, g.max_ot_samples - m0, replace=False)
    a, b = np.full(len(rows), 1 / len(rows)), np.full(len(cols), 1 / len(cols))
    C = sqeuclidean_cost(Z[rows], Z[cols])
    t_emd = timed(lambda: emd_plan(a, b, C, backend="pot"))
    t_sk = timed(lambda: sinkhorn_plan(a, b, C, reg=0.05, n_keep=len(rows) + len(cols)))
    t_cost = timed(lambda: sqeuclidean_cost(Z[rows], Z[cols]))
    t_ours = timed(lambda: TLearnerRegressor(lgbm()).fit(X, y, treatment=t).predict(X))
    if TLearner is not None:
        t_et = timed(lambda: TLearner(models=lgbm()).fit(y, t, X=X).effect(X))
        t_ex = timed(lambda: XLearner(models=lgbm()).fit(y, t, X=X).effect(X))
    else:
        t_et = t_ex = np.nan
    ot = t_emd + t_cost
    return (
        f"{n:6d} {t_g:10.2f}s {ot:7.2f}s {ot / t_g:8.1%} {t_emd:6.2f}s "
        f"{t_sk:7.2f}s {t_ours:6.2f}s {t_et:7.2f}s {t_ex:7.2f}s "
        f"{t_g / t_et:7.1f} {t_g / t_ex:7.1f}"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="*", default=[500, 2000, 5000, 20000])
    args = parser.parse_args()
    sizes = [500, 2000] if os.environ.get("SKLEARN_ICLR26_QUICK") == "1" else args.n
    warnings.simplefilter("ignore")
    try:
        from econml.metalearners import TLearner, XLearner
    except ImportError:
        TLearner = XLearner = None
    header = (
        f"{'n':>6s} {'G fit+pred':>11s} {'OT plan':>8s} {'OT share':>8s} "
        f"{'EMD':>7s} {'Sinkhorn':>8s} {'ours T':>7s} {'econml T':>8s} "
        f"{'econml X':>8s} {'G/econT':>7s} {'G/econX':>7s}"
    )
    lines = [header]
    run_size(300, TLearner, XLearner)  # warm-up: imports, thread pools
    for n in sizes:
        lines.append(run_size(n, TLearner, XLearner))
        print(lines[-1], flush=True)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(
        "bench_cate: seconds on a shared 2-core CPU (load from other jobs; ratios "
        "are the meaningful part)\n" + "\n".join(lines) + "\n"
    )
    print(lines[0])


if __name__ == "__main__":
    main()
