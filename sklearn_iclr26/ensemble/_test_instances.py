"""Fast instances of the ``ensemble`` estimators for the common checks.

The common checks feed inputs of many widths (1 to 20 features), which no hub
of torch modules trained on one width can embed. The check instances use a hub
of stateless ``FunctionTransformer`` modules (embeddings ``tanh(X)``, ``sin(X)``
and ``X``), composed by their predictions; weight-space merging of torch modules
is checked in ``tests/test_ensemble.py`` (pickle, clone, Pipeline,
GridSearchCV, bit-identical ``random_state``).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.preprocessing import FunctionTransformer

from sklearn_iclr26.ensemble._hub import ModuleHub


def _stateless_hub():
    hub = ModuleHub()
    hub.add_module("tanh", FunctionTransformer(np.tanh))
    hub.add_module("sin", FunctionTransformer(np.sin))
    hub.add_module("identity", FunctionTransformer())
    return hub


def torch_hub():
    """Two torch modules of 4 features from one initialisation (weights mode).

    The hub of the torch contracts (``tests/test_torch_common.py``, through
    ``BaseAdaptiveComposition._common_test_params``): there the merged network
    is fine-tuned, which the stateless check hub never does.
    """
    from sklearn_iclr26.utils._torch_mlp_regressor import TorchMLPRegressor

    X = np.random.RandomState(1).normal(size=(80, 4))
    hub = ModuleHub(TorchMLPRegressor((8,), max_iter=20), random_state=0)
    return hub.add_task("x0", X, X[:, 0]).add_task("x1", X, X[:, 1] - X[:, 2])


TEST_PARAMS = {
    "AdaptiveCompositionRegressor": [
        {"hub": _stateless_hub(), "n_neighbors": 3, "random_state": 0},
    ],
    "AdaptiveCompositionClassifier": [
        {"hub": _stateless_hub(), "n_neighbors": 3, "random_state": 0},
    ],
}

# the check instances compose by predictions: no network is fine-tuned, so
# n_iter_ (fine-tune epochs) is 0; the heads' solver count is head_n_iter_
_NO_FINE_TUNE = (
    "n_iter_ counts the fine-tune epochs of merge='weights'; the stateless hub "
    "composes by predictions (no network is trained), so n_iter_ is 0"
)

EXPECTED_FAILED_CHECKS = {
    "AdaptiveCompositionRegressor": {
        "check_non_transformer_estimators_n_iter": _NO_FINE_TUNE
    },
    "AdaptiveCompositionClassifier": {
        "check_non_transformer_estimators_n_iter": _NO_FINE_TUNE
    },
}
