"""
==========================================================
Learning to defer with a certified error, at the lowest fees
==========================================================

A logistic-regression model answers satellite-image queries (keel
``satimage``, 6 classes); four simulated specialist experts (each accurate on
70% of the classes, near random elsewhere, fees 0.02 to 0.1 per answer) can
take a query instead. :class:`~sklearn_iclr26.deferral.RiskControlledDeferrer`
fits a deferral policy on part of the training rows, then calibrates the
threshold on its allocator's scores on the others so that **the system's
error is at most 10% with probability at least 90%** (Learn-then-Test), at
the lowest expected fee among the certified thresholds.

We certify the learned Top-k allocator and the confidence-threshold baseline
the same way and plot with
:class:`~sklearn_iclr26.metrics.RiskControlDisplay` the calibration error
against the expected fee of every threshold, with the certified ones and the
chosen one.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# Data and simulated experts
# --------------------------
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

from sklearn_iclr26.datasets import load_keel, make_experts
from sklearn_iclr26.deferral import (
    ConfidenceThresholdDeferrer,
    RiskControlledDeferrer,
    TopKDeferrer,
)
from sklearn_iclr26.metrics import RiskControlDisplay

# SKLEARN_ICLR26_QUICK=1 (the test suite) uses 3,000 of the 6,435 rows
QUICK = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
X, y = load_keel("satimage", return_X_y=True)
X, y = np.asarray(X, dtype=np.float64), np.asarray(y)
if QUICK:
    rows = np.random.RandomState(0).permutation(len(y))[:3000]
    X, y = X[rows], y[rows]
experts, fees = make_experts(X, y, n_experts=4, coverage=0.7, random_state=0)
X_all = np.hstack([X, experts])
columns = list(range(X.shape[1], X_all.shape[1]))
X_train, X_test, y_train, y_test = train_test_split(
    X_all, y, test_size=0.3, random_state=0, stratify=y
)
print("expert accuracy:", np.round((experts == y[:, None]).mean(axis=0), 3))
print("expert fees:    ", np.round(fees, 3))

# %%
# Certify both deferral policies
# ------------------------------
# 30% of the training rows calibrate (``calibration_size``); 30% of those only
# order the fixed-sequence test (``ordering_size``).
systems = {
    "Top-k allocator (k=1)": TopKDeferrer(
        expert_columns=columns, costs=fees, random_state=0
    ),
    "confidence threshold": ConfidenceThresholdDeferrer(
        expert_columns=columns, costs=fees, random_state=0
    ),
}
fitted = {}
for name, deferrer in systems.items():
    est = RiskControlledDeferrer(
        deferrer, target_risk=0.1, confidence_level=0.9, random_state=0
    ).fit(X_train, y_train)
    fitted[name] = est
    y_pred = est.predict(X_test)
    # one column per entity, the experts last: the fee paid per query
    fee = est.predict_allocation(X_test)[:, -len(fees) :] @ fees
    rule = est.risk_curve_["rule"][est.chosen_index_]
    print(
        f"{name}: certified={est.certified_}, rule {rule}, "
        f"{est.risk_curve_['certified'].sum()} certified rules, expected fee "
        f"{est.expected_fee_:.4f}; test error {np.mean(y_pred != y_test):.4f}, "
        f"test fee {fee.mean():.4f}"
    )

# %%
# Error against fee, with the certified region
# --------------------------------------------
# :class:`~sklearn_iclr26.metrics.RiskControlDisplay` draws every threshold of
# the grid as a point (calibration error, expected fee), circles the certified
# ones and stars the deployed one; the dashed line is the same rules on the
# test rows, the crosses the fallback rules "always ask expert j".
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
for ax, (name, est) in zip(axes, fitted.items()):
    RiskControlDisplay.from_estimator(est, X_test, y_test, ax=ax)
    ax.set_title(name)
    ax.get_legend().set_visible(ax is axes[0])
fig.tight_layout()
plt.show()
