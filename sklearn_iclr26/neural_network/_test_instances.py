"""Test-friendly instances of the neural-network estimators (see utils/_test_common)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.neural_network._ifusion_test_params import (
    IFUSION_TEST_PARAMS,
    ifusion_failures,
)

_MINIBATCH_REASON = (
    "with mini-batch training, weighting samples is not equivalent to repeating "
    "them (the batches differ)"
)


def _torch_mlp_failures(estimator):
    if estimator.batch_size is not None:
        return {"check_sample_weight_equivalence_on_dense_data": _MINIBATCH_REASON}
    return {}


def _bayes_aug_failures(estimator):
    # augmentation draws are per row in each step: repeating a row draws
    # independent noise for the copy, weighting it does not
    return {
        "check_sample_weight_equivalence_on_dense_data": (
            "augmentation draws independent noise for each repeated row, "
            "a weight scales one draw"
        )
    }


TEST_PARAMS = {
    "DiffusionInterestFusionClassifier": IFUSION_TEST_PARAMS,
    "BayesianAugmentationClassifier": [{"max_iter": 30}],
    "BayesianAugmentationRegressor": [{"max_iter": 30}],
    "MetaPCNClassifier": [{"hidden_layer_sizes": (16, 16)}],
    "MetaPCNRegressor": [{"hidden_layer_sizes": (16, 16)}],
    "TorchMLPClassifier": [{"max_iter": 30}, {"max_iter": 30, "batch_size": 16}],
    "TorchMLPRegressor": [{"max_iter": 30}],
}

EXPECTED_FAILED_CHECKS = {
    "DiffusionInterestFusionClassifier": ifusion_failures,
    "BayesianAugmentationClassifier": _bayes_aug_failures,
    "BayesianAugmentationRegressor": _bayes_aug_failures,
    "TorchMLPClassifier": _torch_mlp_failures,
    "TorchMLPRegressor": _torch_mlp_failures,
}
