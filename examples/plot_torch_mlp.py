"""
=================================================
Torch MLPs through skorch, the scikit-learn way
=================================================

:class:`~sklearn_iclr26.neural_network.TorchMLPClassifier` and
:class:`~sklearn_iclr26.neural_network.TorchMLPRegressor` train a torch
network through skorch but behave as scikit-learn estimators: they clone,
pickle, tune in ``GridSearchCV`` and give bit-identical results for a fixed
``random_state``. Here they are compared with scikit-learn's numpy MLPs on two
real data sets.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
import os
import time
import warnings

import matplotlib.pyplot as plt
import pandas as pd
from sklearn.datasets import load_diabetes
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import load_keel
from sklearn_iclr26.neural_network import TorchMLPClassifier, TorchMLPRegressor

warnings.filterwarnings("ignore", message=".*Maximum iterations")  # sklearn's MLPs
# SKLEARN_ICLR26_QUICK=1 (the test suite) trains for fewer epochs
EPOCHS = 30 if os.environ.get("SKLEARN_ICLR26_QUICK") == "1" else 100
X_clf, y_clf = load_keel("segment", return_X_y=True)
X_reg, y_reg = load_diabetes(return_X_y=True)

models = {
    ("segment", "TorchMLPClassifier"): TorchMLPClassifier(
        hidden_layer_sizes=(64,), max_iter=EPOCHS, random_state=0
    ),
    ("segment", "sklearn MLPClassifier"): MLPClassifier(
        hidden_layer_sizes=(64,), max_iter=EPOCHS, random_state=0
    ),
    ("diabetes", "TorchMLPRegressor"): TorchMLPRegressor(
        hidden_layer_sizes=(32,), alpha=1e-2, max_iter=EPOCHS, random_state=0
    ),
    ("diabetes", "sklearn MLPRegressor"): MLPRegressor(
        hidden_layer_sizes=(32,),
        learning_rate_init=1e-2,
        max_iter=EPOCHS,
        random_state=0,
    ),
}
rows = []
for (dataset, name), model in models.items():
    X, y = (X_clf, y_clf) if dataset == "segment" else (X_reg, y_reg)
    start = time.perf_counter()
    scores = cross_val_score(make_pipeline(StandardScaler(), model), X, y, cv=3)
    rows.append(
        {
            "dataset": dataset,
            "model": name,
            "score (accuracy / R2)": scores.mean(),
            "seconds": time.perf_counter() - start,
        }
    )
table = pd.DataFrame(rows)
print(table.round(3).to_string(index=False))

# %%
# Tuning the network inside a pipeline
# ------------------------------------
grid = GridSearchCV(
    make_pipeline(StandardScaler(), TorchMLPClassifier(max_iter=50, random_state=0)),
    {"torchmlpclassifier__hidden_layer_sizes": [(16,), (64,)]},
    cv=3,
).fit(X_clf, y_clf)
print(grid.best_params_, round(grid.best_score_, 3))

# %%
fig, ax = plt.subplots(figsize=(6, 3))
ax.barh(
    [f"{d}: {m}" for d, m in zip(table["dataset"], table["model"])],
    table["score (accuracy / R2)"],
)
ax.set_xlabel("3-fold CV score")
fig.tight_layout()
plt.show()
