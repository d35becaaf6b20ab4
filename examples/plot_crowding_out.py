"""
=================================================================
Correlation crowding-out: attention on the cause over iterations
=================================================================

:class:`~sklearn_iclr26.causal.TwoKeyAttentionRegressor` runs Algorithm 1 of
"Strong Correlations Induce Cause Only Predictions in Transformer Training"
(ICLR 2026) on the causal chain ``x -> y -> z`` of
:func:`~sklearn_iclr26.datasets.make_causal_chain`: a gate ``p`` chooses
between the cause token ``x`` and the descendant token ``z``.

The paper's theorem needs its Conditions 1-2 (the dominant cause coordinate
wins in the population and on every sample) and a staged schedule (the value
weights first, then the gate, then the weights). ``law="bounded"`` with
``C = 0.2`` and ``descendant_noise = 0.5`` meets both conditions (the private
``causal_chain_conditions`` checks them); there the staged schedule moves the
gate to the cause and the model keeps the noise-level error when the
``y -> z`` mechanism flips, where least squares on ``[x, z]`` and the
simultaneous ("standard training") schedule lean on ``z``. The method note's
Gaussian law breaks Condition 2, and the last row shows one of its regimes.
The plot is the "crowding-out curve" per run, and the table the i.i.d. and
flipped test MSE in units of the noise variance ``sigma^2``, next to OLS. A
last section fits the tabular attention models on two scikit-learn data sets.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
import os
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LinearRegression

from sklearn_iclr26.causal import TwoKeyAttentionRegressor
from sklearn_iclr26.datasets import make_causal_chain

QUICK = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
max_iter = 800 if QUICK else 4000
n_train = 5000 if QUICK else 20000
d = 5
groups = (list(range(d)), list(range(d, 2 * d)))
bounded = {"law": "bounded", "descendant_noise": 0.5, "descendant_strength": 0.2}
gaussian = {"law": "gaussian", "descendant_noise": 3.0, "descendant_strength": 0.3}
runs = [
    ("bounded, staged", bounded, "staged", 1 / 3),
    ("bounded, simultaneous", bounded, "simultaneous", 1 / 3),
    ("gaussian nz=3 C=0.3, simult.", gaussian, "simultaneous", 1.0),
]

fig, ax = plt.subplots(figsize=(7, 4))
print(f"{'run':30s}{'p(cause)':>10s}{'MSE iid':>10s}{'MSE flip':>10s}{'OLS flip':>10s}")
for name, kw, schedule, sigma2 in runs:
    X, y = make_causal_chain(n_train, d, random_state=0, **kw)
    Xi, yi = make_causal_chain(2000, d, random_state=1, **kw)
    Xf, yf = make_causal_chain(2000, d, shift="flip", random_state=2, **kw)
    model = TwoKeyAttentionRegressor(
        groups, schedule=schedule, max_iter=max_iter, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # gate saturation
        model.fit(X, y)
    ols = LinearRegression().fit(X, y)
    ax.plot(model.attention_history_[:, 0], label=name)
    print(
        f"{name:30s}"
        f"{model.attention(Xi)[:, 0].mean():10.3f}"
        f"{np.mean((model.predict(Xi) - yi) ** 2) / sigma2:10.2f}"
        f"{np.mean((model.predict(Xf) - yf) ** 2) / sigma2:10.2f}"
        f"{np.mean((ols.predict(Xf) - yf) ** 2) / sigma2:10.2f}"
    )
ax.set_xlabel("gradient step")
ax.set_ylabel("mean attention on the cause")
ax.set_ylim(0, 1)
ax.legend()
fig.tight_layout()
plt.show()

# %%
# One attention gate over feature groups on real data
# ---------------------------------------------------
# :class:`~sklearn_iclr26.causal.TabularAttentionClassifier` and
# :class:`~sklearn_iclr26.causal.TabularAttentionRegressor` put a learned
# query over named feature groups (tokens). The classifier reads the three
# groups of the breast cancer data (means, standard errors, worst values), the
# regressor those of the diabetes data (demographics, body, blood serum). The
# table is the mean test attention per group and the test score (accuracy,
# R^2).
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.causal import TabularAttentionClassifier, TabularAttentionRegressor

n_epochs = 30 if QUICK else 100
cancer = load_breast_cancer(as_frame=True)
names = list(cancer.feature_names)
cancer_groups = {
    "mean": [c for c in names if c.startswith("mean ")],
    "error": [c for c in names if c.endswith(" error")],
    "worst": [c for c in names if c.startswith("worst ")],
}
diabetes_groups = {
    "demographics": ["age", "sex"],
    "body": ["bmi", "bp"],
    "serum": ["s1", "s2", "s3", "s4", "s5", "s6"],
}
cases = [
    (cancer, cancer_groups, TabularAttentionClassifier, accuracy_score),
    (
        load_diabetes(as_frame=True),
        diabetes_groups,
        TabularAttentionRegressor,
        r2_score,
    ),
]
for data, feature_groups, Estimator, metric in cases:
    X_tr, X_te, y_tr, y_te = train_test_split(
        data.data, data.target, test_size=0.3, random_state=0
    )
    scaler = StandardScaler().set_output(transform="pandas").fit(X_tr)
    X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)
    est = Estimator(feature_groups, max_iter=n_epochs, random_state=0)
    est.fit(X_tr, y_tr)
    weights = est.attention_weights(X_te).mean(axis=0)
    score = metric(y_te, est.predict(X_te))
    print(f"\n{Estimator.__name__}: test {metric.__name__} {score:.3f}")
    for group, w in zip(est.group_names_, weights):
        print(f"  attention on {group:14s}{w:.3f}")
