"""Split-conformal classification machinery shared by the conformal classifiers."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings
from numbers import Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    clone,
)
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import train_test_split
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    _routing_enabled,
    process_routing,
)
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_method_params,
    check_is_fitted,
    check_random_state,
    validate_data,
)

from sklearn_iclr26.conformal._scores import conformal_quantile
from sklearn_iclr26.utils._validation import (
    check_alpha,
    check_at_least_two_classes,
    check_calibration_size,
    check_has_methods,
    check_probabilities,
    input_validation_kwargs,
)


def _default_classifier():
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=1000)


def _split_indices(y, sizes, rng):
    """Split ``range(n)`` into consecutive parts of the given fractions.

    Stratified by ``y`` when every class can appear in every part, so that the
    model sees every label in training; plain random otherwise.
    """
    n = y.shape[0]
    remaining = np.arange(n)
    parts = []
    left = 1.0
    for fraction in sizes[:-1]:
        share = fraction / left
        left -= fraction
        y_rem = y[remaining]
        n_classes = np.unique(y_rem).shape[0]
        n_take = int(np.floor(share * remaining.shape[0]))
        n_rest = remaining.shape[0] - n_take
        counts = np.unique(y_rem, return_counts=True)[1]
        stratify = (
            y_rem if counts.min() >= 2 and min(n_take, n_rest) >= n_classes else None
        )
        if n_take < 1 or n_rest < 1:
            raise ValueError(
                f"Cannot split {remaining.shape[0]} samples into parts of fractions "
                f"{sizes}: a part would be empty. Pass more samples."
            )
        taken, rest = train_test_split(
            remaining,
            train_size=n_take,
            random_state=rng.randint(np.iinfo(np.int32).max),
            stratify=stratify,
        )
        parts.append(np.sort(taken))
        remaining = np.sort(rest)
    parts.append(remaining)
    return parts


class BaseConformalClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Split-conformal prediction sets around any probabilistic classifier.

    Subclasses define the conformity score through ``_score_matrix`` and may
    tune score hyperparameters on a tuning split (``_needs_tuning`` and
    ``_tune``). ``fit`` splits the data into a training part (omitted when the
    estimator is a :class:`~sklearn.frozen.FrozenEstimator`), an optional
    tuning part and a calibration part.
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "calibration_size": [Interval(Real, 0, 1, closed="neither")],
        "allow_empty": ["boolean"],
        "random_state": ["random_state"],
    }

    # -- hooks -------------------------------------------------------------------
    def _needs_tuning(self):
        return False

    def _tuning_fraction(self):
        return 0.0

    def _tune(self, proba, y_index, rng):
        """Choose score hyperparameters on the tuning split (default: none)."""

    def _score_matrix(self, proba, random_state=None):
        raise NotImplementedError

    def _sets(self, proba, quantile):
        """Prediction sets ``scores <= quantile`` (subclasses may shortcut)."""
        return self._score_matrix(proba, random_state=self._seed + 1) <= quantile

    # -- estimator plumbing ------------------------------------------------------
    def _get_estimator(self):
        return _default_classifier() if self.estimator is None else self.estimator

    def get_metadata_routing(self):
        """Route ``fit`` metadata (e.g. ``sample_weight``) to the estimator.

        Returns
        -------
        routing : MetadataRouter
            The routing information.
        """
        return MetadataRouter(owner=self).add(
            estimator=self._get_estimator(),
            method_mapping=MethodMapping().add(caller="fit", callee="fit"),
        )

    def _fit_conformal(self, X, y, **fit_params):
        estimator = self._get_estimator()
        check_has_methods(estimator, ["predict_proba"])
        alpha = check_alpha(self.alpha)
        X, y = validate_data(self, X, y, **input_validation_kwargs(estimator))
        check_classification_targets(y)
        check_at_least_two_classes(self, y)
        if _routing_enabled():
            fit_params = process_routing(self, "fit", **fit_params).estimator.fit

        rng = check_random_state(self.random_state)
        self._seed = int(rng.randint(np.iinfo(np.int32).max))
        prefit = isinstance(estimator, FrozenEstimator)
        tuning = self._tuning_fraction() if self._needs_tuning() else 0.0
        calibration = float(self.calibration_size)
        if prefit:
            total = tuning + calibration
            sizes = [tuning / total, calibration / total] if tuning else [1.0]
        else:
            if tuning + calibration >= 1:
                raise ValueError(
                    f"calibration_size + tuning_size must be < 1 so that some data "
                    f"is left for training, got {calibration} + {tuning}."
                )
            sizes = [1 - tuning - calibration] + ([tuning] if tuning else [])
            sizes.append(calibration)
        parts = _split_indices(y, sizes, rng)
        if prefit:
            self.estimator_ = estimator
            train = None
        else:
            train = parts.pop(0)
            params = _check_method_params(X, params=fit_params, indices=train)
            self.estimator_ = clone(estimator).fit(X[train], y[train], **params)
        self.classes_ = np.asarray(self.estimator_.classes_)
        tune_index = parts[0] if tuning else None
        cal_index = parts[-1]

        for name, index in (("tuning", tune_index), ("calibration", cal_index)):
            if index is None:
                continue
            unseen = np.setdiff1d(y[index], self.classes_)
            if unseen.size:
                raise ValueError(
                    f"The {name} data contains labels {unseen.tolist()} that the "
                    f"estimator never saw in training (its classes are "
                    f"{self.classes_.tolist()}). Every label must be known to the "
                    "model: use more data, a stratified split, or fit the "
                    "estimator on all labels."
                )

        if tune_index is not None:
            proba_tune = self._predict_proba_checked(X[tune_index])
            self._tune(proba_tune, self._label_index(y[tune_index]), rng)

        proba_cal = self._predict_proba_checked(X[cal_index])
        scores = self._score_matrix(proba_cal, random_state=self._seed)
        true = self._label_index(y[cal_index])
        cal_scores = scores[np.arange(true.shape[0]), true]
        self.calibration_scores_ = np.sort(cal_scores)
        self.n_calibration_samples_ = int(cal_scores.shape[0])
        check_calibration_size(self.n_calibration_samples_, alpha, error=False)
        self.quantile_ = conformal_quantile(cal_scores, alpha)
        return self

    def _label_index(self, y):
        return np.searchsorted(self.classes_, y)

    def _predict_proba_checked(self, X):
        proba = check_probabilities(
            self.estimator_.predict_proba(X), name="estimator.predict_proba(X)"
        )
        if proba.shape[1] != self.classes_.shape[0]:
            raise ValueError(
                f"predict_proba returned {proba.shape[1]} columns for "
                f"{self.classes_.shape[0]} classes."
            )
        return proba

    def _validate_X(self, X):
        check_is_fitted(self)
        return validate_data(
            self, X, reset=False, **input_validation_kwargs(self.estimator_)
        )

    # -- public prediction API ---------------------------------------------------
    def predict(self, X):
        """Point predictions of the underlying classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels.
        """
        X = self._validate_X(X)
        return self.estimator_.predict(X)

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
        X = self._validate_X(X)
        return self.estimator_.predict_proba(X)

    def conformity_scores(self, X):
        """Conformity score of every label for every sample.

        A label enters the prediction set when its score is at most
        ``quantile_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes)
            Scores; columns follow ``classes_``.
        """
        X = self._validate_X(X)
        return self._score_matrix(
            self._predict_proba_checked(X), random_state=self._seed + 1
        )

    def predict_set(self, X, alpha=None):
        """Conformal prediction sets.

        With exchangeable data, ``P(y in set) >= 1 - alpha`` (marginally).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        alpha : float, default=None
            Miscoverage level; ``None`` uses the fitted ``alpha`` (and
            ``quantile_``). Another value recomputes the quantile from
            ``calibration_scores_`` (score hyperparameters tuned for
            ``self.alpha`` are kept).

        Returns
        -------
        sets : ndarray of bool, shape (n_samples, n_classes)
            ``sets[i, j]`` tells whether ``classes_[j]`` is in the set of
            sample ``i``.
        """
        X = self._validate_X(X)
        proba = self._predict_proba_checked(X)
        if alpha is None:
            quantile = self.quantile_
        else:
            alpha = check_alpha(alpha)
            check_calibration_size(self.n_calibration_samples_, alpha, error=False)
            quantile = conformal_quantile(self.calibration_scores_, alpha)
        sets = self._sets(proba, quantile)
        if not self.allow_empty:
            empty = ~sets.any(axis=1)
            if empty.any():
                sets[empty, np.argmax(proba[empty], axis=1)] = True
        return sets

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = get_tags(self._get_estimator())
        tags.input_tags.allow_nan = sub.input_tags.allow_nan
        tags.input_tags.sparse = sub.input_tags.sparse
        return tags


def _warn_degenerate_tuning(n, alpha):
    warnings.warn(
        f"The tuning split has {n} samples, too few to tune at alpha={alpha}: "
        "every candidate gives the same sets.",
        UserWarning,
        stacklevel=4,
    )
