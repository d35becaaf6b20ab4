"""Split-conformal classifier with the classic scores (LAC, APS, RAPS, Margin)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import StrOptions

from sklearn_iclr26.conformal._base_classifier import BaseConformalClassifier
from sklearn_iclr26.conformal._conformity_scores import (
    SCORE_NAMES,
    _cumulative_mass,
    _lac_sets,
    _raps_with_uniforms,
    conformity_scores,
)

__all__ = ["SplitConformalClassifier"]

_RANDOMIZED = {"aps", "raps"}
# every named score but SOCOP's, which needs lam (SOCOPClassifier tunes it)
_SCORES = sorted(set(SCORE_NAMES) - {"socop"})


class SplitConformalClassifier(BaseConformalClassifier):
    """Split-conformal prediction sets with a classic conformity score.

    The baseline family of :class:`SOCOPClassifier`, with the same data
    handling (training / calibration split, ``FrozenEstimator`` for prefit
    models, ``predict_set``), so that comparisons are one call away. Unlike
    MAPIE's class of the same name, it is a scikit-learn estimator: it clones,
    pickles and works in ``Pipeline`` and ``GridSearchCV``.

    ``X`` reaches ``estimator`` untouched: put the preprocessing inside (a
    :class:`~sklearn.pipeline.Pipeline`), so that :meth:`predict_set` takes
    the raw data too.

    Parameters
    ----------
    estimator : classifier with ``predict_proba``, default=None
        The probabilistic classifier; ``None`` means
        ``make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))``.
        Wrap a fitted one in :class:`~sklearn.frozen.FrozenEstimator` (then
        ``fit`` takes no keyword arguments), or call :meth:`calibrate`.
    conformity_score : {"lac", "aps", "raps", "margin"}, default="lac"
        Conformity score: ``1 - p(y|x)`` (LAC), cumulative sorted mass (APS),
        APS plus a rank penalty (RAPS), or the margin
        ``max_{y' != y} p(y'|x) - p(y|x)``. APS and RAPS always calibrate on
        the randomized score (MAPIE's rule); without ``randomized`` their sets
        take the sorted labels up to and including the one at which the
        cumulative mass (plus the RAPS penalty) crosses the threshold
        (MAPIE's ``include_last_label=True``), so they always hold the top
        label and cover conservatively.
    score_params : dict, default=None
        Parameters of the score function: ``randomized`` for APS/RAPS,
        ``lam_reg`` and ``k_reg`` for RAPS.
    confidence_level : float, default=0.9
        Target coverage.
    calibration_size : float, default=0.3
        Fraction of the data used for calibration (all of it with a
        ``FrozenEstimator`` and in :meth:`calibrate`).
    allow_empty : bool, default=False
        If ``False`` the top label is added to empty sets.
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
        Print the fitting and calibration steps when positive.
    random_state : int, RandomState instance or None, default=None
        Controls the split and the uniform draws of randomized scores, and
        seeds the ``random_state`` parameters of ``estimator`` left at
        ``None``.

    Attributes
    ----------
    estimator_ : classifier
        The fitted classifier.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
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
    SOCOPClassifier : Singleton-optimized scores.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.conformal import SplitConformalClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = SplitConformalClassifier(conformity_score="aps", random_state=0)
    >>> clf = clf.fit(X, y)
    >>> clf.predict_set(X[:3]).sum(axis=1)
    array([1, 1, 1])
    """

    _parameter_constraints: dict = {
        **BaseConformalClassifier._parameter_constraints,
        "conformity_score": [StrOptions(set(_SCORES))],
        "score_params": [dict, None],
    }

    def __init__(
        self,
        estimator=None,
        *,
        conformity_score="lac",
        score_params=None,
        confidence_level=0.9,
        calibration_size=0.3,
        allow_empty=False,
        conditional=None,
        label_noise=None,
        label_noise_correction="plugin",
        verbose=0,
        random_state=None,
    ):
        self.estimator = estimator
        self.conformity_score = conformity_score
        self.score_params = score_params
        self.confidence_level = confidence_level
        self.calibration_size = calibration_size
        self.allow_empty = allow_empty
        self.conditional = conditional
        self.label_noise = label_noise
        self.label_noise_correction = label_noise_correction
        self.verbose = verbose
        self.random_state = random_state

    def _is_randomized(self):
        params = self.score_params or {}
        return self.conformity_score in _RANDOMIZED and bool(
            params.get("randomized", False)
        )

    def _calibration_randomized(self):
        # APS and RAPS calibrate on the randomized score whether or not their
        # sets are randomized (see the class docstring)
        return self.conformity_score in _RANDOMIZED or self._is_randomized()

    def _score_matrix(self, proba, uniforms=None):
        params = dict(self.score_params or {})
        params.pop("randomized", None)
        params.pop("random_state", None)
        if self.conformity_score in _RANDOMIZED:
            # the uniform draws are row-aligned and given, so that batches of
            # rows get the draws of one batch (random_state is the
            # estimator's: the draws come from its seed). No draws
            # (non-randomized sets): u = 1, the mass ranked strictly before
            # the label, so the set runs up to and including the label at
            # which the cumulative mass (plus the RAPS penalty) crosses the
            # threshold
            uniforms = 1.0 if uniforms is None else uniforms
            if self.conformity_score == "aps":
                return _cumulative_mass(proba, uniforms)[0]
            return _raps_with_uniforms(proba, uniforms=uniforms, **params)
        return conformity_scores(proba, self.conformity_score, **params)

    def _sets(self, proba, threshold, uniforms=None):
        if self.conformity_score == "lac":
            # one comparison per cell, equal to 1 - proba <= threshold
            return _lac_sets(proba, threshold)
        return super()._sets(proba, threshold, uniforms)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, bins=None, **fit_params):
        """Fit the classifier and calibrate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, split into training and calibration parts.
        y : array-like of shape (n_samples,)
            Labels.
        bins : array-like of shape (n_samples,), default=None
            Mondrian bin of every row (only with ``conditional="bins"``,
            where it is required); only the calibration rows' bins are used.
        **fit_params : dict
            Passed (split) to ``estimator.fit``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._check_calibrate_params()
        return self._fit_conformal(X, y, bins=bins, **fit_params)

    def _check_calibrate_params(self):
        # score_params checked once, by the score function itself; a fixed
        # random_state keeps the randomized scores off numpy's global RNG
        params = dict(self.score_params or {})
        if params.get("randomized", False):
            params["random_state"] = 0
        conformity_scores(np.full((1, 2), 0.5), self.conformity_score, **params)
