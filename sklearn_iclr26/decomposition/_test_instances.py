"""Fast instances of the ``decomposition`` estimators for the common checks."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

TEST_PARAMS = {
    "SparseAutoencoder": [
        {"max_iter": 5, "random_state": 0},
        {"sparsity": "batchtopk", "max_iter": 5, "random_state": 0},
        {"sparsity": "l1", "structured_rank": 1, "max_iter": 5, "random_state": 0},
        {"sparsity": "lp", "structured_rank": 1, "max_iter": 5, "random_state": 0},
        {"encoder": "matching_pursuit", "max_iter": 5, "random_state": 0},
    ],
}

EXPECTED_FAILED_CHECKS = {}
