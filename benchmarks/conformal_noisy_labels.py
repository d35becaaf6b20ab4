"""Conformal sets from noisy labels: plain vs noise-corrected vs clean (issue 33).

Three real multi-class sets (digits, KEEL segment, KEEL satimage), noise
injected into the training and calibration labels with
``make_label_noise(kind="symmetric" | "class_conditional")`` at 10 %, 20 % and
30 %; the test labels stay clean. Each split: 50 % train, 25 % calibration,
25 % test (stratified). One model (standardized logistic regression) is fit
on the noisy training labels and one on the clean ones; each is frozen and
calibrated (``calibrate``) by

- ``plain``: the noisy model, noisy calibration labels, ``label_noise=None``;
- ``corrected``: the same, ``label_noise=T`` (the true noise matrix);
- ``estimated``: the same, ``label_noise=T_hat``, ``T_hat`` the
  ``ClassConditionalNoiseCorrector(...).fit(X_train, y_train_noisy)
  .transition_matrix_`` of the training rows (held out from calibration);
- ``clean``: the clean model, clean calibration labels.

for the LAC and APS scores (``SplitConformalClassifier``) and SOCOP
(``SOCOPClassifier``, lam chosen on a quarter of the calibration rows with the
noisy labels). Reported per cell: clean-label coverage (mean and its standard
error over the splits), mean set size, and for ``estimated`` the mean max
absolute error of ``T_hat``. Level 0.9.

    python benchmarks/conformal_noisy_labels.py            # 100 splits
    python benchmarks/conformal_noisy_labels.py --quick    # 2 splits, smoke

Results are appended as JSON lines to ``--out`` as each split finishes, and
a rerun skips the splits already there (resumable).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import os
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.conformal import SOCOPClassifier, SplitConformalClassifier
from sklearn_iclr26.datasets import load_keel, make_label_noise
from sklearn_iclr26.label_noise import ClassConditionalNoiseCorrector

LEVEL = 0.9
RATES = (0.1, 0.2, 0.3)
KINDS = ("symmetric", "class_conditional")
PIPELINES = ("plain", "corrected", "estimated", "clean")
SCORES = ("lac", "aps", "socop")


def load(name):
    if name == "digits":
        return load_digits(return_X_y=True)
    return load_keel(name, return_X_y=True)


def true_matrix(kind, rate, n_classes):
    """The ``T`` that ``make_label_noise(kind, rate)`` draws from."""
    if kind == "symmetric":
        rates = np.full(n_classes, rate)
    else:
        rates = rate * 2 * (np.arange(n_classes) + 1) / (n_classes + 1)
    T = np.repeat((rates / (n_classes - 1))[:, None], n_classes, axis=1)
    np.fill_diagonal(T, 1 - rates)
    return T


def model():
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))


def conformal(score, estimator, label_noise, seed):
    if score == "socop":
        return SOCOPClassifier(
            FrozenEstimator(estimator),
            confidence_level=LEVEL,
            calibration_size=0.75,
            tuning_size=0.25,
            label_noise=label_noise,
            random_state=seed,
        )
    return SplitConformalClassifier(
        FrozenEstimator(estimator),
        conformity_score=score,
        confidence_level=LEVEL,
        label_noise=label_noise,
        random_state=seed,
    )


def one_split(X, y, kind, rate, seed):
    n_classes = np.unique(y).shape[0]
    idx = np.arange(y.shape[0])
    rest, test = train_test_split(idx, test_size=0.25, stratify=y, random_state=seed)
    train, cal = train_test_split(
        rest, test_size=1 / 3, stratify=y[rest], random_state=seed
    )
    y_noisy, _ = make_label_noise(y, kind=kind, rate=rate, random_state=seed)
    T = true_matrix(kind, rate, n_classes)
    noisy_model = model().fit(X[train], y_noisy[train])
    clean_model = model().fit(X[train], y[train])
    T_hat = (
        ClassConditionalNoiseCorrector(model(), random_state=seed)
        .fit(X[train], y_noisy[train])
        .transition_matrix_
    )
    out = {"T_hat_max_abs_error": float(np.abs(T_hat - T).max())}
    setup = {
        "plain": (noisy_model, None, y_noisy),
        "corrected": (noisy_model, T, y_noisy),
        "estimated": (noisy_model, T_hat, y_noisy),
        "clean": (clean_model, None, y),
    }
    rows = np.arange(test.shape[0])
    for score in SCORES:
        for name, (est, noise, labels) in setup.items():
            clf = conformal(score, est, noise, seed).calibrate(X[cal], labels[cal])
            sets = clf.predict_set(X[test])
            out[f"{score}/{name}/coverage"] = float(sets[rows, y[test]].mean())
            out[f"{score}/{name}/size"] = float(sets.sum(axis=1).mean())
    return out


def summarize(records):
    lines = []
    header = (
        f"{'data':10s} {'noise':18s} {'score':6s} "
        + " ".join(f"{p + ' cov/size':>20s}" for p in PIPELINES)
        + "  T_hat err"
    )
    lines.append(header)
    keys = sorted({(r["data"], r["kind"], r["rate"]) for r in records})
    for data, kind, rate in keys:
        rs = [
            r
            for r in records
            if (r["data"], r["kind"], r["rate"]) == (data, kind, rate)
        ]
        err = np.mean([r["T_hat_max_abs_error"] for r in rs])
        for score in SCORES:
            cells = []
            for p in PIPELINES:
                cov = np.array([r[f"{score}/{p}/coverage"] for r in rs])
                size = np.mean([r[f"{score}/{p}/size"] for r in rs])
                se = cov.std(ddof=1) / np.sqrt(len(cov)) if len(cov) > 1 else np.nan
                cells.append(f"{cov.mean():.3f}±{se:.3f}/{size:5.2f}")
            lines.append(
                f"{data:10s} {kind + ' ' + str(rate):18s} {score:6s} "
                + " ".join(f"{c:>20s}" for c in cells)
                + f"  {err:.3f}"
            )
        lines.append(f"  ({len(rs)} splits)")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 splits (smoke run)")
    parser.add_argument("--splits", type=int, default=None)
    parser.add_argument(
        "--datasets", nargs="+", default=["digits", "segment", "satimage"]
    )
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    n_splits = args.splits or (2 if args.quick else 100)
    out = args.out or os.path.join(
        os.path.dirname(os.path.abspath(__file__)),
        "results",
        "conformal_noisy_labels_quick.jsonl"
        if args.quick
        else "conformal_noisy_labels.jsonl",
    )
    records = []
    if os.path.exists(out):
        with open(out) as f:
            records = [json.loads(line) for line in f if line.strip()]
    done = {(r["data"], r["kind"], r["rate"], r["split"]) for r in records}
    warnings.simplefilter("ignore")
    start = time.time()
    for data in args.datasets:
        X, y = load(data)
        X = np.asarray(X, dtype=float)
        for kind in KINDS:
            for rate in RATES:
                for split in range(n_splits):
                    if (data, kind, rate, split) in done:
                        continue
                    result = one_split(X, y, kind, rate, seed=split)
                    record = {"data": data, "kind": kind, "rate": rate, "split": split}
                    record.update(result)
                    records.append(record)
                    with open(out, "a") as f:
                        f.write(json.dumps(record) + "\n")
                print(f"{data} {kind} {rate}: done ({time.time() - start:.0f} s)")
    print(summarize([r for r in records if r["split"] < n_splits]))


if __name__ == "__main__":
    main()
