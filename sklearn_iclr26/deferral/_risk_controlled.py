"""Learning to defer with a certified system error, at the lowest expert fees."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.frozen import FrozenEstimator
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import ClassifierTags, RegressorTags, get_tags
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from sklearn_iclr26.deferral._base import _BaseTopKDeferral, _is_dataframe
from sklearn_iclr26.deferral._confidence import ConfidenceThresholdDeferrer
from sklearn_iclr26.deferral._surrogate import top_k_mask
from sklearn_iclr26.deferral._topk_classifier import TopKDeferrer
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._batching import batched
from sklearn_iclr26.utils._random import (
    seed_from_random_state,
    set_child_random_state,
)
from sklearn_iclr26.utils._risk_control import (
    conformal_risk_control,
    hoeffding_bentkus_p_values,
    learn_then_test,
)
from sklearn_iclr26.utils._routing import fit_router, route_fit_params
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    _check_method_params,
    _fit_context,
    _num_samples,
    _safe_indexing,
)
from sklearn_iclr26.utils._split import split_indices
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["RiskControlledDeferrer", "UncertifiedRiskWarning"]

#: Share of ``1 - confidence_level`` spent on the fallback rule (Bonferroni):
#: the grid is tested at ``(1 - FALLBACK_SHARE) * delta``, the fallback at
#: ``FALLBACK_SHARE * delta``, so that the deployed rule, whichever it is, is
#: certified at ``confidence_level``.
FALLBACK_SHARE = 0.1

# finite stand-ins for the grid's end points (scores are log-probabilities)
_BIG = 1e250


class UncertifiedRiskWarning(UserWarning):
    """No rule of the grid (nor the fallback) is certified at the target risk."""


class _TopKPolicy:
    """The Top-k family: the model's score is lowered by ``lambda``.

    With ``k = 1``, the model answers when its allocator score beats the best
    expert's by at least ``lambda`` (a threshold on the allocator's margin),
    otherwise the best-scored available expert answers. For ``k > 1`` (or
    ``k(x)``), the model side leaves the consulted set once its score minus
    ``lambda`` falls below the ``k``-th expert's. The fees paid grow with
    ``lambda``.
    """

    def __init__(self, inner):
        self.inner = inner
        self.n_model = inner.n_entities_ - inner.n_experts_

    def table(self, X):
        inner = self.inner
        X_feat, E = inner._split(X)
        n = _num_samples(X)
        inputs = inner._inputs(X_feat)
        scores = inner._scores(inputs, n)
        answers, available, evidence = inner._answer_table(X_feat, E)
        k = inner._k_from_cardinality(inner._card(), inputs, n)
        return scores, answers, available, evidence, k

    def _shifted(self, scores, lam):
        shifted = scores.copy()
        model = np.maximum(shifted[:, : self.n_model], -_BIG)
        shifted[:, : self.n_model] = model - float(np.clip(lam, -_BIG, _BIG))
        return shifted

    def margins(self, table):
        """Per-row ``lambda`` above which the model side leaves the set."""
        scores, _, _, _, k = table
        model = np.max(scores[:, : self.n_model], axis=1)
        experts = -np.sort(-scores[:, self.n_model :], axis=1)
        if experts.shape[1] == 0:
            return np.full(len(model), np.inf)
        kth = np.take_along_axis(
            experts, np.clip(k - 1, 0, experts.shape[1] - 1)[:, None], axis=1
        )[:, 0]
        return model - kth

    def _answer(self, table, mask):
        scores, answers, _, evidence, _ = table
        aggregate = self.inner._aggregate(answers, mask, scores, evidence=evidence)
        return self.inner._decode(aggregate), mask @ self.inner.costs_

    def predict(self, table, lam):
        scores, _, available, _, k = table
        return self._answer(table, top_k_mask(self._shifted(scores, lam), k, available))

    def allocation(self, table, lam):
        scores, _, _, _, k = table
        return top_k_mask(self._shifted(scores, lam), k)

    def _expert_scores(self, scores, j):
        forced = np.maximum(scores, -_BIG)
        forced[:, self.n_model :] = -np.inf
        forced[:, self.n_model + j] = np.inf
        return forced

    def predict_expert(self, table, j):
        scores, _, available, _, _ = table
        return self._answer(
            table, top_k_mask(self._expert_scores(scores, j), 1, available)
        )

    def allocation_expert(self, table, j):
        return top_k_mask(self._expert_scores(table[0], j), 1)


class _ConfidencePolicy:
    """The confidence-threshold family: defer when the top probability < lambda."""

    def __init__(self, inner):
        self.inner = inner

    def table(self, X):
        inner = self.inner
        X_feat, E = inner._split(X)
        proba = inner._model_proba(X_feat)
        model = np.argmax(proba, axis=1)
        if E is None:
            E = np.empty((len(model), 0))
        return model, np.max(proba, axis=1), E

    def margins(self, table):
        return table[1]

    def _answer(self, model, E, expert, defer):
        rows = np.arange(len(model))
        if E.shape[1] == 0:
            return self.inner.classes_[model], np.zeros(len(model))
        answer = E[rows, expert]
        defer = defer & ~np.isnan(answer)
        labels = np.where(defer, np.nan_to_num(answer), model).astype(int)
        fees = np.where(defer, self.inner.costs_[expert], 0.0)
        return self.inner.classes_[labels], fees

    def predict(self, table, lam):
        model, confidence, E = table
        route = self.inner.routes_[model] if E.shape[1] else model
        return self._answer(model, E, route, confidence < lam)

    def predict_expert(self, table, j):
        model, _, E = table
        return self._answer(model, E, np.full(len(model), j), np.ones(len(model), bool))

    def _allocation(self, model, expert, defer):
        out = np.zeros((len(model), 1 + self.inner.n_experts_), dtype=bool)
        out[:, 0] = ~defer
        if self.inner.n_experts_:
            rows = np.flatnonzero(defer)
            out[rows, 1 + expert[rows]] = True
        else:
            out[:, 0] = True
        return out

    def allocation(self, table, lam):
        model, confidence, E = table
        route = self.inner.routes_[model] if E.shape[1] else model
        return self._allocation(model, route, confidence < lam)

    def allocation_expert(self, table, j):
        model = table[0]
        return self._allocation(
            model, np.full(len(model), j), np.ones(len(model), dtype=bool)
        )


def _policy(inner):
    if isinstance(inner, ConfidenceThresholdDeferrer):
        return _ConfidencePolicy(inner)
    return _TopKPolicy(inner)


class RiskControlledDeferrer(MetaEstimatorMixin, BaseEstimator):
    """Defer to experts with a certified system error, at the lowest fees.

    Wraps a deferral estimator (:class:`TopKDeferrer`,
    :class:`TopKDeferralRegressor` or :class:`ConfidenceThresholdDeferrer`)
    and calibrates one free parameter of its policy on held-out rows so that
    the error of the whole system (model and experts) is at most
    ``target_risk`` with probability at least ``confidence_level``
    (``method="ltt"``, Learn-then-Test), or in expectation
    (``method="crc"``, conformal risk control), choosing, among the certified
    parameters, the one with the lowest expected fee on the calibration rows.

    The parameter is a **threshold on the allocator's scores**, ``lambda``:
    the model's (or, one-stage, the classes') score is lowered by ``lambda``
    before the top-k entities are chosen. With ``k=1`` the model answers when
    its score beats the best expert's by at least ``lambda``, and the
    best-scored expert answers otherwise; ``lambda = -inf`` is the model
    alone, ``lambda = +inf`` always the experts. For
    :class:`ConfidenceThresholdDeferrer` it is the confidence threshold:
    defer (to the routed expert) when the model's top probability is below
    ``lambda``. The fees paid never decrease when ``lambda`` grows, so the
    parameters are ordered from the safest (most deferral) to the cheapest,
    which is the order fixed-sequence testing needs, and the one fit of the
    inner deferrer serves every ``lambda``. The grid is the quantiles of the
    score margin on the inner deferrer's training rows (never the
    calibration rows) and both end points.

    Read more in the :ref:`User Guide <deferral-risk-control>`.

    Parameters
    ----------
    deferrer : estimator or None, default=None
        The deferral estimator, fitted on the rows not used for calibration.
        ``None`` means ``TopKDeferrer()``. A
        :class:`~sklearn.frozen.FrozenEstimator` around a fitted one is kept
        as is and every row of ``X`` calibrates.
    target_risk : float in (0, 1), default=0.1
        The bound on the system's risk (mean loss).
    confidence_level : float in (0, 1), default=0.9
        Probability, over the calibration rows, that the deployed rule's risk
        is at most ``target_risk`` (``method="ltt"``).
    method : {"ltt", "crc"}, default="ltt"
        ``"ltt"``: Learn-then-Test, ``P(risk <= target_risk) >=
        confidence_level``. ``"crc"``: conformal risk control on the
        monotonised loss, ``E[risk] <= target_risk`` (no confidence level).
    fwer : {"fixed_sequence", "bonferroni"}, default="fixed_sequence"
        Family-wise procedure of ``method="ltt"``: test from the most
        deferring parameter down and stop at the first failure, or
        Bonferroni over the whole grid.
    p_values : {"hoeffding_bentkus", "wsr"}, default="hoeffding_bentkus"
        The p-values of ``method="ltt"``.
    calibration_size : float or int, default=0.3
        Share (float in (0, 1)) or number (int) of the rows held out for
        calibration (stratified by class when possible).
    ordering_size : float in [0, 1), default=0.3
        Share of the calibration rows that only order the fixed sequence
        (``fwer="fixed_sequence"``) and the path of ``method="crc"``: the
        test starts at the parameter of least risk on them and walks toward
        the cheaper ones. The other calibration rows test. ``0``: every row
        tests, and the walk starts at the most deferring parameter (best
        when deferring more never hurts). With a frozen deferrer these rows
        also give the grid (whatever ``fwer``); otherwise the grid comes
        from the deferrer's training rows and ``fwer="bonferroni"`` tests
        on every calibration row.
    loss : callable or None, default=None
        ``loss(y_true, y_pred) -> array`` of per-row losses in [0, 1].
        ``None``: the 0-1 error for a classifier, ``|y_pred - y| >
        tolerance`` for a regressor.
    tolerance : float or None, default=None
        The error a regressor may make before a row counts as wrong
        (``loss=None`` with a regressor requires it).
    n_thresholds : int, default=50
        Number of quantile thresholds of the grid (plus its two end points).
    random_state : int, RandomState instance or None, default=None
        Seeds the calibration split and the inner deferrer's unset
        ``random_state``.
    verbose : int, default=0
        Print progress messages when positive.

    Attributes
    ----------
    deferrer_ : estimator
        The fitted deferral estimator.
    classes_ : ndarray of shape (n_classes,)
        Class labels (classification only).
    parameters_ : ndarray of shape (n_parameters,)
        The grid of ``lambda``, increasing (fees increase along it).
    risk_curve_ : dict
        The calibration curve of the candidate rules, the grid then the
        fallback rules "always ask expert j": ``"parameter"``
        (``lambda``; ``nan`` for the fallback rules),
        ``"risk"`` (empirical risk), ``"cost"`` (expected fee per query),
        ``"p_value"`` (``nan`` for ``method="crc"``), ``"certified"``
        (bool), ``"cost_name"`` (``"expected fee"``) and ``"rule"`` (a
        description of each rule).
    chosen_index_ : int
        Index in ``risk_curve_`` of the deployed rule.
    chosen_parameter_ : float
        ``lambda`` of the deployed rule (``nan`` for a fallback rule).
    certified_parameters_ : ndarray
        The certified values of ``lambda`` of the grid.
    certified_ : bool
        Whether the deployed rule is certified.
    expected_fee_ : float
        Mean fee paid per query by the deployed rule on the calibration rows.
    calibration_risk_ : float
        Empirical risk of the deployed rule on the calibration rows.
    n_calibration_ : int
        Number of calibration rows.
    n_features_in_ : int
        Number of columns of ``X`` seen during fit (features and experts).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the columns seen during fit. Defined only when `X` has
        feature names that are all strings.

    See Also
    --------
    TopKDeferrer : The allocator whose scores are thresholded.
    ConfidenceThresholdDeferrer : The baseline, certified the same way.
    sklearn_iclr26.metrics.learn_then_test : The certificate.

    Notes
    -----
    **Guarantee** (``method="ltt"``). If the calibration rows and the test
    rows are independent draws from one distribution (the experts included:
    the same experts, answering as they did), then with probability at least
    ``confidence_level`` over the calibration rows the deployed rule's
    expected loss on a new row is at most ``target_risk``. The grid is
    tested at ``(1 - FALLBACK_SHARE) * (1 - confidence_level)`` and the
    fallback rules "always ask expert j" (Hoeffding-Bentkus, Bonferroni over
    the experts) at ``FALLBACK_SHARE * (1 - confidence_level)``
    (``FALLBACK_SHARE = 0.1``), so the guarantee covers whichever is
    deployed; a fallback is deployed (with a warning) only when no threshold
    of the grid certifies. When neither certifies, an
    :class:`UncertifiedRiskWarning` says so, ``certified_`` is ``False`` and
    the rule of least calibration risk is deployed.

    ``method="crc"`` uses the monotonised loss ``max_{lambda' >= lambda}
    L(lambda')`` (an upper bound, non-increasing in ``lambda``), so that
    ``E[loss] <= target_risk`` holds over calibration and test rows when the
    most deferring rule's loss is at most ``target_risk`` on every row (CRC's
    condition; imperfect experts violate it, and the guarantee is then only
    approximate: ``benchmarks/risk_controlled_deferral.py`` counts it).

    **What breaks it**: rows that are not exchangeable with the calibration
    rows (drift, a different population), and experts whose accuracy changes
    after calibration (fatigue, new staff). Recalibrate then.

    ``sample_weight`` (and any ``fit`` parameter) goes to the inner
    deferrer's fit on the training rows; the calibration is unweighted.

    References
    ----------
    .. [1] A. N. Angelopoulos, S. Bates, E. J. Candès, M. I. Jordan, L. Lei.
       "Learn then Test: Calibrating Predictive Algorithms to Achieve Risk
       Control." Annals of Applied Statistics, 2025.
    .. [2] A. N. Angelopoulos, S. Bates, A. Fisch, L. Lei, T. Schuster.
       "Conformal Risk Control." ICLR 2024.
    .. [3] Y. Montreuil, A. Carlier, L. X. Ng, W. T. Ooi. "Why Ask One When
       You Can Ask k? Learning-to-Defer to the Top-k Experts." ICLR 2026.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from sklearn_iclr26.datasets import make_experts
    >>> from sklearn_iclr26.deferral import RiskControlledDeferrer, TopKDeferrer
    >>> X, y = load_digits(return_X_y=True)
    >>> experts, fees = make_experts(X, y, n_experts=3, coverage=0.5,
    ...                              random_state=0)
    >>> X_all = np.hstack([X, experts])
    >>> inner = TopKDeferrer(expert_columns=[64, 65, 66], costs=fees, cv=3)
    >>> clf = RiskControlledDeferrer(inner, target_risk=0.1, random_state=0)
    >>> clf = clf.fit(X_all, y)
    >>> bool(clf.certified_), clf.predict_allocation(X_all[:2]).shape
    (True, (2, 4))
    """

    _parameter_constraints: dict = {
        "deferrer": [HasMethods(["fit", "predict"]), None],
        "target_risk": [Interval(Real, 0, 1, closed="neither")],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "method": [StrOptions({"ltt", "crc"})],
        "fwer": [StrOptions({"fixed_sequence", "bonferroni"})],
        "p_values": [StrOptions({"hoeffding_bentkus", "wsr"})],
        "calibration_size": [
            Interval(RealNotInt, 0, 1, closed="neither"),
            Interval(Integral, 1, None, closed="left"),
        ],
        "ordering_size": [Interval(Real, 0, 1, closed="left")],
        "loss": [callable, None],
        "tolerance": [Interval(Real, 0, None, closed="left"), None],
        "n_thresholds": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        deferrer=None,
        *,
        target_risk=0.1,
        confidence_level=0.9,
        method="ltt",
        fwer="fixed_sequence",
        p_values="hoeffding_bentkus",
        calibration_size=0.3,
        ordering_size=0.3,
        loss=None,
        tolerance=None,
        n_thresholds=50,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    # ------------------------------------------------------------ helpers
    def _get_deferrer(self):
        return TopKDeferrer() if self.deferrer is None else self.deferrer

    def _unwrap(self, deferrer):
        return deferrer.estimator if isinstance(deferrer, FrozenEstimator) else deferrer

    def _check_deferrer(self):
        inner = self._unwrap(self._get_deferrer())
        if not isinstance(inner, (_BaseTopKDeferral, ConfidenceThresholdDeferrer)):
            raise TypeError(
                "RiskControlledDeferrer wraps a TopKDeferrer, a "
                "TopKDeferralRegressor or a ConfidenceThresholdDeferrer (or a "
                f"FrozenEstimator around one), got {type(inner).__name__}."
            )

    def _losses(self, y_true, y_pred):
        if self.loss is not None:
            loss = np.asarray(self.loss(y_true, y_pred), dtype=np.float64).ravel()
            if loss.shape != (len(y_true),) or not np.all((loss >= 0) & (loss <= 1)):
                raise ValueError(
                    "loss(y_true, y_pred) must return one value in [0, 1] per row "
                    "(a bounded loss, e.g. the indicator |error| > tolerance); got "
                    f"shape {loss.shape} with values in "
                    f"[{np.nanmin(loss) if loss.size else 0:g}, "
                    f"{np.nanmax(loss) if loss.size else 0:g}]."
                )
            return loss
        if is_classifier(self):
            return (np.asarray(y_pred) != np.asarray(y_true)).astype(np.float64)
        error = np.abs(np.asarray(y_pred, float) - np.asarray(y_true, float))
        return (error > self.tolerance).astype(np.float64)

    def get_metadata_routing(self):
        """Route ``fit`` metadata (e.g. ``sample_weight``) to the deferrer.

        Returns
        -------
        routing : MetadataRouter
            The routing information.
        """
        return fit_router(self, {"deferrer": self._get_deferrer()})

    def _check_expert_columns(self, X):
        """A clear error when the expert columns are missing at predict."""
        inner = self._unwrap(self.deferrer_)
        names = getattr(inner, "feature_names_in_", None)
        expert_names = inner._expert_names()
        if inner.n_experts_ == 0:
            return
        if _is_dataframe(X) and names is not None:
            missing = [c for c in expert_names if c not in set(map(str, X.columns))]
            if missing:
                raise ValueError(
                    f"X lacks the expert columns {missing}: the certified rule "
                    "needs the experts' answers (NaN where an expert is "
                    "unavailable on a row)."
                )
        elif not _is_dataframe(X):
            n_columns = np.shape(X)[1] if np.ndim(X) == 2 else None
            if n_columns is not None and n_columns < inner.n_features_in_:
                raise ValueError(
                    f"X has {n_columns} columns but the deferrer was fitted on "
                    f"{inner.n_features_in_}, of which the expert columns "
                    f"{inner._expert_positions.tolist()}: pass the experts' "
                    "answers (NaN where an expert is unavailable on a row)."
                )

    # ---------------------------------------------------------------- fit
    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, **fit_params):
        """Fit the deferrer on part of the rows and certify a rule on the rest.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Features and the expert columns, handed untouched to the
            deferrer.
        y : array-like of shape (n_samples,)
            Target labels or values.
        **fit_params : dict
            Parameters of the deferrer's ``fit`` (e.g. ``sample_weight``),
            indexed to its training rows.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._check_deferrer()
        if not is_classifier(self) and self.loss is None and self.tolerance is None:
            raise ValueError(
                "A regression deferrer needs a bounded loss: pass tolerance= (a "
                "row is wrong when |y_pred - y| > tolerance) or loss=."
            )
        if not _is_dataframe(X):
            # a 2-D array (a clear error for sparse input), as the deferrer's
            X = validate_data(
                self,
                X,
                reset=True,
                dtype=None,
                ensure_all_finite=False,
                accept_sparse=False,
                skip_check_array=False,
            )
        deferrer = self._get_deferrer()
        params = route_fit_params(self, fit_params, ["deferrer"])["deferrer"]
        n = _num_samples(X)
        y_arr = column_or_1d(np.asarray(y), warn=True) if y is not None else None
        if y_arr is None:
            raise ValueError("RiskControlledDeferrer requires y to be passed.")
        check_consistent_length(X, y_arr)
        seed = None
        if self.random_state is not None:
            seed = seed_from_random_state(self.random_state)
        self._seed = seed
        if isinstance(deferrer, FrozenEstimator):
            if params:
                raise TypeError(
                    f"fit got {sorted(params)}, but the deferrer is frozen "
                    "(FrozenEstimator) and is not refitted."
                )
            train, calib = np.arange(0), np.arange(n)
            self.deferrer_ = deferrer
            inner = deferrer.estimator
        else:
            train, calib = split_indices(
                n,
                [1.0 - self.calibration_size]
                if isinstance(self.calibration_size, Real)
                and not isinstance(self.calibration_size, Integral)
                else [n - int(self.calibration_size)],
                y=y_arr if is_classifier(self) else None,
                random_state=seed,
            )
            log_progress(self, f"fitting the deferrer on {len(train)} rows")
            self.deferrer_ = set_child_random_state(clone(deferrer), seed)
            params = _check_method_params(X, params=params, indices=train)
            self.deferrer_.fit(
                _safe_indexing(X, train), _safe_indexing(y_arr, train), **params
            )
            inner = self.deferrer_
        # the inner deferrer's validation (feature names, columns) throughout
        self.n_features_in_ = inner.n_features_in_
        if hasattr(inner, "feature_names_in_"):
            self.feature_names_in_ = inner.feature_names_in_
        if is_classifier(self):
            self.classes_ = inner.classes_
        policy = _policy(inner)
        X_cal = inner._validate_input(_safe_indexing(X, calib), reset=False)
        y_cal = _safe_indexing(y_arr, calib)
        self.n_calibration_ = len(calib)
        grid_table = None
        if len(train):
            X_train = inner._validate_input(_safe_indexing(X, train), reset=False)
            grid_table = policy.table(X_train)
        self._calibrate(policy, X_cal, y_cal, grid_table)
        return self

    def _grid(self, policy, table):
        """Increasing thresholds: quantiles of the training margins, both ends.

        ``table`` is that of the training rows, or of the ordering rows for a
        frozen deferrer; ``None`` (a frozen deferrer, no ordering rows): a
        fixed grid, since a grid drawn from the tested rows would void the
        test.
        """
        inner = policy.inner
        confidence = isinstance(policy, _ConfidencePolicy)
        low, high = (0.0, np.nextafter(1.0, 2.0)) if confidence else (-np.inf, np.inf)
        if inner.n_experts_ == 0:
            return np.array([low, high])
        if table is None:
            middle = (
                np.linspace(0, 1, self.n_thresholds)
                if confidence
                else np.linspace(-10, 10, self.n_thresholds)
            )
        else:
            margins = np.asarray(policy.margins(table), dtype=np.float64)
            finite = margins[np.isfinite(margins)]
            levels = np.linspace(0, 1, self.n_thresholds)
            middle = np.quantile(finite, levels) if finite.size else np.array([])
            # just above each quantile: the row at the quantile is deferred
            middle = np.nextafter(middle, np.inf)
        return np.unique(np.r_[low, middle, high])

    def _calibrate(self, policy, X_cal, y_cal, grid_table):
        inner = policy.inner
        table = policy.table(X_cal)
        n = len(y_cal)
        order_rows, test_rows = self._ordering_split(n, grid_table is None)
        if grid_table is None and len(order_rows):
            # a frozen deferrer: the grid from the ordering rows (never tested)
            grid_table = tuple(None if a is None else a[order_rows] for a in table)
        self.parameters_ = grid = self._grid(policy, grid_table)
        m = len(grid)
        n_experts = inner.n_experts_
        losses = np.empty((n, m + n_experts))
        fees = np.empty(m + n_experts)
        for j in range(m + n_experts):
            if j < m:
                y_pred, fee = policy.predict(table, grid[j])
            else:
                y_pred, fee = policy.predict_expert(table, j - m)
            losses[:, j] = self._losses(y_cal, y_pred)
            fees[j] = float(np.mean(fee)) if n else 0.0
        alpha = float(self.target_risk)
        delta = 1.0 - float(self.confidence_level)
        binary = bool(np.all((losses == 0) | (losses == 1)))
        risks = losses.mean(axis=0) if n else np.ones(m + n_experts)
        grid_losses = losses[:, :m]
        p_values = np.full(m + n_experts, np.nan)
        certified = np.zeros(m + n_experts, dtype=bool)
        # the fallbacks "always expert j": Bonferroni over the experts at the
        # rest of delta (method="ltt"), or at delta (method="crc")
        fb_level = delta * (FALLBACK_SHARE if self.method == "ltt" else 1.0)
        if n_experts and n:
            fb_p = hoeffding_bentkus_p_values(risks[m:], n, alpha, binary_loss=binary)
            p_values[m:] = fb_p
            certified[m:] = fb_p <= fb_level / n_experts
        path, star = self._path(grid_losses[order_rows])
        tested = grid_losses[test_rows]
        n_test = len(test_rows)
        if self.method == "ltt":
            delta_grid = delta * (1 - FALLBACK_SHARE) if n_experts else delta
            self._warn_too_few(n_test, alpha, delta_grid, binary)
            if n_test:
                if self.fwer == "bonferroni":
                    path = np.arange(m)
                # fixed sequence along the path: from the least risky
                # parameter of the ordering rows toward the cheaper ones
                result = learn_then_test(
                    tested[:, path],
                    alpha,
                    confidence_level=1.0 - delta_grid,
                    p_values=self.p_values,
                    method=self.fwer,
                    binary_loss=binary,
                )
                p_values[path] = result.p_values
                certified[path[result.valid_index]] = True
        else:
            if n_test + 1 < 1.0 / alpha:
                warn_user(
                    f"The calibration set has {n_test} rows to test on, too few "
                    f"for conformal risk control at target_risk={alpha:g}: it "
                    f"needs at least {int(np.ceil(1 / alpha - 1))}. Use more rows "
                    "or a larger calibration_size."
                )
            if n_test:
                # the parameters up to the safest, increasing; monotonised loss
                # (an upper bound, non-increasing toward the safest)
                part = tested[:, : star + 1]
                monotone = np.maximum.accumulate(part[:, ::-1], axis=1)[:, ::-1]
                corrected = (monotone.sum(axis=0) + 1.0) / (n_test + 1)
                if np.any(corrected <= alpha):
                    first = conformal_risk_control(monotone, alpha)
                    certified[first : star + 1] = True
        names = [f"lambda={lam:.4g}" for lam in grid]
        names += [f"always {name}" for name in inner._expert_names()]
        grid_ok = certified[:m].any()
        pool = np.flatnonzero(certified[:m] if grid_ok else certified)
        if pool.size:
            # the lowest expected fee; ties: the lowest empirical risk
            best = pool[np.lexsort((risks[pool], fees[pool]))[0]]
            self.chosen_index_ = int(best)
            self.certified_ = True
            if not grid_ok:
                warn_user(
                    f"No threshold of the grid certifies target_risk={alpha:g} at "
                    f"confidence_level={self.confidence_level:g} on {n} "
                    "calibration rows; falling back to the certified rule "
                    f"'{names[best]}' (calibration risk {risks[best]:.3g}, "
                    f"expected fee {fees[best]:.3g}).",
                    UncertifiedRiskWarning,
                )
        else:
            best = int(np.lexsort((-np.arange(m + n_experts), risks))[0])
            self.chosen_index_ = best
            self.certified_ = False
            warn_user(
                f"UNCERTIFIED: no rule, neither a threshold of the grid nor "
                f"'always ask one expert', certifies target_risk={alpha:g} at "
                f"confidence_level={self.confidence_level:g} on {n} calibration "
                f"rows (the least calibration risk is {risks[best]:.3g}). The "
                f"deployed rule '{names[best]}' carries NO guarantee "
                "(certified_=False). Raise target_risk, use more calibration "
                "rows, better experts or a better deferrer.",
                UncertifiedRiskWarning,
            )
        self.risk_curve_ = {
            "parameter": np.r_[grid, np.full(n_experts, np.nan)],
            "risk": risks,
            "cost": fees,
            "p_value": p_values,
            "certified": certified,
            "cost_name": "expected fee",
            "risk_name": "system error" if self.loss is None else "system risk",
            "parameter_name": "threshold on the allocator's scores",
            "rule": np.array(names, dtype=object),
        }
        chosen = self.chosen_index_
        self.chosen_parameter_ = float(self.risk_curve_["parameter"][chosen])
        self.certified_parameters_ = grid[certified[:m]]
        self.expected_fee_ = float(fees[self.chosen_index_])
        self.calibration_risk_ = float(risks[self.chosen_index_])

    def _ordering_split(self, n, frozen=False):
        """Calibration rows that order the grid, and those that test it.

        A frozen deferrer (no training rows) also takes its grid from the
        ordering rows, whatever the procedure.
        """
        rows = np.arange(n)
        uses_order = frozen or self.method == "crc" or self.fwer == "fixed_sequence"
        if not uses_order or self.ordering_size == 0 or n < 2:
            return rows[:0], rows
        n_order = min(max(round(self.ordering_size * n), 1), n - 1)
        seed = None if self._seed is None else (self._seed + 1) % (2**31)
        order = np.random.RandomState(seed).permutation(n)
        return np.sort(order[:n_order]), np.sort(order[n_order:])

    def _path(self, order_losses):
        """Testing order of the grid, and the index of its safest parameter.

        The safest parameter is the one of least risk on the ordering rows
        (the most deferring one among ties; the most deferring one when no
        row orders). The path goes from it toward the cheaper parameters
        (fees fall with ``lambda``), then to the costlier ones: the risk is
        often U-shaped in ``lambda`` (forcing every query to the experts, or
        to the model, is worse than the allocator's choice).
        """
        m = order_losses.shape[1]
        if order_losses.shape[0] == 0:
            star = m - 1
        else:
            risk = order_losses.mean(axis=0)
            star = int(np.flatnonzero(risk <= risk.min() + 1e-12)[-1])
        path = np.r_[np.arange(star, -1, -1), np.arange(star + 1, m)]
        return path.astype(int), star

    def _warn_too_few(self, n, alpha, delta, binary):
        best_p = hoeffding_bentkus_p_values([0.0], max(n, 1), alpha, binary_loss=binary)
        if n == 0 or best_p[0] > delta:
            warn_user(
                f"The calibration set has {n} rows, too few for any certificate at "
                f"target_risk={alpha:g} and confidence_level="
                f"{self.confidence_level:g}: even a rule without a single error on "
                "them would not be certified. Use more rows, a larger "
                "calibration_size, or a higher target_risk."
            )

    # ------------------------------------------------------------ predict
    def _row_bytes(self):
        inner = self._unwrap(self.deferrer_)
        return 8 * (4 * inner.n_features_in_ + 16 * (1 + inner.n_experts_))

    def _rule(self, policy, table, index, what):
        m = len(self.parameters_)
        if index >= m:
            if what == "predict":
                return policy.predict_expert(table, index - m)
            return policy.allocation_expert(table, index - m)
        if what == "predict":
            return policy.predict(table, self.parameters_[index])
        return policy.allocation(table, self.parameters_[index])

    def _run(self, X, what, index=None):
        check_is_fitted(self)
        self._check_expert_columns(X)
        inner = self._unwrap(self.deferrer_)
        policy = _policy(inner)
        index = self.chosen_index_ if index is None else index
        X = inner._validate_input(X, reset=False)
        return batched(
            lambda Xb: self._rule(policy, policy.table(Xb), index, what),
            X,
            row_bytes=self._row_bytes(),
        )

    def _predict_with_fees(self, X, index=None):
        """Predictions and fees paid by the rule ``index`` of ``risk_curve_``.

        ``None``: the deployed rule (``chosen_index_``).
        """
        return self._run(X, "predict", index)

    def risk_curve(self, X, y):
        """The risk and expected fee of every rule of ``risk_curve_`` on ``(X, y)``.

        The same rules, in the same order (the grid, then "always ask
        expert j"), measured on new rows, e.g. test rows, without p-values:
        what :class:`~sklearn_iclr26.metrics.RiskControlDisplay` draws beside
        the calibration curve.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Features and the expert columns.
        y : array-like of shape (n_samples,)
            True targets.

        Returns
        -------
        curve : dict
            ``"parameter"``, ``"risk"`` and ``"cost"`` (mean fee per query).
        """
        check_is_fitted(self)
        self._check_expert_columns(X)
        inner = self._unwrap(self.deferrer_)
        policy = _policy(inner)
        X = inner._validate_input(X, reset=False)
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        n_rules = len(self.risk_curve_["parameter"])
        parts = batched(
            lambda Xb, yb: self._curve_batch(policy, Xb, yb, n_rules),
            X,
            y,
            row_bytes=self._row_bytes(),
            combine=False,
        )
        sums = np.zeros((2, n_rules))
        for part in parts:
            sums += part
        n = max(_num_samples(X), 1)
        return {
            "parameter": self.risk_curve_["parameter"].copy(),
            "risk": sums[0] / n,
            "cost": sums[1] / n,
        }

    def _curve_batch(self, policy, X, y, n_rules):
        table = policy.table(X)
        out = np.empty((2, n_rules))
        for index in range(n_rules):
            y_pred, fee = self._rule(policy, table, index, "predict")
            out[0, index] = np.sum(self._losses(y, y_pred))
            out[1, index] = np.sum(fee)
        return out

    def predict(self, X):
        """Answer of the certified rule (the model's or the experts').

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Features and the expert columns.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels or values.
        """
        return self._predict_with_fees(X)[0]

    def predict_allocation(self, X):
        """Whom the certified rule asks for each query, before asking.

        As :meth:`TopKDeferrer.predict_allocation`: expert availability is
        ignored (an unavailable expert's place is taken by the next one in
        :meth:`predict`).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Input data; the expert columns must be present (they may be NaN).

        Returns
        -------
        allocation : ndarray of bool of shape (n_samples, n_entities)
            ``True`` for the entities asked: the model (or the classes) first,
            then the experts in the order of ``expert_columns``.
        """
        return self._run(X, "allocation")

    def score(self, X, y, sample_weight=None):
        """Accuracy (classification) or R^2 (regression) of :meth:`predict`.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Features and the expert columns.
        y : array-like of shape (n_samples,)
            True targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        score : float
            Accuracy or coefficient of determination.
        """
        metric = accuracy_score if is_classifier(self) else r2_score
        return float(metric(y, self.predict(X), sample_weight=sample_weight))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        deferrer = self._get_deferrer()
        inner_tags = get_tags(deferrer)
        if inner_tags.estimator_type == "regressor":
            tags.estimator_type = "regressor"
            tags.regressor_tags = RegressorTags()
            tags.classifier_tags = None
        else:
            tags.estimator_type = "classifier"
            tags.classifier_tags = ClassifierTags()
            tags.regressor_tags = None
        tags.input_tags.allow_nan = inner_tags.input_tags.allow_nan
        tags.input_tags.sparse = False
        return tags
