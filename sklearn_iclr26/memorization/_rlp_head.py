"""A classifier with random-label prediction (RLP) heads."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_iclr26.memorization._common import (
    hidden_sizes,
    rademacher_from_accuracy,
    softmax,
)
from sklearn_iclr26.utils._random import seed_from_random_state
from sklearn_iclr26.utils._torch import fit_or_restore, forward_module, train_module
from sklearn_iclr26.utils._validation import (
    N_JOBS_CONSTRAINT,
    validate_classifier_fit_data,
)
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["RLPHeadClassifier"]


def _assigned_label_stats(module, xb, random_labels):
    """Per row, layer and label set: ``p_r`` and whether the head predicts ``r``."""
    import torch

    logits = module.head_logits(xb)  # (B, L, S, n)
    labels = random_labels.long().unsqueeze(1).expand(-1, logits.shape[1], -1)
    proba = torch.softmax(logits, dim=-1)
    p_r = proba.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    correct = (logits.argmax(dim=-1) == labels).to(p_r.dtype)
    return torch.stack([p_r, correct], dim=-1)


class _RLPMonitor:
    """skorch callback: random-label accuracy and ``p_r`` of the heads per epoch.

    Evaluated on the training rows in eval mode (no dropout) at initialisation
    and after every epoch, through ``forward_module`` (which forks torch's RNG,
    so monitoring does not change training).
    """

    def __init__(self, X, random_labels, dtype, n_jobs, estimator):
        self.X = X
        self.random_labels = random_labels
        self.dtype = dtype
        self.n_jobs = n_jobs
        self.estimator = estimator
        self.accuracy = []  # per epoch: (n_layers,)
        self.p_r = []  # per epoch: (n_samples,) mean over layers' last / sets

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self

    def initialize(self):
        return self

    def _record(self, net):
        stats = forward_module(
            net,
            self.X,
            aux={"random_labels": self.random_labels},
            dtype=self.dtype,
            n_jobs=self.n_jobs,
            func=_assigned_label_stats,
        )  # (n, L, S, 2)
        self.accuracy.append(stats[..., 1].mean(axis=(0, 2)))
        # per-sample score: p_r of the last listed layer's heads, mean over sets
        self.p_r.append(stats[:, -1, :, 0].mean(axis=1))
        return self.accuracy[-1]

    def on_train_begin(self, net, **kwargs):
        self._record(net)

    def on_epoch_end(self, net, **kwargs):
        acc = self._record(net)
        epoch = len(self.accuracy) - 1
        log_progress(
            self.estimator,
            f"epoch {epoch}: random-label accuracy per layer "
            + ", ".join(f"{a:.3f}" for a in acc),
            level=2,
        )

    def on_train_end(self, net, **kwargs):
        pass

    def on_epoch_begin(self, net, **kwargs):
        pass

    def on_batch_begin(self, net, **kwargs):
        pass

    def on_batch_end(self, net, **kwargs):
        pass

    def on_grad_computed(self, net, named_parameters, **kwargs):
        pass


class RLPHeadClassifier(ClassifierMixin, BaseEstimator):
    """MLP classifier with random-label prediction heads (RLP).

    Every training row gets fixed random labels ``r_i`` (``n_label_sets``
    independent draws from ``{0, ..., n_random_labels - 1}``), unrelated to
    its class. Small heads attached to chosen hidden layers learn to predict
    them (Becker et al., "Random Label Prediction Heads for Studying (and
    Controlling) Memorization in Deep Neural Networks", ICLR 2026). Random
    labels can only be fit by memorizing rows, so the heads' training accuracy
    measures how much the layer memorizes; with ``reg_lambda > 0`` the
    features are pushed to make the heads fail. The loss is
    ``L_class + L_rnd + reg_lambda * L_reg`` with the paper's gradient routing:

    * ``L_class``: cross-entropy of the class head; trains features and class
      head.
    * ``L_rnd``: cross-entropy of the RLP heads on the random labels, on
      **detached** features; trains the heads only.
    * ``L_reg``: the complementary cross-entropy ``-log(1 - p_r)`` of the heads
      with **frozen** (detached) parameters; trains the features only. Its
      minimum lowers ``p_r``, so a larger ``reg_lambda`` lowers random-label
      accuracy (the paper writes ``log(1 - p_r)``, whose minimisation would raise
      it; we implement the stated intent).

    With ``reg_lambda=0`` the heads are passive probes and the class network
    trains exactly as without them.

    Read more in the :ref:`User Guide <memorization>`.

    Parameters
    ----------
    hidden_layer_sizes : array-like of int, default=(64, 64)
        Width of each hidden layer.
    n_random_labels : int, default=2
        Number of random labels (at least 2). Two keeps the Rademacher reading
        exact; more gives a finer per-row score (chance ``1 / n``).
    rlp_layers : array-like of int, default=(-1,)
        Hidden layers (indices into ``hidden_layer_sizes``, negative from the
        end) that carry RLP heads; ``-1`` is the penultimate representation.
    reg_lambda : float, default=0.0
        Weight of the memorization regulariser ``L_reg`` (0: measure only).
    head : {"linear", "mlp"}, default="linear"
        Architecture of each RLP head (``"mlp"``: one hidden ReLU layer of the
        layer's width).
    n_label_sets : int, default=1
        Independent random-label draws, one head each per layer (averaged; more
        sets lower the variance of the per-row score).
    activation : {"relu", "tanh", "gelu"}, default="relu"
        Hidden-layer non-linearity.
    dropout : float in [0, 1), default=0.0
        Dropout after every hidden layer (a baseline regulariser).
    alpha : float, default=0.0
        L2 penalty (optimizer weight decay), a baseline regulariser.
    max_iter : int, default=50
        Number of epochs (modest by default; memorization shows after more
        epochs, e.g. a few hundred).
    batch_size : int or None, default=None
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
        Seeds the random labels, weight initialisation and shuffling; a fixed
        value gives bit-identical results.
    verbose : int, default=0
        ``1`` prints a summary and the loss per epoch, ``2`` also the
        random-label accuracy per epoch.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, if all strings.
    rlp_layers_ : ndarray of int
        The layers carrying heads, as non-negative indices.
    random_labels_ : ndarray of shape (n_samples, n_label_sets)
        The random labels of the training rows.
    random_label_accuracy_ : ndarray of shape (n_rlp_layers, n_iter_ + 1)
        Training accuracy of the heads on the random labels (mean over label
        sets), per layer, at initialisation (column 0) and after every epoch.
    rademacher_estimate_ : ndarray of shape (n_rlp_layers,)
        Chance-corrected final random-label accuracy ``(acc - 1/n) / (1 - 1/n)``
        per layer; for ``n_random_labels=2`` it equals ``2 acc - 1``, the
        empirical Rademacher correlation of the fitted head.
    memorization_scores_ : ndarray of shape (n_samples,)
        Per training row, the probability the heads of the last listed layer
        give to its random label, averaged over label sets and over the last
        10 % of epochs (at least one).
    history_ : list of dict
        Per epoch: ``epoch``, ``train_loss`` and ``random_label_accuracy`` (one
        value per layer).
    n_iter_ : int
        Number of epochs run.
    net_ : skorch.NeuralNet
        The fitted net.

    See Also
    --------
    RandomLabelProbe : The same measurement on any fixed representation.
    SampleGradientMemorization : Memorization from cumulative input gradients.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.memorization import RLPHeadClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = RLPHeadClassifier(max_iter=50, random_state=0).fit(X, y)
    >>> clf.random_label_accuracy_.shape
    (1, 51)
    >>> clf.predict(X[:3]).shape
    (3,)
    """

    _parameter_constraints: dict = {
        "hidden_layer_sizes": ["array-like"],
        "n_random_labels": [Interval(Integral, 2, None, closed="left")],
        "rlp_layers": ["array-like"],
        "reg_lambda": [Interval(Real, 0, None, closed="left")],
        "head": [StrOptions({"linear", "mlp"})],
        "n_label_sets": [Interval(Integral, 1, None, closed="left")],
        "activation": [StrOptions({"relu", "tanh", "gelu"})],
        "dropout": [Interval(Real, 0, 1, closed="left")],
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
        hidden_layer_sizes=(64, 64),
        *,
        n_random_labels=2,
        rlp_layers=(-1,),
        reg_lambda=0.0,
        head="linear",
        n_label_sets=1,
        activation="relu",
        dropout=0.0,
        alpha=0.0,
        max_iter=50,
        batch_size=None,
        learning_rate_init=1e-2,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.n_random_labels = n_random_labels
        self.rlp_layers = rlp_layers
        self.reg_lambda = reg_lambda
        self.head = head
        self.n_label_sets = n_label_sets
        self.activation = activation
        self.dropout = dropout
        self.alpha = alpha
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.learning_rate_init = learning_rate_init
        self.dtype = dtype
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _resolve_layers(self, n_hidden):
        layers = [int(layer) for layer in np.atleast_1d(self.rlp_layers)]
        if not layers:
            raise ValueError("rlp_layers must name at least one hidden layer.")
        resolved = []
        for layer in layers:
            if not -n_hidden <= layer < n_hidden:
                raise ValueError(
                    f"rlp_layers contains {layer}, but the network has {n_hidden} "
                    f"hidden layer(s): valid indices are {-n_hidden} to "
                    f"{n_hidden - 1}."
                )
            resolved.append(layer % n_hidden)
        if len(set(resolved)) != len(resolved):
            raise ValueError(f"rlp_layers names a layer twice: {self.rlp_layers!r}.")
        return np.asarray(resolved, dtype=np.int64)

    def _module_params(self, n_features, n_outputs):
        return {
            "n_features": n_features,
            "n_outputs": n_outputs,
            "hidden_layer_sizes": self._hidden,
            "rlp_layers": tuple(int(v) for v in self.rlp_layers_),
            "n_random_labels": self.n_random_labels,
            "n_label_sets": self.n_label_sets,
            "head": self.head,
            "activation": self.activation,
            "dropout": self.dropout,
            "compute_reg": self.reg_lambda > 0,
        }

    @fit_or_restore
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the network and its random-label heads.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Target labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row loss weights (weighted mean of the total loss).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        from sklearn_iclr26.memorization._modules import RLPLoss, RLPNet

        X, _, y_enc, sample_weight = validate_classifier_fit_data(
            self, X, y, sample_weight, dtype=[np.float64, np.float32]
        )
        self._hidden = hidden_sizes(self.hidden_layer_sizes)
        self.rlp_layers_ = self._resolve_layers(len(self._hidden))
        seed = seed_from_random_state(self.random_state)
        rng = np.random.RandomState(seed)
        n = X.shape[0]
        self.random_labels_ = rng.randint(
            self.n_random_labels, size=(n, self.n_label_sets)
        ).astype(np.int64)
        monitor = _RLPMonitor(X, self.random_labels_, self.dtype, self.n_jobs, self)
        self.net_ = train_module(
            RLPNet,
            X,
            y_enc,
            criterion=RLPLoss,
            criterion_params={"reg_lambda": self.reg_lambda},
            module_params=self._module_params(X.shape[1], len(self.classes_)),
            sample_weight=sample_weight,
            aux={"random_labels": self.random_labels_},
            max_epochs=self.max_iter,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate_init,
            weight_decay=self.alpha,
            dtype=self.dtype,
            device=self.device,
            random_state=seed,
            n_jobs=self.n_jobs,
            verbose=self.verbose,
            callbacks=[monitor],
        )
        self.n_iter_ = len(monitor.accuracy) - 1
        self.random_label_accuracy_ = np.stack(monitor.accuracy, axis=1)
        self.rademacher_estimate_ = rademacher_from_accuracy(
            self.random_label_accuracy_[:, -1], self.n_random_labels
        )
        window = max(1, math.ceil(0.1 * self.n_iter_))
        self.memorization_scores_ = np.mean(monitor.p_r[-window:], axis=0)
        losses = [row.get("train_loss", np.nan) for row in self.net_.history]
        self.history_ = [
            {
                "epoch": epoch + 1,
                "train_loss": float(losses[epoch]),
                "random_label_accuracy": self.random_label_accuracy_[:, epoch + 1],
            }
            for epoch in range(self.n_iter_)
        ]
        log_progress(
            self,
            "final random-label accuracy per layer "
            + ", ".join(
                f"{layer}: {acc:.3f}"
                for layer, acc in zip(
                    self.rlp_layers_, self.random_label_accuracy_[:, -1]
                )
            ),
        )
        return self

    def _forward(self, X, func=None):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return forward_module(
            self.net_, X, dtype=self.dtype, n_jobs=self.n_jobs, func=func
        )

    def _representation(self, X):
        """Last hidden layer of the fitted network (for the memorization probe)."""
        return self._forward(
            X, func=lambda module, xb, **aux: module.representation(xb)
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
        return softmax(self._forward(X))

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
        logits = self._forward(X)
        return self.classes_[np.argmax(logits, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags
