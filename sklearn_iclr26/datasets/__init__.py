"""Dataset loaders (real data, offline) and generators."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.datasets._experts import make_experts
from sklearn_iclr26.datasets._ihdp import load_ihdp
from sklearn_iclr26.datasets._keel import load_keel
from sklearn_iclr26.datasets._label_noise import make_label_noise
from sklearn_iclr26.datasets._multioutput import get_data_home, load_multioutput

__all__ = [
    "get_data_home",
    "load_ihdp",
    "load_keel",
    "load_multioutput",
    "make_experts",
    "make_label_noise",
]
