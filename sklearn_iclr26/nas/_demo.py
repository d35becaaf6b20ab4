"""Demo of ConNASSearch on real data (about 10-30 s on one CPU core)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

__all__ = ["run_demo"]


def run_demo():
    """ConNAS vs the penalty baseline on digits under a parameter budget."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from sklearn_iclr26.nas import ConNASSearch, MLPSearchSpace, PenaltyNASSearch

    X, y = load_digits(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, train_size=500, test_size=400, stratify=y, random_state=0
    )
    scaler = StandardScaler().fit(X_tr)
    X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)
    space = MLPSearchSpace(n_layers=2, widths=(0, 8, 16, 32, 64), activations=("relu",))
    budget = 1500.0
    common = {
        "budget": budget,
        "max_iter": 30,
        "final_estimator_params": {"max_iter": 60},
        "random_state": 0,
    }
    connas = ConNASSearch(space, rescale_factor=3.0, **common).fit(X_tr, y_tr)
    penalty = PenaltyNASSearch(space, penalty=0.001, **common).fit(X_tr, y_tr)
    name, base = "ConNASSearch", "PenaltyNASSearch(penalty=0.001)"
    return [
        {
            "method": "ConNAS",
            "estimator": name,
            "dataset": "digits",
            "metric": f"parameters of the chosen network (budget {budget:g})",
            "value": connas.best_cost_,
            "baseline": base,
            "baseline_value": penalty.best_cost_,
        },
        {
            "method": "ConNAS",
            "estimator": name,
            "dataset": "digits",
            "metric": "test accuracy",
            "value": connas.score(X_te, y_te),
            "baseline": base,
            "baseline_value": penalty.score(X_te, y_te),
        },
    ]
