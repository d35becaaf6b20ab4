"""Optimal transport: tree-sliced Wasserstein distances (FW-TSW).

Distances between point clouds (:func:`tree_sliced_wasserstein`, its preset
:func:`fw_tsw`, :func:`pairwise_tree_sliced_wasserstein`), an L1 embedding of
distributions (:class:`TreeSlicedEmbedding`), a permutation two-sample test
(:func:`tree_sliced_two_sample_test`) and the geometric median
(:func:`geometric_median`).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.ot._embedding import TreeSlicedEmbedding
from sklearn_iclr26.ot._fw_tsw import fw_tsw
from sklearn_iclr26.ot._geometric_median import geometric_median
from sklearn_iclr26.ot._pairwise import pairwise_tree_sliced_wasserstein
from sklearn_iclr26.ot._result import TwoSampleTestResult
from sklearn_iclr26.ot._tree_sliced_wasserstein import tree_sliced_wasserstein
from sklearn_iclr26.ot._two_sample import tree_sliced_two_sample_test

__all__ = [
    "TreeSlicedEmbedding",
    "TwoSampleTestResult",
    "fw_tsw",
    "geometric_median",
    "pairwise_tree_sliced_wasserstein",
    "tree_sliced_two_sample_test",
    "tree_sliced_wasserstein",
]
