"""The training-free kNN label-propagation proxy of MoMa (``scripts/run_knn.py``)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["knn_proxy_predictions"]


def knn_proxy_predictions(embedding, y, *, n_neighbors=5, temperature=0.2):
    """Leave-one-out label propagation on one module's embeddings.

    As the official code: cosine similarity between all pairs of rows (rows
    normalised by ``max(norm, 1e-12)``, as ``torch.nn.functional.normalize``),
    affinity ``exp(cos / temperature)``, the diagonal set to zero
    (leave-one-out) *before* the top-``n_neighbors`` selection, the other
    entries masked, rows normalised, prediction ``A @ y``.

    Parameters
    ----------
    embedding : ndarray of shape (n_samples, n_dims)
    y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        Targets (one-hot rows for classes).
    n_neighbors : int
    temperature : float

    Returns
    -------
    y_proxy : ndarray, same shape as ``y``
        NaN rows where the embedding is not finite.
    """
    E = np.asarray(embedding, dtype=np.float64)
    norms = np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-12)
    En = E / norms
    # subtract the row maximum of the off-diagonal logits before exp: the
    # normalised affinities are unchanged and exp cannot overflow
    logits = En @ En.T / temperature
    np.fill_diagonal(logits, -np.inf)
    logits -= np.max(logits, axis=1, keepdims=True)
    A = np.exp(logits)
    idx = np.argpartition(-A, n_neighbors - 1, axis=1)[:, :n_neighbors]
    mask = np.zeros_like(A)
    np.put_along_axis(mask, idx, 1.0, axis=1)
    A *= mask
    A /= A.sum(axis=1, keepdims=True)
    return A @ np.asarray(y, dtype=np.float64)
