"""The two-type (easy/hard problems) model of resampling with a verifier."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np

from sklearn_iclr26.utils._sklearn_compat import Interval, validate_params

__all__ = ["TwoTypeResamplingModel"]


def _notebook_reward(model, K):
    """The expected reward as written in the authors' notebook (approximate).

    ``EV_K = sum_{k<=K} [sum_i pi_i^(k) value_i] [sum_i beta_i^(k-1) pi_i^(k)]``
    with the posterior ``pi_i^(k) ~ prior_i beta_i^(k-1)`` after ``k - 1``
    rejections: the survival factor is applied to the posterior rather than to
    the prior. Kept private, to document the difference with the exact
    :meth:`TwoTypeResamplingModel.expected_reward`.
    """
    total = 0.0
    for k in range(1, int(K) + 1):
        post = model._prior * model._beta ** (k - 1)
        post = post / post.sum()
        total += float(post @ model._value) * float(post @ model._beta ** (k - 1))
    return total


class TwoTypeResamplingModel:
    """Exact expected reward of resampling on easy and hard problems.

    The two-type model of Stroebl et al. (ICLR 2026): a share ``prior[i]`` of
    problems has single-sample success rate ``success_rates[i]``; a verifier
    with completeness ``c`` (accepts a correct sample) and soundness ``s``
    (rejects a wrong one) rejects a sample with probability
    ``beta_i = (1 - c) r_i + s (1 - r_i)``. Drawing up to ``K`` samples and
    submitting the first accepted one earns, exactly,

    ``R(K) = sum_i prior_i [tp_reward c r_i - fp_penalty (1 - s)(1 - r_i)]
    (1 - beta_i^K) / (1 - beta_i)``.

    The authors' notebook applies the survival factor to the posterior after
    ``k - 1`` rejections instead of the prior, a close approximation (0.464
    instead of 0.461 at ``K = 3`` with the Llama-3.1-8B parameters); this class
    computes the exact value.

    Not an estimator (nothing is fitted): the curve and ``k_opt_`` are computed
    at construction. :meth:`from_counts` calibrates it as the notebook does.

    Read more in the :ref:`User Guide <inference>`.

    Parameters
    ----------
    success_rates : array-like of shape (n_types,), default=(0.87, 0.13)
        ``r_i``, single-sample success rate of each type.
    prior : array-like of shape (n_types,), default=(0.58, 0.42)
        Share of problems of each type (sums to 1).
    completeness : float, default=1.0
        ``P(accept | correct)``.
    soundness : float, default=0.75
        ``P(reject | wrong)``.
    tp_reward : float, default=1.0
        Reward of a correct submission.
    fp_penalty : float, default=1.0
        Penalty of a wrong submission (``>= 0``).
    k_max : int, default=200
        Largest ``K`` of ``reward_curve_``.

    Attributes
    ----------
    reward_curve_ : ndarray of shape (k_max + 1,)
        ``R(K)`` for ``K = 0..k_max``.
    k_opt_ : int
        ``argmax_K R(K)`` (``0`` = abstain).
    max_reward_ : float
        ``R(k_opt_)``.

    Examples
    --------
    >>> from sklearn_iclr26.inference import TwoTypeResamplingModel
    >>> model = TwoTypeResamplingModel(fp_penalty=1.0)
    >>> round(model.expected_reward(3), 3)
    0.461
    >>> model.k_opt_
    2
    """

    @validate_params(
        {
            "success_rates": ["array-like"],
            "prior": ["array-like"],
            "completeness": [Interval(Real, 0, 1, closed="both")],
            "soundness": [Interval(Real, 0, 1, closed="both")],
            "tp_reward": [Interval(Real, 0, None, closed="left")],
            "fp_penalty": [Interval(Real, 0, None, closed="left")],
            "k_max": [Interval(Integral, 1, None, closed="left")],
        },
        prefer_skip_nested_validation=True,
    )
    def __init__(
        self,
        success_rates=(0.87, 0.13),
        prior=(0.58, 0.42),
        *,
        completeness=1.0,
        soundness=0.75,
        tp_reward=1.0,
        fp_penalty=1.0,
        k_max=200,
    ):
        r = np.asarray(success_rates, dtype=np.float64)
        w = np.asarray(prior, dtype=np.float64)
        if r.ndim != 1 or r.shape != w.shape or r.size == 0:
            raise ValueError(
                "success_rates and prior must be 1-D of the same length, got "
                f"{r.shape} and {w.shape}."
            )
        if np.any((r < 0) | (r > 1)) or np.any(w < 0) or not np.isclose(w.sum(), 1):
            raise ValueError(
                "success_rates must lie in [0, 1] and prior be non-negative and "
                "sum to 1."
            )
        self.success_rates = success_rates
        self.prior = prior
        self.completeness = completeness
        self.soundness = soundness
        self.tp_reward = tp_reward
        self.fp_penalty = fp_penalty
        self.k_max = k_max
        self._prior = w
        self._beta = (1 - completeness) * r + soundness * (1 - r)
        self._value = tp_reward * completeness * r - fp_penalty * (1 - soundness) * (
            1 - r
        )
        self.reward_curve_ = self.expected_reward(np.arange(k_max + 1))
        self.k_opt_ = int(np.argmax(self.reward_curve_))
        self.max_reward_ = float(self.reward_curve_[self.k_opt_])

    def __repr__(self):
        return (
            f"{type(self).__name__}(success_rates={self.success_rates!r}, "
            f"prior={self.prior!r}, completeness={self.completeness!r}, "
            f"soundness={self.soundness!r}, tp_reward={self.tp_reward!r}, "
            f"fp_penalty={self.fp_penalty!r}, k_max={self.k_max!r})"
        )

    def expected_reward(self, K):
        """Exact ``R(K)``: expected reward with up to ``K`` samples.

        Parameters
        ----------
        K : int or array-like of int
            Numbers of samples (non-negative).

        Returns
        -------
        reward : float or ndarray
            Of the shape of ``K``.
        """
        K = np.asarray(K)
        if np.any(K < 0) or not np.all(K == np.round(K)):
            raise ValueError("K must hold non-negative integers.")
        flat = K.ravel().astype(np.float64)
        beta = self._beta[:, None]
        # sum_{j<K} beta^j, = K where beta == 1
        with np.errstate(divide="ignore", invalid="ignore"):
            geometric = np.where(
                beta < 1, (1 - beta ** flat[None, :]) / (1 - beta), flat[None, :]
            )
        out = (self._prior * self._value) @ geometric
        return out.reshape(K.shape) if K.shape else float(out[0])

    @classmethod
    def from_counts(
        cls, n_samples, n_accept, n_true_pos, *, easy_threshold=0.5, **kwargs
    ):
        """Calibrate the model from per-problem counts, as the authors' notebook.

        Problems whose true success rate ``n_true_pos / n_samples`` exceeds
        ``easy_threshold`` are "easy"; ``r_i`` is the mean success rate of each
        type, ``prior`` the share of easy problems, completeness 1 (the paper
        drops problems with false negatives, so every correct sample is
        accepted), and soundness ``s = P(reject, wrong) / P(wrong)`` =
        ``(1 - mean(pass rate)) / (1 - mean(success rate))``.

        Parameters
        ----------
        n_samples : array-like of shape (n_problems,)
            Samples drawn per problem.
        n_accept : array-like of shape (n_problems,)
            Samples the verifier accepted.
        n_true_pos : array-like of shape (n_problems,)
            Accepted samples that are correct.
        easy_threshold : float, default=0.5
            Success-rate threshold of the easy type.
        **kwargs : dict
            ``tp_reward``, ``fp_penalty``, ``k_max``.

        Returns
        -------
        model : TwoTypeResamplingModel
            The calibrated model.

        Examples
        --------
        >>> from sklearn_iclr26.inference import TwoTypeResamplingModel
        >>> model = TwoTypeResamplingModel.from_counts(
        ...     [10, 10, 10, 10], [10, 9, 6, 2], [9, 8, 1, 0])
        >>> [round(float(r), 2) for r in model.success_rates]
        [0.85, 0.05]
        """
        n = np.asarray(n_samples, dtype=np.float64)
        m = np.asarray(n_accept, dtype=np.float64)
        tp = np.asarray(n_true_pos, dtype=np.float64)
        if not (n.ndim == m.ndim == tp.ndim == 1) or not (
            n.shape == m.shape == tp.shape
        ):
            raise ValueError(
                "n_samples, n_accept and n_true_pos must be 1-D, same length."
            )
        if n.size == 0 or np.any(n <= 0):
            raise ValueError("Every problem needs at least one sample (n_samples > 0).")
        if np.any(m < 0) or np.any(m > n) or np.any(tp < 0) or np.any(tp > m):
            raise ValueError(
                "Counts must satisfy 0 <= n_true_pos <= n_accept <= n_samples."
            )
        success = tp / n
        passed = m / n
        easy = success > easy_threshold
        groups = [g for g in (easy, ~easy) if g.any()]
        rates = tuple(float(success[g].mean()) for g in groups)
        prior = tuple(float(g.mean()) for g in groups)
        wrong = 1.0 - success.mean()
        if wrong <= 0:
            soundness = 1.0
        else:
            # P(reject, wrong) = 1 - P(accept) when every correct sample is accepted
            soundness = (1.0 - passed.mean()) / wrong
        return cls(
            rates,
            prior,
            completeness=1.0,
            soundness=float(np.clip(soundness, 0.0, 1.0)),
            **kwargs,
        )
