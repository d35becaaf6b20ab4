"""The base class of the label-noise correctors."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
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
        if _on_blocks(X, y, sample_weight, self._get_estimator()):
            rng = check_random_state(self.random_state)
            estimator = set_child_random_state(
                clone(self._get_estimator()),
                None if self.random_state is None else rng,
            )
            self._fit_blocks(estimator, X, y, sample_weight, rng)
            return self
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

    def _fit_blocks(self, estimator, X, y, sample_weight, rng):
        """Fit on dask collections through LightGBM's dask estimator."""
        raise ValueError(
            f"{type(self).__name__} has no block-wise fit on dask collections: "
            "compute X and y (X.compute()) and use an in-memory estimator such "
            "as LGBMClassifier, or use ClassConditionalNoiseCorrector or "
            "InstanceNoiseCorrector with estimator=lightgbm.DaskLGBMClassifier"
            "(...), which fit on the cluster without gathering X."
        )

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
        if is_dask_collection(self.label_issues_):
            raise ValueError(
                "return_indices_ranked_by needs the flags of all the rows in one "
                "process; on dask collections find_label_issues returns the lazy "
                "mask only (return_indices_ranked_by=None): rank the flagged rows "
                "of mislabel_scores_ on the cluster."
            )
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
            return lazy_method(
                _without_dask(self), "predict_proba", X, tail=(len(self.classes_),)
            )
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
            return lazy_method(
                _without_dask(self), "predict", X, dtype=self.classes_.dtype
            )
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


def _on_blocks(X, y, sample_weight, estimator):
    """Whether ``fit`` takes the block-wise path (dask data or dask estimator)."""
    if any(is_dask_collection(v) for v in (X, y, sample_weight)):
        return True
    from sklearn_iclr26.label_noise._dask import is_dask_lightgbm

    return is_dask_lightgbm(estimator)


def _without_dask(estimator):
    """A shallow copy of a fitted corrector without its lazy (dask) attributes.

    The copy is what a lazy prediction sends to the workers with each block:
    the graphs of ``label_issues_`` and ``mislabel_scores_`` (fold models,
    the rows' own graph) need not travel with it.
    """
    lazy = [k for k, v in vars(estimator).items() if is_dask_collection(v)]
    if not lazy:
        return estimator
    light = copy.copy(estimator)
    for name in lazy:
        delattr(light, name)
    return light
