"""Base class of the search spaces of :class:`~sklearn_iclr26.nas.ConNASSearch`."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
import math

__all__ = ["SearchSpace"]


class SearchSpace:
    """A cell-free description of a differentiable architecture search space.

    An architecture picks one operation on each *edge*. A search space says
    which edges and operations exist, what each part of a discrete
    architecture costs, and which torch modules implement the relaxed
    supernet and the discrete network. Subclass it to define your own space:
    implement :meth:`edges`, :meth:`cost_terms`, :meth:`term_cost`,
    :meth:`supernet` and :meth:`network` (and :meth:`measure_term_latency` for
    ``constraint="latency"``).

    The cost of an architecture is the sum of the costs of its *terms*
    (hashable keys such as ``("linear", 64, 32, "relu")``): parameter and FLOP
    counts are analytic per term, latency is measured per term on the current
    device and cached in a lookup table (FBNet style). A callable constraint
    bypasses terms and is called on the architecture.
    """

    def edges(self, n_features, n_outputs):
        """List of ``(edge name, tuple of operations)``."""
        raise NotImplementedError

    def cost_terms(self, arch, n_features, n_outputs):
        """Hashable cost terms of a discrete architecture (tuple of operations)."""
        raise NotImplementedError

    def term_cost(self, term, constraint):
        """Analytic cost of one term for ``constraint`` in {"params", "flops"}."""
        raise NotImplementedError

    def measure_term_latency(self, term, *, repeats=20, dtype="float64", device="cpu"):
        """Median forward time in seconds of the module of one term."""
        raise NotImplementedError(
            f"{type(self).__name__} does not implement latency measurement."
        )

    def supernet(self, n_features, n_outputs):
        """``(module class, params)`` of the relaxed supernet.

        The module is built as ``cls(**params, dtype=...)`` and called as
        ``module(X, weights)`` with one probability vector per edge.
        """
        raise NotImplementedError

    def network(self, arch, n_features, n_outputs):
        """``(module class, params)`` of the discrete network of ``arch``."""
        raise NotImplementedError

    def check_input(self, n_features):
        """Raise a ``ValueError`` when the data do not fit the space."""

    # ------------------------------------------------------------ helpers
    def n_architectures(self, n_features, n_outputs):
        """Number of discrete architectures."""
        return math.prod(len(ops) for _, ops in self.edges(n_features, n_outputs))

    def iter_architectures(self, n_features, n_outputs):
        """Iterate over every discrete architecture (tuples of operations)."""
        ops = [ops for _, ops in self.edges(n_features, n_outputs)]
        return itertools.product(*ops)

    def to_dict(self, arch, n_features, n_outputs):
        """Architecture as ``{edge name: operation}``."""
        names = [name for name, _ in self.edges(n_features, n_outputs)]
        return dict(zip(names, arch))

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({params})"

    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self):
        return hash((type(self).__name__, repr(self)))
