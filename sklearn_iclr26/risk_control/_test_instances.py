"""Test-friendly instances of the risk-control estimators (see utils/_test_common).

The checks' data sets are tiny: the calibration part is too small for any
certificate, so the instances exercise the fallback (warn, accept nothing)
as well as the pass-through of the inner model. Validity is tested in
``tests/test_selective_classifier.py`` and counted in
``benchmarks/selective_validity.py``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

TEST_PARAMS = {
    "SelectiveClassifier": [
        {},
        {"risk": "fnr", "method": "crc", "thresholds": 20},
    ],
}

EXPECTED_FAILED_CHECKS = {}


def _risk_control_display_case():
    """Small case of the common display test for RiskControlDisplay."""
    from sklearn.datasets import make_classification

    from sklearn_iclr26.risk_control import SelectiveClassifier

    X, y = make_classification(
        n_samples=400, n_features=6, n_informative=4, random_state=0
    )
    return SelectiveClassifier(target_risk=0.2, thresholds=10, random_state=0), X, y, {}


DISPLAY_CASES = {"RiskControlDisplay": _risk_control_display_case}
