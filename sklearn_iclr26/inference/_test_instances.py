"""Test-friendly instances of the inference estimators (see utils/_test_common).

``MultiPPIMeanEstimator`` takes the common checks' random data as fully
observed rows (classical sampling with burn-in). ``ResamplingUtilityEstimator``
takes binary per-sample records, not a feature matrix: its tags declare
``two_d_array=False`` (so scikit-learn generates no data checks for it) and
``tests/test_inference.py`` runs the API checks on records.
``PerformanceMonitor`` monitors a fitted model: its instance holds a
``FrozenEstimator`` of a logistic regression fitted on the contracts' data
(``make_blobs`` with three features, tests/test_common_contracts.py), which
``clone`` keeps fitted; its tags declare ``two_d_array=False`` (``X`` is the
monitored model's input, handed to it untouched) and
``tests/test_performance_monitor.py`` runs the API checks.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn.datasets import make_blobs
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression


def _monitored_model():
    X, y = make_blobs(
        n_samples=60, centers=[[0, 0, 0], [1, 1, 1]], cluster_std=0.3, random_state=0
    )
    return FrozenEstimator(LogisticRegression().fit(X, y))


TEST_PARAMS = {
    "MultiPPIMeanEstimator": [
        {},
        {"covariance_estimator": "empirical", "cross_fit": True, "random_state": 0},
    ],
    "PerformanceMonitor": [{"estimator": _monitored_model(), "threshold": 0.5}],
}

EXPECTED_FAILED_CHECKS = {}


def _performance_monitor_display_case():
    """Small case of the common display test for PerformanceMonitorDisplay:
    the monitor is fitted on the reference rows and replays them as a stream."""
    import numpy as np

    from sklearn_iclr26.inference import PerformanceMonitor

    rng = np.random.RandomState(0)
    X = rng.normal(size=(600, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=600) > 0).astype(float)
    model = FrozenEstimator(LogisticRegression().fit(X[:200], y[:200]))
    return PerformanceMonitor(model, threshold=0.7), X[200:], y[200:], {}


DISPLAY_CASES = {"PerformanceMonitorDisplay": _performance_monitor_display_case}
