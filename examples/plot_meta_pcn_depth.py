"""
=========================================================
Deep predictive coding: accuracy and layer energies
=========================================================

:class:`~sklearn_iclr26.neural_network.MetaPCNClassifier` trains a network by
predictive coding: in every mini-batch the hidden activities first relax to
reduce the prediction errors between layers (inference), then each weight
matrix takes a *local* step from its own layer's error. The switches
``meta_pe`` and ``weight_norm`` turn vanilla PCN into Meta-PCN (vanilla PCN
needs a small inference step; Meta-PCN's linear inference takes step 1).

Here vanilla PCN, PCN with weight normalisation, full Meta-PCN and the same
network trained by backpropagation are compared on the digits data at two
depths, and the per-layer energies at the end of training are shown: in a
deep vanilla PCN the error stays at the output layer (the middle layers get
almost no energy, hence almost no learning signal). A last section fits
:class:`~sklearn_iclr26.neural_network.MetaPCNRegressor` on the diabetes data.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
import os

import matplotlib.pyplot as plt
import pandas as pd
from sklearn.datasets import load_diabetes, load_digits
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.neural_network import (
    MetaPCNClassifier,
    MetaPCNRegressor,
    TorchMLPClassifier,
    TorchMLPRegressor,
)

QUICK = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, train_size=600 if QUICK else 1000, stratify=y, random_state=0
)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

depths = (2, 4) if QUICK else (2, 6)
epochs = 4 if QUICK else 10
pcn_step = {"inference_learning_rate": 0.1, "inference_momentum": 0.3}
variants = {
    "vanilla PCN": {"meta_pe": False, "weight_norm": False, **pcn_step},
    "PCN + weight norm": {"meta_pe": False, "weight_norm": True, **pcn_step},
    "Meta-PCN": {"meta_pe": True, "weight_norm": True},
}
common = {"batch_size": 64, "learning_rate_init": 1e-3, "random_state": 0}

# %%
# Train every variant at every depth
# ----------------------------------
rows, energies = [], {}
for depth in depths:
    hidden = (32,) * depth
    for name, params in variants.items():
        clf = MetaPCNClassifier(hidden, max_iter=epochs, **common, **params)
        clf.fit(X_train, y_train)
        rows.append((depth, name, clf.score(X_test, y_test)))
        energies[depth, name] = clf.layer_energy_history_[-1]
    bp = TorchMLPClassifier(hidden, activation="gelu", max_iter=epochs, **common)
    rows.append((depth, "backprop", bp.fit(X_train, y_train).score(X_test, y_test)))

table = pd.DataFrame(rows, columns=["depth", "method", "accuracy"])
print(table.pivot(index="method", columns="depth", values="accuracy").round(3))

# %%
# Layer energies of the deepest networks
# --------------------------------------
# One energy per hidden layer, then the output layer (cross-entropy).
fig, ax = plt.subplots(figsize=(6, 3.5))
deepest = max(depths)
for name in variants:
    e = energies[deepest, name]
    ax.semilogy(range(1, len(e) + 1), e + 1e-12, marker="o", label=name)
ax.set_xlabel("layer (last = output)")
ax.set_ylabel("mean energy at the end of inference")
ax.set_title(f"{deepest} hidden layers, digits")
ax.legend()
fig.tight_layout()
plt.show()

# %%
# Regression: MetaPCNRegressor on the diabetes data
# -------------------------------------------------
# The regressor clamps the output layer to the standardised target; it is
# compared by test :math:`R^2` with the same network trained by backprop. The
# data set is small (331 training rows), so both nets are small and trained
# for few epochs (longer training overfits).
Xd, yd = load_diabetes(return_X_y=True)
Xd_train, Xd_test, yd_train, yd_test = train_test_split(Xd, yd, random_state=0)
reg_common = {"max_iter": 20, "learning_rate_init": 1e-2, "random_state": 0}
regressors = {
    "MetaPCNRegressor": MetaPCNRegressor((16, 16), **reg_common),
    "TorchMLPRegressor (backprop)": TorchMLPRegressor((16, 16), **reg_common),
}
for name, reg in regressors.items():
    pipe = make_pipeline(StandardScaler(), reg).fit(Xd_train, yd_train)
    print(f"{name:30s} test R^2 {pipe.score(Xd_test, yd_test):.3f}")
