"""Validity of the conformal intervals on real single-target sets.

For each of 3 real sets (``diabetes`` from scikit-learn; ``enb`` heating load
and ``jura`` cadmium, the first target of the packaged multi-target sets) and
each of ``--splits`` random 80/20 splits, fits on the 80 % and measures on
the 20 %:

* ``split``: :class:`BonferroniBoxRegressor` (split conformal, 25 % of the
  fit rows calibrate), and MAPIE's ``SplitConformalRegressor`` on the same
  model and calibration rows;
* ``cv+``: ``BonferroniBoxRegressor(conformal_cv=KFold(5))`` and MAPIE's
  ``CrossConformalRegressor(method="plus")`` on the same folds;
* ``jackknife+``: the same with ``LeaveOneOut`` (one model per row, so on
  the first ``--jackknife-splits`` splits of ``diabetes`` and ``jura`` only,
  unless ``--jackknife-all``);
* ``cqr``: :class:`ConformalizedQuantileRegressor` (LightGBM quantile pair),
  and MAPIE's ``ConformalizedQuantileRegressor`` on the same quantile models
  and calibration rows;
* ``cvqr`` (unless ``--no-cvqr``): ``CVQRRegressor`` (defaults) on the one
  target, a conditional-quantile interval like CQR.

The point model is ``LGBMRegressor`` (``n_jobs=1``). Each (set, split,
method) appends one JSON line to ``benchmarks/results/
conformal_interval_validity.jsonl`` as it finishes (rerunning skips the lines
already there: resumable). The summary gives, per set and method, the pooled
coverage with its Clopper-Pearson 95 % interval, the mean coverage over splits
with its standard error and whether it is at least the level minus two
standard errors, and the mean width of ours and of MAPIE's side by side.

Usage::

    python benchmarks/conformal_interval_validity.py --quick   # ~30 CPU-s
    python benchmarks/conformal_interval_validity.py           # 200 splits

The full run (200 splits, 100 trees, jackknife+ on 10 splits of two sets)
should take about 20 CPU-minutes on one core (extrapolated from the quick
run's per-split times; not run yet). With ``--quick`` the quantile models
have 30 trees, too few for LightGBM's quantile objective on ``enb`` (its
CQR intervals are then wide): read the quick run as a smoke test.
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
from sklearn.datasets import load_diabetes
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import KFold, LeaveOneOut

from sklearn_iclr26.conformal import (
    BonferroniBoxRegressor,
    ConformalizedQuantileRegressor,
    CVQRRegressor,
)
from sklearn_iclr26.datasets import load_multioutput

LEVEL = 0.9
RESULTS = Path(__file__).parent / "results" / "conformal_interval_validity.jsonl"


def load(name):
    if name == "diabetes":
        return load_diabetes(return_X_y=True)
    X, Y = load_multioutput(name, return_X_y=True)
    return np.asarray(X, dtype=float), np.asarray(Y, dtype=float)[:, 0]


def point_model(n_estimators):
    return LGBMRegressor(
        n_estimators=n_estimators, min_child_samples=10, n_jobs=1, verbose=-1
    )


def quantile_model(n_estimators, level):
    return LGBMRegressor(
        objective="quantile",
        alpha=level,
        n_estimators=n_estimators,
        min_child_samples=10,
        n_jobs=1,
        verbose=-1,
    )


def measure(interval, y):
    inside = (interval[:, 0] <= y) & (y <= interval[:, 1])
    return int(inside.sum()), float(np.mean(interval[:, 1] - interval[:, 0]))


def run_split(name, X, y, split, method, n_estimators):
    """One (set, split, method): ours and MAPIE's covered counts and widths."""
    from mapie.regression import (
        ConformalizedQuantileRegressor as MapieCQR,
    )
    from mapie.regression import (
        CrossConformalRegressor,
        SplitConformalRegressor,
    )

    rng = np.random.RandomState(split)
    rows = rng.permutation(len(y))
    cut = int(0.8 * len(y))
    fit, test = rows[:cut], rows[cut:]
    X_fit, y_fit, X_test, y_test = X[fit], y[fit], X[test], y[test]
    n_cal = len(fit) // 4
    X_tr, y_tr, X_cal, y_cal = (
        X_fit[n_cal:],
        y_fit[n_cal:],
        X_fit[:n_cal],
        y_fit[:n_cal],
    )
    out = {"set": name, "split": split, "method": method, "n_test": len(test)}
    t0 = time.perf_counter()
    if method == "split":
        model = point_model(n_estimators).fit(X_tr, y_tr)
        ours = BonferroniBoxRegressor(FrozenEstimator(model)).fit(X_cal, y_cal)
        theirs = SplitConformalRegressor(
            model, confidence_level=LEVEL, prefit=True
        ).conformalize(X_cal, y_cal)
        interval, mapie = ours.predict_interval(X_test), theirs.predict_interval(X_test)
    elif method in ("cv+", "jackknife+"):
        folds = (
            KFold(5, shuffle=True, random_state=split)
            if method == "cv+"
            else LeaveOneOut()
        )
        ours = BonferroniBoxRegressor(
            point_model(n_estimators), conformal_cv=folds, random_state=split
        ).fit(X_fit, y_fit)
        theirs = CrossConformalRegressor(
            point_model(n_estimators),
            confidence_level=LEVEL,
            method="plus",
            cv=folds,
        ).fit_conformalize(X_fit, y_fit)
        interval, mapie = ours.predict_interval(X_test), theirs.predict_interval(X_test)
    elif method == "cqr":
        alpha = 1 - LEVEL
        lower = quantile_model(n_estimators, alpha / 2).fit(X_tr, y_tr)
        upper = quantile_model(n_estimators, 1 - alpha / 2).fit(X_tr, y_tr)
        median = quantile_model(n_estimators, 0.5).fit(X_tr, y_tr)
        ours = ConformalizedQuantileRegressor(
            (FrozenEstimator(lower), FrozenEstimator(upper))
        ).fit(X_cal, y_cal)
        theirs = MapieCQR(
            [lower, upper, median], confidence_level=LEVEL, prefit=True
        ).conformalize(X_cal, y_cal)
        interval, mapie = ours.predict_interval(X_test), theirs.predict_interval(X_test)
    elif method == "cvqr":
        ours = CVQRRegressor(
            residual_estimator=None, random_state=split, calibration_size=0.25
        ).fit(X_fit, y_fit)
        interval, mapie = ours.predict_interval(X_test), None
    else:
        raise ValueError(method)
    out["covered"], out["width"] = measure(interval, y_test)
    if mapie is not None:
        out["mapie_covered"], out["mapie_width"] = measure(mapie[1][:, :, 0], y_test)
    out["seconds"] = round(time.perf_counter() - t0, 3)
    return out


