"""Test-friendly instances of the causal estimators (see utils/_test_common)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

_PRISM_OTHER_OPTIONS = {
    "max_iter": 40,
    "n_confounders": 3,
    "adjust_in": "output",
    "weight_activation": "softmax",
    "predict_mode": "mix",
    "batch_size": None,
}

TEST_PARAMS = {
    "BackdoorAdjustedClassifier": [{"max_iter": 40}, _PRISM_OTHER_OPTIONS],
    "BackdoorAdjustedRegressor": [{"max_iter": 40}, _PRISM_OTHER_OPTIONS],
    "TabularAttentionClassifier": [{"max_iter": 40}],
    "TabularAttentionRegressor": [{"max_iter": 40, "batch_size": None}],
    "TwoKeyAttentionRegressor": [
        {"max_iter": 500},
        {"max_iter": 300, "schedule": "staged", "batch_size": None},
    ],
}
