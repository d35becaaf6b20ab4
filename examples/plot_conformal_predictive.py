"""
================================================================
Conformal predictive distributions, Venn-Abers and a martingale
================================================================

Three tools a crepes or MAPIE user reaches for:

* :class:`~sklearn_iclr26.conformal.ConformalPredictiveRegressor` turns a
  point regressor into a predictive CDF per row (a conformal predictive
  system); with ``normalizer="knn"`` the CDFs widen where the residuals are
  large. Its smoothed CDF at the true ``y`` (the PIT) is uniform.
* :class:`~sklearn_iclr26.conformal.VennAbersClassifier` calibrates a
  classifier's probabilities, with a validity guarantee for its
  multiprobability pair.
* :class:`~sklearn_iclr26.conformal.ExchangeabilityMartingale` bets against
  exchangeability on a stream of online p-values and raises an alarm after a
  shift; without a shift the alarm rate is at most ``1 - confidence_level``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# A predictive distribution for every row
# ---------------------------------------
# (``SKLEARN_ICLR26_QUICK=1`` shrinks the data.)
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

from sklearn_iclr26.conformal import (
    ConformalPredictiveRegressor,
    ExchangeabilityMartingale,
    VennAbersClassifier,
    online_p_values,
)
from sklearn_iclr26.metrics import expected_calibration_error

quick = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
rng = np.random.RandomState(0)
n = 1500 if quick else 4000
X = rng.uniform(0, 5, size=(n, 1))
y = np.sin(2 * X[:, 0]) + (0.1 + 0.3 * X[:, 0]) * rng.normal(size=n)
X_fit, X_test, y_fit, y_test = train_test_split(X, y, test_size=0.3, random_state=0)

model = HistGradientBoostingRegressor(max_iter=50 if quick else 100)
plain = ConformalPredictiveRegressor(model, random_state=0).fit(X_fit, y_fit)
scaled = ConformalPredictiveRegressor(model, normalizer="knn", random_state=0)
scaled = scaled.fit(X_fit, y_fit)
for name, est in [("plain", plain), ("knn-normalized", scaled)]:
    bounds = est.predict_interval(X_test)
    inside = (bounds[:, 0] <= y_test) & (y_test <= bounds[:, 1])
    print(
        f"{name:15s} 90% coverage {inside.mean():.3f}, "
        f"mean width {np.mean(bounds[:, 1] - bounds[:, 0]):.2f}"
    )
pit = scaled.predict_cdf(X_test, y_test, smoothed=True, random_state=0)

# %%
# Venn-Abers against CalibratedClassifierCV
# -----------------------------------------
# Gaussian naive Bayes is overconfident; both calibrators repair it.
Xc, yc = load_breast_cancer(return_X_y=True)
Xc_fit, Xc_test, yc_fit, yc_test = train_test_split(
    Xc, yc, test_size=0.4, stratify=yc, random_state=0
)
calibrators = {
    "GaussianNB": GaussianNB(),
    "Venn-Abers": VennAbersClassifier(GaussianNB(), random_state=0),
    "Venn-Abers cv=5": VennAbersClassifier(GaussianNB(), cv=5, random_state=0),
    "isotonic cv=5": CalibratedClassifierCV(GaussianNB(), method="isotonic", cv=5),
}
for name, clf in calibrators.items():
    proba = np.clip(clf.fit(Xc_fit, yc_fit).predict_proba(Xc_test), 1e-15, 1)
    print(
        f"{name:16s} log-loss {log_loss(yc_test, proba):.3f}, "
        f"ECE {expected_calibration_error(yc_test, proba):.3f}"
    )

# %%
# A stream that shifts
# --------------------
# Conformity scores of a stream, first exchangeable with the calibration
# rows, then (after row 300) with three times the noise. Online p-values
# with the calibration scores as reference feed the martingale.
n_stream = 300
X_new = rng.uniform(0, 5, size=(2 * n_stream, 1))
noise = np.r_[np.ones(n_stream), 3 * np.ones(n_stream)]
y_new = np.sin(2 * X_new[:, 0]) + noise * (0.1 + 0.3 * X_new[:, 0]) * rng.normal(
    size=2 * n_stream
)
scores = np.abs(y_new - scaled.predict(X_new)) / scaled.predict_sigma(X_new)
p_values = online_p_values(
    scores, reference_scores=np.abs(scaled.calibration_scores_), random_state=0
)
monitor = ExchangeabilityMartingale(confidence_level=0.99).partial_fit(p_values)
print(f"alarm at stream row {monitor.rejection_index_} (shift at {n_stream})")

# %%
# Plot: CDFs, PIT, martingale
# ---------------------------
fig, axes = plt.subplots(1, 3, figsize=(12, 3.5))
grid = np.linspace(-3, 4, 200)
for x0, color in [(0.5, "C0"), (4.5, "C1")]:
    rows = np.array([[x0]])
    for est, style in [(plain, "--"), (scaled, "-")]:
        cdf = est.predict_cdf(rows, grid[None, :])[0]
        axes[0].plot(grid, cdf, style, color=color, label=f"x={x0}, {style}")
axes[0].set_title("predictive CDFs (dashed: plain)")
axes[0].set_xlabel("y")
axes[1].hist(pit, bins=10, range=(0, 1), density=True, color="C2")
axes[1].axhline(1, color="k", ls="--")
axes[1].set_title("smoothed PIT on test rows")
axes[2].plot(monitor.log_martingale_ / np.log(10))
axes[2].axhline(np.log10(monitor.threshold_), color="r", ls="--", label="alarm")
axes[2].axvline(n_stream, color="k", ls=":", label="shift")
axes[2].set_title("log10 martingale over the stream")
axes[2].legend()
fig.tight_layout()
plt.show()
