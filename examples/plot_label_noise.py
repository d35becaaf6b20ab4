"""
===========================================================
Training on noisy labels with instance-dependent correction
===========================================================

:class:`~sklearn_iclr26.label_noise.InstanceNoiseCorrector` (NDX, ICLR 2026)
trains a classifier on labels that were flipped with a probability
``rho(x)`` that depends on the instance: points near the class boundary are
mislabeled more often. It replaces the logistic loss by a corrected loss built
from ``rho(x) = 1 / (1 + exp(beta |h(x)|))``, the distance of ``x`` to the
current decision boundary.

This example corrupts the labels of a 2-D problem with genuinely
instance-dependent noise (:func:`~sklearn_iclr26.datasets.make_label_noise`
with ``kind="instance"``), then

1. compares the clean-test accuracy of a plain MLP and the corrected one as
   the noise rate grows;
2. plots the fitted flip rate ``rho_`` against the true flip probability, and
   ranks the training labels with ``mislabel_scores_``.

An honest caveat shows up in the first plot: on this 2-D problem the plain
MLP hardly memorizes the flipped labels, and the corrected loss, which
down-weights confident rows even without noise (at ``rho = 0`` it is
``p (1 - p)`` times the logistic loss), does **not** beat it at any noise
rate. On the higher-dimensional real sets of
``benchmarks/noise_reproduction.py``, where the plain MLP memorizes the
noise, it does (see the user guide).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# Data and noise
# --------------
import os

import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import spearmanr
from sklearn.datasets import make_moons
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from sklearn_iclr26.datasets import make_label_noise
from sklearn_iclr26.label_noise import (
    ClassConditionalNoiseCorrector,
    InstanceNoiseCorrector,
)
from sklearn_iclr26.neural_network import TorchMLPClassifier

# SKLEARN_ICLR26_QUICK=1 (the test suite) shrinks the sweep
QUICK = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
X, y = make_moons(n_samples=400 if QUICK else 800, noise=0.25, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.4, random_state=0)
mlp = TorchMLPClassifier(hidden_layer_sizes=(64,), max_iter=150, random_state=0)

# %%
# Accuracy against the noise rate
# -------------------------------
# The test labels stay clean. Two seeds per rate keep the example fast; see
# ``benchmarks/noise_reproduction.py`` for the real-data comparison.
rates = [0.0, 0.2, 0.4] if QUICK else [0.0, 0.1, 0.2, 0.3, 0.4]
plain_acc, ndx_acc, cc_acc = [], [], []
for rate in rates:
    plain_scores, ndx_scores, cc_scores = [], [], []
    for seed in range(1 if QUICK else 2):
        y_noisy, _ = make_label_noise(
            y_train, X_train, kind="instance", rate=rate, random_state=seed
        )
        plain = mlp.set_params(random_state=seed).fit(X_train, y_noisy)
        plain_scores.append(plain.score(X_test, y_test))
        ndx = InstanceNoiseCorrector(mlp, random_state=seed).fit(X_train, y_noisy)
        ndx_scores.append(ndx.score(X_test, y_test))
        # the class-conditional baseline: forward correction with an
        # estimated transition matrix
        cc = ClassConditionalNoiseCorrector(mlp, method="forward", random_state=seed)
        cc_scores.append(cc.fit(X_train, y_noisy).score(X_test, y_test))
    plain_acc.append(np.mean(plain_scores))
    ndx_acc.append(np.mean(ndx_scores))
    cc_acc.append(np.mean(cc_scores))
    print(
        f"rate {rate:.1f}: plain {plain_acc[-1]:.3f}, class-conditional "
        f"{cc_acc[-1]:.3f}, instance-corrected {ndx_acc[-1]:.3f}"
    )

# %%
# The fitted flip rate and the mislabel ranking
# ---------------------------------------------
y_noisy, flipped, flip_proba = make_label_noise(
    y_train, X_train, kind="instance", rate=0.3, random_state=0, return_flip_proba=True
)
ndx = InstanceNoiseCorrector(mlp, random_state=0).fit(X_train, y_noisy)
rank_corr = spearmanr(ndx.rho_, flip_proba)[0]
auroc = roc_auc_score(flipped, ndx.mislabel_scores_)
print(f"Spearman(rho_, true flip probability) = {rank_corr:.2f}")
print(f"AUROC of mislabel_scores_ for the flipped labels = {auroc:.2f}")

fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
axes[0].plot(rates, plain_acc, "o-", label="plain MLP")
axes[0].plot(rates, cc_acc, "^-", label="ClassConditionalNoiseCorrector(MLP)")
axes[0].plot(rates, ndx_acc, "s-", label="InstanceNoiseCorrector(MLP)")
axes[0].set(xlabel="noise rate", ylabel="clean test accuracy", title="Accuracy")
axes[0].legend()
axes[1].scatter(flip_proba, ndx.rho_, s=8, alpha=0.6)
axes[1].set(
    xlabel="true flip probability",
    ylabel="fitted rho_",
    title=f"rho(x), Spearman {rank_corr:.2f}",
)
order = np.argsort(ndx.mislabel_scores_)[::-1][: int(flipped.sum())]
axes[2].scatter(*X_train[~flipped].T, s=6, c="lightgray", label="kept label")
axes[2].scatter(*X_train[flipped].T, s=10, c="tab:red", label="flipped label")
axes[2].scatter(
    *X_train[order].T, s=40, facecolors="none", edgecolors="k", label="top-ranked"
)
axes[2].set(title=f"mislabel_scores_ ranking, AUROC {auroc:.2f}")
axes[2].legend(loc="lower left", fontsize=8)
fig.tight_layout()
plt.show()

# %%
# A raw DataFrame: the preprocessing goes inside
# ----------------------------------------------
# The correctors hand ``X`` to their inner estimator untouched, so a Pipeline
# with a name-based ColumnTransformer sits inside and sees the raw DataFrame
# (string categoricals, string labels). The corrected loss applies to the
# Pipeline's final step, here LightGBM's custom objective.
import pandas as pd
from lightgbm import LGBMClassifier
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

rng = np.random.RandomState(0)
frame = pd.DataFrame(
    {
        "x0": X[:, 0],
        "x1": X[:, 1],
        "region": rng.choice(["north", "south", "east"], len(X)),
    }
)
labels = np.array(["no", "yes"])
f_train, f_test, l_train, l_test = train_test_split(
    frame, labels[y], test_size=0.4, random_state=0
)
l_noisy, _ = make_label_noise(l_train, kind="symmetric", rate=0.2, random_state=0)
prep = ColumnTransformer(
    [("num", "passthrough", ["x0", "x1"]), ("cat", OneHotEncoder(), ["region"])]
)
lgbm = LGBMClassifier(n_estimators=100, num_leaves=15, verbose=-1, random_state=0)
corrected = InstanceNoiseCorrector(make_pipeline(prep, lgbm), random_state=0)
corrected.fit(f_train, l_noisy)
plain = make_pipeline(prep, lgbm).fit(f_train, l_noisy)
ours, theirs = corrected.score(f_test, l_test), plain.score(f_test, l_test)
print(f"raw DataFrame, 20% symmetric noise: corrected {ours:.3f}, plain {theirs:.3f}")
print("predicted labels:", sorted(set(corrected.predict(f_test))))

# %%
# The rows flagged as mislabelled
# -------------------------------
# :class:`~sklearn_iclr26.label_noise.LabelIssuesDisplay` ranks the training
# rows by the corrector's mislabel score and marks those its rule flags; the
# rows whose label the simulation flipped are known here, so they are marked
# too.
from sklearn_iclr26.label_noise import LabelIssuesDisplay

flipped = np.asarray(l_noisy) != np.asarray(l_train)
LabelIssuesDisplay.from_estimator(corrected, f_train, l_noisy, flipped=flipped)
plt.show()
