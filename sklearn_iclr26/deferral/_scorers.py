"""Scorers of the deferral family: the deferral cost (error + fees).

``neg_deferral_cost`` is ``-(mean error of the answer + fee_weight * mean fee
paid per query)``: the error is the 0-1 error for a classifier and the
absolute error for a regressor, the fees are those of the entities actually
consulted (``costs_``; unavailable experts are not paid). Greater is better
(it is negated, as scikit-learn's ``neg_*`` scorers), so ``GridSearchCV`` over
``k`` or ``budget_weight`` picks the cheapest setting instead of the largest
``k`` that plain accuracy or R^2 prefer. It works on a fitted deferral
estimator or on a ``Pipeline`` that ends with one.

``neg_fee_at_target_risk`` scores a fitted :class:`RiskControlledDeferrer`
by ``-(mean fee paid per query)`` of its certified rule on the scored rows,
and ``-inf`` when its rule is not certified: ``GridSearchCV`` over the inner
deferrer's options (``k``, the allocator) then picks the cheapest system
among those certified at the target risk.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.base import is_classifier
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import column_or_1d

from sklearn_iclr26.metrics._scorers import MethodScorer

__all__ = ["SCORERS", "deferral_cost", "fee_at_target_risk"]


def deferral_cost(estimator, X, y, *, fee_weight=1.0, error="absolute",
                  sample_weight=None):  # fmt: skip
    """Mean deferral cost of a fitted Top-k deferral estimator on ``(X, y)``.

    ``mean(error(answer, y) + fee_weight * fees paid)``; smaller is better.
    ``error`` (regression only): ``"absolute"`` or ``"squared"``.
    """
    if isinstance(estimator, Pipeline):
        X = estimator[:-1].transform(X)
        estimator = estimator[-1]
    if not hasattr(estimator, "_predict_with_fees"):
        raise TypeError(
            "The deferral cost scorer needs a fitted TopKDeferrer or "
            f"TopKDeferralRegressor (or a Pipeline ending with one), got "
            f"{type(estimator).__name__}."
        )
    y_pred, fees = estimator._predict_with_fees(X)
    y = column_or_1d(y, warn=True)
    if is_classifier(estimator):
        loss = (y_pred != y).astype(np.float64)
    elif error == "squared":
        loss = (y_pred - np.asarray(y, dtype=np.float64)) ** 2
    else:
        loss = np.abs(y_pred - np.asarray(y, dtype=np.float64))
    return float(np.average(loss + fee_weight * fees, weights=sample_weight))


def fee_at_target_risk(estimator, X, y=None, *, sample_weight=None):
    """Mean fee per query of a fitted risk-controlled deferrer's certified rule.

    ``inf`` when the rule is not certified (``certified_`` is ``False``), so
    that the negated scorer ranks it last. ``y`` is not used: the fee does
    not depend on the answer.
    """
    if isinstance(estimator, Pipeline):
        X = estimator[:-1].transform(X)
        estimator = estimator[-1]
    if not hasattr(estimator, "certified_"):
        raise TypeError(
            "The fee-at-target-risk scorer needs a fitted RiskControlledDeferrer "
            f"(or a Pipeline ending with one), got {type(estimator).__name__}."
        )
    if not estimator.certified_:
        return float("inf")
    _, fees = estimator._predict_with_fees(X)
    return float(np.average(fees, weights=sample_weight))


SCORERS = {
    "neg_deferral_cost": MethodScorer(deferral_cost, sign=-1, name="neg_deferral_cost"),
    "neg_fee_at_target_risk": MethodScorer(
        fee_at_target_risk, sign=-1, name="neg_fee_at_target_risk"
    ),
}
