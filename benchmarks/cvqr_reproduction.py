"""Reproduction of the CVQR conformal-region benchmark (Kondratyev et al., ICLR 2026).

Every residual method runs around the SAME point model: a random forest,
cross-fitted on the training part (``cv=5``: out-of-fold residuals shape the
regions, the final forest is fitted on all training rows and calibrates). The
forest is fitted once per split and fold (a fit cache keyed by the rows), so
equal point models cost one set of fits. Methods:

* ``CVQR``: :class:`~sklearn_iclr26.conformal.CVQRRegressor` on ``y``;
* ``CVQR-res``: the same on the cross-fitted forest residuals
  (``residual_estimator=``, the paper's PBS made honest);
* ``box``, ``ELL-global``, ``ELL-local`` (kNN = 100, shrinkage 0.95):
  :class:`~sklearn_iclr26.conformal.BonferroniBoxRegressor`,
  :class:`~sklearn_iclr26.conformal.EllipsoidRegressor`;
* ``OT-CP``, ``OT-CP+`` (kNN = 100):
  :class:`~sklearn_iclr26.conformal.OTCPRegressor`.

Protocol: per data set and seed, n_test = n_cal = 2000 where the data allow
(25% / 25% for small sets), the rest for training, capped at ``--max-train``
rows; Y standardized with training statistics (volumes in standardized units,
as in the authors' code). Metrics per method and level: coverage, worst-slab
coverage (200 directions), (log V)/d as MEAN and MEDIAN over test points (log
volumes are heavy-tailed; the docs' tables say which), and for CVQR the rank
diagnostics of :func:`~sklearn_iclr26.metrics.rank_calibration` on the test
set (``mean ||R||^2 / d`` and the KS distance).

Results are appended to a JSON-lines file as each method finishes; a rerun
with the same ``--output`` skips what is there, so a killed run resumes.
Seeds are the outer loop, so a run stopped early has every data set at the
same number of seeds. The default is the issue's protocol (5 sets x 5 seeds
at level 0.9, scm20d with 10 seeds at 0.7, 0.8, 0.9): about 73 minutes of
wall-clock on a 2-core machine shared with other jobs (bio about 5 minutes a
seed, scm20d about 3.5, rf1 2, enb and wq under 1). A reduced run, e.g.::

    OMP_NUM_THREADS=1 python benchmarks/cvqr_reproduction.py \\
        --datasets enb scm20d --seeds 0 1 --scm20d-seeds 2 --max-train 4000 \\
        --output benchmarks/results/cvqr_reduced.jsonl
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import hashlib
import json
import os
import time

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.ensemble import RandomForestRegressor
from sklearn.impute import SimpleImputer

from sklearn_iclr26.conformal import (
    BonferroniBoxRegressor,
    CVQRRegressor,
    EllipsoidRegressor,
    OTCPRegressor,
)
from sklearn_iclr26.datasets import load_multioutput
from sklearn_iclr26.metrics import (
    rank_calibration,
    region_coverage_score,
    worst_slab_coverage_score,
)

# CVQR architecture per data set: the authors' selected_params.py where they
# exist (their epochs and learning rates are replaced by early stopping)
CVQR_PARAMS = {
    "scm20d": {"hidden_layer_sizes": (10,), "batch_size": 256},
    "rf1": {"hidden_layer_sizes": (8,), "batch_size": 512},
    "bio": {"hidden_layer_sizes": (12, 12, 12, 12), "batch_size": 512},
    "enb": {"hidden_layer_sizes": (16, 16), "batch_size": 64},
    "wq": {"hidden_layer_sizes": (16, 16), "batch_size": 128},
}

_FIT_CACHE = {}


class CachedForest(RegressorMixin, BaseEstimator):
    """A random forest whose fits are cached by the bytes of ``(X, y)``.

    Every method gets the same splits and folds (same ``random_state``), so
    the same forests: fitted once, shared (benchmark-only).
    """

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y):
        key = hashlib.sha1(
            np.ascontiguousarray(X).tobytes() + np.ascontiguousarray(y).tobytes()
        ).hexdigest() + str(self.random_state)
        if key not in _FIT_CACHE:
            _FIT_CACHE[key] = RandomForestRegressor(
                n_estimators=100,
                min_samples_leaf=5,
                max_features=0.5,
                n_jobs=1,
                random_state=self.random_state,
            ).fit(X, y)
        self.forest_ = _FIT_CACHE[key]
        return self

    def predict(self, X):
        return self.forest_.predict(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


def split(n, seed, n_cal=2000, n_test=2000, max_train=None):
    rng = np.random.RandomState(seed)
    perm = rng.permutation(n)
    if n < 2 * (n_cal + n_test):  # small sets: 25% calibration, 25% test
        n_cal = n_test = n // 4
    test, cal, train = (
        perm[:n_test],
        perm[n_test : n_test + n_cal],
        perm[n_cal + n_test :],
    )
    if max_train is not None:
        train = train[:max_train]
    return train, cal, test


def methods(name, seed, n_cal, args):
    forest = CachedForest(random_state=seed)
    common = {"calibration_size": n_cal, "random_state": seed}
    cvqr = {
        **CVQR_PARAMS.get(name, {}),
        "max_iter": args.epochs,
        "warmup_epochs": max(1, args.epochs // 10),
        "learning_rate_init": 1e-2,
        "train_inner_iter": 3,
        "dtype": args.dtype,
        "curvature": getattr(args, "curvature", "bounded"),
        **common,
    }
    return {
        "CVQR": CVQRRegressor(**cvqr, residual_estimator=None),
        "CVQR-res": CVQRRegressor(**cvqr, residual_estimator=forest, cv=5),
        "box": BonferroniBoxRegressor(forest, **common),
        "ELL-global": EllipsoidRegressor(forest, cv=5, **common),
        "ELL-local": EllipsoidRegressor(
            forest, cv=5, covariance="local", n_neighbors=100, **common
        ),
        "OT-CP": OTCPRegressor(forest, cv=5, **common),
        "OT-CP+": OTCPRegressor(
            forest, cv=5, transport="local", n_neighbors=100, **common
        ),
    }


def run_split(name, X, Y, seed, levels, args, write, skip=()):
    d = Y.shape[1]
    train, cal, test = split(len(X), seed, max_train=args.max_train)
    Ys = (Y - Y[train].mean(0)) / (Y[train].std(0) + 1e-12)
    fit_rows = np.r_[train, cal]
    X_fit, Y_fit = X[fit_rows], Ys[fit_rows]
    Xt, Yt = X[test], Ys[test]
    Xt_std = (Xt - X[train].mean(0)) / (X[train].std(0) + 1e-12)
    vol_idx = np.random.RandomState(seed).permutation(len(Xt))[: args.n_volume]
    for method, est in methods(name, seed, len(cal), args).items():
        if method in skip:
            continue
        t0 = time.time()
        try:
            est.fit(X_fit, Y_fit)
        except RuntimeError as exc:  # a diverged CVQR training: record it
            for level in levels:
                write(
                    {
                        "dataset": name,
                        "d": d,
                        "seed": seed,
                        "level": level,
                        "method": method,
                        "failed": str(exc),
                        "fit_s": time.time() - t0,
                    }
                )
            print(f"  {name} seed {seed} {method}: FAILED ({exc})", flush=True)
            continue
        fit_time = time.time() - t0
        extra = {}
        if method.startswith("CVQR"):
            diag = rank_calibration(est.rank(Xt, Yt), reference=est.reference, x=Xt_std)
            extra = {
                "rank_ratio": diag.squared_norm_ratio,
                "rank_ks": diag.ks_statistic,
                # 90% quantile of ||R|| over the reference's: the threshold's
                # inflation at level 0.9 (robust to a few far outliers)
                "rank_q90_ratio": float(
                    diag.norm_quantiles[1] / diag.reference_quantiles[1]
                ),
                "rank_bin_ratios": [b["squared_norm_ratio"] for b in diag.bins],
                "n_iter": est.n_iter_,
                "best_iter": est.best_iter_,
            }
        for level in levels:
            t1 = time.time()
            covered = est.contains(Xt, Yt, confidence_level=level)
            local = method in ("CVQR", "CVQR-res", "OT-CP+")
            Xv = Xt[vol_idx] if local else Xt
            log_vol = est.region_log_volume(Xv, confidence_level=level) / d
            write(
                {
                    "dataset": name,
                    "d": d,
                    "seed": seed,
                    "level": level,
                    "method": method,
                    "n_train": len(train),
                    "n_cal": len(cal),
                    "n_test": len(test),
                    "coverage": region_coverage_score(covered),
                    "wsc": worst_slab_coverage_score(
                        Xt_std, covered, n_directions=200, random_state=seed
                    ),
                    "logV_d_mean": float(np.mean(log_vol)),
                    "logV_d_median": float(np.median(log_vol)),
                    "fit_s": fit_time,
                    "eval_s": time.time() - t1,
                    **extra,
                }
            )
        print(f"  {name} seed {seed} {method}: fit {fit_time:.0f}s", flush=True)
    _FIT_CACHE.clear()


def summarize(rows):
    import pandas as pd

    failed = [r for r in rows if "failed" in r]
    df = pd.DataFrame([r for r in rows if "failed" not in r])
    lines = [
        (
            "| data set | level | method | seeds | coverage | worst-slab | "
            "(log V)/d median | (log V)/d mean | mean R^2/d | q90 ratio | KS |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def fmt(values):
        values = np.asarray(values, dtype=float)
        if values.size == 0 or not np.all(np.isfinite(values)):
            return "n/a"
        return f"{values.mean():.3f} ± {values.std():.3f}"

    for (dataset, level, method), g in df.groupby(
        ["dataset", "level", "method"], sort=False
    ):
        diag = [
            fmt(g[c]) if c in g and g[c].notna().all() else "n/a"
            for c in ("rank_ratio", "rank_q90_ratio", "rank_ks")
        ]
        lines.append(
            f"| {dataset} | {level} | {method} | {len(g)} | {fmt(g['coverage'])} "
            f"| {fmt(g['wsc'])} | {fmt(g['logV_d_median'])} "
            f"| {fmt(g['logV_d_mean'])} | {' | '.join(diag)} |"
        )
    for r in failed:
        lines.append(
            f"FAILED: {r['dataset']} seed {r['seed']} {r['method']} level "
            f"{r['level']}: {r['failed']}"
        )
    lines += claim_check(df)
    lines += rank_table(df)
    return "\n".join(lines)


def rank_table(df, level=0.9):
    """Per-seed rank diagnostics of the CVQR fits (level-free statistics)."""

    def cell(values):
        return ", ".join(f"{v:.2f}" if abs(v) < 100 else f"{v:.0e}" for v in values)

    lines = [
        "",
        "rank diagnostics per seed (mean ||R||^2 / d | q90 ratio | KS):",
    ]
    df = df[(df["level"] == level) & df["method"].str.startswith("CVQR")]
    for (dataset, method), g in df.groupby(["dataset", "method"], sort=False):
        g = g.sort_values("seed")
        lines.append(
            f"| {dataset} | {method} | {cell(g['rank_ratio'])} "
            f"| {cell(g['rank_q90_ratio'])} | {cell(g['rank_ks'])} |"
        )
    return lines


def _broken(row):
    """A CVQR fit counts as broken when an x-bin's rank ratio exceeds 100."""
    bins = row.get("rank_bin_ratios")
    if not isinstance(bins, (list, tuple)) or not bins:
        return False
    return bool(np.nanmax(np.asarray(bins, dtype=float)) > 100)


