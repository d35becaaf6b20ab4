"""Fast instances of the ``ot`` estimators for the common checks."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

TEST_PARAMS = {
    "TreeSlicedEmbedding": [
        {"n_trees": 5, "n_lines": 3, "random_state": 0},
        {"n_trees": 5, "n_lines": 2, "n_bins": 4, "random_state": 0},
    ],
}

EXPECTED_FAILED_CHECKS = {}
