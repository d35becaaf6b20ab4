"""Helpers shared by the memorization estimators."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np


def rademacher_from_accuracy(accuracy, n_labels):
    """Chance-corrected random-label accuracy ``(acc - 1/n) / (1 - 1/n)``.

    For binary labels this is ``2 acc - 1``, the empirical correlation
    ``(1/m) sum_i sigma_i h(x_i)`` of the fitted head with the Rademacher
    signs.
    """
    chance = 1.0 / n_labels
    return (np.asarray(accuracy, dtype=float) - chance) / (1.0 - chance)


class NetView:
    """A net-like object holding another module, for ``forward_module``."""

    def __init__(self, module, device):
        self.module_ = module
        self.device = device


def confident_disagreement_count(y, proba):
    """Rows confidently predicted as another class than their label.

    cleanlab's confident-learning count (``filter_by="confident_learning"``):
    per-class thresholds at the mean probability of each class over the rows
    labeled with it; a row confident in some class (at least its threshold,
    within 1e-6) is assigned the most probable such class, and counted when
    that class is not its label and its label is not (within 1e-6) the most
    probable class. Unlike the plain disagreement ``argmax != y``, a row the
    model is merely unsure about (a hard row) is not counted.
    """
    y = np.asarray(y, dtype=np.int64)
    n, n_classes = proba.shape
    rows = np.arange(n)
    counts = np.bincount(y, minlength=n_classes)
    sums = np.bincount(y, weights=proba[rows, y], minlength=n_classes)
    thresholds = np.where(counts > 0, sums / np.maximum(counts, 1), 2.0)
    confident = proba >= thresholds - 1e-6
    n_confident = confident.sum(axis=1)
    guess = np.where(n_confident > 1, proba.argmax(axis=1), confident.argmax(axis=1))
    bumped = proba.copy()
    bumped[rows, y] += 1e-6
    off = (n_confident > 0) & (guess != y) & (bumped.argmax(axis=1) != y)
    return int(off.sum())
