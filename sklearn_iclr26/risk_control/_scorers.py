"""Scorers of the selective classifier: acceptance at the certified risk.

Callables ``scorer(estimator, X, y) -> float``, greater is better, usable in
``GridSearchCV(scoring=...)`` as objects or by name through
:func:`sklearn_iclr26.metrics.get_scorer`. The estimator is a fitted
:class:`~sklearn_iclr26.risk_control.SelectiveClassifier` (anything with
``selective_risk``), or a ``Pipeline`` ending in one.

* ``"selective_acceptance"`` (+1): the share of the rows accepted at the
  fitted, certified threshold: **the scorer for model selection**. Every
  candidate is certified at the same ``target_risk`` (the guarantee holds
  for each), so the one that answers most rows wins. Compare candidates at
  one ``target_risk``: a larger one accepts more by construction.
* ``"neg_selective_risk"`` (-1): the risk among the accepted rows on the
  scored rows (for ``risk="fnr"``, the miss rate of ``target_class``): a
  check that the certificate held, not a selection criterion (alone it
  prefers accepting nothing).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.metrics._scorers import MethodScorer

__all__ = ["SCORERS", "selective_acceptance", "selective_risk"]


def _final_and_X(estimator, X):
    if hasattr(estimator, "selective_risk"):
        return estimator, X
    steps = getattr(estimator, "steps", None)
    if steps and hasattr(steps[-1][1], "selective_risk"):
        return estimator[-1], estimator[:-1].transform(X)
    raise TypeError(
        f"{type(estimator).__name__} has no selective_risk: the selective scorers "
        "need a fitted SelectiveClassifier (or a Pipeline ending in one)."
    )


def selective_acceptance(estimator, X, y, sample_weight=None):
    """Share of the rows of ``X`` accepted by a fitted selective classifier."""
    final, Xt = _final_and_X(estimator, X)
    return final.selective_risk(Xt, y, sample_weight=sample_weight)[1]


def selective_risk(estimator, X, y, sample_weight=None):
    """Risk among the accepted rows of ``(X, y)`` (smaller is better)."""
    final, Xt = _final_and_X(estimator, X)
    return final.selective_risk(Xt, y, sample_weight=sample_weight)[0]


SCORERS = {
    "selective_acceptance": MethodScorer(
        selective_acceptance, sign=1, name="selective_acceptance"
    ),
    "neg_selective_risk": MethodScorer(
        selective_risk, sign=-1, name="neg_selective_risk"
    ),
}
