"""Test-friendly instances of the causal estimators (see utils/_test_common).

Treatment-effect estimators (G-learner, T-/X-learner):

``fit`` needs a binary treatment, which the common checks cannot pass as
metadata; the declared instances read it from column 0 of ``X`` with
``treatment_column=0`` and ``treatment_threshold="median"`` (a unit is treated
when that column is above its training median), the documented way to give the
treatment inside ``X``. So every check runs on the real estimator. With default
parameters the estimators are in ``utils/_exemptions.py``: bare ``fit(X, y)`` raises a
``ValueError`` naming ``treatment``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn.linear_model import Ridge

_COLUMN = {"treatment_column": 0, "treatment_threshold": "median"}

_CATE_TEST_PARAMS = {
    "GeodesicCATERegressor": [
        {"estimator": Ridge(alpha=1.0), "n_steps": 1, "random_state": 0, **_COLUMN},
        {
            "estimator": Ridge(alpha=1.0),
            "n_steps": 2,
            "keep": 0.6,
            "n_uncertainty_samples": 2,
            "combine": "adapted",
            "random_state": 0,
            **_COLUMN,
        },
    ],
    "TLearnerRegressor": [{"estimator": Ridge(alpha=1.0), **_COLUMN}],
    "XLearnerRegressor": [{"estimator": Ridge(alpha=1.0), **_COLUMN}],
}


_PRISM_OTHER_OPTIONS = {
    "max_iter": 40,
    "n_confounders": 3,
    "adjust_in": "output",
    "weight_activation": "softmax",
    "predict_mode": "mix",
    "batch_size": None,
}

_SPURIOUS_TEST_PARAMS = {
    "BackdoorAdjustedClassifier": [{"max_iter": 40}, _PRISM_OTHER_OPTIONS],
    "BackdoorAdjustedRegressor": [{"max_iter": 40}, _PRISM_OTHER_OPTIONS],
    "TabularAttentionClassifier": [{"max_iter": 40}],
    "TabularAttentionRegressor": [{"max_iter": 40, "batch_size": None}],
    "TwoKeyAttentionRegressor": [
        {"max_iter": 500},
        {"max_iter": 300, "schedule": "staged", "batch_size": None},
    ],
}

TEST_PARAMS = {**_CATE_TEST_PARAMS, **_SPURIOUS_TEST_PARAMS}

EXPECTED_FAILED_CHECKS = {}
