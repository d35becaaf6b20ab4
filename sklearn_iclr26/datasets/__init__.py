"""Dataset loaders (real data, offline) and generators."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.datasets._experts import make_experts
from sklearn_iclr26.datasets._ihdp import load_ihdp
from sklearn_iclr26.datasets._interactions import load_movielens_interactions
from sklearn_iclr26.datasets._keel import load_keel
from sklearn_iclr26.datasets._label_noise import make_label_noise
from sklearn_iclr26.datasets._latent_concepts import make_latent_concepts
from sklearn_iclr26.datasets._multioutput import get_data_home, load_multioutput
from sklearn_iclr26.datasets._spurious import (
    make_background_confounding,
    make_causal_chain,
)

__all__ = [
    "get_data_home",
    "load_ihdp",
    "load_keel",
    "load_movielens_interactions",
    "load_multioutput",
    "make_background_confounding",
    "make_causal_chain",
    "make_experts",
    "make_label_noise",
    "make_latent_concepts",
]
