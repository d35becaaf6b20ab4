"""Test-friendly instances of the causal estimators (see utils/_test_common).

Treatment-effect estimators (G-learner, T-/X-/DR-/R-learner, causal forest):

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

from sklearn_iclr26.causal._t_learner import TLearnerRegressor

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
    # the treatment read from column 0 of X through the wrapped learner; the
    # Bonferroni construction (the nested one needs four non-empty parts per
    # arm, more rows than the common checks' smallest data sets)
    "ConformalITERegressor": [
        {
            "cate_estimator": TLearnerRegressor(Ridge(alpha=1.0), **_COLUMN),
            "ite_method": "bonferroni",
            "random_state": 0,
        }
    ],
    "XLearnerRegressor": [{"estimator": Ridge(alpha=1.0), **_COLUMN}],
    "DRLearnerRegressor": [
        {"estimator": Ridge(alpha=1.0), "random_state": 0, **_COLUMN}
    ],
    "RLearnerRegressor": [
        {"estimator": Ridge(alpha=1.0), "random_state": 0, **_COLUMN}
    ],
    # a small forest (econml's default is 100 trees): the checks' data sets
    # are tiny and the forest is grown once per check
    "CausalForestRegressor": [
        {
            "estimator": Ridge(alpha=1.0),
            "n_estimators": 8,
            "min_samples_leaf": 2,
            "random_state": 0,
            **_COLUMN,
        }
    ],
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

_OT_WEIGHTS = (
    "integer sample_weight is not the same as repeated rows for the G-learner: "
    "the chain models are fitted with the transport masses times the number of "
    "plan atoms (so a regularised model sees a different total weight), and the "
    "exact plan between repeated points may split ties differently; the T- and "
    "X-learners pass this check"
)

_FOREST_WEIGHTS = (
    "integer sample_weight is not the same as repeated rows for the causal "
    "forest: a repeated row can fall in both halves of an honest tree's "
    "subsample, and the subsamples are drawn over rows, not over weight"
)

EXPECTED_FAILED_CHECKS = {
    "GeodesicCATERegressor": {
        "check_sample_weight_equivalence_on_dense_data": _OT_WEIGHTS,
        "check_sample_weight_equivalence_on_sparse_data": _OT_WEIGHTS,
    },
    "CausalForestRegressor": {
        "check_sample_weight_equivalence_on_dense_data": _FOREST_WEIGHTS,
        "check_sample_weight_equivalence_on_sparse_data": _FOREST_WEIGHTS,
    },
}


def _cate_display_case():
    """A small case for the common display test: a T-learner with bootstrap
    intervals, the treatment routed as a fit parameter."""
    import numpy as np

    from sklearn_iclr26.causal import TLearnerRegressor

    rng = np.random.RandomState(0)
    X = rng.normal(size=(120, 2))
    t = (rng.uniform(size=120) < 0.5).astype(int)
    y = X[:, 0] + t * (1.0 + X[:, 1]) + rng.normal(scale=0.2, size=120)
    estimator = TLearnerRegressor(Ridge(alpha=1.0), n_bootstrap=10, random_state=0)
    return estimator, X, y, {"treatment": t}


DISPLAY_CASES = {"CATEDisplay": _cate_display_case}
