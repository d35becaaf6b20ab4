"""Shift-weighted split-conformal calibration (covariate and label shift).

One mixin for the conformal classifiers and one for the regressors: the fit
checks of ``X_target``, the shift check (``shift_pvalue_``), the weights and
their effective sample size, and the weighted thresholds, built on the
foundation's :func:`~sklearn_iclr26.utils._weighted_quantile.
weighted_conformal_quantile` and ``utils._shift`` (domain-classifier ratio,
BBSE / EM priors).

Covariate shift (Tibshirani, Barber, Candès and Ramdas, 2019): calibration
row ``i`` weighs ``w(x_i)``, a test point ``w(x)``, and the threshold at
``x`` is the weighted quantile with the test point's mass at ``+inf``: one
threshold per test row. Label shift (Podkopaev and Ramdas, 2021): the weight
of a (row, label) pair is the class weight ``pi_target(y) / pi_source(y)``,
and label ``k`` enters the set at ``x`` when ``s(x, k)`` is at most the
weighted quantile with test mass ``w_k``: one threshold per class.

With ``label_noise`` the two corrections are one calibration: the de-mixing
weight ``W[y~_i, k]`` (``W = T^{-1}``) of each (calibration row, label) pair
is multiplied by the shift weight (``w(x_i)``, or ``w_k``), and the threshold
is the first score at which the signed weighted CDF reaches ``level * (total
+ test mass)``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

from sklearn_iclr26.utils._batching import batch_slices
from sklearn_iclr26.utils._shift import (
    DEFAULT_CLIP,
    bbse_priors,
    effective_sample_size,
    em_priors,
    fit_domain_ratio,
)
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    StrOptions,
    _check_feature_names,
    _check_n_features,
    _num_samples,
    _safe_indexing,
)
from sklearn_iclr26.utils._validation import check_confidence_level
from sklearn_iclr26.utils._warnings import warn_user
from sklearn_iclr26.utils._weighted_quantile import weighted_conformal_quantile

#: fewest target rows ``fit`` accepts with ``shift`` or ``X_target``
MIN_TARGET_ROWS = 10
#: folds of the cross-fitted domain classifier
N_SPLITS = 5
#: permutations of the shift check
N_PERMUTATIONS = 999
#: the shift check warns below this p-value when ``shift=None``
SHIFT_ALPHA = 0.01

SHIFT_CONSTRAINTS = {
    "shift": [StrOptions({"covariate", "label"}), None],
    "shift_estimator": [HasMethods(["fit", "predict_proba"]), None],
    "label_shift_method": [StrOptions({"bbse", "em"})],
}

#: numpydoc text of the shift parameters (classifiers)
SHIFT_DOC = """shift : {None, "covariate", "label"}, default=None
    Calibrate for a **target** population given as unlabeled rows,
    ``fit(X, y, X_target=...)`` (metadata: with routing,
    ``set_fit_request(X_target=True)``). ``"covariate"``: ``P(y | x)``
    is shared and ``P(x)`` moves; each calibration row is weighted by the
    likelihood ratio ``w(x) = dP_target / dP_calibration`` from the
    cross-fitted domain classifier ``shift_estimator`` (calibration rows
    scored out of fold, its probabilities clipped to ``[0.01, 0.99]``,
    so a ratio is at most 99 times ``n_calibration / n_target``), and
    each test row gets its own threshold, the weighted quantile with its
    own weight at ``+inf`` (Tibshirani et al., 2019). ``"label"``:
    ``P(x | y)`` is shared and the class priors move; the target priors
    are estimated by ``label_shift_method`` and each label ``k`` gets
    its own threshold from the calibration scores weighted by
    ``pi_target / pi_calibration`` of their labels (Podkopaev and
    Ramdas, 2021). Coverage of the target, ``P_target(Y in C(X)) >=
    confidence_level``, holds if the weights are the true ratio; with
    estimated weights, up to their error (see the user guide's
    measurements). Needs ``conditional=None`` (``conditional="class"``
    is already valid under label shift: its coverage given each class
    does not depend on the priors). ``None`` with ``X_target``: no
    weighting, but the shift check runs (``shift_pvalue_``) and warns if
    it rejects. With ``label_noise`` both corrections enter one
    calibration (asymptotic guarantee, as ``label_noise`` alone; the
    noise model must hold in both populations; label shift then needs
    ``label_shift_method="bbse"``).
