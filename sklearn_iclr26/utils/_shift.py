"""Distribution-shift estimation shared by the families (foundation).

* Covariate shift: the likelihood ratio ``w(x) = dP_target / dP_source (x)``
  from a probabilistic *domain classifier* that tells source rows (label 0)
  from target rows (label 1): ``w(x) = p(x) / (1 - p(x)) * n_source /
  n_target`` (Bayes' rule; Tibshirani, Barber, Candès and Ramdas, NeurIPS
  2019), cross-fitted so that every source row is scored by a model that
  never saw it, with ``p`` clipped to ``[clip, 1 - clip]`` (the ratio is then
  at most ``(1 - clip) / clip * n_source / n_target``: 99 times the prior odds
  at the default ``clip=0.01``).
* A two-sample test of source against target from the same cross-fit: the
  out-of-fold AUC of the domain classifier, with a permutation p-value (the
  domain labels permuted within each fold: under no shift the held-out scores
  of a fold are independent of its rows' labels, so the permutation null is
  exact).
* Label shift: target class priors by black-box shift estimation (BBSE;
  Lipton, Wang and Smola, ICML 2018), the confusion matrix of a fixed
  classifier on labelled source rows inverted against its prediction rates on
  the target rows, or by EM (Saerens, Latinne and Decaestecker, Neural
  Computation 2002), re-weighting calibrated posteriors until the priors are
  a fixed point. The class weights ``pi_target(k) / pi_source(k)`` then weight
  the calibration (Podkopaev and Ramdas, UAI 2021).
* The Kish effective sample size ``(sum w)^2 / sum w^2``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.validation import check_random_state

from sklearn_iclr26.utils._batching import batch_slices
from sklearn_iclr26.utils._random import set_child_random_state
from sklearn_iclr26.utils._sklearn_compat import _num_samples, _safe_indexing

__all__ = [
    "DomainRatio",
    "bbse_priors",
    "default_domain_classifier",
    "effective_sample_size",
    "em_priors",
    "fit_domain_ratio",
    "stack_rows",
]

#: probabilities of the domain classifier are clipped to [clip, 1 - clip]
DEFAULT_CLIP = 0.01


def default_domain_classifier():
    """A standardised logistic regression (numeric features)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


def stack_rows(A, B):
    """Rows of ``A`` then rows of ``B`` (ndarrays, sparse, DataFrames, lists)."""
    if hasattr(A, "iloc") and hasattr(B, "iloc"):
        import pandas as pd

        return pd.concat([A, B], axis=0, ignore_index=True)
    if hasattr(A, "vstack") and hasattr(B, "vstack"):  # polars
        return A.vstack(B)
    if sp.issparse(A) or sp.issparse(B):
        return sp.vstack([sp.csr_matrix(A), sp.csr_matrix(B)], format="csr")
    return np.concatenate([np.asarray(A), np.asarray(B)], axis=0)


def effective_sample_size(weights):
    """Kish effective sample size ``(sum w)^2 / sum w^2`` (0 for no weight)."""
    w = np.asarray(weights, dtype=np.float64).ravel()
    total = float(np.sum(w**2))
    return float(np.sum(w) ** 2 / total) if total > 0 else 0.0


