"""The curvature term of CVQR's potential: variants compared on held-out ranks.

The potential is ``phi(u; x) = softplus(PICNN) + 0.5 c(x) ||u||^2 + <u, m(x)>``.
The PICNN's gradient in ``u`` is bounded, so where ``c(x)`` is tiny the ranks
of responses outside that gradient's range blow up. Variants
(``CVQRRegressor(curvature=...)``): ``free`` (``c = exp(s(x))``, the former
default), ``floor`` (``c = 0.01 + exp(s(x))``, in standardized response
units), ``global`` (one learned ``c``, the authors' PISCNN), ``bounded``
(``log c(x)`` tanh-bounded within ``log 100`` of its initial value).

Each cell ``name:seed:method:mode`` refits one CVQR fit of
``cvqr_reproduction.py`` (same split, architecture and 150 epochs) and
reports, on the test rows: coverage at 0.9, worst-slab coverage, (log V)/d
median and mean (over ``--n-volume`` test rows), the rank ratio
``mean ||R||^2 / d``, the 0.9-quantile ratio of ``||R||`` and the largest
``x``-bin rank ratio. Choose on scm20d only; check elsewhere::

    OMP_NUM_THREADS=1 python benchmarks/cvqr_choose_curvature.py \\
        scm20d:0:CVQR:free scm20d:0:CVQR:floor ... \\
        --output benchmarks/results/cvqr_choose_curvature.jsonl

Rows are appended as they come; a cell already in ``--output`` is skipped.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import os
import sys
import time
import types
import warnings

import numpy as np
from sklearn.impute import SimpleImputer

sys.path.insert(0, os.path.dirname(__file__))
import cvqr_reproduction as repro

from sklearn_iclr26.datasets import load_multioutput
from sklearn_iclr26.metrics import (
    rank_calibration,
    region_coverage_score,
    worst_slab_coverage_score,
)


def run_cell(cell, args):
    name, seed, method, mode = cell.split(":")
    seed = int(seed)
    X, Y = load_multioutput(name, data_home=args.data_home, return_X_y=True)
    X = SimpleImputer(strategy="median").fit_transform(X)
    train, cal, test = repro.split(len(X), seed, max_train=args.max_train)
    Ys = (Y - Y[train].mean(0)) / (Y[train].std(0) + 1e-12)
    fit_rows = np.r_[train, cal]
    Xt, Yt = X[test], Ys[test]
    Xt_std = (Xt - X[train].mean(0)) / (X[train].std(0) + 1e-12)
    opts = types.SimpleNamespace(epochs=args.epochs, dtype=args.dtype, curvature=mode)
    est = repro.methods(name, seed, len(cal), opts)[method]
    t0 = time.time()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est.fit(X[fit_rows], Ys[fit_rows])
    fit_s = time.time() - t0
    warned = any("calibration rank norms" in str(w.message) for w in record)
    d = Y.shape[1]
    diag = rank_calibration(est.rank(Xt, Yt), reference=est.reference, x=Xt_std)
    covered = est.contains(Xt, Yt, confidence_level=0.9)
    vol = np.random.RandomState(seed).permutation(len(Xt))[: args.n_volume]
    logv = est.region_log_volume(Xt[vol], confidence_level=0.9) / d
    repro._FIT_CACHE.clear()
    return {
        "cell": cell,
        "dataset": name,
        "seed": seed,
        "method": method,
        "curvature": mode,
        "n_iter": est.n_iter_,
        "best_iter": est.best_iter_,
        "fit_s": fit_s,
        "coverage": region_coverage_score(covered),
        "wsc": worst_slab_coverage_score(
            Xt_std, covered, n_directions=200, random_state=seed
        ),
        "logV_d_median": float(np.median(logv)),
        "logV_d_mean": float(np.mean(logv)),
        "rank_ratio": diag.squared_norm_ratio,
        "rank_q90_ratio": float(diag.norm_quantiles[1] / diag.reference_quantiles[1]),
        "max_bin_ratio": float(max(b["squared_norm_ratio"] for b in diag.bins)),
        "calibration_outliers": est.calibration_rank_outlier_fraction_,
        "warned": warned,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cells", nargs="+", help="name:seed:method:mode")
    parser.add_argument("--data-home", default="../shared/data/multioutput")
    parser.add_argument("--epochs", type=int, default=150)
    parser.add_argument("--max-train", type=int, default=10000)
    parser.add_argument("--n-volume", type=int, default=300)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument(
        "--output", default="benchmarks/results/cvqr_choose_curvature.jsonl"
    )
    args = parser.parse_args()
    done = set()
    if os.path.exists(args.output):
        with open(args.output) as f:
            done = {json.loads(line)["cell"] for line in f if line.strip()}
    for cell in args.cells:
        if cell in done:
            continue
        row = run_cell(cell, args)
        with open(args.output, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(
            f"{cell}: fit {row['fit_s']:.0f}s ({row['best_iter']}/{row['n_iter']} "
            f"epochs) cov {row['coverage']:.3f} wsc {row['wsc']:.2f} logV/d "
            f"median {row['logV_d_median']:.3f} mean {row['logV_d_mean']:.3f} "
            f"rank ratio {row['rank_ratio']:.3g} q90 {row['rank_q90_ratio']:.3g} "
            f"max bin {row['max_bin_ratio']:.3g} warned {row['warned']}",
            flush=True,
        )


if __name__ == "__main__":
    main()
