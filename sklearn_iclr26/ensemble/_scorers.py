"""Scorers of the ensemble family: the quality of a module composition.

Callables ``scorer(estimator, X, y) -> float``, greater is better, usable in
``GridSearchCV(scoring=...)`` as objects or by name through
:func:`sklearn_iclr26.metrics.get_scorer`.

What the composition models are for is the downstream task, whose metric is
already their default ``score`` (R^2, accuracy) and scikit-learn's scorers
(``"neg_mean_absolute_error"``, ...): tune the fine-tune there. The one
method-specific quantity is the training-free part, the **proxy
composition**: the weights ``module_weights_`` solved on the training rows'
kNN proxies, applied to held-out rows.

* ``"neg_proxy_composition_error"`` (-1): on the held-out ``(X, y)``, each
  module with positive weight gives its leave-one-out kNN label-propagation
  proxy (the estimator's ``n_neighbors`` and ``temperature``, labels of the
  held-out rows themselves, as in ``fit``), the proxies are blended with
  ``module_weights_``, and the error is the one ``fit`` minimises (mean
  absolute error of the blended proxy for the regressor, error rate of its
  argmax for the classifier). It measures whether the weight solve
  generalises, without fine-tuning: the scorer for ``n_neighbors``,
  ``temperature``, ``max_modules`` and ``weights``. It needs at least
  ``n_neighbors + 1`` held-out rows.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.ensemble._proxy import knn_proxy_predictions
from sklearn_iclr26.metrics._scorers import MethodScorer

__all__ = ["SCORERS", "proxy_composition_error"]


def _held_out_targets(estimator, y):
    y = np.asarray(y)
    if hasattr(estimator, "classes_"):
        Y = (y.reshape(-1, 1) == np.asarray(estimator.classes_)[None, :]).astype(
            np.float64
        )
        return Y
    return np.asarray(y, dtype=np.float64).reshape(len(y), -1)


def proxy_composition_error(estimator, X, y, *, sample_weight=None):
    """Held-out error of the weighted kNN proxies (smaller is better)."""
    if not hasattr(estimator, "module_weights_"):
        raise TypeError(
            f"{type(estimator).__name__} has no module_weights_: this scorer needs "
            "a fitted AdaptiveCompositionRegressor/Classifier."
        )
    check_is_fitted(estimator)
    Y = _held_out_targets(estimator, y)
    if Y.shape[0] < estimator.n_neighbors + 1:
        raise ValueError(
            f"The held-out set has {Y.shape[0]} rows; the kNN proxy needs at least "
            f"n_neighbors + 1 = {estimator.n_neighbors + 1}."
        )
    blended = np.zeros_like(Y)
    for name, w in zip(estimator.module_names_, estimator.module_weights_):
        if w <= 0:
            continue
        embedding = estimator.hub.embed(name, X)
        blended += w * knn_proxy_predictions(
            embedding,
            Y,
            n_neighbors=estimator.n_neighbors,
            temperature=estimator.temperature,
        )
    if hasattr(estimator, "classes_"):
        per_row = (blended.argmax(axis=1) != Y.argmax(axis=1)).astype(np.float64)
        per_row[Y.sum(axis=1) == 0] = 1.0  # a class unseen in fit: an error
    else:
        per_row = np.mean(np.abs(blended - Y), axis=1)
    return float(np.average(per_row, weights=sample_weight))


SCORERS = {
    "neg_proxy_composition_error": MethodScorer(
        proxy_composition_error, sign=-1, name="neg_proxy_composition_error"
    ),
}
