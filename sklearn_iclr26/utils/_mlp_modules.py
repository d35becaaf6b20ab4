"""torch modules of the neural-network estimators.

Imported lazily (inside ``fit``) so that ``import sklearn_iclr26`` does not
import torch; defined at module level so that fitted estimators pickle.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from torch import nn

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU}


class MLPModule(nn.Module):
    """Feed-forward network ``Linear -> activation [-> Dropout] -> ... -> Linear``."""

    def __init__(
        self,
        n_features,
        n_outputs,
        hidden_layer_sizes=(32,),
        activation="relu",
        dropout=0.0,
        dtype=None,
    ):
        super().__init__()
        layers, n_in = [], n_features
        for n_hidden in hidden_layer_sizes:
            layers.append(nn.Linear(n_in, n_hidden, dtype=dtype))
            layers.append(ACTIVATIONS[activation]())
            if dropout > 0:
                layers.append(nn.Dropout(dropout))
            n_in = n_hidden
        layers.append(nn.Linear(n_in, n_outputs, dtype=dtype))
        self.layers = nn.Sequential(*layers)

    def forward(self, X, **aux):
        return self.layers(X)