shift_estimator : classifier with ``predict_proba``, default=None
    The domain classifier of ``shift="covariate"`` and of the shift check
    (calibration rows against target rows, 5-fold cross-fitted); it sees
    ``X`` untouched. ``None``: ``make_pipeline(StandardScaler(),
    LogisticRegression(max_iter=1000))`` (numeric features).
label_shift_method : {"bbse", "em"}, default="bbse"
    Target class priors for ``shift="label"``: ``"bbse"`` inverts the
    model's confusion matrix on the calibration rows against its
    prediction rates on the target rows (Lipton et al., 2018; needs an
    invertible confusion matrix); ``"em"`` iterates the prior-adjusted
    posteriors (Saerens et al., 2002; needs calibrated probabilities)."""

#: numpydoc text of the shift attributes (classifiers)
SHIFT_ATTRIBUTES_DOC = """shift_pvalue_ : float or None
    With ``X_target``: the permutation p-value (999 permutations within
    the folds) of the domain classifier's out-of-fold AUC, calibration
    against target rows (small: the populations differ); ``None``
    without ``X_target``.
shift_auc_ : float or None
    That out-of-fold AUC (0.5: no detectable shift).
calibration_weights_ : ndarray of shape (`n_calibration_samples_`,) or None
    With ``shift``: the weight of each calibration row, aligned with
    ``calibration_scores_`` (the out-of-fold ratio, or the class weight
    of its label).
effective_sample_size_ : float or None
    With ``shift``: the Kish effective size ``(sum w)^2 / sum w^2`` of
    ``calibration_weights_``, for covariate shift capped by the median
    over the target rows of ``sum_i w_i / w(x)`` (the number of
    calibration rows a typical target point's own mass is worth: with
    clipped ratios and poor overlap the calibration weights can be
    nearly equal while the target masses dwarf them). A warning is
    raised when it is below ``confidence_level / (1 -
    confidence_level)``, the size a finite threshold needs.
