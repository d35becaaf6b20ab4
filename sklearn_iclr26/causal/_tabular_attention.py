"""Attention over feature groups in front of an MLP head (the practical CCO model)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
    validate_data,
)

from sklearn_iclr26.utils._columns import check_disjoint, resolve_columns
from sklearn_iclr26.utils._random import seed_from_random_state
from sklearn_iclr26.utils._torch import fit_or_restore, forward_module, train_module
from sklearn_iclr26.utils._validation import (
    N_JOBS_CONSTRAINT,
    validate_classifier_fit_data,
)
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["TabularAttentionClassifier", "TabularAttentionRegressor"]

_DTYPES = [np.float64, np.float32]
SATURATION = 30.0


def _softmax(logits):
    logits = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


def _attention_logits(module, xb, **aux):
    return module.attention_logits(xb)


class _BaseTabularAttention(BaseEstimator):
    _parameter_constraints: dict = {
        "feature_groups": ["array-like", dict, None],
        "token_dim": [Interval(Integral, 1, None, closed="left")],
        "hidden_layer_sizes": ["array-like"],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "dtype": [StrOptions({"float64", "float32"})],
        "device": [str],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        feature_groups=None,
        *,
        token_dim=16,
        hidden_layer_sizes=(32,),
        alpha=0.0,
        max_iter=100,
        batch_size=256,
        learning_rate_init=1e-2,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.feature_groups = feature_groups
        self.token_dim = token_dim
        self.hidden_layer_sizes = hidden_layer_sizes
        self.alpha = alpha
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.learning_rate_init = learning_rate_init
        self.dtype = dtype
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _resolve_groups(self, n_features):
        spec = self.feature_groups
        if spec is None:
            names = getattr(self, "feature_names_in_", None)
            labels = list(names) if names is not None else list(range(n_features))
            return labels, [[j] for j in range(n_features)]
        if isinstance(spec, dict):
            labels, columns = list(spec), list(spec.values())
        else:
            columns = list(spec)
            labels = list(range(len(columns)))
        if len(columns) < 1:
            raise ValueError("feature_groups must list at least one group.")
        resolved = {
            str(label): resolve_columns(c, self, n_features, f"group {label}")
            for label, c in zip(labels, columns)
        }
        check_disjoint(resolved)
        return labels, list(resolved.values())

    def _fit_net(self, X, y, n_outputs, criterion, sample_weight):
        from sklearn_iclr26.causal._tabular_attention_modules import GroupAttentionNet

        hidden = tuple(int(h) for h in np.atleast_1d(self.hidden_layer_sizes))
        if any(h < 1 for h in hidden):
            raise ValueError(
                f"hidden_layer_sizes must be positive, got {self.hidden_layer_sizes}."
            )
        labels, groups = self._resolve_groups(X.shape[1])
        self.group_names_ = np.asarray(labels, dtype=object)
        self.groups_ = [np.asarray(g, dtype=np.int64) for g in groups]
        self.net_ = train_module(
            GroupAttentionNet,
            X,
            y,
            criterion=criterion,
            criterion_params={"reduction": "none"},
            module_params={
                "groups": tuple(tuple(g) for g in groups),
                "n_outputs": n_outputs,
                "token_dim": self.token_dim,
                "hidden_layer_sizes": hidden,
            },
            sample_weight=sample_weight,
            max_epochs=self.max_iter,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate_init,
            weight_decay=self.alpha,
            dtype=self.dtype,
            device=self.device,
            random_state=seed_from_random_state(self.random_state),
            n_jobs=self.n_jobs,
            verbose=self.verbose,
        )
        self.n_iter_ = len(self.net_.history)
        logits = forward_module(
            self.net_, X, dtype=self.dtype, n_jobs=self.n_jobs, func=_attention_logits
        )
        spread = float(np.max(logits.max(axis=1) - logits.min(axis=1)))
        if spread > SATURATION:
            warn_user(
                "The attention gate saturates numerically: attention logits differ "
                f"by up to {spread:.1f} (> {SATURATION:g}) between groups on the "
                "training rows, so some attention weights are 0 or 1 to machine "
                "precision."
            )
        return self

    def _forward(self, X, func=None):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=_DTYPES)
        return forward_module(
            self.net_, X, dtype=self.dtype, n_jobs=self.n_jobs, func=func
        )

    def attention_weights(self, X):
        """Attention weight of each feature group, per row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        weights : ndarray of shape (n_samples, n_groups)
            Rows sum to 1; columns follow ``group_names_``.
        """
        return _softmax(self._forward(X, func=_attention_logits))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


_DOC = """
    Parameters
    ----------
    feature_groups : list of column lists, dict or None, default=None
        The tokens: a list of groups (columns as DataFrame names or indices),
        or ``{name: columns}``. Groups may differ in width and must not
        overlap; columns in no group are not used. ``None`` makes every
        column its own token (per-feature tokens).
    token_dim : int, default=16
        Width of the group tokens, the keys and the query.
    hidden_layer_sizes : array-like of int, default=(32,)
        Hidden layers (ReLU) of the head.
    alpha : float, default=0.0
        L2 penalty (Adam ``weight_decay``).
    max_iter : int, default=100
        Number of epochs.
    batch_size : int or None, default=256
        Mini-batch size, clipped to ``n_samples``; ``None`` means full batch.
    learning_rate_init : float, default=1e-2
        Adam learning rate.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the torch module.
    device : str, default="cpu"
        torch device.
    n_jobs : int or None, default=None
        torch threads; ``None`` means 1.
    random_state : int, RandomState instance or None, default=None
        Seeds initialisation and shuffling; a fixed value gives bit-identical
        results on the CPU.
    verbose : int, default=0
        If positive, print the training loss after each epoch.

    Attributes
    ----------
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, if all strings.
    group_names_ : ndarray of object
        Name of each group (dict keys, column names, or positions).
    groups_ : list of ndarray of int
        Column indices of each group.
    n_iter_ : int
        Number of epochs run.
    net_ : skorch.NeuralNet
        The fitted net.
