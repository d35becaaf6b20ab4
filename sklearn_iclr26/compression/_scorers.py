"""Scorers for what the compression family is for (see ``metrics._scorers``).

* ``neg_pmatic_bits_per_symbol``: bits per label of PMATIC-compressing ``y``
  with the classifier's ``predict_proba`` on ``X`` (``delta=1e-3``), payload
  header included. Smaller is better, so the scorer returns it negated
  (sign -1).
* ``pmatic_float32_decode_rate``: share of 256-symbol chunks that decode
  correctly when the encoder used float64 ``predict_proba`` and the decoder
  the same model's predictions rounded to float32 (a real deployment
  mismatch), ``delta=1e-3``. Greater is better (sign +1).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from sklearn_iclr26.compression._api import compress, decompress
from sklearn_iclr26.compression._column import _encode_labels, column_probabilities
from sklearn_iclr26.metrics._scorers import MethodScorer

__all__ = ["SCORERS"]


def pmatic_bits_per_symbol(estimator, X, y, *, delta=1e-3):
    """Bits per label of the PMATIC payload of ``y`` given ``X``."""
    idx = _encode_labels(estimator, y)
    payload = compress(idx, column_probabilities(estimator, X), delta=delta)
    return 8.0 * len(payload) / max(len(idx), 1)


def pmatic_float32_decode_rate(estimator, X, y, *, delta=1e-3, chunk_size=256):
    """Share of chunks decoded correctly from float32 predictions."""
    idx = _encode_labels(estimator, y)
    payload = compress(
        idx, column_probabilities(estimator, X), delta=delta, chunk_size=chunk_size
    )
    _, ok = decompress(
        payload,
        column_probabilities(estimator, X, dtype=np.float32),
        return_chunk_status=True,
    )
    return float(np.mean(ok)) if len(ok) else 1.0


SCORERS = {
    "neg_pmatic_bits_per_symbol": MethodScorer(
        pmatic_bits_per_symbol, sign=-1, name="neg_pmatic_bits_per_symbol"
    ),
    "pmatic_float32_decode_rate": MethodScorer(
        pmatic_float32_decode_rate, sign=1, name="pmatic_float32_decode_rate"
    ),
}
