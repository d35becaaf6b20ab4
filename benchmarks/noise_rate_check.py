"""What ``InstanceNoiseCorrector.noise_rate_`` reads with 20 % injected noise.

Prints ``noise_rate_`` (the mean fitted flip rate) at ``beta`` = 1, 2, 4 for
three inner models, two data sets and two noise kinds, next to the injected
fraction. Run: ``python benchmarks/noise_rate_check.py`` (about a minute).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

from lightgbm import LGBMClassifier
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import make_label_noise
from sklearn_iclr26.label_noise import InstanceNoiseCorrector
from sklearn_iclr26.neural_network import TorchMLPClassifier

data = {
    "breast_cancer": load_breast_cancer(return_X_y=True),
    "make_classification": make_classification(
        n_samples=1000, n_features=10, n_informative=5, random_state=0
    ),
}
models = {
    "LGBM": LGBMClassifier(n_estimators=100, n_jobs=1, verbose=-1),
    "LogReg(scaled)": make_pipeline(StandardScaler(), LogisticRegression()),
    "TorchMLP(scaled)": make_pipeline(
        StandardScaler(), TorchMLPClassifier((32,), max_iter=100)
    ),
}
warnings.simplefilter("ignore")
for dname, (X, y) in data.items():
    for kind in ("instance", "symmetric"):
        yn, flipped = make_label_noise(y, X, kind=kind, rate=0.2, random_state=0)
        for mname, m in models.items():
            row = []
            for beta in (1.0, 2.0, 4.0):
                c = InstanceNoiseCorrector(m, beta=beta, random_state=0).fit(X, yn)
                row.append(f"beta={beta}: {c.noise_rate_:.3f}")
            print(
                f"{dname:20s} {kind:9s} injected={flipped.mean():.3f} {mname:17s} "
                + "  ".join(row),
                flush=True,
            )