target_priors_ : ndarray of shape (n_classes,) or None
    With ``shift="label"``: the estimated target class priors
    (``source_priors_``: the calibration rows', ``class_weights_``: their
    ratio)."""


def _check_target(est, X, X_target):
    """Check ``X_target`` against the fitted columns; its row count."""
    from sklearn_iclr26.conformal._base_classifier import _check_2d, _indexable

    shift = getattr(est, "shift", None)
    if shift is not None and X_target is None:
        raise ValueError(
            f"{type(est).__name__}(shift={shift!r}) needs unlabeled rows of "
            "the target population: call fit(X, y, X_target=...) (with "
            "metadata routing, set_fit_request(X_target=True))."
        )
    if X_target is None:
        return None
    X_target = _indexable(X_target)
    _check_2d(X_target, est)
    try:
        _check_feature_names(est, X_target, reset=False)
        _check_n_features(est, X_target, reset=False)
    except ValueError as exc:
        raise ValueError(f"X_target must have the columns of X ({exc}).") from exc
    n_target = _num_samples(X_target)
    if n_target < MIN_TARGET_ROWS:
        raise ValueError(
            f"X_target has {n_target} rows; the shift estimation needs at least "
            f"{MIN_TARGET_ROWS} (and many more for a useful ratio or prior)."
        )
    return X_target


def _ess_warning(est, weights, level, test_weights=None):
    ess = effective_sample_size(weights)
    if test_weights is not None and weights.size and test_weights.size:
        # a target point of weight w(x) is worth sum_i w_i / w(x) calibration
        # rows: with clipped ratios and poor overlap the calibration weights
        # can be nearly equal (Kish size near n) while the target points'
        # own masses dwarf them
        ess = min(ess, float(np.median(np.sum(weights) / test_weights)))
    needed = math.ceil(level / (1.0 - level) - 1e-9)
    if ess < needed:
        warn_user(
            f"The effective sample size of the shift-weighted calibration is "
            f"{ess:.1f}, below the {needed} that confidence_level={level} needs "
            "for a finite threshold at a unit-weight point: the calibration and "
            "target populations overlap poorly, and many sets/intervals will be "
            "trivial (infinite threshold). Use more calibration data, a target "
            "closer to the training population, or a lower confidence_level."
        )
    if test_weights is not None and weights.size:
        total = float(np.sum(weights))
        infinite = test_weights / (total + test_weights) > 1.0 - level
        if np.mean(infinite) > 0.1:
            warn_user(
                f"{np.mean(infinite):.0%} of the target rows have a likelihood "
                "ratio so large that their weighted threshold is infinite at "
                f"confidence_level={level} (trivial sets or intervals): the "
                "target population lies partly outside the calibration one."
            )
    return ess


def _check_shift_params(est):
    if est.shift is not None and getattr(est, "conditional", None) is not None:
        raise ValueError(
            f"shift={est.shift!r} needs conditional=None (got "
            f"conditional={est.conditional!r}). conditional='class' is already "
            "valid under label shift (coverage given each class does not depend "
            "on the class priors)."
        )


def _shift_check(est, X_cal, X_target, rng, fit_ratio):
    """Run the domain-classifier test; keep the ratio when ``fit_ratio``."""
    ratio = fit_domain_ratio(
        getattr(est, "shift_estimator", None),
        X_cal,
        X_target,
        n_splits=N_SPLITS,
        clip=DEFAULT_CLIP,
        n_permutations=N_PERMUTATIONS,
        random_state=rng,
    )
    est.shift_auc_ = float(ratio.auc)
    est.shift_pvalue_ = float(ratio.pvalue)
    if getattr(est, "shift", None) is None and ratio.pvalue < SHIFT_ALPHA:
        warn_user(
            f"The calibration and target rows differ (domain classifier "
            f"out-of-fold AUC {ratio.auc:.3f}, permutation p-value "
            f"{ratio.pvalue:.3g}), but shift=None: the coverage promised at "
            "confidence_level is for the calibration population, not the "
            "target. Set shift='covariate' or shift='label'."
        )
    return ratio if fit_ratio else None


class _WeightedCDF:
    """A weighted (possibly signed) calibration CDF with a test-point mass.

    ``scores`` and ``weights`` of the same shape (flattened); the threshold at
    test mass ``m`` is the first score at which the running maximum of the
    cumulative weight reaches ``level * (total + m)`` (``inf`` if none).
    Non-negative weights give exactly :func:`weighted_conformal_quantile`'s
    rule; the signed case is the de-mixed CDF of the noisy-label calibration.
    """

    def __init__(self, scores, weights, total):
        scores = np.asarray(scores, dtype=np.float64).ravel()
        weights = np.asarray(weights, dtype=np.float64).ravel()
        keep = weights != 0
        scores, weights = scores[keep], weights[keep]
        order = np.argsort(scores, kind="stable")
        scores, cum = scores[order], np.cumsum(weights[order])
        if scores.size:
            last = np.r_[scores[1:] != scores[:-1], True]
            scores, cum = scores[last], cum[last]
        self.values = scores
        self.cum_max = np.maximum.accumulate(cum) if cum.size else cum
        self.total = float(total)

    def threshold(self, level, mass):
        mass = np.asarray(mass, dtype=np.float64)
        need = level * (self.total + mass) - 1e-12
        idx = np.searchsorted(self.cum_max, need, side="left")
        values = np.append(self.values, np.inf)
        return values[np.minimum(idx, self.values.shape[0])]

    def p_values(self, scores, mass):
        """``(total + m - M(s-)) / (total + m)``, ``M`` the weight below ``s``."""
        below = np.searchsorted(self.values, scores, side="left")
        m = np.where(below > 0, self.cum_max[np.maximum(below - 1, 0)], 0.0)
        return np.clip((self.total + mass - m) / (self.total + mass), 0.0, 1.0)


class ShiftClassifierMixin:
    """Shift-weighted calibration of the conformal classifiers (private)."""

    def _reset_shift_state(self):
        self.shift_pvalue_ = None
        self.shift_auc_ = None
        self.calibration_weights_ = None
        self.effective_sample_size_ = None
        self.target_priors_ = None
        self.source_priors_ = None
        self.class_weights_ = None
        self._shift_ratio = None
        self._shift_cdf = None

    def _proba_of(self, X):
        n = _num_samples(X)
        out = np.empty((n, self.classes_.shape[0]))
        for rows in batch_slices(n, self._row_bytes()):
            out[rows] = self._predict_proba_checked(_safe_indexing(X, rows))
        return out

    def _fit_shift(self, X, y, cal_index, X_target, cal_scores, cal_matrix, T, level):
        """Weights, priors, the shift check; before the thresholds."""
        self._reset_shift_state()
        if X_target is None:
            return
        # a generator of its own: the fit's stream (split, model seeds) is the
        # same with or without shift, so equal weights give today's sets
        rng = np.random.RandomState(self._seed % (2**32 - 1) ^ 0x5EED)
        X_cal = _safe_indexing(X, cal_index)
        ratio = _shift_check(self, X_cal, X_target, rng, self.shift == "covariate")
        if self.shift is None:
            return
        cal_y = self._label_index(y[cal_index])
        n_classes = self.classes_.shape[0]
        W = None
        if T is not None:
            from sklearn_iclr26.conformal._noisy_calibration import demixing_weights

            W = demixing_weights(T)
        if self.shift == "covariate":
            self._shift_ratio = ratio
            row_weights = ratio.source_weights
            weights = row_weights
            test_weights = ratio.target_weights
        else:
            proba_cal = self._proba_of(X_cal)
            proba_target = self._proba_of(X_target)
            if self.label_shift_method == "bbse":
                target, source = bbse_priors(
                    cal_y,
                    np.argmax(proba_cal, axis=1),
                    np.argmax(proba_target, axis=1),
                    n_classes,
                    demix=W,
                )
            else:
                if W is not None:
                    raise ValueError(
                        'label_shift_method="em" with label_noise is not valid: the '
                        "model's posteriors are of the noisy labels, which do not "
                        'shift like the clean ones. Use label_shift_method="bbse".'
                    )
                source = np.bincount(cal_y, minlength=n_classes) / cal_y.shape[0]
                target = em_priors(proba_target, source)
            with np.errstate(divide="ignore", invalid="ignore"):
                class_weights = np.where(source > 0, target / source, 0.0)
            self.target_priors_ = target
            self.source_priors_ = source
            self.class_weights_ = class_weights
            weights = class_weights[cal_y]
            test_weights = None
        scale = float(np.max(weights)) if weights.size and np.max(weights) > 0 else 1.0
        self._shift_scale = scale
        order = np.argsort(cal_scores, kind="stable")
        self.calibration_weights_ = np.asarray(weights, dtype=np.float64)[order]
        self.effective_sample_size_ = _ess_warning(
            self,
            self.calibration_weights_ / scale,
            level,
            None if test_weights is None else test_weights / scale,
        )
        if W is not None:
            # one calibration: de-mixing weight times shift weight per cell
            cell = W[cal_y]
            if self.shift == "covariate":
                cell = cell * (row_weights / scale)[:, None]
                total = float(np.sum(row_weights / scale))
            else:
                cell = cell * (self.class_weights_ / scale)[None, :]
                total = float(np.sum(cell))
            self._shift_cdf = _WeightedCDF(cal_matrix, cell, total)

    def _test_masses(self, Xb=None):
        """Normalised test masses: per row (covariate) or per label (label)."""
        if self.shift == "covariate":
            return self._shift_ratio.weights(Xb) / self._shift_scale
        return self.class_weights_ / self._shift_scale

    def _shift_threshold(self, level, Xb=None):
        """Threshold(s) at ``level``: per class (label), per row (covariate).

        Covariate without rows: the threshold of a unit-ratio point.
        """
        level = check_confidence_level(level)
        if self.shift == "covariate" and Xb is None:
            mass = np.asarray(1.0 / self._shift_scale)
        else:
            mass = self._test_masses(Xb)
        if self._shift_cdf is not None:
            out = self._shift_cdf.threshold(level, mass)
            return float(out) if np.ndim(out) == 0 else out
        w = self.calibration_weights_ / self._shift_scale
        if np.ndim(mass) == 0:
            return float(
                weighted_conformal_quantile(
                    self.calibration_scores_,
                    level,
                    sample_weight=w,
                    test_weight=float(mass),
                )
            )
        return weighted_conformal_quantile(
            self.calibration_scores_, level, sample_weight=w, test_weight=mass
        )

    def _row_thresholds(self, levels, Xb):
        """Per-level thresholds of a batch, shaped to compare with its scores.

        Covariate: ``(n, 1)`` per row (a float when every row shares one, so
        that equal weights take the unweighted code path bit for bit);
        label: ``(1, n_classes)``.
        """
        out = []
        for level in levels:
            level = self.confidence_level if level is None else level
            if self.shift == "covariate":
                t = self._shift_threshold(level, Xb)
                t = float(t[0]) if t.size and np.all(t == t[0]) else t[:, None]
            else:
                t = self._shift_threshold(level)[None, :]
            out.append(t)
        return out

    def _shift_p_values(self, scores, Xb):
        """Weighted p-values: ``p > 1 - level`` iff in the weighted set."""
        mass = self._test_masses(Xb)
        mass = mass[:, None] if self.shift == "covariate" else mass[None, :]
        if self._shift_cdf is not None:
            return self._shift_cdf.p_values(scores, mass)
        w = self.calibration_weights_ / self._shift_scale
        cdf = _WeightedCDF(self.calibration_scores_, w, float(np.sum(w)))
        return cdf.p_values(scores, mass)


SHIFT_REGRESSOR_CONSTRAINTS = {
    "shift": [StrOptions({"covariate"}), None],
    "shift_estimator": [HasMethods(["fit", "predict_proba"]), None],
}

#: numpydoc text of the shift parameters (regressors)
SHIFT_REGRESSOR_DOC = """shift : {None, "covariate"}, default=None
    Calibrate for a **target** population given as unlabeled rows,
    ``fit(X, y, X_target=...)`` (metadata: with routing,
    ``set_fit_request(X_target=True)``). ``"covariate"``: ``P(y | x)``
    is shared and ``P(x)`` moves; each calibration row is weighted by the
    likelihood ratio ``w(x) = dP_target / dP_calibration`` from the
    cross-fitted domain classifier ``shift_estimator`` (calibration rows
    scored out of fold, its probabilities clipped to ``[0.01, 0.99]``),
    and each test row gets its own threshold, the weighted quantile with
    its own weight at ``+inf`` (Tibshirani et al., 2019): target
    coverage if the weights are the true ratio, up to their error
    otherwise. Rows of equal threshold are computed together, so the
    predict-like methods cost one pass of the model per distinct
    threshold in a batch. Split calibration only (``conformal_cv`` must
    be ``"split"``). ``None`` with ``X_target``: no weighting, but the
    shift check runs (``shift_pvalue_``) and warns if it rejects.
