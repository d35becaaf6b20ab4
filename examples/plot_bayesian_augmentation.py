"""
=====================================================
Learning data augmentation by Bayesian model selection
=====================================================

:class:`~sklearn_iclr26.neural_network.BayesianAugmentationClassifier`
learns the strength of a data augmentation together with the network's
weights: the augmentation's parameters get a Gaussian posterior and a
Gaussian prior, and both are fitted by an evidence lower bound (a tabular
version of OPTIMA). Here Gaussian feature noise is learned on the breast
cancer data and compared with no augmentation and with a fixed noise
strength: the learned strength per feature, and calibration (reliability
curves, expected calibration error, log-loss) on a test split. A further
section does the same for regression with
:class:`~sklearn_iclr26.neural_network.BayesianAugmentationRegressor`, and a
last one learns categorical swap noise on one-hot features.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.calibration import calibration_curve
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer, StandardScaler

from sklearn_iclr26.neural_network import (
    BayesianAugmentationClassifier,
    BayesianAugmentationRegressor,
    TorchMLPRegressor,
)

QUICK = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
data = load_breast_cancer()
X_train, X_test, y_train, y_test = train_test_split(
    data.data, data.target, test_size=0.4, stratify=data.target, random_state=0
)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

common = {"hidden_layer_sizes": (64,), "max_iter": 60 if QUICK else 200}
models = {
    "no augmentation": {"augmenter": "none"},
    "fixed noise 0.3": {
        "learn_augmentation": False,
        "q_init_std": 0.0,
        "init_strength": 0.3,
    },
    "learned (ELBO)": {},
}

# %%
# Fit the three models
# --------------------
rows, curves, fitted = [], {}, {}
for name, params in models.items():
    clf = BayesianAugmentationClassifier(random_state=0, **common, **params)
    clf.fit(X_train, y_train)
    proba = clf.predict_proba(X_test)[:, 1]
    frac, mean_pred = calibration_curve(y_test, proba, n_bins=8)
    curves[name] = (mean_pred, frac)
    conf = np.maximum(proba, 1 - proba)
    correct = (proba > 0.5) == y_test
    bins = np.minimum((conf * 10).astype(int), 9)
    ece = sum(
        (bins == b).mean() * abs(correct[bins == b].mean() - conf[bins == b].mean())
        for b in np.unique(bins)
    )
    rows.append(
        (
            name,
            accuracy_score(y_test, proba > 0.5),
            log_loss(y_test, proba),
            ece,
        )
    )
    fitted[name] = clf
print(
    pd.DataFrame(rows, columns=["model", "accuracy", "log-loss", "ECE"])
    .set_index("model")
    .round(4)
)

# %%
# Learned noise strength and reliability curves
# ---------------------------------------------
learned = fitted["learned (ELBO)"].augmentation_posterior_
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
order = np.argsort(learned["strength"])
ax0.barh(np.array(data.feature_names)[order], learned["strength"][order])
ax0.axvline(0.1, color="k", ls=":", label="prior centre / initial value")
ax0.set_xlabel("learned noise scale (feature stds)")
ax0.tick_params(axis="y", labelsize=6)
ax0.legend(fontsize=7)
for name, (mean_pred, frac) in curves.items():
    ax1.plot(mean_pred, frac, marker="o", label=name)
ax1.plot([0, 1], [0, 1], "k:")
ax1.set_xlabel("mean predicted probability")
ax1.set_ylabel("fraction of positives")
ax1.legend()
fig.tight_layout()
plt.show()

# %%
# Regression: learned noise on the diabetes data
# ----------------------------------------------
# :class:`~sklearn_iclr26.neural_network.BayesianAugmentationRegressor` uses a
# Gaussian likelihood on the standardised target; it is compared by test
# :math:`R^2` with the same MLP without augmentation.
Xd, yd = load_diabetes(return_X_y=True)
Xd_train, Xd_test, yd_train, yd_test = train_test_split(Xd, yd, random_state=0)
reg_common = {"hidden_layer_sizes": (32,), "max_iter": 60 if QUICK else 200}
bayes_reg = make_pipeline(
    StandardScaler(), BayesianAugmentationRegressor(random_state=0, **reg_common)
).fit(Xd_train, yd_train)
mlp_reg = make_pipeline(
    StandardScaler(), TorchMLPRegressor(random_state=0, **reg_common)
).fit(Xd_train, yd_train)
print(f"BayesianAugmentationRegressor test R^2 {bayes_reg.score(Xd_test, yd_test):.3f}")
print(f"TorchMLPRegressor             test R^2 {mlp_reg.score(Xd_test, yd_test):.3f}")
posterior = bayes_reg[-1].augmentation_posterior_
print("learned noise scale per feature:")
print(pd.Series(posterior["strength"], index=load_diabetes().feature_names).round(3))

# %%
# One-hot features: learned categorical swap noise
# ------------------------------------------------
# One-hot blocks (here four breast-cancer features cut into quantile bins by a
# ``KBinsDiscretizer`` inside the pipeline, as a ``OneHotEncoder`` would give
# for categorical columns) can get relaxed categorical swap noise: each block
# has a learned swap probability with its own posterior and prior. The blocks
# are named by the preprocessor's ``get_feature_names_out`` (the pipeline
# passes a DataFrame, so the names reach the classifier).
X_df, y_df = load_breast_cancer(return_X_y=True, as_frame=True)
binned = ["mean radius", "mean texture", "mean perimeter", "mean area"]
pre = ColumnTransformer(
    [
        ("num", StandardScaler(), [c for c in X_df.columns if c not in binned]),
        (
            "bins",
            KBinsDiscretizer(
                n_bins=4,
                encode="onehot-dense",
                quantile_method="averaged_inverted_cdf",
            ),
            binned,
        ),
    ]
).set_output(transform="pandas")
Xc_train, Xc_test, yc_train, yc_test = train_test_split(
    X_df, y_df, test_size=0.4, stratify=y_df, random_state=0
)
names = pre.fit(Xc_train).get_feature_names_out()
blocks = [[n for n in names if n.startswith(f"bins__{c}_")] for c in binned]
swap_clf = make_pipeline(
    pre,
    BayesianAugmentationClassifier(
        categorical_blocks=blocks, init_swap_proba=0.1, random_state=0, **common
    ),
).fit(Xc_train, yc_train)
print(f"test accuracy with swap noise {swap_clf.score(Xc_test, yc_test):.3f}")
print("learned swap probability per one-hot block:")
print(
    pd.Series(swap_clf[-1].augmentation_posterior_["swap_proba"], index=binned).round(3)
)
