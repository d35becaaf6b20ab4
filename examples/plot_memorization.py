"""
==========================================================
Finding mislabeled rows with cumulative sample gradients
==========================================================

:class:`~sklearn_iclr26.memorization.SampleGradientMemorization` (CSG,
Ravikumar et al., ICLR 2026) trains an MLP and sums, for every training row,
the squared norm of the loss gradient with respect to the row's *input*, up to
the epoch where the weight norm peaks (no validation set needed). Rows the
network has to memorize, mislabeled ones first, keep large input gradients for
longer.

This example flips 20 % of the labels of ``breast_cancer``, then

1. plots the CSG scores of clean and flipped rows, with the mislabel AUROC of
   CSG, SGAL and CSL;
2. shows the weight norm and the mean input gradient per epoch, and the peak
   where training stops;
3. plots the random-label accuracy of
   :class:`~sklearn_iclr26.memorization.RLPHeadClassifier`'s heads per layer
   over the epochs, with and without the memorization regulariser.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# Data and noise
# --------------
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import make_label_noise
from sklearn_iclr26.memorization import RLPHeadClassifier, SampleGradientMemorization

QUICK = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
X, y = load_breast_cancer(return_X_y=True)
X = StandardScaler().fit_transform(X)
y_noisy, flipped = make_label_noise(y, kind="symmetric", rate=0.2, random_state=0)

# %%
# CSG scores of clean and flipped rows
# ------------------------------------
est = SampleGradientMemorization(final_model="full", random_state=0).fit(X, y_noisy)
for name, scores in [
    ("CSG", est.csg_scores_),
    ("SGAL", est.sgal_scores_),
    ("CSL", est.csl_scores_),
]:
    print(f"{name} mislabel AUROC: {roc_auc_score(flipped, scores):.3f}")
print(
    f"weight-norm peak at epoch {est.peak_iter_}; {est.label_issues_.sum()} rows "
    f"flagged, {np.sum(est.label_issues_ & flipped)} of them truly flipped "
    f"(of {flipped.sum()})"
)

fig, axes = plt.subplots(1, 3, figsize=(14, 4))
bins = np.logspace(
    np.log10(est.csg_scores_.min() + 1e-12), np.log10(est.csg_scores_.max()), 40
)
axes[0].hist(est.csg_scores_[~flipped], bins=bins, alpha=0.6, label="clean label")
axes[0].hist(est.csg_scores_[flipped], bins=bins, alpha=0.6, label="flipped label")
axes[0].set_xscale("log")
axes[0].set_xlabel("CSG score (up to the weight-norm peak)")
axes[0].set_ylabel("rows")
axes[0].legend()

epochs = np.arange(len(est.weight_norm_history_))
ax = axes[1]
ax.plot(epochs, est.weight_norm_history_, color="C0")
ax.axvline(est.peak_iter_, color="k", ls="--", label="weight-norm peak")
ax.set_xlabel("epoch")
ax.set_ylabel("weight norm", color="C0")
ax2 = ax.twinx()
ax2.plot(epochs[1:], est.mean_input_grad_history_, color="C1")
ax2.set_ylabel("mean squared input gradient", color="C1")
ax.legend(loc="lower right")

# %%
# Random-label accuracy per layer
# -------------------------------
# Each training row gets a random binary label; linear heads on both hidden
# layers learn it from detached features. Their training accuracy rises above
# chance only as the network memorizes individual rows. With ``memorization_weight``
# the features are pushed to make the heads fail.
max_iter = 60 if QUICK else 200
for memorization_weight, style in [(0.0, "-"), (1.0, ":")]:
    rlp = RLPHeadClassifier(
        hidden_layer_sizes=(128, 128),
        rlp_layers=(0, 1),
        memorization_weight=memorization_weight,
        max_iter=max_iter,
        batch_size=64,
        learning_rate_init=1e-3,
        random_state=0,
    ).fit(X, y_noisy)
    for layer, acc in zip(rlp.rlp_layers_, rlp.random_label_accuracy_):
        axes[2].plot(
            acc,
            ls=style,
            color=f"C{layer}",
            label=f"layer {layer}, lambda={memorization_weight}",
        )
    print(
        f"memorization_weight={memorization_weight}: final random-label accuracy "
        f"per layer "
        f"{np.round(rlp.random_label_accuracy_[:, -1], 3)}, train accuracy on the "
        f"observed labels {rlp.score(X, y_noisy):.3f}"
    )
axes[2].axhline(0.5, color="grey", lw=0.8)
axes[2].set_xlabel("epoch")
axes[2].set_ylabel("random-label accuracy (train)")
axes[2].legend(fontsize=8)
fig.tight_layout()
plt.show()
