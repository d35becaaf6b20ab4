"""A fitted model used as it is by the conformal estimators' ``calibrate``."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.utils.validation import check_is_fitted

__all__ = ["frozen_fitted"]


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
