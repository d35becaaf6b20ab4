"""
=====================================================
Gradient flows with tree-sliced Wasserstein losses
=====================================================

:func:`~sklearn_iclr26.ot.tree_sliced_wasserstein` accepts torch tensors and is
differentiable, so it serves as a loss. Here a Gaussian cloud flows to a target
cloud (8 Gaussians) by gradient descent on FW-TSW (roots at the geometric
median), Db-TSW (roots at the mean) and, when POT is installed, POT's sliced
Wasserstein at the same number of directions, all with ``p=1`` (with
``p=2`` the tree losses are the reference code's Sobolev-type surrogate, whose
gradients are much smaller, so one step size would not fit all). The exact
W2 distance to the target (``scipy``'s assignment solver: equal sizes, uniform
weights) is tracked. The full comparison with five losses and several seeds is in
``benchmarks/ot_reproduction.py``; see the user guide for its table.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from sklearn_iclr26.ot import tree_sliced_wasserstein

QUICK = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
n, steps = (100, 20) if QUICK else (250, 100)
rng = np.random.RandomState(0)
angles = 2 * np.pi * rng.randint(8, size=n) / 8
target = 4 * np.c_[np.cos(angles), np.sin(angles)] + 0.3 * rng.normal(size=(n, 2))
source = rng.normal(size=(n, 2))


def w2(A, B):
    C = cdist(A, B, "sqeuclidean")
    rows, cols = linear_sum_assignment(C)
    return np.sqrt(C[rows, cols].mean())


losses = {
    "FW-TSW": lambda X, Y, s: tree_sliced_wasserstein(
        X, Y, n_trees=25, n_lines=4, random_state=s
    ),
    "Db-TSW": lambda X, Y, s: tree_sliced_wasserstein(
        X, Y, n_trees=25, n_lines=4, root="mean", random_state=s
    ),
}
try:
    import ot

    losses["SW (POT)"] = lambda X, Y, s: ot.sliced_wasserstein_distance(
        X, Y, n_projections=100, p=1, seed=s
    )
except ImportError:
    pass

# %%
# The flows: plain gradient descent on the points
# ------------------------------------------------
Y = torch.tensor(target)
curves, finals = {}, {}
for name, loss in losses.items():
    X = torch.tensor(source)
    curve = [w2(source, target)]
    for step in range(steps):
        X.requires_grad_(True)
        (grad,) = torch.autograd.grad(loss(X, Y, step), X)
        X = (X - 0.1 * n * grad).detach()
        if (step + 1) % 10 == 0:
            curve.append(w2(X.numpy(), target))
    curves[name], finals[name] = curve, X.numpy()
    print(f"{name:9s} W2: {curve[0]:.3f} -> {curve[-1]:.3f}")

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
for name, curve in curves.items():
    axes[0].plot(np.arange(len(curve)) * 10, curve, label=name)
axes[0].set_xlabel("step")
axes[0].set_ylabel("W2 to the target")
axes[0].legend()
axes[1].scatter(*target.T, s=4, c="lightgray", label="target")
axes[1].scatter(*finals["FW-TSW"].T, s=4, label="FW-TSW flow")
axes[1].set_title(f"after {steps} steps")
axes[1].legend()
fig.tight_layout()
plt.show()
