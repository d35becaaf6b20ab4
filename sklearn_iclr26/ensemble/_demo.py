"""Demo rows for the ensemble family (see ``python -m sklearn_iclr26.demo``)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["run_demo"]


def run_demo():
    """MoMa's adaptive module composition on the Mulan ``wq`` set.

    A hub of five torch MLPs, one per water-quality target (rows 0-499, one
    shared initialisation), is composed for a held-out target learned from
    200 rows; test MAE on the remaining rows, against the same MLP trained
    from scratch on the 200 rows and the uniform "soup" of all modules.
    """
    from sklearn.metrics import mean_absolute_error
    from sklearn.preprocessing import StandardScaler

    from sklearn_iclr26.datasets import load_multioutput
    from sklearn_iclr26.ensemble import AdaptiveCompositionRegressor, ModuleHub
    from sklearn_iclr26.utils._torch_mlp_regressor import TorchMLPRegressor

    data = load_multioutput("wq")  # ships with the package
    X, Y = data.data, data.target
    perm = np.random.RandomState(0).permutation(len(X))
    source, down, test = perm[:500], perm[500:700], perm[700:]
    X = StandardScaler().fit(X[source]).transform(X)
    target = 0
    hub = ModuleHub(TorchMLPRegressor((32,), max_iter=50), random_state=0)
    for j in [j for j in range(Y.shape[1]) if j != target][:5]:
        hub.add_task(data.target_names[j], X[source], Y[source, j])
    X_down, y_down, X_test, y_test = X[down], Y[down, target], X[test], Y[test, target]
    models = {
        "amc": AdaptiveCompositionRegressor(hub, max_iter=30, random_state=0),
        "soup": AdaptiveCompositionRegressor(
            hub, weights="uniform", max_iter=30, random_state=0
        ),
        "scratch": TorchMLPRegressor((32,), max_iter=30, random_state=0),
    }
    mae = {
        name: float(
            mean_absolute_error(y_test, model.fit(X_down, y_down).predict(X_test))
        )
        for name, model in models.items()
    }
    row = {
        "method": "MoMa",
        "estimator": "AdaptiveCompositionRegressor(hub of 5 MLPs)",
        "dataset": f"wq (Mulan), target {data.target_names[target]}, 200 rows",
        "metric": "test MAE",
        "value": mae["amc"],
    }
    return [
        {
            **row,
            "baseline": "TorchMLPRegressor from scratch",
            "baseline_value": mae["scratch"],
        },
        {**row, "baseline": "uniform soup of the hub", "baseline_value": mae["soup"]},
    ]
