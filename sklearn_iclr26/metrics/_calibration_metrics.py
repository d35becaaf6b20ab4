"""Calibration error of predicted class probabilities."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
from sklearn.utils.validation import check_array, column_or_1d

from sklearn_iclr26.utils._sklearn_compat import Interval, validate_params

__all__ = ["expected_calibration_error"]


@validate_params(
    {
        "y_true": ["array-like"],
        "y_proba": ["array-like"],
        "labels": ["array-like", None],
        "n_bins": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def expected_calibration_error(y_true, y_proba, *, labels=None, n_bins=15):
    """Top-label expected calibration error (ECE) with equal-width bins.

    The rows are binned by their confidence ``max_k y_proba[i, k]`` into
    ``n_bins`` equal-width bins of [0, 1]; the ECE is ``sum_b (n_b / n) |acc_b
    - conf_b|``, with ``acc_b`` the accuracy of the top label and ``conf_b``
    the mean confidence in bin ``b`` (Guo et al., 2017).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples, n_classes)
        Predicted probabilities, one column per label of ``labels``.
    labels : array-like of shape (n_classes,), default=None
        The label of each column; ``None`` means the sorted unique labels of
        ``y_true``, which must then number ``n_classes``.
    n_bins : int, default=15
        Number of confidence bins.

    Returns
    -------
    ece : float
        In [0, 1]; 0 for perfectly calibrated top-label confidences.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import expected_calibration_error
    >>> y = np.array([0, 1, 1, 0])
    >>> proba = np.array([[0.9, 0.1], [0.2, 0.8], [0.4, 0.6], [0.3, 0.7]])
    >>> round(expected_calibration_error(y, proba, n_bins=5), 3)
    0.15
    """
    y_true = column_or_1d(y_true)
    proba = check_array(y_proba, dtype=np.float64, input_name="y_proba")
    if proba.shape[0] != y_true.shape[0]:
        raise ValueError(
            f"y_true has {y_true.shape[0]} rows and y_proba {proba.shape[0]}."
        )
    labels = np.unique(y_true) if labels is None else np.asarray(labels)
    if labels.shape[0] != proba.shape[1]:
        raise ValueError(
            f"y_proba has {proba.shape[1]} columns for {labels.shape[0]} labels; "
            "pass labels= (e.g. the estimator's classes_)."
        )
    confidence = proba.max(axis=1)
    correct = labels[np.argmax(proba, axis=1)] == y_true
    which = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    ece = 0.0
    for b in np.unique(which):
        rows = which == b
        ece += rows.mean() * abs(correct[rows].mean() - confidence[rows].mean())
    return float(ece)
