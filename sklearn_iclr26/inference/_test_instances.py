"""Test-friendly instances of the inference estimators (see utils/_test_common).

``MultiPPIMeanEstimator`` takes the common checks' random data as fully
observed rows (classical sampling with burn-in). ``ResamplingUtilityEstimator``
takes binary per-sample records, not a feature matrix: its tags declare
``two_d_array=False`` (so scikit-learn generates no data checks for it) and
``tests/test_inference.py`` runs the API checks on records.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

TEST_PARAMS = {
    "MultiPPIMeanEstimator": [
        {},
        {"covariance_estimator": "empirical", "cross_fit": True, "random_state": 0},
    ],
}

EXPECTED_FAILED_CHECKS = {}
