"""Test-friendly instances of the deferral estimators (see utils/_test_common).

The common checks feed random data, so no column of ``X`` can hold expert
answers: the instances use ``n_experts=0`` (the predictor alone). The suite
with experts is ``tests/test_deferral.py``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

TEST_PARAMS = {
    "TopKDeferrer": [{"n_experts": 0}, {"n_experts": 0, "regime": "one-stage"}],
    "TopKDeferralRegressor": [{"n_experts": 0}],
}

EXPECTED_FAILED_CHECKS = {}
