"""torch module of the composed (weight-merged) network.

Imported lazily (inside ``fit``); defined at module level so fitted
estimators pickle.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import torch
from torch import nn

_ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU}


def flatten_body(body):
    """``[(weight, bias), ...]`` as the one flat vector of ``body_state``."""
    return np.concatenate([np.ravel(a) for layer in body for a in layer])


class ComposedMLPModule(nn.Module):
    """A merged hidden body ``Linear -> activation -> ...`` and a new head.

    ``body_state`` holds the merged body parameters as one flat numpy vector
    (:func:`flatten_body`: each hidden layer's weight, row-major, then its
    bias, input layer first), copied into the body layers; the head is
    freshly initialised (drawn after the body, from the training seed).
    """

    def __init__(
        self,
        n_features,
        n_outputs,
        hidden_layer_sizes=(32,),
        activation="relu",
        body_state=None,
        dtype=None,
    ):
        super().__init__()
        layers, n_in = [], n_features
        for n_hidden in hidden_layer_sizes:
            layers.append(nn.Linear(n_in, n_hidden, dtype=dtype))
            layers.append(_ACTIVATIONS[activation]())
            n_in = n_hidden
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(n_in, n_outputs, dtype=dtype)
        if body_state is not None:
            flat = torch.as_tensor(body_state)
            start = 0
            with torch.no_grad():
                for layer in self.body:
                    if not isinstance(layer, nn.Linear):
                        continue
                    for param in (layer.weight, layer.bias):
                        stop = start + param.numel()
                        param.copy_(flat[start:stop].reshape(param.shape))
                        start = stop
            if start != flat.numel():
                raise ValueError(
                    f"body_state has {flat.numel()} values; the body needs {start}."
                )

    def forward(self, X, **aux):
        return self.head(self.body(X))

    def embed(self, X, **aux):
        return self.body(X)
