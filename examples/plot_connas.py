"""
=========================================================
Hardware-constrained architecture search with ConNAS
=========================================================

:class:`~sklearn_iclr26.nas.ConNASSearch` searches a network architecture
under a hardware budget (here: at most a given number of parameters) by
gradient descent on architecture logits, and enforces the budget by modifying
the logit gradient whenever the current architecture is too expensive, with no
penalty weight to tune.

We search a small MLP space on the handwritten digits, train every
architecture of the space to see the true accuracy/cost frontier, and look at
where the search lands and how its trajectory crosses the budget.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# Data and search space
# ---------------------
# Two searchable layers, each of width 0 (skipped), 8, 16, 32 or 64 with ReLU:
# 25 architectures, from a linear model (650 parameters) to 64-64 (9,034).
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.nas import (
    ArchitectureFrontierDisplay,
    ConNASSearch,
    MLPSearchSpace,
    PenaltyNASSearch,
    RandomNASSearch,
)

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, train_size=500, test_size=400, stratify=y, random_state=0
)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

space = MLPSearchSpace(n_layers=2, widths=(0, 8, 16, 32, 64), activations=("relu",))
budget = 1500  # parameters

# SKLEARN_ICLR26_QUICK=1 (documentation builds, CI) shortens every training
QUICK = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
search_epochs = 5 if QUICK else 30
train_epochs = 10 if QUICK else 60

# %%
# Search under the budget
# -----------------------
search = ConNASSearch(
    space,
    constraint="params",
    budget=budget,
    rescale_factor=3.0,
    max_iter=search_epochs,
    final_estimator_params={"max_iter": train_epochs},
    random_state=0,
).fit(X_train, y_train)
print("chosen:", search.best_architecture_)
print(f"cost {search.best_cost_:.0f} <= {budget}: {search.budget_satisfied_}")
print(f"test accuracy {search.score(X_test, y_test):.3f}")

# %%
# The penalty approach needs its weight tuned: too small and the answer is
# over budget, too large and it is over-penalised.
for lam in (0.001, 0.1, 10.0):
    pen = PenaltyNASSearch(
        space,
        penalty=lam,
        budget=budget,
        max_iter=search_epochs,
        final_estimator_params={"max_iter": train_epochs},
        random_state=0,
    ).fit(X_train, y_train)
    print(
        f"penalty lambda={lam:>6}: cost {pen.best_cost_:6.0f} "
        f"(feasible: {pen.budget_satisfied_}), "
        f"test accuracy {pen.score(X_test, y_test):.3f}"
    )

# %%
# Constrained random search draws architectures, rejects those over budget,
# trains the survivors briefly and keeps the best on validation data.
rand = RandomNASSearch(
    space,
    n_candidates=5,
    max_iter=train_epochs // 2,
    budget=budget,
    final_estimator_params={"max_iter": train_epochs},
    random_state=0,
).fit(X_train, y_train)
print(
    f"random search: cost {rand.best_cost_:.0f} (feasible: {rand.budget_satisfied_}), "
    f"test accuracy {rand.score(X_test, y_test):.3f}"
)

# %%
# Ground truth: train every architecture
# --------------------------------------
# Each architecture is trained like the search's refit network (a clone of
# ``best_estimator_`` with another ``architecture``); ``cost_of`` gives its
# cost under the search's cost model.
costs, accs = [], []
for arch in space.iter_architectures(X.shape[1], 10):
    net = clone(search.best_estimator_).set_params(architecture=arch, random_state=0)
    accs.append(net.fit(X_train, y_train).score(X_test, y_test))
    costs.append(search.cost_of(arch))
costs, accs = np.array(costs), np.array(accs)
print(f"best feasible test accuracy {accs[costs <= budget].max():.3f}")

# %%
# The frontier and the search trajectory
# --------------------------------------
# Left: every architecture (gray when over budget), the Pareto frontier, the
# budget and the chosen architecture. Right: the cost of the architecture
# derived from the logits at every step; red marks the steps where the
# constraint rule modified the gradient.
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4))
ArchitectureFrontierDisplay.from_results(
    costs,
    accs,
    budget=budget,
    chosen_cost=search.best_cost_,
    chosen_score=search.score(X_test, y_test),
    cost_label="parameters",
    score_label="test accuracy",
    name="ConNAS",
    ax=ax0,
)
steps = [h["step"] for h in search.search_history_]
cost_path = [h["cost"] for h in search.search_history_]
modified = [h["modified"] for h in search.search_history_]
ax1.plot(steps, cost_path, color="tab:blue", lw=1, label="derived architecture")
ax1.scatter(
    np.array(steps)[modified],
    np.array(cost_path)[modified],
    color="tab:red",
    s=10,
    label="gradient modified",
    zorder=3,
)
ax1.axhline(budget, color="tab:red", ls="--", label="budget")
ax1.set_xlabel("search step")
ax1.set_ylabel("parameters")
ax1.legend()
fig.tight_layout()
plt.show()
