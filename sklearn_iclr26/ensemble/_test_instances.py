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
