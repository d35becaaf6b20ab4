"""Validation helpers shared by the estimators of the package."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from contextlib import contextmanager
from numbers import Real

import numpy as np
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import get_tags, indexable
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from sklearn_iclr26.utils._sklearn_compat import _check_sample_weight

__all__ = [
    "calibration_size_ok",
    "check_at_least_two_classes",
    "check_confidence_level",
    "check_has_methods",
    "check_probabilities",
    "explain_overflow",
    "input_validation_kwargs",
    "store_params",
    "validate_classifier_fit_data",
]


def store_params(obj, params):
    """Store each ``__init__`` argument as the attribute of the same name.

    Call it as ``store_params(self, locals())``, first thing in ``__init__``
    (after ``super().__init__()`` in a torch module), where the body would
    only be ``self.x = x`` lines: scikit-learn reads the parameters from the
    explicit signature, and this stores them as given, unvalidated.
    """
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(obj, name, value)


def check_has_methods(estimator, methods, role="estimator"):
    """Raise a clear error naming the estimator when it lacks a method."""
    missing = [m for m in methods if not hasattr(estimator, m)]
    if missing:
        raise TypeError(
            f"The {role} {type(estimator).__name__} does not implement "
            f"{', '.join(missing)}, which this meta-estimator needs."
        )


def check_probabilities(proba, *, name="proba", atol=1e-6):
    """Validate a (n_samples, n_classes) probability matrix.

    Raises ``ValueError`` on NaN or infinite values, negative entries, a wrong
    shape, or rows that do not sum to 1 (within ``atol``).
    """
    proba = np.asarray(proba, dtype=np.float64)
    if proba.ndim != 2:
        raise ValueError(
            f"{name} must be 2-dimensional (n_samples, n_classes), got shape "
            f"{proba.shape}."
        )
    if proba.shape[1] < 1:
        raise ValueError(f"{name} must have at least one column.")
    if proba.size == 0:
        return proba
    # two cheap passes: the minimum is NaN if any entry is NaN, the row sums
    # are infinite if any entry is +inf
    smallest = proba.min()
    if np.isnan(smallest):
        raise ValueError(f"{name} contains NaN or infinite values.")
    if smallest < 0:
        raise ValueError(f"{name} contains negative values.")
    sums = proba @ np.ones(proba.shape[1])
    if not np.all(np.isfinite(sums)):
        raise ValueError(f"{name} contains NaN or infinite values.")
    if not np.allclose(sums, 1.0, atol=atol):
        worst = float(np.max(np.abs(sums - 1.0)))
        raise ValueError(
            f"The rows of {name} must sum to 1 (largest deviation {worst:.3g})."
        )
    return proba


def check_at_least_two_classes(estimator, y, sample_weight=None):
    """Raise the ``ValueError`` scikit-learn expects for single-class targets."""
    labels = y if sample_weight is None else np.asarray(y)[sample_weight > 0]
    if np.unique(labels).shape[0] < 2:
        raise ValueError(
            f"{type(estimator).__name__} needs samples of at least 2 classes in the "
            "data (with positive sample_weight), but the data contains only one "
            "class."
        )


def input_validation_kwargs(estimator):
    """``validate_data`` keywords that follow a child estimator's input tags.

    NaN passes only if the child accepts NaN, sparse input only if it accepts
    sparse input.
    """
    tags = get_tags(estimator).input_tags
    return {
        "accept_sparse": ["csr", "csc"] if tags.sparse else False,
        "ensure_all_finite": "allow-nan" if tags.allow_nan else True,
    }


def validate_classifier_fit_data(estimator, X, y, sample_weight=None, **check_params):
    """Validate a classifier's ``fit`` inputs and set ``estimator.classes_``.

    ``validate_data`` (which sets ``n_features_in_`` and ``feature_names_in_``),
    ``check_classification_targets``, ``_check_sample_weight`` (non-negative,
    not all zero), label encoding and the "at least two classes with positive
    weight" error, in the order scikit-learn's checks expect.

    Returns
    -------
    X : ndarray
        Validated input.
    y : ndarray
        Validated labels.
    y_encoded : ndarray of int64
        Labels encoded as ``0, ..., n_classes - 1`` (indices into
        ``estimator.classes_``).
    sample_weight : ndarray or None
        Validated weights.
    """
    X, y = validate_data(estimator, X, y, **check_params)
    return encode_classifier_targets(estimator, X, y, sample_weight)


def encode_classifier_targets(estimator, X, y, sample_weight=None):
    """Check and encode validated labels, set ``estimator.classes_``.

    The part of :func:`validate_classifier_fit_data` after ``X`` and ``y`` are
    validated; returns ``(X, y, y_encoded, sample_weight)`` like it.
    """
    check_classification_targets(y)
    if sample_weight is not None:
        sample_weight = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
    encoder = LabelEncoder().fit(y)
    estimator.classes_ = encoder.classes_
    check_at_least_two_classes(estimator, y, sample_weight)
    return X, y, encoder.transform(y).astype(np.int64), sample_weight


def check_confidence_level(confidence_level, name="confidence_level"):
    """Return ``confidence_level`` as a float in the open interval (0, 1)."""
    if isinstance(confidence_level, bool) or not isinstance(confidence_level, Real):
        raise TypeError(f"{name} must be a float in (0, 1), got {confidence_level!r}.")
    level = float(confidence_level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"{name} must be in the open interval (0, 1), got {level}.")
    return level


def calibration_size_ok(
    n_calibration, confidence_level, *, what="calibration", needed=None
):
    """The package's one policy for a calibration set too small for a level.

    Split conformal at level ``1 - alpha`` needs ``ceil((n + 1)(1 - alpha))
    <= n``, i.e. ``n >= 1 / alpha - 1`` calibration points; below that the
    conformal threshold is infinite. Every conformal estimator, at ``fit`` and
    at a per-call ``confidence_level``, then **warns** (pointing at the
    user's line, quoting the user's level) and returns trivial sets/regions:
    the threshold is ``inf``, sets hold every class, regions are the whole
    space. It never raises, so that ``check_estimator`` with default
    parameters passes on scikit-learn's tiny data sets.

    Parameters
    ----------
    n_calibration : int
        Number of calibration points.
    confidence_level : float
        The level the user asked for (never an internal, e.g. Bonferroni-split,
        level).
    what : str, default="calibration"
        Name of the set in the message.
    needed : int, default=None
        Number of points the method needs, when it calibrates at an internal
        level (e.g. a Bonferroni box: each of ``d`` outputs at level
        ``1 - alpha / d`` needs ``d / alpha - 1`` points); ``None`` means
        ``1 / alpha - 1``. The message still quotes ``confidence_level``.

    Returns
    -------
    ok : bool
        ``False`` (after a ``UserWarning``) when the threshold is infinite.
    """
    from sklearn_iclr26.utils._warnings import warn_user

    alpha = 1.0 - float(confidence_level)
    if needed is None:
        needed = math.ceil(1.0 / alpha - 1.0 - 1e-9)
    needed = max(int(needed), 1)
    if n_calibration < needed:
        warn_user(
            f"The {what} set has {n_calibration} samples, too few for "
            f"confidence_level={confidence_level}: split conformal needs at least "
            f"{needed}. The threshold is infinite, so every prediction set is the "
            "full label set (every region the whole space). Use more data, a "
            "larger calibration_size, or a lower confidence_level."
        )
        return False
    return True


def _n_jobs_constraint():
    from numbers import Integral

    from sklearn_iclr26.utils._sklearn_compat import Interval

    return [
        Interval(Integral, 1, None, closed="left"),
        Interval(Integral, None, -1, closed="right"),
        None,
    ]


#: The ``_parameter_constraints`` entry of every ``n_jobs`` parameter: ``None``
#: (one thread/job), a positive count, or ``-1``, ``-2``, ... (all cores, all but
#: one, ...); 0 is meaningless and rejected with an ``InvalidParameterError``.
N_JOBS_CONSTRAINT = _n_jobs_constraint()


def check_hidden_layer_sizes(hidden_layer_sizes, *, allow_empty=True):
    """Validate ``hidden_layer_sizes``: the one rule of the torch estimators.

    Returns the widths as a tuple of positive ints. An empty sequence (no
    hidden layer: a linear model) is accepted where ``allow_empty`` is true
    (the architectures that need a hidden layer pass ``False``).
    """
    hidden = tuple(int(h) for h in np.atleast_1d(hidden_layer_sizes))
    if any(h < 1 for h in hidden) or (not hidden and not allow_empty):
        kind = "a sequence" if allow_empty else "a non-empty sequence"
        raise ValueError(
            f"hidden_layer_sizes must be {kind} of positive ints, got "
            f"{hidden_layer_sizes!r}."
        )
    return hidden


@contextmanager
def explain_overflow(X, what="the inner estimator"):
    """Re-raise a child's "Input X contains NaN/infinity" clearly when ``X`` is finite.

    Finite but huge values (1e300) overflow inside a child (a
    ``StandardScaler``'s variance), which then reports NaN although the
    user's ``X`` has none. Any other error, or one on an ``X`` that does
    contain NaN or infinity (or is not numeric), passes unchanged.
    """
    try:
        yield
    except ValueError as exc:
        message = str(exc)
        if "contains NaN" not in message and "contains infinity" not in message:
            raise
        try:
            values = np.asarray(
                X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64
            )
        except (TypeError, ValueError):
            raise exc from None
        if values.size == 0 or not np.all(np.isfinite(values)):
            raise
        largest = float(np.max(np.abs(values)))
        raise ValueError(
            f"X contains no NaN or infinity, but values as large as {largest:.3g} "
            f"overflowed inside {what} (e.g. in a StandardScaler's variance), "
            f"which then reported: {message.splitlines()[0]!r}. Rescale the "
            "large columns of X (e.g. divide them by a constant or take logs)."
        ) from exc


def check_passthrough_X(estimator, X, *, reset=False):
    """Check the rows a meta-estimator hands to its inner estimator untouched.

    Feature count and names against fit (``reset=True`` records them); ``X``
    itself is only made indexable (``_safe_indexing`` needs rows: objects
    exposing ``__array__`` alone become arrays, sparse matrices CSR). A 1-D
    input raises scikit-learn's "Reshape your data" error.
    """
    if getattr(X, "ndim", None) == 1 or (
        isinstance(X, list) and len(X) and np.ndim(X[0]) == 0
    ):
        raise ValueError(
            "Expected 2D array, got 1D array instead. Reshape your data "
            "either using array.reshape(-1, 1) if your data has a single "
            "feature or array.reshape(1, -1) if it contains a single sample."
        )
    X = indexable(X)[0]
    validate_data(estimator, X, reset=reset, skip_check_array=True)
    return X
