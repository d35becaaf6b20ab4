"""
==========================================================
Learning to defer to the top-k experts, with adaptive k(x)
==========================================================

A weak base model (a depth-3 decision tree) and five simulated specialist
experts (each accurate on 30% of the digit classes, near random elsewhere, with
fees from 0.02 to 0.1) answer queries from the digits data. A
:class:`~sklearn_iclr26.deferral.TopKDeferrer` learns, **in one fit**, which
entities to consult: the ``k`` entities with the highest allocator scores are
asked and their answers are combined by majority vote. With ``adaptive=True``
a cardinality model also chooses ``k(x)`` per query, trading error against
fees through ``budget_weight``.

We plot accuracy against the mean fee paid per query for fixed Top-k
(k = 1..6), Top-k(x) over a sweep of ``budget_weight``, and random choices of
k entities.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# Data and simulated experts
# --------------------------
# The expert answers are named columns of the DataFrame (labels of ``y``; NaN
# would mean "unavailable"), given to the estimator by ``expert_columns``.
# The predictor and the allocator never see them.
import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.tree import DecisionTreeClassifier

from sklearn_iclr26.datasets import make_experts
from sklearn_iclr26.deferral import DeferralCurveDisplay, TopKDeferrer
from sklearn_iclr26.metrics import get_scorer

# SKLEARN_ICLR26_QUICK=1 (the test suite) draws fewer random allocations
N_RANDOM_DRAWS = 5 if os.environ.get("SKLEARN_ICLR26_QUICK") == "1" else 20
X, y = load_digits(return_X_y=True, as_frame=True)
experts, fees = make_experts(X, y, n_experts=5, coverage=0.3, random_state=0)
expert_names = [f"expert_{j}" for j in range(5)]
X_all = X.join(pd.DataFrame(experts, columns=expert_names, index=X.index))
X_train, X_test, y_train, y_test = train_test_split(
    X_all, y, test_size=0.5, random_state=0, stratify=y
)
print("expert accuracy:", np.round((experts == y.to_numpy()[:, None]).mean(axis=0), 2))
print("expert fees:    ", np.round(fees, 3))

# %%
# One fit, every k
# ----------------
clf = TopKDeferrer(
    predictor=DecisionTreeClassifier(max_depth=3, random_state=0),
    expert_columns=expert_names,
    costs=fees,
    adaptive=True,
    random_state=0,
)
clf.fit(X_train, y_train)
budget_weights = [0.0, 0.25, 0.5, 1.0, 2.0, 4.0]
curve = clf.deferral_curve(X_test, y_test, budget_weights=budget_weights)
for k, acc, budget in zip(curve.k, curve.score, curve.budget):
    print(f"Top-k   k={k}: accuracy {acc:.3f}, mean budget {budget:.3f}")
for lam, acc, budget, k_bar in zip(
    curve.budget_weight, curve.adaptive_score, curve.adaptive_budget, curve.adaptive_k
):
    print(
        f"Top-k(x) lambda={lam:g}: accuracy {acc:.3f}, mean budget {budget:.3f}, "
        f"mean k(x) {k_bar:.2f}"
    )

# %%
# The confidence-threshold baseline
# ---------------------------------
# :class:`~sklearn_iclr26.deferral.ConfidenceThresholdDeferrer` is the rule a
# learned allocator has to beat: the model answers when its top probability
# reaches a threshold (chosen on cross-fitted probabilities to minimise the
# deferral cost), otherwise the expert most accurate on that predicted class
# answers. Its accuracy and mean fee against Top-k at k = 1:
from sklearn_iclr26.deferral import ConfidenceThresholdDeferrer

baseline = ConfidenceThresholdDeferrer(
    DecisionTreeClassifier(max_depth=3, random_state=0),
    expert_columns=expert_names,
    costs=fees,
    random_state=0,
).fit(X_train, y_train)
fee_paid = (baseline.predict_allocation(X_test)[:, 1:] * fees).sum(axis=1).mean()
accuracy = np.mean(baseline.predict(X_test) == y_test)
print(
    f"confidence threshold {baseline.threshold_:.2f}: accuracy {accuracy:.3f}, "
    f"mean fee {fee_paid:.3f}"
)
print(f"Top-k   k=1: accuracy {curve.score[0]:.3f}, mean budget {curve.budget[0]:.3f}")

# %%
# Tuning k for cost, not accuracy
# -------------------------------
# Accuracy ignores the fees, so a search over ``k`` scored by accuracy keeps
# adding experts. ``neg_deferral_cost`` (minus the 0-1 error plus the fees
# paid; greater is better) and the estimator's own ``score`` (accuracy minus
# fees) pick the k that is worth its fees.
search = GridSearchCV(
    TopKDeferrer(
        predictor=DecisionTreeClassifier(max_depth=3, random_state=0),
        expert_columns=expert_names,
        costs=fees,
    ),
    {"k": [1, 2, 3, 4, 5, 6]},
    scoring={"cost": get_scorer("neg_deferral_cost"), "accuracy": "accuracy"},
    refit="cost",
    cv=3,
).fit(X_train, y_train)
print("k chosen by deferral cost:", search.best_params_["k"])
best_by_accuracy = np.argmax(search.cv_results_["mean_test_accuracy"])
print("k chosen by accuracy:     ", search.cv_results_["param_k"][best_by_accuracy])

# %%
# Random-k baseline
# -----------------
# Consult k entities drawn at random (20 repeats) and take a majority vote
# (ties to the smallest class index).
rng = np.random.RandomState(0)
answers = np.column_stack(
    [clf.predictor_.predict(X_test.drop(columns=expert_names)), X_test[expert_names]]
).astype(int)
random_acc, random_budget = [], []
for k in curve.k:
    accs, budgets = [], []
    for _ in range(N_RANDOM_DRAWS):
        picked = np.argsort(rng.uniform(size=answers.shape), axis=1)[:, :k]
        votes = np.zeros((len(answers), 10))
        for column in picked.T:
            votes[
                np.arange(len(answers)), answers[np.arange(len(answers)), column]
            ] += 1
        accs.append(np.mean(votes.argmax(axis=1) == y_test.to_numpy()))
        budgets.append(np.mean(clf.costs_[picked].sum(axis=1)))
    random_acc.append(np.mean(accs))
    random_budget.append(np.mean(budgets))

# %%
# Accuracy against budget
# -----------------------
disp = DeferralCurveDisplay.from_curve(curve, name="digits")
disp.ax_.plot(random_budget, random_acc, marker="x", linestyle=":", label="random-k")
disp.ax_.axhline(curve.score[0], color="grey", linewidth=0.8, label="Top-1 L2D")
disp.ax_.legend(loc="lower right")
disp.ax_.set_title("TopKDeferrer on digits with 5 simulated experts")
plt.show()

# %%
# Regression: deferring to the top-k of simulated specialists
# -----------------------------------------------------------
# :class:`~sklearn_iclr26.deferral.TopKDeferralRegressor` does the same for a
# continuous target: each specialist is accurate on a region of the input
# space, answers are aggregated by their mean, and the curve reports RMSE
# against the mean fee paid per query.
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Ridge

from sklearn_iclr26.deferral import TopKDeferralRegressor

X_reg, y_reg = load_diabetes(return_X_y=True)
experts_reg, fees_reg = make_experts(
    X_reg, y_reg, n_experts=4, task="regression", random_state=0
)
X_reg_all = np.hstack([X_reg, experts_reg])  # arrays: experts by position
X_reg_train, X_reg_test, y_reg_train, y_reg_test = train_test_split(
    X_reg_all, y_reg, test_size=0.5, random_state=0
)
reg = TopKDeferralRegressor(
    predictor=Ridge(), expert_columns=[10, 11, 12, 13], costs=fees_reg
)
reg.fit(X_reg_train, y_reg_train)
reg_curve = reg.deferral_curve(X_reg_test, y_reg_test)
for k, rmse, budget in zip(reg_curve.k, reg_curve.score, reg_curve.budget):
    print(f"regression Top-k k={k}: RMSE {rmse:.1f}, mean budget {budget:.2f}")
