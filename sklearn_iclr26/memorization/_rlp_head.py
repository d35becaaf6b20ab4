"""A classifier with random-label prediction (RLP) heads."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import check_random_state

from sklearn_iclr26.memorization._common import rademacher_from_accuracy
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions
from sklearn_iclr26.utils._torch_estimator import (
    BaseTorchEstimator,
    TorchClassifierMixin,
)
from sklearn_iclr26.utils._validation import check_hidden_layer_sizes, store_params
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["RLPHeadClassifier"]


class RLPHeadClassifier(TorchClassifierMixin, BaseTorchEstimator):
    """MLP classifier with random-label prediction heads (RLP).

    Every training row gets fixed random labels ``r_i`` (``n_label_sets``
    independent draws from ``{0, ..., n_random_labels - 1}``), unrelated to
    its class. Small heads attached to chosen hidden layers learn to predict
    them (Becker et al., "Random Label Prediction Heads for Studying (and
    Controlling) Memorization in Deep Neural Networks", ICLR 2026). Random
    labels can only be fit by memorizing rows, so the heads' training accuracy
    measures how much the layer memorizes; with ``memorization_weight > 0`` the
    features are pushed to make the heads fail. The loss is
    ``L_class + L_rnd + memorization_weight * L_reg`` with the paper's gradient routing:

    * ``L_class``: cross-entropy of the class head; trains features and class
      head.
    * ``L_rnd``: cross-entropy of the RLP heads on the random labels, on
      **detached** features; trains the heads only.
    * ``L_reg``: the complementary cross-entropy ``-log(1 - p_r)`` of the heads
      with **frozen** (detached) parameters; trains the features only. Its
      minimum lowers ``p_r``, so a larger ``memorization_weight`` lowers random-label
      accuracy (the paper writes ``log(1 - p_r)``, whose minimisation would raise
      it; we implement the stated intent).

    With ``memorization_weight=0`` the heads are passive probes and the class network
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
    memorization_weight : float, default=0.0
        Weight of the memorization regulariser ``L_reg`` (0: measure only).
    head : {"linear", "mlp"}, default="linear"
        Architecture of each RLP head (``"mlp"``: one hidden ReLU layer of the
        layer's width).
    random_label_scope : {"global", "per_class"}, default="global"
        ``"global"``: one set of heads predicts the random labels of all
        rows. ``"per_class"``: the random labels are sub-labels nested in the
        classes (the predecessor paper's per-class heads): every head has one
        output block per class and row ``i`` is scored, trained and
        regularised by the block of its observed class ``y_i`` only, so a head
        cannot use the class to predict the label. Chance stays
        ``1 / n_random_labels``.
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
    random_state : int, RandomState instance or None, default=None
        Seeds the random labels, weight initialisation, shuffling and the
        validation split; a fixed value gives bit-identical results.
    verbose : int, default=0
        ``1`` prints the loss per epoch and a summary, ``2`` also the
        random-label accuracy per epoch.
    %(training_parameters)s

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
        10 % of epochs (at least one). With ``early_stopping=True`` the
        accuracies and scores cover the rows trained on; the held-out rows
        score NaN.
    %(training_attributes)s

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
        **BaseTorchEstimator._parameter_constraints,
        "hidden_layer_sizes": ["array-like"],
        "n_random_labels": [Interval(Integral, 2, None, closed="left")],
        "rlp_layers": ["array-like"],
        "memorization_weight": [Interval(Real, 0, None, closed="left")],
        "head": [StrOptions({"linear", "mlp"})],
        "random_label_scope": [StrOptions({"global", "per_class"})],
        "n_label_sets": [Interval(Integral, 1, None, closed="left")],
        "activation": [StrOptions({"relu", "tanh", "gelu"})],
        "dropout": [Interval(Real, 0, 1, closed="left")],
    }

    #: the RLP loss (class, random-label and memorization terms) is the method
    _accepts_criterion = False

    def __init__(
        self,
        hidden_layer_sizes=(64, 64),
        *,
        n_random_labels=2,
        rlp_layers=(-1,),
        memorization_weight=0.0,
        head="linear",
        random_label_scope="global",
        n_label_sets=1,
        activation="relu",
        dropout=0.0,
        alpha=0.0,
        batch_size=None,
        learning_rate_init=1e-2,
        max_iter=50,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-4,
        warm_start=False,
        callbacks=None,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

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

    def _module_spec(self, X, n_outputs, sample_weight=None):
        from sklearn_iclr26.memorization._modules import RLPNet

        hidden = check_hidden_layer_sizes(self.hidden_layer_sizes, allow_empty=False)
        self.rlp_layers_ = self._resolve_layers(len(hidden))
        return RLPNet, {
            "n_features": X.shape[1],
            "n_outputs": n_outputs,
            "hidden_layer_sizes": hidden,
            "rlp_layers": tuple(int(v) for v in self.rlp_layers_),
            "n_random_labels": self.n_random_labels,
            "n_label_sets": self.n_label_sets,
            "head": self.head,
            "activation": self.activation,
            "dropout": self.dropout,
            "compute_reg": self.memorization_weight > 0,
            "n_label_groups": (
                n_outputs if self.random_label_scope == "per_class" else 1
            ),
        }

    def _criterion_spec(self, n_outputs):
        from sklearn_iclr26.memorization._modules import RLPLoss

        return RLPLoss, {"memorization_weight": self.memorization_weight}

    def _training_options(self, X, y):
        from sklearn_iclr26.memorization._modules import RLPMonitor

        shape = (X.shape[0], self.n_label_sets)
        labels = getattr(self, "random_labels_", None)
        if not (self.warm_start and labels is not None and labels.shape == shape):
            # the random labels draw from random_state, as the engine does
            labels = (
                check_random_state(self.random_state)
                .randint(self.n_random_labels, size=shape)
                .astype(np.int64)
            )
        self.random_labels_ = labels
        monitor = RLPMonitor(owner=self, dtype=self.dtype, n_jobs=self.n_jobs)
        aux = {
            "random_labels": labels,
            "sample_id": np.arange(X.shape[0], dtype=np.int64),
        }
        if self.random_label_scope == "per_class":
            aux["label_group"] = np.asarray(y, dtype=np.int64)
        return {
            "aux": aux,
            "callbacks": [("rlp_monitor", monitor)],
        }

    def _after_training(self, X, y):
        monitor = dict(self.net_.callbacks_)["rlp_monitor"]
        self.random_label_accuracy_ = np.stack(monitor.accuracy_, axis=1)
        self.rademacher_estimate_ = rademacher_from_accuracy(
            self.random_label_accuracy_[:, -1], self.n_random_labels
        )
        window = max(1, math.ceil(0.1 * (len(monitor.p_r_) - 1)))
        self.memorization_scores_ = np.full(X.shape[0], np.nan)
        self.memorization_scores_[monitor.sample_id_] = np.mean(
            monitor.p_r_[-window:], axis=0
        )
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

    def _representation(self, X):
        """Last hidden layer of the fitted network (for the memorization probe)."""
        return self._forward(
            X, func=lambda module, xb, **aux: module.representation(xb)
        )
