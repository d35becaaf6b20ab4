"""Scorers of the neural-network family: accuracy under test-time noise.

The Bayesian-augmentation estimators are for calibration and robustness
(their paper's claim); calibration has scikit-learn's ``neg_log_loss`` and
``neg_brier_score``. ``accuracy_under_noise`` scores robustness: the accuracy
on ``X`` plus Gaussian noise of ``severity`` times each feature's standard
deviation (taken on the scored rows), drawn from a fixed seed so every
candidate of a search sees the same corrupted rows. It is the corruption of
the reproduction (``benchmarks/bayes_aug_reproduction.py``, severities 0.25,
0.5 and 1.0); the registered scorer uses 0.5. ``X`` must be numeric (an
array, or a DataFrame of numeric columns, passed on as a DataFrame with its
column names); it works on any fitted classifier or ``Pipeline``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.metrics import accuracy_score

from sklearn_iclr26.metrics._scorers import MethodScorer

__all__ = ["SCORERS", "accuracy_under_noise"]


def accuracy_under_noise(
    estimator, X, y, *, severity=0.5, random_state=0, sample_weight=None
):
    """Accuracy of ``estimator`` on ``X`` corrupted by Gaussian noise.

    Parameters
    ----------
    estimator : fitted classifier or Pipeline
    X : array-like or DataFrame of numeric columns, shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    severity : float, default=0.5
        Noise standard deviation in units of each feature's standard
        deviation on ``X`` (0: the plain accuracy).
    random_state : int, default=0
        Seed of the noise (fixed, so that candidates are compared on the same
        corrupted rows).
    sample_weight : array-like of shape (n_samples,), default=None

    Returns
    -------
    score : float

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_iclr26.neural_network._scorers import accuracy_under_noise
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = LogisticRegression(max_iter=1000).fit(X, y)
    >>> accuracy_under_noise(clf, X, y, severity=0.0) == clf.score(X, y)
    True
    >>> accuracy_under_noise(clf, X, y, severity=1.0) < clf.score(X, y)
    True
    """
    if not severity >= 0:
        raise ValueError(f"severity must be >= 0, got {severity!r}.")
    values = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X)
    if values.dtype.kind not in "biuf":
        raise ValueError(
            "accuracy_under_noise adds Gaussian noise to X, so X must be numeric; "
            f"got dtype {values.dtype} (encode categorical columns first, or score "
            "the numeric input of the pipeline's estimator)."
        )
    values = values.astype(np.float64)
    rng = np.random.default_rng(random_state)
    noisy = values + severity * values.std(axis=0) * rng.standard_normal(values.shape)
    if hasattr(X, "columns"):
        noisy = type(X)(noisy, columns=X.columns, index=X.index)
    return accuracy_score(y, estimator.predict(noisy), sample_weight=sample_weight)


SCORERS = {
    "accuracy_under_noise": MethodScorer(
        accuracy_under_noise, name="accuracy_under_noise", severity=0.5
    ),
}
