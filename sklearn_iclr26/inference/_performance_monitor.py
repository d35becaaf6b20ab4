"""Prediction-powered monitoring of a deployed model from a few gold labels."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Integral, Real

import numpy as np
from joblib import hash as joblib_hash
from scipy.stats import norm
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.inference._allocate import multippi_allocate
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._random import seed_from_random_state
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    _num_samples,
)
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["PerformanceMonitor"]

# per metric: whether a row's value needs its gold label, and whether a
# higher value is better (the side an alarm is raised on)
_METRICS = {
    "accuracy": {"needs_label": True, "higher_is_better": True},
    "coverage": {"needs_label": True, "higher_is_better": True},
    "set_size": {"needs_label": False, "higher_is_better": False},
    "system_error": {"needs_label": True, "higher_is_better": False},
    "absolute_error": {"needs_label": True, "higher_is_better": False},
}

# the anytime confidence sequence is tightest at this many gold labels
# (Waudby-Smith et al.'s rho, fixed in advance)
ANYTIME_TIGHT_AT = 100
# share of the suggest_labels budget spread uniformly over the batch, so
# every row has a positive labelling probability (unbiased under drift)
UNIFORM_SHARE = 0.2
N_STRATA = 5

_STAT_KEYS = (
    # rows without known labelling probabilities (ppi-python's two samples)
    "n",  # labelled rows
    "sm",
    "sp",
    "smm",
    "spp",
    "smp",
    "N",  # unlabelled rows
    "up",
    "upp",
    # rows with known labelling probabilities (Horvitz-Thompson)
    "T_K",  # rows
    "K_p",  # sum of p over them
    "K_n",  # labelled rows among them
    "K_sm",  # unweighted sums over their labelled rows (for lambda)
    "K_sp",
    "K_smm",
    "K_spp",
    "K_smp",
    "w_m",  # sum xi m / pi
    "w_p",
    "v_mm",  # sum xi (1 - pi) / pi^2 m^2
    "v_pp",
    "v_mp",
)


def _labelled_mask(y):
    """True where ``y`` holds a gold label (not NaN / None)."""
    y = np.asarray(y)
    if y.dtype.kind in "fc":
        return ~np.isnan(y)
    if y.dtype.kind == "O":
        return np.array(
            [not (v is None or (isinstance(v, float) and math.isnan(v))) for v in y],
            dtype=bool,
        )
    return np.ones(y.shape[0], dtype=bool)


def _dense(sets):
    if hasattr(sets, "toarray"):
        sets = sets.toarray()
    return np.asarray(sets, dtype=bool)


def _boundary_factor(n_labelled, alpha):
    """Half-width of the asymptotic confidence sequence in standard errors.

    Waudby-Smith et al.'s normal-mixture boundary,
    ``sqrt(2 (v + 1) / v * log(sqrt(v + 1) / alpha))`` with ``v = t s^2
    rho^2``; ``rho`` is chosen so that the sequence is tightest at
    ``ANYTIME_TIGHT_AT`` gold labels, which makes ``v = c n / n*``.
    """
    c = -2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)
    v = c * n_labelled / ANYTIME_TIGHT_AT
    return math.sqrt(2 * (v + 1) / v * math.log(math.sqrt(v + 1) / alpha))


class PerformanceMonitor(BaseEstimator):
    """Monitor a deployed model's performance from a few gold labels.

    Prediction-powered inference (PPI++, Angelopoulos et al. 2023) on the
    model's own per-row performance, over a stream: ``fit`` learns, on
    labelled reference rows, how the *proxies* (the model's confidence,
    other fitted models' predictions, named columns) predict the metric's
    per-row value (e.g. whether the prediction is correct); each
    :meth:`partial_fit` adds a production batch whose gold labels are
    ``NaN`` except on the few rows that were labelled, and updates the
    estimate of the metric over every row seen so far, with a confidence
    interval (``anytime=False``) or a confidence sequence valid at every
    batch (``anytime=True``), and an alarm when it falls on the wrong side of
    ``threshold``. :meth:`suggest_labels` picks the rows to label for a
    budget (allocation of :func:`multippi_allocate` over strata of the
    proxy, inverse-probability weighted).

    The monitored metric and the estimator it needs (duck-typed: families
    are recognised by their methods):

    * ``"accuracy"``: a classifier (``predict`` and ``classes_``);
    * ``"coverage"``, ``"set_size"``: a conformal estimator's sets
      (``predict_set``) or intervals (``predict_interval``); the size (the
      interval's width) needs no label and is computed exactly;
    * ``"system_error"``: a deferral estimator (``predict_allocation`` and
      ``predict``): the error rate of the system's final answers (absolute
      error for a regressor);
    * ``"absolute_error"``: a regressor's ``|y - predict(X)|``.

    ``X`` is handed untouched to the monitored estimator (and to the proxy
    estimators). The estimator is used as given, never refitted; wrap it in
    :class:`~sklearn.frozen.FrozenEstimator` so that ``clone`` keeps it
    fitted.

    Read more in the :ref:`User Guide <performance_monitor>`.

    Parameters
    ----------
    estimator : fitted estimator, default=None
        The deployed model (``None`` raises at ``fit``: there is no default
        model to monitor).
    metric : {"accuracy", "coverage", "set_size", "system_error", \
            "absolute_error"}, default="accuracy"
        The per-row performance whose mean is monitored.
    proxies : list or None, default=None
        What predicts the per-row metric without a label. Entries:
        ``"confidence"`` (the model's own: the top probability, the set size
        or interval width, the deferral decision), a fitted estimator (its
        agreement with the model: equal predictions and the probability it
        gives the model's answer, or the distance between the two
        regressors' predictions) or a column name of ``X`` (a DataFrame).
        ``None`` is ``["confidence"]`` where the model offers one, else no
        proxy (the gold-only estimate).
    confidence_level : float, default=0.95
        Level of the interval (or of the confidence sequence).
    anytime : bool, default=False
        ``False``: the PPI++ interval for the rows seen so far, valid at one
        look. ``True``: an asymptotic confidence sequence (Waudby-Smith et
        al. 2024) around the same estimate, valid simultaneously at every
        batch, so that looking after each batch and stopping at the first
        alarm keeps the error rate.
    threshold : float or None, default=None
        Alarm level: ``alarm_`` is True when the whole interval is below it
        (metrics where higher is better: accuracy, coverage) or above it
        (set size and errors).
    random_state : int, RandomState instance or None, default=None
        Seed of the Bernoulli draws of :meth:`suggest_labels` (an int gives
        the same rows for the same call sequence).

    Attributes
    ----------
    estimate_ : float
        Estimate of the metric's mean over the rows seen by
        :meth:`partial_fit` since ``fit`` (``NaN`` before a gold label).
    interval_ : ndarray of shape (2,)
        Interval (or confidence sequence) at ``confidence_level``, clipped to
        the metric's range; the whole range before two gold labels.
    stderr_ : float
        Standard error of ``estimate_`` (``NaN`` before two gold labels).
    lambda_ : float
        The PPI++ power-tuning weight of the proxy (0: gold only).
    alarm_ : bool
        Whether the latest interval lies beyond ``threshold``.
    history_ : dict of lists
        One entry per :meth:`partial_fit` call: ``"n_rows"`` and
        ``"n_labeled"`` (cumulative), ``"estimate"``, ``"lower"``,
        ``"upper"`` and ``"alarm"``.
    n_rows_ : int
        Rows seen since ``fit``.
    n_labeled_ : int
        Gold-labelled rows among them.
    reference_metric_ : float
        Mean of the per-row metric on the reference rows.
    proxy_names_ : list of str
        Names of the proxy features.
    proxy_model_ : estimator or None
        Model of the per-row metric given the proxy features, fitted on the
        reference rows (``None``: a constant).
    metric_range_ : tuple of float
        The range the metric's mean lies in.

    See Also
    --------
    MultiPPIMeanEstimator : Mean of a gold measurement from several proxies.
    PerformanceMonitorDisplay : Plot the history of a monitor.

    References
    ----------
    Angelopoulos, Duchi, Zrnic. PPI++: Efficient prediction-powered
    inference. arXiv:2311.01453, 2023.

    Waudby-Smith, Arbour, Sinha, Kennedy, Ramdas. Time-uniform central limit
    theory and asymptotic confidence sequences. Annals of Statistics, 2024.

    Zrnic, Candes. Active statistical inference. ICML 2024.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.frozen import FrozenEstimator
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_iclr26.inference import PerformanceMonitor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(3000, 4))
    >>> y = (X[:, 0] + rng.normal(size=3000) > 0).astype(float)
    >>> model = LogisticRegression().fit(X[:1000], y[:1000])
    >>> monitor = PerformanceMonitor(FrozenEstimator(model), threshold=0.6)
    >>> monitor = monitor.fit(X[1000:1500], y[1000:1500])
    >>> y_stream = y[1500:].copy()
    >>> y_stream[rng.rand(1500) > 0.05] = np.nan  # 5% gold labels
    >>> monitor = monitor.partial_fit(X[1500:], y_stream)
    >>> bool(monitor.interval_[0] < monitor.estimate_ < monitor.interval_[1])
    True
    >>> monitor.alarm_
    False
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["predict"]), None],
        "metric": [StrOptions(set(_METRICS))],
        "proxies": [list, None],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "anytime": ["boolean"],
        "threshold": [Real, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        metric="accuracy",
        proxies=None,
        confidence_level=0.95,
        anytime=False,
        threshold=None,
        random_state=None,
    ):
        store_params(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # X is the monitored model's input, handed to it untouched (a
        # DataFrame, text, ...), not a feature matrix of the monitor's: the
        # data checks, which feed random features to a model fitted on
        # others, do not apply (tests/test_performance_monitor.py runs the
        # API, pickle, skops and clone checks)
        tags.input_tags.two_d_array = False
        tags.input_tags.allow_nan = True
        tags.target_tags.required = True
        tags.non_deterministic = False
        return tags

    # ---------------------------------------------------------------- checks
    def _check_estimator(self):
        est = self.estimator
        name = type(est).__name__
        if est is None:
            raise ValueError(
                "PerformanceMonitor needs a fitted `estimator` to monitor (the "
                "deployed model, e.g. FrozenEstimator(model)); got None."
            )
        try:
            check_is_fitted(est)
        except NotFittedError:
            raise ValueError(
                f"The monitored estimator {name} is not fitted. Fit it first (the "
                "monitor never trains it) and wrap it in FrozenEstimator so that "
                "clone keeps it fitted."
            ) from None
        metric = self.metric

        def has(*methods):
            return all(hasattr(est, m) for m in methods)

        if metric == "accuracy" and not has("predict", "classes_"):
            raise ValueError(
                f"metric='accuracy' needs a classifier (predict and classes_); "
                f"{name} is not one. Use metric='absolute_error' for a regressor."
            )
        if metric in ("coverage", "set_size") and not (
            has("predict_set") or has("predict_interval")
        ):
            raise ValueError(
                f"metric={metric!r} needs a conformal estimator (predict_set or "
                f"predict_interval); {name} has neither."
            )
        if metric == "system_error" and not has("predict_allocation", "predict"):
            raise ValueError(
                "metric='system_error' needs a deferral estimator "
                f"(predict_allocation and predict); {name} has no "
                "predict_allocation."
            )
        if metric == "absolute_error" and (has("classes_") or not has("predict")):
            raise ValueError(
                "metric='absolute_error' needs a regressor (predict, no classes_); "
                f"{name} is a classifier. Use metric='accuracy'."
            )
        return est

    def _is_classification(self):
        est = self.estimator
        if self.metric in ("coverage", "set_size"):
            return hasattr(est, "predict_set")
        return hasattr(est, "classes_")

    def _metric_range(self):
        if self.metric in ("accuracy", "coverage"):
            return (0.0, 1.0)
        if self.metric == "system_error" and self._is_classification():
            return (0.0, 1.0)
        if self.metric == "set_size" and self._is_classification():
            return (0.0, float(len(self.estimator.classes_)))
        return (0.0, math.inf)

    # --------------------------------------------------- per-row quantities
    def _model_outputs(self, X):
        est, out = self.estimator, {}
        if self.metric in ("coverage", "set_size"):
            if hasattr(est, "predict_set"):
                out["sets"] = _dense(est.predict_set(X))
            else:
                intervals = np.asarray(est.predict_interval(X), dtype=np.float64)
                if intervals.ndim != 2:
                    raise ValueError(
                        "The monitor follows one level: the estimator's "
                        f"predict_interval returned shape {intervals.shape}; give "
                        "it a single confidence_level."
                    )
                out["intervals"] = intervals
                out["pred"] = np.asarray(est.predict(X))
        else:
            out["pred"] = np.asarray(est.predict(X))
        if hasattr(est, "predict_proba") and hasattr(est, "classes_"):
            out["proba"] = np.asarray(est.predict_proba(X), dtype=np.float64)
        if self.metric == "system_error":
            out["allocation"] = np.asarray(est.predict_allocation(X), dtype=bool)
        return out

    def _metric_values(self, outputs, y, rows):
        """The per-row metric on ``rows`` (labels ``y[rows]``)."""
        metric = self.metric
        if metric == "set_size":
            if "sets" in outputs:
                return outputs["sets"].sum(axis=1).astype(np.float64)
            bounds = outputs["intervals"]
            return bounds[:, 1] - bounds[:, 0]
        y = np.asarray(y)[rows]
        if metric == "coverage":
            if "sets" in outputs:
                self._warn_unknown_labels(y)
                column = {c: j for j, c in enumerate(self.estimator.classes_)}
                sets = outputs["sets"][rows]
                return np.array(
                    [
                        float(column.get(v, -1) >= 0 and sets[i, column[v]])
                        for i, v in enumerate(y)
                    ]
                )
            bounds = outputs["intervals"][rows]
            y = y.astype(np.float64)
            return ((bounds[:, 0] <= y) & (y <= bounds[:, 1])).astype(np.float64)
        pred = outputs["pred"][rows]
        if self._is_classification():
            self._warn_unknown_labels(y)
            correct = (pred == y).astype(np.float64)
            return correct if metric == "accuracy" else 1.0 - correct
        return np.abs(y.astype(np.float64) - pred.astype(np.float64))

    def _warn_unknown_labels(self, y):
        known = set(self.estimator.classes_.tolist())
        unknown = sorted({v for v in y.tolist() if v not in known}, key=str)
        if unknown:
            warn_user(
                f"Gold labels {unknown[:5]} are not among the monitored model's "
                f"classes_ {sorted(known, key=str)[:10]}: they count as errors "
                "(check the labels' type and encoding)."
            )

    def _confidence_features(self, outputs):
        """The model's own confidence: ``(names, columns)``."""
        names, cols = [], []
        if "proba" in outputs:
            names.append("confidence:top_probability")
            cols.append(outputs["proba"].max(axis=1))
        if "sets" in outputs:
            names.append("confidence:set_size")
            cols.append(outputs["sets"].sum(axis=1).astype(np.float64))
        if "intervals" in outputs:
            names.append("confidence:interval_width")
            cols.append(outputs["intervals"][:, 1] - outputs["intervals"][:, 0])
        if "allocation" in outputs:
            names.append("confidence:deferred")
            cols.append((~outputs["allocation"][:, 0]).astype(np.float64))
        return names, cols

    def _proxy_features(self, X, outputs, *, at):
        names, cols = [], []
        for entry in self._proxy_entries():
            if isinstance(entry, str) and entry == "confidence":
                n, c = self._confidence_features(outputs)
                names += n
                cols += c
            elif isinstance(entry, str):
                if not hasattr(X, "columns") or entry not in X.columns:
                    raise ValueError(
                        f"The proxy column {entry!r} is missing from X at {at} "
                        "(X must be a DataFrame holding every named proxy)."
                    )
                names.append(f"column:{entry}")
                cols.append(np.asarray(X[entry], dtype=np.float64))
            else:
                n, c = self._estimator_proxy(entry, X, outputs)
                names += n
                cols += c
        if not cols:
            return names, np.zeros((_num_samples(X), 0))
        return names, np.column_stack(cols).astype(np.float64)

    def _estimator_proxy(self, other, X, outputs):
        label = type(other).__name__
        other_pred = np.asarray(other.predict(X))
        if "sets" in outputs:
            column = {c: j for j, c in enumerate(self.estimator.classes_)}
            sets = outputs["sets"]
            inside = [
                float(column.get(v, -1) >= 0 and sets[i, column[v]])
                for i, v in enumerate(other_pred)
            ]
            return [f"{label}:prediction_in_set"], [np.array(inside)]
        if self._is_classification():
            model_pred = outputs["pred"]
            names = [f"{label}:agrees"]
            cols = [(other_pred == model_pred).astype(np.float64)]
            classes = getattr(other, "classes_", None)
            if hasattr(other, "predict_proba") and classes is not None:
                proba = np.asarray(other.predict_proba(X), dtype=np.float64)
                column = {c: j for j, c in enumerate(classes)}
                idx = np.array([column.get(v, -1) for v in model_pred])
                given = np.where(
                    idx >= 0, proba[np.arange(len(idx)), np.maximum(idx, 0)], 0.0
                )
                names.append(f"{label}:probability_of_answer")
                cols.append(given)
            return names, cols
        if "intervals" in outputs:
            bounds = outputs["intervals"]
            center = (bounds[:, 0] + bounds[:, 1]) / 2
        else:
            center = outputs["pred"].astype(np.float64)
        return [f"{label}:distance"], [np.abs(other_pred.astype(np.float64) - center)]

    def _proxy_entries(self):
        if self.proxies is not None:
            return list(self.proxies)
        return ["confidence"]

    def _combined_proxy(self, F):
        F = np.where(np.isfinite(F), F, self._proxy_fill)
        if self.proxy_model_ is None:
            return np.full(F.shape[0], self._proxy_constant)
        if self._binary:
            return self.proxy_model_.predict_proba(F)[:, 1]
        return self.proxy_model_.predict(F)

    def row_values(self, X, y=None):
        """Per-row metric and combined proxy, as the estimate uses them.

        Parameters
        ----------
        X : {array-like, DataFrame}
            Rows, as the monitored estimator takes them.
        y : array-like of shape (n_samples,), default=None
            Gold labels, ``NaN`` where unlabelled (``None``: none).

        Returns
        -------
        metric : ndarray of shape (n_samples,)
            The metric of each row, ``NaN`` where it needs a label that is
            missing.
        proxy : ndarray of shape (n_samples,)
            The combined proxy: the reference-fitted prediction of the metric.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.frozen import FrozenEstimator
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn_iclr26.inference import PerformanceMonitor
        >>> rng = np.random.RandomState(0)
        >>> X = rng.normal(size=(400, 2))
        >>> y = (X[:, 0] > 0).astype(float)
        >>> model = FrozenEstimator(LogisticRegression().fit(X[:200], y[:200]))
        >>> monitor = PerformanceMonitor(model).fit(X[200:], y[200:])
        >>> metric, proxy = monitor.row_values(X[:3], [1.0, np.nan, 0.0])
        >>> bool(np.isnan(metric[1])), proxy.shape
        (True, (3,))
        """
        check_is_fitted(self)
        n = _num_samples(X)
        outputs = self._model_outputs(X)
        metric = np.full(n, np.nan)
        if not _METRICS[self.metric]["needs_label"]:
            metric = self._metric_values(outputs, None, slice(None))
        elif y is not None:
            y = self._check_y(y, n)
            rows = np.flatnonzero(_labelled_mask(y))
            metric[rows] = self._metric_values(outputs, y, rows)
        _, F = self._proxy_features(X, outputs, at="row_values")
        return metric, self._combined_proxy(F)

    @staticmethod
    def _check_y(y, n):
        y = np.asarray(y)
        if y.ndim != 1:
            y = y.ravel() if y.ndim == 2 and y.shape[1] == 1 else y
        if y.ndim != 1 or y.shape[0] != n:
            raise ValueError(
                f"y must be 1-dimensional with one entry per row of X ({n}), got "
                f"shape {y.shape}."
            )
        if y.dtype.kind == "f" and np.any(np.isinf(y)):
            raise ValueError("y must not contain infinite values (NaN = unlabelled).")
        return y

    # ------------------------------------------------------------------ fit
    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Learn how the proxies predict the metric on labelled reference rows.

        Resets the stream: the next :meth:`partial_fit` starts a new one.

        Parameters
        ----------
        X : {array-like, DataFrame}
            Reference rows, as the monitored estimator takes them (not rows
            it was trained on: its errors there are not representative).
        y : array-like of shape (n_samples,), default=None
            Their gold labels (every row labelled); ``None`` only for
            ``metric="set_size"``, which needs no label.

        Returns
        -------
        self : object
            Fitted monitor.
        """
        self._check_estimator()
        n = _num_samples(X)
        if y is None and _METRICS[self.metric]["needs_label"]:
            raise ValueError(
                "PerformanceMonitor requires y to be passed, but the target y is "
                "None (the reference rows' gold labels)."
            )
        y = np.zeros(n) if y is None else self._check_y(y, n)
        if n < 2:
            raise ValueError(f"fit needs at least 2 reference rows, got {n}.")
        if not _labelled_mask(y).all():
            raise ValueError(
                "Every reference row must carry its gold label (y has NaN); "
                "pass unlabelled production rows to partial_fit."
            )
        outputs = self._model_outputs(X)
        metric = self._metric_values(outputs, y, np.arange(n))
        names, F = self._proxy_features(X, outputs, at="fit")
        self.proxy_names_ = names
        fill = np.zeros(F.shape[1])
        for j in range(F.shape[1]):
            finite = F[np.isfinite(F[:, j]), j]
            fill[j] = finite.max() if finite.size else 0.0
        self._proxy_fill = fill
        self._binary = bool(np.all((metric == 0) | (metric == 1)))
        constant = F.shape[1] == 0 or np.ptp(metric) == 0
        self._proxy_constant = float(metric.mean())
        if constant:
            self.proxy_model_ = None
        else:
            F = np.where(np.isfinite(F), F, fill)
            if self._binary:
                model = make_pipeline(StandardScaler(), LogisticRegression())
                model.fit(F, metric.astype(int))
            else:
                model = make_pipeline(StandardScaler(), Ridge(alpha=1.0))
                model.fit(F, metric)
            self.proxy_model_ = model
        proxy = self._combined_proxy(F)
        self.reference_metric_ = float(metric.mean())
        self.metric_range_ = self._metric_range()
        # sums are kept around the reference means (no cancellation)
        self._center = (float(metric.mean()), float(proxy.mean()))
        self._strata = self._fit_strata(metric, proxy)
        self._stats = dict.fromkeys(_STAT_KEYS, 0.0)
        self._label_free_sum = 0.0
        self._pending = None
        self.n_suggestions_ = 0
        self.n_rows_ = 0
        self.n_labeled_ = 0
        self.history_ = {
            key: []
            for key in ("n_rows", "n_labeled", "estimate", "lower", "upper", "alarm")
        }
        self._update_estimate()
        return self

    def _fit_strata(self, metric, proxy):
        """Quantile strata of the proxy and each one's covariance of (m, p)."""
        n_strata = max(1, min(N_STRATA, metric.shape[0] // 20))
        edges = np.unique(np.quantile(proxy, np.linspace(0, 1, n_strata + 1)[1:-1]))
        which = np.searchsorted(edges, proxy, side="right")
        overall = np.cov(np.c_[metric, proxy].T).reshape(2, 2)
        ridge = 1e-6 * max(float(np.trace(overall)), 1e-12)
        covs = []
        for s in range(edges.size + 1):
            members = which == s
            if members.sum() >= 2:
                cov = np.cov(np.c_[metric[members], proxy[members]].T).reshape(2, 2)
            else:
                cov = overall
            covs.append(cov + ridge * np.eye(2))
        return {"edges": edges, "covariances": covs}

    # ------------------------------------------------------------ the stream
    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def partial_fit(self, X, y=None, label_probability=None):
        """Add a production batch and update the estimate and the interval.

        Parameters
        ----------
        X : {array-like, DataFrame}
            The batch, as the monitored estimator takes it.
        y : array-like of shape (n_samples,), default=None
            Gold labels, ``NaN`` (or ``None``) where a row was not labelled;
            ``None`` means no row was (allowed for ``metric="set_size"`` too).
        label_probability : float, array-like of shape (n_samples,) or None, \
                default=None
            Probability with which each row was sent for labelling, if known.
            ``None`` uses the probabilities of the last :meth:`suggest_labels`
            call when it was made on this very batch, else treats the labelled
            rows as a uniform random subset of the stream (the PPI++
            interval of ppi-python).

        Returns
        -------
        self : object
            The monitor.
        """
        if not hasattr(self, "history_"):
            raise NotFittedError(
                "This PerformanceMonitor is not fitted yet: call fit on labelled "
                "reference rows before partial_fit."
            )
        n = _num_samples(X)
        outputs = self._model_outputs(X)
        stats = dict(self._stats)
        if not _METRICS[self.metric]["needs_label"]:
            self._label_free_sum += float(
                self._metric_values(outputs, None, None).sum()
            )
            labelled = np.zeros(n, dtype=bool)
        else:
            y = np.full(n, np.nan) if y is None else self._check_y(y, n)
            labelled = _labelled_mask(y)
            _, F = self._proxy_features(X, outputs, at="partial_fit")
            p = self._combined_proxy(F) - self._center[1]
            m = np.full(n, np.nan)
            rows = np.flatnonzero(labelled)
            m[rows] = self._metric_values(outputs, y, rows) - self._center[0]
            pi = self._label_probabilities(X, n, label_probability)
            if pi is None:
                ml, pl, pu = m[labelled], p[labelled], p[~labelled]
                stats["n"] += ml.size
                stats["sm"] += ml.sum()
                stats["sp"] += pl.sum()
                stats["smm"] += ml @ ml
                stats["spp"] += pl @ pl
                stats["smp"] += ml @ pl
                stats["N"] += pu.size
                stats["up"] += pu.sum()
                stats["upp"] += pu @ pu
            else:
                if np.any(pi[labelled] <= 0):
                    raise ValueError(
                        "A labelled row has labelling probability 0: its label "
                        "could not have been drawn."
                    )
                ml, pl, w = m[labelled], p[labelled], 1.0 / pi[labelled]
                v = (1.0 - pi[labelled]) * w**2
                stats["T_K"] += n
                stats["K_p"] += p.sum()
                stats["K_n"] += ml.size
                stats["K_sm"] += ml.sum()
                stats["K_sp"] += pl.sum()
                stats["K_smm"] += ml @ ml
                stats["K_spp"] += pl @ pl
                stats["K_smp"] += ml @ pl
                stats["w_m"] += w @ ml
                stats["w_p"] += w @ pl
                stats["v_mm"] += v @ (ml * ml)
                stats["v_pp"] += v @ (pl * pl)
                stats["v_mp"] += v @ (ml * pl)
        self._stats = stats
        self.n_rows_ = self.n_rows_ + n
        self.n_labeled_ = self.n_labeled_ + int(labelled.sum())
        self._update_estimate()
        self.history_ = {
            "n_rows": [*self.history_["n_rows"], self.n_rows_],
            "n_labeled": [*self.history_["n_labeled"], self.n_labeled_],
            "estimate": [*self.history_["estimate"], self.estimate_],
            "lower": [*self.history_["lower"], float(self.interval_[0])],
            "upper": [*self.history_["upper"], float(self.interval_[1])],
            "alarm": [*self.history_["alarm"], self.alarm_],
        }
        return self

    def _label_probabilities(self, X, n, label_probability):
        if label_probability is not None:
            pi = np.asarray(label_probability, dtype=np.float64)
            pi = np.full(n, float(pi)) if pi.ndim == 0 else pi
            if pi.shape != (n,) or not np.all((pi >= 0) & (pi <= 1)):
                raise ValueError(
                    "label_probability must be a probability (or one per row of "
                    f"X, {n}) in [0, 1]."
                )
            return pi
        pending = self._pending
        if (
            pending is not None
            and pending["n"] == n
            and pending["hash"] == joblib_hash(X)
        ):
            self._pending = None
            return pending["probability"]
        return None

    # ------------------------------------------------------------ estimation
    def _ppi_plus_plus(self):
        """ppi-python's PPI++ mean on the rows without known probabilities."""
        s = self._stats
        n, N = s["n"], s["N"]
        m_bar, p_bar = s["sm"] / n, s["sp"] / n
        cov = s["smp"] / n - m_bar * p_bar
        var_m = s["smm"] / n - m_bar**2
        var_p = s["spp"] / n - p_bar**2
        lam = 0.0
        if N > 0:
            total = n + N
            mean_all = (s["sp"] + s["up"]) / total
            var_all = (s["spp"] + s["upp"] - total * mean_all**2) / (total - 1)
            if var_all > 0:
                lam = float(np.clip(cov / ((1 + n / N) * var_all), 0.0, 1.0))
        u_bar = s["up"] / N if N > 0 else 0.0
        var_u = s["upp"] / N - u_bar**2 if N > 0 else 0.0
        estimate = lam * u_bar + m_bar - lam * p_bar + self._center[0]
        var_r = max(var_m - 2 * lam * cov + lam**2 * var_p, 0.0)
        if self._binary and var_m <= 1e-12:
            # every gold label gave the same 0/1 value (a model right on every
            # labelled row): the sample variance 0 would give a zero-width
            # interval; use the rule of succession's variance instead
            q = (n * (m_bar + self._center[0]) + 1) / (n + 2)
            var_r = max(var_r, q * (1 - q))
        variance = var_r / n + (lam**2 * max(var_u, 0.0) / N if N > 0 else 0.0)
        return estimate, math.sqrt(variance), lam

    def _horvitz_thompson(self):
        """Totals of the rows with known probabilities, and those without."""
        s = self._stats
        # lambda from every labelled row (any fixed lambda keeps the estimate
        # unbiased; this one is the PPI++ choice)
        k = s["n"] + s["K_n"]
        sm, sp = s["sm"] + s["K_sm"], s["sp"] + s["K_sp"]
        cov = (s["smp"] + s["K_smp"]) / k - sm * sp / k**2
        var_p = (s["spp"] + s["K_spp"]) / k - (sp / k) ** 2
        lam = float(np.clip(cov / var_p, 0.0, 1.0)) if var_p > 0 else 0.0
        total, variance, unknown = 0.0, 0.0, 0.0
        T_U = s["n"] + s["N"]
        if T_U > 0:
            if s["n"] >= 2:
                n = s["n"]
                m_bar, p_bar = s["sm"] / n, s["sp"] / n
                var_r = (
                    s["smm"] / n
                    - m_bar**2
                    - 2 * lam * (s["smp"] / n - m_bar * p_bar)
                    + lam**2 * (s["spp"] / n - p_bar**2)
                )
                total += lam * (s["sp"] + s["up"]) + T_U * (m_bar - lam * p_bar)
                variance += T_U**2 * (1 - n / T_U) * max(var_r, 0.0) / n
            else:
                unknown += T_U
        if s["T_K"] > 0:
            if s["K_n"] >= 2:
                total += lam * s["K_p"] + s["w_m"] - lam * s["w_p"]
                variance += max(
                    s["v_mm"] - 2 * lam * s["v_mp"] + lam**2 * s["v_pp"], 0.0
                )
            else:
                unknown += s["T_K"]
        return total, variance, unknown, lam

    def _update_estimate(self):
        low, high = self.metric_range_
        T = self.n_rows_
        alpha = 1.0 - self.confidence_level
        self.lambda_ = 0.0
        if T == 0:
            estimate, lower, upper, se = math.nan, low, high, math.nan
        elif not _METRICS[self.metric]["needs_label"]:
            estimate = self._label_free_sum / T
            lower = upper = estimate
            se = 0.0
        elif self._stats["T_K"] == 0:
            if self._stats["n"] < 2:
                estimate, lower, upper, se = math.nan, low, high, math.nan
            else:
                estimate, se, self.lambda_ = self._ppi_plus_plus()
                half = se * self._factor(alpha)
                lower, upper = estimate - half, estimate + half
        else:
            total, variance, unknown, self.lambda_ = self._horvitz_thompson()
            known = T - unknown
            se = math.sqrt(variance) / T if unknown == 0 else math.nan
            half = math.sqrt(variance) * self._factor(alpha)
            if unknown == 0:
                estimate = total / T + self._center[0]
                lower, upper = estimate - half / T, estimate + half / T
            else:
                estimate = math.nan
                base = total + known * self._center[0]
                lower = (base - half + unknown * low) / T
                upper = (base + half + unknown * high) / T
        self.estimate_ = float(estimate)
        self.stderr_ = float(se)
        self.interval_ = np.array([max(lower, low), min(upper, high)], dtype=float)
        alarm = False
        if self.threshold is not None:
            if _METRICS[self.metric]["higher_is_better"]:
                alarm = bool(self.interval_[1] < self.threshold)
            else:
                alarm = bool(self.interval_[0] > self.threshold)
        self.alarm_ = alarm

    def _factor(self, alpha):
        if not self.anytime:
            return float(norm.ppf(1 - alpha / 2))
        n = self._stats["n"] + self._stats["K_n"]
        return _boundary_factor(max(n, 1), alpha)

    # -------------------------------------------------------- active labels
    @atomic_fit(keep_fitted=True)
    def suggest_labels(self, X, budget):
        """Pick the rows of a batch to send for labelling, for an expected budget.

        The budget is spread over quantile strata of the combined proxy by
        :func:`multippi_allocate` (each stratum's covariance of metric and
        proxy estimated on the reference rows: more labels where the proxy
        predicts the metric worst), plus a uniform share
        (``UNIFORM_SHARE`` = 0.2 of the budget) so that every row has a
        positive probability. Rows are drawn independently (Poisson
        sampling: the number of labels is ``budget`` on average). Pass the
        same batch to :meth:`partial_fit` with the labels of these rows: it
        recognises the batch and weights each label by the inverse of its
        probability (Horvitz-Thompson), so the estimate stays unbiased.

        Parameters
        ----------
        X : {array-like, DataFrame}
            The batch, as the monitored estimator takes it.
        budget : float
            Expected number of labels to buy in this batch.

        Returns
        -------
        indices : ndarray of int
            Positions of the rows to label, increasing.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.frozen import FrozenEstimator
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn_iclr26.inference import PerformanceMonitor
        >>> rng = np.random.RandomState(0)
        >>> X = rng.normal(size=(1600, 2))
        >>> y = (X[:, 0] + rng.normal(size=1600) > 0).astype(float)
        >>> model = FrozenEstimator(LogisticRegression().fit(X[:500], y[:500]))
        >>> monitor = PerformanceMonitor(model, random_state=0)
        >>> monitor = monitor.fit(X[500:1000], y[500:1000])
        >>> batch, y_batch = X[1000:], y[1000:].copy()
        >>> rows = monitor.suggest_labels(batch, budget=30)
        >>> y_batch[np.setdiff1d(np.arange(600), rows)] = np.nan
        >>> monitor = monitor.partial_fit(batch, y_batch)
        >>> monitor.n_labeled_ == rows.size
        True
        """
        check_is_fitted(self)
        if not _METRICS[self.metric]["needs_label"]:
            raise ValueError(
                f"metric={self.metric!r} needs no gold label: there is nothing to "
                "suggest."
            )
        if not isinstance(budget, (Real, Integral)) or not budget > 0:
            raise ValueError(f"budget must be a positive number, got {budget!r}.")
        n = _num_samples(X)
        outputs = self._model_outputs(X)
        _, F = self._proxy_features(X, outputs, at="suggest_labels")
        p = self._combined_proxy(F)
        pi = self._inclusion_probabilities(p, float(budget))
        seed = seed_from_random_state(self.random_state)
        rng = np.random.default_rng([seed, self.n_suggestions_])
        chosen = np.flatnonzero(rng.random(n) < pi)
        self.n_suggestions_ = self.n_suggestions_ + 1
        self._pending = {"n": n, "hash": joblib_hash(X), "probability": pi}
        return chosen

    def _inclusion_probabilities(self, p, budget):
        n = p.shape[0]
        if budget >= n:
            return np.ones(n)
        edges, covs = self._strata["edges"], self._strata["covariances"]
        which = np.searchsorted(edges, p, side="right")
        sizes = np.bincount(which, minlength=len(covs)).astype(np.float64)
        present = np.flatnonzero(sizes > 0)
        labels = np.zeros(len(covs))
        spend = (1.0 - UNIFORM_SHARE) * budget
        if present.size == 1:
            labels[present[0]] = spend
        else:
            # sources (m_s, p_s) per present stratum; estimand sum_s w_s E[m_s];
            # gold + proxy rows cost 1, the batch's proxies are free burn-in
            k = 2 * present.size
            cov = np.zeros((k, k))
            a = np.zeros(k)
            subsets, burn_in = [], {}
            for j, s in enumerate(present):
                cov[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = covs[s]
                a[2 * j] = sizes[s] / n
                subsets.append((2 * j, 2 * j + 1))
                burn_in[(2 * j + 1,)] = int(sizes[s])
            try:
                plan = multippi_allocate(
                    cov,
                    dict.fromkeys(subsets, 1.0),
                    spend,
                    subsets=subsets,
                    a=a,
                    burn_in=burn_in,
                    solver="slsqp",  # a few subsets: SLSQP alone is as good
                )
                for j, s in enumerate(present):
                    labels[s] = plan.relaxed_counts.get((2 * j, 2 * j + 1), 0.0)
            except ValueError:
                # a degenerate covariance: Neyman's allocation on the metric
                sd = np.sqrt([covs[s][0, 0] for s in present])
                labels[present] = spend * sizes[present] * sd / (sizes[present] @ sd)
            # no stratum can get more labels than it has rows
            for _ in range(present.size):
                over = labels > sizes
                if not over.any():
                    break
                excess = float((labels - sizes)[over].sum())
                labels[over] = sizes[over]
                room = (~over) & (labels < sizes)
                if not room.any():
                    break
                labels[room] += excess * labels[room] / max(labels[room].sum(), 1e-12)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(sizes > 0, labels / np.maximum(sizes, 1), 0.0)
        pi = share[which] + UNIFORM_SHARE * budget / n
        return np.clip(pi, 0.0, 1.0)
