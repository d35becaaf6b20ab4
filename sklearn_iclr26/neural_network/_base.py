"""Shared parts of the torch MLP estimators, and their protected entry points.

Other families build on :class:`TorchMLPClassifier` /
:class:`TorchMLPRegressor` through the public API and the **protected entry
points** below, and nothing else (no private method, no writing of fitted
attributes from outside). They are a contract: renaming one breaks the
families that use it, so change them only together with their callers
(``label_noise``, ``nas``).

``_fit_with_criterion(X, y, *, n_outputs, criterion, criterion_params=None,
aux=None, sample_weight=None, callbacks=None)``
    Fit the network with a given per-sample loss. Validates the
    hyperparameters, ``X`` (sets ``n_features_in_``/``feature_names_in_``) and
    ``sample_weight`` as :meth:`fit` does, then trains through the package's
    engine (``utils/_torch.py``). ``criterion`` is a torch loss class called as
    ``criterion(y_pred, y_true, **aux)`` returning per-sample losses;
    ``criterion_params`` its keyword arguments; ``aux`` a dict of per-sample
    arrays batched with ``X`` (they reach the criterion and the module's
    ``forward``, which the MLP module ignores);
    ``callbacks`` extra skorch callbacks. ``y`` is passed to the criterion as
    is: for the classifier, encoded labels ``0, ..., n_outputs - 1`` (the
    fitted classifier then has ``classes_ = arange(n_outputs)``); for the
    regressor, targets used without the internal standardisation. Returns
    ``self``.
``_raw_decision(X)``
    The raw network output on ``X``, float64 of shape ``(n_samples,
    n_outputs)``: the logits of the classifier, the (standardised) outputs of
    the regressor. Checks that the estimator is fitted and validates ``X``;
    rows are processed in batches sized by ``working_memory``.
``_module_spec(n_features, n_outputs)``
    Overridable hook: the torch module class and its keyword arguments (the
    architecture searches of ``nas`` swap the module here).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from abc import ABCMeta, abstractmethod
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
    validate_data,
)

from sklearn_iclr26.utils._torch import fit_or_restore, forward_module, train_module
from sklearn_iclr26.utils._validation import N_JOBS_CONSTRAINT

# the torch classes live in _modules.py (imported lazily: it imports torch)
_ACTIVATIONS = ("relu", "tanh", "gelu")


class BaseTorchMLP(BaseEstimator, metaclass=ABCMeta):
    """Hyperparameters, training and protected entry points of the torch MLPs.

    See the module docstring for the protected entry points other families
    use. Subclasses implement :meth:`_set_output_encoding`.
    """

    _parameter_constraints: dict = {
        "hidden_layer_sizes": ["array-like"],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "dtype": [StrOptions({"float64", "float32"})],
        "device": [str],
        # torch threads: None = 1, -1 = all cores; 0 is meaningless
        "n_jobs": N_JOBS_CONSTRAINT,
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

    # ------------------------------------------------------------ hooks

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

    @abstractmethod
    def _set_output_encoding(self, n_outputs):
        """Fitted attributes mapping raw outputs to predictions, for
        :meth:`_fit_with_criterion` (``classes_`` of the classifier, the
        identity target scaling of the regressor)."""

    # ------------------------------------------------ protected entry points

    @fit_or_restore(check_regression=False)
    def _fit_with_criterion(
        self,
        X,
        y,
        *,
        n_outputs,
        criterion,
        criterion_params=None,
        aux=None,
        sample_weight=None,
        callbacks=None,
    ):
        """Fit with a given per-sample criterion (see the module docstring)."""
        self._validate_params()
        X = validate_data(self, X, reset=True, dtype=[np.float64, np.float32])
        if sample_weight is not None:
            sample_weight = _check_sample_weight(
                sample_weight, X, ensure_non_negative=True
            )
        n_outputs = int(n_outputs)
        self._set_output_encoding(n_outputs)
        return self._train(
            X,
            y,
            n_outputs,
            criterion=criterion,
            criterion_params=criterion_params,
            sample_weight=sample_weight,
            aux=aux,
            callbacks=callbacks,
        )

    def _raw_decision(self, X):
        """Raw network outputs, float64 (see the module docstring)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return forward_module(self.net_, X, dtype=self.dtype, n_jobs=self.n_jobs)

    # ------------------------------------------------------------ private

    def _train(
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
        callbacks = list(callbacks or [])
        if self.verbose:
            from sklearn_iclr26.neural_network._callbacks import EpochProgress

            # one plain-text line per epoch (skorch's table writes ANSI codes)
            callbacks.append(("progress", EpochProgress(self, self.max_iter)))
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
            verbose=0,
            callbacks=callbacks,
        )
        self.n_iter_ = len(self.net_.history)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags
