"""Transition-matrix estimates of ClassConditionalNoiseCorrector (issue 27).

Breast cancer (scikit-learn), 70/30 split, 20 % symmetric flips in the
training labels only. For LightGBM and the default scaled logistic
regression, and for ``transition_estimate`` in {"anchor", "confident_joint"},
it records the estimated off-diagonal entries against the injected ones (as
realized on the training rows), the clean-test accuracy of
``method="backward"`` against the plain learner, and whether a warning was
raised. Run (under a minute)::

    OMP_NUM_THREADS=1 python benchmarks/noise_transition_matrix.py
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import warnings

import numpy as np
from lightgbm import LGBMClassifier
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import make_label_noise
from sklearn_iclr26.label_noise import ClassConditionalNoiseCorrector


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    X, y = load_breast_cancer(return_X_y=True)
    learners = {
        "lgbm": LGBMClassifier(n_jobs=1, verbose=-1),
        "scaled LR": make_pipeline(StandardScaler(), LogisticRegression()),
    }
    print(
        "| learner | estimate | seed | injected T01, T10 | estimated T01, T10 | "
        "max abs error | plain acc | backward acc | warned |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    summary = {}
    for seed in range(args.seeds):
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=0.3, stratify=y, random_state=seed
        )
        y_noisy, _ = make_label_noise(
            y_tr, kind="symmetric", rate=0.2, random_state=seed
        )
        T_true = np.array(
            [[np.mean(y_noisy[y_tr == i] == j) for j in (0, 1)] for i in (0, 1)]
        )
        for lname, learner in learners.items():
            plain = clone(learner)  # deterministic: no bagging, no subsampling
            plain_acc = plain.fit(X_tr, y_noisy).score(X_te, y_te)
            for estimate in ("anchor", "confident_joint"):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    cc = ClassConditionalNoiseCorrector(
                        clone(learner),
                        method="backward",  # the default is forward for LightGBM
                        transition_estimate=estimate,
                        random_state=seed,
                    ).fit(X_tr, y_noisy)
                warned = any(issubclass(w.category, UserWarning) for w in caught)
                T = cc.transition_matrix_
                error = float(np.abs(T - T_true).max())
                acc = cc.score(X_te, y_te)
                summary.setdefault((lname, estimate), []).append(
                    (error, acc - plain_acc, warned)
                )
                print(
                    f"| {lname} | {estimate} | {seed} | {T_true[0, 1]:.2f}, "
                    f"{T_true[1, 0]:.2f} | {T[0, 1]:.2f}, {T[1, 0]:.2f} | "
                    f"{error:.2f} | {plain_acc:.3f} | {acc:.3f} | {warned} |",
                    flush=True,
                )
    print("\n| learner | estimate | mean max abs error | backward - plain | warned |")
    print("|---|---|---|---|---|")
    for (lname, estimate), rows in summary.items():
        errors, gains, warned = map(np.array, zip(*rows))
        print(
            f"| {lname} | {estimate} | {errors.mean():.3f} | "
            f"{gains.mean():+.3f} (min {gains.min():+.3f}) | "
            f"{int(warned.sum())}/{len(warned)} |"
        )


if __name__ == "__main__":
    main()
