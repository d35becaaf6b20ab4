"""
======================================================
Selective classification with a certified error rate
======================================================

A spam filter that answers on its own only where it is confident, and leaves
the rest to a person: :class:`~sklearn_iclr26.risk_control.SelectiveClassifier`
calibrates, on held-out rows, the confidence threshold above which the
model's answer stands, so that **the error among the automatic answers is at
most 3 % with probability at least 90 %** (Learn-then-Test, fixed-sequence
testing from the most confident threshold down).

On the keel ``spambase`` set (4,597 e-mails, 57 features) we compare the
certified threshold with the plug-in one (the most accepting threshold whose
calibration error is at most 3 %, no correction) over repeated calibration
draws, then draw the risk against the acceptance rate of one fit with
:class:`~sklearn_iclr26.metrics.RiskControlDisplay`.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# One fit
# -------
# The model is trained on 40 % of the rows and frozen; half of the rest
# calibrates, half tests.
import os
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import load_keel
from sklearn_iclr26.metrics import RiskControlDisplay
from sklearn_iclr26.risk_control import SelectiveClassifier

# SKLEARN_ICLR26_QUICK=1 (the test suite) repeats the calibration less often
N_DRAWS = 10 if os.environ.get("SKLEARN_ICLR26_QUICK") == "1" else 100
TARGET = 0.03

X, y = load_keel("spambase", return_X_y=True)
X_train, X_rest, y_train, y_rest = train_test_split(
    X, y, train_size=0.4, stratify=y, random_state=0
)
model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
model.fit(X_train, y_train)
print(f"model error on every row: {np.mean(model.predict(X_rest) != y_rest):.3f}")

X_cal, X_test, y_cal, y_test = train_test_split(
    X_rest, y_rest, train_size=0.5, stratify=y_rest, random_state=0
)
clf = SelectiveClassifier(FrozenEstimator(model), target_risk=TARGET)
clf.fit(X_cal, y_cal)
risk, acceptance = clf.selective_risk(X_test, y_test)
print(
    f"threshold {clf.threshold_:.3f}: test error among accepted {risk:.4f}, "
    f"{acceptance:.1%} of the test rows answered automatically"
)

# %%
# Certified against plug-in, over calibration draws
# -------------------------------------------------
# Each draw takes a new calibration half of the held-out rows (the other
# half tests). The plug-in threshold is read off the same calibration curve.
certified, plugin = [], []
rng = np.random.RandomState(0)
for _ in range(N_DRAWS):
    X_c, X_t, y_c, y_t = train_test_split(
        X_rest, y_rest, train_size=0.5, random_state=rng.randint(2**31 - 1)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fitted = SelectiveClassifier(FrozenEstimator(model), target_risk=TARGET)
        fitted.fit(X_c, y_c)
    certified.append(fitted.selective_risk(X_t, y_t))
    curve = fitted.risk_curve_
    ok = np.flatnonzero(np.nan_to_num(curve["risk"], nan=1.0) <= TARGET)
    fitted.threshold_ = curve["parameter"][ok[np.argmax(curve["cost"][ok])]]
    plugin.append(fitted.selective_risk(X_t, y_t))
certified, plugin = np.array(certified), np.array(plugin)
for name, values in [("certified (LTT)", certified), ("plug-in", plugin)]:
    print(
        f"{name:16s} test error > {TARGET}: {np.mean(values[:, 0] > TARGET):.0%} "
        f"of draws, mean acceptance {values[:, 1].mean():.3f}"
    )

# %%
# Risk against acceptance
# -----------------------
# The calibration curve (one point per threshold), the certified thresholds
# (circles, a prefix from the most confident end), the chosen one (star),
# the risk of every threshold on the test rows (dashed), and, on the right,
# the test errors of the draws for both rules.
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4))
RiskControlDisplay.from_estimator(clf, X_test, y_test, name="LTT", ax=ax0)
ax0.set_ylim(0, 0.1)
ax1.hist(
    [certified[:, 0], plugin[:, 0]],
    bins=15,
    label=["certified (LTT)", "plug-in"],
)
ax1.axvline(TARGET, color="grey", linestyle=":", label=f"target {TARGET}")
ax1.set_xlabel("test error among accepted rows")
ax1.set_ylabel("calibration draws")
ax1.legend()
fig.tight_layout()
plt.show()
