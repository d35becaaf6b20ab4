"""Selective classification with a certified risk among the accepted rows."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.utils import column_or_1d, get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    check_random_state,
)

from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._batching import batched
from sklearn_iclr26.utils._random import set_child_random_state
from sklearn_iclr26.utils._risk_control import (
    conformal_risk_control,
    fwer_control,
    hoeffding_bentkus_p_values,
)
from sklearn_iclr26.utils._routing import fit_router, route_fit_params
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _check_feature_names,
    _check_method_params,
    _check_n_features,
    _fit_context,
    _num_samples,
    _safe_indexing,
)
from sklearn_iclr26.utils._split import split_indices
from sklearn_iclr26.utils._validation import (
    check_at_least_two_classes,
    check_has_methods,
    check_probabilities,
    store_params,
)
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["SelectiveClassifier"]

_RISK_NAMES = {
    "error": "error among accepted rows",
    "precision": "1 - precision of the accepted rows",
    "fnr": "false-negative rate of target_class",
}


def _default_classifier():
    """A scaled logistic regression: converges on raw numeric features."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


def _indexable(X):
    """``X`` in a form safe indexing takes, converted only if it must be."""
    if sp.issparse(X):
        return X if X.format in ("csr", "csc") else X.tocsr()
    if not hasattr(X, "__getitem__"):
        return np.asarray(X)
    return X


def _check_2d(X, owner):
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) != 2:
        raise ValueError(
            f"Expected a 2D array for X, got {len(shape)}D of shape {shape} in "
            f"{type(owner).__name__}. Reshape your data either using "
            "array.reshape(-1, 1) if your data has a single feature or "
            "array.reshape(1, -1) if it contains a single sample."
        )


def min_certifiable_rows(target_risk, confidence_level, n_tests=1):
    """Fewest rows for which zero losses give a p-value <= ``delta / n_tests``.

    With ``n`` rows all of loss 0, the Hoeffding-Bentkus p-value of a binary
    loss is ``(1 - target_risk) ** n`` (both bounds agree there); below
    ``log(delta / n_tests) / log(1 - target_risk)`` rows no parameter can be
    certified, whatever the data.
    """
    delta = (1.0 - float(confidence_level)) / n_tests
    return int(np.ceil(np.log(delta) / np.log1p(-float(target_risk)) - 1e-9))


def selective_curve(scores, losses, relevant, thresholds):
    """Empirical risk, acceptance and effective size at each threshold.

    A row is accepted at threshold ``t`` when ``scores >= t``. ``losses``
    (bool) is the row's loss when accepted; ``relevant`` (bool) marks the
    rows the risk is a mean over: the accepted ones (``None``, a risk among
    accepted rows) or a fixed subset (the rows of ``target_class`` for the
    false-negative rate, whose loss is "accepted and missed").

    Returns ``(risk, acceptance, n_effective)``; ``risk`` is NaN where no
    relevant row exists.
    """
    scores = np.asarray(scores, dtype=np.float64)
    thresholds = np.asarray(thresholds, dtype=np.float64)
    n = scores.shape[0]
    order = np.argsort(scores, kind="stable")
    sorted_scores = scores[order]
    # rows with score >= t are the last n - searchsorted(left) of the order
    start = np.searchsorted(sorted_scores, thresholds, side="left")
    n_accepted = n - start
    cum_loss = np.concatenate([[0], np.cumsum(losses[order][::-1])])
    loss_sum = cum_loss[n_accepted]
    acceptance = n_accepted / n if n else np.zeros_like(thresholds)
    if relevant is None:
        n_eff = n_accepted
    else:
        n_eff = np.full(thresholds.shape, int(np.sum(relevant)))
    with np.errstate(invalid="ignore", divide="ignore"):
        risk = np.where(n_eff > 0, loss_sum / np.maximum(n_eff, 1), np.nan)
    return risk, acceptance.astype(np.float64), n_eff.astype(np.int64)


class SelectiveClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Answer only where confident, with a certified risk among the answers.

    Wraps any probabilistic classifier and calibrates, on held-out rows, an
    acceptance threshold on a confidence score: a row is **accepted**
    (answered automatically) when its score is at least ``threshold_``, and
    **abstained** on (left to a human, say) otherwise. The threshold is the
    lowest one (the most rows accepted) among those a risk-control
    procedure certifies:

    * ``method="ltt"`` (Learn-then-Test): with probability at least
      ``confidence_level`` over the calibration rows, the risk of the chosen
      rule is at most ``target_risk``. Hoeffding-Bentkus p-values of
      ``H_t: risk(t) > target_risk`` on the grid ``thresholds``, tested by
      ``fwer`` (fixed-sequence from the most confident end by default).
    * ``method="crc"`` (conformal risk control): the **expected** risk is at
      most ``target_risk``. Only for ``risk="fnr"``, whose loss is a mean of
      per-row losses that fall as the threshold rises; a risk **among the
      accepted rows** (``"error"``, ``"precision"``) is a ratio, not such a
      mean, and raises.

    The risks (``score`` is what is thresholded):

    * ``"error"``: ``P(prediction != y | accepted)``, score the top class
      probability. :meth:`predict` gives the model's labels everywhere;
      :meth:`accept` says which of them stand.
    * ``"precision"``: ``1 - P(y = c | accepted)`` for the class ``c =
      target_class``, score ``p_c(x)``: the accepted rows are answered ``c``
      (the decision of MAPIE's ``BinaryClassificationController`` with
      ``risk="precision"``, whose threshold it reproduces, see the tests).
      :meth:`predict` gives ``c`` on the accepted rows and the most
      probable other class elsewhere.
    * ``"fnr"``: ``P(accepted and prediction != c | y = c)``, the share of
      the rows of class ``c = target_class`` that the automatic answers
      miss (the abstained rows go to a reviewer, who is assumed to catch
      them), score ``1 - p_c(x)``: a row the model thinks may be ``c`` is
      kept for review. :meth:`predict` gives the model's labels.

    **Guarantee and its conditions.** The calibration rows and the test
    rows must be exchangeable (i.i.d. for LTT): drawn from the same
    distribution, the test rows unseen in training the model. A shift
    between calibration and deployment (another population, time drift, a
    model retrained after calibration) voids it. The guarantee is marginal
    over the calibration draw (LTT) or over calibration and test rows
    (CRC), not per row or per subgroup.

    **Fallback, never uncertified.** When no threshold of the grid is
    certified (too few calibration rows for any certificate: fewer than
    ``log(1 - confidence_level) / log(1 - target_risk)`` relevant rows, 22
    at the defaults; or a grid with no certified point) a ``UserWarning``
    says so and the classifier **accepts nothing** (``threshold_ = inf``,
    :meth:`accept` all ``False``): abstaining everywhere has risk 0 for the
    three risks. ``certified_`` is then ``False``.

    ``X`` reaches ``estimator`` untouched (put preprocessing in a
    ``Pipeline``). ``fit`` parameters (e.g. ``sample_weight``) go to the
    estimator's ``fit`` (metadata routing: ``set_fit_request``); the
    calibration itself is unweighted, the guarantee being about unweighted
    rows.

    Read more in the :ref:`User Guide <risk_control>`.

    Parameters
    ----------
    estimator : classifier with ``predict_proba``, default=None
        ``None`` means ``make_pipeline(StandardScaler(),
        LogisticRegression(max_iter=1000))``. Wrap a fitted model in
        :class:`~sklearn.frozen.FrozenEstimator` to calibrate it on every
        row given to ``fit`` (the rows must not have trained it).
    target_risk : float in (0, 1), default=0.1
        The risk level ``alpha`` to certify.
    confidence_level : float in (0, 1), default=0.9
        ``1 - delta``: the probability, over the calibration rows, that the
        certified risk holds (``method="ltt"`` only).
    risk : {"error", "precision", "fnr"}, default="error"
        The risk controlled, see above.
    target_class : label, default=None
        The class of ``"precision"`` and ``"fnr"``; ``None`` means the last
        class of ``classes_`` (the positive class of binary labels).
    method : {"ltt", "crc"}, default="ltt"
        Learn-then-Test (high probability) or conformal risk control (in
        expectation, ``risk="fnr"`` only).
    fwer : {"fixed_sequence", "bonferroni"}, default="fixed_sequence"
        The family-wise procedure of LTT: fixed-sequence testing from the
        most confident threshold down (stops at the first threshold not
        certified), or Bonferroni over the grid.
    thresholds : int or array-like of float, default=100
        The grid: an int ``m`` means ``np.linspace(low, 1, m,
        endpoint=False)``, ``low`` the smallest possible score (``1 /
        n_classes`` for ``"error"``, 0 otherwise; at 100 for a binary
        ``"precision"`` it is MAPIE's default grid); an array gives the
        thresholds themselves (sorted internally). Chosen without the
        calibration rows.
    calibration_size : float in (0, 1), default=0.3
        Share of the rows held out for calibration (stratified when
        possible); the rest trains ``estimator``. Every row calibrates a
        ``FrozenEstimator``. 0.3 keeps most rows for training while leaving
        the calibration enough rows for a certificate (at the defaults at
        least 22, more for a useful threshold) from about a hundred rows.
    verbose : int, default=0
        Print the fitting and calibration steps when positive.
    random_state : int, RandomState instance or None, default=None
        Seeds the split and the ``random_state`` parameters of ``estimator``
        left at ``None``.

    Attributes
    ----------
    estimator_ : classifier
        The fitted classifier.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    target_class_ : label or None
        The class of ``"precision"`` and ``"fnr"`` (``None`` for
        ``"error"``).
    threshold_ : float
        Accept a row when its score is at least this; ``inf`` at the
        fallback (accept nothing).
    certified_ : bool
        Whether a threshold of the grid was certified (``False``: fallback).
    chosen_index_ : int
        Index of the chosen rule in ``risk_curve_`` (0: the fallback).
    risk_curve_ : dict
        The calibration curve, in the testing order (entry 0 is the
        fallback "accept nothing", certified by construction, then the grid
        from the highest threshold down): ``"parameter"`` (thresholds),
        ``"risk"`` (empirical risk; NaN where no relevant row),
        ``"cost"`` (calibration acceptance rate), ``"p_value"`` (NaN for
        CRC), ``"certified"`` (bool), ``"n_effective"`` (rows the risk is
        a mean over), and the labels ``"cost_name"``, ``"risk_name"``,
        ``"parameter_name"``: the protocol of
        :class:`~sklearn_iclr26.metrics.RiskControlDisplay`.
    calibration_acceptance_rate_ : float
        Share of the calibration rows accepted at ``threshold_``.
    calibration_risk_ : float
        Empirical risk of the calibration rows at ``threshold_``.
    n_calibration_samples_ : int
        Number of calibration rows.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.

    See Also
    --------
    sklearn_iclr26.metrics.learn_then_test : The certification.
    sklearn_iclr26.metrics.RiskControlDisplay : Risk against acceptance.

    References
    ----------
    .. [1] A. N. Angelopoulos, S. Bates, E. J. Candès, M. I. Jordan, L. Lei.
       "Learn then Test: Calibrating Predictive Algorithms to Achieve Risk
       Control." Annals of Applied Statistics, 2025.
    .. [2] A. N. Angelopoulos, S. Bates, A. Fisch, L. Lei, T. Schuster.
       "Conformal Risk Control." ICLR 2024.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn_iclr26.risk_control import SelectiveClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = SelectiveClassifier(target_risk=0.05, random_state=0).fit(X, y)
    >>> bool(clf.certified_), clf.accept(X[:5]).dtype
    (True, dtype('bool'))
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "target_risk": [Interval(Real, 0, 1, closed="neither")],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "risk": [StrOptions({"error", "precision", "fnr"})],
        "target_class": "no_validation",
        "method": [StrOptions({"ltt", "crc"})],
        "fwer": [StrOptions({"fixed_sequence", "bonferroni"})],
        "thresholds": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "calibration_size": [Interval(Real, 0, 1, closed="neither")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        target_risk=0.1,
        confidence_level=0.9,
        risk="error",
        target_class=None,
        method="ltt",
        fwer="fixed_sequence",
        thresholds=100,
        calibration_size=0.3,
        verbose=0,
        random_state=None,
    ):
        store_params(self, locals())

    # -- plumbing ----------------------------------------------------------------
    def _get_estimator(self):
        return _default_classifier() if self.estimator is None else self.estimator

    def get_metadata_routing(self):
        """Route ``fit`` metadata (e.g. ``sample_weight``) to the estimator.

        Returns
        -------
        routing : MetadataRouter
            The routing information.
        """
        return fit_router(self, {"estimator": self._get_estimator()})

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = get_tags(self._get_estimator())
        tags.input_tags.allow_nan = sub.input_tags.allow_nan
        tags.input_tags.sparse = sub.input_tags.sparse
        return tags

    def _grid(self, n_classes):
        if isinstance(self.thresholds, Integral) and not isinstance(
            self.thresholds, bool
        ):
            low = 1.0 / n_classes if self.risk == "error" else 0.0
            return np.linspace(low, 1.0, int(self.thresholds), endpoint=False)
        grid = np.asarray(self.thresholds, dtype=np.float64).ravel()
        if grid.size == 0 or not np.all(np.isfinite(grid)):
            raise ValueError("thresholds must be a non-empty array of finite values.")
        return np.unique(grid)

    def _check_X(self, X):
        check_is_fitted(self)
        X = _indexable(X)
        _check_2d(X, self)
        _check_feature_names(self, X, reset=False)
        _check_n_features(self, X, reset=False)
        return X

    def _proba(self, X):
        def one(Xb):
            proba = check_probabilities(
                self.estimator_.predict_proba(Xb), name="estimator.predict_proba(X)"
            )
            if proba.shape[1] != self.classes_.shape[0]:
                raise ValueError(
                    f"predict_proba returned {proba.shape[1]} columns for "
                    f"{self.classes_.shape[0]} classes."
                )
            return proba

        if _num_samples(X) == 0:
            return one(X)
        return batched(one, X, row_bytes=8 * 4 * len(self.classes_) + 64)

    def _scores_and_labels(self, proba):
        """Confidence score of every row and the label answered when accepted."""
        if self.risk == "error":
            return proba.max(axis=1), np.argmax(proba, axis=1)
        c = self._target_index
        if self.risk == "precision":
            return proba[:, c], np.full(proba.shape[0], c)
        return 1.0 - proba[:, c], np.argmax(proba, axis=1)

    def _losses(self, answer, y_index):
        """``(losses, relevant)`` for :func:`selective_curve`."""
        if self.risk == "fnr":
            relevant = y_index == self._target_index
            return relevant & (answer != self._target_index), relevant
        return answer != y_index, None

    def _encode(self, y):
        order = np.argsort(self.classes_, kind="stable")
        sorted_classes = self.classes_[order]
        position = np.clip(
            np.searchsorted(sorted_classes, y), 0, len(self.classes_) - 1
        )
        index = order[position]
        unseen = self.classes_[index] != y
        if np.any(unseen):
            raise ValueError(
                f"y contains labels {np.unique(y[unseen]).tolist()[:10]} that the "
                f"estimator never saw (its classes are {self.classes_.tolist()})."
            )
        return index

    # -- fit ---------------------------------------------------------------------
    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, **fit_params):
        """Fit the classifier on part of the rows and calibrate on the rest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, in the form the estimator takes.
        y : array-like of shape (n_samples,)
            Labels.
        **fit_params : dict
            Passed (split) to ``estimator.fit``, e.g. ``sample_weight``
            (with metadata routing, what the estimator requested).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        if self.method == "crc" and self.risk != "fnr":
            raise ValueError(
                f'method="crc" controls a mean of per-row losses that fall as the '
                f'threshold rises; risk="{self.risk}" is a ratio among the '
                'accepted rows, not such a mean. Use method="ltt" (or '
                'risk="fnr").'
            )
        estimator = self._get_estimator()
        check_has_methods(estimator, ["predict_proba"])
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y "
                "is None."
            )
        X = _indexable(X)
        _check_2d(X, self)
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        check_classification_targets(y)
        check_at_least_two_classes(self, y)
        _check_feature_names(self, X, reset=True)
        _check_n_features(self, X, reset=True)
        prefit = isinstance(estimator, FrozenEstimator)
        if prefit and fit_params:
            raise TypeError(
                f"{type(self).__name__}.fit got {sorted(fit_params)}, which nothing "
                "would use: the estimator is a FrozenEstimator, never refit, and "
                "the calibration is unweighted. Remove them."
            )
        fit_params = route_fit_params(self, fit_params, ["estimator"])["estimator"]
        n_samples = _num_samples(X)
        rng = check_random_state(self.random_state)
        if prefit:
            self.estimator_ = estimator
            cal = np.arange(n_samples)
        else:
            train, cal = split_indices(
                n_samples,
                [1.0 - float(self.calibration_size)],
                y=y,
                random_state=rng,
            )
            params = _check_method_params(X, params=fit_params, indices=train)
            log_progress(
                self, f"fitting {type(estimator).__name__} on {train.shape[0]} rows"
            )
            self.estimator_ = set_child_random_state(clone(estimator), rng)
            self.estimator_.fit(_safe_indexing(X, train), y[train], **params)
        self.classes_ = np.asarray(self.estimator_.classes_)
        self._set_target_class()
        self._calibrate(_safe_indexing(X, cal), y[cal])
        return self

    def _set_target_class(self):
        if self.risk == "error":
            self.target_class_ = None
            self._target_index = None
            return
        if self.target_class is None:
            self._target_index = len(self.classes_) - 1
        else:
            hits = np.flatnonzero(self.classes_ == self.target_class)
            if hits.size == 0:
                raise ValueError(
                    f"target_class={self.target_class!r} is not a class of the "
                    f"estimator (classes: {self.classes_.tolist()})."
                )
            self._target_index = int(hits[0])
        self.target_class_ = self.classes_[self._target_index]

    def _calibrate(self, X, y):
        y_index = self._encode(y)
        proba = self._proba(X)
        scores, answer = self._scores_and_labels(proba)
        losses, relevant = self._losses(answer, y_index)
        self.n_calibration_samples_ = int(y.shape[0])
        grid = self._grid(len(self.classes_))[::-1]  # the most confident first
        risk, acceptance, n_eff = selective_curve(scores, losses, relevant, grid)
        alpha = float(self.target_risk)
        level = float(self.confidence_level)
        n_relevant = (
            self.n_calibration_samples_ if relevant is None else int(relevant.sum())
        )
        if self.method == "crc":
            p_values = np.full(grid.shape, np.nan)
            needed = int(np.ceil(1.0 / alpha - 1.0 - 1e-9))
            # columns in increasing threshold order, the last accepting nothing
            loss_matrix = (scores[relevant][:, None] >= grid[::-1][None, :]) & losses[
                relevant
            ][:, None]
            loss_matrix = np.hstack(
                [loss_matrix, np.zeros((loss_matrix.shape[0], 1), dtype=bool)]
            )
            certified = np.zeros(grid.shape, dtype=bool)
            if n_relevant >= max(needed, 1):
                index = conformal_risk_control(loss_matrix.astype(np.float64), alpha)
                # increasing order index -> testing order position
                n_grid = grid.shape[0]
                if index < n_grid:
                    certified[: n_grid - index] = True
        else:
            n_tests = 1 if self.fwer == "fixed_sequence" else grid.shape[0]
            needed = min_certifiable_rows(alpha, level, n_tests)
            p_values = np.ones(grid.shape)
            ok = n_eff > 0
            if ok.any():
                p_values[ok] = hoeffding_bentkus_p_values(
                    np.nan_to_num(risk[ok]), n_eff[ok], alpha, binary_loss=True
                )
            certified = np.zeros(grid.shape, dtype=bool)
            certified[fwer_control(p_values, level, method=self.fwer)] = True
        what = (
            f"rows of target_class {self.target_class_!r}"
            if self.risk == "fnr"
            else "calibration rows"
        )
        if n_relevant < needed:
            warn_user(
                f"{type(self).__name__}: {n_relevant} {what}, too few for any "
                f"certificate at target_risk={alpha:g}"
                + (f", confidence_level={level:g}" if self.method == "ltt" else "")
                + f" (at least {needed} are needed). Falling back to accepting "
                "nothing (threshold_=inf, every row abstained on). Use more "
                "calibration rows or a larger target_risk."
            )
        elif not certified.any():
            hint = ""
            if self.method == "ltt" and self.fwer == "fixed_sequence":
                hint = (
                    f" Fixed-sequence testing stops at its first threshold "
                    f"({grid[0]:.4g}), which accepts {int(n_eff[0])} calibration "
                    "rows: a grid whose highest threshold accepts more rows (e.g. "
                    "thresholds=np.linspace(0.5, 0.95, 10)) or "
                    'fwer="bonferroni" may certify one.'
                )
            warn_user(
                f"{type(self).__name__}: no threshold of the grid is certified at "
                f"target_risk={alpha:g}"
                + (f", confidence_level={level:g}" if self.method == "ltt" else "")
                + f" (smallest calibration risk {np.nanmin(risk, initial=1.0):.3g} "
                f"on {n_relevant} {what}). Falling back to accepting nothing "
                "(threshold_=inf, every row abstained on). Use more calibration "
                "rows, a better model, a larger target_risk or another grid." + hint
            )
        self.risk_curve_ = {
            "parameter": np.r_[np.inf, grid],
            "risk": np.r_[0.0, risk],
            "cost": np.r_[0.0, acceptance],
            "p_value": np.r_[0.0 if self.method == "ltt" else np.nan, p_values],
            "certified": np.r_[True, certified],
            "n_effective": np.r_[0, n_eff].astype(np.int64),
            "parameter_name": "threshold",
            "cost_name": "acceptance rate",
            "risk_name": _RISK_NAMES[self.risk],
        }
        cand = np.flatnonzero(self.risk_curve_["certified"])
        cost = self.risk_curve_["cost"][cand]
        # the most rows accepted; among ties, the first in the testing order
        self.chosen_index_ = int(cand[np.flatnonzero(cost == cost.max())[0]])
        self.certified_ = bool(self.chosen_index_ > 0)
        self.threshold_ = float(self.risk_curve_["parameter"][self.chosen_index_])
        self.calibration_acceptance_rate_ = float(cost.max())
        self.calibration_risk_ = float(self.risk_curve_["risk"][self.chosen_index_])
        log_progress(
            self,
            f"calibrated on {self.n_calibration_samples_} rows: threshold_="
            f"{self.threshold_:.4g}, acceptance "
            f"{self.calibration_acceptance_rate_:.3f}",
        )

    # -- prediction ----------------------------------------------------------------
    def predict(self, X):
        """Labels: the model's (``"error"``, ``"fnr"``) or the thresholded ones.

        With ``risk="precision"``, ``target_class_`` on the accepted rows and
        the most probable other class elsewhere; otherwise the model's labels
        on every row (:meth:`accept` says which stand).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels.
        """
        X = self._check_X(X)
        proba = self._proba(X)
        if self.risk != "precision":
            return self.classes_[np.argmax(proba, axis=1)]
        c = self._target_index
        others = proba.copy()
        others[:, c] = -np.inf
        label = np.argmax(others, axis=1)
        label[proba[:, c] >= self.threshold_] = c
        return self.classes_[label]

    def accept(self, X):
        """Which rows are answered automatically (score >= ``threshold_``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        accepted : ndarray of bool of shape (n_samples,)
            ``True``: the prediction stands; ``False``: abstain (defer).
        """
        return self.confidence_score(X) >= self.threshold_

    def confidence_score(self, X):
        """The score thresholded by :meth:`accept` (see ``risk``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            Top class probability (``"error"``), ``p_c(x)`` (``"precision"``)
            or ``1 - p_c(x)`` (``"fnr"``).
        """
        X = self._check_X(X)
        return self._scores_and_labels(self._proba(X))[0]

    def predict_proba(self, X):
        """Class probabilities of the underlying classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        return self._proba(self._check_X(X))

    def _inner_has(attr):
        def check(self):
            inner = getattr(self, "estimator_", None)
            if inner is None:
                inner = self._get_estimator()
            return hasattr(inner, attr)

        return check

    @available_if(_inner_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the underlying classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            As the estimator's ``decision_function``.
        """
        X = self._check_X(X)
        return self.estimator_.decision_function(X)

    def risk_curve(self, X, y):
        """The risk and acceptance of every grid threshold on ``(X, y)``.

        The same entries as ``risk_curve_`` (the fallback first, then the
        grid), measured on new rows, e.g. test rows, without p-values: what
        :class:`~sklearn_iclr26.metrics.RiskControlDisplay` draws beside the
        calibration curve.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        y : array-like of shape (n_samples,)
            True labels.

        Returns
        -------
        curve : dict
            ``"parameter"``, ``"risk"``, ``"cost"``, ``"n_effective"``.
        """
        X = self._check_X(X)
        y = column_or_1d(y)
        check_consistent_length(X, y)
        scores, answer = self._scores_and_labels(self._proba(X))
        losses, relevant = self._losses(answer, self._encode(y))
        grid = self.risk_curve_["parameter"][1:]
        risk, acceptance, n_eff = selective_curve(scores, losses, relevant, grid)
        return {
            "parameter": np.r_[np.inf, grid],
            "risk": np.r_[0.0, risk],
            "cost": np.r_[0.0, acceptance],
            "n_effective": np.r_[0, n_eff].astype(np.int64),
        }

    def selective_risk(self, X, y, sample_weight=None):
        """Empirical risk of the fitted rule on ``(X, y)`` and its acceptance.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights of both means.

        Returns
        -------
        risk : float
            The ``risk`` of the accepted rows (0 when no relevant row).
        acceptance : float
            Share of the rows accepted.
        """
        X = self._check_X(X)
        y = column_or_1d(y)
        check_consistent_length(X, y)
        w = (
            np.ones(y.shape[0])
            if sample_weight is None
            else np.asarray(sample_weight, dtype=np.float64)
        )
        check_consistent_length(y, w)
        scores, answer = self._scores_and_labels(self._proba(X))
        losses, relevant = self._losses(answer, self._encode(y))
        accepted = scores >= self.threshold_
        among = accepted if relevant is None else relevant
        total = float(np.sum(w[among]))
        risk = float(np.sum(w[accepted & losses]) / total) if total > 0 else 0.0
        acceptance = float(np.sum(w[accepted]) / np.sum(w)) if np.sum(w) > 0 else 0.0
        return risk, acceptance
