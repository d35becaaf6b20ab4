"""Levels and inference results of the CATE learners, in econml's form.

Every interval method takes ``confidence_level`` (the package's name for a
level); econml's ``alpha`` (the *miscoverage*) is kept for one release by
:func:`deprecated_alpha`, with a ``FutureWarning``. The inference results
(:class:`CATEInferenceResults`, :class:`ATEInferenceResults`) have the
methods and the ``summary_frame`` columns of econml's ``InferenceResults``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import functools
import warnings
from numbers import Real

import numpy as np
from scipy.stats import norm

__all__ = ["ATEInferenceResults", "CATEInferenceResults"]


def check_alpha(alpha):
    """econml's ``alpha``: the miscoverage, a float in (0, 1)."""
    if isinstance(alpha, bool) or not isinstance(alpha, Real):
        raise TypeError(f"alpha must be a float in (0, 1), got {alpha!r}.")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in the open interval (0, 1), got {alpha}.")
    return float(alpha)


def check_confidence_level(confidence_level):
    """The level as a float in (0, 1)."""
    if isinstance(confidence_level, bool) or not isinstance(confidence_level, Real):
        raise TypeError(
            f"confidence_level must be a float in (0, 1), got {confidence_level!r}."
        )
    if not 0.0 < float(confidence_level) < 1.0:
        raise ValueError(
            "confidence_level must be in the open interval (0, 1), got "
            f"{confidence_level}."
        )
    return float(confidence_level)


def miscoverage(confidence_level):
    """``1 - confidence_level``, rounded to 12 significant digits.

    The rounding makes ``0.95`` give exactly ``0.05`` (``1 - 0.95`` is
    ``0.050000000000000044`` in floating point), so the intervals equal those
    of econml's ``alpha=0.05`` bit for bit.
    """
    return float(f"{1.0 - check_confidence_level(confidence_level):.12g}")


def deprecated_alpha(method):
    """Accept econml's ``alpha`` (miscoverage) for one release, with a FutureWarning.

    The wrapped method takes ``confidence_level`` and ``alpha=None``
    (keyword-only); ``alpha=a`` becomes ``confidence_level=1 - a``; both at
    once raise a ``ValueError``.
    """

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        alpha = kwargs.pop("alpha", None)
        if alpha is not None:
            if "confidence_level" in kwargs:
                raise ValueError(
                    f"{method.__name__}: pass either confidence_level or the "
                    "deprecated alpha (its miscoverage, 1 - confidence_level), "
                    "not both."
                )
            level = 1.0 - check_alpha(alpha)
            warnings.warn(
                f"`alpha` (econml's miscoverage) in {method.__name__} is deprecated "
                f"and will be removed in the next release: pass "
                f"confidence_level={level:g} (= 1 - alpha) instead.",
                FutureWarning,
                stacklevel=2,
            )
            kwargs["confidence_level"] = level
        return method(*args, **kwargs)

    return wrapper


