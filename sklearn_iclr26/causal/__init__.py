"""Causal inference: treatment effects, confounded and spurious features.

* :class:`GeodesicCATERegressor` (the paper's G-learner): outcome models
  adapted between the treatment arms along the Wasserstein geodesic
  (ICLR 2026, OpenReview pYLoHuLV45).
* :class:`TLearnerRegressor`, :class:`XLearnerRegressor`: the classic
  meta-learners over the same outcome model, for fair comparisons.
* :class:`DRLearnerRegressor`, :class:`RLearnerRegressor`: the doubly robust
  and the R-learner (non-parametric double ML) on cross-fitted nuisances,
  equal to econml's ``DRLearner`` and ``NonParamDML``;
  :class:`CausalForestRegressor`: an honest causal forest with its own
  intervals (econml's ``CausalForestDML``; needs econml).
* :class:`ConformalITERegressor`: weighted split-conformal intervals of the
  counterfactual outcomes and of individual treatment effects around any of
  the CATE learners (Lei and Candès, 2021).
* :func:`pehe_score`, :func:`ate_error`, :func:`make_cate_scorer` and
  :class:`TreatmentStratifiedKFold` for evaluation and model selection.
* :class:`BackdoorAdjustedRegressor`, :class:`BackdoorAdjustedClassifier`
  (Prism): context feature groups integrated by backdoor adjustment over
  learned background states.
* :class:`TwoKeyAttentionRegressor`, :class:`TabularAttentionClassifier`,
  :class:`TabularAttentionRegressor` (CCO): attention models that crowd out
  spurious descendants of the cause.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.causal._backdoor_adjusted_classifier import (
    BackdoorAdjustedClassifier,
)
from sklearn_iclr26.causal._backdoor_adjusted_regressor import (
    BackdoorAdjustedRegressor,
)
from sklearn_iclr26.causal._causal_forest import CausalForestRegressor
from sklearn_iclr26.causal._conformal_ite import ConformalITERegressor
from sklearn_iclr26.causal._display import CATEDisplay
from sklearn_iclr26.causal._dr_learner import DRLearnerRegressor
from sklearn_iclr26.causal._geodesic_cate import GeodesicCATERegressor
from sklearn_iclr26.causal._metrics import ate_error, pehe_score
from sklearn_iclr26.causal._r_learner import RLearnerRegressor
from sklearn_iclr26.causal._scorers import make_cate_scorer
from sklearn_iclr26.causal._split import TreatmentStratifiedKFold
from sklearn_iclr26.causal._t_learner import TLearnerRegressor
from sklearn_iclr26.causal._tabular_attention_classifier import (
    TabularAttentionClassifier,
)
from sklearn_iclr26.causal._tabular_attention_regressor import (
    TabularAttentionRegressor,
)
from sklearn_iclr26.causal._two_key_attention import TwoKeyAttentionRegressor
from sklearn_iclr26.causal._x_learner import XLearnerRegressor

__all__ = [
    "BackdoorAdjustedClassifier",
    "BackdoorAdjustedRegressor",
    "CATEDisplay",
    "CausalForestRegressor",
    "ConformalITERegressor",
    "DRLearnerRegressor",
    "GeodesicCATERegressor",
    "RLearnerRegressor",
    "TLearnerRegressor",
    "TabularAttentionClassifier",
    "TabularAttentionRegressor",
    "TreatmentStratifiedKFold",
    "TwoKeyAttentionRegressor",
    "XLearnerRegressor",
    "ate_error",
    "make_cate_scorer",
    "pehe_score",
]
