"""Test-friendly instances of the conformal estimators (see utils/_test_common)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn.linear_model import LogisticRegression


def _lightgbm():
    from lightgbm import LGBMClassifier

    return LGBMClassifier(n_estimators=20, min_child_samples=5, n_jobs=1, verbose=-1)


TEST_PARAMS = {
    # alpha=0.5 needs only 1 calibration point, so that the small data sets
    # of the common checks (10-20 samples) can be calibrated; calibration_size
    # =0.5 gives the 100 points needed at the alpha=0.01 that
    # check_regressors_train sets (it sets any `alpha` parameter to 0.01)
    "CVQRRegressor": [
        {
            "alpha": 0.5,
            "calibration_size": 0.5,
            "max_iter": 30,
            "learning_rate": 3e-2,
            "warmup_epochs": 3,
            "hidden_dim": 8,
            "n_layers": 1,
            "batch_size": None,
            "inner_max_iter": 20,
        }
    ],
    # same reasons for the baselines
    # (the box calibrates each of the d outputs at alpha / d: alpha=0.9 keeps
    # 5 calibration points enough for the 5-output check on 10 samples)
    "BonferroniBoxRegressor": [{"alpha": 0.9, "calibration_size": 0.5}],
    "EllipsoidRegressor": [
        {"alpha": 0.5, "calibration_size": 0.5},
        {
            "alpha": 0.5,
            "calibration_size": 0.5,
            "covariance": "local",
            "n_neighbors": 10,
        },
    ],
    "SOCOPClassifier": [
        {},
        {"lam": 0.1, "k0": 2, "estimator": LogisticRegression(C=10.0)},
        {"estimator": _lightgbm()},
    ],
    "SplitConformalClassifier": [
        {},
        {"conformity_score": "aps", "score_params": {"randomized": True}},
    ],
}

EXPECTED_FAILED_CHECKS = {}
