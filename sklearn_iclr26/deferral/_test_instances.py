"""Test-friendly instances of the deferral estimators (see utils/_test_common).

The common checks feed random data, so no column of ``X`` can hold expert
answers: the instances have no ``expert_columns`` (the predictor, or the
classes, alone). The suite with experts is ``tests/test_deferral.py``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

TEST_PARAMS = {
    "TopKDeferrer": [{}, {"regime": "one-stage"}],
    "TopKDeferralRegressor": [{}],
}

EXPECTED_FAILED_CHECKS = {}
