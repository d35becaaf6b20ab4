"""Tabular MLP search space: per layer a width (or skip) and an activation."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

from sklearn_iclr26.nas._base_space import SearchSpace
from sklearn_iclr26.utils._validation import store_params

__all__ = ["MLPSearchSpace"]

_ACTIVATIONS = ("relu", "gelu", "tanh")


class MLPSearchSpace(SearchSpace):
    """Search space of multi-layer perceptrons for tabular data.

    Each of ``n_layers`` layers has two edges: its width, chosen among
    ``widths`` where ``0`` means *skip* (the layer is absent, identity), and
    its activation, chosen among ``activations``. The discrete network is the
    MLP whose hidden layers are the non-skipped ones, in order.

    The supernet shares weights across widths by channel masking (as in
    FBNetV2): layer ``l`` holds one ``Linear(D, max(widths))``; the width
    choice ``w`` keeps its first ``w`` units; the mixed layer is
    ``sum_w p_w * mask_w * act(h) + p_skip * z``, with ``D = max(max(widths),
    n_features)`` and zero padding, so a one-hot choice is exactly the
    corresponding discrete network.

    Parameters
    ----------
    n_layers : int, default=3
        Maximum depth (number of searchable layers), 1 to 4.
    widths : tuple of int, default=(0, 16, 32, 64, 128)
        Candidate widths; ``0`` is the skip (identity) choice.
    activations : tuple of str, default=("relu", "gelu", "tanh")
        Candidate activations, among "relu", "gelu", "tanh".

    Notes
    -----
    Costs: ``params`` counts weights and biases of every ``Linear`` layer of
    the discrete network (output layer included); ``flops`` counts
    multiply-accumulates per sample of those layers (activations and biases
    excluded, as NAS-Bench-201 does); ``latency`` sums per-layer forward times
    measured on the current device (one term per ``(d_in, width,
    activation)``).

    Examples
    --------
    >>> from sklearn_iclr26.nas import MLPSearchSpace
    >>> space = MLPSearchSpace(n_layers=2, widths=(0, 8, 16))
    >>> space.n_architectures(n_features=4, n_outputs=3)
    81
    """

    def __init__(
        self, n_layers=3, widths=(0, 16, 32, 64, 128), activations=_ACTIVATIONS
    ):
        store_params(self, locals())

    def _validate(self):
        if (
            not isinstance(self.n_layers, Integral)
            or isinstance(self.n_layers, bool)
            or not 1 <= self.n_layers <= 4
        ):
            raise ValueError(
                f"n_layers must be an int in [1, 4], got {self.n_layers!r}."
            )
        widths = tuple(self.widths)
        if not widths or any(
            not isinstance(w, Integral) or isinstance(w, bool) or w < 0 for w in widths
        ):
            raise ValueError(f"widths must be non-negative ints, got {self.widths!r}.")
        if len(set(widths)) != len(widths):
            raise ValueError(f"widths must be distinct, got {self.widths!r}.")
        if max(widths) == 0 and len(widths) > 1:
            raise ValueError("widths needs at least one positive width.")
        acts = tuple(self.activations)
        if not acts or any(a not in _ACTIVATIONS for a in acts):
            raise ValueError(
                f"activations must be among {_ACTIVATIONS}, got {self.activations!r}."
            )
        return widths, acts

    def edges(self, n_features=None, n_outputs=None):
        widths, acts = self._validate()
        out = []
        for layer in range(self.n_layers):
            out.append((f"layer{layer}_width", widths))
            out.append((f"layer{layer}_activation", acts))
        return out

    def hidden_layers(self, arch):
        """``[(width, activation), ...]`` of the non-skipped layers."""
        return [
            (int(arch[2 * i]), arch[2 * i + 1])
            for i in range(self.n_layers)
            if arch[2 * i] != 0
        ]

    def cost_terms(self, arch, n_features, n_outputs):
        terms, d_in = [], int(n_features)
        for width, act in self.hidden_layers(arch):
            terms.append(("linear", d_in, width, act))
            d_in = width
        terms.append(("linear", d_in, int(n_outputs), None))
        return terms

    def term_cost(self, term, constraint):
        _, d_in, d_out, _ = term
        if constraint == "params":
            return float(d_in * d_out + d_out)
        if constraint == "flops":
            return float(d_in * d_out)
        raise ValueError(f"Unknown analytic constraint {constraint!r}.")

    def measure_term_latency(self, term, *, repeats=20, dtype="float64", device="cpu"):
        from sklearn_iclr26.nas._supernet import measure_linear_latency

        _, d_in, d_out, act = term
        return measure_linear_latency(
            d_in, d_out, act, repeats=repeats, dtype=dtype, device=device
        )

    def _hidden_dim(self, n_features):
        widths, _ = self._validate()
        return max(max(widths), int(n_features))

    def supernet(self, n_features, n_outputs):
        from sklearn_iclr26.nas._supernet import MLPSupernet

        widths, acts = self._validate()
        return MLPSupernet, {
            "n_features": int(n_features),
            "n_outputs": int(n_outputs),
            "n_layers": int(self.n_layers),
            "widths": widths,
            "activations": acts,
        }

    def network(self, arch, n_features, n_outputs):
        from sklearn_iclr26.nas._supernet import MLPNetwork

        return MLPNetwork, {
            "n_features": int(n_features),
            "n_outputs": int(n_outputs),
            "layers": tuple(self.hidden_layers(arch)),
        }
