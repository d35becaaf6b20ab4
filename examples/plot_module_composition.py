"""
=======================================================
Reusing task modules: adaptive module composition (MoMa)
=======================================================

:class:`~sklearn_iclr26.ensemble.AdaptiveCompositionRegressor` composes a hub
of modules trained on related tasks for a new, small task: a training-free kNN
proxy scores every module on the new data, simplex-constrained least squares
weighs them, the selected modules are merged in weight space and fine-tuned.

Here the hub holds one torch MLP per water-quality target of the Mulan ``wq``
set (all from one shared initialisation); the new task is a held-out target
learned from 200 rows. We compare the composition with an all-module "soup"
and with training from scratch, and show the weights and the proxy errors.
A last section does the same for classification with
:class:`~sklearn_iclr26.ensemble.AdaptiveCompositionClassifier` on the digits.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.metrics import mean_absolute_error
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import load_multioutput
from sklearn_iclr26.ensemble import (
    AdaptiveCompositionClassifier,
    AdaptiveCompositionRegressor,
    ModuleHub,
)
from sklearn_iclr26.neural_network import TorchMLPClassifier, TorchMLPRegressor

QUICK = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"

data = load_multioutput("wq")  # ships with the package
X, Y = data.data, data.target
rng = np.random.RandomState(0)
perm = rng.permutation(len(X))
source, down, test = perm[:500], perm[500:700], perm[700:]
X = StandardScaler().fit(X[source]).transform(X)

# %%
# The hub: one module per source target, all trained from one initialisation
# (same seed), so they can be averaged in weight space.
target = 0
sources = [j for j in range(Y.shape[1]) if j != target][: 5 if QUICK else None]
hub = ModuleHub(TorchMLPRegressor((32,), max_iter=50 if QUICK else 150), random_state=0)
for j in sources:
    hub.add_task(data.target_names[j], X[source], Y[source, j])
print(hub, "shared initialisation:", hub.shares_initialisation())

# %%
# Compose for the held-out target from 200 rows, against the soup and scratch.
X_down, y_down, X_test, y_test = X[down], Y[down, target], X[test], Y[test, target]
amc = AdaptiveCompositionRegressor(hub, max_iter=30, random_state=0).fit(X_down, y_down)
soup = AdaptiveCompositionRegressor(
    hub, weights="uniform", max_iter=30, random_state=0
).fit(X_down, y_down)
scratch = TorchMLPRegressor((32,), max_iter=30, random_state=0).fit(X_down, y_down)
for name, model in [("AMC", amc), ("soup", soup), ("scratch", scratch)]:
    print(
        f"{name:8s} test MAE {mean_absolute_error(y_test, model.predict(X_test)):.3f}"
    )

# %%
# The weights are sparse: the simplex constraint alone selects a few modules.
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
names = list(amc.module_names_)
ax1.bar(names, amc.module_weights_)
ax1.set_title("AMC weights")
ax1.tick_params(axis="x", rotation=90)
ax2.bar(names, amc.proxy_errors_, color="tab:orange")
ax2.set_title("kNN proxy MAE per module")
ax2.tick_params(axis="x", rotation=90)
fig.tight_layout()
plt.show()

# %%
# Classification: a new digit pair from one-vs-rest modules
# ---------------------------------------------------------
# The hub holds one :class:`~sklearn_iclr26.neural_network.TorchMLPClassifier`
# per "digit c vs the other digits" task, trained on the digits without the
# pair 4 / 9; the new task is 4 versus 9, learned from 20 rows.
Xc, yc = load_digits(return_X_y=True)
Xc_src, Xc_rest, yc_src, yc_rest = train_test_split(
    Xc, yc, train_size=600, stratify=yc, random_state=0
)
scaler = StandardScaler().fit(Xc_src)
Xc_src, Xc_rest = scaler.transform(Xc_src), scaler.transform(Xc_rest)
pair = (4, 9)
keep = ~np.isin(yc_src, pair)
clf_hub = ModuleHub(TorchMLPClassifier((32,), max_iter=50), random_state=0)
for c in sorted(set(range(10)) - set(pair))[: 5 if QUICK else None]:
    clf_hub.add_task(f"{c} vs rest", Xc_src[keep], (yc_src[keep] == c).astype(int))

in_pair = np.isin(yc_rest, pair)
Xc_down, Xc_test, yc_down, yc_test = train_test_split(
    Xc_rest[in_pair],
    yc_rest[in_pair],
    train_size=20,
    stratify=yc_rest[in_pair],
    random_state=0,
)
clf_models = {
    "AMC": AdaptiveCompositionClassifier(clf_hub, max_iter=30, random_state=0),
    "soup": AdaptiveCompositionClassifier(
        clf_hub, weights="uniform", max_iter=30, random_state=0
    ),
    "scratch": TorchMLPClassifier((32,), max_iter=30, random_state=0),
}
for name, model in clf_models.items():
    model.fit(Xc_down, yc_down)
    print(f"{name:8s} test accuracy {model.score(Xc_test, yc_test):.3f}")
amc_clf = clf_models["AMC"]
for name, weight in zip(amc_clf.module_names_, amc_clf.module_weights_):
    print(f"weight of {name}: {weight:.2f}")
