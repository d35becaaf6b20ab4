"""Label-noise correctors against plain LightGBM and cleanlab on held-out keel tables.

Fifth-round check of issue 40 (items 1-3): keel ``vehicle`` (4 classes),
``contraceptive`` (3) and ``german`` (binary, 30 % minority), 70/30 split,
20 % symmetric flips of the training labels (to a uniformly drawn other
class), clean test labels. Learner ``LGBMClassifier(n_jobs=1, verbose=-1)``
(100 trees) everywhere. Columns: clean-test accuracy of plain LightGBM,
``InstanceNoiseCorrector`` (NDX, defaults), ``ClassConditionalNoiseCorrector``
with its default for LightGBM (``method="auto"`` = forward) and with
``method="backward"`` (the old default); ``noise_rate_`` of NDX against the
true flip fraction; precision / recall of NDX's ``label_issues_`` and of
cleanlab's default ``find_label_issues`` mask on 5-fold out-of-fold
probabilities of the same LightGBM.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/noise_heldout.py            # 2 seeds
    OMP_NUM_THREADS=1 python benchmarks/noise_heldout.py --full     # 5 seeds
"""

import argparse
import warnings

import numpy as np
from lightgbm import LGBMClassifier
from sklearn.model_selection import StratifiedKFold, cross_val_predict, train_test_split

from sklearn_iclr26.datasets import load_keel
from sklearn_iclr26.label_noise import (
    ClassConditionalNoiseCorrector,
    InstanceNoiseCorrector,
)


def run(name, seed):
    X, y = load_keel(name, return_X_y=True)
    n_classes = len(np.unique(y))
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=seed
    )
    rng = np.random.default_rng(seed)
    flipped = rng.random(len(y_tr)) < 0.2
    y_noisy = np.where(
        flipped, (y_tr + rng.integers(1, n_classes, len(y_tr))) % n_classes, y_tr
    )

    def lgbm():
        return LGBMClassifier(n_jobs=1, verbose=-1, random_state=seed)

    row = {"plain": lgbm().fit(X_tr, y_noisy).score(X_te, y_te)}
    ndx = InstanceNoiseCorrector(lgbm(), random_state=seed).fit(X_tr, y_noisy)
    row["ndx"] = ndx.score(X_te, y_te)
    for method in ("auto", "backward"):
        ccn = ClassConditionalNoiseCorrector(lgbm(), method=method, random_state=seed)
        row[f"ccn_{method}"] = ccn.fit(X_tr, y_noisy).score(X_te, y_te)
    row["noise_rate"] = ndx.noise_rate_
    row["true_rate"] = flipped.mean()
    mask = ndx.label_issues_
    row["ndx_p"], row["ndx_r"] = flipped[mask].mean(), mask[flipped].mean()
    try:
        from cleanlab.filter import find_label_issues

        oof = cross_val_predict(
            lgbm(),
            X_tr,
            y_noisy,
            cv=StratifiedKFold(5, shuffle=True, random_state=seed),
            method="predict_proba",
        )
        cl = find_label_issues(y_noisy, oof, n_jobs=1)
        row["cl_p"], row["cl_r"] = flipped[cl].mean(), cl[flipped].mean()
    except ImportError:
        row["cl_p"] = row["cl_r"] = float("nan")
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="5 seeds instead of 2")
    args = parser.parse_args()
    seeds = range(5 if args.full else 2)
    cols = [
        "plain",
        "ndx",
        "ccn_auto",
        "ccn_backward",
        "noise_rate",
        "true_rate",
        "ndx_p",
        "ndx_r",
        "cl_p",
        "cl_r",
    ]
    print("set            " + "  ".join(f"{c:>12}" for c in cols))
    for name in ("vehicle", "contraceptive", "german"):
        rows = []
        for seed in seeds:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rows.append(run(name, seed))
        means = [np.mean([r[c] for r in rows]) for c in cols]
        print(f"{name:<15}" + "  ".join(f"{m:12.3f}" for m in means), flush=True)


if __name__ == "__main__":
    main()
