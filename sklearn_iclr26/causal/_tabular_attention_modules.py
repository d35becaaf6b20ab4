"""torch module of the tabular attention estimators (imported lazily)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import torch
from torch import nn


class GroupAttentionNet(nn.Module):
    """One attention gate over feature-group tokens in front of an MLP head.

    Group ``k`` (columns ``groups[k]``) is embedded as a token ``e_k =
    E_k x_k`` (its own linear map, so groups may differ in width). A learned
    query ``q`` (initialised at 0, so attention starts uniform, as ``v = 0``
    in the two-key model) scores shared-projection keys, ``a = softmax_k(q^T
    K e_k / sqrt(d))``, and the head reads the pooled token ``sum_k a_k e_k``.
    """

    def __init__(
        self, groups, n_outputs, embed_dim=16, hidden_layer_sizes=(32,), dtype=None
    ):
        super().__init__()
        self.groups = tuple(tuple(int(i) for i in g) for g in groups)
        for k, g in enumerate(self.groups):
            self.register_buffer(f"index_{k}", torch.as_tensor(g, dtype=torch.long))
        self.embed = nn.ModuleList(
            nn.Linear(len(g), embed_dim, dtype=dtype) for g in self.groups
        )
        self.key = nn.Linear(embed_dim, embed_dim, bias=False, dtype=dtype)
        self.query = nn.Parameter(torch.zeros(embed_dim, dtype=dtype))
        self.scale = 1.0 / math.sqrt(embed_dim)
        layers, n_in = [], embed_dim
        for n_hidden in hidden_layer_sizes:
            layers += [nn.Linear(n_in, n_hidden, dtype=dtype), nn.ReLU()]
            n_in = n_hidden
        layers.append(nn.Linear(n_in, n_outputs, dtype=dtype))
        self.head = nn.Sequential(*layers)

    def tokens(self, X):
        return torch.stack(
            [
                embed(X[:, getattr(self, f"index_{k}")])
                for k, embed in enumerate(self.embed)
            ],
            dim=1,
        )

    def attention_logits(self, X):
        return self.key(self.tokens(X)) @ self.query * self.scale

    def attention(self, X):
        return torch.softmax(self.attention_logits(X), dim=1)

    def forward(self, X, **aux):
        tokens = self.tokens(X)
        weights = torch.softmax(self.key(tokens) @ self.query * self.scale, dim=1)
        return self.head((weights[:, :, None] * tokens).sum(dim=1))
