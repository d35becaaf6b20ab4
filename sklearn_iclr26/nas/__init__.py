"""Hardware-constrained neural architecture search (ConNAS) and its baselines."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.nas._base_space import SearchSpace
from sklearn_iclr26.nas._cell_space import CellSearchSpace
from sklearn_iclr26.nas._connas import ConNASSearch
from sklearn_iclr26.nas._frontier_display import ArchitectureFrontierDisplay
from sklearn_iclr26.nas._mlp_space import MLPSearchSpace
from sklearn_iclr26.nas._penalty import PenaltyNASSearch
from sklearn_iclr26.nas._random_search import RandomNASSearch

__all__ = [
    "ArchitectureFrontierDisplay",
    "CellSearchSpace",
    "ConNASSearch",
    "MLPSearchSpace",
    "PenaltyNASSearch",
    "RandomNASSearch",
    "SearchSpace",
]
