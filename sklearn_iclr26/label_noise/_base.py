"""The base class of the label-noise correctors."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from abc import ABCMeta, abstractmethod

import numpy as np
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted, check_random_state

from sklearn_iclr26.label_noise._backends import get_backend
from sklearn_iclr26.label_noise._common import validate_meta_fit, validate_meta_X
from sklearn_iclr26.label_noise._label_issues import RANKINGS, rank_issues
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._batching import batched
from sklearn_iclr26.utils._blockwise import is_dask_collection, lazy_method
from sklearn_iclr26.utils._random import set_child_random_state
from sklearn_iclr26.utils._sklearn_compat import _fit_context
from sklearn_iclr26.utils._validation import explain_overflow

__all__ = ["BaseNoiseCorrector"]


class BaseNoiseCorrector(
    ClassifierMixin, MetaEstimatorMixin, BaseEstimator, metaclass=ABCMeta
):
    """Fit an inner classifier on noisy labels with a corrected loss.

    Validation of ``y`` and the weights, the backend (:mod:`._backends`),
    seeding of the child, batched prediction and the input tags are shared;
    ``X`` reaches the inner estimator untouched. Subclasses implement the
    hooks :meth:`_default_estimator`, :meth:`_fit_corrected` and
    :meth:`_predict_proba_rows`.
    """

    @abstractmethod
    def _default_estimator(self):
        """The inner classifier used when ``estimator=None``."""

    @abstractmethod
    def _fit_corrected(self, backend, X, y_encoded, sample_weight, rng):
        """Fit the corrected model; set the fitted attributes of the subclass."""

    @abstractmethod
    def _predict_proba_rows(self, X):
        """Class probabilities of a batch of rows (columns as ``classes_``)."""

    def _get_estimator(self):
        return self._default_estimator() if self.estimator is None else self.estimator

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit the classifier on noisy labels with the corrected loss.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Training data, handed to the inner estimator untouched (so a
            ``Pipeline`` inside may preprocess a raw DataFrame).
        y : array-like of shape (n_samples,)
            Observed, possibly noisy, labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights, multiplied into the corrected loss (routed as
            ``<final step>__sample_weight`` through a ``Pipeline``).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, _, y_encoded, sample_weight = validate_meta_fit(self, X, y, sample_weight)
        rng = check_random_state(self.random_state)
        estimator = set_child_random_state(
            clone(self._get_estimator()), None if self.random_state is None else rng
        )
        backend = get_backend(estimator)
        # sample_weight is consumed here (multiplied into the corrected loss's
        # own weights) and passed to the inner classifier as such, in the
        # step__param form through a Pipeline: routing is off for these calls
        with (
            config_context(enable_metadata_routing=False),
            explain_overflow(X, backend.what),
        ):
            self._fit_corrected(backend, X, y_encoded, sample_weight, rng)
        self._backend = backend
        return self

    def find_label_issues(
        self, X, y, sample_weight=None, *, return_indices_ranked_by=None
    ):
        """Fit on ``(X, y)`` and return the likely mislabeled rows.

        Mirrors ``cleanlab.classification.CleanLearning.find_label_issues``
        (and :meth:`SampleGradientMemorization.find_label_issues`): the mask
        ``label_issues_``, or the indices of the flagged rows ranked by
        severity. The rule is the corrector's own (see ``label_issues_``); the
        same rule from out-of-fold probabilities is
        :func:`~sklearn_iclr26.label_noise.find_label_issues`.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Training data, handed to the inner estimator untouched.
        y : array-like of shape (n_samples,)
            Observed, possibly noisy, labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights, passed to :meth:`fit`.
        return_indices_ranked_by : {"mislabel_score", "self_confidence", \
                "normalized_margin"} or None, default=None
            ``None`` returns the boolean mask ``label_issues_``. Otherwise the
            indices of the flagged rows, most suspicious first: by
            ``mislabel_scores_`` (descending, ties in row order), or by
            cleanlab's label quality score of that name (ascending) computed on
            the probabilities the rule reads.

        Returns
        -------
        label_issues : ndarray of bool of shape (n_samples,) or ndarray of int
            The mask or the ranked indices.
        """
        if return_indices_ranked_by is not None and (
            return_indices_ranked_by not in RANKINGS
        ):
            raise ValueError(
                f"return_indices_ranked_by must be None or one of {RANKINGS}, got "
                f"{return_indices_ranked_by!r}."
            )
        self.fit(X, y, sample_weight=sample_weight)
        if return_indices_ranked_by is None:
            return self.label_issues_.copy()
        return rank_issues(
            self.label_issues_,
            self._issue_labels,
            self._issue_proba,
            self.mislabel_scores_,
            return_indices_ranked_by,
        )

    def _row_bytes(self):
        return 64 * 8 * (getattr(self, "n_features_in_", 1) + len(self.classes_))

    def _batched_rows(self, rows_function, X):
        # validated X, processed in working_memory batches
        check_is_fitted(self)
        X = validate_meta_X(self, X, reset=False)
        return batched(rows_function, X, row_bytes=self._row_bytes())

    def predict_proba(self, X):
        """Class probabilities (of the clean labels).

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Input data, handed to the inner estimator untouched.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``. Rows are processed in batches sized by
            scikit-learn's ``working_memory``. A lazy dask array for a dask
            ``X`` (the probabilities of each block, on the workers).
        """
        if is_dask_collection(X):
            check_is_fitted(self)
            return lazy_method(self, "predict_proba", X, tail=(len(self.classes_),))
        return self._batched_rows(self._predict_proba_rows, X)

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The most probable class.
        """
        if is_dask_collection(X):
            check_is_fitted(self)
            return lazy_method(self, "predict", X, dtype=self.classes_.dtype)
        return self._predict_labels(X)

    def _predict_labels(self, X):
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = get_tags(self._get_estimator())
        tags.input_tags.sparse = sub.input_tags.sparse
        tags.input_tags.allow_nan = sub.input_tags.allow_nan
        tags.input_tags.string = sub.input_tags.string
        tags.input_tags.categorical = sub.input_tags.categorical
        return tags
