"""Test-friendly instances of the deferral estimators (see utils/_test_common).

The common checks feed random data, so no column of ``X`` can hold expert
answers: the instances have no ``expert_columns`` (the predictor, or the
classes, alone). The suite with experts is ``tests/test_deferral.py``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

TEST_PARAMS = {
    "ConfidenceThresholdDeferrer": [{}, {"threshold": 0.6, "routing": "best"}],
    "TopKDeferrer": [{}, {"regime": "one-stage"}],
    "TopKDeferralRegressor": [{}],
    "RiskControlledDeferrer": [{}, {"method": "crc"}],
}

EXPECTED_FAILED_CHECKS = {}


def _deferral_curve_case():
    """A small fitted-able case for the common display test."""
    import numpy as np
    from sklearn.datasets import make_classification
    from sklearn.tree import DecisionTreeClassifier

    from sklearn_iclr26.datasets import make_experts
    from sklearn_iclr26.deferral import TopKDeferrer

    X, y = make_classification(
        n_samples=300, n_features=6, n_informative=4, n_classes=3, random_state=0
    )
    E, fees = make_experts(X, y, n_experts=3, coverage=0.4, random_state=0)
    estimator = TopKDeferrer(
        predictor=DecisionTreeClassifier(max_depth=2, random_state=0),
        expert_columns=[6, 7, 8],
        costs=fees,
        random_state=0,
    )
    return estimator, np.hstack([X, E]), y, {}


DISPLAY_CASES = {"DeferralCurveDisplay": _deferral_curve_case}
