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
exactly. With ``label_noise_correction="finite_sample"`` the rule is the
paper's, margin included: ``F_hat(t) >= level + delta`` (see
``finite_sample_margin``).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import re
import warnings
from functools import lru_cache
from numbers import Real

import numpy as np

from sklearn_iclr26.utils._validation import calibration_size_ok
from sklearn_iclr26.utils._warnings import warn_user


@lru_cache(maxsize=1024)
def _expected_one_sided_ks(n):
    """``E[max_i (i / n - U_(i))]`` for ``n`` uniforms: the paper's ``c_n``.

    The mean of the one-sided Kolmogorov-Smirnov statistic ``D_n^+``, computed
    exactly (``scipy.stats.ksone``) rather than by the reference code's Monte
    Carlo, so that it is deterministic.
    """
    from scipy import integrate, stats

    return float(integrate.quad(lambda x: stats.ksone.sf(x, n), 0, 1, limit=200)[0])


def finite_sample_margin(T, y_index, label=None):
    """The margin ``delta`` of the finite-sample noisy-label calibration.

    Marginal (``label=None``): Sesia, Wang and Tong's, as their reference code
    (``compute_delta_const_marginal``), with ``V = M^{-1}``, ``M[k, l] = P(Y =
    l | Y~ = k)`` built from ``T`` and the class priors (the noisy prior from
    the rows' noisy labels ``y_index``, the clean one ``T^{-T}`` times it):
    ``c_n + coeff min(K^2 sqrt(pi/2), 1/sqrt(n_min) + sqrt((log(2 K^2) + log
    n_min) / 2))``, ``coeff = (2 max_k sum_{l != k} |V[k, l]| + sum_k |pi_k -
    pi~_k|) / sqrt(n_min)``, ``n_min`` the smallest noisy class count.

    Per class (``label=k``): derived for class ``k`` alone, from its own row
    of ``V`` and each noisy class's own count. The de-mixed CDF of class
    ``k`` is ``H_k(t) = sum_l V[k, l] G_kl(t)``, ``G_kl`` the CDF of the
    label-``k`` score on the rows of noisy class ``l``, estimated by the
    empirical CDF of its ``n_l`` rows. The estimate is above the truth by at
    most ``sum_l |V[k, l]| D_l``, ``D_l`` the one-sided Kolmogorov-Smirnov
    deviation of class ``l``'s empirical CDF (in the direction the sign of
    ``V[k, l]`` makes harmful), whose mean is ``c_{n_l}``. So ``delta_k =
    sum_l |V[k, l]| c_{n_l}`` makes the expected clean coverage of class
    ``k`` at least the level (the fluctuation of the class counts that
    estimate the priors in ``V`` is not in the bound; it is of the same
    order and averages out). Without noise it is ``c_{n_k}``. The margin of
    a rare class is large: its de-mixed CDF is a difference of large terms.

    ``inf`` when a noisy class is absent or the estimated clean prior is not
    positive.
    """
    K = T.shape[0]
    counts = np.bincount(y_index, minlength=K).astype(float)
    n = counts.sum()
    n_min = counts.min()
    W = demixing_weights(T)
    if label is not None:
        col = W[:, label] * counts
        if col.sum() <= 0:
            return np.inf
        V_row = col / col.sum()
        used = V_row != 0
        if np.any(counts[used] <= 0):
            return np.inf
        c = np.array([_expected_one_sided_ks(int(m)) if m > 0 else 0.0 for m in counts])
        return float(np.sum(np.abs(V_row[used]) * c[used]))
    if n_min <= 0:
        return np.inf
    prior_noisy = counts / n
    prior = W.T @ prior_noisy
    if np.any(prior <= 0):
        return np.inf
    V = W.T * prior_noisy[None, :] / prior[:, None]
    off = np.abs(V).sum(axis=1) - np.abs(np.diag(V))
    c = _expected_one_sided_ks(int(n))
    coeff = (2.0 * off.max() + np.abs(prior - prior_noisy).sum()) / np.sqrt(n_min)
    k_pow = K**2
    term = min(
        k_pow * np.sqrt(np.pi / 2),
        1.0 / np.sqrt(n_min) + np.sqrt((np.log(2 * k_pow) + np.log(n_min)) / 2),
    )
    return float(c + coeff * term)


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
            f"(one row and column per class of classes_), or (B, {K}, {K}) "
            f"for B plausible matrices, got {T.shape}."
        )
    return _check_matrix(T, "label_noise")


def _check_matrix(T, name):
    if not np.all(np.isfinite(T)) or np.any(T < 0):
        raise ValueError(f"{name} must have finite, non-negative entries.")
    if not np.allclose(T.sum(axis=1), 1.0, rtol=0, atol=1e-6):
        raise ValueError(
            f"{name} rows must sum to 1: T[i, j] = P(observed j | true i); "
            f"got row sums {np.round(T.sum(axis=1), 6).tolist()}."
        )
    if np.linalg.cond(T) > 1e8:
        raise ValueError(
            f"{name} is (nearly) singular: the clean-label score "
            "distribution cannot be recovered from the noisy one."
        )
    return T


