"""Split-conformal classifier with the classic scores (LAC, APS, RAPS, Margin)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Real

import numpy as np
from sklearn.base import clone

from sklearn_iclr26.conformal._base_classifier import (
    ATTRIBUTES_DOC,
    CONDITIONAL_DOC,
    CV_DOC,
    LABEL_NOISE_DOC,
    BaseConformalClassifier,
    _fill_empty,
)
from sklearn_iclr26.conformal._conformity_scores import (
    SCORE_NAMES,
    _cumulative_mass,
    _label_ranks,
    _lac_sets,
    _raps_with_uniforms,
    conformal_quantile,
    conformity_scores,
)
from sklearn_iclr26.conformal._score_objects import BaseClassificationScore
from sklearn_iclr26.conformal._shift_calibration import (
    SHIFT_ATTRIBUTES_DOC,
    SHIFT_DOC,
)
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._docstrings import Substitution
from sklearn_iclr26.utils._sklearn_compat import StrOptions, _fit_context
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["SplitConformalClassifier"]

_RANDOMIZED = {"aps", "raps"}
#: lam_reg candidates of RAPS's "auto" (the values of Angelopoulos et al.,
#: as MAPIE's)
RAPS_LAM_GRID = (0.001, 0.01, 0.1, 0.2, 0.5)
# every named score but SOCOP's, which needs lam (SOCOPClassifier tunes it)
_SCORES = sorted(set(SCORE_NAMES) - {"socop"})


def _tune_raps(proba, y_index, level, lam_reg, k_reg):
    """RAPS's ``(lam_reg, k_reg)`` on the tuning rows (Angelopoulos et al.).

    ``k_reg = 1 +`` the conformal quantile of the true labels' 0-based ranks
    (MAPIE's ``k_star``) when ``"auto"``; ``lam_reg``, when ``"auto"``: of
    ``RAPS_LAM_GRID``, the one whose sets, calibrated on the tuning rows
    (mass through the true label plus the penalty), have the smallest mean
    size (the first on ties, as MAPIE).
    """
    rows = np.arange(proba.shape[0])
    if k_reg == "auto":
        ranks = _label_ranks(proba)[rows, y_index]
        q = conformal_quantile(ranks, level)
        k_reg = int(proba.shape[1] if np.isinf(q) else q + 1)
    if lam_reg != "auto":
        return lam_reg, k_reg
    best, best_size = RAPS_LAM_GRID[0], np.inf
    for lam in RAPS_LAM_GRID:
        through = _raps_with_uniforms(proba, lam_reg=lam, k_reg=k_reg, uniforms=0.0)
        threshold = conformal_quantile(through[rows, y_index], level)
        sets = (
            _raps_with_uniforms(proba, lam_reg=lam, k_reg=k_reg, uniforms=1.0)
            <= threshold
        )
        _fill_empty(sets, proba)
        size = sets.sum(axis=1).mean()
        if size < best_size - 1e-8:
            best, best_size = lam, size
    return float(best), k_reg


@Substitution(
    conditional_parameter=CONDITIONAL_DOC,
    cv_parameters=CV_DOC,
    label_noise_parameters=LABEL_NOISE_DOC,
    shift_parameters=SHIFT_DOC,
    shift_attributes=SHIFT_ATTRIBUTES_DOC,
    conformal_attributes=ATTRIBUTES_DOC,
)
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
    conformity_score : {"lac", "aps", "raps", "margin", "top_k"}, default="lac"
        Conformity score: ``1 - p(y|x)`` (LAC), cumulative sorted mass (APS),
        APS plus a rank penalty (RAPS), the margin
        ``max_{y' != y} p(y'|x) - p(y|x)``, or the 0-based rank of the label
        (``"top_k"``, MAPIE's: every set holds the ``k + 1`` most probable
        labels, ``k`` the conformal quantile of the true labels' ranks; ties
        in probability are broken in MAPIE's order, where MAPIE also adds
        labels tied within ``1e-8`` with the last one). Or a score object
        (:class:`BaseClassificationScore`: :class:`LACScore`,
        :class:`APSScore`, :class:`RAPSScore`, :class:`MarginScore`,
        :class:`TopKScore`, :class:`SOCOPScore` or your own subclass),
        MAPIE's pattern: it holds its parameters (``score_params`` must
        then be ``None``), its score matrix, its set rule and its tuning
        step; ``SOCOPScore(lam="auto")`` gives ``SOCOPClassifier``'s sets.
        A copy is fitted as ``score_``. APS and RAPS always calibrate on
        the randomized score (MAPIE's rule); without ``randomized`` their sets
        take the sorted labels up to and including the one at which the
        cumulative mass (plus the RAPS penalty) crosses the threshold
        (MAPIE's ``include_last_label=True``), so they always hold the top
        label and cover conservatively.
    score_params : dict, default=None
        Parameters of the score function: ``randomized`` for APS/RAPS,
        ``lam_reg`` and ``k_reg`` for RAPS. RAPS's ``lam_reg="auto"`` and
        ``k_reg="auto"`` tune them on a tuning split of ``tuning_size``
        (another key, default 0.2) of the rows, disjoint from training and
        calibration (with a ``FrozenEstimator`` or :meth:`calibrate`,
        ``tuning_size / (tuning_size + calibration_size)`` of them), as
        MAPIE's RAPS and Angelopoulos et al. (2021): ``k_reg = 1 +`` the
        conformal quantile of the true labels' 0-based ranks (MAPIE's
        ``k_star``), ``lam_reg`` the value of ``(0.001, 0.01, 0.1, 0.2,
        0.5)`` whose sets on the tuning rows are smallest on average. The
        values used are ``k_reg_`` and ``lam_reg_``.
    confidence_level : float, default=0.9
        Target coverage.
    calibration_size : float, default=0.3
        Fraction of the data used for calibration (all of it with a
        ``FrozenEstimator`` and in :meth:`calibrate`).
    allow_empty : bool, default=False
        If ``False`` the top label is added to empty sets.
    %(conditional_parameter)s
    %(label_noise_parameters)s
    %(shift_parameters)s
    %(cv_parameters)s
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
    score_ : BaseClassificationScore
        With a score object: the fitted (tuned) copy.
    lam_reg_ : float
        RAPS only: the rank penalty used (tuned with ``"auto"``).
    k_reg_ : int
        RAPS only: the penalty-free rank used (tuned with ``"auto"``).
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    %(conformal_attributes)s
    %(shift_attributes)s

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
        "conformity_score": [StrOptions(set(_SCORES)), BaseClassificationScore],
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

    def _score_object(self):
        """The score object: the fitted ``score_`` once fitting began, the
        parameter before; ``None`` for a string score."""
        if not isinstance(self.conformity_score, BaseClassificationScore):
            return None
        return getattr(self, "score_", self.conformity_score)

    def _raps_auto(self):
        params = self.score_params or {}
        return self.conformity_score == "raps" and (
            params.get("lam_reg") == "auto" or params.get("k_reg") == "auto"
        )

    def _needs_tuning(self):
        score = self._score_object()
        if score is not None:
            return bool(score.needs_tuning())
        return self._raps_auto()

    def _tuning_fraction(self):
        score = self._score_object()
        if score is not None:
            return float(score.tuning_fraction())
        return float((self.score_params or {}).get("tuning_size", 0.2))

    def _init_fit_state(self):
        if isinstance(self.conformity_score, BaseClassificationScore):
            # a fresh copy per fit: tuning sets its fitted attributes
            self.score_ = clone(self.conformity_score)
            self.score_._validate_params()
            return
        params = self.score_params or {}
        if self.conformity_score == "raps":
            self.lam_reg_ = params.get("lam_reg", 0.01)
            self.k_reg_ = params.get("k_reg", 1)

    def _tune(self, proba, y_index, rng):
        """RAPS's ``k_reg`` and ``lam_reg`` on the tuning split (see ``_tune_raps``)."""
        if self._score_object() is not None:
            self.score_.tune(
                proba,
                y_index,
                confidence_level=float(self.confidence_level),
                allow_empty=self.allow_empty,
                rng=rng,
            )
            return
        params = self.score_params or {}
        self.lam_reg_, self.k_reg_ = _tune_raps(
            proba,
            y_index,
            float(self.confidence_level),
            params.get("lam_reg", 0.01),
            params.get("k_reg", 1),
        )
        log_progress(
            self, f"RAPS tuned: k_reg_={self.k_reg_}, lam_reg_={self.lam_reg_}"
        )

    def _is_randomized(self):
        score = self._score_object()
        if score is not None:
            return bool(score.randomized)
        params = self.score_params or {}
        return self.conformity_score in _RANDOMIZED and bool(
            params.get("randomized", False)
        )

    def _calibration_randomized(self):
        # APS and RAPS calibrate on the randomized score whether or not their
        # sets are randomized (see the class docstring)
        score = self._score_object()
        if score is not None:
            return bool(score.calibration_randomized or score.randomized)
        return self.conformity_score in _RANDOMIZED or self._is_randomized()

    def _score_matrix(self, proba, uniforms=None):
        score = self._score_object()
        if score is not None:
            return np.asarray(score.score_matrix(proba, uniforms), dtype=np.float64)
        params = dict(self.score_params or {})
        params.pop("randomized", None)
        params.pop("random_state", None)
        params.pop("tuning_size", None)
        if self.conformity_score == "raps":
            params["lam_reg"], params["k_reg"] = self.lam_reg_, self.k_reg_
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
        score = self._score_object()
        if score is not None:
            return np.asarray(score.sets(proba, threshold, uniforms), dtype=bool)
        if self.conformity_score == "lac":
            # one comparison per cell, equal to 1 - proba <= threshold
            return _lac_sets(proba, threshold)
        return super()._sets(proba, threshold, uniforms)

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, bins=None, X_target=None, **fit_params):
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
        X_target : array-like of shape (n_target, n_features), default=None
            Unlabeled rows of the target population (required with
            ``shift``; without it, only the shift check runs). Metadata:
            with routing, ``set_fit_request(X_target=True)``.
        **fit_params : dict
            Passed (split) to ``estimator.fit``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._check_calibrate_params()
        return self._fit_conformal(X, y, bins=bins, X_target=X_target, **fit_params)

    def _check_calibrate_params(self):
        # score_params checked once, by the score function itself; a fixed
        # random_state keeps the randomized scores off numpy's global RNG
        if isinstance(self.conformity_score, BaseClassificationScore):
            if self.score_params:
                raise ValueError(
                    "score_params is for a score given by name; a score object "
                    f"({type(self.conformity_score).__name__}) holds its own "
                    "parameters: set them on it."
                )
            return
        params = dict(self.score_params or {})
        if params.get("randomized", False):
            params["random_state"] = 0
        tuning = params.pop("tuning_size", None)
        if tuning is not None and not (
            self._raps_auto() and isinstance(tuning, Real) and 0 < tuning < 1
        ):
            raise ValueError(
                "score_params['tuning_size'] is the fraction of rows that tunes "
                'RAPS\'s "auto" lam_reg / k_reg, a float in (0, 1); got '
                f"{tuning!r} with conformity_score={self.conformity_score!r}."
            )
        if self.conformity_score == "raps":
            for key, default in (("lam_reg", 0.01), ("k_reg", 1)):
                if params.get(key) == "auto":
                    params[key] = default
        conformity_scores(np.full((1, 2), 0.5), self.conformity_score, **params)
