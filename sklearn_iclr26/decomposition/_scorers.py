"""Scorers of the decomposition family: what a sparse code is for.

Callables ``scorer(estimator, X, y) -> float``, greater is better, usable in
``GridSearchCV(scoring=...)`` as objects or by name through
:func:`sklearn_iclr26.metrics.get_scorer`. The estimator is a fitted
transformer with ``transform`` and either ``inverse_transform`` or
``components_`` (``SparseAutoencoder``, scikit-learn's ``PCA``,
``DictionaryLearning``, ``MiniBatchDictionaryLearning``, a ``Pipeline``
ending in one whose steps all invert).

Which to use for model selection:

* ``"reconstruction_r2"`` (+1): held-out explained variance of the
  reconstruction, ``1 - sum ||x - x_hat||^2 / sum ||x - mean||^2``. **The
  scorer for tuning at a fixed code sparsity** (learning rate, epochs, batch
  size, ``n_components`` at fixed ``k``): reconstruction only compares codes of
  equal sparsity; over ``k`` or an L1/L_p weight it always prefers the
  densest code.
* ``"neg_reconstruction_error"`` (-1): minus the held-out mean of
  ``||x - x_hat||^2`` (``SparseAutoencoder.reconstruction_error_``'s
  definition); same caveat.
* ``"neg_mean_active_features"`` (-1): minus the mean number of non-zero code
  entries per row; a check of the sparsity actually reached (report it next to
  the reconstruction when a penalty, not ``k``, sets the sparsity).
* ``"concept_identifiability"`` (+1): with ``y`` the binary concept labels
  (n_samples x n_concepts), the held-out
  :func:`~sklearn_iclr26.metrics.concept_identifiability_score` of the codes
  (Hungarian matching against cross-fitted logistic probes on ``X``): what the
  SAE evaluation of Liu et al. (ICLR 2026) is for; usable over the sparsity
  too, since a denser code is not automatically better.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils import check_array

from sklearn_iclr26.metrics._identifiability import concept_identifiability_score
from sklearn_iclr26.metrics._scorers import MethodScorer

__all__ = [
    "SCORERS",
    "code_active_features",
    "concept_identifiability",
    "reconstruction_error",
    "reconstruction_r2",
]


def _reconstruct(estimator, X):
    """Codes and reconstruction of ``X`` (in ``X``'s space)."""
    codes = estimator.transform(X)
    if hasattr(estimator, "inverse_transform"):
        recon = estimator.inverse_transform(codes)
    elif hasattr(estimator, "components_"):
        recon = np.asarray(codes) @ estimator.components_
    else:
        raise TypeError(
            f"{type(estimator).__name__} has neither inverse_transform nor "
            "components_: the reconstruction scorers need a decomposition."
        )
    return np.asarray(codes), np.asarray(recon, dtype=np.float64)


def _row_errors(estimator, X):
    X = check_array(X, dtype=np.float64)
    _, recon = _reconstruct(estimator, X)
    return X, np.sum((X - recon) ** 2, axis=1)


def reconstruction_error(estimator, X, y=None, *, sample_weight=None):
    """Mean over rows of ``||x - x_hat||^2`` (smaller is better)."""
    _, errors = _row_errors(estimator, X)
    return float(np.average(errors, weights=sample_weight))


def reconstruction_r2(estimator, X, y=None, *, sample_weight=None):
    """Explained variance of the reconstruction (greater is better)."""
    X, errors = _row_errors(estimator, X)
    mean = np.average(X, axis=0, weights=sample_weight)
    total = np.average(np.sum((X - mean) ** 2, axis=1), weights=sample_weight)
    if total <= 0:
        raise ValueError("X has zero variance: the explained variance is undefined.")
    return float(1.0 - np.average(errors, weights=sample_weight) / total)


def code_active_features(estimator, X, y=None, *, sample_weight=None):
    """Mean number of non-zero code entries per row."""
    codes = np.asarray(estimator.transform(X))
    return float(np.average((codes != 0).sum(axis=1), weights=sample_weight))


def concept_identifiability(estimator, X, y, *, sample_weight=None):
    """Matched |corr| of the codes with concept log-posteriors (greater better)."""
    if y is None:
        raise ValueError(
            "The concept_identifiability scorer needs y = the binary concept "
            "labels (n_samples x n_concepts)."
        )
    if sample_weight is not None:
        raise ValueError("concept_identifiability does not support sample_weight.")
    X = check_array(X, dtype=np.float64)
    codes = np.asarray(estimator.transform(X), dtype=np.float64)
    return concept_identifiability_score(
        codes, y, representations=X, cv=3, random_state=0
    )


SCORERS = {
    "reconstruction_r2": MethodScorer(reconstruction_r2, name="reconstruction_r2"),
    "neg_reconstruction_error": MethodScorer(
        reconstruction_error, sign=-1, name="neg_reconstruction_error"
    ),
    "neg_mean_active_features": MethodScorer(
        code_active_features, sign=-1, name="neg_mean_active_features"
    ),
    "concept_identifiability": MethodScorer(
        concept_identifiability, name="concept_identifiability"
    ),
}
