"""The architecture cost model of the searches: costs, look-up table, cheapest."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

from sklearn_iclr26.utils._persistence import dict_from_pairs, pairs_from_dict

__all__ = ["ArchitectureCosts"]


class ArchitectureCosts:
    """Hardware cost of the discrete architectures of a search space.

    A cost is the sum of the costs of the architecture's terms (analytic
    parameter or FLOP counts, or latencies measured once per term on
    ``device`` and kept in ``table``), or the value of a callable constraint on
    the architecture dict. Costs are cached per architecture.

    Parameters
    ----------
    space : SearchSpace
        The search space.
    constraint : {"params", "flops", "latency"} or callable
        The cost.
    n_features, n_outputs : int
        Input and output sizes of the networks.
    latency_repeats : int, default=20
        Timed runs per term for ``"latency"``.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the timed modules.
    device : str, default="cpu"
        Device of the timed modules.

    Attributes
    ----------
    table : dict
        Per cost term (or, for a callable, per architecture) its cost.
    edge_names : list of str
        Names of the edges.
    ops : list of tuple
        Candidate operations of each edge.
    """

    def __init__(
        self,
        space,
        constraint,
        n_features,
        n_outputs,
        *,
        latency_repeats=20,
        dtype="float64",
        device="cpu",
    ):
        self.space = space
        self.constraint = constraint
        self.n_features = int(n_features)
        self.n_outputs = int(n_outputs)
        self.latency_repeats = latency_repeats
        self.dtype = dtype
        self.device = device
        edges = space.edges(self.n_features, self.n_outputs)
        self.edge_names = [name for name, _ in edges]
        self.ops = [tuple(ops) for _, ops in edges]
        self.table = {}
        self._cache = {}

    def __getstate__(self):
        # skops holds no tuple keys: the tables as (architecture, cost) pairs
        return pairs_from_dict(self.__dict__, ("table", "_cache"))

    def __setstate__(self, state):
        self.__dict__.update(dict_from_pairs(state, ("table", "_cache")))

    @property
    def name(self):
        """Name of the cost (the constraint, or the callable's name)."""
        c = self.constraint
        return c if isinstance(c, str) else getattr(c, "__name__", "callable")

    # ------------------------------------------------------------ conversions
    def to_ops(self, arch_index):
        """Architecture (tuple of operations) from one operation index per edge."""
        return tuple(ops[int(k)] for ops, k in zip(self.ops, arch_index))

    def to_dict(self, arch):
        """Architecture as ``{edge name: operation}``."""
        return dict(zip(self.edge_names, arch))

    def as_ops(self, architecture):
        """Tuple of operations from a dict ``{edge name: operation}`` or a sequence."""
        if isinstance(architecture, dict):
            missing = set(self.edge_names) - set(architecture)
            if missing:
                raise ValueError(
                    f"The architecture {architecture} misses the edges "
                    f"{sorted(missing)}; expected one operation for each of "
                    f"{self.edge_names}."
                )
            architecture = [architecture[name] for name in self.edge_names]
        arch = tuple(architecture)
        if len(arch) != len(self.ops):
            raise ValueError(
                f"An architecture has {len(self.ops)} operations (one per edge "
                f"{self.edge_names}), got {len(arch)}: {arch}."
            )
        for name, ops, op in zip(self.edge_names, self.ops, arch):
            if op not in ops:
                raise ValueError(
                    f"{op!r} is not an operation of edge {name!r}; choose among {ops}."
                )
        return arch

    # ------------------------------------------------------------------ costs
    def _term_cost(self, term):
        if term not in self.table:
            if self.constraint == "latency":
                self.table[term] = float(
                    self.space.measure_term_latency(
                        term,
                        repeats=self.latency_repeats,
                        dtype=self.dtype,
                        device=self.device,
                    )
                )
            else:
                self.table[term] = float(self.space.term_cost(term, self.constraint))
        return self.table[term]

    def cost_of(self, architecture):
        """Cost of a discrete architecture (dict or sequence of operations).

        Parameters
        ----------
        architecture : dict or sequence
            ``{edge name: operation}`` or one operation per edge, in order.

        Returns
        -------
        cost : float
        """
        arch = tuple(architecture) if not isinstance(architecture, dict) else None
        if arch is not None and arch in self._cache:
            return self._cache[arch]
        arch = self.as_ops(architecture)
        cached = self._cache.get(arch)
        if cached is not None:
            return cached
        if callable(self.constraint):
            arch_dict = self.to_dict(arch)
            try:
                cost = float(self.constraint(arch_dict))
            except Exception as exc:
                raise ValueError(
                    f"The cost callable {self.constraint!r} failed on the "
                    f"architecture {arch_dict}: {type(exc).__name__}: {exc}"
                ) from exc
            if not math.isfinite(cost):
                raise ValueError(
                    f"The cost callable returned {cost} for the architecture "
                    f"{arch_dict}; costs must be finite numbers."
                )
            self.table[arch] = cost
        else:
            terms = self.space.cost_terms(arch, self.n_features, self.n_outputs)
            cost = float(sum(self._term_cost(t) for t in terms))
        self._cache[arch] = cost
        return cost

    def local_costs(self, arch_index):
        """``c[e][k]``: cost of the architecture with edge ``e`` set to op ``k``."""
        out = []
        for e, ops in enumerate(self.ops):
            row = np.empty(len(ops))
            for k in range(len(ops)):
                idx = list(arch_index)
                idx[e] = k
                row[k] = self.cost_of(self.to_ops(idx))
            out.append(row)
        return out

    def cheapest(self):
        """Cheapest architecture and its cost, by coordinate descent over edges.

        Exact for costs that are additive or monotone per edge (parameters,
        FLOPs, latency look-up tables); a heuristic for a callable cost.
        """
        idx = [0] * len(self.ops)
        for _ in range(len(self.ops) + 1):
            changed = False
            for e, costs in enumerate(self.local_costs(idx)):
                best = int(np.argmin(costs))
                if costs[best] < costs[idx[e]]:
                    idx[e] = best
                    changed = True
            if not changed:
                break
        arch = self.to_ops(idx)
        return arch, self.cost_of(arch)
