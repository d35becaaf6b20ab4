"""Conformal calibration from noisy labels (known class-conditional noise).

The correction de-mixes the calibration score distribution. Under the
class-conditional noise model ``T[i, j] = P(Y~ = j | Y = i)``, with the noisy
label independent of ``X`` given the true one, the joint distribution of
``(X, Y~)`` is a known linear mixture of that of ``(X, Y)``: for the score
``s(x, k)`` of any label ``k``,

    P(s(X, k) <= t, Y~ = j) = sum_l pi_l T[l, j] P(s(X, k) <= t | Y = l),

so with ``W = T^{-1}``, ``E[W[Y~, k] 1{s(X, k) <= t}] = P(s(X, Y) <= t, Y =
k)``. Summing over ``k`` gives an unbiased, weighted empirical CDF of the
clean-label score from noisy rows only:

    F_hat(t) = (1 / n) sum_i sum_k W[y~_i, k] 1{s(X_i, k) <= t}.

This is the de-mixed CDF of Sesia, Wang and Tong (2023, "Adaptive conformal
classification with noisy labels", arXiv:2309.05092): their ``F_hat + Delta_hat``
with ``V = M^{-1}``, ``M[k, l] = P(Y = l | Y~ = k)``, written with ``T`` so that
the class priors cancel (marginal) or are estimated from the same weights
(per class). The threshold is the split-conformal rule applied to it: the
smallest candidate score ``t`` with ``n F_hat(t) >= (n + 1) level``, which
for ``T = I`` is the ``ceil((n + 1) level)``-th smallest true-label score,
exactly. The paper's finite-sample margin ``delta`` is not applied (see the
estimators' ``label_noise`` parameter).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Real

import numpy as np

from sklearn_iclr26.utils._validation import calibration_size_ok


def noise_transition_matrix(label_noise, n_classes):
    """The ``(K, K)`` transition matrix a ``label_noise`` value stands for.

    ``None`` -> ``None``; a float ``rate`` -> symmetric noise, a label flips
    with probability ``rate`` to a uniformly random other class (the model of
    ``make_label_noise(kind="symmetric")``); an array -> checked (square of
    side ``n_classes``, non-negative, rows summing to 1, invertible).
    """
    if label_noise is None:
        return None
    K = int(n_classes)
    if isinstance(label_noise, Real) and not isinstance(label_noise, bool):
        rate = float(label_noise)
        if not 0.0 <= rate < 1.0 - 1.0 / K:
            raise ValueError(
                f"label_noise as a flip rate must be in [0, 1 - 1/n_classes) = "
                f"[0, {1 - 1 / K:.4g}) for {K} classes (at 1 - 1/n_classes the "
                f"noisy label carries no information), got {rate}."
            )
        T = np.full((K, K), rate / (K - 1))
        np.fill_diagonal(T, 1.0 - rate)
        return T
    T = np.asarray(label_noise, dtype=np.float64)
    if T.shape != (K, K):
        raise ValueError(
            f"label_noise as a transition matrix must have shape ({K}, {K}) "
            f"(one row and column per class of classes_), got {T.shape}."
        )
    if not np.all(np.isfinite(T)) or np.any(T < 0):
        raise ValueError("label_noise must have finite, non-negative entries.")
    if not np.allclose(T.sum(axis=1), 1.0, rtol=0, atol=1e-6):
        raise ValueError(
            "label_noise rows must sum to 1: T[i, j] = P(observed j | true i); "
            f"got row sums {np.round(T.sum(axis=1), 6).tolist()}."
        )
    if np.linalg.cond(T) > 1e8:
        raise ValueError(
            "label_noise is (nearly) singular: the clean-label score "
            "distribution cannot be recovered from the noisy one."
        )
    return T


def is_identity(T):
    return T is None or np.array_equal(T, np.eye(T.shape[0]))


def demixing_weights(T):
    """``W = T^{-1}`` (exactly the identity for ``T = I``)."""
    if is_identity(T):
        return np.eye(T.shape[0])
    return np.linalg.inv(T)


class DemixedCDF:
    """The weighted calibration CDF of one group, tied values merged.

    ``scores`` (n, K): every label's score on the group's calibration rows;
    ``weights`` (n, K): the de-mixing weight of each (row, label). With
    ``labels`` given, only the column of that label enters (per-class
    calibration) and the sample size is the estimated clean count of that
    class, ``sum_i W[y~_i, k]``; otherwise every column enters and the size
    is ``n``.
    """

    def __init__(self, scores, weights, label=None):
        if label is not None:
            scores = scores[:, label]
            weights = weights[:, label]
            self.n_effective = float(weights.sum())
        else:
            self.n_effective = float(scores.shape[0])
        scores = scores.ravel()
        weights = weights.ravel()
        keep = weights != 0
        scores, weights = scores[keep], weights[keep]
        order = np.argsort(scores, kind="stable")
        scores, weights = scores[order], weights[order]
        cum = np.cumsum(weights)
        if scores.size:
            last = np.r_[scores[1:] != scores[:-1], True]
            self.values = scores[last]
            cum = cum[last]
        else:
            self.values = scores
        # the running maximum: its first crossing of a level is the weighted
        # CDF's, and it makes the p-values monotone in the score
        self.cum_max = np.maximum.accumulate(cum) if cum.size else cum

    def threshold(self, level, what="calibration"):
        n = self.n_effective
        if not calibration_size_ok(int(np.floor(n + 1e-9)), level, what=what):
            return np.inf
        target = (n + 1.0) * level - 1e-12
        idx = np.searchsorted(self.cum_max, target, side="left")
        if idx >= self.values.shape[0]:
            return np.inf
        return float(self.values[idx])

    def p_values(self, scores):
        """``(n + 1 - M(s-)) / (n + 1)``, ``M`` the weighted count below ``s``.

        For ``T = I`` this is ``(1 + #{s_i >= s}) / (n + 1)``, and ``p > 1 -
        level`` iff ``s <= threshold(level)``.
        """
        n = self.n_effective
        below = np.searchsorted(self.values, scores, side="left")
        m = np.where(below > 0, self.cum_max[np.maximum(below - 1, 0)], 0.0)
        return np.clip((n + 1.0 - m) / (n + 1.0), 0.0, 1.0)
