"""Meta-PCN: deep predictive-coding networks with meta-prediction errors."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_iclr26.neural_network._base import _ACTIVATIONS
from sklearn_iclr26.utils._torch import (
    fit_or_restore,
    forward_module,
    train_predictive_coding,
)
from sklearn_iclr26.utils._validation import (
    N_JOBS_CONSTRAINT,
    validate_classifier_fit_data,
)
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["MetaPCNClassifier"]


def _softmax(logits):
    logits = logits - logits.max(axis=1, keepdims=True)
    proba = np.exp(logits)
    return proba / proba.sum(axis=1, keepdims=True)


class BaseMetaPCN(BaseEstimator):
    """Hyperparameters and training of the predictive-coding estimators."""

    _parameter_constraints: dict = {
        "hidden_layer_sizes": ["array-like"],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "n_inference_steps": [Interval(Integral, 1, None, closed="left")],
        "inference_lr": [Interval(Real, 0, None, closed="neither")],
        "inference_momentum": [Interval(Real, 0, 1, closed="left")],
        "meta_pe": ["boolean"],
        "meta_pe_weight": [Interval(Real, 0, None, closed="left")],
        "weight_norm": ["boolean"],
        "norm_gain": [Interval(Real, 0, None, closed="neither")],
        "weight_clip": [Interval(Real, 0, None, closed="neither"), None],
        "spectral_clip": [Interval(Real, 0, None, closed="neither"), None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
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
        activation="gelu",
        n_inference_steps=7,
        inference_lr=0.1,
        inference_momentum=0.3,
        meta_pe=False,
        meta_pe_weight=0.1,
        weight_norm=True,
        norm_gain=1.0,
        weight_clip=None,
        spectral_clip=None,
        alpha=0.0,
        batch_size=64,
        learning_rate_init=1e-2,
        max_iter=20,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.n_inference_steps = n_inference_steps
        self.inference_lr = inference_lr
        self.inference_momentum = inference_momentum
        self.meta_pe = meta_pe
        self.meta_pe_weight = meta_pe_weight
        self.weight_norm = weight_norm
        self.norm_gain = norm_gain
        self.weight_clip = weight_clip
        self.spectral_clip = spectral_clip
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.dtype = dtype
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _module_params(self, n_features, n_outputs, output_energy):
        hidden = tuple(int(h) for h in np.atleast_1d(self.hidden_layer_sizes))
        if not hidden or any(h < 1 for h in hidden):
            raise ValueError(
                "hidden_layer_sizes must hold at least one positive width (a "
                "predictive-coding network needs a hidden layer to infer), got "
                f"{self.hidden_layer_sizes!r}."
            )
        return {
            "n_features": n_features,
            "n_outputs": n_outputs,
            "hidden_layer_sizes": hidden,
            "activation": self.activation,
            "output_energy": output_energy,
            "meta_pe": bool(self.meta_pe),
            "meta_pe_weight": float(self.meta_pe_weight),
            "weight_norm": bool(self.weight_norm),
            "norm_gain": float(self.norm_gain),
            "weight_clip": None
            if self.weight_clip is None
            else float(self.weight_clip),
            "spectral_clip": (
                None if self.spectral_clip is None else float(self.spectral_clip)
            ),
        }

    def _train(self, X, y, n_outputs, output_energy, sample_weight, callbacks=None):
        from sklearn_iclr26.neural_network._pcn_modules import PCNModule
        from sklearn_iclr26.utils._skorch_net import EpochProgress

        params = self._module_params(X.shape[1], n_outputs, output_energy)
        depth = len(params["hidden_layer_sizes"])
        if self.meta_pe and self.n_inference_steps < 3 * depth:
            # Measured in benchmarks/meta_pcn_update_alignment.py: the meta term
            # carries the output error down two layers per inference step with
            # the sign opposite to backprop, so before the plain error has
            # settled the lower layers' local updates point against the
            # gradient (depth 8: wrong-signed layers at 7 and 15 steps, all
            # aligned at 30).
            warn_user(
                f"{type(self).__name__}: meta_pe=True with n_inference_steps="
                f"{self.n_inference_steps} for {depth} hidden layers; with fewer "
                f"than about 3 x depth = {3 * depth} steps the meta-prediction "
                "error reaches the lower layers before the prediction error "
                "does and their updates point against the loss gradient "
                "(see the user guide). Raise n_inference_steps.",
                UserWarning,
            )
        callbacks = list(callbacks or [])
        if self.verbose:
            callbacks.append(("progress", EpochProgress(self, self.max_iter)))
        self.net_ = train_predictive_coding(
            PCNModule,
            X,
            y,
            module_params=params,
            sample_weight=sample_weight,
            n_inference_steps=self.n_inference_steps,
            inference_lr=self.inference_lr,
            inference_momentum=self.inference_momentum,
            max_epochs=self.max_iter,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate_init,
            weight_decay=self.alpha,
            dtype=self.dtype,
            device=self.device,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
            callbacks=callbacks,
        )
        history = self.net_.history
        self.n_iter_ = len(history)
        layer_energies, diverged = [], 0
        for epoch in history:
            batches = epoch["batches"]
            sizes = np.array([b["train_batch_size"] for b in batches], dtype=float)
            energies = np.array([b["layer_energies"] for b in batches], dtype=float)
            layer_energies.append(sizes @ energies / sizes.sum())
            diverged += sum(int(b["pc_diverged"]) for b in batches)
        self.layer_energy_history_ = np.array(layer_energies)
        self.loss_curve_ = self.layer_energy_history_.sum(axis=1)
        self.weight_spectral_norms_ = np.array(history[:, "weight_spectral_norms"])
        self.n_diverged_batches_ = int(diverged)
        if diverged:
            warn_user(
                f"{type(self).__name__}: predictive-coding energies diverged "
                f"(non-finite) in {diverged} of "
                f"{sum(len(e['batches']) for e in history)} batches; for those "
                "batches the activities were reset to the feed-forward pass "
                "(and the weight step skipped when its gradient was not "
                "finite). Lower inference_lr, or keep weight_norm=True.",
                RuntimeWarning,
            )
        return self

    def _raw_decision(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return forward_module(self.net_, X, dtype=self.dtype, n_jobs=self.n_jobs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


_PARAMETERS_DOC = """hidden_layer_sizes : array-like of int, default=(64, 64)
        Width of each hidden (free, inferred) layer; at least one.
    activation : {"relu", "tanh", "gelu"}, default="gelu"
        Non-linearity applied to hidden activities before they predict the
        layer above.
    n_inference_steps : int, default=7
        Inference steps ``T`` on the activities per batch (at least 1).
    inference_lr : float, default=0.1
        Step size of the activity updates.
    inference_momentum : float, default=0.3
        Momentum of the activity updates (reset each batch).
    meta_pe : bool, default=False
        Add the meta-prediction-error loss ``meta_pe_weight * M`` to the
        inference objective (``M = 1/2 sum_l ||delta_l||^2``, ``delta_l =
        dF/dx_l`` with the activation slope held constant); ``True`` with
        ``weight_norm=True`` is the full Meta-PCN. Off by default: in this
        reconstruction it lowered accuracy on every set measured (see the
        user guide).
    meta_pe_weight : float, default=0.1
        Weight of the meta-loss.
    weight_norm : bool, default=True
        After every weight step (and at initialisation) rescale each weight
        matrix so that ``fan_in * Var(W_l) = norm_gain ** 2`` exactly.
    norm_gain : float, default=1.0
        Gain ``g`` of the weight normalisation.
    weight_clip : float or None, default=None
        Element-wise clipping ``|W_l| <= weight_clip`` after every step.
    spectral_clip : float or None, default=None
        Rescale every weight matrix whose spectral norm exceeds
        ``spectral_clip`` down to it after every step (applied after the
        normalisation, which it can then break).
    alpha : float, default=0.0
        L2 penalty (Adam ``weight_decay``) of the weights.
    batch_size : int or None, default=64
        Mini-batch size, clipped to ``n_samples``; ``None`` means full batch.
    learning_rate_init : float, default=1e-2
        Adam learning rate of the weights.
    max_iter : int, default=20
        Number of epochs.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the torch module.
    device : str, default="cpu"
        torch device, e.g. ``"cuda"``.
    n_jobs : int or None, default=None
        torch threads; ``None`` means 1, ``-1`` all cores; 0 is rejected.
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation and shuffling; a fixed value gives
        bit-identical results.
    verbose : int, default=0
        If positive, print the mean energy after each epoch."""

_ATTRIBUTES_DOC = """n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.
    n_iter_ : int
        Number of epochs run.
    layer_energy_history_ : ndarray of shape (n_iter_, n_layers)
        Per epoch, the mean energy of each layer (hidden layers
        ``1/2 ||eps_l||^2``, then the output layer) at the end of inference:
        the prediction-error-imbalance diagnostic.
    loss_curve_ : ndarray of shape (n_iter_,)
        Mean total energy ``F`` per epoch (row sums of
        ``layer_energy_history_``).
    weight_spectral_norms_ : ndarray of shape (n_iter_, n_layers)
        Spectral norm of each weight matrix at the end of each epoch.
    n_diverged_batches_ : int
        Batches whose inference diverged (activities reset; see the
        warning).
    net_ : skorch.NeuralNet
        The fitted skorch net (``net_.module_`` is the torch module)."""


class MetaPCNClassifier(ClassifierMixin, BaseMetaPCN):
    __doc__ = f"""Deep predictive-coding classifier with meta-prediction errors.

    A discriminative predictive-coding network (PCN): the input is clamped to
    the bottom layer and the label to the top one; in each mini-batch the
    hidden activities first descend the network energy ``F = sum_l 1/2
    ||x_l - mu_l||^2 + CE(mu_L, y)`` for ``n_inference_steps`` steps, then
    every weight matrix takes a local (Hebbian) step ``dW_l = -eps_l
    phi(x_{{l-1}})^T`` through Adam. Prediction is the feed-forward pass.

    Meta-PCN (Ha et al., ICLR 2026) adds two fixes for deep PCNs, each behind
    a switch, so that vanilla PCN (``weight_norm=False``), PCN + weight
    normalisation (the default), PCN + meta-PE and full Meta-PCN
    (``meta_pe=True``) are the same class: a loss on meta-prediction errors
    in the inference objective, and a weight-variance normalisation after
    every step (with optional element-wise and spectral clipping). The
    paper's exact definitions were not available; the forms used are
    reconstructions (see the user guide, which also reports where they do
    not reproduce the paper's claims).

    Parameters
    ----------
    {_PARAMETERS_DOC}
    output_energy : {{"ce", "se"}}, default="ce"
        Energy of the output layer: cross-entropy of the logits, or squared
        error to the one-hot labels.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels seen during fit.
    {_ATTRIBUTES_DOC}

    See Also
    --------
    MetaPCNRegressor : The regression counterpart.
    TorchMLPClassifier : The same network trained by backpropagation.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn_iclr26.neural_network import MetaPCNClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), MetaPCNClassifier(
    ...     hidden_layer_sizes=(16, 16), max_iter=20, random_state=0)).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """

    _parameter_constraints: dict = {
        **BaseMetaPCN._parameter_constraints,
        "output_energy": [StrOptions({"ce", "se"})],
    }

    def __init__(
        self,
        hidden_layer_sizes=(64, 64),
        *,
        activation="gelu",
        n_inference_steps=7,
        inference_lr=0.1,
        inference_momentum=0.3,
        meta_pe=False,
        meta_pe_weight=0.1,
        weight_norm=True,
        norm_gain=1.0,
        weight_clip=None,
        spectral_clip=None,
        output_energy="ce",
        alpha=0.0,
        batch_size=64,
        learning_rate_init=1e-2,
        max_iter=20,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        super().__init__(
            hidden_layer_sizes,
            activation=activation,
            n_inference_steps=n_inference_steps,
            inference_lr=inference_lr,
            inference_momentum=inference_momentum,
            meta_pe=meta_pe,
            meta_pe_weight=meta_pe_weight,
            weight_norm=weight_norm,
            norm_gain=norm_gain,
            weight_clip=weight_clip,
            spectral_clip=spectral_clip,
            alpha=alpha,
            batch_size=batch_size,
            learning_rate_init=learning_rate_init,
            max_iter=max_iter,
            dtype=dtype,
            device=device,
            n_jobs=n_jobs,
            random_state=random_state,
            verbose=verbose,
        )
        self.output_energy = output_energy

    @fit_or_restore
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the network by predictive coding.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (finite; standardise it first).
        y : array-like of shape (n_samples,)
            Target labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights of the weight updates (inference is per
            sample).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, _, y_encoded, sample_weight = validate_classifier_fit_data(
            self, X, y, sample_weight, dtype=[np.float64, np.float32]
        )
        return self._train(
            X, y_encoded, len(self.classes_), self.output_energy, sample_weight
        )

    def predict_proba(self, X):
        """Class probabilities of the feed-forward pass.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Softmax of the output layer; columns follow ``classes_``.
        """
        return _softmax(self._raw_decision(X))

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
        logits = self._raw_decision(X)
        return self.classes_[np.argmax(logits, axis=1)]
