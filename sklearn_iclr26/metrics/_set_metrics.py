"""Metrics for conformal prediction sets.

Prediction sets are boolean arrays of shape (n_samples, n_classes), dense or
``scipy.sparse`` (as ``predict_set(X, output="sparse")`` returns), column ``j``
for ``classes[j]``. The metrics that read the true labels need the column
labels ``classes`` (e.g. the estimator's ``classes_``) unless the labels are
column indices ``0, ..., n_classes - 1`` and every index occurs (labels that
miss some index may be class labels, not indices: an error); a label that is
not a known class is an error, never silently "not covered".
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch, column_or_1d

from sklearn_iclr26.utils._sklearn_compat import Interval, validate_params

__all__ = [
    "conditional_coverage_score",
    "coverage_score",
    "mean_set_size",
    "multiple_prediction_rate",
    "set_size_stratified_coverage_violation",
    "singleton_rate",
]


def _check_sets(sets):
    """Boolean sets, dense ndarray or CSR sparse array, of shape (n, K)."""
    if sp.issparse(sets):
        sets = sp.csr_array(sets)
        if sets.data.size and not np.isin(sets.data, (0, 1)).all():
            raise ValueError("prediction sets must be boolean (or 0/1).")
        if sets.dtype != bool:
            sets = sets.astype(bool)
        sets.eliminate_zeros()
        return sets
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


def _set_sizes(sets):
    """Number of labels in each set (``sets`` from :func:`_check_sets`)."""
    if sp.issparse(sets):
        return np.diff(sets.indptr).astype(np.int64)
    return sets.sum(axis=1)


def _label_indices(y_true, n_classes, classes):
    """Column index of every true label; raise on unknown labels.

    Without ``classes`` the labels must be column indices ``0..K-1``.
    """
    y_true = column_or_1d(y_true)
    if classes is None:
        is_index = y_true.dtype.kind in "iu" or (
            y_true.dtype.kind == "f"
            and np.all(np.isfinite(y_true))
            and np.all(y_true == np.round(y_true))
        )
        if not is_index:
            raise ValueError(
                f"y_true holds labels of dtype {y_true.dtype}, not column indices: "
                "pass classes= (the labels of the set columns, e.g. the "
                "estimator's classes_)."
            )
        bad = (y_true < 0) | (y_true >= n_classes)
        if bad.any():
            raise ValueError(
                f"y_true contains {np.unique(y_true[bad]).tolist()[:10]}, which are "
                f"not column indices 0..{n_classes - 1} of the sets: pass classes= "
                "(the labels of the set columns, e.g. the estimator's classes_)."
            )
        missing = np.setdiff1d(np.arange(n_classes), y_true)
        if missing.size:
            # e.g. labels [0, 2, 3, 4, 5, 6] of 6 columns: 2 is column 1, not 2
            raise ValueError(
                f"Without classes=, the labels of y_true are read as column "
                f"indices 0..{n_classes - 1} of the sets, which is ambiguous here: "
                f"{missing.tolist()[:10]} never occur, so the labels may not be "
                "the column indices (a class missing from the training data "
                "shifts them). Pass classes= (the labels of the set columns, "
                "e.g. the estimator's classes_)."
            )
        return y_true.astype(np.intp)
    classes = column_or_1d(classes)
    if classes.shape[0] != n_classes:
        raise ValueError(
            f"{classes.shape[0]} classes given for sets with {n_classes} columns."
        )
    if np.unique(classes).shape[0] != classes.shape[0]:
        raise ValueError("classes contains duplicates.")
    try:
        sorter = np.argsort(classes, kind="stable")
        pos = np.searchsorted(classes, y_true, sorter=sorter)
    except TypeError as exc:
        raise ValueError(
            f"y_true (dtype {y_true.dtype}) and classes (dtype {classes.dtype}) "
            "cannot be compared: are they the same kind of labels?"
        ) from exc
    pos = np.clip(pos, 0, n_classes - 1)
    index = sorter[pos]
    unknown = classes[index] != y_true
    if unknown.any():
        raise ValueError(
            f"y_true contains labels {np.unique(y_true[unknown]).tolist()[:10]} that "
            f"are not among classes {classes.tolist()[:20]}: every label must be a "
            "class of the sets."
        )
    return index


def _covered(y_true, sets, classes):
    """Boolean array: is each true label in its set."""
    sets = _check_sets(sets)
    y_true = column_or_1d(y_true)
    if y_true.shape[0] != sets.shape[0]:
        raise ValueError(
            f"y_true has {y_true.shape[0]} samples but the sets have {sets.shape[0]}."
        )
    index = _label_indices(y_true, sets.shape[1], classes)
    rows = np.arange(sets.shape[0])
    if sp.issparse(sets):
        covered = np.asarray(sets[rows, index]).ravel().astype(bool)
    else:
        covered = sets[rows, index]
    return covered, sets


_Y_AND_SETS = {
    "y_true": ["array-like"],
    "sets": ["array-like", "sparse matrix"],
    "classes": ["array-like", None],
}


@validate_params(_Y_AND_SETS, prefer_skip_nested_validation=True)
def coverage_score(y_true, sets, *, classes=None):
    """Fraction of samples whose true label is in the prediction set.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    sets : {array-like, sparse matrix} of bool, shape (n_samples, n_classes)
        Prediction sets, column ``j`` for ``classes[j]``.
    classes : array-like of shape (n_classes,), default=None
        Labels of the columns, e.g. the fitted estimator's ``classes_``.
        Required unless ``y_true`` holds column indices ``0, ...,
        n_classes - 1``, every one of which occurs (otherwise the labels may
        not be the column indices, e.g. ``[0, 2, 3]`` for classes ``[0, 2,
        3, 5]``: ``ValueError``). Every label of ``y_true`` must be among
        them (``ValueError`` otherwise).

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
    >>> coverage_score(["b", "a"], [[True, False], [True, False]], classes=["a", "b"])
    0.5
    """
    covered, _ = _covered(y_true, sets, classes)
    return float(np.mean(covered))


@validate_params(
    {**_Y_AND_SETS, "bins": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def conditional_coverage_score(y_true, sets, *, bins=None, classes=None):
    """Coverage within each class, or within each bin (Mondrian coverage).

    A function of its own rather than a ``bins=`` option of
    :func:`coverage_score`, so that each returns one type: a float there,
    one coverage per group here (with the group labels and counts needed
    to read it, e.g. for binomial intervals).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    sets : {array-like, sparse matrix} of bool, shape (n_samples, n_classes)
        Prediction sets, column ``j`` for ``classes[j]``.
    bins : array-like of shape (n_samples,), default=None
        Group of every sample (e.g. the ``bins`` given to ``predict_set``);
        ``None`` groups by true class.
    classes : array-like of shape (n_classes,), default=None
        Labels of the columns, as in :func:`coverage_score`.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        ``groups``: the classes (``bins=None``, in column order) or the
        sorted distinct bins; ``coverage``: the fraction of the samples of
        each group whose true label is in the set (``nan`` for a class
        without samples); ``n_samples``: the number of samples per group.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import conditional_coverage_score
    >>> sets = np.array([[True, False], [True, False], [False, True]])
    >>> conditional_coverage_score([0, 1, 1], sets).coverage
    array([1. , 0.5])
    >>> conditional_coverage_score([0, 1, 1], sets, bins=["a", "a", "b"]).coverage
    array([0.5, 1. ])
    """
    covered, sets = _covered(y_true, sets, classes)
    if bins is None:
        n_classes = sets.shape[1]
        index = _label_indices(column_or_1d(y_true), n_classes, classes)
        groups = np.arange(n_classes) if classes is None else column_or_1d(classes)
        n_groups = n_classes
    else:
        bins = column_or_1d(bins)
        if bins.shape[0] != covered.shape[0]:
            raise ValueError(
                f"bins has {bins.shape[0]} entries for {covered.shape[0]} samples."
            )
        groups, index = np.unique(bins, return_inverse=True)
        n_groups = groups.shape[0]
    counts = np.bincount(index, minlength=n_groups)
    hits = np.bincount(index, weights=covered.astype(float), minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        coverage = np.where(counts > 0, hits / np.maximum(counts, 1), np.nan)
    return Bunch(groups=groups, coverage=coverage, n_samples=counts)


@validate_params(
    {"sets": ["array-like", "sparse matrix"]}, prefer_skip_nested_validation=True
)
def mean_set_size(sets):
    """Average number of labels per prediction set.

    Parameters
    ----------
    sets : {array-like, sparse matrix} of bool, shape (n_samples, n_classes)
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
    return float(np.mean(_set_sizes(_check_sets(sets))))