def claim_check(df, level=0.9):
    """The paper's claim per set: which method has the smallest (log V)/d.

    Per set, methods sorted by the median over seeds of the per-split median
    (log V)/d (with the median over seeds of the per-split mean beside it):
    medians over seeds, so that a minority of broken fits (counted, see
    ``_broken``) does not decide the ranking; and how often each method is
    the smallest on a seed, by the median and by the mean (a non-finite
    value, e.g. a mean of ``-inf`` where a Hessian determinant underflows,
    never wins).
    """
    lines = ["", f"claim check at level {level} (all fits; smallest first):"]
    df = df[df["level"] == level]
    for dataset, g in df.groupby("dataset", sort=False):
        n_broken = int(g.apply(_broken, axis=1).sum())
        med = g.groupby("method")[["logV_d_median", "logV_d_mean"]].median()
        med = med.sort_values("logV_d_median")
        ranked = ", ".join(
            f"{m} {r.logV_d_median:.2f} / {r.logV_d_mean:.2f}"
            for m, r in med.head(4).iterrows()
        )
        wins = []
        for col in ("logV_d_median", "logV_d_mean"):
            table = g.pivot_table(index="seed", columns="method", values=col)
            table = table.where(np.isfinite(table), np.inf)
            best = table.idxmin(axis=1).value_counts()
            wins.append(", ".join(f"{m} {c}" for m, c in best.items()))
        lines.append(
            f"* {dataset} ({g['seed'].nunique()} seeds; {n_broken} CVQR fits "
            f"with an x-bin rank ratio above 100; median over seeds of the "
            f"median / mean (log V)/d): {ranked}. Smallest on each seed, by "
            f"the median: {wins[0]}; by the mean: {wins[1]}."
        )
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-home", default="../shared/data/multioutput")
    parser.add_argument(
        "--datasets", nargs="+", default=["enb", "wq", "rf1", "bio", "scm20d"]
    )
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    parser.add_argument(
        "--scm20d-seeds",
        type=int,
        default=10,
        help="scm20d runs seeds 0 .. N-1 (the issue: 10) at levels 0.7, 0.8, 0.9",
    )
    parser.add_argument("--epochs", type=int, default=150, help="max_iter of CVQR")
    parser.add_argument("--max-train", type=int, default=10000)
    parser.add_argument("--n-volume", type=int, default=300)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument(
        "--curvature",
        default="bounded",
        choices=["free", "floor", "global", "bounded"],
        help="CVQRRegressor(curvature=); the default's run is cvqr_repro.jsonl, "
        "the free curvature's cvqr_repro_free.jsonl",
    )
    parser.add_argument("--output", default="benchmarks/results/cvqr_repro.jsonl")
    parser.add_argument("--summary-only", action="store_true")
    args = parser.parse_args()
    rows = []
    if os.path.exists(args.output):
        with open(args.output) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        # a method rerun after a kill appends again: keep the last
        keyed = {(r["dataset"], r["seed"], r["method"], r["level"]): r for r in rows}
        rows = list(keyed.values())
    done = {(r["dataset"], r["seed"], r["method"]) for r in rows}
    if not args.summary_only:
        os.makedirs(os.path.dirname(args.output) or ".", exist_ok=True)
        out = open(args.output, "a")  # noqa: SIM115 (appended to as rows come)

        def write(row):
            rows.append(row)
            out.write(json.dumps(row) + "\n")
            out.flush()

        print(f"settings: {vars(args)}", flush=True)
        data = {}
        for name in args.datasets:
            X, Y = load_multioutput(name, data_home=args.data_home, return_X_y=True)
            data[name] = (SimpleImputer(strategy="median").fit_transform(X), Y)
        scm_seeds = list(range(args.scm20d_seeds)) if "scm20d" in args.datasets else []
        # seeds outermost: a run stopped early has every data set at the
        # same number of seeds
        for seed in sorted(set(args.seeds) | set(scm_seeds)):
            for name in args.datasets:
                seeds = scm_seeds if name == "scm20d" else args.seeds
                if seed not in seeds:
                    continue
                # the 3 levels for scm20d only (levels cost no fits)
                levels = (0.7, 0.8, 0.9) if name == "scm20d" else (0.9,)
                skip = {
                    m for m in methods(name, seed, 1, args) if (name, seed, m) in done
                }
                if len(skip) == len(methods(name, seed, 1, args)):
                    continue
                X, Y = data[name]
                t0 = time.time()
                run_split(name, X, Y, seed, levels, args, write, skip=skip)
                print(f"{name} seed {seed}: {time.time() - t0:.0f}s", flush=True)
        out.close()
    print(summarize(rows))


if __name__ == "__main__":
    main()
