"""Demo of CVQRRegressor on real data (wired into ``python -m sklearn_iclr26.demo``)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["run_demo"]


def run_demo():
    """CVQR regions against a global ellipse on the enb data (d = 2).

    One random split of enb (768 buildings, 8 features, heating and cooling
    loads, standardized): 50% training, 25% calibration, 25% test. Returns
    the test coverage and the median (log V)/d of the 90% regions, each next
    to the global residual ellipse's (random-forest residuals).
    """
    from sklearn.ensemble import RandomForestRegressor

    from sklearn_iclr26.conformal import CVQRRegressor, EllipsoidRegressor
    from sklearn_iclr26.datasets import load_multioutput
    from sklearn_iclr26.metrics import log_volume_per_dimension, region_coverage_score

    X, Y = load_multioutput("enb", return_X_y=True)
    rng = np.random.RandomState(0)
    perm = rng.permutation(len(X))
    test, fit = perm[: len(X) // 4], perm[len(X) // 4 :]
    Y = (Y - Y[fit].mean(0)) / Y[fit].std(0)
    n_cal = len(X) // 4
    cvqr = CVQRRegressor(
        max_iter=30,
        warmup_epochs=10,
        batch_size=64,
        hidden_layer_sizes=(16, 16),
        calibration_size=n_cal,
        random_state=0,
    ).fit(X[fit], Y[fit])
    ellipse = EllipsoidRegressor(
        RandomForestRegressor(n_estimators=100, min_samples_leaf=5, n_jobs=1),
        calibration_size=n_cal,
        random_state=0,
    ).fit(X[fit], Y[fit])
    d = Y.shape[1]
    Xt, Yt = X[test], Y[test]
    metrics = {
        "coverage (target 0.9)": (
            region_coverage_score(cvqr.contains(Xt, Yt)),
            region_coverage_score(ellipse.contains(Xt, Yt)),
        ),
        "median (log V)/d, standardized Y (lower is better)": (
            log_volume_per_dimension(cvqr.region_log_volume(Xt, n_samples=64), d),
            log_volume_per_dimension(ellipse.region_log_volume(Xt), d),
        ),
    }
    return [
        {
            "method": "CVQR",
            "estimator": "CVQRRegressor",
            "dataset": "enb",
            "metric": metric,
            "value": float(value),
            "baseline": "EllipsoidRegressor(global, random forest)",
            "baseline_value": float(base),
        }
        for metric, (value, base) in metrics.items()
    ]
