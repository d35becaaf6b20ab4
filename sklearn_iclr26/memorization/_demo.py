"""Demo rows for the memorization family (see ``python -m sklearn_iclr26.demo``)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["run_demo"]


def run_demo():
    """RLP heads on digits and CSG on breast_cancer, both with 20 % flipped labels.

    * RLP heads: :class:`RLPHeadClassifier` measures memorization (the
      random-label accuracy of its head, chance is 0.5) and, with the
      regulariser on, is compared on clean test accuracy with the same MLP
      trained without heads (``TorchMLPClassifier``).
    * CSG: :class:`SampleGradientMemorization`'s mislabel AUROC against the
      cumulative sample loss (CSL, the proxy the paper compares with) of the
      same run, and against cleanlab's self-confidence of a 5-fold
      out-of-fold logistic regression.
    """
    return _rlp_rows() + _csg_rows()


def _rlp_rows():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from sklearn_iclr26.datasets import make_label_noise
    from sklearn_iclr26.memorization import RLPHeadClassifier
    from sklearn_iclr26.utils._torch_mlp_classifier import TorchMLPClassifier

    X, y = load_digits(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, train_size=600, stratify=y, random_state=0
    )
    scaler = StandardScaler().fit(X_tr)
    X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)
    y_noisy, _ = make_label_noise(y_tr, kind="symmetric", rate=0.2, random_state=0)
    common = {"hidden_layer_sizes": (128, 128), "max_iter": 40, "random_state": 0}
    train = {"batch_size": 64, "learning_rate_init": 1e-3}
    measured = RLPHeadClassifier(**common, **train).fit(X_tr, y_noisy)
    regularized = RLPHeadClassifier(memorization_weight=1.0, **common, **train)
    regularized.fit(X_tr, y_noisy)
    plain = TorchMLPClassifier(**common, **train).fit(X_tr, y_noisy)
    dataset = "digits (600 train), 20% symmetric noise"
    return [
        {
            "method": "RLP heads",
            "estimator": "RLPHeadClassifier(memorization_weight=1)",
            "dataset": dataset,
            "metric": "random-label accuracy of the last-layer head (memorization)",
            "value": float(regularized.random_label_accuracy_[-1, -1]),
            "baseline": "RLPHeadClassifier(memorization_weight=0), measuring only",
            "baseline_value": float(measured.random_label_accuracy_[-1, -1]),
        },
        {
            "method": "RLP heads",
            "estimator": "RLPHeadClassifier(memorization_weight=1)",
            "dataset": dataset,
            "metric": "clean test accuracy",
            "value": float(regularized.score(X_te, y_te)),
            "baseline": "TorchMLPClassifier((128, 128))",
            "baseline_value": float(plain.score(X_te, y_te)),
        },
    ]


def _csg_rows():
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.preprocessing import StandardScaler

    from sklearn_iclr26.datasets import make_label_noise
    from sklearn_iclr26.memorization import SampleGradientMemorization

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    y_noisy, flipped = make_label_noise(y, kind="symmetric", rate=0.2, random_state=0)
    csg = SampleGradientMemorization(random_state=0).fit(X, y_noisy)
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    oof = cross_val_predict(
        LogisticRegression(max_iter=1000), X, y_noisy, cv=folds, method="predict_proba"
    )
    self_confidence = oof[np.arange(len(y_noisy)), y_noisy]
    auroc = float(roc_auc_score(flipped, csg.csg_scores_))
    return [
        {
            "method": "CSG",
            "estimator": "SampleGradientMemorization",
            "dataset": "breast_cancer, 20% symmetric noise",
            "metric": f"mislabel AUROC (stopped at epoch {csg.peak_iter_})",
            "value": auroc,
            "baseline": baseline,
            "baseline_value": float(value),
        }
        for baseline, value in (
            (
                "CSL (cumulative sample loss), same run",
                roc_auc_score(flipped, csg.csl_scores_),
            ),
            (
                "cleanlab self-confidence, 5-fold logistic",
                roc_auc_score(flipped, 1.0 - self_confidence),
            ),
        )
    ]
