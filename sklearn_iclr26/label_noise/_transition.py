"""Transition-matrix estimates of class-conditional label noise (pure functions).

The confident joint (cleanlab's), the anchor-point estimate (Patrini et al.),
the implied flip rate and the shrinkage to a diagonally dominant matrix. Used
by :class:`~sklearn_iclr26.label_noise.ClassConditionalNoiseCorrector` and by
the flag rules of ``_label_issues.py``; kept out of the estimator module so
neither imports the other.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = [
    "confident_joint_counts",
    "confident_joint_transition_matrix",
    "estimate_transition_matrix",
    "implied_flip_rate",
    "shrink_to_diagonally_dominant",
    "transition_from_confident_joint",
]


def confident_joint_transition_matrix(proba, y, sample_weight=None):
    """Confident-joint estimate of ``T[i, j] = P(Y~ = j | Y = i)`` (cleanlab).

    The confident joint of Northcutt, Jiang and Chuang (JAIR 2021), as
    cleanlab's ``compute_confident_joint`` (with ``calibrate=True``) and
    ``estimate_latent`` compute it, without the rounding to integer counts:

    1. per-class thresholds ``t_k``: the mean self-confidence
       ``proba[i, k]`` over the rows labeled ``k``;
    2. each row whose probability of some class ``k`` is at least ``t_k`` is
       counted in ``C[y~, k*]``, ``k*`` the most probable such class (rows
       confident in no class are left out); the diagonal is floored at one
       (mean) row;
    3. calibration: each row ``C[i]`` is rescaled to the number (total
       weight) of rows labeled ``i``;
    4. ``T[i, j] = C[j, i] / sum_k C[k, i]`` (cleanlab's ``noise_matrix``
       transposed).

    Unlike the anchor-point estimate it needs no calibrated probabilities:
    it counts against per-class thresholds rather than reading probability
    values.
    """
    proba = np.asarray(proba, dtype=np.float64)
    y = np.asarray(y)
    n, n_classes = proba.shape
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    label_counts = np.bincount(y, weights=w, minlength=n_classes)
    rows = np.arange(n)
    thresholds = np.bincount(
        y, weights=w * proba[rows, y], minlength=n_classes
    ) / np.maximum(label_counts, 1e-300)
    C = confident_joint_counts(proba, y, thresholds, w)
    return transition_from_confident_joint(C, label_counts, w.mean())


def confident_joint_counts(proba, y, thresholds, w=None):
    """Step 2 of :func:`confident_joint_transition_matrix` without the floor.

    The (weighted) counts ``C[y~, k*]`` of the rows confident in some class
    against the per-class ``thresholds``; additive over row blocks, so the
    block-wise fit sums it over the blocks of a dask collection.
    """
    n_classes = proba.shape[1]
    confident = proba >= thresholds - 1e-6
    n_confident = confident.sum(axis=1)
    guess = np.where(n_confident > 1, proba.argmax(axis=1), confident.argmax(axis=1))
    keep = n_confident > 0
    C = np.zeros((n_classes, n_classes))
    weights = np.ones(len(y)) if w is None else np.asarray(w, float)
    np.add.at(C, (y[keep], guess[keep]), weights[keep])
    return C


def transition_from_confident_joint(C, label_counts, mean_weight=1.0):
    """Steps 2 (the diagonal floor) to 4 of :func:`confident_joint_transition_matrix`.

    ``C`` from :func:`confident_joint_counts`, ``label_counts`` the (weighted)
    number of rows of each label, ``mean_weight`` the mean sample weight (one
    row's weight, the floor of the diagonal).
    """
    C = np.array(C, dtype=np.float64)
    np.fill_diagonal(C, np.maximum(np.diag(C), mean_weight))
    C = C / np.maximum(C.sum(axis=1, keepdims=True), 1e-300) * label_counts[:, None]
    T = (C / np.maximum(C.sum(axis=0, keepdims=True), 1e-300)).T
    return T / T.sum(axis=1, keepdims=True)


def implied_flip_rate(T, y, sample_weight=None):
    """Fraction of labels a transition matrix flips, weighted by the label counts."""
    prior = np.bincount(y, weights=sample_weight, minlength=T.shape[0])
    return float(np.dot(prior / prior.sum(), 1.0 - np.diag(T)))


def estimate_transition_matrix(proba, quantile=0.97):
    """Anchor-point estimate of ``T[i, j] = P(Y~ = j | Y = i)`` (Patrini et al.).

    For each class ``i`` the anchor is the row whose noisy probability of ``i``
    is closest to its ``quantile`` over all rows (a robust ``argmax``); row
    ``i`` of ``T`` is that row's noisy probability vector.
    """
    proba = np.asarray(proba, dtype=np.float64)
    n_classes = proba.shape[1]
    T = np.empty((n_classes, n_classes))
    for i in range(n_classes):
        level = np.quantile(proba[:, i], quantile)
        anchor = np.argmin(np.abs(proba[:, i] - level))
        T[i] = proba[anchor]
    T = np.clip(T, 1e-6, None)
    return T / T.sum(axis=1, keepdims=True)


def shrink_to_diagonally_dominant(T, margin=0.05):
    """Mix ``T`` with the identity until every diagonal entry is at least 1/2 + margin.

    A strictly diagonally dominant row-stochastic matrix is invertible; it
    means every class keeps its label more often than not. Returns the matrix
    and the mixing weight (0 when ``T`` already satisfies it).
    """
    for weight in np.linspace(0.0, 1.0, 41):
        mixed = (1.0 - weight) * T + weight * np.eye(T.shape[0])
        if np.all(np.diag(mixed) >= 0.5 + margin):
            return mixed, float(weight)
    return np.eye(T.shape[0]), 1.0
