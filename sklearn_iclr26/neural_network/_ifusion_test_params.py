"""Test instances of DiffusionInterestFusionClassifier (see _test_instances.py).

The common checks feed unnamed random matrices; the instance reads them as
pre-computed embeddings by integer positions: column 0 the long-term interest,
column 1 the one session, every other column dense.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

_BASE = {
    "layout": {"long": [0], "sessions": [[1]]},
    "n_items": None,
    "embed_dim": 8,
    "n_diffusion_steps": 3,
    "batch_size": None,
    "learning_rate_init": 1e-2,
    "max_iter": 20,
    "dtype": "float64",
    "random_state": 0,
}

IFUSION_TEST_PARAMS = [_BASE, {**_BASE, "fusion": "concat", "batch_size": 32}]


def ifusion_failures(estimator):
    failures = {}
    if estimator.fusion == "diffusion" or estimator.batch_size is not None:
        failures["check_sample_weight_equivalence_on_dense_data"] = (
            "the diffusion losses draw noise per sample and mini-batches differ, "
            "so weighting a sample is not the same as repeating it"
        )
    return failures
