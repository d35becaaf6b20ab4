"""Validity of cross-conformal sets and cross-CQR intervals on real data.

Issue 45, items 1 and 2. For each of ``--splits`` random splits (default
100) at level 0.9:

* ``digits`` (scikit-learn, 10 classes): 300 fit rows, 500 test rows, a
  scaled logistic regression. Methods: split LAC (30 % of the fit rows
  calibrate), cross-conformal LAC with ``cv=KFold(5)`` and
  ``agg_scores="crossval"`` (Vovk) and ``"mean"`` (MAPIE's default), and
  cross-conformal APS (``"crossval"``, include-last sets); MAPIE's
  ``CrossConformalClassifier`` APS ``"crossval"`` on the same folds for
  comparison (its rule empties sets, see ``doc/socop.rst``). Empty
  sets allowed (``allow_empty=True``, as MAPIE), so that LAC's coverage is
  not lifted by forced singletons.
* ``diabetes`` (scikit-learn, 442 rows): 80/20 splits, LightGBM quantile
  pairs (50 trees, ``n_jobs=1``). Methods: split CQR (25 % calibrate) and
  cross-CQR ``conformal_cv=KFold(5)``, both with the default per-side
  correction.

Each (set, split, method) appends one JSON line to ``benchmarks/results/
cross_conformal_validity.jsonl`` as it finishes (rerunning skips the lines
already there: resumable). The summary gives the mean coverage over splits
with its standard error, the fraction of splits below 0.85, the pooled
coverage's Clopper-Pearson 95 % interval and the mean set size or width.

Usage::

    python benchmarks/cross_conformal_validity.py --quick   # 10 splits
    python benchmarks/cross_conformal_validity.py           # 100 splits

The default run took 69 CPU-seconds (the printed process time; about 3
wall-minutes on this shared 2-core machine), results in
``benchmarks/results/cross_conformal_validity.txt``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from lightgbm import LGBMRegressor
from scipy.stats import beta
from sklearn.datasets import load_diabetes, load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.conformal import (
    ConformalizedQuantileRegressor,
    SplitConformalClassifier,
)

LEVEL = 0.9
RESULTS = Path(__file__).parent / "results" / "cross_conformal_validity.jsonl"
CLASSIFICATION = ["split_lac", "cross_lac", "cross_lac_mean", "cross_aps", "mapie_aps"]
REGRESSION = ["split_cqr", "cross_cqr"]


def classifier():
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=300, C=0.1))


def quantile_model():
    return LGBMRegressor(
        objective="quantile",
        n_estimators=50,
        min_child_samples=10,
        n_jobs=1,
        verbose=-1,
    )


def run_classification(X, y, split, method):
    rng = np.random.RandomState(split)
    rows = rng.permutation(len(y))
    fit, test = rows[:300], rows[300:800]
    folds = KFold(5, shuffle=True, random_state=split)
    if method == "mapie_aps":
        from mapie.classification import CrossConformalClassifier

        mapie = CrossConformalClassifier(
            classifier(),
            confidence_level=LEVEL,
            conformity_score="aps",
            cv=folds,
            random_state=split,
        ).fit_conformalize(X[fit], y[fit])
        sets = mapie.predict_set(X[test], agg_scores="crossval")[1][:, :, 0]
    else:
        params = {
            "split_lac": {},
            "cross_lac": {"cv": folds},
            "cross_lac_mean": {"cv": folds, "agg_scores": "mean"},
            "cross_aps": {"cv": folds, "conformity_score": "aps"},
        }[method]
        clf = SplitConformalClassifier(
            classifier(), allow_empty=True, random_state=split, **params
        )
        sets = clf.fit(X[fit], y[fit]).predict_set(X[test])
    covered = int(sets[np.arange(len(test)), y[test]].sum())
    return covered, len(test), float(sets.sum(axis=1).mean())


def run_regression(X, y, split, method):
    rng = np.random.RandomState(split)
    rows = rng.permutation(len(y))
    cut = int(0.8 * len(y))
    fit, test = rows[:cut], rows[cut:]
    params = {"conformal_cv": KFold(5, shuffle=True, random_state=split)}
    if method == "split_cqr":
        params = {}
    cqr = ConformalizedQuantileRegressor(
        quantile_model(), random_state=split, **params
    ).fit(X[fit], y[fit])
    interval = cqr.predict_interval(X[test])
    inside = (interval[:, 0] <= y[test]) & (y[test] <= interval[:, 1])
    return int(inside.sum()), len(test), float(np.mean(interval[:, 1] - interval[:, 0]))


def clopper_pearson(k, n, level=0.95):
    a = (1 - level) / 2
    lo = beta.ppf(a, k, n - k + 1) if k > 0 else 0.0
    hi = beta.ppf(1 - a, k + 1, n - k) if k < n else 1.0
    return lo, hi


def summarize(lines):
    print(
        f"{'set':9s} {'method':15s} {'splits':>6s} {'mean cov':>8s} {'se':>6s} "
        f"{'<0.85':>6s} {'95% CI (pooled)':>17s} {'size/width':>10s}"
    )
    keys = sorted({(r["set"], r["method"]) for r in lines})
    for name, method in keys:
        rs = [r for r in lines if r["set"] == name and r["method"] == method]
        per = np.array([r["covered"] / r["n_test"] for r in rs])
        se = per.std(ddof=1) / np.sqrt(len(per)) if len(per) > 1 else np.nan
        k = sum(r["covered"] for r in rs)
        n = sum(r["n_test"] for r in rs)
        lo, hi = clopper_pearson(k, n)
        print(
            f"{name:9s} {method:15s} {len(rs):6d} {per.mean():8.3f} {se:6.3f} "
            f"{np.mean(per < 0.85):6.2f} [{lo:.3f}, {hi:.3f}]  "
            f"{np.mean([r['size'] for r in rs]):10.3f}"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="10 splits")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    n_splits = 10 if args.quick else args.splits
    args.results.parent.mkdir(parents=True, exist_ok=True)
    done = []
    if args.results.exists():
        done = [json.loads(line) for line in args.results.read_text().splitlines()]
    seen = {(r["set"], r["split"], r["method"]) for r in done}
    X_digits, y_digits = load_digits(return_X_y=True)
    X_diab, y_diab = load_diabetes(return_X_y=True)
    jobs = [("digits", m) for m in CLASSIFICATION] + [
        ("diabetes", m) for m in REGRESSION
    ]
    start = time.process_time()
    with args.results.open("a") as out:
        for split in range(n_splits):
            for name, method in jobs:
                if (name, split, method) in seen:
                    continue
                t0 = time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if name == "digits":
                        k, n, size = run_classification(
                            X_digits, y_digits, split, method
                        )
                    else:
                        k, n, size = run_regression(X_diab, y_diab, split, method)
                line = {
                    "set": name,
                    "split": split,
                    "method": method,
                    "covered": k,
                    "n_test": n,
                    "size": size,
                    "cpu_seconds": round(time.process_time() - t0, 3),
                }
                out.write(json.dumps(line) + "\n")
                out.flush()
                done.append(line)
    lines = [r for r in done if r["split"] < n_splits]
    print(
        f"level {LEVEL}, {n_splits} splits; CPU s this run: "
        f"{time.process_time() - start:.1f}"
    )
    summarize(lines)


if __name__ == "__main__":
    main()
