"""Scorers of the label-noise family: none registered, on purpose.

The correctors are tuned on what they are for, the accuracy on the *clean*
labels, and the plain ``accuracy`` scorer (``ClassifierMixin.score``, the
default of ``GridSearchCV``) is the right target even though the validation
folds carry the same noisy labels as the training folds:

* under instance-dependent noise with flip rates ``rho(x) < 1/2`` (the model
  of both correctors), the noisy accuracy of a classifier ``h`` is
  ``E[rho(x)] + E[(1 - 2 rho(x)) 1{h(x) = y}]``: a positively reweighted
  clean accuracy plus a constant, maximised by the same (clean Bayes)
  classifier;
* under symmetric noise (``rho`` constant) it is an affine, increasing map of
  the clean accuracy: noisy and clean accuracy rank every candidate the same.

A mislabel-detection scorer (AUROC of the mislabel scores against the true
flip mask) would be the target for data cleaning, but it needs the flip mask,
which a cross-validated search over noisy labels never has; the user guide
shows how to compute it when a verified subset exists
(``roc_auc_score(flipped, clf.mislabel_scores_)``). A corrected-risk scorer
(the corrected loss on held-out noisy labels) is not registered either: it
is computed with the flip rates the candidate itself estimates, so a
candidate can lower it by estimating larger flip rates.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

SCORERS = {}