def noise_transition_matrices(label_noise, n_classes):
    """``(T, samples)``: the matrix ``label_noise`` stands for, and its samples.

    A ``(B, K, K)`` array is ``B`` plausible transition matrices (e.g.
    bootstrap replicates of an estimate): each is checked as a single
    matrix (the error names the first bad one), ``samples`` is the
    array and ``T`` their entrywise mean (the first matrix when all are
    equal, bit for bit). Otherwise ``samples`` is ``None`` and ``T`` is
    :func:`noise_transition_matrix`'s.
    """
    if label_noise is None:
        return None, None
    is_number = isinstance(label_noise, Real) and not isinstance(label_noise, bool)
    if is_number or np.ndim(label_noise) != 3:
        return noise_transition_matrix(label_noise, n_classes), None
    K = int(n_classes)
    samples = np.asarray(label_noise, dtype=np.float64)
    if samples.shape[0] < 1 or samples.shape[1:] != (K, K):
        raise ValueError(
            f"label_noise as plausible transition matrices must have shape (B, "
            f"{K}, {K}) with B >= 1 (one row and column per class of classes_), "
            f"got {samples.shape}."
        )
    for b in range(samples.shape[0]):
        _check_matrix(samples[b], f"label_noise[{b}]")
    if np.all(samples == samples[0]):
        T = samples[0].copy()
    else:
        T = samples.mean(axis=0)
    return T, samples


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

    def __init__(self, scores, weights, label=None, margin=None):
        self.margin = margin
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
        if self.margin is not None:
            target = n * (level + self.margin) - 1e-12
            idx = np.searchsorted(self.cum_max, target, side="left")
            # an infinite margin (a class with no estimated clean rows) is
            # out of reach too: n <= 0 made the target -inf, index 0 before
            if not np.isfinite(self.margin) or idx >= self.values.shape[0]:
                warn_user(
                    f"The finite-sample margin of the noisy-label calibration "
                    f"({what}) is {self.margin:.3g}: level + margin = "
                    f"{level + self.margin:.3g} is out of reach with these "
                    "calibration rows, so the threshold is infinite (every label "
                    "in the sets). Use more calibration data or "
                    'label_noise_correction="plugin".'
                )
                return np.inf
            return float(self.values[idx])
        if not calibration_size_ok(int(np.floor(n + 1e-9)), level, what=what):
            return np.inf
        target = (n + 1.0) * level - 1e-12
        idx = np.searchsorted(self.cum_max, target, side="left")
        if idx >= self.values.shape[0]:
            return np.inf
        return float(self.values[idx])

    def p_values(self, scores):
        """p-values that reproduce the sets: ``p > 1 - level`` iff in the set.

        With a margin, ``1 + delta - M(s-) / n`` (``M`` the weighted count
        below ``s``): the level shift of the margin moved into the p-value.
        """
        if self.margin is None:
            return self._p_values(scores)
        n = self.n_effective
        m = self._weight_below(scores)
        return np.clip(1.0 + self.margin - m / n, 0.0, 1.0)

    def _weight_below(self, scores):
        below = np.searchsorted(self.values, scores, side="left")
        return np.where(below > 0, self.cum_max[np.maximum(below - 1, 0)], 0.0)

    def _p_values(self, scores):
        """``(n + 1 - M(s-)) / (n + 1)``, ``M`` the weighted count below ``s``.

        For ``T = I`` this is ``(1 + #{s_i >= s}) / (n + 1)``, and ``p > 1 -
        level`` iff ``s <= threshold(level)``.
        """
        n = self.n_effective
        m = self._weight_below(scores)
        return np.clip((n + 1.0 - m) / (n + 1.0), 0.0, 1.0)


class ConservativeDemixedCDF:
    """The de-mixed CDFs of one group under several plausible ``T``.

    The threshold is the largest member threshold (the most conservative
    of the plausible matrices, so the sets are the union of the members'
    sets) and the p-value the largest member p-value: ``p > 1 - level``
    iff some member's set holds the label, iff it is in the union. With
    identical members it is that member, bit for bit. A warning the
    members raise is raised once per kind (the first member's numbers).
    """

    def __init__(self, members):
        self.members = members

    def member_thresholds(self, level, what="calibration"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = np.array([m.threshold(level, what) for m in self.members])
        seen = set()
        for w in caught:
            # one warning per kind (the members' numbers differ)
            key = (w.category, re.sub(r"-?[0-9.]+", "#", str(w.message)))
            if key not in seen:
                seen.add(key)
                warn_user(str(w.message), w.category)
        return out

    def threshold(self, level, what="calibration"):
        return float(np.max(self.member_thresholds(level, what)))

    def p_values(self, scores):
        return np.max([m.p_values(scores) for m in self.members], axis=0)

    def _p_values(self, scores):
        return np.max([m._p_values(scores) for m in self.members], axis=0)