shift_estimator : classifier with ``predict_proba``, default=None
    The domain classifier of ``shift="covariate"`` and of the shift check
    (calibration rows against target rows, 5-fold cross-fitted); it sees
    ``X`` untouched. ``None``: ``make_pipeline(StandardScaler(),
    LogisticRegression(max_iter=1000))`` (numeric features)."""

#: numpydoc text of the shift attributes (regressors)
SHIFT_REGRESSOR_ATTRIBUTES_DOC = """shift_pvalue_ : float or None
    With ``X_target``: the permutation p-value (999 permutations within
    the folds) of the domain classifier's out-of-fold AUC, calibration
    against target rows; ``None`` without ``X_target``.
shift_auc_ : float or None
    That out-of-fold AUC (0.5: no detectable shift).
calibration_weights_ : ndarray of shape (`n_calibration_samples_`,) or None
    With ``shift``: the out-of-fold likelihood ratio of each calibration
    row (in calibration-row order; ``calibration_scores_`` is sorted).
    ``threshold_`` is then the threshold of a test point of ratio 1.
effective_sample_size_ : float or None
    With ``shift``: the Kish effective size of ``calibration_weights_``,
    capped by the median over the target rows of ``sum_i w_i / w(x)``
    (a warning below ``confidence_level / (1 - confidence_level)``)."""


class _RowLevel:
    """A level whose threshold is per test row (covariate shift)."""

    def __init__(self, level):
        self.level = level


class ShiftRegressorMixin:
    """Shift-weighted calibration of the conformal regressors (private)."""

    def _fit_shift_regions(self, X_cal, X_target, scores):
        self.shift_pvalue_ = None
        self.shift_auc_ = None
        self.calibration_weights_ = None
        self.effective_sample_size_ = None
        self._shift_ratio = None
        if X_target is None:
            return
        rng = np.random.RandomState(self._shift_seed)
        shift = getattr(self, "shift", None)
        ratio = _shift_check(self, X_cal, X_target, rng, shift == "covariate")
        if shift is None:
            return
        if getattr(self, "conformal_cv", "split") != "split":
            raise ValueError(
                "shift='covariate' needs conformal_cv='split' (the weights apply "
                "to split calibration only)."
            )
        self._shift_ratio = ratio
        w = ratio.source_weights
        self._shift_scale = float(np.max(w))
        self.calibration_weights_ = w
        scores = np.asarray(scores).reshape(scores.shape[0], -1)
        order = np.argsort(scores, axis=0, kind="stable")
        # the weights in the order of each column of calibration_scores_
        self._shift_sorted_weights = (w / self._shift_scale)[order]
        level = float(self.confidence_level)
        self.effective_sample_size_ = _ess_warning(
            self,
            w / self._shift_scale,
            level,
            ratio.target_weights / self._shift_scale,
        )

    def _shift_active(self):
        return getattr(self, "_shift_ratio", None) is not None

    def _column_quantiles(self, level, mass=None):
        """Split-conformal quantile of each score column: (c,), or (c, m).

        ``mass``: the test rows' normalised weights (covariate shift).
        """
        n = self.calibration_scores_.shape[0]
        S = self.calibration_scores_.reshape(n, -1)
        if mass is None:
            from sklearn_iclr26.conformal._conformity_scores import conformal_quantile

            return np.array([conformal_quantile(col, level) for col in S.T])
        W = self._shift_sorted_weights
        return np.array(
            [
                weighted_conformal_quantile(
                    S[:, j], level, sample_weight=W[:, j], test_weight=mass
                )
                for j in range(S.shape[1])
            ]
        )

    def _unit_mass(self):
        return np.array([1.0 / self._shift_scale])

    def _row_masses(self, X):
        return self._shift_ratio.weights(X) / self._shift_scale

    def _by_row(self, func, X, level, *arrays):
        """``func(X_rows, threshold, *arrays_rows)`` per distinct row threshold.

        The thresholds of the rows (from their weights) are grouped, and
        ``func`` is called once per distinct threshold; results are put back
        in row order.
        """
        mass = self._row_masses(X)
        m = mass.shape[0]
        if m == 0:
            return func(X, self._threshold(level), *arrays)
        t = np.asarray(self._threshold_at(level, mass))
        per_row = t[:, None] if t.ndim == 1 else t.T.reshape(m, -1)
        unique, inverse = np.unique(per_row, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        out = None
        for g in range(unique.shape[0]):
            idx = np.flatnonzero(inverse == g)
            threshold = float(unique[g, 0]) if t.ndim == 1 else unique[g].copy()
            part = np.asarray(
                func(
                    _safe_indexing(X, idx),
                    threshold,
                    *[a[idx] for a in arrays],
                )
            )
            if out is None:
                out = np.empty((m, *part.shape[1:]), dtype=part.dtype)
            out[idx] = part
        return out
