"""Memorization: measure and control what a network memorizes; find mislabeled rows."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.memorization._feldman_zhang import feldman_zhang_memorization
from sklearn_iclr26.memorization._random_label_probe import RandomLabelProbe
from sklearn_iclr26.memorization._rlp_head import RLPHeadClassifier
from sklearn_iclr26.memorization._sample_gradient import SampleGradientMemorization

__all__ = [
    "CumulativeSampleGradient",
    "RLPHeadClassifier",
    "RandomLabelProbe",
    "SampleGradientMemorization",
    "feldman_zhang_memorization",
]


def __getattr__(name):
    # a skorch Callback subclass: imported on first use (it imports torch)
    if name == "CumulativeSampleGradient":
        from sklearn_iclr26.memorization._cumulative_sample_gradient import (
            CumulativeSampleGradient,
        )

        return CumulativeSampleGradient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
