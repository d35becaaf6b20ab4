"""
=====================================================
Measuring and controlling memorization with RLP heads
=====================================================

:class:`~sklearn_iclr26.memorization.RLPHeadClassifier` (Becker et al., ICLR
2026) attaches small heads to hidden layers that learn *random* labels of the
training rows. Random labels can only be fit by memorizing rows, so the heads'
accuracy measures memorization; ``memorization_weight`` makes the features fight the
heads. :class:`~sklearn_iclr26.memorization.RandomLabelProbe` takes the same
measurement on any fixed representation (raw features, PCA, LightGBM leaves),
an extension beyond the paper.

The table and the plot show, on ``digits`` with 20 % flipped labels, the
final random-label accuracy per layer and the clean test accuracy as
``memorization_weight`` grows. Whether suppressing memorization helps test accuracy
depends on the data and the noise (the paper's own conclusion); the user guide
reports where it does not.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import make_label_noise
from sklearn_iclr26.memorization import RandomLabelProbe, RLPHeadClassifier

QUICK = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, train_size=600, random_state=0, stratify=y
)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
y_noisy, flipped = make_label_noise(y_train, kind="symmetric", rate=0.2, random_state=0)

# %%
# Random-label accuracy and test accuracy against ``memorization_weight``
# --------------------------------------------------------------
lambdas = [0.0, 0.1, 1.0] if QUICK else [0.0, 0.03, 0.1, 0.3, 1.0]
rows = []
for memorization_weight in lambdas:
    clf = RLPHeadClassifier(
        hidden_layer_sizes=(128, 128),
        rlp_layers=(0, 1),
        memorization_weight=memorization_weight,
        max_iter=40 if QUICK else 120,
        batch_size=64,
        learning_rate_init=1e-3,
        random_state=0,
    ).fit(X_train, y_noisy)
    rows.append(
        (
            memorization_weight,
            *clf.random_label_accuracy_[:, -1],
            clf.score(X_train, y_noisy),
            clf.score(X_test, y_test),
        )
    )
print("lambda  rla(layer 0)  rla(layer 1)  train acc (noisy)  test acc (clean)")
for row in rows:
    print("{:6.2f}  {:12.3f}  {:12.3f}  {:17.3f}  {:16.3f}".format(*row))

# %%
# The same measurement on fixed representations
# ---------------------------------------------
for name, rep in [
    ("raw features", None),
    ("PCA(10)", PCA(10)),
    ("LightGBM leaves", "leaves"),
]:
    probe = RandomLabelProbe(rep, random_state=0).fit(X_train, y_noisy)
    print(f"{name:16s} random-label accuracy {probe.accuracy_:.3f}")

rows = np.array(rows)
fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(rows[:, 0], rows[:, 1], "o-", label="random-label acc., layer 0")
ax.plot(rows[:, 0], rows[:, 2], "o-", label="random-label acc., layer 1")
ax.plot(rows[:, 0], rows[:, 4], "s--", label="clean test accuracy")
ax.set_xscale("symlog", linthresh=0.03)
ax.set_xlabel("memorization_weight")
ax.legend()
fig.tight_layout()
plt.show()
