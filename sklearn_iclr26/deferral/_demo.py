"""Demo of Top-k learning to defer on real data with simulated experts."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["run_demo"]


def run_demo():
    """Top-k vs Top-1 deferral on digits and diabetes (a few seconds)."""
    from sklearn.datasets import load_diabetes, load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    from sklearn_iclr26.datasets import make_experts
    from sklearn_iclr26.deferral import TopKDeferralRegressor, TopKDeferrer

    results = []
    X, y = load_digits(return_X_y=True)
    experts, fees = make_experts(X, y, n_experts=5, random_state=0)
    X_tr, X_te, y_tr, y_te = train_test_split(
        np.hstack([X, experts]), y, test_size=0.5, random_state=0, stratify=y
    )
    clf = TopKDeferrer(
        predictor=DecisionTreeClassifier(max_depth=3, random_state=0),
        expert_columns=list(range(X.shape[1], X.shape[1] + 5)),
        costs=fees,
        adaptive=True,
        budget_weight=0.5,
    ).fit(X_tr, y_tr)
    curve = clf.deferral_curve(X_te, y_te, ks=[1, 3])
    results.append(
        {
            "method": "Top-k L2D",
            "estimator": "TopKDeferrer(k=3)",
            "dataset": "digits + 5 simulated experts",
            "metric": f"accuracy (mean budget {curve.budget[1]:.3f})",
            "value": float(curve.score[1]),
            "baseline": f"Top-1 L2D (mean budget {curve.budget[0]:.3f})",
            "baseline_value": float(curve.score[0]),
        }
    )
    results.append(
        {
            "method": "Top-k L2D",
            "estimator": "TopKDeferrer(adaptive=True, budget_weight=0.5)",
            "dataset": "digits + 5 simulated experts",
            "metric": f"accuracy (mean k(x) {clf.predict_k(X_te).mean():.2f})",
            "value": float(np.mean(clf.predict(X_te) == y_te)),
            "baseline": "Top-1 L2D",
            "baseline_value": float(curve.score[0]),
        }
    )
    X, y = load_diabetes(return_X_y=True)
    experts, fees = make_experts(X, y, n_experts=5, expertise="region", random_state=0)
    X_tr, X_te, y_tr, y_te = train_test_split(
        np.hstack([X, experts]), y, test_size=0.5, random_state=0
    )
    reg = TopKDeferralRegressor(
        predictor=DecisionTreeRegressor(max_depth=3, random_state=0),
        expert_columns=list(range(X.shape[1], X.shape[1] + 5)),
        costs=fees,
    ).fit(X_tr, y_tr)
    curve = reg.deferral_curve(X_te, y_te, ks=[1, 3])
    results.append(
        {
            "method": "Top-k L2D",
            "estimator": "TopKDeferralRegressor(k=3)",
            "dataset": "diabetes + 5 simulated experts",
            "metric": "RMSE",
            "value": float(curve.score[1]),
            "baseline": "Top-1 deferral",
            "baseline_value": float(curve.score[0]),
        }
    )
    return results
