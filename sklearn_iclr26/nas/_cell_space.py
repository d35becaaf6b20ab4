"""NAS-Bench-201 style cell search space for small images."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

from sklearn_iclr26.nas._base_space import SearchSpace
from sklearn_iclr26.utils._validation import store_params

__all__ = ["CellSearchSpace"]

NB201_OPS = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")


class CellSearchSpace(SearchSpace):
    """NAS-Bench-201 style cell space: one searchable cell on small images.

    The network is ``stem conv3x3 -> cell -> ReLU -> global average pool ->
    Linear``. The cell is a DAG of ``n_nodes`` nodes; node ``j`` sums an
    operation applied to every earlier node ``i < j``, one edge each
    (``n_nodes = 4`` gives NAS-Bench-201's 6 edges, named ``"1<-0"``, ...). The
    rows of ``X`` are flattened images of shape ``(in_channels, *image_shape)``,
    e.g. the 8x8 ``load_digits`` images.

    Parameters
    ----------
    ops : tuple of str, default=("none", "skip_connect", "nor_conv_1x1", \
"nor_conv_3x3", "avg_pool_3x3")
        Candidate operations, a subset of NAS-Bench-201's: ``none`` (zero),
        ``skip_connect`` (identity), ``nor_conv_1x1`` / ``nor_conv_3x3``
        (ReLU then convolution, no bias; NAS-Bench-201 also has a BatchNorm,
        left out so that predictions do not depend on the batch),
        ``avg_pool_3x3`` (stride 1, padding 1).
    n_nodes : int, default=4
        Nodes of the cell (input node included), 2 to 5.
    channels : int, default=8
        Channels inside the cell.
    image_shape : tuple of int, default=(8, 8)
        Height and width of the images.
    in_channels : int, default=1
        Input channels.

    Notes
    -----
    ``params``: stem ``9 * in_channels * C + C``, ``C^2`` per 1x1 and ``9 C^2``
    per 3x3 convolution, head ``C * n_outputs + n_outputs``; pooling, skip and
    none are free. ``flops``: multiply-accumulates per image of the
    convolutions and the head (``H W`` times the kernel weights), as
    NAS-Bench-201 counts them (no BatchNorm/ReLU).

    Examples
    --------
    >>> from sklearn_iclr26.nas import CellSearchSpace
    >>> CellSearchSpace().n_architectures(n_features=64, n_outputs=10)
    15625
    """

    def __init__(
        self, ops=NB201_OPS, n_nodes=4, channels=8, image_shape=(8, 8), in_channels=1
    ):
        store_params(self, locals())

    def _validate(self):
        ops = tuple(self.ops)
        if (
            not ops
            or any(op not in NB201_OPS for op in ops)
            or len(set(ops)) != len(ops)
        ):
            raise ValueError(
                f"ops must be distinct names among {NB201_OPS}, got {self.ops!r}."
            )
        for name, low, high in (
            ("n_nodes", 2, 5),
            ("channels", 1, None),
            ("in_channels", 1, None),
        ):
            value = getattr(self, name)
            if (
                not isinstance(value, Integral)
                or isinstance(value, bool)
                or value < low
                or (high is not None and value > high)
            ):
                raise ValueError(f"{name} must be an int >= {low}, got {value!r}.")
        shape = tuple(self.image_shape)
        if len(shape) != 2 or any(not isinstance(s, Integral) or s < 1 for s in shape):
            raise ValueError(
                f"image_shape must be (height, width), got {self.image_shape!r}."
            )
        return ops, shape

    def edge_pairs(self):
        """``[(j, i), ...]``: edges from node ``i`` to ``j``, NAS-Bench-201 order."""
        return [(j, i) for j in range(1, self.n_nodes) for i in range(j)]

    def edges(self, n_features=None, n_outputs=None):
        ops, _ = self._validate()
        return [(f"{j}<-{i}", ops) for j, i in self.edge_pairs()]

    def check_input(self, n_features):
        _, (h, w) = self._validate()
        expected = self.in_channels * h * w
        if n_features != expected:
            raise ValueError(
                f"CellSearchSpace expects flattened images of {self.in_channels} x "
                f"{h} x {w} = {expected} features, got {n_features}. Set image_shape "
                "and in_channels to match the data."
            )

    def cell_string(self, arch):
        """NAS-Bench-201 cell string, e.g. ``|nor_conv_3x3~0|+|...|``."""
        nodes = []
        for j in range(1, self.n_nodes):
            ops = [
                f"{arch[k]}~{i}"
                for k, (jj, i) in enumerate(self.edge_pairs())
                if jj == j
            ]
            nodes.append("|" + "|".join(ops) + "|")
        return "+".join(nodes)

    def cost_terms(self, arch, n_features, n_outputs):
        _, (h, w) = self._validate()
        c = int(self.channels)
        terms = [("stem", int(self.in_channels), c, h, w)]
        terms += [("op", op, c, h, w) for op in arch]
        terms.append(("head", c, int(n_outputs)))
        return terms

    def term_cost(self, term, constraint):
        if constraint not in ("params", "flops"):
            raise ValueError(f"Unknown analytic constraint {constraint!r}.")
        kind = term[0]
        if kind == "stem":
            _, cin, c, h, w = term
            weights = 9 * cin * c
            return float(weights + c if constraint == "params" else weights * h * w)
        if kind == "head":
            _, c, k = term
            return float(c * k + k if constraint == "params" else c * k)
        _, op, c, h, w = term
        weights = {"nor_conv_1x1": c * c, "nor_conv_3x3": 9 * c * c}.get(op, 0)
        return float(weights if constraint == "params" else weights * h * w)

    def measure_term_latency(self, term, *, repeats=20, dtype="float64", device="cpu"):
        from sklearn_iclr26.nas._supernet import measure_cell_term_latency

        return measure_cell_term_latency(
            term, repeats=repeats, dtype=dtype, device=device
        )

    def _module_params(self, n_outputs):
        _ops, shape = self._validate()
        return {
            "n_outputs": int(n_outputs),
            "n_nodes": int(self.n_nodes),
            "channels": int(self.channels),
            "image_shape": shape,
            "in_channels": int(self.in_channels),
        }

    def supernet(self, n_features, n_outputs):
        from sklearn_iclr26.nas._supernet import CellSupernet

        ops, _ = self._validate()
        return CellSupernet, {**self._module_params(n_outputs), "ops": ops}

    def network(self, arch, n_features, n_outputs):
        from sklearn_iclr26.nas._supernet import CellNetwork

        return CellNetwork, {**self._module_params(n_outputs), "arch": tuple(arch)}
