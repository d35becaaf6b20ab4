"""Offline estimators of the per-instance flip rate rho(x).

Each returns a difficulty ``z`` (larger = harder); :func:`difficulty_to_rho`
turns it into flip rates through the same probabilization ``phi`` as the
margin estimator. The paper does not publish the formulas of its non-margin
options: these are concrete choices, documented in the user guide.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy import sparse
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.impute import SimpleImputer
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_random_state

from sklearn_iclr26.label_noise._loss import flip_rate

__all__ = ["difficulty_to_rho", "offline_difficulty"]


def _standardized(X):
    if sparse.issparse(X):
        X = X.toarray()
    X = SimpleImputer(strategy="median", keep_empty_features=True).fit_transform(X)
    return StandardScaler().fit_transform(X)


def cluster_difficulty(X, random_state):
    """``d1 / d2``: distance to the nearest k-means centroid over the second nearest.

    Near 1 means between two clusters (hard), near 0 at a centroid (easy).
    """
    Z = _standardized(X)
    n_clusters = int(min(8, max(2, Z.shape[0] // 10)))
    if Z.shape[0] < n_clusters + 1:
        return np.zeros(Z.shape[0])
    km = KMeans(n_clusters=n_clusters, n_init=3, random_state=random_state).fit(Z)
    dist = np.sort(km.transform(Z), axis=1)
    return dist[:, 0] / np.maximum(dist[:, 1], 1e-12)


def reconstruction_difficulty(X):
    """Squared PCA reconstruction error (half of the components kept)."""
    Z = _standardized(X)
    n_components = int(min(max(1, Z.shape[1] // 2), max(1, Z.shape[0] - 1)))
    if n_components >= Z.shape[1]:
        return np.zeros(Z.shape[0])
    pca = PCA(n_components=n_components, svd_solver="full").fit(Z)
    recon = pca.inverse_transform(pca.transform(Z))
    return np.sum((Z - recon) ** 2, axis=1)


def ensemble_difficulty(member_proba, y, random_state, n_members=5):
    """Disagreement ``1 - |2 p_bar - 1|`` of members fit on random halves.

    ``p_bar`` is the mean predicted probability of class 1 (soft votes) of
    ``n_members`` members; ``member_proba(rows)`` fits one member on the
    training rows ``rows`` (a random half that contains both classes) and
    returns its probability of class 1 on every training row.
    """
    rng = check_random_state(random_state)
    votes = np.zeros(len(y))
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    for _ in range(n_members):
        idx = np.concatenate(
            [
                rng.choice(pos, size=max(1, len(pos) // 2), replace=False),
                rng.choice(neg, size=max(1, len(neg) // 2), replace=False),
            ]
        )
        votes += member_proba(np.sort(idx))
    votes /= n_members
    return 1.0 - np.abs(2.0 * votes - 1.0)


def offline_difficulty(kind, y, random_state, *, Z=None, member_proba=None):
    """Difficulty ``z`` of the training rows for an offline ``rho`` option.

    ``Z`` is the numeric matrix the ``"cluster"`` and ``"reconstruction"``
    options compute on; ``member_proba`` fits an ensemble member (see
    :func:`ensemble_difficulty`).
    """
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max)
    if kind == "cluster":
        return cluster_difficulty(Z, seed)
    if kind == "reconstruction":
        return reconstruction_difficulty(Z)
    if kind == "ensemble":
        return ensemble_difficulty(member_proba, y, seed)
    raise ValueError(f"Unknown rho estimator {kind!r}.")


def difficulty_to_rho(z, beta, phi):
    """Flip rates ``phi(beta d)`` from a difficulty ``z`` (larger = harder).

    ``d = max(0, q99(z) - z) / std(z)``: the hardest 1 % get ``rho = 1/2``, the
    others decay with their standardized distance to them. Every ``phi`` is at
    most 1/2, so the mean flip rate stays below 1/2; a constant ``z`` gives the
    constant ``phi(beta)``.
    """
    z = np.asarray(z, dtype=np.float64)
    scale = np.std(z)
    if not np.isfinite(scale) or scale <= 1e-12:
        return flip_rate(np.ones_like(z), beta, phi)[0]
    d = np.maximum(np.quantile(z, 0.99) - z, 0.0) / scale
    return flip_rate(d, beta, phi)[0]
