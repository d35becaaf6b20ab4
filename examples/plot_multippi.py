"""
=====================================================
Estimating a mean with several predictors (MultiPPI)
=====================================================

The gold label (here: the positive class of the KEEL ``magic`` set) is costly;
three models of different quality and cost predict it. With 250 fully labelled
burn-in rows, :class:`~sklearn_iclr26.inference.MultiPPIMeanEstimator`
estimates the covariance, its ``allocate`` method decides how many rows of
each subset of sources to buy for a budget, and the estimate combines all
rows with the optimal weights. We compare the mean
squared error with classical (gold-only) sampling and PPI++ with the best
single proxy over a few repetitions, and show the budget shares per subset.
Set ``SKLEARN_ICLR26_QUICK=1`` for a faster run.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.tree import DecisionTreeClassifier

from sklearn_iclr26.datasets import load_keel
from sklearn_iclr26.inference import MultiPPIMeanEstimator

quick = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
n_reps = 10 if quick else 40
budgets = [25.0, 100.0, 400.0]

X, y = load_keel("magic", return_X_y=True)
X = np.asarray(X, dtype=float)
y = (np.asarray(y) == np.unique(y)[0]).astype(float)
X_train, X_pool, y_train, y_pool = train_test_split(
    X, y, train_size=0.3, random_state=0, stratify=y
)
# %%
# Three proxies: predicted probabilities of fitted models (cost per row)
models = {
    "naive_bayes (0.01)": GaussianNB(),
    "tree (0.02)": DecisionTreeClassifier(max_depth=4, random_state=0),
    "logistic (0.1)": LogisticRegression(max_iter=500),
}
P = np.c_[
    [m.fit(X_train, y_train).predict_proba(X_pool)[:, 1] for m in models.values()]
].T
Z = np.c_[y_pool, P]
costs = [1.0, 0.01, 0.02, 0.1]  # gold, then the proxies; additive per row
truth = y_pool.mean()
print("correlation with the gold label:", np.round(np.corrcoef(Z.T)[0, 1:], 3))

rng = np.random.RandomState(0)
designs = {
    "classical": [(0,)],
    "PPI++ (logistic)": [(0, 3), (3,)],
    "MultiPPI": "all",
}


def draw(counts):
    blocks = []
    for subset, n in counts.items():
        rows = Z[rng.randint(0, len(Z), size=n)].copy()
        rows[:, [j for j in range(4) if j not in subset]] = np.nan
        blocks.append(rows)
    return np.vstack(blocks)


errors = {name: np.zeros(len(budgets)) for name in designs}
shares = {}
for _ in range(n_reps):
    burn = Z[rng.randint(0, len(Z), size=250)]
    for b, budget in enumerate(budgets):
        for name, subsets in designs.items():
            planner = MultiPPIMeanEstimator(subsets=subsets).fit(
                burn[:, 1:], burn[:, 0]
            )
            plan = planner.allocate(budget, costs=costs)
            if name == "MultiPPI":
                shares[budget] = plan.budget_shares
            rows = np.vstack([burn, draw(plan.counts)])
            est = MultiPPIMeanEstimator().fit(rows[:, 1:], rows[:, 0])
            errors[name][b] += (est.estimate_ - truth) ** 2 / n_reps

# %%
# MSE against the budget, and MultiPPI's budget shares (last repetition)
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
for name, mse in errors.items():
    ax0.plot(budgets, mse, marker="o", label=name)
ax0.set(xscale="log", yscale="log", xlabel="budget (gold-label units)", ylabel="MSE")
ax0.legend()
names = ["y", "nb", "tree", "logit"]
subsets = sorted({s for plan in shares.values() for s in plan}, key=len)
bottom = np.zeros(len(budgets))
for subset in subsets:
    values = np.array([shares[b].get(subset, 0.0) for b in budgets])
    ax1.bar(
        [str(int(b)) for b in budgets],
        values,
        bottom=bottom,
        label="+".join(names[j] for j in subset),
    )
    bottom += values
ax1.set(xlabel="budget", ylabel="share of the budget")
ax1.legend(fontsize=7)
fig.tight_layout()
plt.show()
