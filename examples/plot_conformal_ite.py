"""
=====================================================================
Intervals for individual treatment effects (conformal, weighted)
=====================================================================

A CATE learner estimates the *average* effect at ``x``; its bootstrap
interval covers that average, not what happens to one unit, whose effect
``Y(1) - Y(0)`` also carries the outcome noise of both arms.
:class:`~sklearn_iclr26.causal.ConformalITERegressor` wraps the learner and
builds weighted split-conformal intervals of each potential outcome (the
calibration rows of an arm reweighted by a cross-fitted propensity, Lei and
Candès 2021) and, from them, intervals of the individual effect.

On a confounded simulation with known potential outcomes, the left panel
shows the individual effects, the CATE, its bootstrap interval and the
conformal ITE interval along ``x1``; the table gives the coverage of the
individual effects by each. Set ``SKLEARN_ICLR26_QUICK=1`` for a faster run.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LinearRegression

from sklearn_iclr26.causal import ConformalITERegressor, TLearnerRegressor

quick = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
n = 1000 if quick else 3000


def simulate(n, rng):
    X = rng.normal(size=(n, 3))
    e = 1.0 / (1.0 + np.exp(-0.8 * X[:, 0]))  # confounded by x0
    t = (rng.uniform(size=n) < e).astype(int)
    sd = 0.5 * (1.0 + np.abs(X[:, 1]))
    y0 = X[:, 0] + rng.normal(size=n) * sd
    y1 = X[:, 0] + 1.0 + X[:, 1] + rng.normal(size=n) * sd
    return X, t, np.where(t == 1, y1, y0), y0, y1


rng = np.random.RandomState(0)
X, t, y, _, _ = simulate(n, rng)
X_test, t_test, _, y0_test, y1_test = simulate(1000, rng)
effect = y1_test - y0_test

learner = TLearnerRegressor(LinearRegression(), n_bootstrap=50, random_state=0)
conformal = ConformalITERegressor(learner, confidence_level=0.9, random_state=0)
conformal.fit(X, y, treatment=t)
ite = conformal.predict_interval(X_test)
boot = learner.fit(X, y, treatment=t)
lo, hi = boot.effect_interval(X_test, confidence_level=0.9)
cf = conformal.predict_counterfactual_interval(X_test, treatment=t_test)


def covered(lower, upper, value):
    return float(np.mean((lower <= value) & (value <= upper)))


unobserved = np.where(
    t_test == 1,
    (cf[:, 0, 0] <= y0_test) & (y0_test <= cf[:, 0, 1]),
    (cf[:, 1, 0] <= y1_test) & (y1_test <= cf[:, 1, 1]),
)
rows = [
    ("bootstrap CATE interval", covered(lo, hi, effect), np.median(hi - lo)),
    (
        "conformal ITE interval",
        covered(*ite.T, effect),
        np.median(ite[:, 1] - ite[:, 0]),
    ),
    ("conformal counterfactual (unobserved arm)", float(unobserved.mean()), np.nan),
]

# %%
# Individual effects and the two intervals along x1
order = np.argsort(X_test[:, 1])
fig, ax = plt.subplots(figsize=(8, 4))
ax.scatter(X_test[order, 1], effect[order], s=4, color="grey", label="Y(1) - Y(0)")
ax.fill_between(
    X_test[order, 1], *ite[order].T, alpha=0.25, label="conformal ITE interval (0.9)"
)
ax.fill_between(
    X_test[order, 1], lo[order], hi[order], alpha=0.6, label="bootstrap CATE (0.9)"
)
ax.set_xlabel("x1")
ax.set_ylabel("effect")
ax.legend(loc="upper left")
fig.tight_layout()

# %%
# Coverage of the individual effects (level 0.9)
print(f"{'interval':45} {'coverage':>8} {'median width':>12}")
for name, coverage, width in rows:
    print(f"{name:45} {coverage:8.3f} {width:12.2f}")