def _auc(scores, positive):
    """Mann-Whitney AUC of ``scores`` for the rows ``positive`` (ties: 1/2)."""
    from scipy.stats import rankdata

    ranks = rankdata(scores)
    n_pos = int(positive.sum())
    n_neg = positive.shape[0] - n_pos
    return (ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


def _permutation_pvalue(scores, domain, folds, n_permutations, rng):
    """p-value of the out-of-fold AUC, labels permuted within each fold."""
    from scipy.stats import rankdata

    ranks = rankdata(scores)
    positive = domain == 1
    n_pos = int(positive.sum())
    n_neg = domain.shape[0] - n_pos
    observed = (ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)
    # one permutation per row of a (n_permutations, n) label matrix, built
    # fold by fold (each fold keeps its own number of target rows)
    exceed = 0
    for rows in batch_slices(n_permutations, 8 * domain.shape[0] * 2):
        m = rows.stop - rows.start
        rank_sums = np.zeros(m)
        for test in folds:
            k = int(positive[test].sum())
            if k == 0:
                continue
            keys = rng.uniform(size=(m, test.shape[0]))
            chosen = np.argpartition(keys, k - 1, axis=1)[:, :k]
            rank_sums += ranks[test][chosen].sum(axis=1)
        auc = (rank_sums - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)
        exceed += int(np.sum(auc >= observed - 1e-12))
    return float(observed), (1.0 + exceed) / (n_permutations + 1.0)


class DomainRatio:
    """A cross-fitted likelihood ratio ``dP_target / dP_source`` (see module).

    Built by :func:`fit_domain_ratio`. Attributes: ``source_weights``
    (out-of-fold ratio at the source rows), ``target_weights`` (out-of-fold
    ratio at the target rows), ``auc`` and ``pvalue`` (the two-sample test),
    ``estimator`` (the domain classifier refit on every row, which scores new
    rows), ``n_source``, ``n_target``, ``clip``, ``clipped_fraction`` (of the
    out-of-fold probabilities).
    """

    def __init__(self, estimator, n_source, n_target, clip):
        self.estimator = estimator
        self.n_source = int(n_source)
        self.n_target = int(n_target)
        self.clip = float(clip)

    def ratio_from_proba(self, p):
        """``p / (1 - p) * n_source / n_target`` with ``p`` clipped."""
        p = np.clip(np.asarray(p, dtype=np.float64), self.clip, 1.0 - self.clip)
        return p / (1.0 - p) * (self.n_source / self.n_target)

    def weights(self, X):
        """The ratio at new rows, from the domain classifier refit on all rows."""
        proba = np.asarray(self.estimator.predict_proba(X), dtype=np.float64)
        return self.ratio_from_proba(proba[:, 1])


def fit_domain_ratio(
    estimator,
    X_source,
    X_target,
    *,
    n_splits=5,
    clip=DEFAULT_CLIP,
    n_permutations=999,
    random_state=None,
):
    """Cross-fit a domain classifier; the ratio, its test and a final model.

    Parameters
    ----------
    estimator : classifier with ``predict_proba`` or None
        The domain classifier (cloned); ``None``:
        :func:`default_domain_classifier`.
    X_source, X_target : array-like
        Rows of the source (calibration) and target populations.
    n_splits : int, default=5
        Folds of the cross-fit, stratified by domain.
    clip : float, default=0.01
        The domain probabilities are clipped to ``[clip, 1 - clip]``.
    n_permutations : int, default=999
        Permutations of the AUC test (0: no p-value, ``nan``).
    random_state : int, RandomState instance or None, default=None
        Folds, permutations and the children's seeds.

    Returns
    -------
    ratio : DomainRatio
    """
    rng = check_random_state(random_state)
    estimator = default_domain_classifier() if estimator is None else estimator
    n_source, n_target = _num_samples(X_source), _num_samples(X_target)
    X = stack_rows(X_source, X_target)
    domain = np.r_[np.zeros(n_source, dtype=int), np.ones(n_target, dtype=int)]
    splitter = StratifiedKFold(
        n_splits=n_splits, shuffle=True, random_state=rng.randint(2**31 - 1)
    )
    oof = np.empty(domain.shape[0])
    folds = []
    for train, test in splitter.split(np.zeros(domain.shape[0]), domain):
        model = set_child_random_state(clone(estimator), rng)
        model.fit(_safe_indexing(X, train), domain[train])
        proba = np.asarray(model.predict_proba(_safe_indexing(X, test)))
        oof[test] = proba[:, list(model.classes_).index(1)]
        folds.append(test)
    final = set_child_random_state(clone(estimator), rng)
    final.fit(X, domain)
    ratio = DomainRatio(_PositiveColumn(final), n_source, n_target, clip)
    ratio.source_weights = ratio.ratio_from_proba(oof[:n_source])
    ratio.target_weights = ratio.ratio_from_proba(oof[n_source:])
    ratio.clipped_fraction = float(np.mean((oof < clip) | (oof > 1 - clip)))
    if n_permutations:
        ratio.auc, ratio.pvalue = _permutation_pvalue(
            oof, domain, folds, n_permutations, rng
        )
    else:
        ratio.auc, ratio.pvalue = _auc(oof, domain == 1), float("nan")
    return ratio


class _PositiveColumn:
    """A fitted domain classifier whose ``predict_proba`` columns are [0, 1]."""

    def __init__(self, estimator):
        self.estimator = estimator
        self._column = list(estimator.classes_).index(1)

    def predict_proba(self, X):
        p = np.asarray(self.estimator.predict_proba(X))[:, self._column]
        return np.column_stack([1.0 - p, p])


def _simplex(v):
    v = np.clip(np.asarray(v, dtype=np.float64), 0.0, None)
    total = v.sum()
    return v / total if total > 0 else np.full(v.shape[0], 1.0 / v.shape[0])


def bbse_priors(y_source, y_pred_source, y_pred_target, n_classes, *, demix=None):
    """Target class priors by black-box shift estimation (Lipton et al., 2018).

    ``C[i, k] = P_source(y_hat = i, y = k)`` from the labelled source rows and
    ``mu[i] = P_target(y_hat = i)`` from the target rows; the class weights
    ``w = pi_target / pi_source`` solve ``C w = mu`` (least squares, clipped
    at 0), and the target priors are ``w * pi_source`` renormalised.

    Parameters
    ----------
    y_source : ndarray of int, shape (n_source,)
        Class indices of the source rows (observed labels).
    y_pred_source, y_pred_target : ndarray of int
        The fixed classifier's predicted class indices.
    n_classes : int
        Number of classes.
    demix : ndarray of shape (n_classes, n_classes), default=None
        ``T^{-1}`` when the source labels are noisy with transition matrix
        ``T`` (``T[i, j] = P(observed j | true i)``, independent of ``x``):
        the noisy joint ``C~ = C T`` is de-mixed to ``C = C~ T^{-1}``.

    Returns
    -------
    target_priors, source_priors : ndarray of shape (n_classes,)
    """
    n = y_source.shape[0]
    C = np.zeros((n_classes, n_classes))
    np.add.at(C, (y_pred_source, y_source), 1.0 / n)
    if demix is not None:
        C = C @ demix
    source = _simplex(C.sum(axis=0))
    mu = np.bincount(y_pred_target, minlength=n_classes) / y_pred_target.shape[0]
    w = np.linalg.lstsq(C, mu, rcond=None)[0]
    w = np.clip(w, 0.0, None)
    return _simplex(w * source), source


def em_priors(proba_target, source_priors, *, max_iter=1000, tol=1e-8):
    """Target class priors by EM (Saerens, Latinne and Decaestecker, 2002).

    Parameters
    ----------
    proba_target : ndarray of shape (n_target, n_classes)
        Calibrated posteriors ``p_source(y | x)`` at the target rows.
    source_priors : ndarray of shape (n_classes,)
        The class priors the posteriors were fitted under.
    max_iter : int, default=1000
        Iterations at most.
    tol : float, default=1e-8
        Stop when the priors move less than this (max norm).

    Returns
    -------
    target_priors : ndarray of shape (n_classes,)
    """
    proba = np.asarray(proba_target, dtype=np.float64)
    source = np.clip(np.asarray(source_priors, dtype=np.float64), 1e-12, None)
    priors = source.copy()
    for _ in range(max_iter):
        adjusted = proba * (priors / source)[None, :]
        adjusted /= np.clip(adjusted.sum(axis=1, keepdims=True), 1e-300, None)
        new = adjusted.mean(axis=0)
        if np.max(np.abs(new - priors)) < tol:
            priors = new
            break
        priors = new
    return _simplex(priors)