"""


class TabularAttentionClassifier(ClassifierMixin, _BaseTabularAttention):
    __doc__ = (
        """Classifier with one attention gate over feature groups.

    The practical, tabular version of the two-key attention model of the CCO
    paper ("Strong Correlations Induce Cause Only Predictions in Transformer
    Training", ICLR 2026): each feature group becomes a token, a learned
    query attends over the tokens, and an MLP head reads the attended token.
    Trained with Adam on cross-entropy. ``attention_weights(X)`` shows which
    groups the model relies on; whether gradient descent crowds out a
    spurious group depends on the data (see the user guide).

    Read more in the :ref:`User Guide <cco>`.
"""
        + _DOC
        + """    classes_ : ndarray of shape (n_classes,)
        Class labels.

    See Also
    --------
    TwoKeyAttentionRegressor : The paper's exact model and Algorithm 1.
    TabularAttentionRegressor : The regression counterpart.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.causal import TabularAttentionClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = TabularAttentionClassifier(
    ...     feature_groups=[[0, 1], [2, 3]], max_iter=50, random_state=0
    ... ).fit(X, y)
    >>> clf.attention_weights(X[:2]).shape
    (2, 2)
    """
    )

    @fit_or_restore
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row loss weights.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        from torch import nn

        X, _, y_enc, sample_weight = validate_classifier_fit_data(
            self, X, y, sample_weight, dtype=_DTYPES
        )
        return self._fit_net(
            X, y_enc, len(self.classes_), nn.CrossEntropyLoss, sample_weight
        )

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        return _softmax(self._forward(X))

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The most probable class.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


class TabularAttentionRegressor(RegressorMixin, _BaseTabularAttention):
    __doc__ = (
        """Regressor with one attention gate over feature groups.

    The regression counterpart of :class:`TabularAttentionClassifier`; the
    squared error is minimised on standardised targets.

    Read more in the :ref:`User Guide <cco>`.
"""
        + _DOC
        + """
    See Also
    --------
    TabularAttentionClassifier : The classification counterpart.

    Examples
    --------
    >>> from sklearn_iclr26.causal import TabularAttentionRegressor
    >>> from sklearn_iclr26.datasets import make_causal_chain
    >>> X, y = make_causal_chain(n_samples=300, n_features=3, random_state=0)
    >>> reg = TabularAttentionRegressor(
    ...     feature_groups=[[0, 1, 2], [3, 4, 5]], max_iter=30, random_state=0
    ... ).fit(X, y)
    >>> reg.attention_weights(X[:2]).shape
    (2, 2)
    """
    )

    @fit_or_restore
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Target.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row loss weights.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        from torch import nn

        X, y = validate_data(self, X, y, dtype=_DTYPES, y_numeric=True)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(
                sample_weight, X, ensure_non_negative=True
            )
        y = np.asarray(y, dtype=np.float64)
        self._y_mean = float(np.average(y, weights=sample_weight))
        std = float(np.sqrt(np.average((y - self._y_mean) ** 2, weights=sample_weight)))
        self._y_scale = std if std > 0 else 1.0
        y_scaled = ((y - self._y_mean) / self._y_scale)[:, None]
        return self._fit_net(X, y_scaled, 1, nn.MSELoss, sample_weight)

    def predict(self, X):
        """Predicted targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predictions.
        """
        return self._forward(X)[:, 0] * self._y_scale + self._y_mean
