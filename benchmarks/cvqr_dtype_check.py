"""Refit single CVQR fits of the reproduction and report the rank-outlier guard.

Each argument is ``name:seed:method:dtype`` (e.g. ``bio:1:CVQR:float64``); the
split and the estimator are those of ``cvqr_reproduction.py`` (150 epochs).
Prints, per fit, the held-out rank diagnostics, the worst-slab coverage, the
fraction of calibration rank norms above 10 x the reference's 0.999 quantile
(``calibration_rank_outlier_fraction_``) and whether fit warned::

    OMP_NUM_THREADS=1 python benchmarks/cvqr_dtype_check.py \\
        bio:1:CVQR:float32 bio:1:CVQR:float64
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time
import types
import warnings

import numpy as np
from cvqr_reproduction import methods, split
from sklearn.impute import SimpleImputer

from sklearn_iclr26.datasets import load_multioutput
from sklearn_iclr26.metrics import (
    rank_calibration,
    region_coverage_score,
    worst_slab_coverage_score,
)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("fits", nargs="+", help="name:seed:method:dtype")
    parser.add_argument("--data-home", default="../shared/data/multioutput")
    args = parser.parse_args()
    for job in args.fits:
        name, seed, method, dtype = job.split(":")
        seed = int(seed)
        X, Y = load_multioutput(name, data_home=args.data_home, return_X_y=True)
        X = SimpleImputer(strategy="median").fit_transform(X)
        train, cal, test = split(len(X), seed, max_train=10000)
        Ys = (Y - Y[train].mean(0)) / (Y[train].std(0) + 1e-12)
        fit_rows = np.r_[train, cal]
        Xt, Yt = X[test], Ys[test]
        Xt_std = (Xt - X[train].mean(0)) / (X[train].std(0) + 1e-12)
        opts = types.SimpleNamespace(epochs=150, dtype=dtype)
        est = methods(name, seed, len(cal), opts)[method]
        t0 = time.time()
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            est.fit(X[fit_rows], Ys[fit_rows])
        warned = any("calibration rank norms" in str(w.message) for w in record)
        fit_s = time.time() - t0
        diag = rank_calibration(est.rank(Xt, Yt), reference=est.reference, x=Xt_std)
        covered = est.contains(Xt, Yt, confidence_level=0.9)
        q90 = diag.norm_quantiles[1] / diag.reference_quantiles[1]
        wsc = worst_slab_coverage_score(
            Xt_std, covered, n_directions=200, random_state=seed
        )
        print(
            f"{job}: fit {fit_s:.0f}s, {est.n_iter_} epochs, "
            f"rank ratio {diag.squared_norm_ratio:.3g}, q90 ratio {q90:.3g}, "
            f"coverage {region_coverage_score(covered):.3f}, wsc {wsc:.2f}, "
            f"calibration outliers {est.calibration_rank_outlier_fraction_:.4f}, "
            f"warned {warned}",
            flush=True,
        )


if __name__ == "__main__":
    main()
