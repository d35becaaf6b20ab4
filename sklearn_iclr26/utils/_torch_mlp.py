"""The torch MLPs' shared part: :class:`BaseTorchMLP` (foundation: other families
build on the MLP, so it lives beside the torch base; ``neural_network``
re-exports the two public MLPs).

The training parameters, the engine call and the protected entry points
(``_fit_with_criterion``, ``_raw_decision``, ``_module_spec``) are the torch
base's (:mod:`sklearn_iclr26.utils._torch_estimator`, whose module
docstring documents the contract with ``label_noise`` and ``nas``); the MLP
adds its architecture parameters and module.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Real

from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions
from sklearn_iclr26.utils._torch_estimator import BaseTorchEstimator
from sklearn_iclr26.utils._validation import check_hidden_layer_sizes, store_params

# the torch classes live in _modules.py (imported lazily: it imports torch)
_ACTIVATIONS = ("relu", "tanh", "gelu")


class BaseTorchMLP(BaseTorchEstimator):
    """Architecture parameters and module of the torch MLPs."""

    _parameter_constraints: dict = {
        **BaseTorchEstimator._parameter_constraints,
        "hidden_layer_sizes": ["array-like"],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "dropout": [Interval(Real, 0, 1, closed="left")],
    }

    def __init__(
        self,
        hidden_layer_sizes=(32,),
        *,
        activation="relu",
        dropout=0.0,
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
        store_params(self, locals())

    def _module_spec(self, X, n_outputs, sample_weight=None):
        """The torch module class and its parameters (subclasses may swap it)."""
        from sklearn_iclr26.utils._mlp_modules import MLPModule

        return MLPModule, {
            "n_features": X.shape[1],
            "n_outputs": n_outputs,
            "hidden_layer_sizes": check_hidden_layer_sizes(self.hidden_layer_sizes),
            "activation": self.activation,
            "dropout": float(self.dropout),
        }

    def _mlp_layers(self):
        """The fitted network's ``torch.nn.Sequential`` (hidden blocks, then the
        output ``Linear``), or ``None`` when unfitted or when a subclass swapped
        the module (what ``ensemble.ModuleHub`` embeds and merges)."""
        from sklearn_iclr26.utils._mlp_modules import MLPModule

        module = getattr(getattr(self, "net_", None), "module_", None)
        return module.layers if isinstance(module, MLPModule) else None
