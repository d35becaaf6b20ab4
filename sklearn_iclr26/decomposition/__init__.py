"""Matrix decomposition: sparse autoencoders (concept identifiability, ICLR 2026)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.decomposition._sparse_autoencoder import SparseAutoencoder

__all__ = ["SparseAutoencoder"]
