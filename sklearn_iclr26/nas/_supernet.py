"""torch modules of the NAS search spaces: relaxed supernets, discrete networks.

Imported lazily (inside ``fit``) so that ``import sklearn_iclr26`` does not
import torch; module level so that fitted estimators pickle.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from sklearn_iclr26.utils._torch import torch_dtype

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU}
_LATENCY_BATCH = 64


class MLPSupernet(nn.Module):
    """Weight-sharing MLP supernet (channel masking, see ``MLPSearchSpace``)."""

    def __init__(
        self, n_features, n_outputs, n_layers, widths, activations, dtype=None
    ):
        super().__init__()
        self.n_features = n_features
        self.hidden = max(max(widths), n_features)
        self.max_width = max(widths)
        self.n_layers = n_layers
        self.acts = nn.ModuleList([ACTIVATIONS[a]() for a in activations])
        if self.max_width > 0:
            self.linears = nn.ModuleList(
                [
                    nn.Linear(self.hidden, self.max_width, dtype=dtype)
                    for _ in range(n_layers)
                ]
            )
        self.head = nn.Linear(self.hidden, n_outputs, dtype=dtype)
        masks = torch.zeros(len(widths), max(self.max_width, 1), dtype=dtype)
        for k, w in enumerate(widths):
            masks[k, :w] = 1.0
        self.register_buffer("masks", masks)
        self.register_buffer(
            "skip", torch.tensor([float(w == 0) for w in widths], dtype=dtype)
        )

    def forward(self, X, weights):
        z = F.pad(X, (0, self.hidden - self.n_features))
        for layer in range(self.n_layers):
            p_width, p_act = weights[2 * layer], weights[2 * layer + 1]
            z_skip = (p_width * self.skip).sum() * z
            if self.max_width > 0:
                h = self.linears[layer](z)
                a = sum(p_act[j] * act(h) for j, act in enumerate(self.acts))
                out = a * (p_width @ self.masks)
                z = F.pad(out, (0, self.hidden - self.max_width)) + z_skip
            else:
                z = z_skip
        return self.head(z)


class MLPNetwork(nn.Module):
    """Discrete MLP with one activation per hidden layer."""

    def __init__(self, n_features, n_outputs, layers=(), dtype=None):
        super().__init__()
        modules, d_in = [], n_features
        for width, act in layers:
            modules += [nn.Linear(d_in, width, dtype=dtype), ACTIVATIONS[act]()]
            d_in = width
        modules.append(nn.Linear(d_in, n_outputs, dtype=dtype))
        self.layers = nn.Sequential(*modules)

    def forward(self, X, **aux):
        return self.layers(X)


class RelaxedSupernet(nn.Module):
    """A supernet with its architecture logits: the module of the bilevel search.

    Builds the space's supernet (``supernet_class(**supernet_params)``) and
    then one logit vector per edge (``1e-3 * randn``, in this order, so the
    RNG stream is fixed); ``forward`` relaxes the logits (``softmax`` of
    ``logits / temperature`` or a Gumbel-softmax sample) and runs the
    supernet. The protocol of the bilevel net (``nas._bilevel_net._BilevelNet``):
    ``weight_parameters()`` are the supernet's, ``arch_parameters()`` the
    logits, and ``forward(X, detach_arch=True)`` treats the logits as
    constants (the weight step).
    """

    def __init__(
        self,
        supernet_class,
        supernet_params,
        n_ops,
        relaxation="softmax",
        temperature=1.0,
        dtype=None,
    ):
        super().__init__()
        self.supernet = supernet_class(**supernet_params, dtype=dtype)
        self.arch_logits = nn.ParameterList(
            [nn.Parameter(1e-3 * torch.randn(int(k), dtype=dtype)) for k in n_ops]
        )
        self.relaxation = relaxation
        self.temperature = temperature

    def weight_parameters(self):
        return self.supernet.parameters()

    def arch_parameters(self):
        return list(self.arch_logits)

    def relaxed_weights(self):
        if self.relaxation == "gumbel":
            return [F.gumbel_softmax(a, tau=self.temperature) for a in self.arch_logits]
        return [F.softmax(a / self.temperature, dim=0) for a in self.arch_logits]

    def forward(self, X, detach_arch=False):
        weights = self.relaxed_weights()
        if detach_arch:
            weights = [w.detach() for w in weights]
        return self.supernet(X, weights)

    def one_hot_forward(self, X, arch_index):
        """The supernet with one-hot weights: the discrete network ``arch_index``."""
        weights = []
        for logits, k in zip(self.arch_logits, arch_index):
            w = torch.zeros_like(logits)
            w[int(k)] = 1.0
            weights.append(w)
        return self.supernet(X, weights)


class _Zero(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)


def _cell_op(name, channels, dtype):
    if name == "none":
        return _Zero()
    if name == "skip_connect":
        return nn.Identity()
    if name == "avg_pool_3x3":
        return nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
    k = 1 if name == "nor_conv_1x1" else 3
    return nn.Sequential(
        nn.ReLU(),
        nn.Conv2d(channels, channels, k, padding=k // 2, bias=False, dtype=dtype),
    )


class _CellBase(nn.Module):
    def _init_common(
        self, n_outputs, n_nodes, channels, image_shape, in_channels, dtype
    ):
        self.n_nodes = n_nodes
        self.image_shape = tuple(image_shape)
        self.in_channels = in_channels
        self.stem = nn.Conv2d(in_channels, channels, 3, padding=1, dtype=dtype)
        self.head = nn.Linear(channels, n_outputs, dtype=dtype)
        self.pairs = [(j, i) for j in range(1, n_nodes) for i in range(j)]

    def _run(self, X, edge_fn):
        x = X.reshape(-1, self.in_channels, *self.image_shape)
        nodes = [self.stem(x)]
        for j in range(1, self.n_nodes):
            total = 0
            for e, (jj, i) in enumerate(self.pairs):
                if jj == j:
                    total = total + edge_fn(e, nodes[i])
            if not torch.is_tensor(total):
                total = torch.zeros_like(nodes[0])
            nodes.append(total)
        return self.head(F.relu(nodes[-1]).mean(dim=(2, 3)))


class CellSupernet(_CellBase):
    """NAS-Bench-201 style cell with a mixed operation on every edge."""

    def __init__(
        self,
        n_outputs,
        ops,
        n_nodes=4,
        channels=8,
        image_shape=(8, 8),
        in_channels=1,
        dtype=None,
    ):
        super().__init__()
        self._init_common(n_outputs, n_nodes, channels, image_shape, in_channels, dtype)
        self.edge_ops = nn.ModuleList(
            [
                nn.ModuleList([_cell_op(op, channels, dtype) for op in ops])
                for _ in self.pairs
            ]
        )

    def forward(self, X, weights):
        def mixed(e, x):
            return sum(w * op(x) for w, op in zip(weights[e], self.edge_ops[e]))

        return self._run(X, mixed)


class CellNetwork(_CellBase):
    """Discrete NAS-Bench-201 style cell network."""

    def __init__(
        self,
        n_outputs,
        arch,
        n_nodes=4,
        channels=8,
        image_shape=(8, 8),
        in_channels=1,
        dtype=None,
    ):
        super().__init__()
        self._init_common(n_outputs, n_nodes, channels, image_shape, in_channels, dtype)
        self.arch = tuple(arch)
        self.edge_ops = nn.ModuleList([_cell_op(op, channels, dtype) for op in arch])

    def forward(self, X, **aux):
        def single(e, x):
            if self.arch[e] == "none":
                return 0
            return self.edge_ops[e](x)

        return self._run(X, single)


def _median_time(module, x, repeats):
    def sync():
        if x.is_cuda:  # kernels run asynchronously: wait before reading the clock
            torch.cuda.synchronize(x.device)

    times = []
    with torch.no_grad():
        for _ in range(3):  # warm-up
            module(x)
        for _ in range(max(1, int(repeats))):
            sync()
            start = time.perf_counter()
            module(x)
            sync()
            times.append(time.perf_counter() - start)
    return float(np.median(times))


def measure_linear_latency(
    d_in, d_out, act, *, repeats=20, dtype="float64", device="cpu"
):
    """Median time (s) of ``Linear(d_in, d_out) + act`` on a batch of 64 rows."""
    dt = torch_dtype(dtype)
    layers = [nn.Linear(d_in, d_out, dtype=dt)]
    if act is not None:
        layers.append(ACTIVATIONS[act]())
    module = nn.Sequential(*layers).to(device)
    x = torch.ones(_LATENCY_BATCH, d_in, dtype=dt, device=device)
    return _median_time(module, x, repeats)


def measure_cell_term_latency(term, *, repeats=20, dtype="float64", device="cpu"):
    """Median time (s) of one term of the cell network on a batch of 64 images."""
    dt = torch_dtype(dtype)
    kind = term[0]
    if kind == "stem":
        _, cin, c, h, w = term
        module = nn.Conv2d(cin, c, 3, padding=1, dtype=dt)
        x = torch.ones(_LATENCY_BATCH, cin, h, w, dtype=dt)
    elif kind == "head":
        _, c, k = term
        module = nn.Linear(c, k, dtype=dt)
        x = torch.ones(_LATENCY_BATCH, c, dtype=dt)
    else:
        _, op, c, h, w = term
        if op == "none":
            return 0.0
        module = _cell_op(op, c, dt)
        x = torch.ones(_LATENCY_BATCH, c, h, w, dtype=dt)
    return _median_time(module.to(device), x.to(device), repeats)