@validate_params(
    {"sets": ["array-like", "sparse matrix"]}, prefer_skip_nested_validation=True
)
def singleton_rate(sets):
    """Fraction of prediction sets with exactly one label.

    Parameters
    ----------
    sets : {array-like, sparse matrix} of bool, shape (n_samples, n_classes)
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
    return float(np.mean(_set_sizes(_check_sets(sets)) == 1))


@validate_params(
    {
        "sets": ["array-like", "sparse matrix"],
        "k0": [Interval(Integral, 0, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def multiple_prediction_rate(sets, k0=1):
    """Fraction of prediction sets with more than ``k0`` labels.

    With ``k0=1`` this is Vovk's M-criterion, ``P(|C(X)| > 1)``, the quantity
    SOCOP minimises.

    Parameters
    ----------
    sets : {array-like, sparse matrix} of bool, shape (n_samples, n_classes)
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
    return float(np.mean(_set_sizes(_check_sets(sets)) > k0))


@validate_params(
    {
        **_Y_AND_SETS,
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "strata": [list, None],
    },
    prefer_skip_nested_validation=True,
)
def set_size_stratified_coverage_violation(
    y_true, sets, *, confidence_level, classes=None, strata=None
):
    """Size-stratified coverage violation (SSCV).

    The largest absolute gap between ``confidence_level`` and the coverage
    within a stratum of set sizes (Angelopoulos et al., 2021), over the
    non-empty strata.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    sets : {array-like, sparse matrix} of bool, shape (n_samples, n_classes)
        Prediction sets.
    confidence_level : float
        Target coverage, e.g. 0.9.
    classes : array-like of shape (n_classes,), default=None
        Labels of the columns; required unless ``y_true`` holds column
        indices (see :func:`coverage_score`).
    strata : list of (int, int), default=None
        Inclusive size ranges; default ``[(0, 1), (2, 3), (4, 6), (7, 10),
        (11, 100), (101, n_classes)]`` clipped to the number of classes.

    Returns
    -------
    sscv : float
        Max over strata of ``|coverage in stratum - confidence_level|``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import set_size_stratified_coverage_violation
    >>> sets = np.array([[True, False], [True, False], [True, True], [True, True]])
    >>> set_size_stratified_coverage_violation(
    ...     [0, 1, 0, 1], sets, confidence_level=0.9
    ... )
    0.4
    """
    covered, sets = _covered(y_true, sets, classes)
    n_classes = sets.shape[1]
    if strata is None:
        strata = [(0, 1), (2, 3), (4, 6), (7, 10), (11, 100), (101, n_classes)]
    sizes = _set_sizes(sets)
    violations = []
    for low, high in strata:
        mask = (sizes >= low) & (sizes <= high)
        if mask.any():
            violations.append(abs(covered[mask].mean() - float(confidence_level)))
    return float(max(violations)) if violations else 0.0
