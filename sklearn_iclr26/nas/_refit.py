"""Fixed-architecture networks: the refit step of the architecture searches.

The chosen architecture is trained like any network of the package: through
:class:`~sklearn_iclr26.neural_network.TorchMLPClassifier` /
:class:`~sklearn_iclr26.neural_network.TorchMLPRegressor` (label encoding,
target scaling, validation) and the shared skorch helper ``train_module``; only
the torch module differs (the search space's discrete network).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.utils._torch_mlp_classifier import TorchMLPClassifier
from sklearn_iclr26.utils._torch_mlp_regressor import TorchMLPRegressor

__all__ = ["_ArchitectureClassifier", "_ArchitectureRegressor"]


class _ArchitectureMixin:
    """Overrides the module of the torch MLP estimators with an architecture's."""

    def _module_spec(self, X, n_outputs, sample_weight=None):
        space = self.search_space
        space.check_input(X.shape[1])
        return space.network(tuple(self.architecture), X.shape[1], n_outputs)


def _init(
    self,
    search_space=None,
    architecture=None,
    *,
    alpha=0.0,
    batch_size=None,
    learning_rate_init=1e-2,
    max_iter=200,
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
    self.search_space = search_space
    self.architecture = architecture
    self.alpha = alpha
    self.batch_size = batch_size
    self.learning_rate_init = learning_rate_init
    self.max_iter = max_iter
    self.early_stopping = early_stopping
    self.validation_fraction = validation_fraction
    self.n_iter_no_change = n_iter_no_change
    self.tol = tol
    self.warm_start = warm_start
    self.callbacks = callbacks
    self.dtype = dtype
    self.device = device
    self.n_jobs = n_jobs
    self.random_state = random_state
    self.verbose = verbose


_CONSTRAINTS = {
    k: v
    for k, v in TorchMLPClassifier._parameter_constraints.items()
    if k not in ("hidden_layer_sizes", "activation", "dropout")
}
_CONSTRAINTS.update({"search_space": [object], "architecture": [tuple, list]})


class _ArchitectureClassifier(_ArchitectureMixin, TorchMLPClassifier):
    """Classifier with the discrete network ``architecture`` of ``search_space``."""

    _parameter_constraints = _CONSTRAINTS
    __init__ = _init


class _ArchitectureRegressor(_ArchitectureMixin, TorchMLPRegressor):
    """Regressor with the discrete network ``architecture`` of ``search_space``."""

    _parameter_constraints = _CONSTRAINTS
    __init__ = _init
