"""Training cost of MetaPCN and Bayesian augmentation against backprop MLPs.

* MetaPCNClassifier (vanilla PCN, PCN + weight norm, full Meta-PCN) vs the
  same network trained by backprop through the shared engine
  (TorchMLPClassifier) vs scikit-learn's MLPClassifier: seconds per epoch on
  digits (1,347 training rows, 3 hidden layers of 64, batch 64). Expected:
  PCN about (T + 1) x backprop per batch, T = n_inference_steps.
* BayesianAugmentationClassifier (OPTIMA-style, n_aug_samples 1 and 4) vs a
  plain TorchMLPClassifier: seconds per fit (breast_cancer, 200 full-batch
  epochs). Target: OPTIMA-style at n_aug_samples=1 <= 2x the plain MLP.

A Laplace marginal-likelihood (LILA) baseline needs laplace-torch, which is
not a dependency of the package; it is not timed here.

Run::

    OMP_NUM_THREADS=1 python benchmarks/bench_neural_training.py
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import time
import warnings

from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.neural_network import (
    BayesianAugmentationClassifier,
    MetaPCNClassifier,
    TorchMLPClassifier,
)


def best_of(fit, repeats=3):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fit()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:1347]
    y = y[:1347]
    epochs, hidden = 5, (64, 64, 64)
    common = {"hidden_layer_sizes": hidden, "batch_size": 64, "max_iter": epochs}
    rows = {}
    rows["backprop (TorchMLPClassifier)"] = best_of(
        lambda: TorchMLPClassifier(activation="gelu", random_state=0, **common).fit(
            X, y
        )
    )

    def sk():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            MLPClassifier(hidden, batch_size=64, max_iter=epochs, random_state=0).fit(
                X, y
            )

    rows["sklearn MLPClassifier"] = best_of(sk)
    for name, params in {
        "vanilla PCN": {"meta_pe": False, "weight_norm": False},
        "PCN + weight norm": {"meta_pe": False},
        "Meta-PCN (meta_pe=True)": {"meta_pe": True},
    }.items():
        rows[name] = best_of(
            lambda p=params: MetaPCNClassifier(random_state=0, **common, **p).fit(X, y),
            repeats=2,
        )
    base = rows["backprop (TorchMLPClassifier)"]
    print(f"digits, {len(y)} rows, hidden {hidden}, batch 64, T=7: s/epoch, ratio")
    for name, t in rows.items():
        print(f"  {name:32s} {t / epochs:8.4f}  {t / base:6.2f}x")

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    fits = {
        "plain TorchMLPClassifier": lambda: TorchMLPClassifier(
            (64,), random_state=0
        ).fit(X, y),
        "OPTIMA-style, n_aug_samples=1": lambda: BayesianAugmentationClassifier(
            (64,), random_state=0
        ).fit(X, y),
        "OPTIMA-style, n_aug_samples=4": lambda: BayesianAugmentationClassifier(
            (64,), n_aug_samples=4, random_state=0
        ).fit(X, y),
    }
    times = {name: best_of(f) for name, f in fits.items()}
    base = times["plain TorchMLPClassifier"]
    print("\nbreast_cancer, 569 rows, 200 full-batch epochs: s/fit, ratio")
    for name, t in times.items():
        print(f"  {name:32s} {t:8.3f}  {t / base:6.2f}x")


if __name__ == "__main__":
    main()
