"""Fit-time overhead of InstanceNoiseCorrector over its plain learner.

Times ``InstanceNoiseCorrector(LGBMClassifier(n_estimators=N))`` against
``LGBMClassifier(n_estimators=N)`` (same trees; the corrector adds a Python
objective called once per round), and the corrector around a
``TorchMLPClassifier`` against the plain MLP (same epochs; one extra loss
evaluation per step). Target from the issue: at most 3x for LightGBM.

Run::

    OMP_NUM_THREADS=1 python benchmarks/bench_noise.py
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import time

from lightgbm import LGBMClassifier
from sklearn.datasets import make_classification

from sklearn_iclr26.datasets import make_label_noise
from sklearn_iclr26.label_noise import InstanceNoiseCorrector
from sklearn_iclr26.neural_network import TorchMLPClassifier


def best_time(make, X, y, repeats=3):
    times = []
    for _ in range(repeats):
        est = make()
        start = time.perf_counter()
        est.fit(X, y)
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    print("| learner | n_samples | plain (s) | corrector (s) | ratio |")
    print("|---|---|---|---|---|")
    for n in (2000, 10000):
        X, y = make_classification(n, 20, n_informative=8, random_state=0)
        y_noisy, _ = make_label_noise(y, X, kind="instance", rate=0.28, random_state=0)

        def lgbm():
            return LGBMClassifier(n_estimators=200, n_jobs=1, verbose=-1)

        t_plain = best_time(lgbm, X, y_noisy)
        t_ndx = best_time(lambda: InstanceNoiseCorrector(lgbm()), X, y_noisy)
        print(
            f"| LightGBM 200 trees | {n} | {t_plain:.3f} | {t_ndx:.3f} | "
            f"{t_ndx / t_plain:.2f}x |"
        )

        def mlp():
            return TorchMLPClassifier(hidden_layer_sizes=(64,), max_iter=100)

        t_plain = best_time(mlp, X, y_noisy, repeats=2)
        t_ndx = best_time(lambda: InstanceNoiseCorrector(mlp()), X, y_noisy, 2)
        print(
            f"| MLP 100 epochs | {n} | {t_plain:.3f} | {t_ndx:.3f} | "
            f"{t_ndx / t_plain:.2f}x |"
        )


if __name__ == "__main__":
    main()
