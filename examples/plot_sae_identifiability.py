"""
=========================================================
Sparse autoencoders and concept identifiability
=========================================================

Liu et al. (ICLR 2026) show that next-token representations are, up to a
linear map, the log-posteriors of latent concepts. We simulate their
generative model (:func:`~sklearn_iclr26.datasets.make_latent_concepts`),
train a small next-token MLP, check that its hidden layer is linear in the
true log-posteriors, then score the codes of a
:class:`~sklearn_iclr26.decomposition.SparseAutoencoder` and of PCA with
:func:`~sklearn_iclr26.metrics.concept_identifiability_score` against the
true concept log-odds.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import make_latent_concepts
from sklearn_iclr26.decomposition import SparseAutoencoder
from sklearn_iclr26.metrics import (
    concept_identifiability_score,
    linear_identifiability_check,
)
from sklearn_iclr26.neural_network import TorchMLPClassifier
from sklearn_iclr26.utils._torch import forward_module

QUICK = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
data = make_latent_concepts(
    1000 if QUICK else 3000, n_concepts=4, n_tokens=32, random_state=0
)
clf = TorchMLPClassifier((32,), activation="tanh", max_iter=200, random_state=0)
clf.fit(data.data, data.target)
H = forward_module(clf.net_, data.data, func=lambda m, x: m.layers[:-1](x))
print(
    "R^2 of H on the true log-posteriors:",
    round(linear_identifiability_check(H, data.log_posteriors).r2, 3),
)

# %%
# Codes: a TopK sparse autoencoder (32 features, 4 active per row), the same
# autoencoder with a matching-pursuit encoder (MP-SAE: 4 greedy pursuit steps
# over the decoder's atoms instead of a linear encoder and TopK), and PCA.
Hs = StandardScaler().fit_transform(H)
sae_params = {
    "max_iter": 50 if QUICK else 100,
    "batch_size": 128,
    "learning_rate_init": 3e-3,
    "random_state": 0,
}
sae = SparseAutoencoder(32, n_nonzero_coefs=4, **sae_params)
mp_sae = SparseAutoencoder(
    32, n_nonzero_coefs=4, encoder="matching_pursuit", **sae_params
)
codes = {
    "SAE-TopK": sae.fit_transform(Hs),
    "MP-SAE": mp_sae.fit_transform(Hs),
    "PCA": PCA(32).fit_transform(Hs),
    "noise": np.random.RandomState(0).normal(size=(len(H), 32)),
}
results = {
    name: concept_identifiability_score(
        Z,
        data.concepts,
        representations=H,
        log_posteriors=data.concept_log_odds,
        random_state=0,
        return_details=True,
    )
    for name, Z in codes.items()
}
for name, r in results.items():
    print(
        f"{name:9s} score {r.score:.3f}  probe bound {r.bound:.3f}  ratio {r.ratio:.3f}"
    )
print("dead SAE features (TopK, MP):", int(sae.dead_features_.sum()), end=" ")
print(int(mp_sae.dead_features_.sum()))

# %%
# |corr| between every SAE feature and every concept's log-odds; the
# Hungarian matching picks one feature per concept.
r = results["SAE-TopK"]
fig, ax = plt.subplots(figsize=(8, 2.5))
im = ax.imshow(r.correlations.T, aspect="auto", vmin=0, vmax=1, cmap="viridis")
ax.scatter(r.matched_features, range(4), marker="x", color="red")
ax.set_xlabel("SAE feature")
ax.set_ylabel("concept")
fig.colorbar(im, label="|corr|")
plt.show()
