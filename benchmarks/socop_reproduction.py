"""SOCOP against LAC, APS, RAPS and Margin on real multi-class data.

The paper's table (Wang, Sun and Dobriban, ICLR 2026, Table 1 shape):
coverage, mean set size, P(size > 1), singleton rate and SSCV, averaged over
random splits, for a weak and a strong base model, at confidence_level = 0.95
and 0.9.

Protocol per split: the data is split 50% train / 15% tuning / 15%
calibration / 20% test (stratified). The model is fitted on the training part
and frozen. Baselines calibrate on the calibration part; SOCOP ("auto")
chooses lam on the tuning part by the knee of (mean size, P(size > 1)) and
calibrates on an equally sized part of tuning + calibration data (it sees the
same amount of calibration data). All methods are evaluated on the same test
part.

Run: ``python benchmarks/socop_reproduction.py [--splits 20] [--quick]``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

from sklearn_iclr26.conformal import SOCOPClassifier, SplitConformalClassifier
from sklearn_iclr26.datasets import load_keel
from sklearn_iclr26.metrics import (
    coverage_score,
    mean_set_size,
    multiple_prediction_rate,
    set_size_stratified_coverage_violation,
    singleton_rate,
)

METHODS = {
    "LAC": lambda m: SplitConformalClassifier(m, conformity_score="lac"),
    "APS": lambda m: SplitConformalClassifier(
        m, conformity_score="aps", score_params={"randomized": True}
    ),
    "RAPS": lambda m: SplitConformalClassifier(
        m,
        conformity_score="raps",
        score_params={"randomized": True, "lam_reg": 0.01, "k_reg": 2},
    ),
    "Margin": lambda m: SplitConformalClassifier(m, conformity_score="margin"),
    "SOCOP": lambda m: SOCOPClassifier(m, lam="auto"),
}
MODELS = {
    "weak (GaussianNB)": lambda: GaussianNB(),
    "strong (HGB)": lambda: HistGradientBoostingClassifier(
        max_iter=100, random_state=0
    ),
}


def load(name):
    if name == "digits":
        return load_digits(return_X_y=True)
    return load_keel(name, return_X_y=True)


def evaluate(datasets, levels, n_splits, models=MODELS):
    rows = []
    for dataset in datasets:
        X, y = load(dataset)
        for model_name, make_model in models.items():
            for split in range(n_splits):
                X_fit, X_test, y_fit, y_test = train_test_split(
                    X, y, test_size=0.2, random_state=split, stratify=y
                )
                X_train, X_rest, y_train, y_rest = train_test_split(
                    X_fit, y_fit, test_size=0.375, random_state=split, stratify=y_fit
                )
                X_tune, X_cal, y_tune, y_cal = train_test_split(
                    X_rest, y_rest, test_size=0.5, random_state=split, stratify=y_rest
                )
                model = FrozenEstimator(make_model().fit(X_train, y_train))
                for level in levels:
                    for method, factory in METHODS.items():
                        clf = factory(model).set_params(
                            confidence_level=level, random_state=split
                        )
                        if method == "SOCOP":
                            clf.set_params(calibration_size=0.5, tuning_size=0.5)
                            clf.fit(np.vstack([X_tune, X_cal]), np.r_[y_tune, y_cal])
                        else:
                            clf.fit(X_cal, y_cal)
                        sets = clf.predict_set(X_test)
                        classes = clf.classes_
                        rows.append(
                            {
                                "dataset": dataset,
                                "model": model_name,
                                "confidence_level": level,
                                "method": method,
                                "coverage": coverage_score(
                                    y_test, sets, classes=classes
                                ),
                                "size": mean_set_size(sets),
                                "P(size>1)": multiple_prediction_rate(sets),
                                "singleton": singleton_rate(sets),
                                "SSCV": set_size_stratified_coverage_violation(
                                    y_test,
                                    sets,
                                    confidence_level=level,
                                    classes=classes,
                                ),
                                "lam": getattr(clf, "lam_", np.nan),
                            }
                        )
    return rows


def summarize(rows):
    import pandas as pd

    frame = pd.DataFrame(rows)
    keys = ["dataset", "model", "confidence_level", "method"]
    table = frame.groupby(keys, sort=False).mean(numeric_only=True).reset_index()
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument(
        "--datasets",
        nargs="+",
        default=["digits", "vehicle", "segment", "vowel", "satimage", "led7digit"],
    )
    parser.add_argument("--levels", nargs="+", type=float, default=[0.95, 0.9])
    args = parser.parse_args()
    start = time.perf_counter()
    table = summarize(evaluate(args.datasets, args.levels, args.splits))
    import pandas as pd

    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(table.round(3).to_string(index=False))
    # the paper's claim, per (dataset, model, confidence_level): SOCOP vs LAC
    print("\nSOCOP against LAC (P(size>1) and mean size), per setting:")
    pivot = table.pivot_table(
        index=["dataset", "model", "confidence_level"],
        columns="method",
        values=["P(size>1)", "size", "coverage"],
    )
    wins = 0
    for index, row in pivot.iterrows():
        lower = row[("P(size>1)", "SOCOP")] < row[("P(size>1)", "LAC")]
        wins += lower
        print(
            f"  {index}: P(>1) LAC {row[('P(size>1)', 'LAC')]:.3f} -> SOCOP "
            f"{row[('P(size>1)', 'SOCOP')]:.3f}; size {row[('size', 'LAC')]:.2f} -> "
            f"{row[('size', 'SOCOP')]:.2f}; coverage {row[('coverage', 'LAC')]:.3f} / "
            f"{row[('coverage', 'SOCOP')]:.3f} {'' if lower else '  <-- not lower'}"
        )
    print(f"SOCOP has the lower P(size>1) in {wins} of {len(pivot)} settings.")
    print(f"({args.splits} splits, {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
