"""Backdoor adjustment over learned background states (Prism), for tabular data."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import functools
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
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["BackdoorAdjustedClassifier", "BackdoorAdjustedRegressor"]

_DTYPES = [np.float64, np.float32]


def _softmax(logits):
    logits = logits - logits.max(axis=1, keepdims=True)
    proba = np.exp(logits)
    return proba / proba.sum(axis=1, keepdims=True)


def _fact(module, xb):
    return module.factual(xb)


def _adjusted(module, xb):
    return module(xb)[1]


def _weights(module, xb):
    return module.confounder_weights(xb)


def _copies(module, xb):
    return module.copy_outputs(xb)


class _BaseBackdoorAdjusted(BaseEstimator):
    """Parameters, groups, training and forward passes shared by both tasks."""

    _parameter_constraints: dict = {
        "feature_groups": [dict, None],
        "n_confounders": [Interval(Integral, 0, None, closed="left")],
        "adjusted_weight": [Interval(Real, 0, None, closed="left")],
        "uniformity_weight": [Interval(Real, 0, None, closed="left")],
        "uniformity_t": [Interval(Real, 0, None, closed="neither")],
        "weight_activation": [StrOptions({"sigmoid", "softmax"})],
        "adjust_in": [StrOptions({"hidden", "output"})],
        "predict_mode": [StrOptions({"factual", "adjusted", "mix"})],
        "embed_dim": [Interval(Integral, 1, None, closed="left")],
        "hidden_layer_sizes": ["array-like"],
        "confounder_hidden_size": [Interval(Integral, 1, None, closed="left")],
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
        n_confounders=2,
        adjusted_weight=1.0,
        uniformity_weight=1.0,
        uniformity_t=2.0,
        weight_activation="sigmoid",
        adjust_in="hidden",
        predict_mode="factual",
        embed_dim=16,
        hidden_layer_sizes=(32, 32),
        confounder_hidden_size=16,
        alpha=0.0,
        max_iter=100,
        batch_size=256,
        learning_rate_init=1e-3,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.feature_groups = feature_groups
        self.n_confounders = n_confounders
        self.adjusted_weight = adjusted_weight
        self.uniformity_weight = uniformity_weight
        self.uniformity_t = uniformity_t
        self.weight_activation = weight_activation
        self.adjust_in = adjust_in
        self.predict_mode = predict_mode
        self.embed_dim = embed_dim
        self.hidden_layer_sizes = hidden_layer_sizes
        self.confounder_hidden_size = confounder_hidden_size
        self.alpha = alpha
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.learning_rate_init = learning_rate_init
        self.dtype = dtype
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # -- groups and checks -------------------------------------------------
    def _resolve_groups(self, n_features):
        groups = self.feature_groups
        if groups is None:
            everything = list(range(n_features))
            return everything, everything
        unknown = set(groups) - {"primary", "context"}
        if unknown or "context" not in groups:
            raise ValueError(
                "feature_groups must be a dict with the key 'context' (and "
                f"optionally 'primary'); got keys {sorted(groups)!r}."
            )
        context = resolve_columns(groups["context"], self, n_features, "context")
        if groups.get("primary") is None:
            primary = [i for i in range(n_features) if i not in set(context)]
        else:
            primary = resolve_columns(groups["primary"], self, n_features, "primary")
        check_disjoint({"primary": primary, "context": context})
        return primary, context

    def _check_params(self):
        if self.n_confounders < 1 and self.adjusted_weight > 0:
            raise ValueError(
                f"n_confounders={self.n_confounders} leaves no background states "
                f"for the adjusted branch, whose loss weight adjusted_weight="
                f"{self.adjusted_weight} is positive: use n_confounders >= 1 or "
                "adjusted_weight=0 (the plain model)."
            )
        if self.n_confounders < 1 and self.predict_mode != "factual":
            raise ValueError(
                f"predict_mode={self.predict_mode!r} needs the adjusted branch, "
                "which n_confounders=0 does not build."
            )
        hidden = tuple(int(h) for h in np.atleast_1d(self.hidden_layer_sizes))
        if not hidden or any(h < 1 for h in hidden):
            raise ValueError(
                "hidden_layer_sizes must list at least one positive width, got "
                f"{self.hidden_layer_sizes}."
            )
        return hidden

    # -- fit -----------------------------------------------------------------
    def _fit_net(self, X, y, n_outputs, task, loss, sample_weight):
        from sklearn_iclr26.causal._backdoor_adjusted_modules import (
            LossHistory,
            PrismLoss,
            PrismNet,
            epoch_means,
        )

        hidden = self._check_params()
        primary, context = self._resolve_groups(X.shape[1])
        self.primary_features_ = np.asarray(primary, dtype=np.int64)
        self.context_features_ = np.asarray(context, dtype=np.int64)
        seed = seed_from_random_state(self.random_state)
        # the per-epoch loss terms are read from the criterion's batch records
        # (a callback would switch skorch's default callbacks on, ~3 ms per
        # epoch); verbose >= 2 adds the printing callback
        callbacks = None
        if self.verbose >= 2:
            callbacks = [
                LossHistory(report=functools.partial(log_progress, self, level=2))
            ]
        log_progress(
            self,
            f"training {1 + self.n_confounders} copies per row on {X.shape[0]} rows "
            f"for {self.max_iter} epochs",
        )
        n_batches = 1
        if self.batch_size is not None:
            n_batches = -(-X.shape[0] // min(self.batch_size, X.shape[0]))
        self.net_ = train_module(
            PrismNet,
            X,
            y,
            criterion=PrismLoss,
            criterion_params={
                "adjusted_weight": self.adjusted_weight,
                "uniformity_weight": self.uniformity_weight,
                "uniformity_t": self.uniformity_t,
                "loss": loss,
                "task": task,
                "adjusted_is_log_proba": (
                    task == "classification" and self.adjust_in == "output"
                ),
            },
            module_params={
                "primary": tuple(primary),
                "context": tuple(context),
                "n_outputs": n_outputs,
                "embed_dim": self.embed_dim,
                "hidden_layer_sizes": hidden,
                "n_confounders": self.n_confounders,
                "confounder_hidden_size": self.confounder_hidden_size,
                "weight_activation": self.weight_activation,
                "adjust_in": self.adjust_in,
                "task": task,
            },
            sample_weight=sample_weight,
            max_epochs=self.max_iter,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate_init,
            weight_decay=self.alpha,
            dtype=self.dtype,
            device=self.device,
            random_state=seed,
            n_jobs=self.n_jobs,
            verbose=0,
            callbacks=callbacks,
        )
        for callback in callbacks or []:
            callback.report = None  # no reference from the net back to self
        records = epoch_means(self.net_.criterion_.terms_, n_batches)
        self.net_.criterion_.terms_ = []
        self.n_iter_ = len(records)
        self.history_ = [
            {
                "epoch": i + 1,
                "factual_loss": r[0],
                "adjusted_loss": r[1],
                "uniformity_loss": r[2],
            }
            for i, r in enumerate(records)
        ]
        if self.history_:
            last = self.history_[-1]
            log_progress(
                self,
                f"done: factual loss {last['factual_loss']:.4g}, adjusted "
                f"{last['adjusted_loss']:.4g}, "
                f"uniformity {last['uniformity_loss']:.4g}",
            )
        return self

    # -- forward passes ------------------------------------------------------
    def _validate(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=_DTYPES)

    def _run(self, X, func):
        return forward_module(
            self.net_,
            X,
            dtype=self.dtype,
            n_jobs=self.n_jobs,
            func=lambda module, xb, **aux: func(module, xb),
        )

    def _outputs(self, X, mode):
        """Head outputs (logits or log-probabilities) of the asked branch."""
        X = self._validate(X)
        mode = self.predict_mode if mode is None else mode
        if mode != "factual" and self.n_confounders < 1:
            raise ValueError(
                f"mode={mode!r} needs the adjusted branch, which n_confounders=0 "
                "does not build."
            )
        if mode == "factual":
            return self._run(X, _fact), None
        if mode == "adjusted":
            return None, self._run(X, _adjusted)
        return self._run(X, _fact), self._run(X, _adjusted)

    def confounder_weights(self, X):
        """Background-state weights ``a_i`` the confounder encoder gives each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data (the encoder reads the context columns).

        Returns
        -------
        weights : ndarray of shape (n_samples, n_confounders, embed_dim)
            Entries in (0, 1) (``weight_activation="sigmoid"``) or rows on the
            simplex over the embedding axis (``"softmax"``).
        """
        X = self._validate(X)
        if self.n_confounders < 1:
            raise ValueError("n_confounders=0: the model has no confounder weights.")
        return self._run(X, _weights)

    def copy_outputs(self, X):
        """Head outputs of every adjusted copy, before averaging.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        outputs : ndarray of shape (n_samples, n_confounders, n_outputs)
            Per copy: standardised predictions (regressor) or logits
            (classifier).
        """
        X = self._validate(X)
        if self.n_confounders < 1:
            raise ValueError("n_confounders=0: the model has no adjusted copies.")
        return self._run(X, _copies)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


_DOC_PARAMETERS = """
    Parameters
    ----------
    feature_groups : dict or None, default=None
        ``{"context": columns, "primary": columns}``: the "context" group is
        the features suspected to carry a background (confounding) signal; it
        is embedded separately and reweighted by the background states.
        Columns are DataFrame column names (str) or column indices (int).
        ``"primary"`` defaults to every column not in ``"context"``; the two
        groups must not overlap. ``None`` puts every column in both groups.
    n_confounders : int, default=2
        Number ``n`` of learned background states (the paper's default 2; its
        ablation's best 4). ``0`` builds no adjusted branch: the plain
        "primary embedding + context embedding" model.
    adjusted_weight : float, default=1.0
        Weight of the adjusted-branch loss ``L2`` (the paper's alpha).
    uniformity_weight : float, default=1.0
        Weight of the uniformity loss ``L3`` on the background states (the
        paper's beta).
    uniformity_t : float, default=2.0
        Kernel parameter ``t`` of the uniformity loss.
    weight_activation : {"sigmoid", "softmax"}, default="sigmoid"
        Activation of the background-state weights (softmax normalises over
        the embedding axis).
    adjust_in : {"hidden", "output"}, default="hidden"
        Average the adjusted copies in hidden space (official code) or average
        their outputs (the paper's formula).
    predict_mode : {"factual", "adjusted", "mix"}, default="factual"
        Output used by ``predict``: the factual copy (official inference), the
        adjusted branch, or the mean of both.
    embed_dim : int, default=16
        Width ``d`` of the two embeddings and of the background-state weights.
    hidden_layer_sizes : array-like of int, default=(32, 32)
        Hidden layers (ReLU, at least one) of the shared network. The first
        is the backbone ``f`` whose outputs ``adjust_in="hidden"`` averages;
        the others and the output layer form the head ``g``. With one hidden
        layer the head is linear and, for regression, both ``adjust_in``
        values give the same model.
    confounder_hidden_size : int, default=16
        Hidden width of the confounder encoder (the tabular analogue of the
        official code's small CNN).
    alpha : float, default=0.0
        L2 penalty (Adam ``weight_decay``).
    max_iter : int, default=100
        Number of epochs.
    batch_size : int or None, default=256
        Mini-batch size, clipped to ``n_samples``; ``None`` means full batch.
    learning_rate_init : float, default=1e-3
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
        ``1`` prints a summary, ``2`` also the three losses per epoch.
"""

_DOC_ATTRIBUTES = """
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, if all strings.
    primary_features_, context_features_ : ndarray of int
        Column indices of the two groups.
    history_ : list of dict
        Per epoch: ``epoch``, ``factual_loss`` (L1), ``adjusted_loss`` (L2) and
        ``uniformity_loss`` (L3), means over the epoch's training batches of
        the unweighted per-row losses (``nan`` when ``n_confounders=0``).
    n_iter_ : int
        Number of epochs run.
    net_ : skorch.NeuralNet
        The fitted net.
"""


class BackdoorAdjustedRegressor(RegressorMixin, _BaseBackdoorAdjusted):
    __doc__ = (
        """Regressor with backdoor adjustment over learned background states.

    A tabular port of Prism (Yang et al., "Extending Sequence Length is Not
    All You Need: Effective Integration of Multimodal Signals for Gene
    Expression Prediction", ICLR 2026). The primary and the context feature
    groups are embedded separately; a confounder encoder maps the context
    columns of each row to ``n_confounders`` weight vectors ``a_i`` (learned
    surrogates of an unobserved background state ``C``). The factual copy is
    ``z_0 = e_p + e_c``, the adjusted copies ``z_i = e_p + e_c * a_i``; all
    run through one backbone and head. Training minimises
    ``L1 + adjusted_weight * L2 + uniformity_weight * L3``: Huber losses of
    the factual and the adjusted (averaged) outputs on standardised targets,
    and a uniformity loss that spreads the ``a_i`` apart. By default
    ``predict`` uses the factual copy (as the official code does): the
    adjusted branch acts as a training-time regulariser. Whether it helps is
    data-dependent; see the user guide.

    Read more in the :ref:`User Guide <prism>`.
"""
        + _DOC_PARAMETERS
        + """    loss : {"huber", "squared_error"}, default="huber"
        Per-output loss of both branches, on standardised targets (Huber with
        threshold 1, as the official ``SmoothL1``).

    Attributes
    ----------"""
        + _DOC_ATTRIBUTES
        + """
    See Also
    --------
    BackdoorAdjustedClassifier : The classification counterpart.

    Examples
    --------
    >>> from sklearn_iclr26.causal import BackdoorAdjustedRegressor
    >>> from sklearn_iclr26.datasets import make_background_confounding
    >>> X, y = make_background_confounding(n_samples=300, random_state=0)
    >>> reg = BackdoorAdjustedRegressor(
    ...     feature_groups={"context": [5, 6, 7, 8, 9]}, max_iter=20, random_state=0
    ... ).fit(X, y)
    >>> reg.predict(X[:3]).shape
    (3,)
    >>> reg.confounder_weights(X[:3]).shape
    (3, 2, 16)
    """
    )

    _parameter_constraints: dict = {
        **_BaseBackdoorAdjusted._parameter_constraints,
        "loss": [StrOptions({"huber", "squared_error"})],
    }

    def __init__(
        self,
        feature_groups=None,
        *,
        n_confounders=2,
        adjusted_weight=1.0,
        uniformity_weight=1.0,
        uniformity_t=2.0,
        weight_activation="sigmoid",
        adjust_in="hidden",
        predict_mode="factual",
        embed_dim=16,
        hidden_layer_sizes=(32, 32),
        confounder_hidden_size=16,
        alpha=0.0,
        max_iter=100,
        batch_size=256,
        learning_rate_init=1e-3,
        loss="huber",
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        super().__init__(
            feature_groups,
            n_confounders=n_confounders,
            adjusted_weight=adjusted_weight,
            uniformity_weight=uniformity_weight,
            uniformity_t=uniformity_t,
            weight_activation=weight_activation,
            adjust_in=adjust_in,
            predict_mode=predict_mode,
            embed_dim=embed_dim,
            hidden_layer_sizes=hidden_layer_sizes,
            confounder_hidden_size=confounder_hidden_size,
            alpha=alpha,
            max_iter=max_iter,
            batch_size=batch_size,
            learning_rate_init=learning_rate_init,
            dtype=dtype,
            device=device,
            n_jobs=n_jobs,
            random_state=random_state,
            verbose=verbose,
        )
        self.loss = loss

    @fit_or_restore
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; a DataFrame when ``feature_groups`` names columns.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row loss weights (weighted mean loss).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, y = validate_data(
            self, X, y, dtype=_DTYPES, y_numeric=True, multi_output=True
        )
        if sample_weight is not None:
            sample_weight = _check_sample_weight(
                sample_weight, X, ensure_non_negative=True
            )
        y = np.asarray(y, dtype=np.float64)
        self._y_ndim = y.ndim
        y_2d = y.reshape(len(y), -1)
        self._y_mean = np.average(y_2d, axis=0, weights=sample_weight)
        y_std = np.sqrt(
            np.average((y_2d - self._y_mean) ** 2, axis=0, weights=sample_weight)
        )
        self._y_scale = np.where(y_std > 0, y_std, 1.0)
        y_scaled = (y_2d - self._y_mean) / self._y_scale
        return self._fit_net(
            X, y_scaled, y_2d.shape[1], "regression", self.loss, sample_weight
        )

    def predict(self, X, mode=None):
        """Predicted targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        mode : {"factual", "adjusted", "mix"} or None, default=None
            Branch to use; ``None`` means ``predict_mode``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Predictions in the units of ``y``.
        """
        fact, adj = self._outputs(X, mode)
        if fact is None:
            out = adj
        elif adj is None:
            out = fact
        else:
            out = 0.5 * (fact + adj)
        out = out * self._y_scale + self._y_mean
        return out.ravel() if self._y_ndim == 1 else out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class BackdoorAdjustedClassifier(ClassifierMixin, _BaseBackdoorAdjusted):
    __doc__ = (
        """Classifier with backdoor adjustment over learned background states.

    The classification counterpart of :class:`BackdoorAdjustedRegressor`
    (Prism, ICLR 2026): cross-entropy replaces the Huber loss in both
    branches. With ``adjust_in="output"`` the adjusted prediction is the mean
    of the copies' class probabilities (the paper's formula); with
    ``"hidden"`` the copies are averaged before the head. ``predict_mode=
    "mix"`` averages the factual and adjusted class probabilities.

    Read more in the :ref:`User Guide <prism>`.
"""
        + _DOC_PARAMETERS
        + """
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels."""
        + _DOC_ATTRIBUTES
        + """
    See Also
    --------
    BackdoorAdjustedRegressor : The regression counterpart.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.causal import BackdoorAdjustedClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = BackdoorAdjustedClassifier(
    ...     feature_groups={"context": [2, 3]}, max_iter=30, random_state=0
    ... ).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """
    )

    @fit_or_restore
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; a DataFrame when ``feature_groups`` names columns.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row loss weights (weighted mean loss).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, _, y_enc, sample_weight = validate_classifier_fit_data(
            self, X, y, sample_weight, dtype=_DTYPES
        )
        return self._fit_net(
            X, y_enc, len(self.classes_), "classification", "huber", sample_weight
        )

    def predict_proba(self, X, mode=None):
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        mode : {"factual", "adjusted", "mix"} or None, default=None
            Branch to use; ``None`` means ``predict_mode``.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        fact, adj = self._outputs(X, mode)
        parts = [_softmax(out) for out in (fact, adj) if out is not None]
        return sum(parts) / len(parts)

    def predict(self, X, mode=None):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        mode : {"factual", "adjusted", "mix"} or None, default=None
            Branch to use; ``None`` means ``predict_mode``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The most probable class.
        """
        proba = self.predict_proba(X, mode)
        return self.classes_[np.argmax(proba, axis=1)]
