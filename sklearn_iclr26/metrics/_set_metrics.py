"""Metrics for conformal prediction sets."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils import column_or_1d

__all__ = [
    "coverage_score",
    "mean_set_size",
    "multiple_prediction_rate",
    "set_size_stratified_coverage_violation",
    "singleton_rate",
]


def _check_sets(sets):
    sets = np.asarray(sets)
    if sets.ndim != 2:
        raise ValueError(
            f"prediction sets must be a boolean array of shape (n_samples, "
            f"n_classes), got shape {sets.shape}."
        )
    if sets.dtype != bool:
        if not np.isin(sets, (0, 1)).all():
            raise ValueError("prediction sets must be boolean (or 0/1).")
        sets = sets.astype(bool)
    return sets


def _label_indices(y_true, sets, classes):
    y_true = column_or_1d(y_true)
    if y_true.shape[0] != sets.shape[0]:
        raise ValueError(
            f"y_true has {y_true.shape[0]} samples but the sets have {sets.shape[0]}."
        )
    if classes is None:
        classes = np.arange(sets.shape[1])
    classes = np.asarray(classes)
    if classes.shape[0] != sets.shape[1]:
        raise ValueError(
            f"{classes.shape[0]} classes given for sets with {sets.shape[1]} columns."
        )
    sorter = np.argsort(classes)
    pos = np.searchsorted(classes, y_true, sorter=sorter)
    pos = np.clip(pos, 0, len(classes) - 1)
    index = sorter[pos]
    known = classes[index] == y_true
    return index, known


def coverage_score(y_true, sets, *, classes=None):
    """Fraction of samples whose true label is in the prediction set.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    sets : array-like of bool, shape (n_samples, n_classes)
        Prediction sets, column ``j`` for ``classes[j]``.
    classes : array-like of shape (n_classes,), default=None
        Labels of the columns; default ``0, ..., n_classes - 1``. A label not
        among them is never covered.

    Returns
    -------
    coverage : float
        Empirical coverage.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import coverage_score
    >>> coverage_score([0, 1], np.array([[True, False], [True, False]]))
    0.5
    """
    sets = _check_sets(sets)
    index, known = _label_indices(y_true, sets, classes)
    covered = known & sets[np.arange(sets.shape[0]), index]
    return float(np.mean(covered))


def mean_set_size(sets):
    """Average number of labels per prediction set.

    Parameters
    ----------
    sets : array-like of bool, shape (n_samples, n_classes)
        Prediction sets.

    Returns
    -------
    size : float
        Mean set size.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import mean_set_size
    >>> mean_set_size(np.array([[True, True], [True, False]]))
    1.5
    """
    return float(np.mean(_check_sets(sets).sum(axis=1)))


def singleton_rate(sets):
    """Fraction of prediction sets with exactly one label.

    Parameters
    ----------
    sets : array-like of bool, shape (n_samples, n_classes)
        Prediction sets.

    Returns
    -------
    rate : float
        ``P(|C(X)| = 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import singleton_rate
    >>> singleton_rate(np.array([[True, True], [True, False]]))
    0.5
    """
    return float(np.mean(_check_sets(sets).sum(axis=1) == 1))


def multiple_prediction_rate(sets, k0=1):
    """Fraction of prediction sets with more than ``k0`` labels.

    With ``k0=1`` this is Vovk's M-criterion, ``P(|C(X)| > 1)``, the quantity
    SOCOP minimises.

    Parameters
    ----------
    sets : array-like of bool, shape (n_samples, n_classes)
        Prediction sets.
    k0 : int, default=1
        Size threshold.

    Returns
    -------
    rate : float
        ``P(|C(X)| > k0)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import multiple_prediction_rate
    >>> multiple_prediction_rate(np.array([[True, True], [True, False]]))
    0.5
    """
    return float(np.mean(_check_sets(sets).sum(axis=1) > k0))


def set_size_stratified_coverage_violation(
    y_true, sets, alpha, *, classes=None, strata=None
):
    """Size-stratified coverage violation (SSCV).

    The largest absolute gap between ``1 - alpha`` and the coverage within a
    stratum of set sizes (Angelopoulos et al., 2021), over the non-empty
    strata.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    sets : array-like of bool, shape (n_samples, n_classes)
        Prediction sets.
    alpha : float
        Target miscoverage.
    classes : array-like of shape (n_classes,), default=None
        Labels of the columns; default ``0, ..., n_classes - 1``.
    strata : list of (int, int), default=None
        Inclusive size ranges; default ``[(0, 1), (2, 3), (4, 6), (7, 10),
        (11, 100), (101, n_classes)]`` clipped to the number of classes.

    Returns
    -------
    sscv : float
        Max over strata of ``|coverage in stratum - (1 - alpha)|``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import set_size_stratified_coverage_violation
    >>> sets = np.array([[True, False], [True, False], [True, True], [True, True]])
    >>> set_size_stratified_coverage_violation([0, 1, 0, 1], sets, alpha=0.1)
    0.4
    """
    sets = _check_sets(sets)
    n_classes = sets.shape[1]
    if strata is None:
        strata = [(0, 1), (2, 3), (4, 6), (7, 10), (11, 100), (101, n_classes)]
    index, known = _label_indices(y_true, sets, classes)
    covered = known & sets[np.arange(sets.shape[0]), index]
    sizes = sets.sum(axis=1)
    violations = []
    for low, high in strata:
        mask = (sizes >= low) & (sizes <= high)
        if mask.any():
            violations.append(abs(covered[mask].mean() - (1 - alpha)))
    return float(max(violations)) if violations else 0.0
