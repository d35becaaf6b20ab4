"""Shared parts of the torch MLP estimators: the module and the base class."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_iclr26.utils._torch import forward_module, train_module

_ACTIVATIONS = ("relu", "tanh", "gelu")


class BaseTorchMLP(BaseEstimator):
    """Hyperparameters and training shared by the torch MLP estimators."""

    _parameter_constraints: dict = {
        "hidden_layer_sizes": ["array-like"],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "dtype": [StrOptions({"float64", "float32"})],
        "device": [str],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        hidden_layer_sizes=(32,),
        *,
        activation="relu",
        alpha=0.0,
        batch_size=None,
        learning_rate_init=1e-2,
        max_iter=200,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.dtype = dtype
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _module_spec(self, n_features, n_outputs):
        """The torch module class and its parameters (subclasses may swap it)."""
        from sklearn_iclr26.neural_network._modules import MLPModule

        hidden = tuple(int(h) for h in np.atleast_1d(self.hidden_layer_sizes))
        if any(h < 1 for h in hidden):
            raise ValueError(
                f"hidden_layer_sizes must be positive, got {self.hidden_layer_sizes}."
            )
        return MLPModule, {
            "n_features": n_features,
            "n_outputs": n_outputs,
            "hidden_layer_sizes": hidden,
            "activation": self.activation,
        }

    def _fit_net(
        self,
        X,
        y,
        n_outputs,
        *,
        criterion,
        criterion_params=None,
        sample_weight=None,
        aux=None,
        callbacks=None,
    ):
        module, module_params = self._module_spec(X.shape[1], n_outputs)
        self.net_ = train_module(
            module,
            X,
            y,
            criterion=criterion,
            criterion_params=criterion_params,
            module_params=module_params,
            sample_weight=sample_weight,
            aux=aux,
            max_epochs=self.max_iter,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate_init,
            weight_decay=self.alpha,
            dtype=self.dtype,
            device=self.device,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
            verbose=self.verbose,
            callbacks=callbacks,
        )
        self.n_iter_ = len(self.net_.history)
        return self

    def _forward(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return forward_module(self.net_, X, dtype=self.dtype, n_jobs=self.n_jobs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags
