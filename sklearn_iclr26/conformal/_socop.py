"""Singleton-optimized conformal prediction (SOCOP) classifier."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from sklearn_iclr26.conformal._base_classifier import (
    BaseConformalClassifier,
    _fill_empty,
)
from sklearn_iclr26.conformal._conformity_scores import (
    _socop_sets,
    conformal_quantile,
    socop_scores,
    socop_sets,
)
from sklearn_iclr26.metrics import set_size_stratified_coverage_violation
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
    conditional : {None, "class", "bins"}, default=None
        Mondrian (group-conditional) calibration. ``None``: one threshold,
        marginal coverage ``P(Y in C(X)) >= confidence_level``. ``"class"``:
        one threshold per class, from the calibration rows of that class, and
        label ``classes_[j]`` enters a set when its score is at most
        ``threshold_[j]``: coverage given the true class, ``P(Y in C(X) | Y =
        y) >= confidence_level`` for every ``y``. ``"bins"``: one threshold
        per bin of the ``bins`` metadata (any labels, e.g. a group column,
        passed as ``fit(X, y, bins=...)`` and ``predict_set(X, bins=...)``;
        with metadata routing, ``set_fit_request(bins=True)``): coverage given
        the bin. A class or bin too small for the level warns and gets the
        trivial answer (that class always in the set; every label for that
        bin), never an error; a bin unseen at calibration raises at predict.
        SOCOP keeps its score: ``lam`` is chosen on the tuning split with one
        marginal threshold, and each label's score is then compared with its
        class's (or the row's bin's) quantile.
    label_noise : None, float or array-like of shape (n_classes, n_classes), \
            default=None
        The noise model of the **calibration** labels, as data (known or
        estimated elsewhere, e.g. ``ClassConditionalNoiseCorrector(...).fit(X,
        y).transition_matrix_`` on held-out rows). ``None``: the labels are
        taken as clean. A float ``rate``: symmetric noise, each label flipped
        with probability ``rate`` to a uniformly random other class. A matrix
        ``T`` with ``T[i, j] = P(observed classes_[j] | true classes_[i])``
        (rows summing to 1, invertible): class-conditional noise. The
        threshold is then computed from the **de-mixed** calibration CDF
        ``F(t) = (1/n) sum_i sum_k W[y~_i, k] 1{s(X_i, k) <= t}``, ``W =
        T^{-1}``, an unbiased estimate of the clean-label score CDF (Sesia,
        Wang and Tong, 2023, the label-noise correction ``F_hat + Delta_hat``
        of their adaptive calibration; marginal form for ``conditional=None``
        and ``"bins"``, label-conditional form for ``"class"``, whose sample
        size is the estimated clean class count ``sum_i W[y~_i, k]``). It
        assumes the noisy label independent of ``X`` given the true label,
        and ``T`` right. It targets coverage of the **clean** labels,
        ``P(Y in C(X)) >= confidence_level``, asymptotically (the weighted
        CDF converges to the clean one as the calibration set grows): the
        paper's finite-sample margin ``delta``, which makes the bound hold in
        finite samples at the cost of (at digits' scale) trivial sets, is
        applied only with ``label_noise_correction="finite_sample"``.
        ``label_noise=0`` or the identity matrix gives the plain
        estimator, bit for bit. Works with every score
        (the correction never looks inside it); ``predict_p`` gives the
        p-values of the de-mixed CDF (``smoothed=True`` is not defined).
    label_noise_correction : {"plugin", "finite_sample"}, default="plugin"
        With ``label_noise``: ``"plugin"`` thresholds the de-mixed CDF by the
        split-conformal rule (asymptotic guarantee, reduces to the plain
        estimator for no noise); ``"finite_sample"`` by the paper's rule with
        its margin, ``F(t) >= confidence_level + delta`` (``delta`` a
        Kolmogorov-Smirnov constant plus a term in ``|T^{-1}|`` over the
        square root of the smallest noisy class count; see
        ``finite_sample_margin`` in ``conformal/_noisy_calibration.py``),
        for the finite-sample bound, with the class priors estimated from the
        noisy labels. It is conservative: with 450 calibration rows, 10
        classes and 20 % symmetric noise ``delta`` is 0.20 (0.24 per class)
        and the sets hold every label (a warning says so); without noise it
        is ``delta = c_n``, not the plain estimator. ``predict_p`` is not
        defined with it.
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
    threshold_ : float or ndarray of shape (n_classes,) or (n_bins,)
        The conformal threshold at ``confidence_level``; ``inf`` when the
        calibration set is too small for it (then every set is the full label
        set, after a warning). With ``conditional="class"`` one per class,
        indexed like ``classes_``; with ``conditional="bins"`` one per bin,
        indexed like ``bins_`` (``inf`` for a class or bin too small).
    label_noise_matrix_ : ndarray of shape (n_classes, n_classes) or None
        The transition matrix ``label_noise`` stands for (``None`` without
        it). ``calibration_scores_`` and ``calibration_bin_scores_`` stay the
        scores of the observed (noisy) labels.
    bins_ : ndarray of shape (n_bins,)
        The sorted bins seen at calibration (``conditional="bins"`` only).
    calibration_scores_ : ndarray of shape (`n_calibration_samples_`,)
        Sorted scores of the true labels of all the calibration points.
    calibration_bin_scores_ : list of ndarray
        With ``conditional``: the sorted calibration scores of each class
        (indexed like ``classes_``) or bin (like ``bins_``).
    n_calibration_per_bin_ : ndarray of shape (n_classes,) or (n_bins,)
        With ``conditional``: the number of calibration points of each class
        or bin.
    n_calibration_samples_ : int
        Number of calibration points.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.

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
        label_noise_correction="plugin",
        verbose=0,
        random_state=None,
    ):
        self.estimator = estimator
        self.confidence_level = confidence_level
        self.lam = lam
        self.k0 = k0
        self.lam_grid = lam_grid
        self.lam_criterion = lam_criterion
        self.calibration_size = calibration_size
        self.tuning_size = tuning_size
        self.allow_empty = allow_empty
        self.conditional = conditional
        self.label_noise = label_noise
        self.label_noise_correction = label_noise_correction
        self.verbose = verbose
        self.random_state = random_state

    def _needs_tuning(self):
        return isinstance(self.lam, str)

    def _tuning_fraction(self):
        return float(self.tuning_size)

    def _score_matrix(self, proba, uniforms=None):
        return socop_scores(proba, lam=self.lam_, k0=self.k0)

    def _sets(self, proba, threshold, uniforms=None):
        if np.ndim(threshold) == 0 and self.k0 == 1:
            # proba is validated already (_predict_proba_checked)
            return _socop_sets(proba, float(self.lam_), float(threshold))
        if np.ndim(threshold) == 0:
            return socop_sets(proba, lam=self.lam_, quantile=threshold, k0=self.k0)
        return self._score_matrix(proba, uniforms) <= threshold

    def _tune(self, proba, y_index, rng):
        grid = DEFAULT_LAM_GRID if self.lam_grid is None else self.lam_grid
        grid = np.sort(np.asarray(grid, dtype=float).ravel())
        if grid.size == 0 or np.any(grid < 0) or not np.all(np.isfinite(grid)):
            raise ValueError("lam_grid must be a non-empty array of finite lam >= 0.")
        level = float(self.confidence_level)
        n = proba.shape[0]
        # cross-fitting on two halves: threshold on one, sets on the other
        permutation = rng.permutation(n)
        halves = (permutation[: n // 2], permutation[n // 2 :])
        n_smallest = min(len(h) for h in halves)
        if np.isinf(conformal_quantile(np.zeros(n_smallest), level)):
            warn_user(
                f"The tuning split ({n} samples) is too small to choose lam at "
                f"confidence_level={self.confidence_level}: each half gives an "
                f"infinite threshold. lam={_FALLBACK_LAM} is used; pass more data, "
                "a larger tuning_size, or a numeric lam."
            )
            self.lam_ = _FALLBACK_LAM
            self.lam_path_ = None
            return
        path = {k: [] for k in ("mean_size", "multiple_rate", "coverage", "sscv")}
        for lam in grid:
            scores = socop_scores(proba, lam=lam, k0=self.k0)
            true_scores = scores[np.arange(n), y_index]
            stats = {k: 0.0 for k in path}
            for fit_half, eval_half in (halves, halves[::-1]):
                threshold = conformal_quantile(true_scores[fit_half], level)
                sets = scores[eval_half] <= threshold
                if not self.allow_empty:
                    _fill_empty(sets, proba[eval_half])
                sizes = sets.sum(axis=1)
                stats["mean_size"] += sizes.mean() / 2
                stats["multiple_rate"] += np.mean(sizes > self.k0) / 2
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
        self.lam_path_ = {"lam": grid, **{k: np.asarray(v) for k, v in path.items()}}
        if self.lam_criterion == "knee":
            best = _knee_index(path["mean_size"], path["multiple_rate"])
        else:
            best = int(np.argmin(path["sscv"]))
        self.lam_ = float(grid[best])
        log_progress(self, f"lam_={self.lam_:.4g} ({self.lam_criterion})")

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, bins=None, **fit_params):
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
        **fit_params : dict
            Passed to ``estimator.fit`` on the training part (per-sample
            arrays such as ``sample_weight`` are split accordingly); with
            metadata routing enabled, routed to it.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit_conformal(X, y, bins=bins, **fit_params)

    def _init_fit_state(self):
        if not isinstance(self.lam, str):
            self.lam_ = float(self.lam)
            self.lam_path_ = None
