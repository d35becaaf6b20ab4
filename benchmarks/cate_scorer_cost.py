"""Cost of a CATE search scored by ``"dr"`` / ``"r_loss"`` against ``"pehe"``.

Issue 40 item 15: the doubly robust and R-loss scorers refitted the same
cross-fitted nuisance models at every scoring call, so a search cost about 5x
a PEHE-scored one. They now keep them per scoring fold (``cache=True``). This
times ``GridSearchCV`` (T-learner with ``LGBMRegressor(n_jobs=1)`` outcome
models, grid ``n_estimators in {20, 100} x num_leaves in {4, 15, 31}``, cv = 3,
the scorers' default ``HistGradientBoostingRegressor`` nuisances) with each
scorer, cached and uncached, on a 1,500-unit simulation, in interleaved
rounds; it also checks that cached and uncached scores are equal.

Usage: ``PYTHONPATH=. OMP_NUM_THREADS=1 python benchmarks/cate_scorer_cost.py
[--rounds 2]``; writes ``benchmarks/results/cate_scorer_cost.txt``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import sklearn
from lightgbm import LGBMRegressor
from sklearn.model_selection import GridSearchCV

from sklearn_iclr26.causal import (
    TLearnerRegressor,
    TreatmentStratifiedKFold,
    make_cate_scorer,
)

OUT = Path(__file__).resolve().parent / "results" / "cate_scorer_cost.txt"


def data(n=1500, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 5))
    t = (rng.uniform(size=n) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    tau = 1 + np.tanh(X[:, 1])
    y = X[:, 0] + np.sin(X[:, 2]) + t * tau + rng.normal(size=n)
    return X, y, t, tau


def search(scoring, X, y, t, tau):
    grid = {
        "estimator__n_estimators": [20, 100],
        "estimator__num_leaves": [4, 15, 31],
    }
    est = TLearnerRegressor(LGBMRegressor(n_jobs=1, verbose=-1))
    cv = list(
        TreatmentStratifiedKFold(3, shuffle=True, random_state=0).split(
            X, y, treatment=t
        )
    )
    gs = GridSearchCV(est, grid, cv=cv, scoring=scoring, refit=False)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if scoring.kind == "pehe":
            gs.fit(X, y, treatment=t, tau_true=tau)
        else:
            gs.fit(X, y, treatment=t)
    return time.perf_counter() - start, gs.cv_results_["mean_test_score"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    sklearn.set_config(enable_metadata_routing=True)
    X, y, t, tau = data()
    names = ["pehe", "dr", "dr uncached", "r_loss", "r_loss uncached"]
    times = {name: [] for name in names}
    scores = {}
    for _ in range(args.rounds):
        for name in names:
            kind = name.split()[0]
            scorer = make_cate_scorer(kind, cache="uncached" not in name)
            seconds, scores[name] = search(scorer, X, y, t, tau)
            times[name].append(seconds)
            print(name, f"{seconds:.1f} s", flush=True)
    lines = [
        (
            f"GridSearchCV, 6 candidates x 3 folds, n = 1500; median of "
            f"{args.rounds} interleaved rounds (shared machine)"
        ),
    ]
    base = np.median(times["pehe"])
    for name in names:
        med = np.median(times[name])
        lines.append(f"{name:<18}{med:8.1f} s   {med / base:5.2f}x the pehe search")
    for kind in ("dr", "r_loss"):
        same = np.array_equal(scores[kind], scores[f"{kind} uncached"])
        lines.append(f"{kind}: cached and uncached scores identical: {same}")
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
