"""Causal inference: conditional average treatment effects (CATE).

* :class:`GeodesicCATERegressor` (alias :class:`GLearner`): outcome models
  adapted between the treatment arms along the Wasserstein geodesic
  (ICLR 2026, OpenReview pYLoHuLV45).
* :class:`TLearnerRegressor`, :class:`XLearnerRegressor`: the classic
  meta-learners over the same outcome model, for fair comparisons.
* :func:`pehe_score`, :func:`ate_error`, :func:`make_cate_scorer` and
  :class:`TreatmentStratifiedKFold` for evaluation and model selection.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.causal._geodesic import GeodesicCATERegressor, GLearner
from sklearn_iclr26.causal._metrics import ate_error, pehe_score
from sklearn_iclr26.causal._scorers import make_cate_scorer
from sklearn_iclr26.causal._split import TreatmentStratifiedKFold
from sklearn_iclr26.causal._t_learner import TLearnerRegressor
from sklearn_iclr26.causal._x_learner import XLearnerRegressor

__all__ = [
    "GLearner",
    "GeodesicCATERegressor",
    "TLearnerRegressor",
    "TreatmentStratifiedKFold",
    "XLearnerRegressor",
    "ate_error",
    "make_cate_scorer",
    "pehe_score",
]
