"""Limits of inference scaling by resampling with an imperfect verifier.

Stroebl, Kapoor, Narayanan, *The Limits of Inference Scaling Through
Resampling* (ICLR 2026, arXiv:2411.17501).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, _fit_context
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["ResamplingUtilityEstimator"]

_RECORDS = "per-sample binary records `accepted` and `correct`"


def _binary(values, name):
    values = np.asarray(values)
    if np.iscomplexobj(values):
        raise ValueError(f"Complex data not supported: {name} must hold 0/1.")
    if values.dtype == bool:
        return values.astype(np.float64)
    try:
        values = values.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"ResamplingUtilityEstimator.fit needs {_RECORDS}: {name} must hold "
            "0/1 (or booleans)."
        ) from None
    finite = values[~np.isnan(values)]
    if not np.all((finite == 0) | (finite == 1)):
        raise ValueError(
            f"ResamplingUtilityEstimator.fit needs {_RECORDS} (0/1, NaN only as "
            f"padding of a 2-D layout): {name} holds other values."
        )
    return values


def _per_problem_counts(accepted, correct, groups):
    """``(groups, n_t, m_t, tp_t)`` from 1-D records with ids or a 2-D layout."""
    accepted = _binary(accepted, "accepted")
    correct = _binary(correct, "correct")
    if accepted.shape != correct.shape:
        raise ValueError(
            f"accepted and correct must have the same shape, got {accepted.shape} "
            f"and {correct.shape}."
        )
    if accepted.ndim == 2:
        if groups is not None:
            raise ValueError(
                "groups must be None with the 2-D layout (one row per problem)."
            )
        if not np.array_equal(np.isnan(accepted), np.isnan(correct)):
            raise ValueError("accepted and correct must have NaN at the same places.")
        present = ~np.isnan(accepted)
        n = present.sum(axis=1)
        if accepted.shape[0] == 0 or np.any(n == 0):
            raise ValueError(
                "Every problem (row) needs at least one sample; empty problems: "
                f"{np.flatnonzero(n == 0)[:10].tolist()}."
            )
        m = np.nansum(accepted, axis=1)
        tp = np.nansum(accepted * correct, axis=1)
        return np.arange(accepted.shape[0]), n, m, tp
    if accepted.ndim != 1:
        raise ValueError(
            "accepted must be 1-D (one entry per sample, with groups) or 2-D "
            f"(problems x samples, NaN padded), got shape {accepted.shape}."
        )
    if np.any(np.isnan(accepted)) or np.any(np.isnan(correct)):
        raise ValueError("1-D records must not contain NaN.")
    if groups is None:
        raise ValueError(
            "With 1-D records, groups (the problem id of each sample) is required."
        )
    groups = np.asarray(groups)
    if groups.ndim != 1 or groups.shape[0] != accepted.shape[0]:
        raise ValueError(
            f"groups must be 1-D with one id per sample ({accepted.shape[0]}), got "
            f"shape {groups.shape}."
        )
    if accepted.shape[0] == 0:
        raise ValueError("No samples: every problem needs at least one sample.")
    ids, inverse = np.unique(groups, return_inverse=True)
    n = np.bincount(inverse, minlength=ids.size)
    m = np.bincount(inverse, weights=accepted, minlength=ids.size)
    tp = np.bincount(inverse, weights=accepted * correct, minlength=ids.size)
    return ids, n, m, tp


def _no_accept_survival(n, m, ks, sampling):
    """``P(no accepted sample among the first k draws)``, shape (T, len(ks)).

    With replacement ``(1 - p)^k``; without replacement (a random permutation
    of the finite pool) ``C(n - m, k) / C(n, k)``, 0 once ``k > n - m``.
    """
    ks = np.asarray(ks, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)[:, None]
    m = np.asarray(m, dtype=np.float64)[:, None]
    if sampling == "with_replacement":
        return (1.0 - m / n) ** ks[None, :]
    from scipy.special import gammaln

    good = (n - m) >= ks[None, :]
    with np.errstate(invalid="ignore"):
        log_ratio = (
            gammaln(np.maximum(n - m + 1, 1))
            - gammaln(np.maximum(n - m - ks + 1, 1))
            - gammaln(n + 1)
            + gammaln(np.maximum(n - ks + 1, 1))
        )
    out = np.where(good, np.exp(np.where(good, log_ratio, 0.0)), 0.0)
    # no accepted sample at all: never accepted, however many draws
    return np.where(m == 0, 1.0, out)


def _expected_draws(n, m, ks, sampling):
    """Expected number of samples drawn by "stop at the first acceptance"."""
    ks = np.asarray(ks, dtype=np.int64)
    n = np.asarray(n, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    if sampling == "with_replacement":
        p = (m / n)[:, None]
        kk = ks[None, :].astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            draws = np.where(p > 0, (1.0 - (1.0 - p) ** kk) / p, kk)
        return draws
    # sum_{j < min(k, n)} P(no acceptance in the first j draws)
    top = int(max(ks.max(), 0))
    js = np.arange(top)
    survival = _no_accept_survival(n, m, js, sampling) * (js[None, :] < n[:, None])
    cumulative = np.concatenate(
        [np.zeros((n.size, 1)), np.cumsum(survival, axis=1)], axis=1
    )
    return cumulative[:, ks]


class ResamplingUtilityEstimator(BaseEstimator):
    """Accuracy, false positives and utility of resampling under a verifier.

    A generator is sampled up to ``k`` times per problem; the first sample an
    imperfect verifier accepts is submitted; if none is accepted the system
    abstains (reward 0). From per-sample records of a finite pool (accepted by
    the verifier, truly correct) this estimates per problem the pass rate
    ``p_t`` and the precision ``q_t = P(correct | accepted)``, and the closed
    form curves of Stroebl et al. (ICLR 2026), for ``k = 0..k_max``:
    ``Acc(k) = mean_t q_t h_t(k)``, ``FP(k) = mean_t (1 - q_t) h_t(k)`` and
    ``U(k) = tp_reward Acc(k) - fp_penalty FP(k) - cost_per_sample
    E[draws](k)``, with ``h_t(k) = P(some accepted sample among k draws)``.
    Resampling never lowers the false-positive share of what is submitted, so
    accuracy is capped by ``Acc(inf) = mean_t q_t 1[p_t > 0]``
    (``accuracy_ceiling_``; the paper's figures plot the mean of ``q_t`` over
    the problems with an accepted sample, ``conditional_accuracy_ceiling_``),
    and with a penalty the best ``k`` is finite (``0`` = abstain).

    It estimates quantities, it does not predict: the records come from any
    generator/verifier pair, e.g. labels sampled from a classifier's
    ``predict_proba`` checked by a second model.

    Read more in the :ref:`User Guide <inference>`.

    Parameters
    ----------
    tp_reward : float, default=1.0
        Reward of a correct submitted answer (``V_TP >= 0``).
    fp_penalty : float, default=1.0
        Penalty of a wrong submitted answer (``V_FP >= 0``; the paper uses
        0, 1, 2, 4, 8 with ``tp_reward=1``).
    cost_per_sample : float, default=0.0
        Cost of each generated sample (0 in the paper).
    k_max : int, default=200
        Largest number of samples in the curves (the paper's ``K_max``).
    sampling : {"with_replacement", "without_replacement"}, \
            default="with_replacement"
        ``"with_replacement"``: i.i.d. draws, ``h_t(k) = 1 - (1 - p_t)^k``;
        ``"without_replacement"``: random permutations of each problem's
        finite pool, as in the authors' simulation,
        ``h_t(k) = 1 - C(n_t - m_t, k) / C(n_t, k)``.
    verbose : int, default=0
        Print the per-problem summary and the optimal ``k`` when positive.

    Attributes
    ----------
    problems_ : ndarray of shape (n_problems,)
        Problem ids (the sorted unique ``groups``, or row numbers).
    n_samples_per_problem_ : ndarray of shape (n_problems,)
        Pool size ``n_t``.
    pass_rate_ : ndarray of shape (n_problems,)
        ``p_t``: share of samples the verifier accepts.
    precision_ : ndarray of shape (n_problems,)
        ``q_t``: share of accepted samples that are correct (0 if none).
    accuracy_curve_ : ndarray of shape (k_max + 1,)
        ``Acc(k)`` for ``k = 0..k_max``.
    false_positive_curve_ : ndarray of shape (k_max + 1,)
        ``FP(k)``: share of problems answered wrongly.
    utility_curve_ : ndarray of shape (k_max + 1,)
        ``U(k)``.
    k_opt_ : int
        ``argmax_k U(k)`` (smallest on ties); ``0`` means abstain.
    max_utility_ : float
        ``U(k_opt_)``.
    accuracy_ceiling_ : float
        ``Acc(inf) = mean_t q_t 1[p_t > 0]``: the limit of ``accuracy_curve_``,
        over every problem (one with no accepted sample counts as 0). It
        equals the lower ("worst case") error bar of the paper's ceiling.
    conditional_accuracy_ceiling_ : float
        ``mean_{t: p_t > 0} q_t``: the mean precision over the problems with
        at least one accepted sample (``NaN`` if there is none). This is the
        ceiling the paper's figures plot (its "conditional pass@1", a pandas
        mean that skips the problems with no accepted sample); it is higher
        than ``accuracy_ceiling_`` when some problems are hopeless (0.704
        against 0.670 on a pool with 8 of 164).

    See Also
    --------
    TwoTypeResamplingModel : Exact expected reward in the two-type model.

    References
    ----------
    Stroebl, Kapoor, Narayanan. The Limits of Inference Scaling Through
    Resampling. ICLR 2026, arXiv:2411.17501.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.inference import ResamplingUtilityEstimator
    >>> accepted = np.array([1, 1, 0, 0, 1, 0, 1, 1])
    >>> correct = np.array([1, 1, 0, 0, 0, 0, 1, 0])
    >>> groups = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    >>> est = ResamplingUtilityEstimator(fp_penalty=1.0, k_max=10)
    >>> est = est.fit(accepted, correct, groups)
    >>> est.pass_rate_, est.precision_
    (array([0.5 , 0.75]), array([1.        , 0.33333333]))
    >>> round(est.accuracy_ceiling_, 4), round(est.conditional_accuracy_ceiling_, 4)
    (0.6667, 0.6667)
    >>> int(est.k_opt_)
    10
    """

    _parameter_constraints = {
        "tp_reward": [Interval(Real, 0, None, closed="left")],
        "fp_penalty": [Interval(Real, 0, None, closed="left")],
        "cost_per_sample": [Interval(Real, 0, None, closed="left")],
        "k_max": [Interval(Integral, 1, None, closed="left")],
        "sampling": [StrOptions({"with_replacement", "without_replacement"})],
        "verbose": ["verbose"],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # the input is per-sample records (1-D, with problem ids), not a feature
        # matrix: scikit-learn's data checks, which feed random features, do not
        # apply (tests/test_inference.py runs the API checks)
        tags.input_tags.two_d_array = False
        tags.input_tags.one_d_array = True
        tags.input_tags.allow_nan = True
        return tags

    def __init__(
        self,
        *,
        tp_reward=1.0,
        fp_penalty=1.0,
        cost_per_sample=0.0,
        k_max=200,
        sampling="with_replacement",
        verbose=0,
    ):
        store_params(self, locals())

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, accepted, correct=None, groups=None):
        """Per-problem rates and the closed-form curves.

        Parameters
        ----------
        accepted : array-like of shape (n_samples,) or (n_problems, n_pool)
            1 where the verifier accepted the sample. 1-D with ``groups``, or
            2-D with one row per problem (``NaN`` pads shorter pools).
        correct : array-like of the shape of ``accepted``
            1 where the sample is truly correct (ground truth). Remove problems
            whose verifier rejects correct samples beforehand if the verifier
            is meant to be complete (the paper does).
        groups : array-like of shape (n_samples,) or None, default=None
            Problem id of each sample (1-D layout only).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        if correct is None:
            raise ValueError(f"ResamplingUtilityEstimator.fit needs {_RECORDS}.")
        ids, n, m, tp = _per_problem_counts(accepted, correct, groups)
        self.problems_ = ids
        self.n_samples_per_problem_ = n.astype(np.int64)
        self._n_accepted = m
        self.pass_rate_ = m / n
        with np.errstate(invalid="ignore", divide="ignore"):
            self.precision_ = np.where(m > 0, tp / np.maximum(m, 1), 0.0)
        log_progress(
            self,
            f"{ids.size} problems, {int(n.sum())} samples; mean pass rate "
            f"{self.pass_rate_.mean():.4g}, mean precision "
            f"{self.precision_.mean():.4g}",
        )
        ks = np.arange(self.k_max + 1)
        h, _, _ = self._acceptance(ks)  # (n_problems, k_max + 1), computed once
        q = self.precision_
        self.accuracy_curve_ = q @ h / q.size
        self.false_positive_curve_ = (1.0 - q) @ h / q.size
        self.utility_curve_ = (
            self.tp_reward * self.accuracy_curve_
            - self.fp_penalty * self.false_positive_curve_
        )
        if self.cost_per_sample > 0:
            draws = _expected_draws(n, m, ks, self.sampling)
            self.utility_curve_ = self.utility_curve_ - self.cost_per_sample * (
                draws.mean(axis=0)
            )
        self.k_opt_ = int(np.argmax(self.utility_curve_))
        self.max_utility_ = float(self.utility_curve_[self.k_opt_])
        self.accuracy_ceiling_ = float(np.mean(self.precision_ * (self.pass_rate_ > 0)))
        solvable = self.pass_rate_ > 0
        self.conditional_accuracy_ceiling_ = (
            float(np.mean(self.precision_[solvable])) if solvable.any() else np.nan
        )
        log_progress(
            self,
            f"curves for k = 0..{self.k_max} ({self.sampling}): k_opt {self.k_opt_}, "
            f"utility {self.max_utility_:.4g}, accuracy ceiling "
            f"{self.accuracy_ceiling_:.4g}",
        )
        return self

    def _acceptance(self, k):
        k = np.asarray(k)
        if not np.issubdtype(k.dtype, np.integer) and not np.all(k == np.round(k)):
            raise ValueError("k must hold non-negative integers.")
        k = k.astype(np.int64)
        if np.any(k < 0):
            raise ValueError("k must hold non-negative integers.")
        flat = k.ravel()
        h = 1.0 - _no_accept_survival(
            self.n_samples_per_problem_, self._n_accepted, flat, self.sampling
        )
        return h, k.shape, flat

    def _problem_mean(self, value, k, cost=0.0):
        # mean over problems of value_t * P(some sample accepted within k),
        # minus ``cost`` per expected draw; shaped like ``k``
        h, shape, flat = self._acceptance(k)
        out = (value[:, None] * h).mean(axis=0)
        if cost > 0:
            draws = _expected_draws(
                self.n_samples_per_problem_, self._n_accepted, flat, self.sampling
            )
            out = out - cost * draws.mean(axis=0)
        return out.reshape(shape) if shape else float(out[0])

    def accuracy(self, k):
        """``Acc(k)``: share of problems answered correctly with up to ``k`` samples.

        Parameters
        ----------
        k : int or array-like of int
            Numbers of samples (any non-negative integers).

        Returns
        -------
        accuracy : float or ndarray
            Of the shape of ``k``.
        """
        check_is_fitted(self)
        return self._problem_mean(self.precision_, k)

    def false_positive_rate(self, k):
        """``FP(k)``: share of problems answered wrongly with up to ``k`` samples.

        Parameters
        ----------
        k : int or array-like of int
            Numbers of samples.

        Returns
        -------
        rate : float or ndarray
            Of the shape of ``k``.
        """
        check_is_fitted(self)
        return self._problem_mean(1.0 - self.precision_, k)

    def utility(self, k):
        """``U(k) = tp_reward Acc(k) - fp_penalty FP(k) - cost_per_sample E[draws]``.

        Parameters
        ----------
        k : int or array-like of int
            Numbers of samples.

        Returns
        -------
        utility : float or ndarray
            Of the shape of ``k``.
        """
        check_is_fitted(self)
        value = self.tp_reward * self.precision_ - self.fp_penalty * (
            1.0 - self.precision_
        )
        return self._problem_mean(value, k, cost=self.cost_per_sample)