class CATEInferenceResults:
    """Inference on effects (econml's ``InferenceResults``), from the bootstrap.

    Returned by ``effect_inference`` and ``const_marginal_effect_inference``.
    For the ``"pivot"`` and ``"percentile"`` bootstrap (econml's
    ``EmpiricalInferenceResults``) the intervals and p-values come from the
    empirical distribution (``2 point - draws`` for the pivot, the draws for
    the percentile); for ``"normal"`` (econml's ``NormalInferenceResults``)
    and for the doubly robust ATE from a normal law with standard error
    ``stderr``. The standard error is the draws' standard deviation
    (``ddof=0``, as econml).

    Parameters
    ----------
    point_estimate : ndarray
        The estimates.
    draws : ndarray of shape (n_bootstrap, *point_estimate.shape), default=None
        The bootstrap replicates of ``point_estimate``.
    stderr : ndarray, default=None
        Standard errors, when there are no draws (normal inference).
    kind : {"pivot", "percentile", "normal"}, default="normal"
        How the draws are read.
    inf_type : {"effect", "ate"}, default="effect"
        Index of :meth:`summary_frame`: the rows of ``X`` or ``"ATE"``.
    """

    def __init__(
        self,
        point_estimate,
        *,
        draws=None,
        stderr=None,
        kind="normal",
        inf_type="effect",
    ):
        self.point_estimate = point_estimate
        self.kind = kind
        self.inf_type = inf_type
        self._draws = None
        if draws is not None:
            draws = np.asarray(draws, dtype=np.float64)
            if kind == "pivot":
                self._draws = 2 * np.asarray(point_estimate) - draws
            elif kind == "percentile":
                self._draws = draws
            stderr = np.std(draws, axis=0)
            if np.ndim(point_estimate) == 0:
                stderr = float(stderr)
        self.stderr = stderr

    @property
    def var(self):
        """The variance, ``stderr ** 2``."""
        return self.stderr**2

    def zstat(self, value=0):
        """The z statistic ``(point_estimate - value) / stderr``.

        Parameters
        ----------
        value : float, default=0
            The effect under the null hypothesis.

        Returns
        -------
        zstat : ndarray or float
            One per estimate.
        """
        return (self.point_estimate - value) / self.stderr

    def pvalue(self, value=0):
        """The p-value of the test of ``effect == value``.

        Empirical inference: econml's ``min(P(draw <= value), P(draw >=
        value))`` over the (pivoted) draws, ``nan`` where every draw equals
        ``value``; normal inference: ``2 P(N(0, 1) > |zstat|)``.

        Parameters
        ----------
        value : float, default=0
            The effect under the null hypothesis.

        Returns
        -------
        pvalue : ndarray or float
            One per estimate.
        """
        if self._draws is None:
            return norm.sf(np.abs(self.zstat(value)), loc=0, scale=1) * 2
        dist = self._draws
        p = (
            np.minimum((dist <= value).sum(axis=0), (dist >= value).sum(axis=0))
            / dist.shape[0]
        )
        return np.where(np.all(dist == value, axis=0), np.nan, p)

    @deprecated_alpha
    def conf_int(self, *, confidence_level=0.95, alpha=None):
        """The interval of each estimate at ``confidence_level``.

        Parameters
        ----------
        confidence_level : float in (0, 1), default=0.95
            Level of the intervals.
        alpha : float in (0, 1), default=None
            Deprecated: econml's miscoverage, ``1 - confidence_level``.

        Returns
        -------
        lower, upper : ndarray or float
            The bounds.
        """
        a = miscoverage(confidence_level)
        if self._draws is None:
            scale = np.asarray(self.stderr, dtype=np.float64)
            loc = np.asarray(self.point_estimate, dtype=np.float64)
            lower = _safe_ppf(a / 2, loc, scale)
            upper = _safe_ppf(1 - a / 2, loc, scale)
        else:
            lower = np.percentile(self._draws, 100 * (a / 2), axis=0)
            upper = np.percentile(self._draws, 100 * (1 - a / 2), axis=0)
        if np.ndim(self.point_estimate) == 0:
            return float(lower), float(upper)
        return lower, upper

    @deprecated_alpha
    def summary_frame(self, *, confidence_level=0.95, value=0, decimals=3, alpha=None):
        """econml's ``summary_frame``: one row per estimate.

        Columns ``point_estimate``, ``stderr``, ``zstat``, ``pvalue``,
        ``ci_lower``, ``ci_upper`` (econml's names), indexed by the row of
        ``X`` (index name ``"X"``) or ``"ATE"``; rounded to ``decimals``.
        Needs pandas.

        Parameters
        ----------
        confidence_level : float in (0, 1), default=0.95
            Level of the intervals.
        value : float, default=0
            The effect under the null hypothesis.
        decimals : int, default=3
            Rounding.
        alpha : float in (0, 1), default=None
            Deprecated: econml's miscoverage, ``1 - confidence_level``.

        Returns
        -------
        frame : pandas.DataFrame
            The summary.
        """
        import pandas as pd

        lower, upper = self.conf_int(confidence_level=confidence_level)
        point = np.asarray(self.point_estimate)
        columns = {
            "point_estimate": point,
            "stderr": self.stderr,
            "zstat": self.zstat(value),
            "pvalue": self.pvalue(value),
            "ci_lower": lower,
            "ci_upper": upper,
        }
        columns = {k: np.atleast_1d(np.asarray(v)).ravel() for k, v in columns.items()}
        n_rows = len(columns["point_estimate"])
        labels = ["ATE"] * n_rows if self.inf_type == "ate" else range(n_rows)
        index = pd.Index(list(labels), name="X")
        return pd.DataFrame(columns, index=index).round(decimals)


class ATEInferenceResults(CATEInferenceResults):
    """Inference on the average effect (``ate_inference``).

    :class:`CATEInferenceResults` of the one estimate, with the names of
    econml's ``PopulationSummaryResults`` as aliases: ``mean_point``
    (``point_estimate``), ``stderr_mean`` (``stderr``) and
    :meth:`conf_int_mean` (:meth:`conf_int`).

    Parameters
    ----------
    point_estimate : float or ndarray of shape (1,)
        The estimate.
    draws : ndarray, default=None
        Its bootstrap replicates.
    stderr : float or ndarray, default=None
        Its standard error (normal inference).
    kind : {"pivot", "percentile", "normal"}, default="normal"
        How the draws are read.
    method : {"aipw", "bootstrap"}, default="aipw"
        Which estimate: the doubly robust one of the training sample or the
        plug-in mean effect over ``X``.
    """

    def __init__(
        self, point_estimate, *, draws=None, stderr=None, kind="normal", method="aipw"
    ):
        super().__init__(
            point_estimate, draws=draws, stderr=stderr, kind=kind, inf_type="ate"
        )
        self.method = method

    @property
    def mean_point(self):
        """econml's name of the estimate."""
        return self.point_estimate

    @property
    def stderr_mean(self):
        """econml's name of its standard error."""
        return self.stderr

    @deprecated_alpha
    def conf_int_mean(self, *, confidence_level=0.95, alpha=None):
        """econml's name of :meth:`conf_int`.

        Parameters
        ----------
        confidence_level : float in (0, 1), default=0.95
            Level of the interval.
        alpha : float in (0, 1), default=None
            Deprecated: econml's miscoverage, ``1 - confidence_level``.

        Returns
        -------
        lower, upper : float or ndarray
            The bounds.
        """
        return self.conf_int(confidence_level=confidence_level)


def _safe_ppf(q, loc, scale):
    """``norm.ppf(q, loc, scale)`` that returns ``loc`` where ``scale`` is 0."""
    safe = np.where(scale > 0, scale, 1.0)
    out = norm.ppf(q, loc=loc, scale=safe)
    return np.where(scale > 0, out, loc)
