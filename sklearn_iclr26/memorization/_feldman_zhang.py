"""Subsampled Feldman-Zhang memorization estimate (ground truth for evaluation)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.utils.validation import check_random_state, check_X_y

from sklearn_iclr26.utils._random import set_child_random_state
from sklearn_iclr26.utils._sklearn_compat import HasMethods, Interval, validate_params
from sklearn_iclr26.utils._validation import N_JOBS_CONSTRAINT
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["feldman_zhang_memorization"]


def _fit_one(estimator, X, y, in_mask, seed):
    model = set_child_random_state(clone(estimator), seed)
    model.fit(X[in_mask], y[in_mask])
    return model.predict(X) == y


@validate_params(
    {
        "estimator": [HasMethods(["fit", "predict"])],
        "X": ["array-like"],
        "y": ["array-like"],
        "n_models": [Interval(Integral, 2, None, closed="left")],
        "subset_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=False,
)
def feldman_zhang_memorization(
    estimator,
    X,
    y,
    *,
    n_models=200,
    subset_fraction=0.7,
    n_jobs=None,
    random_state=None,
):
    """Subsampled Feldman-Zhang memorization estimate of every row.

    ``mem_i = P[f_S(x_i) = y_i | i in S] - P[f_S(x_i) = y_i | i not in S]``
    (Feldman & Zhang, 2020), estimated from ``n_models`` fits of ``estimator``
    on random subsets ``S`` holding ``subset_fraction`` of the rows: the mean
    correctness on row ``i`` over the fits that contain it minus the mean over
    those that leave it out. It costs ``n_models`` fits; the memorization
    proxies of this family are compared with it.

    Read more in the :ref:`User Guide <memorization>`.

    Parameters
    ----------
    estimator : estimator
        Classifier, cloned for every fit (its unset ``random_state`` seeded).
    X : array-like of shape (n_samples, n_features)
        Data.
    y : array-like of shape (n_samples,)
        Labels (possibly noisy: memorization is of the given labels).
    n_models : int, default=200
        Number of subset fits.
    subset_fraction : float in (0, 1), default=0.7
        Fraction of rows in each subset.
    n_jobs : int or None, default=None
        Parallel fits through joblib.
    random_state : int, RandomState instance or None, default=None
        Seeds the subsets and the fits.

    Returns
    -------
    memorization : ndarray of shape (n_samples,)
        The estimate; ``NaN`` for a row that was never in, or never out of, a
        subset (a warning says how many).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_iclr26.memorization import feldman_zhang_memorization
    >>> X, y = load_iris(return_X_y=True)
    >>> mem = feldman_zhang_memorization(DecisionTreeClassifier(), X, y,
    ...                                  n_models=20, random_state=0)
    >>> mem.shape
    (150,)
    """
    X, y = check_X_y(X, y, accept_sparse=["csr"])
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 is not allowed; use None or -1.")
    rng = check_random_state(random_state)
    n = X.shape[0]
    n_in = round(subset_fraction * n)
    if not 1 <= n_in < n:
        raise ValueError(
            f"subset_fraction={subset_fraction} gives {n_in} of {n} rows per subset; "
            "each subset needs at least one row in and one out."
        )
    masks = np.zeros((n_models, n), dtype=bool)
    seeds = []
    for k in range(n_models):
        masks[k, rng.choice(n, size=n_in, replace=False)] = True
        seeds.append(int(rng.randint(np.iinfo(np.int32).max)))
    correct = Parallel(n_jobs=n_jobs)(
        delayed(_fit_one)(estimator, X, y, masks[k], seeds[k]) for k in range(n_models)
    )
    correct = np.asarray(correct, dtype=float)
    n_in_count = masks.sum(axis=0)
    n_out_count = n_models - n_in_count
    with np.errstate(invalid="ignore", divide="ignore"):
        acc_in = (correct * masks).sum(axis=0) / n_in_count
        acc_out = (correct * ~masks).sum(axis=0) / n_out_count
    mem = acc_in - acc_out
    missing = int(np.sum((n_in_count == 0) | (n_out_count == 0)))
    if missing:
        mem[(n_in_count == 0) | (n_out_count == 0)] = np.nan
        warn_user(
            f"{missing} rows were never in (or never out of) a subset; their "
            "estimate is NaN. Increase n_models."
        )
    return mem
