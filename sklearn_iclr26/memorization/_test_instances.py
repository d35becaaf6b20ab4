"""Test-friendly instances of the memorization estimators (see utils/_test_common)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn.decomposition import PCA

TEST_PARAMS = {
    "RLPHeadClassifier": [
        {"hidden_layer_sizes": (16, 16), "max_iter": 30},
        {
            "hidden_layer_sizes": (16, 16),
            "max_iter": 30,
            "reg_lambda": 0.5,
            "rlp_layers": (0, 1),
            "n_label_sets": 2,
            "n_random_labels": 3,
        },
    ],
    "RandomLabelProbe": [{}, {"representation": PCA(n_components=2)}],
    "SampleGradientMemorization": [{"hidden_layer_sizes": (16,), "max_iter": 40}],
}

EXPECTED_FAILED_CHECKS = {}
