"""All-or-nothing fits of the conformal meta-estimators.

``fit`` and ``calibrate`` run on a scratch copy of the estimator that holds
its constructor parameters only; the fitted attributes of the copy replace
those of the estimator in one step once everything succeeded. An exception
(a ``KeyboardInterrupt`` in the inner estimator's ``fit`` or ``predict``, a
bad calibration set...) therefore leaves the estimator exactly as the
previous fit left it, never an inner model of a new fit with the threshold
of an old one.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import copy

from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.utils.validation import check_is_fitted

__all__ = ["fit_transaction", "frozen_fitted"]


# names of the attributes the last committed fit set (fitted state); every
# other instance attribute (parameters, metadata requests, a parent's context
# set from outside) is configuration, carried over untouched
_STATE = "_conformal_fitted_attributes"


def fit_transaction(owner, fit, /, *, keep_fitted=False, **overrides):
    """Run ``fit(work)`` on a scratch copy; commit its fitted state on success.

    Parameters
    ----------
    owner : BaseEstimator
        The estimator being fitted.
    fit : callable
        ``fit(work)`` fits the scratch copy ``work`` in place.
    keep_fitted : bool, default=False
        Start the copy from the fitted state (a re-calibration that keeps the
        fitted model) instead of the configuration alone.
    **overrides : dict
        Constructor parameters set on the scratch copy only (``calibrate``
        fits with ``estimator=FrozenEstimator(estimator)``); the owner's
        own parameters are left as they are.

    Returns
    -------
    owner : BaseEstimator
        ``owner``, now holding the fitted state of the copy (and nothing of
        a previous fit).
    """
    attributes = vars(owner)
    previous = set(attributes.get(_STATE, ()))
    config = {
        key: value
        for key, value in attributes.items()
        if key not in previous and key != _STATE
    }
    work = copy.copy(owner)
    work.__dict__ = dict(attributes) if keep_fitted else dict(config)
    work.__dict__.pop(_STATE, None)
    for key, value in overrides.items():
        setattr(work, key, value)
    fit(work)
    fitted = sorted(key for key in vars(work) if key not in config)
    new = dict(config)
    new.update((key, vars(work)[key]) for key in fitted)
    new[_STATE] = tuple(fitted)
    owner.__dict__ = new
    return owner


def frozen_fitted(estimator, owner):
    """``estimator`` wrapped in a ``FrozenEstimator``, checked to be fitted."""
    name = type(owner).__name__
    if estimator is None:
        raise ValueError(
            f"{name}.calibrate uses the estimator as it is and needs a fitted "
            "one; estimator=None would be an unfitted default model. Pass "
            "estimator=<your fitted model>, or call fit to train one."
        )
    if isinstance(estimator, FrozenEstimator):
        return estimator
    try:
        check_is_fitted(estimator)
    except NotFittedError as exc:
        raise NotFittedError(
            f"{name}.calibrate uses the estimator as it is, and "
            f"{type(estimator).__name__} is not fitted: fit it first, or "
            f"call {name}.fit to train it on a split of the data."
        ) from exc
    return FrozenEstimator(estimator)
