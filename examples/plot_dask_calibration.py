"""
=========================================================
Calibrating on ten million rows that never leave dask
=========================================================

A model trained on a sample is calibrated on a calibration set too large for
one process. :class:`~sklearn_iclr26.conformal.SplitConformalClassifier`
with a :class:`~sklearn.frozen.FrozenEstimator` (or its ``calibrate``)
accepts a dask array or DataFrame: each block's conformity scores are
computed where the block lives, and only the scores (8 bytes a row) come
back; the threshold is the in-memory one from the same scores. The sets of a
dask collection are a lazy dask array, computed block by block.

Quick mode (``SKLEARN_ICLR26_QUICK=1``) uses 200,000 rows, the default 10^6;
``SKLEARN_ICLR26_DASK_ROWS=10000000`` gives the full 10^7 rows x 10 features
(800 MB of features, made on the workers; 80 MB of scores on the driver).
``verbose=1`` reports the blocks as they are scored.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# A cluster, and rows made on the workers
# ---------------------------------------
# Two single-threaded workers in this process (``processes=False``, so that
# the gallery runs the script as it is; ``benchmarks/dask_calibration.py``
# uses worker processes). Each block of ``X`` and ``y`` is generated from
# its own seed by the worker that holds it: the driver never sees the rows.
import os

import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from distributed import Client, LocalCluster
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from sklearn_iclr26.conformal import SplitConformalClassifier

quick = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
n_rows = int(
    os.environ.get("SKLEARN_ICLR26_DASK_ROWS") or (200_000 if quick else 10**6)
)
chunk = min(n_rows, 100_000 if quick else 500_000)
n_features = 10
coef = np.linspace(-1.0, 1.0, n_features)


def labels(X, seed):
    """Three classes from a logistic model of the rows."""
    logits = np.column_stack([X @ coef, -(X @ coef), X[:, 0]])
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    u = np.random.default_rng(seed).uniform(size=(X.shape[0], 1))
    return (u > np.cumsum(p, axis=1)).sum(axis=1)


def rows(block_info=None, part=0, offset=0):
    block = offset + block_info[None]["chunk-location"][0]
    X = np.random.default_rng([7, block]).standard_normal((chunk, n_features))
    return X if part == 0 else labels(X, [8, block])


n_blocks = n_rows // chunk
X = da.map_blocks(rows, chunks=((chunk,) * n_blocks, (n_features,)), dtype=float)
y = da.map_blocks(rows, part=1, chunks=((chunk,) * n_blocks,), dtype=int)
print(f"X: {X.shape[0]:,} rows x {X.shape[1]} features in {n_blocks} blocks")

cluster = LocalCluster(
    n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
)
client = Client(cluster)

# %%
# A model trained on a sample, calibrated on every row
# ----------------------------------------------------
rng = np.random.default_rng(0)
X_train = rng.standard_normal((5000, n_features))
model = LogisticRegression(max_iter=1000).fit(X_train, labels(X_train, 1))

clf = SplitConformalClassifier(
    FrozenEstimator(model), confidence_level=0.9, verbose=1, random_state=0
).fit(X, y)
print(
    f"threshold {clf.threshold_:.4f} from {clf.n_calibration_samples_:,} scores "
    f"({clf.calibration_scores_.nbytes / 2**20:.0f} MiB on the driver)"
)

# %%
# Lazy sets, reduced on the workers
# ---------------------------------
# ``predict_set`` on a dask array is a dask array: reductions run on the
# workers, and only their results come back. Here the set sizes of fresh
# rows (the blocks after the calibration ones) and their coverage.
X_new = da.map_blocks(
    rows, offset=n_blocks, chunks=((chunk,), (n_features,)), dtype=float
)
y_new = da.map_blocks(rows, part=1, offset=n_blocks, chunks=((chunk,),), dtype=int)
sets = clf.predict_set(X_new)
print(type(sets).__name__, sets.shape)
sizes = da.bincount(sets.sum(axis=1), minlength=4).compute()
true_label = y_new[:, None] == da.arange(3)[None, :]
covered = (sets & true_label).any(axis=1).mean().compute()
print(f"coverage of {chunk:,} new rows: {covered:.3f} (target 0.9)")

client.close()
cluster.close()

# %%
# Calibration scores and set sizes
# --------------------------------
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
ax1.hist(clf.calibration_scores_[:: max(1, n_rows // 200_000)], bins=60)
ax1.axvline(clf.threshold_, color="k", linestyle="--", label="threshold")
ax1.set(xlabel="LAC score of the true label", ylabel="rows (subsample)")
ax1.legend()
ax2.bar(np.arange(sizes.shape[0]), sizes / sizes.sum())
ax2.set(xlabel="set size", ylabel="fraction of new rows", xticks=range(4))
fig.suptitle(f"Calibrated on {n_rows:,} rows, block by block")
fig.tight_layout()
plt.show()
