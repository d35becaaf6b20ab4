"""torch module of the composed (weight-merged) network.

Imported lazily (inside ``fit``); defined at module level so fitted
estimators pickle.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import torch
from torch import nn

_ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU}


class ComposedMLPModule(nn.Module):
    """A merged hidden body ``Linear -> activation -> ...`` and a new head.

    ``body_state`` holds the merged body parameters as ``[(weight, bias), ...]``
    numpy arrays, copied into the body layers; the head is freshly initialised
    (drawn after the body, from the training seed).
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
            linears = [m for m in self.body if isinstance(m, nn.Linear)]
            with torch.no_grad():
                for layer, (weight, bias) in zip(linears, body_state, strict=True):
                    layer.weight.copy_(torch.as_tensor(weight))
                    layer.bias.copy_(torch.as_tensor(bias))

    def forward(self, X, **aux):
        return self.head(self.body(X))

    def embed(self, X, **aux):
        return self.body(X)
