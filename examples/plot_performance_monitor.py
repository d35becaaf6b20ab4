"""
==================================================================
Monitoring a deployed model's accuracy from a few gold labels
==================================================================

A logistic regression is deployed on the KEEL ``magic`` set. In production
only 5 % of the rows get a gold label. After 3,000 rows the stream drifts
to the rows whose first feature is in its lowest quartile, where the model
is much less accurate. :class:`~sklearn_iclr26.inference.PerformanceMonitor`
estimates the model's accuracy over the rows seen so far from the few gold
labels and the proxies available on every row (the model's own top
probability, and the agreement of a stronger but costlier gradient-boosting
model, as a judge), with a confidence
sequence valid at every batch (``anytime=True``), and raises an alarm once
the whole sequence is below the threshold. The gold-only monitor
(``proxies=[]``) uses the same labels without the proxies. Set
``SKLEARN_ICLR26_QUICK=1`` for a faster run.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from sklearn_iclr26.datasets import load_keel
from sklearn_iclr26.inference import PerformanceMonitor, PerformanceMonitorDisplay

quick = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
n_rows, onset, batch = (6000, 2000, 500) if quick else (10000, 3000, 500)

X, y = load_keel("magic", return_X_y=True)
X, y = np.asarray(X, dtype=float), np.asarray(y)
X_train, X_rest, y_train, y_rest = train_test_split(
    X, y, train_size=0.2, random_state=0, stratify=y
)
model = FrozenEstimator(LogisticRegression(max_iter=1000).fit(X_train, y_train))
judge = HistGradientBoostingClassifier(max_iter=50, random_state=0)
judge.fit(X_train, y_train)
X_ref, y_ref = X_rest[:2000], y_rest[:2000]  # labelled reference rows
X_pool, y_pool = X_rest[2000:], y_rest[2000:]

# %%
# The stream: rows drawn from the pool, then from the hard rows
rng = np.random.RandomState(0)
hard = np.flatnonzero(X_pool[:, 0] < np.quantile(X_pool[:, 0], 0.25))
rows = rng.randint(0, len(y_pool), size=n_rows)
rows[onset:] = hard[rng.randint(0, len(hard), size=n_rows - onset)]
correct = model.predict(X_pool) == y_pool
print(f"accuracy: pool {correct.mean():.3f}, drifted rows {correct[hard].mean():.3f}")

threshold = 0.77
monitors = {
    "PPI++ (proxies)": PerformanceMonitor(
        model, proxies=["confidence", judge], anytime=True, threshold=threshold
    ),
    "gold labels only": PerformanceMonitor(
        model, proxies=[], anytime=True, threshold=threshold
    ),
}
for monitor in monitors.values():
    monitor.fit(X_ref, y_ref)

truth = []
for start in range(0, n_rows, batch):
    idx = rows[start : start + batch]
    y_batch = y_pool[idx].astype(float)
    y_batch[rng.rand(len(idx)) > 0.05] = np.nan  # 5 % gold labels
    for monitor in monitors.values():
        monitor.partial_fit(X_pool[idx], y_batch)
    truth.append(correct[rows[: start + batch]].mean())

for name, monitor in monitors.items():
    alarms = np.flatnonzero(monitor.history_["alarm"])
    first = monitor.history_["n_rows"][alarms[0]] if alarms.size else None
    width = np.diff(monitor.interval_)[0]
    print(f"{name}: final width {width:.3f}, first alarm at row {first}")

# %%
# Estimate, confidence sequence, threshold and alarms over time
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
for ax, (name, monitor) in zip(axes, monitors.items()):
    PerformanceMonitorDisplay.from_monitor(monitor, ax=ax, truth=truth)
    ax.axvline(onset, color="grey", linewidth=0.8)
    ax.set_title(name)
    ax.set_ylim(0.5, 1.0)
fig.tight_layout()
plt.show()