def clopper_pearson(k, n, level=0.95):
    a = (1 - level) / 2
    lo = beta.ppf(a, k, n - k + 1) if k > 0 else 0.0
    hi = beta.ppf(1 - a, k + 1, n - k) if k < n else 1.0
    return lo, hi


def summarize(lines):
    keys = sorted({(r["set"], r["method"]) for r in lines})
    print(
        f"{'set':9s} {'method':11s} {'splits':>6s} {'coverage':>8s} "
        f"{'95% CI (pooled)':>17s} {'mean-2se>=lvl':>13s} {'width':>8s} "
        f"{'MAPIE cov':>9s} {'MAPIE width':>11s} {'s/split':>7s}"
    )
    for name, method in keys:
        rs = [r for r in lines if r["set"] == name and r["method"] == method]
        k = sum(r["covered"] for r in rs)
        n = sum(r["n_test"] for r in rs)
        per = np.array([r["covered"] / r["n_test"] for r in rs])
        se = per.std(ddof=1) / np.sqrt(len(per)) if len(per) > 1 else np.nan
        ok = "n/a" if len(per) < 2 else str(bool(per.mean() >= LEVEL - 2 * se))
        lo, hi = clopper_pearson(k, n)
        width = np.mean([r["width"] for r in rs])
        if "mapie_covered" in rs[0]:
            mk = sum(r["mapie_covered"] for r in rs)
            mapie = f"{mk / n:9.3f} {np.mean([r['mapie_width'] for r in rs]):11.3f}"
        else:
            mapie = f"{'-':>9s} {'-':>11s}"
        sec = np.mean([r["seconds"] for r in rs])
        print(
            f"{name:9s} {method:11s} {len(rs):6d} {k / n:8.3f} "
            f"[{lo:.3f}, {hi:.3f}]  {ok:>13s} {width:8.3f} {mapie} "
            f"{sec:7.2f}"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="5 splits (jackknife+: 1), 30 trees"
    )
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--sets", default="diabetes,enb,jura")
    parser.add_argument("--no-cvqr", action="store_true", help="leave out CVQR")
    parser.add_argument(
        "--jackknife-all", action="store_true", help="jackknife+ on every set"
    )
    parser.add_argument("--jackknife-splits", type=int, default=10)
    parser.add_argument("--output", default=str(RESULTS))
    args = parser.parse_args()
    n_splits, n_estimators = (5, 30) if args.quick else (args.splits, 100)
    jk_splits = 1 if args.quick else args.jackknife_splits
    output = Path(args.output)
    if args.quick:
        output = output.with_name(output.stem + "_quick.jsonl")
    output.parent.mkdir(parents=True, exist_ok=True)
    done = []
    if output.exists():
        done = [json.loads(line) for line in output.read_text().splitlines() if line]
    seen = {(r["set"], r["split"], r["method"]) for r in done}
    warnings.simplefilter("ignore")
    methods = ["split", "cv+", "jackknife+", "cqr"] + ([] if args.no_cvqr else ["cvqr"])
    with output.open("a") as fh:
        for name in args.sets.split(","):
            X, y = load(name)
            for split in range(n_splits):
                for method in methods:
                    if method == "jackknife+" and (
                        split >= jk_splits
                        or not (args.jackknife_all or name in ("diabetes", "jura"))
                    ):
                        continue
                    if (name, split, method) in seen:
                        continue
                    record = run_split(name, X, y, split, method, n_estimators)
                    fh.write(json.dumps(record) + "\n")
                    fh.flush()
                    done.append(record)
            print(f"{name}: done ({len(y)} rows)", flush=True)
    print(f"\nconfidence_level={LEVEL}, results in {output}\n")
    summarize([r for r in done if r["split"] < n_splits])


if __name__ == "__main__":
    main()
