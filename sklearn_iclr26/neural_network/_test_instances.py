"""Test-friendly instances of the neural-network estimators (see utils/_test_common)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

_MINIBATCH_REASON = (
    "with mini-batch training, weighting samples is not equivalent to repeating "
    "them (the batches differ)"
)


def _torch_mlp_failures(estimator):
    if estimator.batch_size is not None:
        return {"check_sample_weight_equivalence_on_dense_data": _MINIBATCH_REASON}
    return {}


# The common checks feed unnamed random matrices; the iFusion instances read
# them as pre-computed embeddings by integer positions: column 0 the long-term
# interest, column 1 the one session, every other column dense.
_INTEREST_FUSION_BASE = {
    "layout": {"long": [0], "sessions": [[1]]},
    "n_items": None,
    "embed_dim": 8,
    "n_diffusion_steps": 3,
    "batch_size": None,
    "learning_rate_init": 1e-2,
    # 50 full-batch steps: each diffusion stage starts from noise, and 20
    # steps left the fused interest at chance on check_classifiers_train
    "max_iter": 50,
    "dtype": "float64",
    "random_state": 0,
}


def _interest_fusion_failures(estimator):
    failures = {}
    if estimator.fusion == "diffusion" or estimator.batch_size is not None:
        failures["check_sample_weight_equivalence_on_dense_data"] = (
            "the diffusion losses draw noise per sample and mini-batches differ, "
            "so weighting a sample is not the same as repeating it"
        )
    return failures


def _bayesian_augmentation_failures(estimator):
    # augmentation draws are per row in each step: repeating a row draws
    # independent noise for the copy, weighting it does not
    return {
        "check_sample_weight_equivalence_on_dense_data": (
            "augmentation draws independent noise for each repeated row, "
            "a weight scales one draw"
        )
    }


TEST_PARAMS = {
    "DiffusionInterestFusionClassifier": [
        _INTEREST_FUSION_BASE,
        {**_INTEREST_FUSION_BASE, "fusion": "concat", "batch_size": 32},
    ],
    "BayesianAugmentationClassifier": [{"max_iter": 30}],
    "BayesianAugmentationRegressor": [{"max_iter": 30}],
    "MetaPCNClassifier": [{"hidden_layer_sizes": (16, 16)}],
    "MetaPCNRegressor": [{"hidden_layer_sizes": (16, 16)}],
    "TorchMLPClassifier": [{"max_iter": 30}, {"max_iter": 30, "batch_size": 16}],
    "TorchMLPRegressor": [{"max_iter": 30}],
}

EXPECTED_FAILED_CHECKS = {
    "DiffusionInterestFusionClassifier": _interest_fusion_failures,
    "BayesianAugmentationClassifier": _bayesian_augmentation_failures,
    "BayesianAugmentationRegressor": _bayesian_augmentation_failures,
    "TorchMLPClassifier": _torch_mlp_failures,
    "TorchMLPRegressor": _torch_mlp_failures,
}
