"""How well random labels can be fit from a fixed representation."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import OneHotEncoder
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_iclr26.memorization._common import rademacher_from_accuracy
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._batching import batched
from sklearn_iclr26.utils._random import seed_from_random_state, set_child_random_state
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _check_feature_names_in,
    _fit_context,
)
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["RandomLabelProbe"]


def _leaf_estimator(random_state):
    from lightgbm import LGBMClassifier

    return LGBMClassifier(
        n_estimators=20,
        num_leaves=15,
        min_child_samples=5,
        n_jobs=1,
        verbose=-1,
        random_state=random_state,
    )


def _leaves(booster_model, X):
    leaves = booster_model.predict(X, pred_leaf=True)
    return np.asarray(leaves).reshape(X.shape[0], -1)


class RandomLabelProbe(TransformerMixin, BaseEstimator):
    """Random-label accuracy of a probe on a fixed representation.

    The random-label-head measurement of Becker et al. (ICLR 2026), taken off
    the network: each row gets random labels (``n_label_sets`` independent
    draws from ``{0, ..., n_random_labels - 1}``), a ``probe`` is fit to them on
    the representation ``Z = representation.transform(X)``, and its training
    accuracy says how much that representation lets a head memorize. It works
    on any representation: raw features, ``PCA``, a fitted network's layer
    (wrapped in :class:`~sklearn.frozen.FrozenEstimator`), or LightGBM leaf
    one-hots (``"leaves"``). Tree ensembles and non-neural representations are
    an **extension beyond the paper**, which studies network layers only.

    Read more in the :ref:`User Guide <memorization>`.

    Parameters
    ----------
    representation : None, "leaves" or estimator with ``transform``, \
            default=None
        ``None``: the validated ``X`` itself. ``"leaves"``: the one-hot leaf
        indices of a small LightGBM classifier fit on ``(X, y)`` (``y``
        required); a fitted LightGBM model (anything with ``booster_``) is
        used as it is. An estimator: cloned and fit on ``(X, y)``, then its
        ``transform``; wrap a fitted one in ``FrozenEstimator`` to keep it.
    probe : estimator or None, default=None
        Classifier fit on the random labels; ``None`` means
        ``LogisticRegression()``.
    n_random_labels : int, default=2
        Number of random labels (at least 2).
    n_label_sets : int, default=5
        Independent random-label draws; the accuracy is their mean.
    random_state : int, RandomState instance or None, default=None
        Seeds the random labels (and unseeded children).
    verbose : int, default=0
        Print one line per fitted probe (its random-label accuracy) and a
        summary when positive.

    Attributes
    ----------
    representation_ : estimator or None
        The fitted representation (``None`` for the identity).
    random_labels_ : ndarray of shape (n_samples, n_label_sets)
        The random labels.
    probes_ : list of estimators
        One fitted probe per label set.
    accuracies_ : ndarray of shape (n_label_sets,)
        Training accuracy of each probe on its random labels.
    accuracy_ : float
        Their mean, the random-label accuracy of the representation (a float,
        unlike :class:`RLPHeadClassifier`'s per-layer, per-epoch
        ``random_label_accuracy_`` array).
    rademacher_correlation_ : float
        ``(accuracy_ - 1/n) / (1 - 1/n)``; for two labels ``2 accuracy_ - 1``,
        the empirical Rademacher correlation of the fitted probe (a float,
        unlike :class:`RLPHeadClassifier`'s per-layer
        ``rademacher_estimate_``).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, if all strings.

    See Also
    --------
    RLPHeadClassifier : Random-label heads trained with a network.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.decomposition import PCA
    >>> from sklearn_iclr26.memorization import RandomLabelProbe
    >>> X, y = load_iris(return_X_y=True)
    >>> probe = RandomLabelProbe(PCA(n_components=2), random_state=0).fit(X)
    >>> 0.0 <= probe.accuracy_ <= 1.0
    True
    >>> probe.transform(X).shape
    (150, 2)
    """

    _parameter_constraints: dict = {
        "representation": [
            None,
            StrOptions({"leaves"}),
            HasMethods(["fit", "transform"]),
            HasMethods(["predict"]),
        ],
        "probe": [HasMethods(["fit", "predict"]), None],
        "n_random_labels": [Interval(Integral, 2, None, closed="left")],
        "n_label_sets": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        representation=None,
        *,
        probe=None,
        n_random_labels=2,
        n_label_sets=5,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    def _is_leaf_model(self, rep):
        return isinstance(rep, str) or hasattr(rep, "booster_")

    def _fit_representation(self, X, y, seed):
        rep = self.representation
        if rep is None:
            return None
        if isinstance(rep, str):
            if y is None:
                raise ValueError(
                    'representation="leaves" fits a LightGBM classifier and needs '
                    "y: call fit(X, y)."
                )
            return _leaf_estimator(seed).fit(X, y)
        if hasattr(rep, "booster_"):
            return rep
        if not hasattr(rep, "transform"):
            raise ValueError(
                "representation must be None, 'leaves', a fitted LightGBM model or "
                f"an estimator with transform; got {type(rep).__name__}."
            )
        rep = set_child_random_state(clone(rep), seed)
        return rep.fit(X) if y is None else rep.fit(X, y)

    def _transform(self, X):
        rep = self.representation_
        if rep is None:
            return X
        if self._leaf_encoder is not None:
            return self._leaf_encoder.transform(_leaves(rep, X))
        return rep.transform(X)

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Fit the representation and one probe per random-label draw.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data.
        y : array-like of shape (n_samples,), default=None
            Passed to the representation's ``fit`` (needed by ``"leaves"``);
            the probes never see it.

        Returns
        -------
        self : object
            Fitted probe.
        """
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        seed = seed_from_random_state(self.random_state)
        rng = np.random.RandomState(seed)
        self.representation_ = self._fit_representation(X, y, seed)
        if self.representation_ is not None:
            log_progress(
                self, f"representation {type(self.representation_).__name__} fitted"
            )
        self._leaf_encoder = None
        if self.representation_ is not None and self._is_leaf_model(
            self.representation_
        ):
            self._leaf_encoder = OneHotEncoder(
                handle_unknown="ignore", sparse_output=False
            ).fit(_leaves(self.representation_, X))
        Z = self._transform(X)
        self._n_features_out = Z.shape[1]
        n = X.shape[0]
        self.random_labels_ = rng.randint(
            self.n_random_labels, size=(n, self.n_label_sets)
        ).astype(np.int64)
        base = LogisticRegression() if self.probe is None else self.probe
        self.probes_ = []
        accuracies = []
        for s in range(self.n_label_sets):
            labels = self.random_labels_[:, s]
            if np.unique(labels).size < 2:  # a degenerate draw on tiny data
                accuracies.append(1.0)
                self.probes_.append(None)
            else:
                probe = set_child_random_state(clone(base), seed + s)
                probe.fit(Z, labels)
                self.probes_.append(probe)
                accuracies.append(float(np.mean(probe.predict(Z) == labels)))
            log_progress(
                self,
                f"label set {s + 1}/{self.n_label_sets}: accuracy {accuracies[-1]:.4f}",
            )
        self.accuracies_ = np.asarray(accuracies)
        self.accuracy_ = float(self.accuracies_.mean())
        self.rademacher_correlation_ = float(
            rademacher_from_accuracy(self.accuracy_, self.n_random_labels)
        )
        log_progress(
            self,
            f"random-label accuracy {self.accuracy_:.4f}, "
            f"Rademacher correlation {self.rademacher_correlation_:.4f}",
        )
        return self

    def transform(self, X):
        """The representation of ``X`` (``X`` itself for ``None``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_output_features)
            The representation the probes were fit on.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        if self.representation_ is None:
            return X
        width = (
            len(self._leaf_encoder.get_feature_names_out())
            if self._leaf_encoder is not None
            else X.shape[1]
        )
        return batched(self._transform, X, row_bytes=8 * 16 * max(width, X.shape[1]))

    def get_feature_names_out(self, input_features=None):
        """Get the names of the representation's output features.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input feature names; ``None`` uses ``feature_names_in_`` or
            ``x0, x1, ...``.

        Returns
        -------
        feature_names_out : ndarray of str objects
            The input names (``representation=None``); ``tree{t}_leaf{j}``
            for the leaf one-hots; the representation's own
            ``get_feature_names_out`` when it has one; otherwise
            ``randomlabelprobe0, randomlabelprobe1, ...``.
        """
        check_is_fitted(self)
        input_features = _check_feature_names_in(self, input_features)
        rep = self.representation_
        if rep is None:
            return np.asarray(input_features, dtype=object)
        if self._leaf_encoder is not None:
            names = [
                f"tree{t}_leaf{leaf}"
                for t, leaves in enumerate(self._leaf_encoder.categories_)
                for leaf in leaves
            ]
            return np.asarray(names, dtype=object)
        if hasattr(rep, "get_feature_names_out"):
            return np.asarray(rep.get_feature_names_out(input_features), dtype=object)
        prefix = type(self).__name__.lower()
        return np.asarray(
            [f"{prefix}{j}" for j in range(self._n_features_out)], dtype=object
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        return tags
