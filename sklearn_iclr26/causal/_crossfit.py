"""Cross-fitting of the nuisance models of the DR- and R-learners and the forest.

Each nuisance model is fitted on the training part of a fold and predicts on
its held-out part, so every training row gets out-of-fold nuisance values
(econml's ``_crossfit``). The folds come from ``cv``: an int gives
``StratifiedKFold(cv, shuffle=True)`` stratified by the treatment, seeded
from ``random_state`` (econml's rule for a discrete treatment); a splitter or
an iterable of ``(train, test)`` index pairs is used as given (so the same
folds can be handed to econml).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect
from numbers import Integral

import numpy as np
from sklearn.model_selection import StratifiedKFold, check_cv

from sklearn_iclr26.causal._base import _draw, fit_child
from sklearn_iclr26.utils._sklearn_compat import _safe_indexing
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["crossfit_folds", "fit_propensity_fold", "predict_mean"]


def crossfit_folds(cv, t, rng):
    """The list of ``(train, test)`` folds, checked to partition the rows.

    A seed is drawn from ``rng`` whatever ``cv`` is, so the later draws do not
    depend on the kind of ``cv``.
    """
    seed = _draw(rng)
    n = len(t)
    if isinstance(cv, Integral):
        splitter = StratifiedKFold(n_splits=cv, shuffle=True, random_state=seed)
    else:
        splitter = check_cv(cv, t.astype(int), classifier=True)
    kwargs = {}
    if "treatment" in inspect.signature(splitter.split).parameters:
        kwargs["treatment"] = t  # TreatmentStratifiedKFold
    folds = [
        (np.asarray(train, dtype=np.intp), np.asarray(test, dtype=np.intp))
        for train, test in splitter.split(np.zeros((n, 1)), t.astype(int), **kwargs)
    ]
    seen = np.zeros(n, dtype=int)
    for k, (train, test) in enumerate(folds):
        seen[test] += 1
        arms = t[train]
        if not (np.any(arms == 0) and np.any(arms == 1)):
            raise ValueError(
                f"The training part of cross-fitting fold {k} does not hold both "
                "treatment arms: use fewer folds (cv) or folds stratified by the "
                "treatment."
            )
        if len(np.intersect1d(train, test)):
            raise ValueError(
                f"Cross-fitting fold {k} has rows in both its training and its "
                "held-out part."
            )
    if len(folds) < 2 or not np.all(seen == 1):
        raise ValueError(
            "The cross-fitting folds (cv) must hold out every row exactly once "
            "(at least 2 folds), so that every row gets out-of-fold nuisances."
        )
    return folds


def fit_propensity_fold(learner, X, t, train, test, rng, sample_weight):
    """Fit a clone of the propensity model on ``train``; ``(model, e[test])``."""
    model = learner._clone_child(learner._get_propensity_estimator(), _draw(rng))
    fit_child(
        model,
        _safe_indexing(X, train),
        t[train].astype(int),
        None if sample_weight is None else sample_weight[train],
        role="propensity model",
    )
    proba = model.predict_proba(_safe_indexing(X, test))
    classes = list(model.classes_)
    return model, np.asarray(proba[:, classes.index(1)], dtype=np.float64)


def fit_regressor_fold(learner, estimator, X, y, rows, rng, sample_weight, role):
    """Fit a clone of ``estimator`` on ``rows`` (seeded from ``rng``)."""
    model = learner._clone_child(estimator, _draw(rng))
    return fit_child(
        model,
        _safe_indexing(X, rows),
        y[rows],
        None if sample_weight is None else sample_weight[rows],
        role=role,
    )


def predict_vector(model, X):
    return np.asarray(model.predict(X), dtype=np.float64).ravel()


def predict_mean(models, X):
    """The mean prediction of the fold models (the nuisance at new rows)."""
    return np.mean([predict_vector(m, X) for m in models], axis=0)


def log_fold(learner, k, n_folds):
    log_progress(learner, f"cross-fitting the nuisance models, fold {k + 1}/{n_folds}")
