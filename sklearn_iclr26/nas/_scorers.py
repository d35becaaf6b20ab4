"""Scorers of the NAS family: the search's score, counted only within budget.

A constrained search is for the best network *whose cost is within the
budget*. ``score_within_budget`` is the search's own score (accuracy for
classification, R^2 for regression, of the refitted network) when the chosen
architecture satisfies the budget (``budget_satisfied_``), and the worst value
otherwise (0 accuracy; ``-inf`` R^2, which scikit-learn's searches report with
a warning about non-finite scores). ``GridSearchCV`` over a penalty search's
``penalty`` (or any setting that can break the budget) with this scorer
picks the most accurate *feasible* setting; plain accuracy would prefer the
infeasible, larger networks a weak penalty selects. ConNAS keeps its budget by
construction, so for it the scorer equals the plain score. It works on a
fitted search or on a ``Pipeline`` that ends with one.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.pipeline import Pipeline

from sklearn_iclr26.metrics._scorers import MethodScorer

__all__ = ["SCORERS", "score_within_budget"]


def score_within_budget(estimator, X, y, *, sample_weight=None):
    """The fitted search's score on ``(X, y)`` if within budget, else the worst.

    Parameters
    ----------
    estimator : fitted NAS search, or Pipeline ending with one
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), default=None

    Returns
    -------
    score : float
        Accuracy or R^2 of the refitted network; 0.0 (classification) or
        ``-inf`` (regression) when ``budget_satisfied_`` is False.
    """
    search = estimator[-1] if isinstance(estimator, Pipeline) else estimator
    if not hasattr(search, "budget_satisfied_"):
        raise TypeError(
            "score_within_budget needs a fitted NAS search (RandomNASSearch, "
            "PenaltyNASSearch, ConNASSearch) or a Pipeline ending with one, got "
            f"{type(search).__name__}."
        )
    if not search.budget_satisfied_:
        return 0.0 if search.task == "classification" else -np.inf
    if sample_weight is None:
        return float(estimator.score(X, y))
    return float(estimator.score(X, y, sample_weight=sample_weight))


SCORERS = {
    "score_within_budget": MethodScorer(
        score_within_budget, name="score_within_budget"
    ),
}
