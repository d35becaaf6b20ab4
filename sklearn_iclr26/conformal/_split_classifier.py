"""Split-conformal classifier with the classic scores (LAC, APS, RAPS, Margin)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from sklearn_iclr26.conformal._base_classifier import (
    ATTRIBUTES_DOC,
    CONDITIONAL_DOC,
    CV_DOC,
    LABEL_NOISE_DOC,
    BaseConformalClassifier,
)
from sklearn_iclr26.conformal._conformity_scores import (
    SCORE_NAMES,
    _cumulative_mass,
    _lac_sets,
    _raps_with_uniforms,
    conformity_scores,
)
from sklearn_iclr26.conformal._shift_calibration import (
    SHIFT_ATTRIBUTES_DOC,
    SHIFT_DOC,
)
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._docstrings import Substitution
from sklearn_iclr26.utils._sklearn_compat import StrOptions, _fit_context
from sklearn_iclr26.utils._validation import store_params

__all__ = ["SplitConformalClassifier"]

_RANDOMIZED = {"aps", "raps"}
# every named score but SOCOP's, which needs lam (SOCOPClassifier tunes it)
_SCORES = sorted(set(SCORE_NAMES) - {"socop"})


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
        params = dict(self.score_params or {})
        if params.get("randomized", False):
            params["random_state"] = 0
        conformity_scores(np.full((1, 2), 0.5), self.conformity_score, **params)
