"""Model-driven lossless compression that survives encoder/decoder mismatch.

* :class:`PMATICEncoder` / :class:`PMATICDecoder`: Probability Matching
  Interval Coding (Adler and Tang, "Synchronizing Probabilities in
  Model-Driven Lossless Compression", ICLR 2026): decoding stays exact when
  the decoder's probabilities differ from the encoder's by up to ``delta``.
* :class:`ArithmeticEncoder` / :class:`ArithmeticDecoder`: the plain exact
  integer arithmetic coder (the baseline; needs identical floats).
* :func:`compress` / :func:`decompress`, and for tabular data
  :func:`compress_column` / :func:`decompress_column` with a fitted
  classifier's ``predict_proba``.
* :func:`delta_from_logit_bound`, :func:`optimal_n_bins`,
  :func:`expected_overhead_bits`.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.compression._api import compress, decompress
from sklearn_iclr26.compression._arithmetic_decoder import ArithmeticDecoder
from sklearn_iclr26.compression._arithmetic_encoder import ArithmeticEncoder
from sklearn_iclr26.compression._bounds import (
    delta_from_logit_bound,
    expected_overhead_bits,
    optimal_n_bins,
)
from sklearn_iclr26.compression._column import compress_column, decompress_column
from sklearn_iclr26.compression._pmatic_decoder import PMATICDecoder
from sklearn_iclr26.compression._pmatic_encoder import PMATICEncoder

__all__ = [
    "ArithmeticDecoder",
    "ArithmeticEncoder",
    "PMATICDecoder",
    "PMATICEncoder",
    "compress",
    "compress_column",
    "decompress",
    "decompress_column",
    "delta_from_logit_bound",
    "expected_overhead_bits",
    "optimal_n_bins",
]
