"""Singleton-optimized conformal prediction (SOCOP) classifier."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np

from sklearn_iclr26.conformal._base_classifier import (
    ATTRIBUTES_DOC,
    CONDITIONAL_DOC,
    CV_DOC,
    LABEL_NOISE_DOC,
    BaseConformalClassifier,
    _fill_empty,
)
from sklearn_iclr26.conformal._conformity_scores import (
    _socop_sets,
    conformal_quantile,
    socop_scores,
    socop_sets,
)
from sklearn_iclr26.conformal._shift_calibration import (
    SHIFT_ATTRIBUTES_DOC,
    SHIFT_DOC,
)
from sklearn_iclr26.conformal._socop_kernels import socop_sets_fused
from sklearn_iclr26.metrics import set_size_stratified_coverage_violation
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._docstrings import Substitution
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, _fit_context
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["SOCOPClassifier"]

DEFAULT_LAM_GRID = np.concatenate([[0.0], np.logspace(-3, 1, 25)])
_FALLBACK_LAM = 0.1


def _knee_index(sizes, multiple_rates):
    """Knee of the (mean size, P(size > 1)) curve by the chord distance.

    Both coordinates are rescaled to [0, 1]; the knee is the point farthest
    from the chord joining the curve's two ends, on the side of the origin
    (small sets *and* few non-singletons), as Kneedle (Satopää et al., 2011).
    """
    x = np.asarray(sizes, dtype=float)
    y = np.asarray(multiple_rates, dtype=float)
    x_span, y_span = np.ptp(x), np.ptp(y)
    x = (x - x.min()) / x_span if x_span > 0 else np.zeros_like(x)
    y = (y - y.min()) / y_span if y_span > 0 else np.zeros_like(y)
    dx, dy = x[-1] - x[0], y[-1] - y[0]
    norm = np.hypot(dx, dy)
    if norm == 0:
        return int(np.argmin(x + y))
    signed = (dx * (y - y[0]) - dy * (x - x[0])) / norm
    origin_side = np.sign(dx * (0 - y[0]) - dy * (0 - x[0]))
    distance = signed * origin_side if origin_side != 0 else np.abs(signed)
    if distance.max() <= 0:
        return int(np.argmin(x + y))
    return int(np.argmax(distance))


def _tune_lam(
    proba, y_index, rng, *, confidence_level, allow_empty, k0, lam_grid, lam_criterion
):
    """SOCOP's ``lam="auto"`` on the tuning rows: ``(lam, lam_path)``.

    Cross-fitted on two halves (threshold on one, sets on the other); the
    knee of (mean size, P(size > k0)) or the smallest size-stratified
    coverage violation. Shared by ``SOCOPClassifier`` and ``SOCOPScore``.
    """
    grid = DEFAULT_LAM_GRID if lam_grid is None else lam_grid
    grid = np.sort(np.asarray(grid, dtype=float).ravel())
    if grid.size == 0 or np.any(grid < 0) or not np.all(np.isfinite(grid)):
        raise ValueError("lam_grid must be a non-empty array of finite lam >= 0.")
    level = float(confidence_level)
    n = proba.shape[0]
    # cross-fitting on two halves: threshold on one, sets on the other
    permutation = rng.permutation(n)
    halves = (permutation[: n // 2], permutation[n // 2 :])
    n_smallest = min(len(h) for h in halves)
    if np.isinf(conformal_quantile(np.zeros(n_smallest), level)):
        warn_user(
            f"The tuning split ({n} samples) is too small to choose lam at "
            f"confidence_level={confidence_level}: each half gives an "
            f"infinite threshold. lam={_FALLBACK_LAM} is used; pass more data, "
            "a larger tuning_size, or a numeric lam."
        )
        return _FALLBACK_LAM, None
    path = {k: [] for k in ("mean_size", "multiple_rate", "coverage", "sscv")}
    for lam in grid:
        scores = socop_scores(proba, lam=lam, k0=k0)
        true_scores = scores[np.arange(n), y_index]
        stats = {k: 0.0 for k in path}
        for fit_half, eval_half in (halves, halves[::-1]):
            threshold = conformal_quantile(true_scores[fit_half], level)
            sets = scores[eval_half] <= threshold
            if not allow_empty:
                _fill_empty(sets, proba[eval_half])
            sizes = sets.sum(axis=1)
            stats["mean_size"] += sizes.mean() / 2
            stats["multiple_rate"] += np.mean(sizes > k0) / 2
            covered = sets[np.arange(len(eval_half)), y_index[eval_half]]
            stats["coverage"] += covered.mean() / 2
            stats["sscv"] += (
                set_size_stratified_coverage_violation(
                    y_index[eval_half],
                    sets,
                    confidence_level=level,
                    classes=np.arange(proba.shape[1]),
                )
                / 2
            )
        for key, value in stats.items():
            path[key].append(value)
    lam_path = {"lam": grid, **{k: np.asarray(v) for k, v in path.items()}}
    if lam_criterion == "knee":
        best = _knee_index(path["mean_size"], path["multiple_rate"])
    else:
        best = int(np.argmin(path["sscv"]))
    return float(grid[best]), lam_path


@Substitution(
    conditional_parameter=CONDITIONAL_DOC,
    cv_parameters=CV_DOC,
    label_noise_parameters=LABEL_NOISE_DOC,
    shift_parameters=SHIFT_DOC,
    shift_attributes=SHIFT_ATTRIBUTES_DOC,
    conformal_attributes=ATTRIBUTES_DOC,
)
class SOCOPClassifier(BaseConformalClassifier):
    """Singleton-optimized conformal prediction sets (SOCOP).

    Split-conformal classification whose conformity score minimises the
    probability of non-singleton sets, ``P(|C(X)| > 1)`` (Vovk's M-criterion),
    plus ``lam`` times the expected set size, under the coverage constraint
    ``P(Y in C(X)) >= confidence_level`` (Wang, Sun and Dobriban, ICLR 2026). A label's
    score is the smallest Lagrange price at which it enters the per-instance
    optimal set (see :func:`socop_scores`); the scores then go through plain
    split conformal prediction, so the finite-sample marginal guarantee holds
    for any model and any ``lam``.

    ``fit`` fits a clone of ``estimator`` on one split, chooses ``lam`` on a
    tuning split disjoint from calibration (the knee of mean size against
    P(size > 1) over ``lam_grid``, as the paper; or the smallest
    size-stratified coverage violation), and calibrates on the last split. A
    model trained elsewhere is passed as ``FrozenEstimator(model)``: then all
    the data given to ``fit`` is tuning and calibration data.

    ``X`` reaches ``estimator`` untouched: put the preprocessing inside, e.g.
    ``SOCOPClassifier(make_pipeline(ColumnTransformer(...), LGBMClassifier()))``
    on a raw DataFrame with string columns, so that :meth:`predict_set` takes
    the raw data too.

    Parameters
    ----------
    estimator : classifier with ``predict_proba``, default=None
        The probabilistic classifier; ``None`` means
        ``make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))``.
        Any classifier works (LightGBM,
        :class:`~sklearn_iclr26.neural_network.TorchMLPClassifier`, a
        :class:`~sklearn.pipeline.Pipeline` with its preprocessing...); wrap a
        fitted one in :class:`~sklearn.frozen.FrozenEstimator` (then ``fit``
        takes no keyword arguments), or call :meth:`calibrate`.
    confidence_level : float, default=0.9
        Target coverage: sets contain the true label with probability at
        least ``confidence_level``.
    lam : "auto" or float >= 0, default="auto"
        Weight of the expected set size against the non-singleton indicator.
        ``0`` gives "pure singleton" sets (the top label, or every label);
        large values approach LAC. ``"auto"`` chooses it on the tuning split.
    k0 : int, default=1
        Penalise sets with more than ``k0`` labels instead of non-singletons.
    lam_grid : array-like of float, default=None
        Candidates for ``lam="auto"``; default ``[0] + logspace(-3, 1, 25)``.
    lam_criterion : {"knee", "sscv"}, default="knee"
        How ``lam="auto"`` chooses: the knee of the (mean size, P(size > 1))
        curve, or the smallest size-stratified coverage violation.
    calibration_size : float, default=0.3
        Fraction of the data used for calibration.
    tuning_size : float, default=0.2
        Fraction of the data used to choose ``lam`` (only when
        ``lam="auto"``). With a ``FrozenEstimator`` the two fractions are
        rescaled to share all the data.
    allow_empty : bool, default=False
        SOCOP sets are empty when ``lam / max p(y | x)`` exceeds the threshold
        (a confident model at a low ``confidence_level``). With ``False`` the
        top label is added to empty sets, which can only raise coverage.
    %(conditional_parameter)s
        SOCOP keeps its score: ``lam`` is chosen on the tuning split with one
        marginal threshold, and each label's score is then compared with its
        class's (or the row's bin's) quantile.
    %(label_noise_parameters)s
    %(shift_parameters)s
    %(cv_parameters)s
        With SOCOP, ``cv`` needs a numeric ``lam``: ``lam="auto"`` chooses
        the score on a tuning split, which cross-conformal calibration has
        no room for (tuning on the out-of-fold scores would make the score
        depend on the calibration rows and void the guarantee), so
        ``cv`` with ``lam="auto"`` raises. Choose ``lam`` once (e.g. from a
        split fit's ``lam_``) and pass it.
    verbose : int, default=0
        Print the fitting, tuning and calibration steps when positive.
    random_state : int, RandomState instance or None, default=None
        Controls the train/tuning/calibration splits and seeds the
        ``random_state`` parameters of ``estimator`` left at ``None``.

    Attributes
    ----------
    estimator_ : classifier
        The fitted classifier (the frozen one when prefit).
    classes_ : ndarray of shape (n_classes,)
        Class labels, those of ``estimator_``.
    lam_ : float
        The ``lam`` used.
    lam_path_ : dict of ndarray or None
        With ``lam="auto"``: ``"lam"``, ``"mean_size"``, ``"multiple_rate"``
        (P(size > ``k0``)), ``"coverage"`` and ``"sscv"`` on the tuning split
        for every candidate. ``None`` with a numeric ``lam``.
    %(conformal_attributes)s
    %(shift_attributes)s

    See Also
    --------
    SplitConformalClassifier : The same split-conformal machinery with the
        LAC, APS, RAPS or Margin score.
    socop_scores : The score on any probability matrix.

    Notes
    -----
    A label unseen by the model in training cannot be covered; ``fit`` raises
    if the tuning or calibration data contains one. NaN in ``X`` passes only
    if the estimator accepts NaN. With ``lam = 0`` every top label scores 0,
    so ties make coverage conservative.

    References
    ----------
    Wang, Sun and Dobriban, "Singleton-Optimized Conformal Prediction",
    ICLR 2026, arXiv:2509.24095.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from sklearn_iclr26.conformal import SOCOPClassifier
    >>> X, y = load_digits(return_X_y=True)
    >>> clf = SOCOPClassifier(GaussianNB(), confidence_level=0.9, random_state=0)
    >>> sets = clf.fit(X, y).predict_set(X[:5])
    >>> sets.shape
    (5, 10)
    >>> int(clf.predict_set(X[:5], output="sparse").nnz) == int(sets.sum())
    True
    """

    _parameter_constraints: dict = {
        **BaseConformalClassifier._parameter_constraints,
        "lam": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
        "k0": [Interval(Integral, 1, None, closed="left")],
        "lam_grid": ["array-like", None],
        "lam_criterion": [StrOptions({"knee", "sscv"})],
        "tuning_size": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(
        self,
        estimator=None,
        *,
        confidence_level=0.9,
        lam="auto",
        k0=1,
        lam_grid=None,
        lam_criterion="knee",
        calibration_size=0.3,
        tuning_size=0.2,
        allow_empty=False,
        conditional=None,
        label_noise=None,
        label_noise_correction="auto",
        shift=None,
        shift_estimator=None,
        label_shift_method="bbse",
        cv=None,
        agg_scores="crossval",
        verbose=0,
        random_state=None,
    ):
        store_params(self, locals())

    def _needs_tuning(self):
        return isinstance(self.lam, str)

    def _tuning_fraction(self):
        return float(self.tuning_size)

    def _score_matrix(self, proba, uniforms=None):
        return socop_scores(proba, lam=self.lam_, k0=self.k0)

    def _sets(self, proba, threshold, uniforms=None):
        if np.ndim(threshold) == 0 and self.k0 == 1:
            # proba is validated already (_predict_proba_checked)
            sets = socop_sets_fused(
                proba, float(self.lam_), float(threshold), validate=False
            )
            if sets is None:  # no numba: the numpy path, the same sets
                sets = _socop_sets(proba, float(self.lam_), float(threshold))
            return sets
        if np.ndim(threshold) == 0:
            return socop_sets(proba, lam=self.lam_, quantile=threshold, k0=self.k0)
        return self._score_matrix(proba, uniforms) <= threshold

    def _tune(self, proba, y_index, rng):
        self.lam_, self.lam_path_ = _tune_lam(
            proba,
            y_index,
            rng,
            confidence_level=float(self.confidence_level),
            allow_empty=self.allow_empty,
            k0=self.k0,
            lam_grid=self.lam_grid,
            lam_criterion=self.lam_criterion,
        )
        log_progress(self, f"lam_={self.lam_:.4g} ({self.lam_criterion})")

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, bins=None, X_target=None, **fit_params):
        """Fit the classifier, choose ``lam`` and calibrate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; split into training, tuning (``lam="auto"``) and
            calibration parts.
        y : array-like of shape (n_samples,)
            Labels.
        bins : array-like of shape (n_samples,), default=None
            Mondrian bin of every row (only with ``conditional="bins"``,
            where it is required); only the calibration rows' bins are used.
        X_target : array-like of shape (n_target, n_features), default=None
            Unlabeled rows of the target population (required with
            ``shift``; without it, only the shift check runs). Metadata:
            with routing, ``set_fit_request(X_target=True)``.
        **fit_params : dict
            Passed to ``estimator.fit`` on the training part (per-sample
            arrays such as ``sample_weight`` are split accordingly); with
            metadata routing enabled, routed to it.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit_conformal(X, y, bins=bins, X_target=X_target, **fit_params)

    def _init_fit_state(self):
        if not isinstance(self.lam, str):
            self.lam_ = float(self.lam)
            self.lam_path_ = None
