"""Test-friendly instances of the NAS estimators (see utils/_test_common)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.nas._mlp_space import MLPSearchSpace

# A tiny space and search: one searchable layer of width 0 (skip) or 8.
_SPACE = MLPSearchSpace(n_layers=1, widths=(0, 8), activations=("relu", "tanh"))
_FAST = {
    "search_space": _SPACE,
    "final_estimator_params": {"max_iter": 50, "learning_rate_init": 5e-2},
    "random_state": 0,
}
_GRADIENT = {**_FAST, "max_iter": 2, "budget": 1000.0}

TEST_PARAMS = {
    "ConNASSearch": [_GRADIENT, {**_GRADIENT, "task": "regression"}],
    "PenaltyNASSearch": [_GRADIENT],
    "RandomNASSearch": [{**_FAST, "n_candidates": 2, "max_iter": 5}],
}


def _frontier_case():
    """A small case for the common display test (tests/test_displays_common.py)."""
    from sklearn.datasets import load_wine

    from sklearn_iclr26.nas import ConNASSearch

    X, y = load_wine(return_X_y=True)
    return ConNASSearch(**_GRADIENT), X, y, {}


DISPLAY_CASES = {"ArchitectureFrontierDisplay": _frontier_case}
